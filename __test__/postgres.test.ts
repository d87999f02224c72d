// The PostgreSQL tool effect store against a real server: the conformance kit, dispatch through it, clear
// errors for every way the database can fail, and the proofs — 8 processes racing over the same keys,
// SIGKILL at each point of the claim path, and the server restarting under load.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assertToolEffectStoreConforms } from "../testing/tool-effect-store-conformance.js";
import { createPostgresRunLedger, createPostgresToolEffectStore } from "../postgres/index.js";
import {
  createMemoryRunLedger,
  createToolRegistry,
  dispatchToolCall,
  toolEffectArgumentsHash,
  ToolEffectError,
} from "../index.js";
import { chargeCall, chargeContext, chargeTool, effectKey as keyOf, serviceIdentity } from "./helpers/service-identity.mjs";
import { freshSchema, postgresUrl, startPostgres, type PostgresServer } from "./helpers/postgres.js";
import { killAt } from "./helpers/kill-at.js";

const child = join(__dirname, "helpers", "dispatch-child.mjs");
const dir = mkdtempSync(join(tmpdir(), "prism-postgres-"));
let url = "";
beforeAll(() => {
  url = postgresUrl();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const identity = serviceIdentity;
const context = chargeContext;
const call = chargeCall;
const sideEffects = (file: string) => (existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean) : []);


describe("the conformance kit", () => {
  it("passes against a fresh schema per store", async () => {
    const stores: { close(): Promise<void> }[] = [];
    await assertToolEffectStoreConforms(() => {
      const s = createPostgresToolEffectStore({ connectionString: url, schema: freshSchema("kit") });
      stores.push(s);
      return s;
    });
    await Promise.all(stores.map((s) => s.close()));
  });
});

describe("dispatch through the PostgreSQL store", () => {
  it("executes a required effect once and replays it on the retry", async () => {
    const store = createPostgresToolEffectStore(url, freshSchema("dispatch"));
    const ran: string[] = [];
    const registry = createToolRegistry([chargeTool((id) => ran.push(id))]);
    const first = await dispatchToolCall({ call: call("pay-1"), registry, context, identity, effectStore: store });
    const again = await dispatchToolCall({ call: call("pay-1"), registry, context, identity, effectStore: store });
    expect(first.value).toEqual({ charged: 5 });
    expect(again.value).toEqual({ charged: 5 });
    expect(ran).toEqual(["pay-1"]);
    expect((await store.get(keyOf("pay-1")))?.status).toBe("completed");
    await store.close();
  });

  it("refuses a NUL in an identifier as the memory and SQLite stores do, not as an unknown outcome", async () => {
    const store = createPostgresToolEffectStore(url, freshSchema("nul"));
    const err = await Promise.resolve(store.begin({ ...keyOf("nul"), sessionId: "se\u0000ssion" })).then(() => undefined, (e) => e);
    expect(err).toMatchObject({ name: "ToolEffectError", code: "ERR_PRISM_TOOL_EFFECT_LIMIT", message: "session id must not contain NUL (U+0000)" });
    await store.close();
  });

  it("keeps the replayed result's key order and numbers exactly", async () => {
    const store = createPostgresToolEffectStore(url, freshSchema("exact"));
    const k = keyOf("exact");
    const begun = await store.begin(k);
    const claim = { ...k, claimToken: begun.record.claimToken! };
    const d = await store.markDispatched({ ...claim, expectedVersion: begun.record.version });
    const value = { z: 1e21, a: -0, m: 0.1 + 0.2, s: "\u2028é" };
    await store.complete({ ...claim, expectedVersion: d.version, result: { toolCallId: "exact", name: "charge", value } });
    const replay = await store.begin(k);
    expect(JSON.stringify(replay.record.result)).toBe(JSON.stringify({ toolCallId: "exact", name: "charge", value }));
    await store.close();
  });

  it("accepts a pg-style pool and a schema, as upstream's store does", async () => {
    const u = new URL(url);
    const pool = {
      options: { host: u.hostname, port: Number(u.port), user: u.username, password: u.password, database: u.pathname.slice(1) },
      query: () => Promise.reject(new Error("not used")),
      connect: () => Promise.reject(new Error("not used")),
    };
    const store = createPostgresToolEffectStore(pool, freshSchema("pool"));
    await store.ready();
    expect(await store.get(keyOf("none"))).toBeUndefined();
    await store.close();
  });

  it("isolates tenants: another tenant's key is a different record", async () => {
    const schema = freshSchema("tenants");
    const store = createPostgresToolEffectStore(url, schema);
    const other = { ...identity, tenantId: "other" };
    const base = { identity: other, ownership: { tenantId: "other" }, sessionId: "session", runId: "run", toolCallId: "t", toolName: "charge", argumentsHash: toolEffectArgumentsHash({ amount: 5 }) };
    const mine = keyOf("t");
    await store.begin(mine);
    // The same key string under another tenant is not the first tenant's record.
    const theirs = await store.begin({ ...base, key: mine.key });
    expect(theirs.outcome).toBe("acquired");
    expect(theirs.record.tenantId).toBe("other");
    await store.close();
  });

  it("migrates safely when many workers start at once", async () => {
    const schema = freshSchema("migrate");
    const stores = Array.from({ length: 12 }, () => createPostgresToolEffectStore(url, schema));
    await Promise.all(stores.map((s) => s.ready()));
    const outcomes = await Promise.all(stores.map((s) => s.begin(keyOf("m"))));
    expect(outcomes.filter((o) => o.outcome === "acquired")).toHaveLength(1);
    await Promise.all(stores.map((s) => s.close()));
  });
});

describe("database failures are clear ERR_PRISM_TOOL_EFFECT_STORE errors", () => {
  const storeError = (e: unknown) => e as { code?: string; message?: string };

  it("a refused connection names the cause", async () => {
    const store = createPostgresToolEffectStore({ connectionString: "postgres://prism@127.0.0.1:1/postgres", connectTimeoutMs: 2000 });
    const e = storeError(await store.ready().catch((x) => x));
    expect(e.code).toBe("ERR_PRISM_TOOL_EFFECT_STORE");
    expect(e.message).toMatch(/connect.*refused/i);
    // Dispatch blocks the call instead of running the side effect without a claim.
    const ran: string[] = [];
    const r = await dispatchToolCall({ call: call("down"), registry: createToolRegistry([chargeTool((id) => ran.push(id))]), context, identity, effectStore: store });
    expect(r.error).toBeDefined();
    expect(ran).toEqual([]);
  });

  it("a failed login says so, without the password", async () => {
    const bad = new URL(url);
    bad.password = "wrong-secret-password";
    const store = createPostgresToolEffectStore(bad.toString(), freshSchema("auth"));
    const e = storeError(await store.ready().catch((x) => x));
    expect(e.code).toBe("ERR_PRISM_TOOL_EFFECT_STORE");
    expect(e.message).toMatch(/password authentication failed/);
    expect(e.message).not.toContain("wrong-secret-password");
  });

  it("a statement that waits past its timeout fails instead of hanging the worker", async () => {
    const schema = freshSchema("timeout");
    const store = createPostgresToolEffectStore({ connectionString: url, schema, statementTimeoutMs: 300 });
    await store.ready();
    const k = keyOf("held");
    // Another session holds the record's lock for 3 s.
    const storageId = JSON.stringify(["tenant", "", "", "payments", k.key]);
    const psql = spawn(psqlPath(), [url, "-c", `SELECT pg_advisory_lock(hashtextextended('${storageId.replace(/'/g, "''")}', 0)); SELECT pg_sleep(30);`], { stdio: "ignore" });
    // Wait until the lock is really held (a fixed sleep races a slow start on a loaded machine).
    for (let i = 0; i < 200; i++) {
      const held = spawnSync(psqlPath(), [url, "-tAc", `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted AND ((classid::bigint << 32) | objid::bigint) = hashtextextended('${storageId.replace(/'/g, "''")}', 0)`], { encoding: "utf8" });
      if (Number(held.stdout.trim()) > 0) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const e = storeError(await store.begin(k).catch((x) => x));
    psql.kill();
    expect(e.code).toBe("ERR_PRISM_TOOL_EFFECT_STORE");
    expect(e.message).toMatch(/timeout/i);
    await store.close();
  });

  it("contract refusals keep their classes", async () => {
    const store = createPostgresToolEffectStore(url, freshSchema("classes"));
    const e = await store.markDispatched({ ...keyOf("x"), claimToken: "nope", expectedVersion: 1 }).catch((x) => x);
    expect(e).toBeInstanceOf(ToolEffectError);
    expect(e.code).toBe("ERR_PRISM_TOOL_EFFECT_CONFLICT");
    const id = await store.begin({ ...keyOf("x"), identity: { ...identity, verified: false } }).catch((x) => x);
    expect(id.name).toBe("IdentityError");
    expect(id.reason).toBe("unverified");
    await expect(async () => createPostgresToolEffectStore(url, "Robert'); DROP TABLE x;--")).rejects.toThrow(/schema must match/);
    await store.close();
  });
});

function psqlPath(): string {
  for (const v of ["17", "16", "15", "14", "13"]) {
    const p = `/usr/lib/postgresql/${v}/bin/psql`;
    if (existsSync(p)) return p;
  }
  return "psql";
}

/** Runs dispatch-child.mjs processes in a race and collects how each call ended. */
async function race(db: string, file: string, processes: number, keys: number, concurrency: number, trials: number) {
  const outs = Array.from({ length: processes }, (_, i) => join(dir, `race-${i}-${Date.now()}.json`));
  const children: ChildProcess[] = [];
  const runs = outs.map((out) => {
    const p = spawn(process.execPath, [child, "race", db, file, String(keys), out, String(concurrency), String(trials)], { stdio: ["pipe", "pipe", "inherit"] });
    children.push(p);
    return {
      ready: new Promise<void>((resolve) => p.stdout!.once("data", () => resolve())),
      done: new Promise<void>((resolve, reject) => p.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`child exited ${code}`))))),
    };
  });
  await Promise.all(runs.map((r) => r.ready));
  for (const p of children) p.stdin!.write("go\n");
  await Promise.all(runs.map((r) => r.done));
  return outs.map((o) => JSON.parse(readFileSync(o, "utf8")) as { executed: string[]; replayed: number; refused: Record<string, number> });
}

