// The package's smoke suite for Bun and Deno (scripts/runtime-smoke.sh runs it in a project that installed
// the tarballs and in one that installed this checkout as a folder): every subpath of package.json's
// "exports" through import and require, dispatch, argument validation, tool search, an agent run with a
// tool over the mock provider, textStream, an effect store, SQLite (a run ledger and a checkpoint store),
// and the OpenTelemetry subpath. Prints one line per check and a closing
// "<runtime> (<install>): N passed, N failed"; exits 1 when a check failed.
import { createRequire } from "node:module";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as prism from "prism-tools-native";
import { createInMemoryTelemetry, createOpenTelemetryInstrumentation } from "prism-tools-native/opentelemetry";

const {
  createAgent,
  createJsonSchemaToolArgumentValidator,
  createMemoryToolEffectStore,
  createMockProvider,
  createSqliteCheckpointStore,
  createSqliteRunLedger,
  createToolRegistry,
  createToolSearchIndex,
  deriveToolEffectKey,
  dispatchToolCall,
  nativeVersion,
  providerDone,
  providerTextDelta,
  providerToolCall,
  toolCallContent,
  toolEffectArgumentsHash,
} = prism;

const runtime = typeof globalThis.Bun !== "undefined" ? `bun ${globalThis.Bun.version}` : typeof globalThis.Deno !== "undefined" ? `deno ${globalThis.Deno.version.deno}` : `node ${process.version}`;
const install = process.env.SMOKE_INSTALL ?? "unknown install";
const require = createRequire(import.meta.url);
const dir = mkdtempSync(join(tmpdir(), "prism-runtime-smoke-"));
const checks = [];
const check = (name, fn) => checks.push([name, fn]);
function equal(actual, expected, what) {
  const a = JSON.stringify(actual);
  const e = JSON.stringify(expected);
  if (a !== e) throw new Error(`${what}: expected ${e}, got ${a}`);
}

const add = {
  name: "add",
  description: "Add two numbers",
  parameters: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"], additionalProperties: false },
  execute: (args, ctx) => ({ toolCallId: ctx.toolCallId, name: "add", value: { sum: args.a + args.b } }),
};
const context = (id) => ({ sessionId: "s1", runId: "r1", toolCallId: id });

check("every subpath loads through import and require, with the same objects", async () => {
  const subpaths = Object.keys(require("prism-tools-native/package.json").exports).filter((k) => k !== "./package.json");
  if (subpaths.length < 10) throw new Error(`only ${subpaths.length} subpaths in exports`);
  for (const subpath of subpaths) {
    const specifier = `prism-tools-native${subpath.slice(1)}`;
    const esm = await import(specifier);
    const cjs = require(specifier);
    const names = Object.keys(esm).filter((k) => k !== "default");
    if (names.length === 0) throw new Error(`${specifier}: import gave no named exports`);
    const differ = names.filter((k) => esm[k] !== cjs[k]);
    const missing = Object.keys(cjs).filter((k) => !(k in esm));
    if (differ.length > 0 || missing.length > 0) throw new Error(`${specifier}: import and require differ on ${[...differ, ...missing].join(", ")}`);
  }
});

check("the native addon loads", () => {
  if (typeof nativeVersion() !== "string") throw new Error("nativeVersion() is not a string");
});

check("dispatch: a call runs its tool and emits started, finished", async () => {
  const events = [];
  const result = await dispatchToolCall({ call: toolCallContent("c1", "add", { a: 2, b: 3 }), registry: createToolRegistry([add]), context: context("c1"), emit: (e) => events.push(e) });
  equal(result.value, { sum: 5 }, "result");
  equal(events.map((e) => [e.type, e.toolName]), [["tool_execution_started", "add"], ["tool_execution_finished", "add"]], "events");
});

check("validation: bad arguments are blocked before the tool runs", async () => {
  let ran = false;
  const tool = { ...add, execute: (...a) => ((ran = true), add.execute(...a)) };
  const validate = createJsonSchemaToolArgumentValidator();
  const message = validate(add, { a: "two" });
  if (typeof message !== "string" || !message.includes("/b")) throw new Error(`validator said ${JSON.stringify(message)}`);
  const result = await dispatchToolCall({ call: toolCallContent("c2", "add", { a: "two" }), registry: createToolRegistry([tool]), context: context("c2"), validate });
  if (!result.error) throw new Error("no error for bad arguments");
  if (ran) throw new Error("the tool ran");
});

check("search: the index ranks the matching tool first", () => {
  const tools = [
    add,
    { name: "send_email", description: "Send an email message to a recipient", parameters: { type: "object", properties: {} } },
    { name: "create_issue", description: "Open a new issue in a repository", parameters: { type: "object", properties: {} } },
  ];
  const hits = createToolSearchIndex(tools).search("email a recipient", { k: 2 });
  equal(hits[0].name, "send_email", "top hit");
});

