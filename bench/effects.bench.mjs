// Effects and ledgers benchmark: cost of the store operations a dispatch adds per call (memory vs
// SQLite), directly and through dispatchToolCall, and ledger append throughput (memory vs SQLite). Run after a release build:
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
async function effectCall(store, i) {
  const argumentsHash = p.toolEffectArgumentsHash(args);
  const base = { identity, ownership: { tenantId: "t" }, sessionId: "s", runId: "r", toolCallId: `call-${i}`, toolName: "pay", argumentsHash };
  const key = { ...base, key: p.deriveToolEffectKey(base) };
  const { record } = await store.begin(key);
  const d = await store.markDispatched({ ...key, claimToken: record.claimToken, expectedVersion: record.version });
  await store.complete({ ...key, claimToken: d.claimToken, expectedVersion: d.version, result: { toolCallId: `call-${i}`, name: "pay", value: { ok: true } } });
}

function keyOnly(i) {
  const argumentsHash = p.toolEffectArgumentsHash(args);
  return p.deriveToolEffectKey({ identity, ownership: { tenantId: "t" }, sessionId: "s", runId: "r", toolCallId: `call-${i}`, toolName: "pay", argumentsHash });
}

// The stores answer with promises (their contract); a synchronous fn is timed without an await.
async function time(n, fn) {
  for (let i = 0; i < Math.min(200, n); i++) {
    const r = fn(-1 - i); // warm-up
    if (r instanceof Promise) await r;
  }
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) {
    const r = fn(i);
    if (r instanceof Promise) await r;
  }
  return Number(process.hrtime.bigint() - t0) / n; // ns per call
}

const fmt = (ns) => (ns >= 1e6 ? `${(ns / 1e6).toFixed(2)} ms` : `${(ns / 1e3).toFixed(1)} µs`);
const results = [];

results.push(["hash + key derivation only", fmt(await time(20_000, keyOnly))]);
const mem = p.createMemoryToolEffectStore();
results.push(["memory store: hash + key + begin + markDispatched + complete", fmt(await time(20_000, (i) => effectCall(mem, i)))]);
let n = 0;
for (const synchronous of ["normal", "full"]) {
  const store = p.createSqliteToolEffectStore(join(dir, `effects-${++n}.db`), { synchronous });
  results.push([`SQLite store (synchronous=${synchronous}): same, 3 transactions`, fmt(await time(synchronous === "full" ? 500 : 5_000, (i) => effectCall(store, i)))]);
  store.close();
}

// Dispatch overhead added per call by an effect store: the same tool (`effect: external_mutation /
// optional`, so without a store it runs unclaimed) dispatched with and without `effectStore`, each call a
// new toolCallId (a repeated id would replay). Rounds alternate between the variants; medians reported.
const tool = {
  name: "pay",
  effect: { kind: "external_mutation", idempotency: "optional" },
  execute: (a, ctx) => ({ toolCallId: ctx.toolCallId, name: "pay", value: { ok: true, amount: a.amount } }),
};
const plainTool = { name: "pay", execute: tool.execute };
const registry = p.createToolRegistry([tool]);
const plainRegistry = p.createToolRegistry([plainTool]);
const context = { sessionId: "s", runId: "r", toolCallId: "x" };
let callNo = 0;
async function dispatchTime(n, options) {
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) {
    const id = `d-${++callNo}`;
    const r = await p.dispatchToolCall({ ...options, call: { type: "tool_call", id, name: "pay", arguments: args }, context });
    if (r.error) throw new Error(JSON.stringify(r.error));
  }
  return Number(process.hrtime.bigint() - t0) / n;
}
const sqlNormal = p.createSqliteToolEffectStore(join(dir, "dispatch-normal.db"), { synchronous: "normal" });
const sqlFull = p.createSqliteToolEffectStore(join(dir, "dispatch-full.db"));
const variants = [
  ["no effect declaration, no identity", 5_000, { registry: plainRegistry }],
  ["declared effect + identity, no effectStore (key derived, no claim)", 5_000, { registry, identity }],
  ["+ memory store", 5_000, { registry, identity, effectStore: p.createMemoryToolEffectStore() }],
  ["+ SQLite store (synchronous=normal)", 1_000, { registry, identity, effectStore: sqlNormal }],
  ["+ SQLite store (synchronous=full, default)", 150, { registry, identity, effectStore: sqlFull }],
];
const samples = variants.map(() => []);
for (const [, n, options] of variants) await dispatchTime(Math.min(n, 200), options); // warm-up
for (let round = 0; round < 5; round++) {
  for (let v = 0; v < variants.length; v++) samples[v].push(await dispatchTime(variants[v][1], variants[v][2]));
}
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const medians = samples.map(median);
const dispatchResults = variants.map(([name], v) => [name, fmt(medians[v]), v >= 2 ? `+${fmt(medians[v] - medians[1])}` : v === 1 ? `+${fmt(medians[1] - medians[0])}` : ""]);
sqlNormal.close();
sqlFull.close();

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
console.log("\ndispatchToolCall per call (median of 5 rounds) | per call | added");
for (const [name, value, added] of dispatchResults) console.log(`| ${name} | ${value} | ${added} |`);
rmSync(dir, { recursive: true, force: true });
