import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  createAgent,
  createMockProvider,
  providerDone,
  providerTextDelta,
  providerToolCall,
  SEARCH_TOOLS_NAME,
  toolCallContent,
  type AgentEvent,
  type ProviderEvent,
  type ProviderRequest,
  type ToolDefinition,
} from "../index.mjs";
import { failure, streamEvents } from "./helpers/agent.js";

const model = { provider: "mock", model: "demo" };
const github: ToolDefinition[] = JSON.parse(readFileSync(new URL("../fixtures/github-mcp-tools.json", import.meta.url), "utf8")).map(
  (t: ToolDefinition) => ({ ...t, execute: (args: object, ctx: { toolCallId: string }) => ({ toolCallId: ctx.toolCallId, name: t.name, value: args }) }),
);

function tool(name: string, log?: string[], extra: Partial<ToolDefinition> = {}): ToolDefinition {
  return {
    name,
    parameters: { type: "object", properties: {} },
    execute(_args, ctx) {
      log?.push(name);
      return { toolCallId: ctx.toolCallId, name, value: name };
    },
    ...extra,
  };
}

function call(id: string, name: string, args: Record<string, any> = {}): ProviderEvent {
  return providerToolCall(toolCallContent(id, name, args));
}

/** A tool that waits until `release(name)` is called; records in-flight counts. */
function gate() {
  const waiting = new Map<string, () => void>();
  const state = { inFlight: 0, max: 0, started: [] as string[], finished: [] as string[] };
  const pending: Array<() => void> = [];
  const make = (name: string, extra: Partial<ToolDefinition> = {}): ToolDefinition => ({
    name,
    async execute(_a, ctx) {
      state.inFlight++;
      state.max = Math.max(state.max, state.inFlight);
      state.started.push(name);
      await new Promise<void>((resolve) => {
        waiting.set(name, resolve);
        pending.forEach((p) => p());
      });
      state.inFlight--;
      state.finished.push(name);
      return { toolCallId: ctx.toolCallId, name, value: name };
    },
    ...extra,
  });
  const whenWaiting = (names: string[]) =>
    new Promise<void>((resolve) => {
      const check = () => names.every((n) => waiting.has(n)) && resolve();
      pending.push(check);
      check();
    });
  const release = (name: string) => {
    const r = waiting.get(name);
    waiting.delete(name);
    r?.();
  };
  return { make, state, whenWaiting, release };
}

