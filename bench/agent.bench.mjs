// Agent loop benchmark: what the runtime adds per provider turn, and many sessions at once.
//
//   npm run build && node --expose-gc bench/agent.bench.mjs
//
// 1. Per-turn overhead. 1 000 registered tools, a scripted provider returning 8 tool calls a turn
//    (8 rounds, then an answer), tools that return at once. Measured side by side in this process:
//    the whole run per turn, the provider alone (iterating the same events), and the tools alone
//    (calling the same execute functions). Overhead = run − provider − tools: assemble, narrow,
//    disclose, hash, dispatch (lookup, filters, events, results), transcript.
// 2. 10 000 concurrent sessions, each running one tool round (a call, then the answer) on a
//    shared agent with 20 tools: wall time, runs/s and peak RSS.
//
// With `--upstream <path to @arnilo/prism's dist/index.js>` (see ../shared/peer-bench/README.md for
// the build) the first workload also runs on `@arnilo/prism`'s own createAgent, in the same process,
// with the same tools and the same scripted provider, interleaved with this package's runs.
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import { resolve } from "node:path";

const require = createRequire(import.meta.url);
const p = require("../index.js");
const upstreamArg = process.argv.indexOf("--upstream");
const upstream = upstreamArg > 0 ? await import(pathToFileURL(resolve(process.argv[upstreamArg + 1])).href) : undefined;

// One list of events per provider turn; the same object drives both implementations.
function scripted(turns) {
  let turn = 0;
  return {
    id: "scripted",
    async *generate() {
      for (const e of turns[turn++] ?? [p.providerDone()]) yield e;
    },
  };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const us = (ns) => `${(ns / 1e3).toFixed(1)} µs`;

function makeTools(n) {
  return Array.from({ length: n }, (_, i) => ({
    name: `tool_${i}`,
    description: `Tool number ${i} works on ${["issues", "pulls", "files", "users"][i % 4]} of a repository`,
    parameters: { type: "object", properties: { q: { type: "string" } } },
    execute: (args, ctx) => ({ toolCallId: ctx.toolCallId, name: `tool_${i}`, value: args }),
  }));
}

const ROUNDS = 8;
const CALLS = 8;
function script() {
  const turns = [];
  for (let r = 0; r < ROUNDS; r++) {
    const events = [p.providerTextDelta("working ")];
    for (let c = 0; c < CALLS; c++) events.push(p.providerToolCall(p.toolCallContent(`r${r}c${c}`, `tool_${(r * 37 + c * 101) % 1000}`, { q: "x" })));
    events.push(p.providerDone({ inputTokens: 100, outputTokens: 10 }));
    turns.push(events);
  }
  turns.push([p.providerTextDelta("done"), p.providerDone()]);
  return turns;
}

// Both loops cap a run at 32 tool calls by default; this workload makes 64, so each run raises it.
async function perTurn(label, config, runOptions = {}, api = p) {
  const tools = makeTools(1000);
  const turns = script();
  const samples = { run: [], provider: [], tools: [] };
  for (let i = 0; i < 60; i++) {
    const provider = scripted(turns);
    const agent = api.createAgent({ model: { provider: "scripted", model: "m" }, provider, tools, ...config });
    let t = process.hrtime.bigint();
    const result = await agent.createSession().run("find issues in files", { limits: { maxToolRounds: ROUNDS, maxToolCalls: ROUNDS * CALLS }, ...runOptions });
    const run = Number(process.hrtime.bigint() - t);
    if (result.status !== "succeeded") throw new Error(JSON.stringify(result.error));
    // The provider alone: the same events through a fresh scripted provider.
    const alone = scripted(turns);
    t = process.hrtime.bigint();
    for (let turn = 0; turn <= ROUNDS; turn++) for await (const e of alone.generate({ messages: [], tools })) void e;
    const prov = Number(process.hrtime.bigint() - t);
    // The tools alone.
    t = process.hrtime.bigint();
    for (let r = 0; r < ROUNDS; r++)
      for (let c = 0; c < CALLS; c++) await tools[(r * 37 + c * 101) % 1000].execute({ q: "x" }, { toolCallId: "x", sessionId: "s", runId: "r" });
    const tl = Number(process.hrtime.bigint() - t);
    if (i >= 10) {
      samples.run.push(run / (ROUNDS + 1));
      samples.provider.push(prov / (ROUNDS + 1));
      samples.tools.push(tl / (ROUNDS + 1));
    }
  }
  const run = median(samples.run), prov = median(samples.provider), tl = median(samples.tools);
  return { label, run, prov, tl, overhead: run - prov - tl };
}

async function concurrent(n, api = p) {
  let executed = 0;
  const tools = makeTools(20).map((tool) => ({ ...tool, execute: (args, ctx) => (executed++, tool.execute(args, ctx)) }));
  const provider = {
    id: "scripted",
    // A call until the tool's result is in, then the answer. (Keyed on the last message, not on the
    // message count: a request also carries system messages, and counting them let one side skip the
    // tool round.)
    async *generate(request) {
      if (request.messages.at(-1).role !== "tool") yield p.providerToolCall(p.toolCallContent("c1", "tool_3", { q: "x" }));
      else yield p.providerTextDelta("done");
      yield p.providerDone({ inputTokens: 10 });
    },
  };
  const agent = api.createAgent({ model: { provider: "scripted", model: "m" }, provider, tools });
  globalThis.gc?.();
  const before = process.memoryUsage().rss;
  // The batch's own growth: JS heap + external memory sampled while it runs, less before it (RSS
  // is not returned between batches, and maxRSS is the process's).
  const live = () => { const m = process.memoryUsage(); return m.heapUsed + m.external; };
  const base = live();
  let peakRss = base;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, live())), 5);
  const t = process.hrtime.bigint();
  const results = await Promise.all(Array.from({ length: n }, (_, i) => agent.createSession({ id: `s${i}` }).run("go")));
  const ms = Number(process.hrtime.bigint() - t) / 1e6;
  clearInterval(sampler);
  peakRss = Math.max(peakRss, live());
  const ok = results.filter((r) => r.status === "succeeded" && r.text === "done").length;
  // Every session ran its tool round (a provider turn that skipped the call would also end in "done").
  if (executed !== n) throw new Error(`${executed} tool calls ran for ${n} sessions`);
  const peak = process.resourceUsage().maxRSS / 1024;
  return { n, ok, ms, perSec: (n / ms) * 1000, before: before / 2 ** 20, peak, growth: (peakRss - base) / 2 ** 20 };
}

