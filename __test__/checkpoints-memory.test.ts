// The memory checkpoint store runs the same native rules as the SQLite store (one compare-and-swap,
// crates/core/src/run/checkpoint.rs), over rows kept in save order: what is particular to it is the
// eviction bound. Both stores answer one script alike, refuse fields that are not strings, and page
// as upstream does.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createMemoryCheckpointStore, createSqliteCheckpointStore, type CheckpointStore } from "../index.js";

const dir = mkdtempSync(join(tmpdir(), "prism-ckpt-memory-"));
let files = 0;
const opened: Array<{ close(): void }> = [];
afterAll(() => {
  for (const s of opened) s.close();
  rmSync(dir, { recursive: true, force: true });
});

function stores(): [string, CheckpointStore][] {
  const sqlite = createSqliteCheckpointStore(join(dir, `s-${++files}.db`), { synchronous: "normal" });
  opened.push(sqlite);
  return [
    ["memory", createMemoryCheckpointStore()],
    ["sqlite", sqlite],
  ];
}

/** What a call answered, with the store's clock fields left out. */
async function outcome(p: () => Promise<unknown>): Promise<unknown> {
  try {
    return JSON.parse(JSON.stringify(await p(), (k, v) => (k === "createdAt" || k === "updatedAt" ? undefined : v)) ?? "null");
  } catch (e) {
    const err = e as { name: string; code?: string; message: string };
    return `${err.name} ${err.code ?? ""}: ${err.message}`;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const keys = (page: any) => page.items.map((r: any) => r.key);

describe("createMemoryCheckpointStore", () => {
  it("evicts the least recently saved checkpoint past maxRecords; a load does not keep one", async () => {
    const s = createMemoryCheckpointStore({ maxRecords: 2 });
    await s.saveCheckpoint({ namespace: "n", key: "a", version: 1, value: 1 });
    await s.saveCheckpoint({ namespace: "n", key: "b", version: 1, value: 1 });
    expect(await s.loadCheckpoint({ namespace: "n", key: "a" })).not.toBeNull();
    await s.saveCheckpoint({ namespace: "n", key: "c", version: 1, value: 1 });
    expect(await s.loadCheckpoint({ namespace: "n", key: "a" })).toBeNull();
    // Saving `b` again makes it the most recently saved: `c` goes next.
    await s.saveCheckpoint({ namespace: "n", key: "b", version: 2, expectedVersion: 1, value: 2 });
    await s.saveCheckpoint({ namespace: "n", key: "d", version: 1, value: 1 });
    expect((await s.listCheckpoints({ namespace: "n" })).items.map((r) => `${r.key}@${r.version}`).sort()).toEqual(["b@2", "d@1"]);
  });

  it("answers a script of saves, conflicts, loads, lists and deletes as the SQLite store does", async () => {
    const script = (s: CheckpointStore) => [
      () => s.saveCheckpoint({ namespace: "run", key: "r1", version: 1, expectedVersion: 0, value: { step: 1 }, tenantId: "t", category: "agent" }),
      () => s.saveCheckpoint({ namespace: "run", key: "r1", version: 2, expectedVersion: 0, value: { step: 2 }, tenantId: "t" }),
      () => s.saveCheckpoint({ namespace: "run", key: "r1", version: 1, value: {}, tenantId: "t" }),
      () => s.saveCheckpoint({ namespace: "run", key: "r1", version: 2, expectedVersion: 1, fencingToken: 7, value: { step: 2 }, tenantId: "t", metadata: { by: "w1" } }),
      () => s.saveCheckpoint({ namespace: "run", key: "r1", version: 3, fencingToken: 6, value: {}, tenantId: "t" }),
      () => s.saveCheckpoint({ namespace: "run", key: "r1", version: 3, value: {}, tenantId: "t" }),
      () => s.saveCheckpoint({ namespace: "run", key: "r1", version: 3, value: {}, tenantId: "u", fencingToken: 9 }),
      () => s.loadCheckpoint({ namespace: "run", key: "r1", tenantId: "t" }),
      () => s.loadCheckpoint({ namespace: "run", key: "r1" }),
      () => s.loadCheckpoint({ namespace: "run", key: "absent" }),
      // A later millisecond than r1's save, so "newest first" has one answer.
      async () => (await sleep(3), s.saveCheckpoint({ namespace: "run", key: "r2", version: 1, value: [1, "two", null], tenantId: "t", category: "other" })),
      () => s.listCheckpoints({ namespace: "run", tenantId: "t", category: ["agent", "nope"] }),
      () => s.listCheckpoints({ keyPrefix: "r", limit: 1 }),
      () => s.listCheckpoints({ cursor: "x" }),
      () => s.deleteCheckpoint({ namespace: "run", key: "r1", tenantId: "u" }),
      () => s.deleteCheckpoint({ namespace: "run", key: "r1", tenantId: "t" }),
      () => s.deleteCheckpoint({ namespace: "run", key: "r1", tenantId: "t" }),
    ];
    const answers: unknown[][] = [];
    for (const [, s] of stores()) {
      const out: unknown[] = [];
      for (const step of script(s)) out.push(await outcome(step));
      answers.push(out);
    }
    expect(answers[0]).toEqual(answers[1]);
    // The script does reach every branch: a win, each refusal, and a record as stored.
    expect(answers[0][1]).toBe("CheckpointConflictError ERR_PRISM_CHECKPOINT_CONFLICT: Checkpoint compare-and-swap failed (expected 0, current 1)");
    expect(answers[0][4]).toBe("CheckpointConflictError ERR_PRISM_CHECKPOINT_CONFLICT: Stale checkpoint fencing token 6 (current 7)");
    expect(answers[0][5]).toBe("CheckpointConflictError ERR_PRISM_CHECKPOINT_CONFLICT: Stale checkpoint fencing token missing (current 7)");
    expect(answers[0][6]).toBe("CheckpointConflictError ERR_PRISM_CHECKPOINT_CONFLICT: Checkpoint ownership mismatch");
    expect(answers[0][7]).toEqual({ namespace: "run", key: "r1", version: 2, fencingToken: 7, value: { step: 2 }, tenantId: "t", metadata: { by: "w1" } });
    expect(keys(answers[0][12])).toEqual(["r2"]);
    expect(answers[0][15]).toBe(true);
    expect(answers[0][16]).toBe(false);
  });

  it("refuses a key, ownership or category field that is not a string: it is never taken as absent", async () => {
    for (const [name, s] of stores()) {
      await s.saveCheckpoint({ namespace: "n", key: "k", version: 1, value: 1, tenantId: "5" });
      const bad = [
        () => s.saveCheckpoint({ namespace: "n", key: "k2", version: 1, value: 1, tenantId: 5 as any }),
        () => s.loadCheckpoint({ namespace: "n", key: "k", tenantId: null as any }),
        () => s.listCheckpoints({ namespace: 1 as any }),
        () => s.listCheckpoints({ accountId: {} as any }),
        () => s.saveCheckpoint({ namespace: "n", key: "k3", version: 1, value: 1, category: 3 as any }),
      ];
      const answers = [];
      for (const step of bad) answers.push(await outcome(step));
      expect(answers, name).toEqual([
        "CheckpointConflictError ERR_PRISM_CHECKPOINT_CONFLICT: Checkpoint tenantId must be a string",
        "CheckpointConflictError ERR_PRISM_CHECKPOINT_CONFLICT: Checkpoint tenantId must be a string",
        "CheckpointConflictError ERR_PRISM_CHECKPOINT_CONFLICT: Checkpoint namespace must be a string",
        "CheckpointConflictError ERR_PRISM_CHECKPOINT_CONFLICT: Checkpoint accountId must be a string",
        "CheckpointConflictError ERR_PRISM_CHECKPOINT_CONFLICT: Checkpoint category must be a string",
      ]);
    }
  });

  it("pages as upstream: a limit under 1 is 1, a fraction pages by its integer part, maxPageSize caps it", async () => {
    for (const [name, s] of stores()) {
      for (const key of ["a", "b", "c"]) await s.saveCheckpoint({ namespace: "n", key, version: 1, value: 1 });
      expect(keys(await s.listCheckpoints({ namespace: "n", limit: -4 })).length, name).toBe(1);
      expect(keys(await s.listCheckpoints({ namespace: "n", limit: 2.7 })).length, name).toBe(2);
      expect((await s.listCheckpoints({ namespace: "n", limit: 2.7 })).nextCursor, name).toBe("2");
    }
    const capped = createMemoryCheckpointStore({ maxPageSize: 2 });
    for (const key of ["a", "b", "c"]) await capped.saveCheckpoint({ namespace: "n", key, version: 1, value: 1 });
    expect(keys(await capped.listCheckpoints({ limit: 50 })).length).toBe(2);
  });


  it("reads a limit as upstream's Math.max(1, limit ?? 100): a numeric text is its number, NaN an empty page", async () => {
    for (const [name, s] of stores()) {
      for (const key of ["a", "b", "c"]) await s.saveCheckpoint({ namespace: "n", key, version: 1, value: 1 });
      const list = (limit: unknown, cursor?: string) => s.listCheckpoints({ namespace: "n", limit, cursor } as any);
      expect(keys(await list("2")).length, name).toBe(2);
      expect((await list("2")).nextCursor, name).toBe("2");
      expect(keys(await list([1])).length, name).toBe(1); // ToNumber([1]) is 1
      expect(keys(await list({ valueOf: () => 2 })).length, name).toBe(2);
      expect(keys(await list(Infinity)).length, name).toBe(3);
      expect(keys(await list(null)).length, name).toBe(3);
      // Math.max(1, NaN) is NaN and slice(offset, NaN) is empty: no records, the same cursor again.
      for (const nan of [NaN, "abc", {}]) {
        expect(await list(nan, "1"), `${name} ${String(nan)}`).toEqual({ items: [], nextCursor: "1" });
      }
      await expect(list(Symbol("x")), name).rejects.toThrow(TypeError);
      await expect(list(2n), name).rejects.toThrow(TypeError);
    }
  });
  it("refuses bad options with ERR_PRISM_INVALID_OPTION", () => {
    for (const options of [{ maxRecords: 0 }, { maxValueBytes: 1.5 }, { maxPageSize: -1 }]) {
      expect(() => createMemoryCheckpointStore(options)).toThrow(expect.objectContaining({ name: "RangeError", code: "ERR_PRISM_INVALID_OPTION" }));
    }
  });
});