describe("parallel tool calls (single-shot)", () => {
  it("runs up to toolConcurrency at once and keeps results in call order whatever the completion order", async () => {
    const g = gate();
    const provider = createMockProvider([[call("c1", "a"), call("c2", "b"), call("c3", "c"), providerDone()], [providerDone()]]);
    const session = createAgent({ model, provider, tools: [g.make("a"), g.make("b"), g.make("c")], loop: { strategy: "single-shot", toolConcurrency: 3 } }).createSession();
    const run = session.run("x");
    await g.whenWaiting(["a", "b", "c"]);
    g.release("c");
    g.release("a");
    g.release("b");
    const result = await run;
    expect(result.status).toBe("succeeded");
    expect(g.state.max).toBe(3);
    expect(g.state.finished).toEqual(["c", "a", "b"]);
    expect(session.messages().filter((m) => m.role === "tool").map((m: any) => m.content[0].toolCallId)).toEqual(["c1", "c2", "c3"]);
  });

  it("an exclusive tool makes the turn sequential; the default is sequential", async () => {
    for (const [tools, loop] of [
      [(g: ReturnType<typeof gate>) => [g.make("a"), g.make("b", { exclusive: true })], { toolConcurrency: 4 }],
      [(g: ReturnType<typeof gate>) => [g.make("a"), g.make("b")], undefined],
    ] as const) {
      const g = gate();
      const provider = createMockProvider([[call("c1", "a"), call("c2", "b"), providerDone()], [providerDone()]]);
      const run = createAgent({ model, provider, tools: tools(g), loop }).createSession().run("x");
      await g.whenWaiting(["a"]);
      g.release("a");
      await g.whenWaiting(["b"]);
      g.release("b");
      await run;
      expect(g.state.max).toBe(1);
      expect(g.state.started).toEqual(["a", "b"]);
    }
  });

  it("a run-level failure stops the batch: real results kept, error row for the failure, tool_call_not_dispatched for the rest", async () => {
    const g = gate();
    const provider = createMockProvider([[call("c1", "a"), call("c2", "trip"), call("c3", "c"), call("c4", "d"), providerDone()], [providerDone()]]);
    const guardrails = {
      toolInput: [{ name: "no-trip", evaluate: (ctx: { toolName: string }) => ({ action: ctx.toolName === "trip" ? ("tripwire" as const) : ("allow" as const) }) }],
    };
    const log: string[] = [];
    const session = createAgent({
      model,
      provider,
      tools: [g.make("a"), tool("trip", log), tool("c", log), tool("d", log)],
      guardrails,
      loop: { strategy: "single-shot", toolConcurrency: 2 },
    }).createSession();
    const run = session.run("x");
    await g.whenWaiting(["a"]);
    g.release("a");
    const result = await failure(run);
    expect(result.status).toBe("failed");
    expect(result.finishReason).toBe("error");
    expect(result.error?.name).toBe("GuardrailError");
    expect(log).toEqual([]);
    const rows = session.messages().filter((m) => m.role === "tool").map((m) => m.content[0]);
    expect(rows.map((r) => r.toolCallId)).toEqual(["c1", "c2", "c3", "c4"]);
    expect(rows[0].result).toBe("a");
    expect(rows[1].error?.name).toBe("GuardrailError");
    expect(rows[2].error).toEqual({ name: "ToolCallNotDispatchedError", code: "tool_call_not_dispatched", message: "Tool call c was not dispatched: the batch stopped before it started" });
    expect(rows[3].error?.code).toBe("tool_call_not_dispatched");
  });

  it("provider-hosted calls are never dispatched and get no tool row", async () => {
    const log: string[] = [];
    const hosted = providerToolCall({ ...toolCallContent("h1", "a", {}), authority: "provider-hosted" });
    const provider = createMockProvider([[hosted, call("c2", "b"), providerDone()], [hosted, providerTextDelta("done"), providerDone()]]);
    const session = createAgent({ model, provider, tools: [tool("a", log), tool("b", log)], loop: { toolConcurrency: 2 } }).createSession();
    const result = await session.run("x");
    expect(result).toMatchObject({ status: "succeeded", finishReason: "stop", text: "done" });
    expect(log).toEqual(["b"]);
    expect(session.messages().filter((m) => m.role === "tool").map((m: any) => m.content[0].toolCallId)).toEqual(["c2"]);
  });

  it("a bad toolConcurrency fails before any provider turn", async () => {
    const provider = createMockProvider([providerDone()]);
    await expect(createAgent({ model, provider }).createSession().run("x", { loop: { toolConcurrency: 0 } })).rejects.toMatchObject({ code: "invalid_run_limits" });
  });
});

