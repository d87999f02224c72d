// Tool search benchmark: recall and speed of the native BM25-lite index against minisearch, the
// JS full-text library a user would otherwise pick, in one process on the same data.
//
//   npm run build && node bench/search.bench.mjs
//
// Recall: BFCL tool retrieval (919 tools, 1 150 queries), the GitHub MCP set (117 tools, 75
// hand-written queries) and MetaTool (199 plugins, 2 062 queries); a query counts at k when all its
// expected names are in the top k. Each set is split as crates/core/src/search/eval.rs splits it: queries at
// even positions are the tuning half, odd positions the held-out half. Two more rows use a host's
// embedding ranking of each query (all-MiniLM-L6-v2, `fixtures/minilm-rankings.json`): alone, and
// fused with the native lexical ranking through `search(query, { ranking })`.
// Speed: 1 024 tools (the 919 BFCL tools + the first 105 GitHub tools), the BFCL queries, k = 16;
// each figure is a median of per-call times measured with process.hrtime including the JS call.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import MiniSearch from "minisearch";

const require = createRequire(import.meta.url);
const native = require("../index.js");
const fixture = (name) => JSON.parse(readFileSync(new URL(`../fixtures/${name}`, import.meta.url), "utf8"));

const bfcl = fixture("bfcl-tool-retrieval.json");
const github = fixture("github-mcp-tools.json");
const held = fixture("github-mcp-queries.json");
const metatool = fixture("metatool-tool-retrieval.json");
const tools = [...bfcl.catalog, ...github.slice(0, 1024 - bfcl.catalog.length)];
// The first build of the process, before anything else: JS not yet optimized, no stem cached.
const t0 = process.hrtime.bigint();
native.createToolSearchIndex(tools);
const buildCold = Number(process.hrtime.bigint() - t0);
const half = (queries, heldOut) => queries.map((q, i) => ({ ...q, i })).filter((q) => q.i % 2 === (heldOut ? 1 : 0));
// A host's embedding ranking per query (all-MiniLM-L6-v2, fixtures/README.md): catalog positions, best first.
const minilm = fixture("minilm-rankings.json").rankings;

// minisearch as a user would configure it: name and description, name boosted ×3.
function miniDefault(tools) {
  const ms = new MiniSearch({ fields: ["name", "description"], idField: "id", searchOptions: { boost: { name: 3 } } });
  ms.addAll(tools.map((t, i) => ({ id: i, name: t.name, description: t.description ?? "" })));
  return { search: (q, k) => ms.search(q).slice(0, k).map((r) => tools[r.id].name) };
}

// minisearch given the same advantages: identifier splitting and parameter text as a weak field.
const splitIdentifiers = (text) =>
  text
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/([A-Z])([A-Z][a-z])/g, "$1 $2")
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean);
const parameterText = (t) =>
  Object.entries(t.parameters?.properties ?? {})
    .map(([k, v]) => `${k} ${v?.description ?? ""}`)
    .join(" ");
function miniTuned(tools) {
  const ms = new MiniSearch({
    fields: ["name", "description", "params"],
    idField: "id",
    tokenize: splitIdentifiers,
    searchOptions: { boost: { name: 3, params: 0.3 }, tokenize: splitIdentifiers },
  });
  ms.addAll(tools.map((t, i) => ({ id: i, name: t.name, description: t.description ?? "", params: parameterText(t) })));
  return { search: (q, k) => ms.search(q).slice(0, k).map((r) => tools[r.id].name) };
}

function nativeEngine(tools) {
  const index = native.createToolSearchIndex(tools);
  return { search: (q, k) => index.search(q, { k }).map((h) => h.name) };
}

// The embedding ranking alone, and fused with the lexical one through the hybrid seam.
const rankingOf = (tools, set, i) => minilm[set][i].map((p) => tools[p].name);
function embeddingAlone(tools, set) {
  return { search: (q, k, i) => rankingOf(tools, set, i).slice(0, k) };
}
function nativeHybrid(tools, set) {
  const index = native.createToolSearchIndex(tools);
  return { search: (q, k, i) => index.search(q, { k, ranking: rankingOf(tools, set, i) }).map((h) => h.name) };
}

function recall(engine, queries) {
  const ks = [1, 5, 16];
  const hits = [0, 0, 0];
  for (const { query, expected, i } of queries) {
    const names = engine.search(query, 16, i);
    ks.forEach((k, i) => {
      const top = names.slice(0, k);
      if (expected.every((e) => top.includes(e))) hits[i]++;
    });
  }
  return hits.map((h) => (h / queries.length).toFixed(3));
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[s.length >> 1];
};
const fmt = (ns) => (ns >= 1e6 ? `${(ns / 1e6).toFixed(2)} ms` : `${(ns / 1e3).toFixed(2)} µs`);
function timeEach(fn, items, rounds) {
  const times = [];
  for (let r = 0; r < rounds; r++) {
    for (const it of items) {
      const t0 = process.hrtime.bigint();
      fn(it);
      times.push(Number(process.hrtime.bigint() - t0));
    }
  }
  return median(times);
}