check("agent: a run calls a tool over the mock provider and finishes; textStream gives the text", async () => {
  const provider = createMockProvider([
    [providerToolCall(toolCallContent("c3", "add", { a: 20, b: 22 })), providerDone()],
    [providerTextDelta("The sum "), providerTextDelta("is 42."), providerDone()],
  ]);
  const session = createAgent({ model: { provider: "mock", model: "smoke" }, provider, tools: [add] }).createSession();
  let text = "";
  for await (const chunk of session.stream("add 20 and 22").textStream) text += chunk;
  equal(text, "The sum is 42.", "text");
  const toolMessage = session.messages().find((m) => m.role === "tool");
  if (!toolMessage || !JSON.stringify(toolMessage).includes("42")) throw new Error("no tool result in the transcript");
});

check("effect store (memory): a repeated call is replayed, the side effect runs once", async () => {
  const identity = { tenantId: "t1", userId: "u1", principal: { kind: "user", id: "u1" }, scopes: ["pay"], issuedAt: new Date().toISOString(), verified: true };
  let charges = 0;
  const pay = {
    name: "pay",
    effect: { kind: "external_mutation", idempotency: "required" },
    execute: (args, ctx) => ((charges += 1), { toolCallId: ctx.toolCallId, name: "pay", value: { charged: args.amount } }),
  };
  const options = { call: toolCallContent("c4", "pay", { amount: 7 }), registry: createToolRegistry([pay]), context: context("c4"), identity, effectStore: createMemoryToolEffectStore() };
  const first = await dispatchToolCall(options);
  const again = await dispatchToolCall(options);
  equal([first.value, again.value, charges], [{ charged: 7 }, { charged: 7 }, 1], "replay");
  const key = deriveToolEffectKey({ identity, ownership: { tenantId: "t1", userId: "u1" }, sessionId: "s1", runId: "r1", toolCallId: "c4", toolName: "pay", argumentsHash: toolEffectArgumentsHash({ amount: 7 }) });
  if (typeof key !== "string" || key.length === 0) throw new Error("no effect key");
});

check("SQLite: a run ledger file keeps its rows across close and reopen", () => {
  const path = join(dir, "ledger.db");
  const ledger = createSqliteRunLedger(path);
  ledger.appendToolCall({ id: "row-1", sessionId: "s1", runId: "r1", toolCallId: "c1", name: "add", arguments: { a: 1 }, status: "started", startedAt: new Date().toISOString(), redacted: false });
  ledger.close();
  const reopened = createSqliteRunLedger(path);
  equal(reopened.list().map((r) => r.id), ["row-1"], "rows");
  reopened.close();
});

check("SQLite: a checkpoint store saves and loads across two handles", async () => {
  const path = join(dir, "checkpoints.db");
  const a = createSqliteCheckpointStore(path);
  await a.saveCheckpoint({ namespace: "smoke", key: "k1", version: 1, value: { step: 1 } });
  const b = createSqliteCheckpointStore(path);
  const loaded = await b.loadCheckpoint({ namespace: "smoke", key: "k1" });
  equal([loaded?.version, loaded?.value], [1, { step: 1 }], "checkpoint");
  a.close();
  b.close();
});

check("opentelemetry: a run's spans nest under invoke_agent prism", async () => {
  const memory = createInMemoryTelemetry();
  const telemetry = createOpenTelemetryInstrumentation({ tracer: memory.tracer, meter: memory.meter });
  const session = createAgent({ model: { provider: "mock", model: "smoke" }, provider: createMockProvider([providerTextDelta("hi"), providerDone()]) }).createSession();
  const detach = telemetry.attachSession(session);
  const reading = (async () => {
    for await (const _ of session.subscribe());
  })();
  await session.run("hi");
  await reading;
  detach();
  const root = memory.spans.find((s) => s.name === "invoke_agent prism");
  const chat = memory.spans.find((s) => s.name === "chat smoke");
  if (!root || !chat || chat.parentSpanId !== root.spanId) throw new Error(`spans: ${JSON.stringify(memory.spans.map((s) => s.name))}`);
});

check("CommonJS require gives the same objects as import", () => {
  const cjs = require("prism-tools-native");
  if (cjs.dispatchToolCall !== dispatchToolCall || cjs.createAgent !== createAgent) throw new Error("require and import differ");
});

let passed = 0;
let failed = 0;
for (const [name, fn] of checks) {
  try {
    await fn();
    passed += 1;
    console.log(`ok - ${name}`);
  } catch (error) {
    failed += 1;
    console.log(`not ok - ${name}: ${error?.stack ?? error}`);
  }
}
rmSync(dir, { recursive: true, force: true });
console.log(`# ${runtime}`);
console.log(`${runtime.split(" ")[0]} (${install}): ${passed} passed, ${failed} failed`);
if (failed > 0) process.exit(1);
