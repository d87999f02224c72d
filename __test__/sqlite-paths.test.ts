// The three durable SQLite factories judge their path alike: a private in-memory database ("" and
// ":memory:", which keep nothing another process or the next run can read) and a path SQLite cannot
// open as a database are the caller's option, refused with ERR_PRISM_INVALID_OPTION and a message
// that names the factory, the option and the path.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createSqliteCheckpointStore, createSqliteRunLedger, createSqliteToolEffectStore } from "../index.mjs";

const dir = mkdtempSync(join(tmpdir(), "prism-sqlite-paths-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const factories: [string, (path: string) => { close(): unknown }][] = [
  ["createSqliteCheckpointStore", (path) => createSqliteCheckpointStore(path)],
  ["createSqliteRunLedger", (path) => createSqliteRunLedger(path)],
  ["createSqliteToolEffectStore", (path) => createSqliteToolEffectStore(path)],
];

function thrown(fn: () => unknown): any {
  try {
    const made: any = fn();
    made?.close?.();
  } catch (error) {
    return error;
  }
  return undefined;
}

describe.each(factories)("%s", (factory, open) => {
  it.each(["", ":memory:", "file::memory:"])("refuses the private in-memory path %j", (path) => {
    const error = thrown(() => open(path));
    expect(error, path).toBeInstanceOf(TypeError);
    expect(error.code).toBe("ERR_PRISM_INVALID_OPTION");
    expect(error.message).toContain(`${factory}: path ${JSON.stringify(path)} opens a private in-memory database`);
  });

  it("refuses a path SQLite cannot open: a missing directory, a directory, a file that is not a database", () => {
    const junk = join(dir, `${factory}-junk.txt`);
    writeFileSync(junk, "x".repeat(4096));
    for (const path of [join(dir, "no-such-dir", "x.db"), dir, junk]) {
      const error = thrown(() => open(path));
      expect(error?.code, path).toBe("ERR_PRISM_INVALID_OPTION");
      expect(error.message, path).toContain(`${factory}: path ${JSON.stringify(path)} cannot be opened as a SQLite database`);
    }
  });

  it("opens a file path", () => {
    const store = open(join(dir, `${factory}.db`));
    store.close();
  });
});
