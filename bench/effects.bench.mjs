// Effects and ledgers benchmark: cost of the store operations a dispatch adds per call (memory vs
// SQLite), and ledger append throughput (memory vs SQLite). Run after a release build:
//   npm run build && node bench/effects.bench.mjs
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";

const require = createRequire(import.meta.url);
const p = require("../index.js");

const dir = mkdtempSync(join(tmpdir(), "prism-effects-bench-"));
const identity = { tenantId: "t", principal: { kind: "service", id: "svc" }, scopes: ["tools:execute"], issuedAt: "2026-01-01T00:00:00.000Z", verified: true };
const args = { to: "customer-42", amount: 1250, currency: "EUR", memo: "invoice 2026-001" };

// One dispatch's effect work: hash + key + begin + markDispatched + complete.
function effectCall(store, i) {
  const argumentsHash = p.toolEffectArgumentsHash(args);
  const base = { identity, ownership: { tenantId: "t" }, sessionId: "s", runId: "r", toolCallId: `call-${i}`, toolName: "pay", argumentsHash };
  const key = { ...base, key: p.deriveToolEffectKey(base) };
  const { record } = store.begin(key);
  const d = store.markDispatched({ ...key, claimToken: record.claimToken, expectedVersion: record.version });
  store.complete({ ...key, claimToken: d.claimToken, expectedVersion: d.version, result: { toolCallId: `call-${i}`, name: "pay", value: { ok: true } } });
}

function keyOnly(i) {
  const argumentsHash = p.toolEffectArgumentsHash(args);
  return p.deriveToolEffectKey({ identity, ownership: { tenantId: "t" }, sessionId: "s", runId: "r", toolCallId: `call-${i}`, toolName: "pay", argumentsHash });
}

function time(n, fn) {
  for (let i = 0; i < Math.min(200, n); i++) fn(-1 - i); // warm-up
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) fn(i);
  return Number(process.hrtime.bigint() - t0) / n; // ns per call
}

const fmt = (ns) => (ns >= 1e6 ? `${(ns / 1e6).toFixed(2)} ms` : `${(ns / 1e3).toFixed(1)} µs`);
const results = [];

results.push(["hash + key derivation only", fmt(time(20_000, keyOnly))]);
const mem = p.createMemoryToolEffectStore();
results.push(["memory store: hash + key + begin + markDispatched + complete", fmt(time(20_000, (i) => effectCall(mem, i)))]);
let n = 0;
for (const synchronous of ["normal", "full"]) {
  const store = p.createSqliteToolEffectStore(join(dir, `effects-${++n}.db`), { synchronous });
  results.push([`SQLite store (synchronous=${synchronous}): same, 3 transactions`, fmt(time(synchronous === "full" ? 500 : 5_000, (i) => effectCall(store, i)))]);
  store.close();
}

const row = (i) => ({
  id: `row-${i}`, sessionId: "s", runId: "r", toolCallId: `call-${i >> 2}`, name: "pay", arguments: args,
  status: "finished", startedAt: "2026-01-01T00:00:00.000Z", finishedAt: "2026-01-01T00:00:01.000Z",
  result: { toolCallId: `call-${i >> 2}`, name: "pay", value: { ok: true } }, redacted: false,
});
function throughput(ledger, rows) {
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < rows; i++) ledger.appendToolCall(row(i));
  const appended = Number(process.hrtime.bigint() - t0);
  ledger.close();
  const total = Number(process.hrtime.bigint() - t0);
  return [Math.round(rows / (appended / 1e9)), Math.round(rows / (total / 1e9))];
}
const [memRate] = throughput(p.createMemoryRunLedger(), 200_000);
results.push(["memory ledger appends", `${memRate.toLocaleString("en")} rows/s`]);
const [sqlAppend, sqlCommitted] = throughput(p.createSqliteRunLedger(join(dir, "ledger.db")), 200_000);
results.push(["SQLite ledger appends (queued)", `${sqlAppend.toLocaleString("en")} rows/s`]);
results.push(["SQLite ledger appends until close() committed all", `${sqlCommitted.toLocaleString("en")} rows/s`]);

console.log(`node ${process.version}, ${process.platform}/${process.arch}`);
for (const [name, value] of results) console.log(`| ${name} | ${value} |`);
rmSync(dir, { recursive: true, force: true });
