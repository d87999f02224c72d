// Hybrid tool search benchmark: the shipped embedding model (all-MiniLM-L6-v2 in the embeddings addon)
// fused with the lexical index, against the lexical index alone, in one process on the same data.
//
//   npm run build && npm run build:embeddings && bash scripts/build-model-package.sh
//   node bench/search-hybrid.bench.mjs [--quick]
//
// Recall: BFCL (919 tools, 1 150 queries), GitHub MCP (117 tools, 75 requests) and MetaTool (199
// plugins, 2 062 requests); a query counts at k when all its expected names are in the top k; each
// set whole and by halves (even positions: tuning, odd: held-out), as bench/search.bench.mjs splits.
// Speed: index build for 100 and 1 000 tools with a fresh ranker (cold: every tool through the
// model) and with a fresh ranker over a warm disk cache (a restart); hybrid and lexical query latency
// (medians of per-call times); the event loop's longest stall during the cold 1 000-tool build; the
// process's RSS growth and the index's memoryBytes; a lexical index over 10 000 tools (`maxTools`), and
// with `--big` a hybrid one (8 765 more texts through the model). `--quick` skips MetaTool;
// `--recall` runs only the recall table (all three sets); `--speed` only the timings.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";

const require = createRequire(import.meta.url);
const native = require("../index.js");
const { createEmbeddingRanker } = require("../embeddings/index.js");
const fixture = (name) => JSON.parse(readFileSync(new URL(`../fixtures/${name}`, import.meta.url), "utf8"));
const quick = process.argv.includes("--quick");
const recallOnly = process.argv.includes("--recall");
const speedOnly = process.argv.includes("--speed");
const modelDir = process.env.PRISM_TOOLS_MINILM_PATH || new URL("../models/minilm", import.meta.url).pathname;

const bfcl = fixture("bfcl-tool-retrieval.json");
const github = fixture("github-mcp-tools.json");
const held = fixture("github-mcp-queries.json");
const metatool = fixture("metatool-tool-retrieval.json");
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];
const f3 = (x) => x.toFixed(3);

async function recall(name, tools, queries, ranker) {
  const hybrid = native.createToolSearchIndex(tools, { embeddings: ranker });
  await hybrid.ready();
  const ks = [1, 5, 16];
  const kinds = ["lexical", "hybrid", "score"];
  const count = Object.fromEntries(kinds.map((k) => [k, { all: [0, 0, 0], tune: [0, 0, 0], held: [0, 0, 0] }]));
  const times = [];
  for (let i = 0; i < queries.length; i++) {
    const q = queries[i];
    const lex = hybrid.lexical.search(q.query, { k: 16 }).map((h) => h.name);
    const t = performance.now();
    const hyb = (await hybrid.search(q.query, { k: 16 })).map((h) => h.name);
    times.push(performance.now() - t);
    const score = (await hybrid.search(q.query, { k: 16, fusion: "score" })).map((h) => h.name);
    for (const [kind, list] of [["lexical", lex], ["hybrid", hyb], ["score", score]]) {
      ks.forEach((k, j) => {
        if (q.expected.every((n) => list.slice(0, k).includes(n))) {
          count[kind].all[j]++;
          count[kind][i % 2 === 0 ? "tune" : "held"][j]++;
        }
      });
    }
  }
  const n = { all: queries.length, tune: Math.ceil(queries.length / 2), held: Math.floor(queries.length / 2) };
  for (const kind of kinds) {
    const row = ["all", "tune", "held"].map((part) => count[kind][part].map((c) => f3(c / n[part])).join(" / ")).join(" | ");
    const label = { lexical: "lexical", hybrid: "hybrid (RRF, default)", score: "hybrid (fusion: score)" }[kind];
    console.log(`| ${name} | ${label} | ${row} |`);
  }
  return times;
}

