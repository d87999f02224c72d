// `createSqliteCheckpointStore(path, options?)`, as the other SQLite factories take their path; the
// older `({ path, ...options })` form still opens the same file.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createSqliteCheckpointStore } from "../index.mjs";
import { assertCheckpointStoreConforms } from "../testing/checkpoint-store-conformance.mjs";
import { codeOf } from "./helpers/thrown.js";

const dir = mkdtempSync(join(tmpdir(), "prism-checkpoints-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const record = (version: number, value: unknown) => ({ namespace: "prism.agent-run", key: "run_1", version, value });

describe("createSqliteCheckpointStore(path, options?)", () => {
  it("opens a file by path, and the older ({ path }) form reads the same file", async () => {
    const path = join(dir, "both.db");
    const a = createSqliteCheckpointStore(path, { synchronous: "normal", busyTimeoutMs: 1000 });
    await a.saveCheckpoint({ ...record(1, { step: "one" }) });
    const b = createSqliteCheckpointStore({ path });
    const loaded = await b.loadCheckpoint({ namespace: "prism.agent-run", key: "run_1" });
    expect(loaded?.value).toEqual({ step: "one" });
    expect(loaded?.version).toBe(1);
    a.close();
    b.close();
    const c = createSqliteCheckpointStore(path);
    expect((await c.loadCheckpoint({ namespace: "prism.agent-run", key: "run_1" }))?.value).toEqual({ step: "one" });
    c.close();
  });

  it("passes upstream's checkpoint store conformance kit with the (path) form", async () => {
    let n = 0;
    await assertCheckpointStoreConforms(() => createSqliteCheckpointStore(join(dir, `kit-${n++}.db`)));
  });

  it("applies options given beside the path (maxValueBytes)", async () => {
    const store = createSqliteCheckpointStore(join(dir, "small.db"), { maxValueBytes: 64 });
    await expect(store.saveCheckpoint(record(1, { text: "x".repeat(200) }))).rejects.toThrow();
    await store.saveCheckpoint(record(1, { text: "ok" }));
    store.close();
  });

  it("refuses bad arguments with ERR_PRISM_INVALID_OPTION and a message naming the factory", () => {
    const cases: [string, () => unknown][] = [
      ["no argument", () => (createSqliteCheckpointStore as any)()],
      ["a number", () => (createSqliteCheckpointStore as any)(42)],
      ["an empty path", () => createSqliteCheckpointStore("")],
      ["an empty path in options", () => createSqliteCheckpointStore({ path: "" })],
      ["options not an object", () => (createSqliteCheckpointStore as any)(join(dir, "x.db"), "full")],
      ["options an array", () => (createSqliteCheckpointStore as any)(join(dir, "x.db"), [])],
      ["two different paths", () => (createSqliteCheckpointStore as any)(join(dir, "x.db"), { path: join(dir, "y.db") })],
      ["options twice", () => (createSqliteCheckpointStore as any)({ path: join(dir, "x.db") }, {})],
      ["a bad synchronous", () => (createSqliteCheckpointStore as any)(join(dir, "x.db"), { synchronous: "off" })],
      ["a bad bound", () => createSqliteCheckpointStore(join(dir, "x.db"), { maxPageSize: 0 })],
    ];
    for (const [what, fn] of cases) {
      expect([what, codeOf(fn)]).toEqual([what, "ERR_PRISM_INVALID_OPTION"]);
    }
    expect(() => createSqliteCheckpointStore("")).toThrow('createSqliteCheckpointStore: path "" opens a private in-memory database');
    expect(() => (createSqliteCheckpointStore as any)({ path: 42 })).toThrow("createSqliteCheckpointStore: path must be a file path (a string)");
    expect(() => (createSqliteCheckpointStore as any)(join(dir, "x.db"), { path: join(dir, "y.db") })).toThrow(/given twice/);
  });
});