const rows = [];
if (upstream) {
  // Interleaved so that machine load drifts hit both alike.
  const a = [];
  const b = [];
  for (let k = 0; k < 3; k++) {
    a.push(await perTurn("all tools disclosed", {}));
    b.push(await perTurn("@arnilo/prism createAgent, all tools", {}, {}, upstream));
  }
  const mid = (xs) => xs.sort((x, y) => x.run - y.run)[1];
  rows.push(mid(a), mid(b));
} else rows.push(await perTurn("all tools disclosed", {}));
rows.push(await perTurn("narrowing (keep 500) + allow filter", { toolNarrowing: ({ toolIds }) => toolIds.slice(0, 500) }));
rows.push(await perTurn("search disclosure (top 16)", { toolsDisclosure: "search" }));
rows.push(await perTurn("toolConcurrency 8", { loop: { toolConcurrency: 8 } }));

console.log(`Per provider turn, 1 000 tools, ${CALLS} calls a turn (${ROUNDS} rounds + answer; medians of 50 runs)\n`);
console.log("| loop | whole turn | provider | tools | runtime overhead | overhead per call |");
console.log("| --- | --- | --- | --- | --- | --- |");
for (const r of rows) console.log(`| ${r.label} | ${us(r.run)} | ${us(r.prov)} | ${us(r.tl)} | ${us(r.overhead)} | ${us((r.overhead * (ROUNDS + 1)) / ROUNDS / CALLS)} |`);

const c = await concurrent(10_000);
console.log(`\n10 000 concurrent sessions, one tool round each (2 provider turns, 1 call), 20 tools:`);
console.log(`  ${c.ok} succeeded in ${c.ms.toFixed(0)} ms → ${c.perSec.toFixed(0)} runs/s; RSS before ${c.before.toFixed(0)} MiB, peak ${c.peak.toFixed(0)} MiB`);

if (upstream) {
  // The same 10 000 sessions on @arnilo/prism's createAgent, interleaved with this package's, three
  // batches each; medians. Memory is each batch's heap + external growth while it runs.
  const mine = [];
  const theirs = [];
  for (let k = 0; k < 3; k++) {
    mine.push(await concurrent(10_000));
    theirs.push(await concurrent(10_000, upstream));
  }
  const mid = (xs, f) => xs.map(f).sort((x, y) => x - y)[1];
  const ms = [mid(mine, (r) => r.ms), mid(theirs, (r) => r.ms)];
  const mem = [mid(mine, (r) => r.growth), mid(theirs, (r) => r.growth)];
  const okAll = [mine, theirs].map((rs) => rs.every((r) => r.ok === 10_000));
  console.log(`\n10 000 concurrent sessions, interleaved with @arnilo/prism (3 batches each, medians):`);
  console.log("| loop | all succeeded | wall time | runs/s | heap + external growth while running |");
  console.log("| --- | --- | --- | --- | --- |");
  console.log(`| prism-tools-native | ${okAll[0]} | ${ms[0].toFixed(0)} ms | ${(10_000_000 / ms[0]).toFixed(0)} | ${mem[0].toFixed(0)} MiB |`);
  console.log(`| @arnilo/prism createAgent | ${okAll[1]} | ${ms[1].toFixed(0)} ms | ${(10_000_000 / ms[1]).toFixed(0)} | ${mem[1].toFixed(0)} MiB |`);
  console.log(`  speed-up ${(ms[1] / ms[0]).toFixed(2)}×, memory ${(mem[0] / mem[1]).toFixed(2)}× of upstream's`);
}
