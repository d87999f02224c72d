import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { ToolCallRecord } from "../index.js";

const require = createRequire(import.meta.url);
const { createMemoryRunLedger, createSqliteRunLedger }: typeof import("../index.js") = require("../index.js");

const dir = mkdtempSync(join(tmpdir(), "prism-ledger-test-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let dbs = 0;
const db = () => join(dir, `ledger-${++dbs}.db`);
const child = join(__dirname, "helpers", "ledger-child.mjs");

const row = (call: number, status: ToolCallRecord["status"], n: number): ToolCallRecord => ({
  id: `row-${call}-${n}`,
  sessionId: "session",
  runId: "run",
  toolCallId: `call-${call}`,
  name: "tool",
  arguments: { call },
  status,
  startedAt: "2026-01-01T00:00:00.000Z",
  redacted: false,
  ...(status === "started" ? {} : { finishedAt: "2026-01-01T00:00:01.000Z", result: { toolCallId: `call-${call}`, name: "tool", value: n } }),
});

describe("memory run ledger", () => {
  it("keeps snapshots of the rows in append order, per kind", () => {
    const ledger = createMemoryRunLedger();
    const first = row(1, "started", 0);
    ledger.appendToolCall(first);
    ledger.appendRun({ id: "run", sessionId: "session", startedAt: "2026-01-01T00:00:00.000Z" });
    ledger.appendToolCall(row(1, "finished", 1));
    (first as { name: string }).name = "changed later";
    expect(ledger.list().map((r) => [r.id, r.name, r.status])).toEqual([
      ["row-1-0", "tool", "started"],
      ["row-1-1", "tool", "finished"],
    ]);
    expect(ledger.list("run")).toEqual([{ id: "run", sessionId: "session", startedAt: "2026-01-01T00:00:00.000Z" }]);
    expect(() => ledger.appendToolCall(null as never)).toThrow("run ledger record must be an object");
    expect(() => ledger.list("nope" as never)).toThrow();
  });

  it("closes as the SQLite ledger does: later appends throw, the rows stay readable", () => {
    const ledger = createMemoryRunLedger();
    ledger.appendRun({ id: "run" });
    ledger.close();
    ledger.close();
    for (const append of [() => ledger.appendToolCall(row(1, "started", 0)), () => ledger.appendRun({ id: "late" }), () => ledger.appendEvent({}), () => ledger.appendUsage({})]) {
      expect(append).toThrow(expect.objectContaining({ code: "ERR_PRISM_LEDGER", message: "run ledger is closed" }));
    }
    expect(ledger.list("run")).toEqual([{ id: "run" }]);
  });
});

describe("SQLite run ledger", () => {
  it("keeps 100 000 rows appended under concurrent calls, in order per call, one terminal row each", async () => {
    const path = db();
    const ledger = createSqliteRunLedger(path);
    const calls = 25_000;
    // Each call appends started, two progress rows and a terminal row, awaiting between appends so that
    // calls interleave the way concurrent dispatches do.
    await Promise.all(
      Array.from({ length: calls }, async (_, call) => {
        ledger.appendToolCall(row(call, "started", 0));
        await null;
        ledger.appendToolCall(row(call, "started", 1));
        await null;
        ledger.appendToolCall(row(call, "started", 2));
        await null;
        ledger.appendToolCall(row(call, call % 10 === 0 ? "error" : "finished", 3));
      }),
    );
    ledger.close();
    expect(() => ledger.appendToolCall(row(0, "started", 9))).toThrow("run ledger is closed");

    const reopened = createSqliteRunLedger(path);
    const rows = reopened.list();
    reopened.close();
    expect(rows.length).toBe(calls * 4);
    const next = new Map<string, number>();
    const terminal = new Map<string, number>();
    for (const r of rows) {
      const n = Number(r.id.split("-")[2]);
      expect(n).toBe(next.get(r.toolCallId) ?? 0);
      next.set(r.toolCallId, n + 1);
      if (r.status !== "started") terminal.set(r.toolCallId, (terminal.get(r.toolCallId) ?? 0) + 1);
    }
    expect(next.size).toBe(calls);
    expect([...terminal.values()].every((c) => c === 1) && terminal.size === calls).toBe(true);
  });

  it("a killed process loses at most the rows not yet committed (bounded by maxPendingRows)", async () => {
    const path = db();
    const flushed = 3000;
    const extra = 700;
    const maxPending = 1024;
    await new Promise<void>((resolve, reject) => {
      const p = spawn(process.execPath, [child, "kill", path, String(flushed), String(extra), String(maxPending)], {
        stdio: ["ignore", "pipe", "inherit"],
      });
      p.stdout.on("data", (d: Buffer) => {
        if (d.toString().includes("appended")) p.kill("SIGKILL");
      });
      p.on("exit", (_c, signal) => (signal === "SIGKILL" ? resolve() : reject(new Error("child was not killed"))));
    });
    const ledger = createSqliteRunLedger(path);
    const rows = ledger.list();
    ledger.close();
    expect(rows.length).toBeGreaterThanOrEqual(flushed);
    expect(flushed + extra - rows.length).toBeLessThanOrEqual(maxPending);
    rows.forEach((r, i) => expect(r.id).toBe(`k-${i}`)); // what survives is a prefix, in order
  });

  it.each([["a natural end"], ["process.exit"]])("commits queued rows when the process ends by %s without close()", (how) => {
    const path = db();
    const done = spawnSync(process.execPath, [child, "exit", path, "5000", how], { stdio: "inherit" });
    expect(done.status).toBe(0);
    const ledger = createSqliteRunLedger(path);
    expect(ledger.list().length).toBe(5000);
    ledger.close();
  });

  it("keeps every row of two processes appending to one file, each in its own order", async () => {
    const path = db();
    createSqliteRunLedger(path).close();
    await Promise.all(
      ["a", "b"].map(
        (tag) =>
          new Promise<void>((resolve, reject) => {
            const p = spawn(process.execPath, [child, "writer", path, "20000", tag], { stdio: "inherit" });
            p.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`writer ${tag} exited ${code}`))));
          }),
      ),
    );
    const ledger = createSqliteRunLedger(path);
    const rows = ledger.list();
    ledger.close();
    expect(rows.length).toBe(40_000);
    for (const tag of ["a", "b"]) {
      const mine = rows.filter((r) => r.runId === tag).map((r) => r.id);
      expect(mine).toEqual(Array.from({ length: 20_000 }, (_, i) => `${tag}-${i}`));
    }
  });
});

