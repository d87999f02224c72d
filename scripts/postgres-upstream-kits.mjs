// Development check (not CI: upstream is not on the npm registry): upstream's own conformance kits —
// tool-effect-store and run-ledger (with reopen and tenant isolation) — against the PostgreSQL store and
// ledger of this package, unchanged.
//   UPSTREAM=/path/to/built/upstream PRISM_TEST_POSTGRES_URL=postgres://… node scripts/postgres-upstream-kits.mjs
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const require = createRequire(import.meta.url);
const { createPostgresToolEffectStore, createPostgresRunLedger } = require("../postgres/index.js");
const upstream = process.env.UPSTREAM;
const url = process.env.PRISM_TEST_POSTGRES_URL;
if (!upstream || !url) throw new Error("set UPSTREAM and PRISM_TEST_POSTGRES_URL");
const kit = (name) => import(pathToFileURL(join(upstream, "dist", "testing", name)).href);

const { runToolEffectStoreConformance } = await kit("tool-effect-store-conformance.js");
let n = 0;
const stores = [];
await runToolEffectStoreConformance(() => {
  const s = createPostgresToolEffectStore({ connectionString: url, schema: `upkit_${process.pid}_${n++}` });
  stores.push(s);
  return s;
});
await Promise.all(stores.map((s) => s.close()));
console.log("upstream tool-effect-store conformance: passed");

const { runRunLedgerConformance } = await kit("run-ledger-conformance.js");
const schema = `upledger_${process.pid}`;
const ledgers = [];
await runRunLedgerConformance(
  () => {
    const ledger = createPostgresRunLedger(url, schema);
    ledgers.push(ledger);
    const read = (kind) => async () => {
      await ledger.flush();
      return ledger.list(kind);
    };
    return { ledger, readRuns: read("run"), readEvents: read("event"), readToolCalls: read("tool_call"), readUsage: read("usage") };
  },
  { exerciseReopen: true, exerciseTenantIsolation: true },
);
await Promise.all(ledgers.map((l) => l.close()));
console.log("upstream run-ledger conformance (reopen, tenant isolation): passed");
