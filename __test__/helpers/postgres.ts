// A real PostgreSQL server for the suites that need one. `PRISM_TEST_POSTGRES_URL` (set by .ci/run, or
// by a developer pointing at any server) is used as is; otherwise the suite starts a private server with
// scripts/postgres-server.sh (initdb into a temporary folder, 127.0.0.1 only) and stops it afterwards.
// There is no skipping: a suite that cannot reach PostgreSQL fails.
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

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
  const parent = mkdtempSync(join(tmpdir(), "prism-pg-"));
  const dataDir = join(parent, "data");
  const p = String(port(offset));
  const run = (cmd: string) =>
    execFileSync("bash", [script, cmd, dataDir, p], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();
  const url = run("start");
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

/** The shared server: `PRISM_TEST_POSTGRES_URL`, or a private one started now. */
export function postgresUrl(): string {
  const given = process.env.PRISM_TEST_POSTGRES_URL;
  if (given) return given;
  return startPostgres().url;
}

let n = 0;
/** A schema no other test uses: every store under test starts from empty tables. */
export function freshSchema(label = "t"): string {
  n += 1;
  return `${label}_${process.pid}_${n}_${Date.now() % 100000}`.toLowerCase();
}