// Bounded for CI by PRISM_POSTGRES_RACE_TRIALS (default 100 trials of 1 000 keys: 100 000 keys in all).
const RACE_TRIALS = Number(process.env.PRISM_POSTGRES_RACE_TRIALS ?? 100);

describe("race: 8 processes × 32 concurrent dispatches over the same keys", () => {
  it(`executes each key exactly once (${RACE_TRIALS} trials × 1 000 keys)`, async () => {
    const schema = freshSchema("race");
    const ready = createPostgresToolEffectStore(url, schema);
    await ready.ready(); // create the table before the race
    await ready.close();
    const file = join(dir, "race-side-effects.txt");
    const ended = await race(`${url}#${schema}`, file, 8, 1000, 32, RACE_TRIALS);
    const total = 1000 * RACE_TRIALS;
    const executed = ended.flatMap((e) => e.executed);
    expect(executed.length).toBe(total);
    expect(new Set(executed).size).toBe(total);
    for (const e of ended) {
      const refused = Object.values(e.refused).reduce((a, b) => a + b, 0);
      expect(e.executed.length + e.replayed + refused).toBe(total);
      expect(Object.keys(e.refused).every((c) => c === "ERR_PRISM_TOOL_EFFECT_CONFLICT" || c === "ERR_PRISM_TOOL_EFFECT_UNKNOWN")).toBe(true);
    }
    const lines = sideEffects(file);
    expect(lines.length).toBe(total);
    expect(new Set(lines).size).toBe(total);
  }, 900_000);
});

