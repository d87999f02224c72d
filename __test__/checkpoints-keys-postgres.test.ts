// One answer for the same checkpoint key in every store: a key, namespace, owner field or key prefix
// holding a NUL or a lone UTF-16 surrogate is refused alike by the memory, SQLite and PostgreSQL
// stores, with a message saying what was wrong (before, PostgreSQL answered "namespace and key are
// required" or a database failure while the memory store kept the record).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMemoryCheckpointStore, createSqliteCheckpointStore, type CheckpointStore } from "../index.js";
import { createPostgresCheckpointStore, type PostgresCheckpointStore } from "../postgres/index.js";
import { freshSchema, postgresUrl } from "./helpers/postgres.js";

const dir = mkdtempSync(join(tmpdir(), "prism-ckpt-keys-"));
let pg: PostgresCheckpointStore;
let sqlite: ReturnType<typeof createSqliteCheckpointStore>;
beforeAll(() => {
  pg = createPostgresCheckpointStore({ connectionString: postgresUrl(), schema: freshSchema("keys") });
  sqlite = createSqliteCheckpointStore({ path: join(dir, "keys.db") });
});
afterAll(async () => {
  await pg?.close();
  sqlite?.close();
  rmSync(dir, { recursive: true, force: true });
});

const hostile: [string, string, RegExp][] = [
  ["a lone high surrogate", "run-\ud800-x", /Checkpoint key must be well-formed Unicode \(lone surrogate at index 4\)/],
  ["a lone low surrogate", "run-\udc00", /Checkpoint key must be well-formed Unicode \(lone surrogate at index 4\)/],
  ["a reversed pair", "\udc00\ud800", /Checkpoint key must be well-formed Unicode \(lone surrogate at index 0\)/],
  ["a NUL", "nul\u0000key", /Checkpoint key must not contain NUL \(U\+0000, at index 3\)/],
];

async function answer(p: () => Promise<unknown>): Promise<string> {
  try {
    return `ok ${JSON.stringify(await p())?.slice(0, 0)}`;
  } catch (e) {
    const err = e as { code?: string; message: string };
    return `${err.code}: ${err.message}`;
  }
}

describe("a checkpoint key every store cannot keep", () => {
  const stores = (): [string, CheckpointStore][] => [
    ["memory", createMemoryCheckpointStore()],
    ["sqlite", sqlite],
    ["postgres", pg],
  ];

  for (const [what, key, message] of hostile) {
    it(`${what}: the same refusal from every store, for save, load, delete and list`, async () => {
      const answers = new Map<string, string[]>();
      for (const [name, s] of stores()) {
        answers.set(name, [
          await answer(() => s.saveCheckpoint({ namespace: "ns", key, version: 1, value: {} })),
          await answer(() => s.loadCheckpoint({ namespace: "ns", key })),
          await answer(() => s.deleteCheckpoint({ namespace: "ns", key })),
          await answer(() => s.saveCheckpoint({ namespace: key, key: "k", version: 1, value: {} })),
          await answer(() => s.saveCheckpoint({ namespace: "ns", key: "k2", tenantId: key, version: 1, value: {} })),
          await answer(() => s.listCheckpoints({ namespace: "ns", keyPrefix: key })),
        ]);
      }
      const [memory, ...others] = [...answers.values()];
      for (const other of others) expect(other).toEqual(memory);
      expect(memory[0]).toMatch(message);
      expect(memory[0]).toMatch(/^ERR_PRISM_CHECKPOINT_CONFLICT: /);
      expect(memory[3]).toMatch(/Checkpoint namespace must/);
      expect(memory[4]).toMatch(/Checkpoint tenantId must/);
      expect(memory[5]).toMatch(/Checkpoint keyPrefix must/);
      // Nothing was written.
      for (const [, s] of stores()) expect((await s.listCheckpoints({ namespace: "ns" })).items).toEqual([]);
    });
  }

  it("a well-formed astral key (a surrogate pair) is kept by every store alike", async () => {
    for (const [, s] of stores()) {
      await expect(s.saveCheckpoint({ namespace: "astral", key: "run-\ud83d\ude00", version: 1, value: { ok: true } })).resolves.toMatchObject({ version: 1 });
      expect((await s.loadCheckpoint({ namespace: "astral", key: "run-\ud83d\ude00" }))?.value).toEqual({ ok: true });
    }
  });

  it("a value nested deeper than a parser's recursion limit round-trips whole in every store", async () => {
    // 2 000 levels: JSON.stringify's own stack bounds what a host can hand over; the stores keep
    // and answer the text without parsing it (before, SQLite and PostgreSQL refused anything deeper
    // than 128 levels with "namespace and key are required").
    let value: unknown = { leaf: "x" };
    for (let i = 0; i < 2000; i++) value = [value];
    for (const [name, s] of stores()) {
      await s.saveCheckpoint({ namespace: "deep", key: name, version: 1, value, metadata: { depth: 2000 } });
      const loaded = await s.loadCheckpoint({ namespace: "deep", key: name });
      expect(loaded?.value, name).toEqual(value);
      expect(loaded?.metadata, name).toEqual({ depth: 2000 });
      expect((await s.listCheckpoints({ namespace: "deep", keyPrefix: name })).items[0].value, name).toEqual(value);
    }
  });
});
