// PostgreSQL run ledger append throughput, one run: 50 000 `appendToolCall` rows, then `flush`; prints
// rows/s from the first append to the flush. `URL=postgres://… node bench/postgres-ledger-append.bench.mjs`.
// To compare two builds, run it alternately with PRISM_TOOLS_NATIVE_LIBRARY_PATH=<a.node> and <b.node>
// (bench/RESULTS.md, "Keyed ledger rows").
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const { createPostgresRunLedger } = require("../postgres/index.js");
const url = process.env.URL ?? process.env.PRISM_TEST_POSTGRES_URL;
if (!url) throw new Error("set URL (or PRISM_TEST_POSTGRES_URL) to a PostgreSQL server");
const ledger = createPostgresRunLedger(url, `bench_append_${process.pid}`);
await ledger.ready();
const N = 50_000;
const t0 = performance.now();
for (let i = 0; i < N; i++) ledger.appendToolCall({ id: `row-${i}`, sessionId: "s", runId: "r", toolCallId: `c${i}`, name: "pay", status: "finished", startedAt: "2026-01-01T00:00:00.000Z", redacted: false });
await ledger.flush(120_000);
const ms = performance.now() - t0;
await ledger.close();
console.log(Math.round(N / (ms / 1000)));