async function build(tools, ranker, label) {
  const before = process.memoryUsage().rss;
  const h = monitorEventLoopDelay({ resolution: 1 });
  h.enable();
  const t = performance.now();
  const index = native.createToolSearchIndex(tools, { embeddings: ranker, maxTools: tools.length });
  await index.ready();
  const ms = performance.now() - t;
  h.disable();
  if (index.mode !== "hybrid") throw index.embeddingError;
  const rss = (process.memoryUsage().rss - before) / 1e6;
  console.log(
    `${label}: ${tools.length} tools in ${ms.toFixed(0)} ms; event-loop delay max ${(h.max / 1e6).toFixed(1)} ms, ` +
      `p99 ${(h.percentile(99) / 1e6).toFixed(1)} ms; memoryBytes ${(index.memoryBytes / 1e6).toFixed(2)} MB; RSS +${rss.toFixed(0)} MB`,
  );
  return index;
}

const loadStart = performance.now();
const ranker = await createEmbeddingRanker({ modelDir });
console.log(`model load: ${(performance.now() - loadStart).toFixed(0)} ms (checksums included)`);

if (!speedOnly) {
  console.log("\n| set | ranking | all r@1 / r@5 / r@16 | tuning half | held-out half |\n| --- | --- | --- | --- | --- |");
  const times = [];
  times.push(...(await recall("BFCL", bfcl.catalog, bfcl.queries, ranker)));
  times.push(...(await recall("GitHub MCP", github, held.queries, ranker)));
  if (!quick) times.push(...(await recall("MetaTool", metatool.catalog, metatool.queries, ranker)));
  console.log(`\nhybrid query (embed + cosine + fusion, awaited): median ${median(times).toFixed(1)} ms, p90 ${pct(times, 0.9).toFixed(1)} ms over ${times.length} queries`);
}
if (recallOnly) process.exit(0);

// Builds: cold (a fresh ranker, no cache) and a restart (a fresh ranker over the disk cache).
const pool = [...bfcl.catalog, ...metatool.catalog, ...github];
const cacheDir = mkdtempSync(join(tmpdir(), "prism-hybrid-bench-"));
try {
  for (const n of [100, 1000]) {
    const tools = pool.slice(0, n);
    await build(tools, await createEmbeddingRanker({ modelDir, cacheDir }), `cold build`);
    await build(tools, await createEmbeddingRanker({ modelDir, cacheDir }), `from the disk cache`);
  }
} finally {
  rmSync(cacheDir, { recursive: true, force: true });
}

// 10 000 tools: the 1 235 real ones, then renamed copies (names and descriptions made distinct).
{
  const big = [];
  for (let i = 0; big.length < 10000; i++) {
    const t = pool[i % pool.length];
    const round = Math.floor(i / pool.length);
    big.push(round === 0 ? t : { ...t, name: `${t.name}_v${round}`, description: `${t.description ?? ""} (variant ${round})` });
  }
  const t = performance.now();
  const lexical = native.createToolSearchIndex(big, { maxTools: 10000 });
  const buildMs = performance.now() - t;
  const lex = [];
  for (const q of bfcl.queries) {
    const s = process.hrtime.bigint();
    lexical.search(q.query, { k: 16 });
    lex.push(Number(process.hrtime.bigint() - s) / 1e3);
  }
  console.log(`\n10 000 tools, lexical: build ${buildMs.toFixed(1)} ms, query median ${median(lex).toFixed(1)} µs, p99 ${pct(lex, 0.99).toFixed(1)} µs, memoryBytes ${(lexical.memoryBytes / 1e6).toFixed(1)} MB`);
  if (!process.argv.includes("--big")) process.exit(0)
  const hybrid = await build(big, ranker, "10 000 tools, hybrid build (the 1 235 real tools cached)");
  const hq = [];
  for (const q of bfcl.queries.slice(0, 200)) {
    const s = performance.now();
    await hybrid.search(q.query, { k: 16 });
    hq.push(performance.now() - s);
  }
  console.log(`10 000 tools, hybrid query: median ${median(hq).toFixed(1)} ms, p90 ${pct(hq, 0.9).toFixed(1)} ms over ${hq.length} queries`);
}
