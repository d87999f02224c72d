// Custom loop strategies (`loop: { name, run(ctx) }`), as @arnilo/prism's AgentLoopStrategy: the
// strategy orchestrates turns through its LoopContext; the run keeps limits, dispatch, redaction.
import { describe, expect, it } from "vitest";
import {
  AgentLoopStateError,
  AgentRunStateError,
  RunLimitError,
  createAgent,
  createMemoryCheckpointStore,
  createMockProvider,
  foldedToolResultHeader,
  foldToolResults,
  providerDone,
  providerTextDelta,
  providerToolCall,
  providerUsage,
  toolCallContent,
  DEFAULT_TOOL_RESULT_FOLD_MIN_AGE_TURNS,
  TOOL_RESULT_FOLD_TURN_METADATA_KEY,
  type AgentEvent,
  type AgentLoopStrategy,
  type LoopContext,
  type Message,
  type ProviderRequest,
  type ToolDefinition,
} from "../index.mjs";

const model = { provider: "mock", model: "demo" };
const city: ToolDefinition = {
  name: "weather",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  execute: (args: any) => `sunny in ${args.city}`, // a bare result
};

async function observe(session: any, runIt: () => Promise<any>) {
  const events: AgentEvent[] = [];
  const sub = (async () => {
    for await (const e of session.subscribe()) events.push(e);
  })();
  const result = await runIt().catch((e: any) => e);
  await sub;
  return { result, events };
}

// A single-shot loop written against the LoopContext, as upstream's docs show one.
const singleShot: AgentLoopStrategy = {
  name: "my-single-shot",
  async run(ctx: LoopContext) {
    let next: any = ctx.input;
    for (let turn = 1; ; turn++) {
      ctx.emit({ type: "turn_started", sessionId: ctx.sessionId, runId: ctx.runId, turn });
      const { content, calls, started } = await ctx.generate(await ctx.assemble(next, undefined, turn));
      if (turn === 1) ctx.history.push(...ctx.inputMessages);
      if (started) {
        const message: Message = { role: "assistant", content: content as any };
        ctx.history.push(message);
        await ctx.appendMessage(message);
      }
      ctx.emit({ type: "turn_finished", sessionId: ctx.sessionId, runId: ctx.runId, turn });
      if (calls.length === 0) return undefined;
      if (turn > ctx.maxToolRounds) {
        ctx.finishReason = "turn_limit";
        return undefined;
      }
      ctx.chargeToolRound(calls);
      for (const call of calls) {
        const result = await ctx.dispatchToolCall(call);
        const message: Message = { role: "tool", content: [{ type: "tool_result", toolCallId: result.toolCallId, name: result.name, result: result.value, error: result.error }] };
        ctx.history.push(message);
        await ctx.appendMessage(message);
      }
      next = [];
    }
  },
};

