// The built-in memory store's lean path: with its default clock, a claim whose next command is
// markDispatched makes that transition in the same crossing. These tests hold it to the usual
// path (a store with a host clock, which goes through advanceClaim): the same answers, the same
// records, the same side effects, in every way a call can end.
import { describe, expect, it } from "vitest";
import {
  createMemoryToolEffectStore,
  createToolRegistry,
  deriveToolEffectKey,
  dispatchToolCall,
  toolEffectArgumentsHash,
  type ToolDefinition,
  type ToolEffectStore,
} from "../index.js";
import { call, ctx } from "./helpers/harness.js";

const identity = {
  tenantId: "t1",
  userId: "u1",
  principal: { kind: "user", id: "u1" },
  scopes: ["payments"],
  issuedAt: new Date().toISOString(),
  verified: true as const,
};
const ownership = { tenantId: "t1", userId: "u1" };

type Outcome = (args: Record<string, unknown>, signal: AbortSignal | undefined) => unknown;
const outcomes: [string, Outcome][] = [
  ["returns a value", (args) => ({ value: { charged: args.amount } })],
  ["returns an error result", () => ({ error: { message: "declined" } })],
  ["throws after the side effect", () => {
    throw new Error("gateway timeout");
  }],
  ["throws a non-Error", () => {
    throw "bare string";
  }],
  ["returns a result too large to keep", () => ({ value: "x".repeat(70 * 1024) })],
  ["returns a value JSON cannot hold", () => ({ value: { n: 1n } })],
  ["resolves later", async (args) => {
    await new Promise((resolve) => setTimeout(resolve, 1));
    return { value: args.amount };
  }],
  ["is aborted while it runs", async (_args, signal) => {
    await new Promise((resolve) => setTimeout(resolve, 1));
    return signal?.aborted ? { error: { message: "aborted" } } : { value: 1 };
  }],
];

function tool(outcome: Outcome, log: string[]): ToolDefinition {
  return {
    name: "pay",
    effect: { kind: "external_mutation", idempotency: "required" },
    async execute(args, c) {
      log.push(c.idempotencyKey ?? "no key");
      const out = (await outcome(args as Record<string, unknown>, c.signal)) as Record<string, unknown>;
      return { toolCallId: c.toolCallId, name: "pay", ...out };
    },
  };
}

/** What a record says that does not depend on the clock or the random claim token. */
function stable(record: Record<string, unknown> | null) {
  if (record === null) return null;
  const { createdAt, updatedAt, claimToken, expiresAt, ...rest } = record as Record<string, unknown>;
  return { ...rest, hasClaim: claimToken !== undefined, timed: [createdAt, updatedAt, expiresAt].map((t) => t !== undefined) };
}

async function scenario(store: ToolEffectStore, outcome: Outcome, abort: boolean) {
  const log: string[] = [];
  const registry = createToolRegistry([tool(outcome, log)]);
  const controller = new AbortController();
  const options = { call: call("pay", { amount: 5 }), registry, context: ctx({ signal: controller.signal }), identity, ownership, effectStore: store };
  const first = dispatchToolCall(options);
  if (abort) controller.abort("stop");
  const answers = [await first.then((r) => r, (e) => ({ threw: String(e) }))];
  answers.push(await dispatchToolCall({ ...options, context: ctx() }).then((r) => r, (e) => ({ threw: String(e) })));
  const argumentsHash = toolEffectArgumentsHash({ amount: 5 });
  const key = deriveToolEffectKey({ identity, ownership, sessionId: "s1", runId: "r1", toolCallId: "call_1", toolName: "pay", argumentsHash });
  const record = await store.get({ identity, ownership, key, sessionId: "s1", runId: "r1", toolCallId: "call_1", toolName: "pay", argumentsHash } as never);
  return { answers, executed: log.length, record: stable(record as never) };
}

describe("the memory store's claim and markDispatched in one crossing", () => {
  for (const [label, outcome] of outcomes) {
    it(`ends as the usual path does when the tool ${label}`, async () => {
      const abort = label.includes("aborted");
      const lean = await scenario(createMemoryToolEffectStore(), outcome, abort);
      const usual = await scenario(createMemoryToolEffectStore({ now: () => Date.now() }), outcome, abort);
      expect(lean).toEqual(usual);
      expect(lean.executed).toBe(1); // never a second time, whatever the first call's end
    });
  }

  it("leaves markDispatched to the host when the host replaced it, even over a built-in begin", async () => {
    const base = createMemoryToolEffectStore();
    const marked: number[] = [];
    const store = {
      ...base,
      markDispatched: async (input: never) => {
        const record = await base.markDispatched(input);
        marked.push((record as { version: number }).version);
        throw new Error("connection dropped"); // uncertain: the call must end unknown, never run
      },
    };
    const log: string[] = [];
    const registry = createToolRegistry([tool(outcomes[0][1], log)]);
    const options = { call: call("pay", { amount: 5 }), registry, context: ctx(), identity, ownership, effectStore: store as ToolEffectStore };
    const first = await dispatchToolCall(options);
    expect(marked).toEqual([2]);
    expect(first.error?.code).toBe("ERR_PRISM_TOOL_EFFECT_UNKNOWN");
    expect(log).toEqual([]);
    expect((await dispatchToolCall(options)).error?.code).toBe("ERR_PRISM_TOOL_EFFECT_UNKNOWN");
    expect(log).toEqual([]);
  });

  it("takes the record through dispatched to its end: version 3 after a completed call", async () => {
    const lean = await scenario(createMemoryToolEffectStore(), outcomes[0][1], false);
    expect(lean.record).toMatchObject({ status: "completed", version: 3, hasClaim: false });
  });
});
