// Child process for the crash and race proofs through `dispatchToolCall` (issue 6). Usage:
//   node dispatch-child.mjs crash <db> <sideEffectFile> <point>
//       dispatch one `charge` call against the SQLite effect store and stop at <point>: the process
//       prints "<point>" on stdout and blocks its only thread until the parent kills it (SIGKILL).
//       Points: after-claim (begin committed), after-dispatched (markDispatched committed),
//       during-execute (inside execute, after the side effect), after-execute (execute returned,
//       before complete), after-complete (complete committed, before dispatch returns).
//       PRISM_TEST_CLOCK_SKEW_MS in the environment moves the store's clock forward.
//   node dispatch-child.mjs run <db> <sideEffectFile> [clockSkewMs]
//       a fresh process redispatching the same call; prints { result, executed } as JSON.
//       clockSkewMs moves the store's clock forward (to pass a claim's lease without waiting).
//   node dispatch-child.mjs race <db> <sideEffectFile> <keys> <out.json>
//       prints "ready", waits for a line on stdin, then dispatches calls race-0 … race-<keys-1>
//       (one key each) and writes how each ended to <out.json>.
// <db> is a SQLite file path, or `postgres://…#<schema>` for the PostgreSQL store.
//   race also takes [concurrency] [trials]: dispatches in flight at once (default 1) and rounds over
//   fresh call ids race-<trial>-<i> (default 1; with one trial the ids are race-<i>).
// The tool's side effect is one appended line "<toolCallId>\n" in <sideEffectFile>.
import { createRequire } from "node:module";
import { appendFileSync, writeFileSync, writeSync } from "node:fs";
import { serviceIdentity } from "./service-identity.mjs";

const require = createRequire(import.meta.url);
const { createSqliteToolEffectStore, createToolRegistry, dispatchToolCall } = require("../../index.js");
const { createPostgresToolEffectStore } = require("../../postgres/index.js");

/** The store named by <db>: a SQLite file, or `postgres://…#schema`. */
function openStore(db, options = {}) {
  if (!db.startsWith("postgres://")) return createSqliteToolEffectStore(db, options);
  const [connectionString, schema] = db.split("#");
  return createPostgresToolEffectStore({ connectionString, schema, ...(options.now ? { now: options.now } : {}) });
}

/** Runs `f` once `r` (a value or a promise) has settled, and passes `r` on. */
const after = (r, f) => (r && typeof r.then === "function" ? r.then((v) => (f(), v)) : (f(), r));

const identity = serviceIdentity;
const context = { sessionId: "session", runId: "run", toolCallId: "ignored" };
const call = (id) => ({ type: "tool_call", id, name: "charge", arguments: { amount: 5 } });

/** Tells the parent where we are, then blocks the thread (no event-loop turn) until killed. */
function park(point) {
  writeSync(1, `${point}\n`);
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
}

function chargeTool(file, hooks = {}) {
  const executed = [];
  const seen = new Set();
  const tool = {
    name: "charge",
    parameters: { type: "object", properties: { amount: { type: "number" } } },
    effect: { kind: "external_mutation", idempotency: "required" },
    async execute(args, ctx) {
      executed.push(ctx.toolCallId);
      seen.add(ctx.toolCallId);
      appendFileSync(file, `${ctx.toolCallId}\n`);
      hooks.afterSideEffect?.();
      return { toolCallId: ctx.toolCallId, name: "charge", value: { charged: args.amount } };
    },
  };
  return { tool, executed, seen };
}

/** The SQLite store with a stop after the store call named by `point`, and a 60 s claim lease. */
function instrumented(store, point) {
  const forward = (m) => (input) => store[m](input);
  return {
    get: forward("get"),
    begin(input) {
      return after(store.begin({ ...input, claimTtlMs: 60_000 }), () => point === "after-claim" && park(point));
    },
    markDispatched(input) {
      return after(store.markDispatched(input), () => point === "after-dispatched" && park(point));
    },
    complete(input) {
      if (point === "after-execute") park(point);
      return after(store.complete(input), () => point === "after-complete" && park(point));
    },
    fail: forward("fail"),
    markUnknown: forward("markUnknown"),
    resolveUnknown: forward("resolveUnknown"),
    cleanup: forward("cleanup"),
  };
}

const [mode, db, file, a, b] = process.argv.slice(2);

if (mode === "crash") {
  const point = a;
  // PRISM_TEST_CLOCK_SKEW_MS moves the store's clock forward, as `run`'s clockSkewMs does.
  const skew = Number(process.env.PRISM_TEST_CLOCK_SKEW_MS ?? 0);
  const store = instrumented(openStore(db, skew ? { now: () => Date.now() + skew } : {}), point);
  const { tool } = chargeTool(file, { afterSideEffect: () => point === "during-execute" && park(point) });
  await dispatchToolCall({ call: call("crash"), registry: createToolRegistry([tool]), context, identity, effectStore: store });
  writeSync(2, `dispatch returned without stopping at ${point}\n`);
  process.exit(3);
} else if (mode === "run") {
  const skew = Number(a ?? 0);
  const store = openStore(db, skew ? { now: () => Date.now() + skew } : {});
  const { tool, executed } = chargeTool(file);
  const result = await dispatchToolCall({ call: call("crash"), registry: createToolRegistry([tool]), context, identity, effectStore: store });
  await store.close();
  process.stdout.write(JSON.stringify({ result, executed: executed.length }));
} else if (mode === "race") {
  const [keys, out] = [Number(a), b];
  const [concurrency, trials] = [Number(process.argv[7] ?? 1), Number(process.argv[8] ?? 1)];
  const store = openStore(db, { synchronous: "normal" });
  const { tool, executed, seen } = chargeTool(file);
  const registry = createToolRegistry([tool]);
  writeSync(1, "ready\n");
  await new Promise((resolve) => process.stdin.once("data", resolve));
  process.stdin.pause();
  // How each call ended: executed here, replayed (the other process completed it), or refused by code.
  const ended = { executed, replayed: 0, refused: {} };
  const ids = [];
  for (let t = 0; t < trials; t++) for (let i = 0; i < keys; i++) ids.push(trials === 1 ? `race-${i}` : `race-${t}-${i}`);
  let next = 0;
  // `concurrency` dispatches in flight; each takes the next id in the shared order.
  async function worker() {
    while (next < ids.length) {
      const id = ids[next++];
      const r = await dispatchToolCall({ call: call(id), registry, context, identity, effectStore: store });
      if (r.error) ended.refused[r.error.code] = (ended.refused[r.error.code] ?? 0) + 1;
      else if (r.value?.charged !== 5) throw new Error(`unexpected result for ${id}: ${JSON.stringify(r)}`);
      else if (!seen.has(id)) ended.replayed += 1;
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker));
  writeFileSync(out, JSON.stringify(ended));
  await store.close();
} else {
  writeSync(2, `unknown mode ${mode}\n`);
  process.exit(2);
}