describe("custom loop strategies: the LoopContext", () => {
  it("runs a host strategy: requests from assemble, dispatch with validation and bare results, the result from its history", async () => {
    const requests: ProviderRequest[] = [];
    const provider = createMockProvider(
      [
        [providerToolCall(toolCallContent("c1", "weather", { city: "Oslo" })), providerToolCall(toolCallContent("c2", "weather", { city: 42 } as any)), providerUsage({ inputTokens: 3, outputTokens: 1 }), providerDone()],
        [providerTextDelta("It is sunny."), providerDone()],
      ],
      { onRequest: (r) => void requests.push(r) },
    );
    const session = createAgent({ model, provider, tools: [city], instructions: "Be brief." }).createSession();
    const { result, events } = await observe(session, () => session.run("Weather?", { loop: singleShot }));
    expect(result).toMatchObject({ status: "succeeded", text: "It is sunny.", finishReason: "stop", usage: { inputTokens: 3, outputTokens: 1 } });
    expect(requests).toHaveLength(2);
    // Turn 1: the tool list and the instructions (two system messages), then the input; turn 2: the
    // history the strategy kept.
    expect(requests[0].messages.map((m) => m.role)).toEqual(["system", "system", "user"]);
    expect(requests[0].tools.map((t) => t.name)).toEqual(["weather"]);
    expect(requests[1].messages.map((m) => m.role)).toEqual(["system", "system", "user", "assistant", "tool", "tool"]);
    const rows = requests[1].messages.slice(4).map((m: any) => m.content[0]);
    expect(rows[0]).toMatchObject({ toolCallId: "c1", name: "weather", result: "sunny in Oslo" }); // bare result, ids filled
    expect(rows[1]).toMatchObject({ toolCallId: "c2", name: "weather", error: { message: expect.stringContaining("/city: expected string") } }); // validation on by default
    // Session messages: the input, then what the strategy appended.
    expect(session.messages().map((m: any) => m.role)).toEqual(["user", "assistant", "tool", "tool", "assistant"]);
    const types = events.map((e) => e.type);
    expect(types[0]).toBe("agent_started");
    expect(types.filter((t) => t === "turn_started")).toHaveLength(2);
    expect(types.filter((t) => t === "provider_turn_started")).toHaveLength(2);
    expect(types.at(-1)).toBe("agent_finished");
    expect(events.filter((e: any) => e.type === "provider_turn_started").map((e: any) => e.turn)).toEqual([1, 2]);
  });

  it("the run's strategy wins over the agent's, and the run's loop options over an agent's strategy", async () => {
    const ran: string[] = [];
    const named = (name: string): AgentLoopStrategy => ({ name, run: async () => void ran.push(name) });
    const agent = createAgent({ model, provider: createMockProvider([providerTextDelta("hi"), providerDone()]), loop: named("agent") });
    await agent.createSession().run("x");
    await agent.createSession().run("x", { loop: named("run") });
    const builtIn = await agent.createSession().run("x", { loop: { strategy: "single-shot" } });
    expect(ran).toEqual(["agent", "run"]);
    expect(builtIn.text).toBe("hi");
  });

  it("ctx.finishReason and a returned usage reach the result and agent_finished", async () => {
    const loop: AgentLoopStrategy = {
      name: "stops",
      async run(ctx) {
        ctx.finishReason = "turn_limit";
        return { inputTokens: 7 };
      },
    };
    const session = createAgent({ model, provider: createMockProvider([providerDone()]) }).createSession();
    const { result, events } = await observe(session, () => session.run("x", { loop }));
    expect(result).toMatchObject({ status: "succeeded", finishReason: "turn_limit", usage: { inputTokens: 7 }, text: "" });
    expect(events.at(-1)).toMatchObject({ type: "agent_finished", finishReason: "turn_limit" });
  });

  it("assemble folds old tool results of the history with toolResultFold; the results it is given follow the history, whole", async () => {
    const big = "x".repeat(5000);
    const requests: ProviderRequest[] = [];
    const loop: AgentLoopStrategy = {
      name: "fold",
      async run(ctx) {
        ctx.history.push({ role: "tool", content: [{ type: "tool_result", toolCallId: "old", name: "weather", result: big }], metadata: { [TOOL_RESULT_FOLD_TURN_METADATA_KEY]: 1 } } as Message);
        const fresh = [{ toolCallId: "new", name: "weather", value: big }];
        await ctx.generate(await ctx.assemble([], fresh, 1 + DEFAULT_TOOL_RESULT_FOLD_MIN_AGE_TURNS));
        return undefined;
      },
    };
    const provider = createMockProvider([providerDone()], { onRequest: (r) => void requests.push(r) });
    const session = createAgent({ model, provider }).createSession();
    await session.run("x", { loop, toolResultFold: { summarize: ({ toolCallId }) => `summary of ${toolCallId}` } });
    const rows = requests[0].messages.map((m: any) => m.content[0]);
    expect(rows.map((b: any) => b.toolCallId)).toEqual(["old", "new"]);
    expect(rows[0].result).toBe(foldedToolResultHeader("weather", "old", "summary of old"));
    expect(rows[1].result).toBe(big); // of the request's own turn: not old enough
    const folded = await foldToolResults([{ toolCallId: "t", name: "n", value: big }], { minAgeTurns: 1, minBytes: 1, maxSummaryBytes: 64, summarize: () => "s" }, { sessionId: "s", runId: "r", turn: 1 });
    expect(folded[0].value).toBe(big);
  });
});

