// The PostgreSQL checkpoint store against a real server: the conformance kit, upstream's list and
// ownership rules, clear errors for bad input and a dead server, compare-and-swap races between store
// objects (as between workers), and durable approval across processes that share only the database:
// a run suspended by one process is resumed by another, two racing resumes run the side effect once,
// and a resume killed with SIGKILL after the side effect is never replayed.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AGENT_RUN_STATE_NAMESPACE, CheckpointConflictError } from "../index.js";
import { createPostgresCheckpointStore, type PostgresCheckpointStore } from "../postgres/index.js";
import { assertCheckpointStoreConforms } from "../testing/checkpoint-store-conformance.js";
import { freshSchema, postgresUrl } from "./helpers/postgres.js";
import { killAt } from "./helpers/kill-at.js";

const child = join(__dirname, "helpers", "approval-child.mjs");
const root = mkdtempSync(join(tmpdir(), "prism-checkpoints-pg-"));
let url = "";
const open: PostgresCheckpointStore[] = [];
beforeAll(() => {
  url = postgresUrl();
});
afterAll(async () => {
  await Promise.all(open.map((s) => s.close()));
  rmSync(root, { recursive: true, force: true });
});

function store(schema = freshSchema("ckpt"), extra: Record<string, unknown> = {}): PostgresCheckpointStore {
  const s = createPostgresCheckpointStore({ connectionString: url, schema, ...extra });
  open.push(s);
  return s;
}

const ns = "prism.test";
const owner = { tenantId: "tenant" };