describe("abort", () => {
  it("session.abort() stops the loop, passes the signal to running tools and leaves no call without a row", async () => {
    let session: ReturnType<ReturnType<typeof createAgent>["createSession"]>;
    let sawAborted = false;
    const stopper: ToolDefinition = {
      name: "stop",
      execute(_a, ctx) {
        session.abort("user cancelled");
        sawAborted = ctx.signal?.aborted === true;
        return { toolCallId: ctx.toolCallId, name: "stop", value: "stopped" };
      },
    };
    const log: string[] = [];
    const provider = createMockProvider([[call("c1", "stop"), call("c2", "b"), providerDone()], [providerDone()]]);
    session = createAgent({ model, provider, tools: [stopper, tool("b", log)] }).createSession();
    const result = await failure(session.run("x"));
    expect(result).toMatchObject({ status: "aborted", finishReason: "aborted", error: { message: "user cancelled" } });
    expect(sawAborted).toBe(true);
    expect(log).toEqual([]);
    const rows = session.messages().filter((m) => m.role === "tool").map((m) => m.content[0]);
    expect(rows.map((r) => [r.toolCallId, r.error?.code])).toEqual([["c1", undefined], ["c2", "tool_call_not_dispatched"]]);
    expect(rows[1].error?.message).toBe("Tool call b was not dispatched: the run was aborted");
  });

  it("an aborted run signal ends the run before any provider turn", async () => {
    let turns = 0;
    const provider = createMockProvider([providerDone()], { onRequest: () => void turns++ });
    const controller = new AbortController();
    controller.abort();
    const result = await failure(createAgent({ model, provider }).createSession().run("x", { signal: controller.signal }));
    expect(result.status).toBe("aborted");
    expect(turns).toBe(0);
  });

  it("aborting during the provider stream keeps no partial assistant message", async () => {
    const controller = new AbortController();
    const provider = {
      id: "slow",
      async *generate(request: ProviderRequest): AsyncIterable<ProviderEvent> {
        yield providerTextDelta("part");
        controller.abort("stop");
        yield call("c1", "a");
        yield providerDone();
      },
    };
    const session = createAgent({ model, provider, tools: [tool("a")] }).createSession();
    const result = await failure(session.run("x", { signal: controller.signal }));
    expect(result.status).toBe("aborted");
    expect(session.messages().map((m) => m.role)).toEqual(["user"]);
  });

  it("an abort while the provider is waiting closes its stream once the provider gets to its next event", async () => {
    let release!: () => void;
    const waiting = new Promise<void>((resolve) => (release = resolve));
    let closed = false;
    let yieldedAfter = false;
    const provider = {
      id: "deaf", // waits without watching the signal
      async *generate(): AsyncIterable<ProviderEvent> {
        try {
          await waiting;
          yield providerTextDelta("late");
          yieldedAfter = true;
          yield providerDone();
        } finally {
          closed = true;
        }
      },
    };
    const session = createAgent({ model, provider }).createSession();
    const run = session.run("x");
    await new Promise((resolve) => setTimeout(resolve, 5));
    session.abort("stop");
    expect((await failure(run)).status).toBe("aborted");
    expect(closed).toBe(false); // still inside its wait
    release();
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(closed).toBe(true);
    expect(yieldedAfter).toBe(false);
  });
});