describe("custom loop strategies: limits, aborts and failures", () => {
  it("one terminal breach; output of a turn over a configured token budget is never shown (upstream's run-limits case)", async () => {
    const loop: AgentLoopStrategy = {
      name: "two-turns",
      async run(ctx) {
        await ctx.generate(await ctx.assemble(ctx.input));
        await ctx.generate(await ctx.assemble(ctx.input));
        return undefined;
      },
    };
    const provider = createMockProvider([providerTextDelta("blocked"), providerUsage({ outputTokens: 2 }), providerDone()]);
    const session = createAgent({ model, provider }).createSession();
    const { result, events } = await observe(session, () => session.run("hi", { loop, limits: { maxTurns: 1, maxOutputTokens: 1 } }));
    expect(result.result).toMatchObject({ status: "failed", limit: { limit: "maxOutputTokens", maximum: 1, observed: 2 } });
    expect(events.filter((e) => e.type === "run_limit_exceeded")).toHaveLength(1);
    expect(events.some((e) => e.type === "message_delta")).toBe(false);
  });

  it("a breach the strategy catches still fails the run; the strategy saw RunLimitError", async () => {
    const seen: unknown[] = [];
    const loop: AgentLoopStrategy = {
      name: "greedy",
      async run(ctx) {
        for (let i = 0; i < 5; i++) {
          try {
            await ctx.generate(await ctx.assemble(i === 0 ? ctx.input : []));
          } catch (err) {
            seen.push(err);
            return undefined; // swallowed
          }
        }
        return undefined;
      },
    };
    let turns = 0;
    const provider = createMockProvider([providerTextDelta("t"), providerDone()], { onRequest: () => void turns++ });
    const session = createAgent({ model, provider, limits: { maxTurns: 2 } }).createSession();
    const { result, events } = await observe(session, () => session.run("x", { loop }));
    expect(result.result).toMatchObject({ status: "failed", limit: { limit: "maxTurns", maximum: 2, observed: 3 }, error: { code: "ERR_PRISM_RUN_LIMIT" } });
    expect(turns).toBe(2);
    await new Promise((resolve) => setImmediate(resolve)); // the strategy's catch runs after the run's end
    expect(seen).toHaveLength(1);
    expect(seen[0]).toBeInstanceOf(RunLimitError);
    expect(events.filter((e) => e.type === "run_limit_exceeded")).toHaveLength(1);
  });

  it("tool rounds and tool calls are charged through ctx", async () => {
    const loop: AgentLoopStrategy = {
      name: "rounds",
      async run(ctx) {
        const call = toolCallContent("c", "weather", { city: "Rome" });
        for (let i = 0; i < 3; i++) ctx.chargeToolRound([call]);
        return undefined;
      },
    };
    const session = createAgent({ model, provider: createMockProvider([providerDone()]), tools: [city] }).createSession();
    const out = await session.run("x", { loop, limits: { maxToolRounds: 2 } }).catch((e: any) => e.result);
    expect(out).toMatchObject({ status: "failed", limit: { limit: "maxToolRounds", maximum: 2, observed: 3 } });
    let executed = 0;
    const counting = { ...city, execute: () => (executed++, "ok") };
    const calls: AgentLoopStrategy = {
      name: "calls",
      async run(ctx) {
        for (let i = 0; i < 4; i++) await ctx.dispatchToolCall(toolCallContent(`c${i}`, "weather", { city: "Rome" }));
        return undefined;
      },
    };
    const s2 = createAgent({ model, provider: createMockProvider([providerDone()]), tools: [counting] }).createSession();
    const out2 = await s2.run("x", { loop: calls, limits: { maxToolCalls: 3 } }).catch((e: any) => e.result);
    expect(out2).toMatchObject({ status: "failed", limit: { limit: "maxToolCalls", maximum: 3, observed: 4 } });
    expect(executed).toBe(3);
  });

  it("an abort ends the run aborted even when the strategy ignores the error", async () => {
    const controller = new AbortController();
    const loop: AgentLoopStrategy = {
      name: "stubborn",
      async run(ctx) {
        controller.abort(new Error("host stop"));
        await ctx.generate(await ctx.assemble(ctx.input)).catch(() => undefined);
        return undefined;
      },
    };
    const session = createAgent({ model, provider: createMockProvider([providerDone()]) }).createSession();
    const out = await session.run("x", { loop, signal: controller.signal }).catch((e: any) => e.result);
    expect(out).toMatchObject({ status: "aborted", finishReason: "aborted" });
  });

  it("a strategy stuck in its own code cannot hold the run past a breach; its ctx refuses to act after the end", async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let late: any;
    const loop: AgentLoopStrategy = {
      name: "stuck",
      async run(ctx) {
        await gate; // never released before the deadline
        try {
          await ctx.assemble(ctx.input);
        } catch (err) {
          late = err;
        }
        return undefined;
      },
    };
    let turns = 0;
    const session = createAgent({ model, provider: createMockProvider([providerDone()], { onRequest: () => void turns++ }) }).createSession();
    const { result, events } = await observe(session, () => session.run("x", { loop, limits: { maxWallTimeMs: 20 } }));
    expect(result.result).toMatchObject({ status: "failed", limit: { limit: "maxWallTimeMs", maximum: 20 } });
    expect(events.filter((e) => e.type === "run_limit_exceeded")).toHaveLength(1);
    release();
    await new Promise((resolve) => setImmediate(resolve));
    expect(late).toMatchObject({ code: "agent_run_ended", message: expect.stringContaining("ctx.assemble: the run") });
    expect(turns).toBe(0);
  });

  it("a strategy's own throw fails the run with its error", async () => {
    const loop: AgentLoopStrategy = { name: "broken", run: async () => { throw Object.assign(new Error("strategy broke"), { code: "E_STRATEGY" }); } };
    const session = createAgent({ model, provider: createMockProvider([providerDone()]) }).createSession();
    const { result, events } = await observe(session, () => session.run("x", { loop }));
    expect(result.result).toMatchObject({ status: "failed", error: { message: "strategy broke", code: "E_STRATEGY" } });
    expect(events.at(-1)).toMatchObject({ type: "error" });
  });

  it("a provider failure reaches the strategy as an Error with its message; the strategy may go on", async () => {
    const errors: any[] = [];
    const loop: AgentLoopStrategy = {
      name: "retrying",
      async run(ctx) {
        try {
          await ctx.generate(await ctx.assemble(ctx.input));
        } catch (err) {
          errors.push(err);
        }
        const { content } = await ctx.generate(await ctx.assemble([]));
        ctx.history.push({ role: "assistant", content: content as any });
        return undefined;
      },
    };
    const provider = createMockProvider([[{ type: "error", error: { message: "upstream down", code: 503 } } as any], [providerTextDelta("second"), providerDone()]]);
    const session = createAgent({ model, provider }).createSession();
    const out = await session.run("x", { loop });
    expect(errors[0]).toBeInstanceOf(Error);
    expect(errors[0]).toMatchObject({ message: "upstream down", code: 503 });
    expect(out).toMatchObject({ status: "succeeded", text: "second" });
  });
});

