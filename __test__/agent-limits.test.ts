import { describe, expect, it } from "vitest";
import { createAgent, createMockProvider, providerDone, providerTextDelta, providerToolCall, providerUsage, toolCallContent, type AgentEvent, type ToolDefinition } from "../index.mjs";
import { DEFAULT_RUN_LIMITS, HARD_RUN_LIMITS, HARD_MAX_RUN_COST, RunLimitTracker, createRunLimitTracker, resolveRunLimits, RunLimitError } from "../index.mjs";

const model = { provider: "mock", model: "demo" };
const echo: ToolDefinition = { name: "a", parameters: { type: "object" }, execute: (_args, ctx) => ({ toolCallId: ctx.toolCallId, name: "a", value: 1 }) };
const callA = (id = "c1") => providerToolCall(toolCallContent(id, "a", {}));

async function run(config: any, options: any = {}) {
  const session = createAgent({ model, tools: [echo], ...config }).createSession();
  const events: AgentEvent[] = [];
  const sub = (async () => { for await (const e of session.subscribe()) events.push(e); })();
  const result = await session.run("x", options).catch((e: any) => e.result ?? e);
  await sub;
  return { result, events };
}
const breaches = (events: AgentEvent[]) => events.filter((e) => e.type === "run_limit_exceeded").map((e: any) => e.breach);

describe("run limits: defaults, overrides, hard caps", () => {
  it("has upstream's defaults and hard caps; agent limits narrow run limits", () => {
    expect(DEFAULT_RUN_LIMITS).toEqual({ maxTurns: 16, maxProviderAttempts: 24, maxToolRounds: 8, maxToolCalls: 32, maxWallTimeMs: 120000, maxRequestBytes: 8388608, maxResponseBytes: 8388608, maxInputTokens: 40000, maxOutputTokens: 10000, maxTotalTokens: 50000 });
    expect(HARD_RUN_LIMITS).toMatchObject({ maxTurns: 64, maxProviderAttempts: 256, maxToolRounds: 64, maxToolCalls: 256, maxWallTimeMs: 1800000 });
    expect(resolveRunLimits({ maxTurns: 2 }, { maxTurns: 20 }).maxTurns).toBe(2);
    expect(resolveRunLimits(undefined, { maxTurns: 20 }).maxTurns).toBe(20);
    for (const [name, cap] of Object.entries(HARD_RUN_LIMITS)) {
      expect(() => resolveRunLimits(undefined, { [name]: (cap as number) + 1 })).toThrow(`${name} must be a positive safe integer at most ${cap}`);
      expect(() => resolveRunLimits(undefined, { [name]: 0 })).toThrow(expect.objectContaining({ name: "TypeError", code: "invalid_run_limits" }));
      expect(resolveRunLimits(undefined, { [name]: cap })[name as "maxTurns"]).toBe(cap);
    }
    expect(() => resolveRunLimits({ maxCost: { amount: 1, currency: "USD" } }, { maxCost: { amount: 1, currency: "EUR" } })).toThrow(/currencies/);
    expect(() => resolveRunLimits(undefined, { maxCost: { amount: 10001, currency: "USD" } })).toThrow(/maxCost requires/);
  });

  it("a refused limit fails the run before any provider turn", async () => {
    let turns = 0;
    const provider = createMockProvider([providerDone()], { onRequest: () => void turns++ });
    await expect(createAgent({ model, provider, limits: { maxToolCalls: 257 } }).createSession().run("x")).rejects.toThrow("maxToolCalls must be a positive safe integer at most 256");
    expect(turns).toBe(0);
  });
});

