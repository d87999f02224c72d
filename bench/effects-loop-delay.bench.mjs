// Event-loop delay while effectful calls run against each built-in store: 100 concurrent
// dispatchToolCall calls (claim, mark dispatched, complete) per batch, several batches, with
// `perf_hooks.monitorEventLoopDelay` sampling how long the JS thread could not serve anything else.
// A store whose writes run on the JS thread (SQLite's commits, each one BEGIN IMMEDIATE transaction
// with its fsync under synchronous "full") shows here as delay. Run after a release build:
//   npm run build && node bench/effects-loop-delay.bench.mjs [batches=20]
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";

const require = createRequire(import.meta.url);
const p = require("../index.js");

const batches = Number(process.argv[2] ?? 20);
const CONCURRENT = 100;
const dir = mkdtempSync(join(tmpdir(), "prism-effects-loop-"));
const identity = { tenantId: "t", principal: { kind: "service", id: "svc" }, scopes: ["tools:execute"], issuedAt: "2026-01-01T00:00:00.000Z", verified: true };
const tool = {
  name: "pay",
  effect: { kind: "external_mutation", idempotency: "required" },
  // A tool that waits on I/O, as a real side effect does: the loop is free while it waits.
  execute: async (args, ctx) => {
    await new Promise((r) => setImmediate(r));
    return { toolCallId: ctx.toolCallId, name: "pay", value: { charged: args.amount } };
  },
};
const registry = p.createToolRegistry([tool]);

const ms = (ns) => (ns / 1e6).toFixed(2);

async function measure(label, store) {
  let seq = 0;
  const batch = () =>
    Promise.all(
      Array.from({ length: CONCURRENT }, () => {
        const id = `call-${label}-${seq++}`;
        return p.dispatchToolCall({ call: { type: "tool_call", id, name: "pay", arguments: { amount: 5 } }, registry, context: { sessionId: "s", runId: "r", toolCallId: id }, effectStore: store, identity });
      }),
    );
  await batch(); // warm-up
  const h = monitorEventLoopDelay({ resolution: 1 });
  h.enable();
  const t0 = process.hrtime.bigint();
  for (let b = 0; b < batches; b++) {
    const results = await batch();
    if (results.some((r) => r.error)) throw new Error(`${label}: ${JSON.stringify(results.find((r) => r.error).error)}`);
  }
  const elapsed = Number(process.hrtime.bigint() - t0);
  h.disable();
  const calls = batches * CONCURRENT;
  console.log(
    `| ${label} | ${calls} | ${(calls / (elapsed / 1e9)).toFixed(0)} | ${ms(h.percentile(50))} | ${ms(h.percentile(99))} | ${ms(h.max)} |`,
  );
}

console.log(`# node ${process.version}, ${batches} batches of ${CONCURRENT} concurrent effectful calls`);
console.log("| store | calls | calls/s | loop delay p50 (ms) | p99 (ms) | max (ms) |");
console.log("| --- | --- | --- | --- | --- | --- |");
await measure("memory", p.createMemoryToolEffectStore());
for (const synchronous of ["full", "normal"]) {
  const s = p.createSqliteToolEffectStore(join(dir, `loop-${synchronous}.db`), { synchronous });
  await measure(`sqlite (synchronous ${synchronous})`, s);
  s.close();
}
rmSync(dir, { recursive: true, force: true });