describe("custom loop strategies: bad input and secrets", () => {
  it("a strategy of the wrong shape is refused by name and code before any provider turn", async () => {
    let turns = 0;
    const provider = createMockProvider([providerDone()], { onRequest: () => void turns++ });
    const bad: Array<[unknown, RegExp]> = [
      [{ name: "", run: async () => undefined }, /loop.name must be a non-empty string/],
      [{ name: "x", run: "nope" }, /loop.run must be a function/],
      [{ run: async () => undefined }, /loop.name must be a non-empty string/],
      [{ name: "x", run: async () => undefined, revision: 2 }, /loop.revision must be a non-empty string/],
      [{ name: "x", run: async () => undefined, snapshot: {} }, /loop.snapshot must be a function/],
    ];
    for (const [loop, message] of bad) {
      expect(() => createAgent({ model, provider, loop: loop as any })).toThrow(message);
      expect(() => createAgent({ model, provider, loop: loop as any })).toThrow(expect.objectContaining({ name: "TypeError", code: "invalid_agent_loop" }));
      await expect(createAgent({ model, provider }).createSession().run("x", { loop: loop as any })).rejects.toMatchObject({ code: "invalid_agent_loop" });
    }
    expect(turns).toBe(0);
  });

  it("ctx methods refuse what is not an event, a message, a request or a call", async () => {
    const attempts: Array<[string, (ctx: LoopContext) => unknown]> = [
      ["ctx.emit", (ctx) => ctx.emit(null as any)],
      ["ctx.emit", (ctx) => ctx.emit({ type: 1 } as any)],
      ["ctx.appendMessage", (ctx) => ctx.appendMessage({ content: [] } as any)],
      ["ctx.generate", (ctx) => ctx.generate({} as any)],
      ["ctx.assemble", (ctx) => ctx.assemble([], "results" as any)],
      ["ctx.assemble", (ctx) => ctx.assemble([], undefined, 0)],
      ["ctx.dispatchToolCall", (ctx) => ctx.dispatchToolCall(null as any)],
      ["ctx.chargeToolRound", (ctx) => ctx.chargeToolRound("calls" as any)],
    ];
    for (const [where, attempt] of attempts) {
      let caught: any;
      const loop: AgentLoopStrategy = {
        name: "hostile",
        async run(ctx) {
          try {
            await attempt(ctx);
          } catch (err) {
            caught = err;
          }
          return undefined;
        },
      };
      const out = await createAgent({ model, provider: createMockProvider([providerDone()]) }).createSession().run("x", { loop });
      expect(out.status).toBe("succeeded");
      expect(caught, where).toMatchObject({ name: "TypeError", code: "invalid_agent_loop" });
      expect(caught.message.startsWith(where), where).toBe(true);
    }
  });

  it("durable runs: no hooks is AgentLoopStateError, hooks are refused, a run's strategy is AgentRunStateError; no provider turn", async () => {
    let turns = 0;
    const provider = createMockProvider([providerDone()], { onRequest: () => void turns++ });
    const runState = { checkpoints: createMemoryCheckpointStore(), definitionRevision: "1" };
    const plain: AgentLoopStrategy = { name: "plain", run: async () => undefined };
    const hooked: AgentLoopStrategy = { ...plain, snapshot: () => ({}), restore: () => undefined };
    const noHooks = createAgent({ id: "a", model, provider, loop: plain }).createSession().run("go", { runState });
    await expect(noHooks).rejects.toBeInstanceOf(AgentLoopStateError);
    await expect(createAgent({ id: "a", model, provider, loop: plain }).createSession().run("go", { runState })).rejects.toMatchObject({ code: "ERR_PRISM_LOOP_NOT_DURABLE" });
    await expect(createAgent({ id: "a", model, provider, loop: hooked, runState }).createSession().run("go")).rejects.toMatchObject({ code: "unsupported_agent_option", option: "loop" });
    await expect(createAgent({ id: "a", model, provider, runState }).createSession().run("go", { loop: hooked })).rejects.toBeInstanceOf(AgentRunStateError);
    expect(turns).toBe(0);
  });

  it("a request the strategy built itself is redacted before the provider sees it; appended messages are kept redacted", async () => {
    const S = "sk-live-SECRETVALUE123";
    const requests: ProviderRequest[] = [];
    const loop: AgentLoopStrategy = {
      name: "leaky",
      async run(ctx) {
        const base = await ctx.assemble(ctx.input);
        const own = { ...base, messages: [...base.messages, { role: "user" as const, content: [{ type: "text" as const, text: `token ${S}` }] }] };
        await ctx.generate(own);
        await ctx.appendMessage({ role: "user", content: [{ type: "text", text: `note ${S}` }] });
        return undefined;
      },
    };
    const provider = createMockProvider([providerDone()], { onRequest: (r) => void requests.push(r) });
    const session = createAgent({ model, provider, secrets: [S] }).createSession();
    await session.run("x", { loop });
    expect(JSON.stringify(requests[0].messages)).not.toContain(S);
    expect(requests[0].signal).toBeInstanceOf(AbortSignal);
    expect(JSON.stringify(session.messages())).not.toContain(S);
  });
});
