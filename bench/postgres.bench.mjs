// PostgreSQL effect store through dispatch: throughput and latency with 1, 16 and 256 dispatches in flight,
// against the memory and SQLite stores in the same run, plus PostgreSQL run-ledger append throughput.
// Needs a server: PRISM_TEST_POSTGRES_URL, or it starts a private one with scripts/postgres-server.sh.
//   npm run build && node bench/postgres.bench.mjs
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";

const require = createRequire(import.meta.url);
const p = require("../index.js");
const { createPostgresToolEffectStore, createPostgresRunLedger } = require("../postgres/index.js");

const dir = mkdtempSync(join(tmpdir(), "prism-pg-bench-"));
let url = process.env.PRISM_TEST_POSTGRES_URL;
let stopServer = () => {};
if (!url) {
  const script = new URL("../scripts/postgres-server.sh", import.meta.url).pathname;
  const data = join(dir, "data");
  url = execFileSync("bash", [script, "start", data, "55999"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
  stopServer = () => execFileSync("bash", [script, "stop", data], { stdio: "ignore" });
}

const identity = { tenantId: "t", principal: { kind: "service", id: "svc" }, scopes: ["tools:execute"], issuedAt: "2026-01-01T00:00:00.000Z", verified: true };
const context = { sessionId: "s", runId: "r", toolCallId: "x" };
const tool = {
  name: "pay",
  effect: { kind: "external_mutation", idempotency: "required" },
  execute: (args, ctx) => ({ toolCallId: ctx.toolCallId, name: "pay", value: { ok: true } }),
};
const registry = p.createToolRegistry([tool]);
let seq = 0;

/** Runs `total` dispatches with `inFlight` at once; returns calls/s and mean latency. */
async function run(store, total, inFlight) {
  const prefix = `b${seq++}-`;
  let next = 0;
  let latency = 0;
  const t0 = performance.now();
  async function worker() {
    while (next < total) {
      const id = prefix + next++;
      const s = performance.now();
      const r = await p.dispatchToolCall({ call: { type: "tool_call", id, name: "pay", arguments: { n: 1 } }, registry, context, identity, effectStore: store });
      latency += performance.now() - s;
      if (r.error) throw new Error(`dispatch failed: ${r.error.message}`);
    }
  }
  await Promise.all(Array.from({ length: inFlight }, worker));
  const seconds = (performance.now() - t0) / 1000;
  return { perSecond: total / seconds, latencyMs: latency / total };
}

const stores = [
  ["memory", () => p.createMemoryToolEffectStore(), 20_000],
  ["SQLite (synchronous=normal)", () => p.createSqliteToolEffectStore(join(dir, "fx.db"), { synchronous: "normal" }), 4_000],
  ["PostgreSQL (8 connections)", () => createPostgresToolEffectStore({ connectionString: url, schema: `bench_${process.pid}`, maxConnections: 8 }), 3_000],
];
const rows = [];
for (const inFlight of [1, 16, 256]) {
  for (const [label, make, total] of stores) {
    const store = make();
    await store.ready?.();
    await run(store, Math.min(200, total), inFlight); // warm-up
    const n = inFlight === 1 ? Math.ceil(total / 4) : total;
    const r = await run(store, n, inFlight);
    rows.push([label, inFlight, Math.round(r.perSecond), r.latencyMs.toFixed(3)]);
    await store.close?.();
  }
}

console.log("| store | in flight | dispatches/s | mean latency (ms) |\n| --- | ---: | ---: | ---: |");
for (const [label, inFlight, perSecond, latency] of rows) console.log(`| ${label} | ${inFlight} | ${perSecond} | ${latency} |`);

// Ledger append throughput: appends return at once; flush waits for the database.
const ledger = createPostgresRunLedger(url, `bench_ledger_${process.pid}`);
await ledger.ready();
const N = 50_000;
const t0 = performance.now();
for (let i = 0; i < N; i++) ledger.appendToolCall({ id: `row-${i}`, sessionId: "s", runId: "r", toolCallId: `c${i}`, name: "pay", status: "finished", startedAt: "2026-01-01T00:00:00.000Z", redacted: false });
const appended = performance.now() - t0;
await ledger.flush(120_000);
const committed = performance.now() - t0;
await ledger.close();
console.log(`\nPostgreSQL run ledger: ${N} appends in ${appended.toFixed(0)} ms on the JS thread; all committed after ${committed.toFixed(0)} ms (${Math.round(N / (committed / 1000))} rows/s)`);

stopServer();
rmSync(dir, { recursive: true, force: true });
