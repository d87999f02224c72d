// The AI SDK adapter against what an AI SDK user writes without it, in one process: `generateText`
// with the AI SDK's own mock model, each step calling a tool 16 times in parallel.
//   plain   — `tool({ inputSchema: z.object(…), execute })`: the AI SDK validates with zod, no
//             redaction, no ledger.
//   adapter — `toAiSdkTools` over the same tool: JSON Schema validation, zod's parse (defaults),
//             secret redaction and a memory ledger row pair per call, all through createToolDispatcher.
// Prints µs per tool call (whole generateText run / calls), the median of rounds, per variant.
// Usage: node bench/adapters.bench.mjs [--rounds 7] [--runs 150]
import { generateText, stepCountIs, tool } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import * as z from "zod";
import { createMemoryRunLedger } from "../index.mjs";
import { toAiSdkTools } from "../ai-sdk/index.mjs";

const arg = (name, d) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) : d;
};
const ROUNDS = arg("--rounds", 7);
const RUNS = arg("--runs", 150);
const CALLS = 16;
const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } };
const calls = Array.from({ length: CALLS }, (_, i) => ({ type: "tool-call", toolCallId: `c${i}`, toolName: "lookup", input: JSON.stringify({ city: `city-${i}`, days: 3 }) }));
const turns = () => [
  { content: calls, finishReason: { unified: "tool-calls" }, usage, warnings: [] },
  { content: [{ type: "text", text: "ok" }], finishReason: { unified: "stop" }, usage, warnings: [] },
];
const schema = z.object({ city: z.string().min(1), days: z.number().int().min(1).max(14).default(3) });
const execute = async ({ city, days }) => ({ city, days, forecast: "sunny", token: "sk-bench-secret" });

const variants = {
  plain: () => ({ lookup: tool({ inputSchema: schema, execute }) }),
  adapter: () => toAiSdkTools({ lookup: tool({ inputSchema: schema, execute }) }, { secrets: ["sk-bench-secret"], ledger: createMemoryRunLedger() }),
};

async function once(make) {
  const tools = make();
  const t0 = performance.now();
  for (let i = 0; i < RUNS; i++) {
    await generateText({ model: new MockLanguageModelV4({ doGenerate: turns() }), tools, prompt: "weather", stopWhen: stepCountIs(3) });
  }
  return ((performance.now() - t0) * 1000) / (RUNS * CALLS);
}

const results = { plain: [], adapter: [] };
for (const name of Object.keys(variants)) await once(variants[name]); // warm-up
for (let r = 0; r < ROUNDS; r++) for (const name of Object.keys(variants)) results[name].push(await once(variants[name]));
const median = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
console.log(`node ${process.version}, ${ROUNDS} rounds × ${RUNS} generateText runs × ${CALLS} tool calls`);
for (const [name, xs] of Object.entries(results)) {
  console.log(`${name.padEnd(8)} median ${median(xs).toFixed(1)} µs/call  (min ${Math.min(...xs).toFixed(1)}, max ${Math.max(...xs).toFixed(1)})`);
}
console.log(`adapter / plain: ${(median(results.adapter) / median(results.plain)).toFixed(2)}`);
