// Request building with tool definitions: this package's OpenAI-compatible and Anthropic request
// bodies (body + JSON text, what each turn sends) for 100 tools, against the serializer a user would
// otherwise write (a map to the wire shape, then JSON.stringify), in one process.
//
//   npm run build && node --expose-gc bench/providers-request.bench.mjs [--before DIR]
//
// `--before DIR`: a copy of an earlier tree (its lib/, index.js and binary) measured as a third lane,
// to show a change to the serializers costs nothing for tools without `strict`, `inputExamples` or
// `deferLoading`. Each figure is the median of `--rounds` (default 7) rounds of 2 000 bodies, lanes in
// rotating order; the spread is min–max of the rounds.
import { createRequire } from "node:module";
import { resolve } from "node:path";

const require = createRequire(import.meta.url);
const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : fallback;
};
const rounds = Number(arg("--rounds", "7"));
const before = arg("--before");
const N = 2000;

const tools = Array.from({ length: 100 }, (_, i) => ({
  name: `tool_${i}`,
  description: `Tool number ${i}: does one thing to a repository.`,
  parameters: { type: "object", properties: { owner: { type: "string" }, repo: { type: "string" }, n: { type: "integer" } }, required: ["owner", "repo"] },
  execute: () => "ok",
}));
const request = {
  model: { provider: "x", model: "m" },
  messages: [{ role: "user", content: [{ type: "text", text: "list the open issues" }] }],
  tools,
};

function lanes(root, label) {
  const oa = require(resolve(root, "lib/providers/openai-compatible.js"));
  const an = require(resolve(root, "lib/providers/anthropic.js"));
  return [
    [`${label} buildOpenAIChatBody`, () => JSON.stringify(oa.buildOpenAIChatBody(request)).length],
    [`${label} anthropicMessagesBody`, () => JSON.stringify(an.anthropicMessagesBody(request)).length],
  ];
}
const handWritten = [
  [
    "hand-written Chat Completions body",
    () =>
      JSON.stringify({
        model: "m",
        messages: [{ role: "user", content: "list the open issues" }],
        stream: true,
        tools: tools.map((t) => ({ type: "function", function: { name: t.name, description: t.description, parameters: t.parameters } })),
      }).length,
  ],
  [
    "hand-written Messages body",
    () =>
      JSON.stringify({
        model: "m",
        max_tokens: 4096,
        messages: [{ role: "user", content: [{ type: "text", text: "list the open issues" }] }],
        stream: true,
        tools: tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.parameters })),
      }).length,
  ],
];
const all = [...handWritten, ...lanes(resolve(import.meta.dirname, ".."), "this tree")];
if (before !== undefined) all.push(...lanes(resolve(before), "before"));

let sink = 0;
const times = new Map(all.map(([name]) => [name, []]));
for (let r = 0; r < rounds; r++) {
  for (let k = 0; k < all.length; k++) {
    const [name, fn] = all[(k + r) % all.length];
    globalThis.gc?.();
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < N; i++) sink += fn();
    times.get(name).push(Number(process.hrtime.bigint() - t0) / N / 1000);
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(`Node ${process.versions.node}, 100 tools, median of ${rounds} rounds of ${N} bodies, µs per body (min–max)`);
for (const [name, xs] of times) console.log(`${name.padEnd(40)} ${median(xs).toFixed(1).padStart(7)}  (${Math.min(...xs).toFixed(1)}–${Math.max(...xs).toFixed(1)})`);
if (sink === 0) console.log("");
