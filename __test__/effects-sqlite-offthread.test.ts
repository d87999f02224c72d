// The SQLite effect store's transactions run on libuv's thread pool, not the JS thread: while another
// process holds the file's write lock, a store call is a pending promise and the JS thread keeps
// serving timers, I/O and other stores; once the lock is released the call completes. An in-thread
// store would block inside the call until its busy timeout and never let the lock holder hear that
// it may release (the holder waits for this process's word), so it would fail here.
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { serviceIdentity } from "./helpers/service-identity.mjs";
import type { AgentIdentity } from "../index.js";

const require = createRequire(import.meta.url);
const p: typeof import("../index.js") = require("../index.js");

const dir = mkdtempSync(join(tmpdir(), "prism-effects-offthread-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const identity: AgentIdentity = serviceIdentity;

// Another process (Python's sqlite3, a real second SQLite client) takes the write lock with
// BEGIN IMMEDIATE, says "locked", and commits only when it reads a line on stdin.
function holdWriteLock(path: string): Promise<ChildProcessWithoutNullStreams> {
  const holder = spawn("python3", [
    "-c",
    [
      "import sqlite3, sys",
      "c = sqlite3.connect(sys.argv[1], isolation_level=None)",
      "c.execute('BEGIN IMMEDIATE')",
      "print('locked', flush=True)",
      "sys.stdin.readline()",
      "c.execute('COMMIT')",
      "print('released', flush=True)",
    ].join("\n"),
    path,
  ]);
  return new Promise((resolve, reject) => {
    holder.on("error", reject);
    holder.stderr.on("data", (d) => reject(new Error(`lock holder: ${d}`)));
    holder.stdout.once("data", (d) => (String(d).startsWith("locked") ? resolve(holder) : reject(new Error(`lock holder said ${d}`))));
  });
}

const turn = () => new Promise((r) => setImmediate(r));

function keyOf(toolCallId: string, args: Record<string, unknown>): import("../index.js").ToolEffectKey {
  const base = { identity, ownership: { tenantId: "tenant" }, sessionId: "s", runId: "r", toolCallId, toolName: "pay", argumentsHash: p.toolEffectArgumentsHash(args) };
  return { ...base, key: p.deriveToolEffectKey(base) };
}

describe("SQLite effect store off the JS thread", () => {
  it("a call waiting for another process's write lock leaves the JS thread free, then completes", async () => {
    const path = join(dir, "locked.db");
    const store = p.createSqliteToolEffectStore(path, { busyTimeoutMs: 3_000 });
    const key = keyOf("c1", { amount: 5 });
    const holder = await holdWriteLock(path);
    let settled = false;
    const begun = store.begin(key).finally(() => (settled = true));
    // The JS thread runs timers and other work while the transaction waits for the lock.
    let ticks = 0;
    for (let i = 0; i < 20; i++) {
      await turn();
      ticks++;
    }
    const other = p.createMemoryToolEffectStore();
    expect((await other.begin(key)).outcome).toBe("acquired");
    expect(ticks).toBe(20);
    expect(settled).toBe(false);
    // Tell the holder to commit; the waiting transaction then takes the lock and claims the key.
    holder.stdin.write("go\n");
    const out = await begun;
    expect(out.outcome).toBe("acquired");
    expect(out.record.status).toBe("pending");
    holder.kill();
    await store.close();
  });

  it("dispatch with the SQLite store: 100 concurrent effectful calls each execute once, and a replay executes none", async () => {
    const store = p.createSqliteToolEffectStore(join(dir, "dispatch.db"));
    let executed = 0;
    const tool = {
      name: "pay",
      effect: { kind: "external_mutation" as const, idempotency: "required" as const },
      execute: async (args: { amount: number }, ctx: { toolCallId: string }) => {
        executed++;
        await turn();
        return { toolCallId: ctx.toolCallId, name: "pay", value: { charged: args.amount } };
      },
    };
    const registry = p.createToolRegistry([tool as never]);
    const call = (i: number) =>
      p.dispatchToolCall({
        call: { type: "tool_call", id: `c${i}`, name: "pay", arguments: { amount: i } },
        registry,
        context: { sessionId: "s", runId: "r", toolCallId: `c${i}` },
        effectStore: store,
        identity,
      });
    const first = await Promise.all(Array.from({ length: 100 }, (_, i) => call(i)));
    expect(first.map((r) => (r.value as { charged: number }).charged)).toEqual(Array.from({ length: 100 }, (_, i) => i));
    expect(executed).toBe(100);
    const again = await Promise.all(Array.from({ length: 100 }, (_, i) => call(i)));
    expect(again.map((r) => (r.value as { charged: number }).charged)).toEqual(Array.from({ length: 100 }, (_, i) => i));
    expect(executed).toBe(100);
    await store.close();
    await expect(store.get(keyOf("c1", { amount: 1 }))).rejects.toMatchObject({
      code: "ERR_PRISM_TOOL_EFFECT_STORE",
    });
  });

  it("a clock that returns no finite time is refused with a clear error, and the store keeps working", async () => {
    let bad = true;
    const store = p.createSqliteToolEffectStore(join(dir, "clock.db"), { now: () => (bad ? Number.NaN : Date.now()) });
    const key = keyOf("c", {});
    await expect(store.begin(key)).rejects.toThrow("options.now must return finite epoch milliseconds");
    bad = false;
    expect((await store.begin(key)).outcome).toBe("acquired");
    await store.close();
  });
});