describe("crash: SIGKILL at each point of the claim path, then a fresh worker", () => {
  const LEASE_PASSED_MS = 61_000;
  const crashAt = (db: string, file: string, point: string) => killAt(child, ["crash", db, file], point);
  function redispatch(db: string, file: string, skew = 0) {
    const r = spawnSync(process.execPath, [child, "run", db, file, String(skew)], { encoding: "utf8" });
    if (r.status !== 0) throw new Error(`redispatch exited ${r.status}: ${r.stderr}`);
    return JSON.parse(r.stdout) as { result: { error?: { code?: string }; value?: unknown }; executed: number };
  }

  it.each([
    // Killed before the side effect: the claim's lease must pass, then the call runs once.
    ["after-claim", 0, 1],
    // Killed once dispatched, during or after the side effect: the outcome is unknown — never replayed.
    ["after-dispatched", 0, 0],
    ["during-execute", 1, 0],
    ["after-execute", 1, 0],
  ] as const)("killed %s: the side effect never runs twice", async (point, before, extra) => {
    const schema = freshSchema("crash");
    const db = `${url}#${schema}`;
    const file = join(dir, `crash-${point}.txt`);
    await crashAt(db, file, point);
    expect(sideEffects(file).length).toBe(before);
    const now = redispatch(db, file);
    expect(now.executed).toBe(0); // the claim or its unknown outcome blocks an immediate retry
    const later = redispatch(db, file, LEASE_PASSED_MS);
    expect(later.executed).toBe(extra);
    if (extra === 0) expect(later.result.error?.code).toBe("ERR_PRISM_TOOL_EFFECT_UNKNOWN");
    else expect(later.result.value).toEqual({ charged: 5 });
    expect(sideEffects(file).length).toBe(before + extra);
  });
});

