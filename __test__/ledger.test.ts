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
