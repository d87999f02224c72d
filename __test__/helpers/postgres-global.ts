// The test run's PostgreSQL servers, started and stopped by the test runner itself (vitest
// `globalSetup`), so none outlives the run whatever happens to its workers.
//
// Without `PRISM_TEST_POSTGRES_URL`, and when the run includes a suite named for PostgreSQL, one
// server is started here (scripts/postgres-server.sh, 127.0.0.1 only) and its URL is provided to
// every worker (`inject("prismPostgresUrl")`). Every server of the run — this one and the private
// ones suites start to stop and restart (helpers/postgres.ts `startPostgres`) — lives in a data
// folder under one run folder (`inject("prismPostgresRoot")`), and the teardown stops each server
// found there and removes the folder.
import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    /** The run's shared server ("" when none was started: the run has no PostgreSQL suite). */
    prismPostgresUrl: string;
    /** The run folder every server of the run keeps its data under. */
    prismPostgresRoot: string;
  }
}

const script = join(__dirname, "..", "..", "scripts", "postgres-server.sh");

function server(cmd: "start" | "stop", dataDir: string, port?: number): string {
  const args = [script, cmd, dataDir, ...(port === undefined ? [] : [String(port)])];
  return execFileSync("bash", args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();
}

/** Stops every server whose data folder is under `root` (each at `root/<name>/data`). */
export function stopAll(root: string): void {
  if (!existsSync(root)) return;
  for (const name of readdirSync(root)) {
    const data = join(root, name, "data");
    if (!existsSync(join(data, "postmaster.pid"))) continue;
    try {
      server("stop", data);
    } catch (err) {
      console.error(`postgres-global: could not stop the server in ${data}: ${(err as Error).message}`);
    }
  }
}

async function runNeedsPostgres(project: TestProject): Promise<boolean> {
  try {
    const filters = (project.vitest as unknown as { filenamePattern?: string[] }).filenamePattern ?? [];
    const { testFiles } = await project.globTestFiles(filters);
    return testFiles.some((f) => /postgres/i.test(f));
  } catch {
    return true; // when the selection cannot be read, have the server ready
  }
}

export default async function setup(project: TestProject) {
  const root = mkdtempSync(join(tmpdir(), "prism-pg-run-"));
  chmodSync(root, 0o711); // the server's own user (when tests run as root) must reach its data
  project.provide("prismPostgresRoot", root);
  let url = process.env.PRISM_TEST_POSTGRES_URL ?? "";
  if (url === "" && (await runNeedsPostgres(project))) {
    const parent = join(root, "shared");
    url = server("start", join(parent, "data"), 20_000 + ((process.pid * 7 + 3) % 30_000));
  }
  project.provide("prismPostgresUrl", url);
  return () => {
    stopAll(root);
    rmSync(root, { recursive: true, force: true });
  };
}
