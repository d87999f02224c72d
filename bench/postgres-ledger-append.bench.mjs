// PostgreSQL run ledger append throughput, one run: 50 000 `appendToolCall` rows, then `flush`; prints
// rows/s from the first append to the flush. `URL=postgres://… node bench/postgres-ledger-append.bench.mjs`;
// without URL (or PRISM_TEST_POSTGRES_URL) it starts a private server with scripts/postgres-server.sh.
// To compare two builds, run it alternately with PRISM_TOOLS_NATIVE_LIBRARY_PATH=<a.node> and <b.node>
// (bench/RESULTS.md, "Keyed ledger rows").
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";

const require = createRequire(import.meta.url);
const { createPostgresRunLedger } = require("../postgres/index.js");
let url = process.env.URL ?? process.env.PRISM_TEST_POSTGRES_URL;
let stopServer = () => {};
if (!url) {
  const script = new URL("../scripts/postgres-server.sh", import.meta.url).pathname;
  const data = join(mkdtempSync(join(tmpdir(), "prism-pg-append-")), "data");
  url = execFileSync("bash", [script, "start", data, "55998"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
  stopServer = () => {
    execFileSync("bash", [script, "stop", data], { stdio: "ignore" });
    rmSync(join(data, ".."), { recursive: true, force: true });
  };
}
const ledger = createPostgresRunLedger(url, `bench_append_${process.pid}`);
await ledger.ready();
const N = 50_000;
const t0 = performance.now();
for (let i = 0; i < N; i++) ledger.appendToolCall({ id: `row-${i}`, sessionId: "s", runId: "r", toolCallId: `c${i}`, name: "pay", status: "finished", startedAt: "2026-01-01T00:00:00.000Z", redacted: false });
await ledger.flush(120_000);
const ms = performance.now() - t0;
await ledger.close();
console.log(`PostgreSQL run ledger: ${Math.round(N / (ms / 1000))} rows/s (${N} appends, then flush)`);
stopServer();