describe("run limits: each breach fails the run with result.limit and one run_limit_exceeded", () => {
  const loopCalls = () => createMockProvider([callA(), providerDone()]);

  it("maxToolCalls: default 32 and an override", async () => {
    let executed = 0;
    const counting = { ...echo, execute: (_a: any, ctx: any) => (executed++, { toolCallId: ctx.toolCallId, name: "a", value: 1 }) };
    const provider = createMockProvider([[...Array.from({ length: 5 }, (_, i) => callA(`c${i}`)), providerDone()]]);
    const { result, events } = await run({ provider, tools: [counting] }, { limits: { maxToolCalls: 3 } });
    expect(result).toMatchObject({ status: "failed", limit: { limit: "maxToolCalls", maximum: 3, observed: 4 }, error: { code: "ERR_PRISM_RUN_LIMIT", message: "Run limit exceeded: maxToolCalls" } });
    expect(executed).toBe(3);
    expect(breaches(events)).toHaveLength(1);
    executed = 0;
    const many = createMockProvider([[...Array.from({ length: 40 }, (_, i) => callA(`c${i}`)), providerDone()]]);
    const d = await run({ provider: many, tools: [counting] });
    expect(d.result.limit).toEqual({ limit: "maxToolCalls", maximum: 32, observed: 33 });
    expect(executed).toBe(32);
  });

  it("maxTurns: default 16 with raised rounds, and an override", async () => {
    const d = await run({ provider: loopCalls() }, { limits: { maxToolRounds: 30, maxToolCalls: 100 } });
    expect(d.result.limit).toEqual({ limit: "maxTurns", maximum: 16, observed: 17 });
    const o = await run({ provider: loopCalls() }, { limits: { maxTurns: 2 } });
    expect(o.result).toMatchObject({ status: "failed", limit: { limit: "maxTurns", maximum: 2, observed: 3 } });
  });

  it("maxProviderAttempts counts attempts", async () => {
    const o = await run({ provider: loopCalls() }, { limits: { maxProviderAttempts: 2 } });
    expect(o.result.limit).toEqual({ limit: "maxProviderAttempts", maximum: 2, observed: 3 });
  });

  it("maxRequestBytes and maxResponseBytes count JSON bytes", async () => {
    const req = await run({ provider: createMockProvider([providerDone()]) }, { limits: { maxRequestBytes: 10 } });
    expect(req.result.limit).toMatchObject({ limit: "maxRequestBytes", maximum: 10 });
    expect(req.result.limit.observed).toBeGreaterThan(10);
    const big = createMockProvider([providerTextDelta("y".repeat(5000)), providerDone()]);
    const res = await run({ provider: big }, { limits: { maxResponseBytes: 1000 } });
    expect(res.result.limit).toMatchObject({ limit: "maxResponseBytes", maximum: 1000 });
    expect(breaches(res.events)).toHaveLength(1);
  });

  it("token limits: input, output, total; output held until usage is counted", async () => {
    for (const [limit, usage] of [["maxInputTokens", { inputTokens: 5 }], ["maxOutputTokens", { outputTokens: 5 }], ["maxTotalTokens", { inputTokens: 3, outputTokens: 3 }]] as const) {
      const provider = createMockProvider([providerTextDelta("secret"), providerUsage(usage), providerDone()]);
      const { result, events } = await run({ provider }, { limits: { [limit]: 4 } });
      expect(result.limit).toMatchObject({ limit, maximum: 4 });
      // As upstream: an output, total or cost budget holds output; an input budget does not.
      expect(events.some((e) => e.type === "message_delta")).toBe(limit === "maxInputTokens");
    }
    // Within budget the held output is shown.
    const ok = await run({ provider: createMockProvider([providerTextDelta("fine"), providerUsage({ outputTokens: 1 }), providerDone()]) }, { limits: { maxOutputTokens: 4 } });
    expect(ok.result.status).toBe("succeeded");
    expect(ok.events.some((e) => e.type === "message_delta")).toBe(true);
  });

  it("maxCost: missing cost or another currency breaches; a total over it breaches", async () => {
    const missing = await run({ provider: createMockProvider([providerUsage({ outputTokens: 1 }), providerDone()]) }, { limits: { maxCost: { amount: 1, currency: "USD" } } });
    expect(missing.result.limit).toEqual({ limit: "maxCost", maximum: 1, observed: Infinity, currency: "USD" });
    const over = await run({ provider: createMockProvider([providerUsage({ outputTokens: 1, cost: 2, currency: "USD" }), providerDone()]) }, { limits: { maxCost: { amount: 1, currency: "USD" } } });
    expect(over.result.limit).toEqual({ limit: "maxCost", maximum: 1, observed: 2, currency: "USD" });
  });

  it("maxWallTimeMs: the timer aborts a stalled provider and the run fails with the breach", async () => {
    const stalled = { id: "s", async *generate(req: any) { await new Promise((_, reject) => req.signal.addEventListener("abort", () => reject(req.signal.reason))); } };
    const { result, events } = await run({ provider: stalled }, { limits: { maxWallTimeMs: 20 } });
    expect(result).toMatchObject({ status: "failed", limit: { limit: "maxWallTimeMs", maximum: 20 }, error: { name: "RunLimitError" } });
    expect(result.abortReason).toBeUndefined();
    expect(breaches(events)).toHaveLength(1);
  });

  it("the tracker records usage once and refuses bad usage", () => {
    const t = new RunLimitTracker(resolveRunLimits(undefined, { maxTotalTokens: 3 }));
    t.recordUsage({ inputTokens: 1, outputTokens: 2 });
    expect(t.snapshot().totalTokens).toBe(3);
    expect(() => t.recordUsage({ outputTokens: 1 })).toThrow(RunLimitError);
    expect(() => t.recordUsage({ inputTokens: -1 })).toThrow("Provider usage inputTokens must be a non-negative safe integer");
    t.dispose();
  });
  it("a tracker's snapshot counters are checked; a resumed tracker goes on from them", () => {
    const limits = resolveRunLimits(undefined, {});
    for (const bad of [{ turns: -1 }, { turns: 1.5 }, { toolCalls: "2" }, { cost: Infinity }]) {
      // Upstream's TypeError and message, with the budget's code.
      expect(() => new RunLimitTracker(limits, { snapshot: bad as any })).toThrow(
        expect.objectContaining({ name: "TypeError", message: "Run limit snapshot must contain finite non-negative counters", code: "invalid_run_limits" }),
      );
    }
    const t = new RunLimitTracker(limits, { snapshot: { turns: 3, cost: 0.5 } as any });
    expect(t.snapshot()).toMatchObject({ turns: 3, cost: 0.5, toolCalls: 0 });
    t.dispose();
  });
  it("the package root exports upstream's run-limit names, the same from require and import", async () => {
    const { createRequire } = await import("node:module");
    const cjs = createRequire(import.meta.url)("../index.js");
    for (const name of ["DEFAULT_RUN_LIMITS", "HARD_RUN_LIMITS", "HARD_MAX_RUN_COST", "RunLimitError", "RunLimitTracker", "resolveRunLimits", "createRunLimitTracker"]) {
      expect(cjs[name], name).toBeDefined();
    }
    expect(cjs.RunLimitError).toBe(RunLimitError);
    expect(HARD_MAX_RUN_COST).toBe(10_000);
    expect(Object.isFrozen(DEFAULT_RUN_LIMITS) && Object.isFrozen(HARD_RUN_LIMITS)).toBe(true);
    const breaches: unknown[] = [];
    const t = createRunLimitTracker({ maxToolCalls: 2 }, { onExceeded: (b) => breaches.push(b) });
    expect(t.limits).toMatchObject({ ...DEFAULT_RUN_LIMITS, maxToolCalls: 2 });
    t.charge("maxToolCalls", 2);
    const err = (() => { try { t.charge("maxToolCalls"); } catch (e) { return e; } })() as any;
    expect(err).toBeInstanceOf(RunLimitError);
    expect(err).toMatchObject({ name: "RunLimitError", code: "ERR_PRISM_RUN_LIMIT", breach: { limit: "maxToolCalls", maximum: 2, observed: 3 } });
    expect(breaches).toEqual([{ limit: "maxToolCalls", maximum: 2, observed: 3 }]);
    expect(t.breach).toEqual(breaches[0]);
    t.dispose();
    expect(() => createRunLimitTracker({ maxTurns: 65 })).toThrow(expect.objectContaining({ code: "invalid_run_limits" }));
  });
  it("deadlineAt is the wall-time deadline as an ISO time: the one given, else now plus maxWallTimeMs", () => {
    const given = createRunLimitTracker(undefined, { deadlineAt: "2099-01-02T03:04:05+01:00" });
    expect(given.deadlineAt).toBe("2099-01-02T02:04:05.000Z");
    given.dispose();
    const before = Date.now();
    const fresh = createRunLimitTracker({ maxWallTimeMs: 60_000 });
    const at = Date.parse(fresh.deadlineAt);
    expect(at).toBeGreaterThanOrEqual(before + 60_000);
    expect(at).toBeLessThanOrEqual(Date.now() + 60_000);
    fresh.dispose();
    expect(() => createRunLimitTracker(undefined, { deadlineAt: "not a time" })).toThrow("Run limit deadlineAt is invalid");
  });
});
