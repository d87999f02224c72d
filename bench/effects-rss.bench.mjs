// Memory per effect record: RSS growth per completed effectful dispatch (claim, mark dispatched,
// complete) with the memory store, after forced garbage collections. Another implementation of the
// same API (e.g. @arnilo/prism's built dist/index.js) may be named to compare. Run after a release build:
//   npm run build && node --expose-gc bench/effects-rss.bench.mjs [records=200000] [path/to/index.js]
import { pathToFileURL } from "node:url";

const N = Number(process.argv[2] ?? 200_000);
const impl = process.argv[3] ? pathToFileURL(process.argv[3]).href : new URL("../index.mjs", import.meta.url).href;
const api = await import(impl);
if (typeof globalThis.gc !== "function") throw new Error("run with node --expose-gc");
const identity = { tenantId: "t1", userId: "u1", principal: { kind: "user", id: "p1" }, scopes: ["payments.write"], issuedAt: new Date().toISOString(), verified: true };
const ownership = { tenantId: "t1", userId: "u1" };
const tool = { name: "pay", effect: { kind: "external_mutation", idempotency: "optional" }, execute: (args, c) => ({ toolCallId: c.toolCallId, name: "pay", value: { charged: args.amount } }) };
const registry = api.createToolRegistry([tool]);
const store = api.createMemoryToolEffectStore();
const run = async (from, to) => {
  for (let i = from; i < to; i++) {
    const id = `pay_${i}`;
    await api.dispatchToolCall({ call: { type: "tool_call", id, name: "pay", arguments: { amount: 5 } }, registry, context: { sessionId: "s1", runId: "r1", toolCallId: id }, effectStore: store, identity, ownership });
  }
};
const settle = async () => {
  gc();
  await new Promise((r) => setTimeout(r, 200)); // finalizers
  gc();
};
await run(0, 2000);
await settle();
const before = process.memoryUsage().rss;
await run(2000, 2000 + N);
await settle();
const perRecord = (process.memoryUsage().rss - before) / N;
console.log(`${process.version} ${impl}: ${N} records, ${perRecord.toFixed(0)} bytes of RSS per record`);