console.log(`# Tool search benchmark (node ${process.version}, ${process.arch})\n`);
console.log("## Recall (a query counts at k when all expected names are in the top k)\n");
console.log("r@1 / r@5 / r@16 on the tuning half, then on the held-out half.\n");
console.log("| engine | BFCL tuning | BFCL held-out | GitHub tuning | GitHub held-out | MetaTool tuning | MetaTool held-out |");
console.log("| --- | --- | --- | --- | --- | --- | --- |");
for (const [label, make] of [
  ["prism-tools-native", nativeEngine],
  ["minisearch (name ×3, description)", miniDefault],
  ["minisearch + identifier split + parameters ×0.3", miniTuned],
  ["a host's embeddings alone (all-MiniLM-L6-v2)", embeddingAlone],
  ["prism-tools-native + those embeddings (`search(q, { ranking })`)", nativeHybrid],
]) {
  const cells = [];
  for (const [catalog, queries, set] of [
    [bfcl.catalog, bfcl.queries, "bfcl"],
    [github, held.queries, "github"],
    [metatool.catalog, metatool.queries, "metatool"],
  ]) {
    const engine = make(catalog, set);
    for (const heldOut of [false, true]) cells.push(recall(engine, half(queries, heldOut)).join(" / "));
  }
  console.log(`| ${label} | ${cells.join(" | ")} |`);
}

const queries = bfcl.queries.map((q) => q.query);
const K = 16;

const idx = native.createToolSearchIndex(tools);
// Warm up both engines before timing.
const msd = miniDefault(tools);
const mst = miniTuned(tools);
for (let i = 0; i < 3; i++) for (const q of queries) (idx.search(q, { k: K }), msd.search(q, K), mst.search(q, K));

const buildNative = timeEach(() => native.createToolSearchIndex(tools), Array(20).fill(0), 3);
// The same builds with an event-loop turn after each, as an agent makes them: finalizers of old
// indexes run on turns, so their memory is reused instead of freshly mapped.
const buildTimes = [];
for (let i = 0; i < 60; i++) {
  const t0 = process.hrtime.bigint();
  native.createToolSearchIndex(tools);
  buildTimes.push(Number(process.hrtime.bigint() - t0));
  await new Promise((resolve) => setImmediate(resolve));
}
const buildNativeTurns = median(buildTimes);
const buildMini = timeEach(() => miniDefault(tools), Array(5).fill(0), 2);
const buildMiniTuned = timeEach(() => miniTuned(tools), Array(5).fill(0), 2);
const qNative = timeEach((q) => idx.search(q, { k: K }), queries, 5);
// Fusing a host ranking of 32 names (BFCL's MiniLM ranking of each query; the same 919 tools lead the list).
const withRanking = queries.map((q, i) => [q, rankingOf(bfcl.catalog, "bfcl", i)]);
const qHybrid = timeEach(([q, ranking]) => idx.search(q, { k: K, ranking }), withRanking, 5);
const qMini = timeEach((q) => msd.search(q, K), queries, 2);
const qMiniTuned = timeEach((q) => mst.search(q, K), queries, 2);
const searchTools = native.createSearchToolsTool(idx);
const qTool = timeEach((q) => searchTools.execute({ query: q, k: 8 }, { toolCallId: "c" }), queries, 3);
const withTool = [...tools.slice(0, 1023), searchTools];
const idx1024 = native.createToolSearchIndex(withTool);
const qSelect = timeEach((q) => native.selectDisclosedTools({ tools: withTool, input: q, index: idx1024 }), queries, 3);
const qSelectBuild = timeEach((q) => native.selectDisclosedTools({ tools: withTool, input: q }), queries.slice(0, 100), 1);

console.log(`\n## Speed: ${tools.length} tools, ${queries.length} BFCL queries, k = ${K} (medians, including the JS call)\n`);
console.log("| operation | prism-tools-native | minisearch | minisearch + split + parameters | native speed-up (vs each) |");
console.log("| --- | --- | --- | --- | --- |");
console.log(
  `| build the index | ${fmt(buildNative)} | ${fmt(buildMini)} | ${fmt(buildMiniTuned)} | ${(buildMini / buildNative).toFixed(0)}× / ${(buildMiniTuned / buildNative).toFixed(0)}× |`,
);
console.log(
  `| one query, top ${K} | ${fmt(qNative)} | ${fmt(qMini)} | ${fmt(qMiniTuned)} | ${(qMini / qNative).toFixed(0)}× / ${(qMiniTuned / qNative).toFixed(0)}× |`,
);
console.log(`\nOther native calls on the same data (medians):\n`);
console.log(`- the first build of the process (one sample: JS not optimized yet, no stem cached): ${fmt(buildCold)}`);
console.log(`- building the index with an event-loop turn after each build (the table's row runs them back to back): ${fmt(buildNativeTurns)}`);
console.log(`- \`search_tools.execute({ query, k: 8 })\` (lines + names): ${fmt(qTool)}`);
console.log(`- \`index.search(query, { k: 16, ranking })\` with a host ranking of 32 names (the hybrid seam): ${fmt(qHybrid)}`);
console.log(`- \`selectDisclosedTools\` with a prebuilt index (1 024 tools, topK 16): ${fmt(qSelect)}`);
console.log(`- \`selectDisclosedTools\` building its own index each call: ${fmt(qSelectBuild)}`);