describe("server restart under load", () => {
  let server: PostgresServer;
  beforeAll(() => {
    server = startPostgres(17);
  });
  afterAll(() => server?.stop());

  const CALLS = Number(process.env.PRISM_POSTGRES_RESTART_CALLS ?? 10_000);

  it(`every one of ${CALLS} dispatches ends with one terminal row or a clear store error; none runs twice`, async () => {
    const schema = freshSchema("restart");
    const store = createPostgresToolEffectStore({ connectionString: server.url, schema, connectTimeoutMs: 1000 });
    await store.ready();
    const executions = new Map<string, number>();
    const registry = createToolRegistry([chargeTool((id) => executions.set(id, (executions.get(id) ?? 0) + 1))]);
    const rows: { toolCallId: string; status: string }[] = [];
    const ledger = { appendToolCall: (r: { toolCallId: string; status: string }) => void rows.push(r) };
    const ids = Array.from({ length: CALLS }, (_, i) => `restart-${i}`);
    let next = 0;
    let restarted = false;
    const endings = new Map<string, number>();
    async function worker() {
      while (next < ids.length) {
        const id = ids[next++];
        if (!restarted && next >= CALLS / 3) {
          restarted = true;
          server.restart(); // blocks this thread while PostgreSQL stops and starts: calls in flight fail
        }
        const r = await dispatchToolCall({ call: call(id), registry, context, identity, effectStore: store, ledger });
        const ending = r.error ? String(r.error.code ?? r.error.message) : "ok";
        endings.set(ending, (endings.get(ending) ?? 0) + 1);
      }
    }
    await Promise.all(Array.from({ length: 16 }, worker));
    expect(restarted).toBe(true);
    // No call ran twice.
    expect([...executions.values()].every((n) => n === 1)).toBe(true);
    // Every call left exactly one terminal row.
    const terminal = rows.filter((r) => r.status !== "started" && r.status !== "progress");
    expect(terminal.length).toBe(CALLS);
    expect(new Set(terminal.map((r) => r.toolCallId)).size).toBe(CALLS);
    // Most calls succeeded; those that did not ended with a store error, not something unexplained.
    expect(endings.get("ok")).toBeGreaterThan(CALLS / 2);
    for (const code of endings.keys()) expect(["ok", "ERR_PRISM_TOOL_EFFECT_STORE", "ERR_PRISM_TOOL_EFFECT_UNKNOWN"]).toContain(code);
    await store.close();
  }, 600_000);
});

