// Checkpoint store benchmark: what a durable run pays per step to save its state and read it back.
//
//   npm run build && node bench/checkpoints.bench.mjs [--upstream <@arnilo/prism's dist/index.js>]
//
// One step = saveCheckpoint (compare-and-swap on the version, a ~2 KB run-state value) then
// loadCheckpoint of the same key, over 1 000 run keys in turn. Measured side by side in this
// process, interleaved: the memory store, the SQLite store (synchronous "normal", a temporary file),
// and with --upstream, `@arnilo/prism`'s own memory store (a JS Map).
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const require = createRequire(import.meta.url);
const p = require("../index.js");
const upstreamArg = process.argv.indexOf("--upstream");
const upstream = upstreamArg > 0 ? await import(pathToFileURL(resolve(process.argv[upstreamArg + 1])).href) : undefined;

const KEYS = 1000;
const STEPS = 20_000;
const ROUNDS = 5;
// A run state of the size a short agent run checkpoints: a transcript of a few turns.
const state = {
  status: "suspended",
  transcript: Array.from({ length: 12 }, (_, i) => ({ role: i % 2 ? "assistant" : "user", content: [{ type: "text", text: `turn ${i} `.repeat(16) }] })),
  pending: [{ toolCallId: "c1", name: "pay", arguments: { amount: 5 } }],
};

const dir = mkdtempSync(join(tmpdir(), "prism-ckpt-bench-"));
const lanes = [
  ["native memory", () => p.createMemoryCheckpointStore()],
  ["native SQLite", () => p.createSqliteCheckpointStore(join(dir, `b-${Math.random()}.db`), { synchronous: "normal" })],
];
if (upstream) lanes.push(["@arnilo/prism memory", () => upstream.createMemoryCheckpointStore()]);

async function pass(make) {
  const store = make();
  const versions = new Array(KEYS).fill(0);
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < STEPS; i++) {
    const k = i % KEYS;
    const key = { namespace: "prism.agent-run", key: `run-${k}`, tenantId: "t" };
    await store.saveCheckpoint({ ...key, version: versions[k] + 1, expectedVersion: versions[k], value: state });
    versions[k] += 1;
    if ((await store.loadCheckpoint(key)).version !== versions[k]) throw new Error("the store lost a save");
  }
  const ns = Number(process.hrtime.bigint() - t0);
  store.close?.();
  return ns / STEPS;
}

const results = new Map(lanes.map(([name]) => [name, []]));
for (let r = 0; r < ROUNDS; r++) for (const [name, make] of lanes) results.get(name).push(await pass(make));
rmSync(dir, { recursive: true, force: true });

console.log(`checkpoint save + load, ${STEPS} steps over ${KEYS} keys, ~${JSON.stringify(state).length} B values (Node ${process.version})`);
for (const [name, xs] of results) {
  const sorted = [...xs].sort((a, b) => a - b);
  console.log(`  ${name.padEnd(22)} median ${(sorted[sorted.length >> 1] / 1e3).toFixed(2)} µs/step   min ${(sorted[0] / 1e3).toFixed(2)} µs`);
}