describe("the PostgreSQL checkpoint store", () => {
  it("keeps the CheckpointStore contract (conformance kit)", async () => {
    await assertCheckpointStoreConforms(() => store());
  });

  it("two store objects on one schema (two workers): exactly one of eight racing compare-and-swaps wins", async () => {
    const schema = freshSchema("race");
    const [a, b] = [store(schema), store(schema)];
    await a.saveCheckpoint({ namespace: ns, key: "run", ...owner, version: 1, expectedVersion: 0, value: { by: "first" } });
    const race = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) =>
        (i % 2 ? a : b).saveCheckpoint({ namespace: ns, key: "run", ...owner, version: 2, expectedVersion: 1, value: { by: i } }),
      ),
    );
    const won = race.filter((r) => r.status === "fulfilled");
    expect(won).toHaveLength(1);
    for (const r of race) if (r.status === "rejected") expect(r.reason).toBeInstanceOf(CheckpointConflictError);
    const winner = (won[0] as PromiseFulfilledResult<{ value: unknown }>).value.value;
    expect((await b.loadCheckpoint({ namespace: ns, key: "run", ...owner }))?.value).toEqual(winner);
  });

  it("two store objects racing to create one absent key: one wins, the other conflicts", async () => {
    const schema = freshSchema("create");
    const [a, b] = [store(schema), store(schema)];
    const race = await Promise.allSettled(
      [a, b, a, b].map((s, i) => s.saveCheckpoint({ namespace: ns, key: "new", ...owner, version: 1, expectedVersion: 0, value: { i } })),
    );
    expect(race.filter((r) => r.status === "fulfilled")).toHaveLength(1);
  });

  it("lists newest first in pages, filtered by namespace, key prefix (literally), category and owner", async () => {
    const s = store();
    for (let i = 0; i < 25; i++) {
      await s.saveCheckpoint({ namespace: ns, key: `run_${String(i).padStart(2, "0")}`, ...owner, version: 1, value: { i }, category: i % 2 ? "odd" : "even" });
    }
    await s.saveCheckpoint({ namespace: ns, key: "r%n", ...owner, version: 1, value: {} });
    await s.saveCheckpoint({ namespace: "other", key: "run_00", ...owner, version: 1, value: {} });
    await s.saveCheckpoint({ namespace: ns, key: "run_x", tenantId: "someone-else", version: 1, value: {} });
    const items: { key: string; updatedAt: string }[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await s.listCheckpoints({ namespace: ns, keyPrefix: "run_", ...owner, limit: 10, cursor });
      items.push(...page.items);
      cursor = page.nextCursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(new Set(items.map((r) => r.key)).size).toBe(25);
    // Newest `updatedAt` first; saves in the same millisecond by key.
    const expected = [...items].sort((a, b) => (a.updatedAt !== b.updatedAt ? (a.updatedAt < b.updatedAt ? 1 : -1) : a.key < b.key ? -1 : 1));
    expect(items.map((r) => r.key)).toEqual(expected.map((r) => r.key));
    await s.saveCheckpoint({ namespace: ns, key: "run_00", ...owner, version: 2, value: { touched: true }, category: "even" });
    expect((await s.listCheckpoints({ namespace: ns, keyPrefix: "run_", limit: 1 })).items[0].key).toBe("run_00");
    // `%` and `_` in a prefix are characters, not patterns.
    expect((await s.listCheckpoints({ namespace: ns, keyPrefix: "r%" })).items.map((r) => r.key)).toEqual(["r%n"]);
    const odd = await s.listCheckpoints({ namespace: ns, category: "odd", limit: 100 });
    expect(odd.items).toHaveLength(12);
    expect((await s.listCheckpoints({ namespace: ns, category: ["odd", "even"], limit: 100 })).items).toHaveLength(25);
    expect((await s.listCheckpoints({ namespace: ns, tenantId: "someone-else" })).items.map((r) => r.key)).toEqual(["run_x"]);
    await expect(s.listCheckpoints({ cursor: "not-a-number" })).rejects.toBeInstanceOf(CheckpointConflictError);
  });

  it("deletes only the owner's record", async () => {
    const s = store();
    await s.saveCheckpoint({ namespace: ns, key: "k", ...owner, version: 1, value: { a: 1 } });
    await expect(s.deleteCheckpoint({ namespace: ns, key: "k", tenantId: "thief" })).rejects.toMatchObject({ code: "ERR_PRISM_CHECKPOINT_CONFLICT" });
    expect(await s.deleteCheckpoint({ namespace: ns, key: "k", ...owner })).toBe(true);
    expect(await s.deleteCheckpoint({ namespace: ns, key: "k", ...owner })).toBe(false);
    expect(await s.loadCheckpoint({ namespace: ns, key: "k", ...owner })).toBeNull();
  });

  it("answers bad input with a clear error and writes nothing", async () => {
    const s = store(freshSchema("bad"), { maxValueBytes: 1024 });
    const at = { namespace: ns, key: "k", ...owner };
    await expect(s.saveCheckpoint({ ...at, version: 1, value: { big: "x".repeat(2048) } })).rejects.toThrow(/maxValueBytes \(1024\)/);
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    await expect(s.saveCheckpoint({ ...at, version: 1, value: cyclic as never })).rejects.toThrow(/JSON serializable/);
    await expect(s.saveCheckpoint({ ...at, version: 1.5, value: {} })).rejects.toThrow(/positive safe integer/);
    await expect(s.saveCheckpoint({ namespace: ns, key: "", version: 1, value: {} } as never)).rejects.toThrow(/namespace and key are required/);
    // PostgreSQL text cannot hold NUL: every store refuses such a key alike, saying so.
    await expect(s.saveCheckpoint({ namespace: ns, key: "nul\u0000key", version: 1, value: {} })).rejects.toThrow(/Checkpoint key must not contain NUL/);
    await expect(s.saveCheckpoint({ ...at, version: 1, value: { s: "\u0000 inside a value is fine" } })).resolves.toMatchObject({ version: 1 });
    expect((await s.loadCheckpoint(at))?.value).toEqual({ s: "\u0000 inside a value is fine" });
    const aborted = AbortSignal.abort(new Error("stop"));
    await expect(s.loadCheckpoint({ ...at, signal: aborted })).rejects.toThrow("stop");
  });

  it("names a bad schema, an unreachable server and a closed store", async () => {
    expect(() => createPostgresCheckpointStore(url, "Robert'); DROP TABLE x;--")).toThrow(/createPostgresCheckpointStore: schema must match/);
    expect(() => createPostgresCheckpointStore({ connectionString: url, maxConnections: 0 })).toThrow(/maxConnections must be an integer from 1 to 64/);
    const dead = createPostgresCheckpointStore({ connectionString: "postgres://nobody@127.0.0.1:1/none", connectTimeoutMs: 2000 });
    await expect(dead.ready()).rejects.toThrow(/checkpoint store failed: connect: .*refused/i);
    await expect(dead.loadCheckpoint({ namespace: ns, key: "k" })).rejects.toThrow(/checkpoint store failed: connect/);
    const s = store();
    await s.ready();
    await s.close();
    await expect(s.loadCheckpoint({ namespace: ns, key: "k" })).rejects.toThrow(/checkpoint store is closed/);
  });
});

// ----- durable approval across processes sharing the database ---------------------------------------