describe("the PostgreSQL run ledger", () => {
  it("keeps every row of several workers, each worker's rows in its order", async () => {
    const schema = freshSchema("ledger");
    const ledgers = Array.from({ length: 4 }, () => createPostgresRunLedger({ connectionString: url, schema, batchSize: 64 }));
    for (let i = 0; i < 2000; i++) {
      const w = i % 4;
      ledgers[w].appendToolCall({ id: `w${w}-${i}`, toolCallId: `c${i}`, status: "finished", worker: w, n: i });
    }
    await Promise.all(ledgers.map((l) => l.flush()));
    const rows = (await ledgers[0].list("tool_call")) as { worker: number; n: number }[];
    expect(rows).toHaveLength(2000);
    for (let w = 0; w < 4; w++) {
      const mine = rows.filter((r) => r.worker === w).map((r) => r.n);
      expect(mine).toEqual([...mine].sort((a, b) => a - b));
      expect(mine).toHaveLength(500);
    }
    expect(ledgers[1].status()).toEqual({ accepted: 500, flushed: 500, buffered: 0 });
    await Promise.all(ledgers.map((l) => l.close()));
    expect(() => ledgers[0].appendRun({ id: "late" })).toThrow(expect.objectContaining({ code: "ERR_PRISM_LEDGER" }));
  });

  it("bounds a row it cannot store whole instead of dropping it, exactly as every built-in ledger does", async () => {
    const ledger = createPostgresRunLedger(url, freshSchema("bounded"));
    const memory = createMemoryRunLedger();
    const cyclic: Record<string, unknown> = { id: "cyc", toolCallId: "c1", status: "finished" };
    cyclic.self = cyclic;
    const records = [cyclic, { id: "big", toolCallId: "c2", status: "error", value: "x".repeat(2 * 1024 * 1024) }, { id: "bigint", toolCallId: "c3", status: "finished", value: 10n }];
    for (const r of records) {
      ledger.appendToolCall(r);
      memory.appendToolCall(r);
    }
    await ledger.flush();
    const rows = (await ledger.list()) as Record<string, unknown>[];
    expect(rows).toEqual(memory.list());
    expect(rows[0]).toEqual({ id: "cyc", toolCallId: "c1", status: "finished", self: "[Circular]" });
    expect(rows[1]).toMatchObject({ id: "big", toolCallId: "c2", status: "error" });
    expect(Buffer.byteLength(JSON.stringify(rows[1]))).toBeLessThanOrEqual(1024 * 1024);
    expect(rows[2]).toEqual({ id: "bigint", toolCallId: "c3", status: "finished", value: "10" });
    // The same refusals too: a record that is not an object, an unknown kind.
    expect(() => ledger.appendRun(null as never)).toThrow(expect.objectContaining({ code: "ERR_PRISM_LEDGER" }));
    await expect(ledger.list("nope" as never)).rejects.toThrow('kind must be "tool_call", "run", "event" or "usage"');
    await ledger.close();
  });

  it("receives exactly one terminal row per dispatched call", async () => {
    const ledger = createPostgresRunLedger(url, freshSchema("rows"));
    const store = createPostgresToolEffectStore(url, freshSchema("rows_fx"));
    const registry = createToolRegistry([chargeTool(() => {})]);
    const ids = Array.from({ length: 50 }, (_, i) => `row-${i}`);
    await Promise.all(ids.map((id) => dispatchToolCall({ call: call(id), registry, context, identity, effectStore: store, ledger })));
    await ledger.flush();
    const rows = (await ledger.list()) as { toolCallId: string; status: string }[];
    const terminal = rows.filter((r) => r.status !== "started");
    expect(terminal.map((r) => r.toolCallId).sort()).toEqual([...ids].sort());
    await Promise.all([ledger.close(), store.close()]);
  });

  it("commits queued rows when the process exits without closing", () => {
    const schema = freshSchema("exit");
    const script = `
      const { createPostgresRunLedger } = require(${JSON.stringify(join(__dirname, "..", "postgres", "index.js"))});
      const l = createPostgresRunLedger(${JSON.stringify(url)}, ${JSON.stringify(schema)});
      l.ready().then(() => { for (let i = 0; i < 300; i++) l.appendEvent({ id: "e" + i, n: i }); process.exit(0); });`;
    const r = spawnSync(process.execPath, ["-e", script], { encoding: "utf8" });
    expect(r.status).toBe(0);
    const check = createPostgresRunLedger(url, schema);
    return check.list("event").then(async (rows) => {
      expect(rows.map((x) => (x as { n: number }).n)).toEqual(Array.from({ length: 300 }, (_, i) => i));
      await check.close();
    });
  });

  it("holds rows while the database restarts, then writes them all", async () => {
    const server = startPostgres(29);
    const ledger = createPostgresRunLedger({ connectionString: server.url, schema: "outage", connectTimeoutMs: 500 });
    await ledger.ready();
    ledger.appendRun({ id: "before" });
    await ledger.flush();
    server.stop();
    for (let i = 0; i < 100; i++) ledger.appendRun({ id: `during-${i}` });
    await new Promise((r) => setTimeout(r, 300));
    expect(ledger.status().buffered).toBeGreaterThan(0);
    const err = await ledger.flush(200).catch((e) => e);
    expect(err.code).toBe("ERR_PRISM_LEDGER");
    expect(err.message).toMatch(/rows not yet written/);
    server.start();
    await ledger.flush(20_000);
    const rows = (await ledger.list("run")) as { id: string }[];
    expect(rows.map((r) => r.id)).toEqual(["before", ...Array.from({ length: 100 }, (_, i) => `during-${i}`)]);
    await ledger.close();
    server.stop();
  }, 60_000);
});
