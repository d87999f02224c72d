// Durability under faults (issue 48), against a real PostgreSQL server and SQLite files:
// - a ledger batch whose commit answer is lost (a proxy drops it) is sent again and stores each row once;
// - a claim the store never wrote (server unreachable) is a store error, safe to retry, not "unknown";
//   a claim whose commit answer was lost is "unknown";
// - a key whose every attempt died after `begin` (three SIGKILLs) answers its own code, and the operator
//   settles it with `resolveUnknown`.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPostgresRunLedger, createPostgresToolEffectStore } from "../postgres/index.js";
import {
  createMemoryToolEffectStore,
  createSqliteToolEffectStore,
  createToolRegistry,
  dispatchToolCall,
  ToolEffectError,
} from "../index.js";
import { chargeCall, chargeContext, chargeTool, effectKey as keyOf, serviceIdentity } from "./helpers/service-identity.mjs";
import { freshSchema, postgresUrl } from "./helpers/postgres.js";
import { closedPort, commitDroppingProxy } from "./helpers/pg-proxy.js";
import { killAt } from "./helpers/kill-at.js";

const dir = mkdtempSync(join(tmpdir(), "prism-durability-"));
let url = "";
beforeAll(() => {
  url = postgresUrl();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const identity = serviceIdentity;
const context = chargeContext;
const call = chargeCall;


describe("the PostgreSQL ledger stores each row once when a commit's answer is lost", () => {
  it("a batch whose INSERT committed but whose answer never came is sent again and adds nothing twice", async () => {
    const proxy = await commitDroppingProxy(url);
    const schema = freshSchema("lost_ack");
    const ledger = createPostgresRunLedger({ connectionString: proxy.url, schema, batchSize: 64, flushIntervalMs: 5 });
    await ledger.ready();
    proxy.arm((tag) => tag.startsWith("INSERT"));
    for (let i = 0; i < 6; i++) ledger.appendToolCall({ id: `row-${i}`, toolCallId: `c${i}`, status: "finished", n: i });
    await ledger.flush(30_000);
    // The fault happened: one commit answer was lost, and the writer sent that batch again.
    expect(proxy.dropped()).toBe(1);
    for (let i = 6; i < 9; i++) ledger.appendToolCall({ id: `row-${i}`, toolCallId: `c${i}`, status: "finished", n: i });
    await ledger.flush(30_000);
    const rows = (await ledger.list("tool_call")) as { id: string }[];
    // Rows appended = rows kept, in order, none twice.
    expect(rows.map((r) => r.id)).toEqual(Array.from({ length: 9 }, (_, i) => `row-${i}`));
    expect(ledger.status()).toEqual({ accepted: 9, flushed: 9, buffered: 0 });
    await ledger.close();
    await proxy.close();
  });

  it("keeps the rows of a table made before rows had keys, and keys the new ones", async () => {
    const schema = freshSchema("old_ledger");
    // The table as the first release made it, with one row.
    const sql = `CREATE SCHEMA ${schema};
      CREATE TABLE ${schema}.prism_migrations (component text NOT NULL, version integer NOT NULL, applied_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (component, version));
      CREATE TABLE ${schema}.prism_run_ledger (seq bigserial PRIMARY KEY, kind text NOT NULL, record text NOT NULL, appended_at timestamptz NOT NULL DEFAULT now());
      CREATE INDEX prism_run_ledger_kind ON ${schema}.prism_run_ledger (kind, seq);
      INSERT INTO ${schema}.prism_migrations (component, version) VALUES ('run_ledger', 1);
      INSERT INTO ${schema}.prism_run_ledger (kind, record) VALUES ('run', '{"id":"old"}');`;
    const r = spawnSync(psqlPath(), [url, "-v", "ON_ERROR_STOP=1", "-c", sql], { encoding: "utf8" });
    expect(r.status, r.stderr).toBe(0);
    const ledger = createPostgresRunLedger(url, schema);
    ledger.appendRun({ id: "new" });
    await ledger.flush(30_000);
    expect(await ledger.list("run")).toEqual([{ id: "old" }, { id: "new" }]);
    await ledger.close();
    const keyed = spawnSync(psqlPath(), [url, "-tAc", `SELECT count(*) FROM ${schema}.prism_run_ledger WHERE writer_id IS NOT NULL AND position = 0`], { encoding: "utf8" });
    expect(keyed.stdout.trim()).toBe("1");
  });
});

describe("a claim the store never wrote is a store error, one whose commit answer was lost is unknown", () => {
  it("an unreachable server: dispatch answers ERR_PRISM_TOOL_EFFECT_STORE, nothing ran, and the retry simply runs", async () => {
    const down = createPostgresToolEffectStore({ connectionString: `postgres://prism@127.0.0.1:${await closedPort()}/postgres`, connectTimeoutMs: 2000 });
    const ran: string[] = [];
    const registry = createToolRegistry([chargeTool((id) => ran.push(id))]);
    const r = await dispatchToolCall({ call: call("down"), registry, context, identity, effectStore: down });
    expect(r.error).toMatchObject({ code: "ERR_PRISM_TOOL_EFFECT_STORE" });
    expect(r.error?.message).toMatch(/connect.*refused/i);
    expect(ran).toEqual([]);
    await down.close();

    // Nothing was written: the same call against the reachable store is claimed and runs once.
    const up = createPostgresToolEffectStore(url, freshSchema("retry"));
    expect(await up.get(keyOf("down"))).toBeUndefined();
    const retried = await dispatchToolCall({ call: call("down"), registry, context, identity, effectStore: up });
    expect(retried.value).toEqual({ charged: 5 });
    expect(ran).toEqual(["down"]);
    await up.close();
  });

  it("a begin whose COMMIT answer is lost: ToolEffectError ERR_PRISM_TOOL_EFFECT_UNKNOWN, and the claim did commit", async () => {
    const proxy = await commitDroppingProxy(url);
    const schema = freshSchema("lost_commit");
    const store = createPostgresToolEffectStore({ connectionString: proxy.url, schema });
    await store.ready();
    proxy.arm((tag) => tag === "COMMIT");
    const e = await Promise.resolve(store.begin(keyOf("lost"))).then(() => undefined, (x) => x);
    expect(proxy.dropped()).toBe(1);
    expect(e).toBeInstanceOf(ToolEffectError);
    expect(e.code).toBe("ERR_PRISM_TOOL_EFFECT_UNKNOWN");
    expect(e.message).toMatch(/^tool effect store failed: commit: .*; the write may have committed$/);
    // It had: the record is there, pending, held by a token nobody got.
    expect((await store.get(keyOf("lost")))?.status).toBe("pending");

    // Through dispatch: the call is refused as unknown, and the tool does not run.
    proxy.arm((tag) => tag === "COMMIT");
    const ran: string[] = [];
    const r = await dispatchToolCall({ call: call("lost-2"), registry: createToolRegistry([chargeTool((id) => ran.push(id))]), context, identity, effectStore: store });
    expect(r.error).toMatchObject({ name: "ToolEffectError", code: "ERR_PRISM_TOOL_EFFECT_UNKNOWN" });
    expect(ran).toEqual([]);
    await store.close();
    await proxy.close();
  });

  it("the lease of a claim is an option of the store", async () => {
    const store = createPostgresToolEffectStore({ connectionString: url, schema: freshSchema("lease"), claimTtlMs: 2_000 });
    const begun = await store.begin(keyOf("lease"));
    expect(Date.parse(begun.record.expiresAt!) - Date.parse(begun.record.updatedAt)).toBe(2_000);
    expect(() => createPostgresToolEffectStore({ connectionString: url, claimTtlMs: 3_600_001 })).toThrow(RangeError);
    await store.close();
    // The same option on the memory and SQLite stores; a begin that names its own lease keeps it.
    for (const local of [createMemoryToolEffectStore({ claimTtlMs: 2_000 }), createSqliteToolEffectStore(join(dir, "lease.db"), { claimTtlMs: 2_000 })]) {
      const r = (await local.begin(keyOf("lease"))).record;
      expect(Date.parse(r.expiresAt!) - Date.parse(r.updatedAt)).toBe(2_000);
      const named = (await local.begin({ ...keyOf("named"), claimTtlMs: 9_000 })).record;
      expect(Date.parse(named.expiresAt!) - Date.parse(named.updatedAt)).toBe(9_000);
      await local.close();
    }
    expect(() => createMemoryToolEffectStore({ claimTtlMs: 0 })).toThrow(/claimTtlMs must be an integer from 1 to 3600000/);
  });
});

describe("a key whose every attempt died after begin is exhausted, not a conflict, and the operator settles it", () => {
  const child = join(__dirname, "helpers", "dispatch-child.mjs");
  /** Past the child's 60 s claim lease. */
  const LEASE = 61_000;
  const crash = { toolCallId: "crash", name: "charge", value: { charged: 5 } };
  const exhausted = { name: "ToolEffectError", code: "ERR_PRISM_TOOL_EFFECT_EXHAUSTED", message: "tool effect attempts are exhausted" };
  const effectKey = keyOf("crash");
  const sideEffects = (file: string) => (existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean).length : 0);

  function redispatch(db: string, file: string, skew: number): { result: { error?: unknown; value?: unknown }; executed: number } {
    const r = spawnSync(process.execPath, [child, "run", db, file, String(skew)], { encoding: "utf8" });
    if (r.status !== 0) throw new Error(`redispatch exited ${r.status}: ${r.stderr}`);
    return JSON.parse(r.stdout);
  }

  const stores: [string, () => string, (db: string, skew: number) => ReturnType<typeof createSqliteToolEffectStore>][] = [
    ["SQLite", () => join(dir, `exhausted-${Math.random().toString(36).slice(2)}.db`), (db, skew) => createSqliteToolEffectStore(db, { now: () => Date.now() + skew })],
    [
      "PostgreSQL",
      () => `${url}#${freshSchema("exhausted")}`,
      (db, skew) => {
        const [connectionString, schema] = db.split("#");
        return createPostgresToolEffectStore({ connectionString, schema, now: () => Date.now() + skew }) as never;
      },
    ],
  ];

  for (const [name, newDb, open] of stores) {
    it(`${name}: three workers killed with SIGKILL after begin, then ERR_PRISM_TOOL_EFFECT_EXHAUSTED until resolveUnknown`, async () => {
      const db = newDb();
      const file = join(dir, `side-effect-${name}.txt`);
      // Each worker claims the next attempt once the previous claim's lease has run out, and dies.
      for (let attempt = 0; attempt < 3; attempt++) {
        await killAt(child, ["crash", db, file], "after-claim", { ...process.env, PRISM_TEST_CLOCK_SKEW_MS: String(attempt * LEASE) });
      }
      expect(sideEffects(file)).toBe(0);
      const later = 3 * LEASE;
      const operator = open(db, later);
      const stuck = (await operator.get(effectKey))!;
      expect(stuck).toMatchObject({ status: "failed_retryable", attempt: 3, failure: { code: "ERR_PRISM_TOOL_EFFECT_EXPIRED" } });

      // Every later call: its own code, never run; it stays so (no one holds the key).
      for (let i = 0; i < 2; i++) {
        const again = redispatch(db, file, later);
        expect(again.result.error).toEqual(exhausted);
        expect(again.executed).toBe(0);
      }

      // The operator knows no worker reached the side effect (none was dispatched): retry it.
      const settled = await operator.resolveUnknown({ ...effectKey, expectedVersion: stuck.version, status: "failed_retryable", failure: { code: "operator_retry" } });
      expect(settled).toMatchObject({ status: "failed_retryable", attempt: 0 });
      await operator.close();
      expect(redispatch(db, file, later)).toEqual({ result: crash, executed: 1 });
      expect(redispatch(db, file, later)).toEqual({ result: crash, executed: 0 });
      expect(sideEffects(file)).toBe(1);
    });
  }
});

function psqlPath(): string {
  for (const v of ["17", "16", "15", "14", "13"]) {
    const p = `/usr/lib/postgresql/${v}/bin/psql`;
    if (existsSync(p)) return p;
  }
  return "psql";
}