const sideEffects = (dir: string) => {
  const f = join(dir, "side-effects.txt");
  return existsSync(f) ? readFileSync(f, "utf8").split("\n").filter(Boolean).length : 0;
};

describe("durable approval over PostgreSQL, across processes", () => {
  let n = 0;
  function worker() {
    const dir = join(root, `case-${n++}`);
    spawnSync("mkdir", ["-p", dir]);
    const env = { ...process.env, PRISM_CHILD_POSTGRES_URL: url, PRISM_CHILD_POSTGRES_SCHEMA: freshSchema("approval") };
    const run = (args: string[]) => {
      const r = spawnSync(process.execPath, [child, ...args], { encoding: "utf8", env });
      if (r.status !== 0) throw new Error(`child exited ${r.status}: ${r.stderr}`);
      return JSON.parse(r.stdout);
    };
    const runAsync = (args: string[]) =>
      new Promise<any>((resolve, reject) => {
        const p = spawn(process.execPath, [child, ...args], { env, stdio: ["ignore", "pipe", "inherit"] });
        let out = "";
        p.stdout.on("data", (d: Buffer) => (out += d.toString()));
        p.on("exit", (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`child exited ${code}: ${out}`))));
      });
    const killAtPoint = (args: string[], point: string) => killAt(child, args, point, env);
    const stored = async (runId: string) => {
      const s = createPostgresCheckpointStore({ connectionString: url, schema: env.PRISM_CHILD_POSTGRES_SCHEMA });
      try {
        return await s.loadCheckpoint({ namespace: AGENT_RUN_STATE_NAMESPACE, key: runId, tenantId: "tenant" });
      } finally {
        await s.close();
      }
    };
    return { dir, run, runAsync, killAt: killAtPoint, stored };
  }

  it("a run suspended by one process is resumed by another; the next request carries the result", () => {
    const w = worker();
    const s = w.run(["suspend", w.dir]);
    expect(s.status).toBe("suspended");
    expect(sideEffects(w.dir)).toBe(0);
    const r = w.run(["resume", w.dir, s.runId, s.sessionId, String(s.version)]);
    expect(r).toMatchObject({ status: "succeeded", text: "charged", row: { toolCallId: "call-1", name: "charge", result: { charged: 5 } } });
    expect(sideEffects(w.dir)).toBe(1);
    const again = w.run(["resume", w.dir, s.runId, s.sessionId, String(s.version)]);
    expect(again.error).toMatchObject({ name: "AgentRunStateError", code: "ERR_PRISM_AGENT_RUN_STALE", message: "Stale or non-suspended agent run resume" });
    expect(sideEffects(w.dir)).toBe(1);
  });

  it("two processes approving the same suspension at once: one resumes, the other is stale, the side effect runs once", async () => {
    const w = worker();
    const s = w.run(["suspend", w.dir]);
    const args = ["resume", w.dir, s.runId, s.sessionId, String(s.version)];
    const results = await Promise.all([w.runAsync(args), w.runAsync(args)]);
    expect(results.filter((r) => r.status === "succeeded")).toHaveLength(1);
    // The loser lost the race: stale, not a run to reconcile.
    expect(results.filter((r) => r.error?.code === "ERR_PRISM_AGENT_RUN_STALE")).toHaveLength(1);
    expect(sideEffects(w.dir)).toBe(1);
  });

  it("SIGKILL after the side effect: the claim was durable, a later resume is refused, the side effect ran once", async () => {
    const w = worker();
    const s = w.run(["suspend", w.dir]);
    await w.killAt(["resume", w.dir, s.runId, s.sessionId, String(s.version)], "after-effect");
    expect(sideEffects(w.dir)).toBe(1);
    const record = await w.stored(s.runId);
    expect(record?.version).toBe(s.version + 1);
    expect((record?.value as any).status).toBe("running");
    expect((record?.value as any).pendingCalls.map((e: any) => e.status)).toEqual(["dispatched"]);
    // The version read before the claim lost the race: stale. The current one: the run's claimed call
    // has no known outcome, so no resume runs it and the error says to reconcile.
    for (const [version, code] of [[s.version, "ERR_PRISM_AGENT_RUN_STALE"], [record!.version, "ERR_PRISM_AGENT_RUN_RECONCILE"]] as const) {
      const r = w.run(["resume", w.dir, s.runId, s.sessionId, String(version)]);
      expect(r.error).toMatchObject({ name: "AgentRunStateError", code });
    }
    expect(sideEffects(w.dir)).toBe(1);
  });
});