describe("per-turn narrowing", () => {
  it("receives turn, lastAssistantText and toolIds; clamps with tool_narrowing_clamped; keeps run order", async () => {
    const inputs: unknown[] = [];
    const requests: ProviderRequest[] = [];
    const provider = createMockProvider([[providerTextDelta("first"), call("c1", "a"), providerDone()], [providerDone()]], { onRequest: (r) => void requests.push(r) });
    const session = createAgent({
      model,
      provider,
      tools: [tool("a"), tool("b"), tool("c")],
      toolNarrowing: (input) => {
        inputs.push(input);
        return ["c", "zzz", "a"];
      },
    }).createSession();
    const events = await streamEvents(session, "x");
    expect(inputs).toEqual([
      { turn: 1, lastAssistantText: undefined, toolIds: ["a", "b", "c"] },
      { turn: 2, lastAssistantText: "first", toolIds: ["a", "b", "c"] },
    ]);
    expect(requests.map((r) => r.tools.map((t) => t.name))).toEqual([["a", "c"], ["a", "c"]]);
    const clamped = events.filter((e) => e.type === "tool_narrowing_clamped");
    expect(clamped[0]).toMatchObject({ turn: 1, dropped: ["zzz"] });
    // Identical subsets: byte-identical tool lists and the same metadata on request and event.
    expect(JSON.stringify(requests[0].tools)).toBe(JSON.stringify(requests[1].tools));
    const turnEvents = events.filter((e) => e.type === "turn_started") as any[];
    expect(turnEvents[0].metadata.tools).toEqual(requests[0].metadata.tools);
    expect(requests[0].metadata.tools).toMatchObject({ count: 2 });
    expect(requests[0].metadata.tools.idsHash).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it("run narrowing wins; a throwing callback fails the turn before any request", async () => {
    let turns = 0;
    const provider = createMockProvider([providerDone()], { onRequest: () => void turns++ });
    const agent = createAgent({ model, provider, tools: [tool("a"), tool("b")], toolNarrowing: () => ["a"] });
    const result = await failure(agent.createSession().run("x", {
      toolNarrowing: () => {
        throw new Error("plane unknown");
      },
    }));
    expect(result).toMatchObject({ status: "failed", error: { message: "plane unknown" } });
    expect(turns).toBe(0);
    const bad = await failure(agent.createSession().run("x", { toolNarrowing: (() => "a") as any }));
    expect(bad.error).toMatchObject({ code: "invalid_tool_narrowing" });
    expect(turns).toBe(0);
  });

  it("hidden tools are blocked with tool_denied unless allowHiddenToolCalls", async () => {
    const script = () => createMockProvider([[call("c1", "b"), providerDone()], [providerDone()]]);
    const log: string[] = [];
    const tools = [tool("a", log), tool("b", log)];
    const events = await streamEvents(createAgent({ model, provider: script(), tools, toolNarrowing: () => ["a"] }).createSession(), "x");
    expect(events.filter((e) => e.type === "tool_execution_blocked").map((e: any) => `${e.name}:${e.reason}`)).toEqual(["b:tool_denied"]);
    const none = await streamEvents(createAgent({ model, provider: script(), tools, toolNarrowing: () => [] }).createSession(), "x");
    expect(none.filter((e) => e.type === "tool_execution_blocked").map((e: any) => e.reason)).toEqual(["tool_denied"]);
    expect(log).toEqual([]);
    await createAgent({ model, provider: script(), tools, toolNarrowing: () => ["a"], allowHiddenToolCalls: true }).createSession().run("x");
    expect(log).toEqual(["b"]);
  });

  it("metadata.tools is on every request, also without narrowing", async () => {
    const requests: ProviderRequest[] = [];
    const provider = createMockProvider([providerDone()], { onRequest: (r) => void requests.push(r) });
    await createAgent({ model, provider, tools: [] }).createSession().run("x", { metadata: { trace: "t1" } });
    expect(requests[0].metadata).toMatchObject({ trace: "t1", tools: { count: 0 } });
  });
});

describe("tool disclosure: search", () => {
  it("sends top-k plus search_tools; search_tools activates names for later turns; clearActivatedTools resets", async () => {
    const requests: ProviderRequest[] = [];
    const provider = createMockProvider(
      [
        [call("c1", SEARCH_TOOLS_NAME, { query: "gist" }), providerDone()],
        [providerTextDelta("ok"), providerDone()],
        [providerDone()],
      ],
      { onRequest: (r) => void requests.push(r) },
    );
    const session = createAgent({ model, provider, tools: github, toolsDisclosure: "search", toolsSearch: { topK: 4 } }).createSession();
    const result = await session.run("merge the pull request");
    expect(result.status).toBe("succeeded");
    const first = requests[0].tools.map((t) => t.name);
    expect(first.length).toBeLessThanOrEqual(5);
    expect(first).toContain(SEARCH_TOOLS_NAME);
    expect(first).toContain("merge_pull_request");
    expect(first.some((n) => n.includes("gist"))).toBe(false);
    const searched = session.messages().find((m) => m.role === "tool")!;
    expect(JSON.stringify(searched.content)).toContain("gist");
    const activated = session.state().activatedToolNames;
    expect(activated.length).toBeGreaterThan(0);
    expect(requests[1].tools.map((t) => t.name)).toEqual(expect.arrayContaining(activated));
    expect(requests[1].metadata.tools.count).toBe(requests[1].tools.length);
    session.clearActivatedTools();
    expect(session.state().activatedToolNames).toEqual([]);
    await session.run("merge the pull request");
    expect(requests[2].tools.map((t) => t.name)).toEqual(first);
  });

  it("builds the index from the run's grant only", async () => {
    const requests: ProviderRequest[] = [];
    const provider = createMockProvider([[call("c1", SEARCH_TOOLS_NAME, { query: "gist issue" }), providerDone()], [providerDone()]], { onRequest: (r) => void requests.push(r) });
    const session = createAgent({ model, provider, tools: github, toolsDisclosure: "search" }).createSession();
    await session.run("issue", { toolNames: ["create_issue", "list_issues"] });
    const names = requests.flatMap((r) => r.tools.map((t) => t.name));
    expect(new Set(names)).toEqual(new Set(["create_issue", "list_issues", SEARCH_TOOLS_NAME]));
    expect(session.state().activatedToolNames.every((n) => ["create_issue", "list_issues"].includes(n))).toBe(true);
  });

  it("fails closed to the full grant over the index cap", async () => {
    const many = Array.from({ length: 1100 }, (_, i) => tool(`tool_${i}`));
    const requests: ProviderRequest[] = [];
    const provider = createMockProvider([providerDone()], { onRequest: (r) => void requests.push(r) });
    await createAgent({ model, provider, tools: many, toolsDisclosure: "search" }).createSession().run("tool 5");
    expect(requests[0].tools.length).toBe(1100);
  });
});

describe("stream()", () => {
  it("yields the run's events in order, as @arnilo/prism names them; a refused run throws", async () => {
    const provider = createMockProvider([[providerTextDelta("a"), call("c1", "a"), providerDone()], [providerTextDelta("b"), providerDone()]]);
    const session = createAgent({ model, provider, tools: [tool("a")] }).createSession({ id: "s" });
    const events = await streamEvents(session, "x");
    const turn = ["turn_started", "provider_turn_started", "message_started", "message_delta"];
    const end = ["provider_turn_finished", "message_finished", "turn_finished"];
    expect(events.map((e) => e.type)).toEqual([
      "agent_started",
      ...turn,
      "message_delta",
      ...end,
      "tool_execution_started",
      "tool_execution_finished",
      ...turn,
      ...end,
      "agent_finished",
    ]);
    expect(events.every((e: any) => e.sessionId === "s")).toBe(true);
    expect((events.find((e) => e.type === "message_finished") as any).message.content).toEqual([{ type: "text", text: "a" }, toolCallContent("c1", "a", {})]);
    const seen: AgentEvent[] = [];
    await expect(
      (async () => {
        for await (const e of session.stream("x", { toolNames: ["nope"] })) seen.push(e);
      })(),
    ).rejects.toMatchObject({ code: "unknown_run_tool" });
    expect(seen).toEqual([]);
  });
});

describe("loop strategy", () => {
  it("an unsupported strategy fails closed before any provider turn", async () => {
    let turns = 0;
    const provider = createMockProvider([providerDone()], { onRequest: () => void turns++ });
    await expect(createAgent({ model, provider }).createSession().run("x", { loop: { strategy: "tree-of-thought" } as any })).rejects.toMatchObject({
      code: "unsupported_loop_strategy",
      message: 'loop.strategy "tree-of-thought" is not supported (only "single-shot" or "generate-validate-revise")',
    });
    expect(turns).toBe(0);
  });
});

describe("the run's usage", () => {
  const turns = (usages: object[]) =>
    createMockProvider(usages.map((usage, i) => (i < usages.length - 1 ? [call(`c${i}`, "a"), providerDone(usage as never)] : [providerTextDelta("ok"), providerDone(usage as never)])));

  it("sums every turn's counters in the order they first appeared, and cost while the currency stays the same", async () => {
    const provider = turns([
      { outputTokens: 2, cost: 0.25, currency: "USD" },
      { inputTokens: 5, cacheReadTokens: 1, cost: 0.5, currency: "USD" },
      { inputTokens: 1, outputTokens: 1, totalTokens: 3 },
    ]);
    const result = await createAgent({ model, provider, tools: [tool("a")] }).createSession().run("x");
    expect(JSON.stringify(result.usage)).toBe(JSON.stringify({ outputTokens: 3, totalTokens: 10, cost: 0.75, inputTokens: 6, cacheReadTokens: 1, currency: "USD" }));
  });

  it("drops the cost once a turn reports another currency, and answers no usage when no turn reported any", async () => {
    const mixed = turns([{ inputTokens: 1, cost: 1, currency: "USD" }, { inputTokens: 1, cost: 1, currency: "EUR" }]);
    expect((await createAgent({ model, provider: mixed, tools: [tool("a")] }).createSession().run("x")).usage).toEqual({ inputTokens: 2, totalTokens: 2 });
    const none = createMockProvider([[providerTextDelta("ok"), providerDone()]]);
    expect((await createAgent({ model, provider: none }).createSession().run("x")).usage).toBeUndefined();
  });
});

describe("a run refused before its first turn", () => {
  it("leaves the session free for the next run, and leaves no listener on the caller's signal", async () => {
    const provider = createMockProvider([[providerTextDelta("ok"), providerDone()]]);
    const session = createAgent({ model, provider }).createSession();
    const controller = new AbortController();
    let listeners = 0;
    const add = controller.signal.addEventListener.bind(controller.signal);
    const remove = controller.signal.removeEventListener.bind(controller.signal);
    controller.signal.addEventListener = ((...a: Parameters<AbortSignal["addEventListener"]>) => (listeners++, add(...a))) as AbortSignal["addEventListener"];
    controller.signal.removeEventListener = ((...a: Parameters<AbortSignal["removeEventListener"]>) => (listeners--, remove(...a))) as AbortSignal["removeEventListener"];
    const refusals: [object, string][] = [
      [{ signal: { aborted: false } }, "session.run: signal must be an AbortSignal"],
      [{ signal: controller.signal, metadata: { get tag() { throw new Error("metadata getter") } } }, "metadata getter"],
      [{ signal: controller.signal, redactor: 5 }, "redactor must have a redact(value) method"],
    ];
    for (const [options, message] of refusals) {
      await expect(session.run("x", options as never)).rejects.toThrow(message);
      expect(listeners).toBe(0);
    }
    const result = await session.run("y", { signal: controller.signal });
    expect(result.text).toBe("ok");
    expect(listeners).toBe(0);
  });

  it("a bad subscription option names the method it was given to", async () => {
    const session = createAgent({ model, provider: createMockProvider([[providerTextDelta("ok"), providerDone()]]) }).createSession();
    expect(() => session.subscribe({ overflow: "bogus" as never })).toThrow('subscribe: overflow must be one of "close", "drop_oldest", "drop_newest"');
    const read = async () => {
      for await (const _ of session.stream("x", { maxQueuedEvents: "9" as never })) void _;
    };
    await expect(read()).rejects.toThrow("stream: maxQueuedEvents must be a number");
    expect((await session.run("y")).text).toBe("ok");
  });
});

describe("what provider.generate returns", () => {
  it("an iterable of events (an array, a sync generator, promised events) is read as for await reads it", async () => {
    const shapes = [
      () => [providerTextDelta("a"), providerDone()],
      function* () {
        yield providerTextDelta("a");
        yield providerDone();
      },
      () => [Promise.resolve(providerTextDelta("a")), Promise.resolve(providerDone())],
    ];
    for (const generate of shapes) {
      const provider = { id: "plain", generate: generate as unknown as (r: ProviderRequest) => AsyncIterable<ProviderEvent> };
      expect((await createAgent({ model, provider }).createSession().run("x")).text).toBe("a");
    }
  });

  it("anything else fails the run with an error that names the provider", async () => {
    for (const value of [5, null, undefined, {}]) {
      const provider = { id: "broken", generate: (() => value) as unknown as (r: ProviderRequest) => AsyncIterable<ProviderEvent> };
      const result = await failure(createAgent({ model, provider }).createSession().run("x"));
      expect(result).toMatchObject({ status: "failed", error: { message: "Provider broken: generate() must return an async iterable of provider events" } });
    }
  });
});
