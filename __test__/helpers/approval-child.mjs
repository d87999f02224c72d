// Child process for the durable-approval proofs (docs/agent.md "Approval and durable runs"). Usage:
//   node approval-child.mjs suspend <dir>
//       runs the agent until it suspends before `charge`; prints { runId, sessionId, version, approvalId }.
//   node approval-child.mjs resume <dir> <runId> <sessionId> <version> [point]
//       approves and resumes the run in this fresh process; prints { status, text, row } (`row`: the
//       tool row the next provider request carried) or { error: { name, code, message } }.
//       With <point> (`before-effect` / `after-effect`) the tool prints "<point>" and blocks its only
//       thread there until the parent kills it with SIGKILL.
// <dir> holds checkpoints.db (SQLite checkpoint store), effects.db (SQLite effect store) and
// side-effects.txt: the tool's side effect is one line "<toolCallId>" appended to it. With
// PRISM_CHILD_POSTGRES_URL and PRISM_CHILD_POSTGRES_SCHEMA set, both stores are PostgreSQL instead
// (workers that share a database, not a disk).
import { createRequire } from "node:module";
import { appendFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { serviceIdentity } from "./service-identity.mjs";

const require = createRequire(import.meta.url);
const {
  createAgent,
  createMockProvider,
  createSqliteCheckpointStore,
  createSqliteToolEffectStore,
  providerDone,
  providerTextDelta,
  providerToolCall,
  resumeAgentRun,
  toolCallContent,
} = require("../../index.js");

const identity = serviceIdentity;

function park(point) {
  writeSync(1, `${point}\n`);
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
}

const [mode, dir, runId, sessionId, version, point] = process.argv.slice(2);
const file = join(dir, "side-effects.txt");
const pg = process.env.PRISM_CHILD_POSTGRES_URL
  ? { connectionString: process.env.PRISM_CHILD_POSTGRES_URL, schema: process.env.PRISM_CHILD_POSTGRES_SCHEMA }
  : undefined;
const postgres = pg ? require("../../postgres/index.js") : undefined;
const checkpoints = pg ? postgres.createPostgresCheckpointStore(pg) : createSqliteCheckpointStore({ path: join(dir, "checkpoints.db") });
const effectStore = pg ? postgres.createPostgresToolEffectStore(pg) : createSqliteToolEffectStore(join(dir, "effects.db"));
const charge = {
  name: "charge",
  parameters: { type: "object", properties: { amount: { type: "number" } }, required: ["amount"] },
  effect: { kind: "external_mutation", idempotency: "required" },
  needsApproval: true,
  execute(args, ctx) {
    if (point === "before-effect") park(point);
    appendFileSync(file, `${ctx.toolCallId}\n`);
    if (point === "after-effect") park(point);
    return { toolCallId: ctx.toolCallId, name: "charge", value: { charged: args.amount } };
  },
};
const requests = [];
// Each process scripts only the provider turns it will make: the first asks for the charge, the
// resumed one answers after seeing the result.
const script = mode === "suspend" ? [[providerToolCall(toolCallContent("call-1", "charge", { amount: 5 })), providerDone()]] : [[providerTextDelta("charged"), providerDone()]];
const agent = createAgent({
  id: "billing",
  model: { provider: "mock", model: "demo" },
  provider: createMockProvider(script, { onRequest: (r) => void requests.push(r) }),
  tools: [charge],
  effectStore,
  identity,
  ownership: { tenantId: "tenant" },
});
const runState = { checkpoints, definitionRevision: "2026-12-01" };

if (mode === "suspend") {
  const r = await agent.createSession().run("charge 5", { runState });
  process.stdout.write(JSON.stringify({ status: r.status, runId: r.runId, sessionId: r.sessionId, version: r.runState.version, approvalId: r.interruption.pendingDecisions[0].approvalId }));
} else if (mode === "resume") {
  try {
    const r = await resumeAgentRun(agent, { runId, sessionId }, { decision: "approve", expectedVersion: Number(version) }, runState);
    const row = requests[0]?.messages.flatMap((m) => (m.role === "tool" ? m.content : [])).find((b) => b.type === "tool_result");
    process.stdout.write(JSON.stringify({ status: r.status, text: r.text, row }));
  } catch (err) {
    process.stdout.write(JSON.stringify({ error: { name: err.name, code: err.code, message: err.message } }));
  }
} else {
  writeSync(2, `unknown mode ${mode}\n`);
  process.exit(2);
}
await checkpoints.close();
await effectStore.close?.();
