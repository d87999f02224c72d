// Development comparison (not a CI test: upstream is not on the npm registry): dispatch through this
// package with its native PostgreSQL store against upstream's `pg`-based store
// (@arnilo/prism-enterprise-postgres), same server, same dispatch, 1 / 16 / 256 calls in flight.
//   UPSTREAM=/path/to/built/upstream PRISM_TEST_POSTGRES_URL=postgres://… node scripts/postgres-vs-upstream.mjs
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const require = createRequire(import.meta.url);
const p = require("../index.js");
const { createPostgresToolEffectStore } = require("../postgres/index.js");
const upstream = process.env.UPSTREAM;
const url = process.env.PRISM_TEST_POSTGRES_URL;
if (!upstream || !url) throw new Error("set UPSTREAM and PRISM_TEST_POSTGRES_URL");
const pkg = join(upstream, "packages", "enterprise-postgres", "dist");
const { applyEnterpriseMigrations } = await import(pathToFileURL(join(pkg, "migrations.js")).href);
const { createPostgresToolEffectStore: upstreamStore } = await import(pathToFileURL(join(pkg, "tool-effects.js")).href);
const pg = createRequire(join(upstream, "package.json"))("pg");

const identity = { tenantId: "t", principal: { kind: "service", id: "svc" }, scopes: ["tools:execute"], issuedAt: "2026-01-01T00:00:00.000Z", verified: true };
const context = { sessionId: "s", runId: "r", toolCallId: "x" };
const tool = { name: "pay", effect: { kind: "external_mutation", idempotency: "required" }, execute: (a, c) => ({ toolCallId: c.toolCallId, name: "pay", value: { ok: true } }) };
const registry = p.createToolRegistry([tool]);
let seq = 0;

async function run(store, total, inFlight) {
  const prefix = `v${seq++}-`;
  let next = 0;
  const t0 = performance.now();
  async function worker() {
    while (next < total) {
      const id = prefix + next++;
      const r = await p.dispatchToolCall({ call: { type: "tool_call", id, name: "pay", arguments: {} }, registry, context, identity, effectStore: store });
      if (r.error) throw new Error(r.error.message);
    }
  }
  await Promise.all(Array.from({ length: inFlight }, worker));
  return Math.round(total / ((performance.now() - t0) / 1000));
}

const pool = new pg.Pool({ connectionString: url, max: 8 });
const schema = `up_${process.pid}`;
await applyEnterpriseMigrations(pool, schema);
const theirs = upstreamStore(pool, schema);
const ours = createPostgresToolEffectStore({ connectionString: url, schema: `native_${process.pid}`, maxConnections: 8 });
await ours.ready();
console.log("| in flight | native store (dispatches/s) | upstream pg store (dispatches/s) |\n| ---: | ---: | ---: |");
for (const inFlight of [1, 16, 256]) {
  const n = inFlight === 1 ? 500 : 2000;
  await run(ours, 100, inFlight);
  await run(theirs, 100, inFlight);
  const a = await run(ours, n, inFlight);
  const b = await run(theirs, n, inFlight);
  console.log(`| ${inFlight} | ${a} | ${b} |`);
}
await ours.close();
await pool.end();
