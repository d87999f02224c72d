// A real PostgreSQL server for the suites that need one. `PRISM_TEST_POSTGRES_URL` (set by .ci/run, or
// by a developer pointing at any server) is used as is; otherwise the run's shared server, started and
// stopped once by the test runner (helpers/postgres-global.ts, vitest `globalSetup`). A suite that
// stops and restarts a server starts a private one (scripts/postgres-server.sh: initdb into a
// temporary folder, 127.0.0.1 only) in the run's folder, so the runner's teardown stops it too.
// There is no skipping: a suite that cannot reach PostgreSQL fails.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { inject } from "vitest";

const script = join(__dirname, "..", "..", "scripts", "postgres-server.sh");

export interface PostgresServer {
  url: string;
  /** The data folder when this process started the server (then `restart` and `stop` work). */
  dataDir?: string;
  stop(): void;
  /** Stops the server and starts it again on the same port and data. */
  restart(): void;
  start(): void;
}

/** A free-enough port: spread by process id so parallel suites do not collide. */
function port(offset: number): number {
  return 20_000 + ((process.pid * 7 + offset) % 30_000);
}

/** Starts a private server (always: for tests that stop and restart it). */
export function startPostgres(offset = 0): PostgresServer {
  const root = provided("prismPostgresRoot");
  if (root) mkdirSync(root, { recursive: true });
  const parent = mkdtempSync(root ? join(root, "private-") : join(tmpdir(), "prism-pg-"));
  const dataDir = join(parent, "data");
  let p = String(port(offset));
  const run = (cmd: string) =>
    execFileSync("bash", [script, cmd, dataDir, p], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();
  // A port another server holds (another run's, left behind) is not this test's failure: the next.
  let url = "";
  for (let attempt = 0; ; attempt++) {
    try {
      url = run("start");
      break;
    } catch (e) {
      if (attempt >= 4 || !/Address already in use/.test(String((e as { stderr?: unknown }).stderr ?? e))) throw e;
      p = String(port(offset + 1 + attempt * 97));
    }
  }
  // The runner's teardown stops it (it lives in the run's folder); this is for runs without one.
  process.once("exit", () => {
    try {
      run("stop");
    } finally {
      rmSync(parent, { recursive: true, force: true });
    }
  });
  return {
    url,
    dataDir,
    start: () => void run("start"),
    stop: () => void run("stop"),
    restart() {
      run("stop");
      run("start");
    },
  };
}

/** What the runner's global setup provided, or undefined (a run without it). */
function provided(key: "prismPostgresUrl" | "prismPostgresRoot"): string | undefined {
  try {
    return inject(key) || undefined;
  } catch {
    return undefined;
  }
}

let fallback: PostgresServer | undefined;
/**
 * The shared server: `PRISM_TEST_POSTGRES_URL`, else the run's, else one private server for this
 * process, started on first use (a file whose name does not say "postgres" gets no run server).
 */
export function postgresUrl(): string {
  const given = process.env.PRISM_TEST_POSTGRES_URL;
  if (given) return given;
  const shared = provided("prismPostgresUrl");
  if (shared) return shared;
  fallback ??= startPostgres();
  return fallback.url;
}

let n = 0;
/** A schema no other test uses: every store under test starts from empty tables. */
export function freshSchema(label = "t"): string {
  n += 1;
  return `${label}_${process.pid}_${n}_${Date.now() % 100000}`.toLowerCase();
}