describe("bounded rows: the built-in ledgers store every row they are given", () => {
  const { dispatchToolCall, createToolRegistry, createBatchedRunLedger }: typeof import("../index.js") = require("../index.js");
  const base = { id: "r", sessionId: "s", toolCallId: "c", name: "t", arguments: {}, startedAt: "2026-01-01T00:00:00.000Z", redacted: false };

  it("a row over 1 MiB is kept, truncated with a marker and within the bound", () => {
    for (const ledger of [createMemoryRunLedger(), createSqliteRunLedger(db())]) {
      ledger.appendToolCall({ ...base, status: "finished", result: { toolCallId: "c", name: "t", value: "x".repeat(3 * 1024 * 1024) } });
      ledger.appendToolCall({ ...base, status: "finished", result: { toolCallId: "c", name: "t", value: Array.from({ length: 200_000 }, (_, i) => ({ i, text: "abcdefgh" })) } });
      const [big, many] = ledger.list() as any[];
      expect(big.id).toBe("r");
      expect(big.result.value.endsWith("[Truncated]")).toBe(true);
      expect(Buffer.byteLength(JSON.stringify(big))).toBeLessThanOrEqual(1024 * 1024);
      expect(many.result.value.at(-1)).toBe("[Truncated]");
      expect(many.result.value[0]).toEqual({ i: 0, text: "abcdefgh" });
      ledger.close();
    }
  });

  it("a BigInt, a cycle, very deep nesting and throwing getters become markers, not refusals", () => {
    const ledger = createMemoryRunLedger();
    const cyclic: any = { name: "loop" };
    cyclic.self = cyclic;
    let deep: any = { leaf: true };
    for (let i = 0; i < 100_000; i++) deep = { d: deep };
    const hostile = {
      get boom() {
        throw new Error("getter");
      },
      ok: 1,
      toJSONHolder: { toJSON() {
        throw new Error("toJSON");
      } },
    };
    ledger.appendToolCall({ ...base, id: "big", result: { toolCallId: "c", name: "t", value: 12345678901234567890n } } as never);
    ledger.appendToolCall({ ...base, id: "cyc", result: { toolCallId: "c", name: "t", value: cyclic } });
    ledger.appendToolCall({ ...base, id: "deep", result: { toolCallId: "c", name: "t", value: deep } });
    ledger.appendToolCall({ ...base, id: "hostile", result: { toolCallId: "c", name: "t", value: hostile } });
    const rows = Object.fromEntries((ledger.list() as any[]).map((r) => [r.id, r.result.value]));
    expect(rows.big).toBe("12345678901234567890");
    expect(rows.cyc).toEqual({ name: "loop", self: "[Circular]" });
    let node = rows.deep;
    let depth = 0;
    while (typeof node === "object") {
      node = node.d;
      depth++;
    }
    expect(node).toBe("[MaxDepth]");
    expect(depth).toBeLessThan(40);
    expect(rows.hostile).toEqual({ boom: "[Unreadable]", ok: 1, toJSONHolder: "[Unreadable]" });
  });

  it("a dispatched call whose result holds a BigInt and a cycle leaves one terminal row", async () => {
    const ledger = createMemoryRunLedger();
    const value: any = { n: 1n };
    value.self = value;
    const registry = createToolRegistry([{ name: "t", execute: (_a, ctx) => ({ toolCallId: ctx.toolCallId, name: "t", value }) }]);
    await dispatchToolCall({
      call: { type: "tool_call", id: "c1", name: "t", arguments: {} },
      registry,
      context: { sessionId: "s", runId: "r" },
      ledger,
    });
    const rows = ledger.list() as any[];
    expect(rows.map((r) => r.status)).toEqual(["started", "finished"]);
    expect(rows[1].result.value).toEqual({ n: "1", self: "[Circular]" });
  });

  it("a row's arguments are a copy of the call's, made the same way for plain and hostile arguments", async () => {
    const { redactSecrets } = require("../index.js");
    const cyclic: any = { a: 1, list: [1, "x", null, true] };
    cyclic.self = cyclic;
    const proto = JSON.parse('{"__proto__":{"polluted":true},"k":1}');
    let deep: any = { leaf: 1 };
    for (let i = 0; i < 40; i++) deep = { d: deep };
    const wide: any = {};
    for (let i = 0; i < 5_000; i++) wide[`k${i}`] = { i };
    const cases: Record<string, any> = {
      plain: { q: "rust", n: 3.5, tags: ["a", { b: [1, 2, { c: null }] }], sparse: [1, , 3], f: () => 1, toJSON: () => ({ leak: 1 }), u: undefined },
      cyclic,
      proto,
      deep,
      wide,
      date: { at: new Date(0), map: new Map([["k", 1]]) },
      getter: { ok: 1, get boom() { throw new Error("getter"); } },
    };
    for (const [name, args] of Object.entries(cases)) {
      const ledger = createMemoryRunLedger();
      const registry = createToolRegistry([{ name: "t", execute: (a: any, ctx) => ((a.mutated = true), { toolCallId: ctx.toolCallId, name: "t", value: 1 }) }]);
      await dispatchToolCall({ call: { type: "tool_call", id: "c1", name: "t", arguments: args }, registry, context: { sessionId: "s", runId: "r" }, ledger });
      const rows = ledger.list() as any[];
      expect(rows.map((r) => r.status), name).toEqual(["started", "finished"]);
      delete args.mutated;
      expect(rows[0].arguments, name).toEqual(JSON.parse(JSON.stringify(redactSecrets(args))));
      expect(rows[0].arguments.mutated, name).toBeUndefined();
      expect(Object.getPrototypeOf(rows[0].arguments), name).toBe(Object.prototype);
      expect(rows[0].id).toMatch(/^tcr_[0-9a-z]+_[0-9a-z]+_[0-9a-z]+$/);
      expect(rows[1].id).not.toBe(rows[0].id);
    }
  });

  it("with secrets, rows, events and results are redacted exactly as redactSecrets redacts them", async () => {
    const { redactSecrets } = require("../index.js");
    const secrets = ["sk-live-123", "sk-live-123456", "pw"];
    const many: any = { list: Array.from({ length: 30_000 }, (_, i) => (i === 29_999 ? "last sk-live-123" : `s${i}`)) };
    const cases: Record<string, any> = {
      values: { q: "token sk-live-123 here", nested: [{ deep: ["a pw b", 1, null] }], n: 2, twice: "pw pw" },
      longest: { t: "sk-live-123456 and sk-live-123" },
      key: { "sk-live-123": "in a key", other: "pw" },
      many,
      clean: { q: "nothing to hide", list: ["a", "b"] },
      proto: JSON.parse('{"__proto__":{"x":"pw"},"k":"pw"}'),
      date: { at: new Date(0), s: "pw" },
    };
    for (const [name, args] of Object.entries(cases)) {
      for (const list of [secrets, [...secrets, "lone\ud800"]]) {
        const ledger = createMemoryRunLedger();
        const events: any[] = [];
        const registry = createToolRegistry([{ name: "t", execute: (a: any, ctx) => ({ toolCallId: ctx.toolCallId, name: "t", value: a }) }]);
        const result = await dispatchToolCall({
          call: { type: "tool_call", id: "c1", name: "t", arguments: args },
          registry,
          context: { sessionId: "s", runId: "r" },
          ledger,
          emit: (e: any) => void events.push(e),
          secrets: list,
        });
        const expected = JSON.parse(JSON.stringify(redactSecrets(args, list)));
        const rows = ledger.list() as any[];
        expect(rows[0].arguments, name).toEqual(expected);
        expect(JSON.parse(JSON.stringify(events.find((e) => e.type === "tool_execution_started").call.arguments)), name).toEqual(expected);
        expect(JSON.parse(JSON.stringify(result.value)), name).toEqual(expected);
        expect(JSON.stringify(rows), name).not.toContain("sk-live-123");
      }
    }
  });

  it("refusals and storage failures carry ERR_PRISM_LEDGER", () => {
    const ledger = createSqliteRunLedger(db());
    expect(() => ledger.appendToolCall(null as never)).toThrow(expect.objectContaining({ code: "ERR_PRISM_LEDGER", name: "TypeError" }));
    ledger.close();
    expect(() => ledger.appendToolCall(base as never)).toThrow(expect.objectContaining({ code: "ERR_PRISM_LEDGER", message: "run ledger is closed" }));
    expect(() => createSqliteRunLedger(db(), { batchSize: 0 })).toThrow(
      expect.objectContaining({ code: "ERR_PRISM_INVALID_OPTION", message: "batchSize must be an integer from 1 to 100000" }),
    );
    // A path SQLite cannot open is the caller's option, as for the other SQLite stores (__test__/sqlite-paths.test.ts).
    expect(() => createSqliteRunLedger(join(dir, "missing", "dir", "x.db"))).toThrow(expect.objectContaining({ code: "ERR_PRISM_INVALID_OPTION" }));
    expect(() => createMemoryRunLedger().list("nope" as never)).toThrow(expect.objectContaining({ code: "ERR_PRISM_INVALID_OPTION" }));
  });

  it("createBatchedRunLedger queues, writes in order on flush, on a terminal run row, and retries a failed write", async () => {
    const written: string[] = [];
    let fail = false;
    const target = {
      appendToolCall: async (r: any) => {
        if (fail) throw new Error("ledger write failed");
        written.push(`tool:${r.id}`);
      },
      appendRun: async (r: any) => void written.push(`run:${r.status}`),
    };
    const batched = createBatchedRunLedger(target, { maxDelayMs: 60_000 });
    expect(batched.durability).toBe("flush_on_terminal");
    await batched.appendToolCall({ ...base, id: "a" });
    await batched.appendRun({ status: "running" });
    expect(written).toEqual([]);
    expect(batched.status()).toEqual({ accepted: 2, flushed: 0, buffered: 2 });
    await batched.appendRun({ status: "completed" });
    expect(written).toEqual(["tool:a", "run:running", "run:completed"]);
    fail = true;
    await batched.appendToolCall({ ...base, id: "b" });
    await expect(batched.flush()).rejects.toThrow("ledger write failed");
    expect(batched.status().buffered).toBe(1);
    fail = false;
    expect(await batched.flush()).toEqual({ accepted: 4, flushed: 4, buffered: 0 });
    await batched.dispose();
    await expect(batched.appendToolCall({ ...base, id: "c" })).rejects.toThrow("batched run ledger is disposed");
    expect(() => createBatchedRunLedger(target, { maxBatchEntries: 0 })).toThrow("maxBatchEntries must be an integer in [1, 4096]");
    await expect(createBatchedRunLedger(target, { maxBatchBytes: 10 }).appendToolCall({ ...base })).rejects.toThrow(
      "run ledger record exceeds byte limit",
    );
  });
});

describe("built-in ledgers as plain objects", () => {
  it("a host wrapping a ledger with a spread keeps the other methods", () => {
    const inner = createMemoryRunLedger();
    const runs: unknown[] = [];
    const wrapped = { ...inner, appendRun: (r: object) => void runs.push(r) };
    wrapped.appendToolCall({ id: "r", sessionId: "s", toolCallId: "c", name: "t", arguments: {}, startedAt: "2026-01-01T00:00:00.000Z", redacted: false });
    wrapped.appendRun({ id: "run" });
    expect(wrapped.list().map((r) => r.id)).toEqual(["r"]);
    expect(inner.list("run")).toEqual([]);
    expect(runs).toEqual([{ id: "run" }]);
  });
});
