// The agent loop as a drop-in for @arnilo/prism's: its provider event protocol, its run
// lifecycle (AgentRunError, one active run, agent_* events, subscribe), its refused options, and
// the hostile-input cases of the loop (redacted provider errors, stuck providers, NaN limits).
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  createAgent,
  createAgentSession,
  createMockProvider,
  createSecretRedactor,
  providerContentDelta,
  providerDone,
  providerTextDelta,
  providerThinkingDelta,
  providerToolCall,
  providerToolCallDelta,
  providerUsage,
  redactAgentEvent,
  redactMessage,
  redactProviderRequest,
  redactSessionEntry,
  toolCallContent,
  AgentRunError,
  ProviderTransportError,
  type AgentEvent,
  type ProviderEvent,
  type ProviderRequest,
  type ToolDefinition,
} from "../index.mjs";
import { runError } from "./helpers/agent.js";

const model = { provider: "mock", model: "demo" };

function counted(name: string, log: string[]): ToolDefinition {
  return {
    name,
    parameters: { type: "object" },
    execute(args, ctx) {
      log.push(`${name}:${ctx.toolCallId}`);
      return { toolCallId: ctx.toolCallId, name, value: { echoed: args } };
    },
  };
}

function reader(iterable: AsyncIterable<AgentEvent>) {
  const events: AgentEvent[] = [];
  const done = (async () => {
    for await (const e of iterable) events.push(e);
    return events;
  })();
  return done;
}

/** A provider whose stream never yields and never watches its signal. */
function stuckProvider(): { id: string; generate(): AsyncIterable<ProviderEvent> } {
  return {
    id: "stuck",
    generate() {
      return { [Symbol.asyncIterator]: () => ({ next: () => new Promise<IteratorResult<ProviderEvent>>(() => {}) }) };
    },
  };
}

describe("provider event protocol (@arnilo/prism's providers)", () => {
  it("deltas, then the assembled call, usage and done: the tool runs once, usage counts once, the model sees the result", async () => {
    const log: string[] = [];
    const requests: ProviderRequest[] = [];
    const usage = { inputTokens: 11, outputTokens: 7, totalTokens: 18 };
    // What an OpenAI-compatible provider yields for one streamed call.
    const turn1: ProviderEvent[] = [
      providerUsage(usage),
      providerTextDelta("Let me check. "),
      providerToolCallDelta({ index: 0, id: "call_1", name: "lookup" }),
      providerToolCallDelta({ index: 0, argumentsText: '{"id":' }),
      providerToolCallDelta({ index: 0, argumentsText: "42}" }),
      providerToolCall(toolCallContent("call_1", "lookup", { id: 42 })),
      providerDone(usage),
    ];
    const turn2: ProviderEvent[] = [providerUsage({ inputTokens: 30, outputTokens: 2 }), providerTextDelta("Found."), providerDone({ inputTokens: 30, outputTokens: 2 })];
    const provider = createMockProvider([turn1, turn2], { onRequest: (r) => void requests.push(r) });
    const session = createAgent({ model, provider, tools: [counted("lookup", log)] }).createSession();
    const result = await session.run("find 42");
    expect(log).toEqual(["lookup:call_1"]);
    expect(result.usage).toEqual({ inputTokens: 41, outputTokens: 9, totalTokens: 50 });
    const toolRow = requests[1].messages.find((m) => m.role === "tool")!;
    expect(toolRow).toEqual({ role: "tool", content: [{ type: "tool_result", toolCallId: "call_1", name: "lookup", result: { echoed: { id: 42 } }, error: undefined }] });
    // The assistant message holds the call once, in @arnilo/prism's content order.
    const assistant = requests[1].messages.find((m) => m.role === "assistant")!;
    expect(assistant.content.filter((c: any) => c.type === "tool_call")).toEqual([toolCallContent("call_1", "lookup", { id: 42 })]);
  });

  it("deltas alone (no assembled call) are rebuilt into one call", async () => {
    const log: string[] = [];
    const provider = createMockProvider([
      [providerToolCallDelta({ index: 0, id: "c1", name: "lookup", argumentsText: '{"a":' }), providerToolCallDelta({ index: 0, argumentsText: "1}" }), providerDone()],
      [providerTextDelta("ok"), providerDone()],
    ]);
    await createAgent({ model, provider, tools: [counted("lookup", log)] }).createSession().run("x");
    expect(log).toEqual(["lookup:c1"]);
  });

  it("L4: a delta with no name fails the turn with incomplete_delta; sibling calls do not run", async () => {
    const log: string[] = [];
    const provider = createMockProvider([
      [
        providerToolCall(toolCallContent("c0", "lookup", {})),
        providerToolCallDelta({ index: 1, id: "c1", name: "lookup", argumentsText: "{}" }),
        providerToolCallDelta({ index: 2, id: "c2", argumentsText: "{}" }),
        providerDone(),
      ],
    ]);
    const session = createAgent({ model, provider, tools: [counted("lookup", log)] }).createSession();
    const events = reader(session.subscribe());
    const err = await runError(session.run("x"));
    expect(err.result.status).toBe("failed");
    expect(err.result.error).toMatchObject({ name: "ProviderTransportError", code: "incomplete_delta", message: "Incomplete tool call delta at index 2" });
    expect(err.cause).toBeDefined();
    expect(log).toEqual([]);
    expect(session.messages().map((m) => m.role)).toEqual(["user"]);
    expect((await events).find((e) => e.type === "provider_turn_finished")).toMatchObject({ error: { code: "incomplete_delta" } });
    expect(new ProviderTransportError("incomplete_delta", "m")).toBeInstanceOf(Error);
  });

  it("thinking and other content blocks are kept in the assistant message; events after done are ignored", async () => {
    const provider = createMockProvider([providerThinkingDelta("plan", "sig"), providerContentDelta({ type: "text", text: "A" }), providerDone(), providerTextDelta("late")]);
    expect(providerThinkingDelta("t", "s")).toEqual({ type: "content_delta", content: { type: "thinking", text: "t", signature: "s" } });
    expect(providerContentDelta({ type: "text", text: "x" })).toEqual({ type: "content_delta", content: { type: "text", text: "x" } });
    const result = await createAgent({ model, provider }).createSession().run("x");
    expect(result.content).toEqual([{ type: "thinking", text: "plan", signature: "sig" }, { type: "text", text: "A" }]);
    expect(result.text).toBe("A");
  });
});

describe("run lifecycle", () => {
  it("L1: a failed run rejects with AgentRunError carrying the result; stream ends the same way after the error event", async () => {
    // A flat list: every turn of every session replays it.
    const provider = createMockProvider([{ type: "error", error: { message: "upstream 500", code: "http_500" } } as ProviderEvent]);
    const agent = createAgent({ model, provider });
    const err = await runError(agent.createSession({ id: "s1" }).run("x"));
    expect(err.name).toBe("AgentRunError");
    expect(err.message).toBe("upstream 500");
    expect(err.result).toMatchObject({ sessionId: "s1", status: "failed", error: { message: "upstream 500", code: "http_500" } });
    const seen: AgentEvent[] = [];
    const thrown = await (async () => {
      try {
        for await (const e of agent.createSession().stream("x")) seen.push(e);
      } catch (e) {
        return e;
      }
    })();
    expect(thrown).toBeInstanceOf(AgentRunError);
    expect(seen[0].type).toBe("agent_started");
    expect(seen.at(-1)).toMatchObject({ type: "error", error: { message: "upstream 500" } });
    expect(seen.some((e) => e.type === "agent_finished")).toBe(false);
  });

  it("L1: an aborted run rejects with AgentRunError, status aborted and the abort reason", async () => {
    const controller = new AbortController();
    controller.abort("user left");
    const err = await runError(createAgent({ model, provider: createMockProvider([providerDone()]) }).createSession().run("x", { signal: controller.signal }));
    expect(err.result).toMatchObject({ status: "aborted", abortReason: "user left" });
  });

  it("L2: a second concurrent run on one session is refused; the first completes", async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const provider = {
      id: "slow",
      async *generate(): AsyncIterable<ProviderEvent> {
        await gate;
        yield providerTextDelta("first");
        yield providerDone();
      },
    };
    const session = createAgent({ model, provider }).createSession();
    const first = session.run("one");
    await expect(session.run("two")).rejects.toThrow(/active run/);
    release();
    expect((await first).text).toBe("first");
    expect(session.messages().filter((m) => m.role === "user")).toHaveLength(1);
    // Once it ended, the session runs again.
    expect((await session.run("three")).text).toBe("first");
  });

  it("L3: RunOptions.maxToolRounds was removed and throws a TypeError", async () => {
    const session = createAgent({ model, provider: createMockProvider([providerDone()]) }).createSession();
    await expect(session.run("x", { maxToolRounds: 2 } as any)).rejects.toThrow(new TypeError("RunOptions.maxToolRounds was removed in 0.1.5; use RunOptions.limits.maxToolRounds instead"));
  });

  it("L7: stream and subscribe start with agent_started and end with agent_finished", async () => {
    const session = createAgent({ model, provider: createMockProvider([providerTextDelta("hi"), providerDone()]) }).createSession({ id: "s7" });
    const types: string[] = [];
    for await (const e of session.stream("x")) types.push(e.type);
    expect(types).toEqual(["agent_started", "turn_started", "provider_turn_started", "message_started", "message_delta", "provider_turn_finished", "message_finished", "turn_finished", "agent_finished"]);
  });

  it("L8: without a provider the run resolves one through providerSource, or fails with Unknown provider", async () => {
    const agent = createAgent({ model: { provider: "acme", model: "m" } });
    const err = await runError(agent.createSession().run("x"));
    expect(err.result.error?.message).toBe("Unknown provider: acme");
    const asked: unknown[] = [];
    const sourced = createAgent({ model, providerSource: (m: unknown) => (asked.push(m), createMockProvider([providerTextDelta("from source"), providerDone()])) });
    expect((await sourced.createSession().run("x")).text).toBe("from source");
    expect(asked).toEqual([model]);
    const perRun = await agent.createSession().run("x", { providerSource: () => createMockProvider([providerTextDelta("per run"), providerDone()]) });
    expect(perRun.text).toBe("per run");
  });

  it("createAgentSession builds the same session as agent.createSession", async () => {
    const agent = createAgent({ model, provider: createMockProvider([providerTextDelta("x"), providerDone()]) });
    const session = createAgentSession({ agent, id: "direct", metadata: { team: "a" } });
    expect(session.id).toBe("direct");
    expect((await session.run("x")).sessionId).toBe("direct");
    expect(() => createAgentSession({} as any)).toThrow(TypeError);
  });
});

describe("session.subscribe()", () => {
  it("sees every event of a run and ends when the run ends", async () => {
    const log: string[] = [];
    const provider = createMockProvider([[providerToolCall(toolCallContent("c1", "t", {})), providerDone()], [providerDone()]]);
    const session = createAgent({ model, provider, tools: [counted("t", log)] }).createSession();
    const events = reader(session.subscribe());
    await session.run("x");
    const types = (await events).map((e) => e.type);
    expect(types[0]).toBe("agent_started");
    expect(types).toContain("tool_execution_finished");
    expect(types.at(-1)).toBe("agent_finished");
  });

  it("overflow close (default) replaces the queue with one event_subscriber_overflow and ends", async () => {
    const provider = createMockProvider([providerTextDelta("a"), providerTextDelta("b"), providerTextDelta("c"), providerDone()]);
    const session = createAgent({ model, provider }).createSession({ id: "so" });
    const sub = session.subscribe({ maxQueuedEvents: 2 });
    await session.run("x");
    const events = await reader(sub);
    expect(events).toEqual([{ type: "event_subscriber_overflow", sessionId: "so", droppedEvents: 3, maxQueuedEvents: 2, overflow: "close" }]);
  });

  it("drop_oldest keeps the newest events; drop_newest the oldest", async () => {
    const provider = createMockProvider([providerTextDelta("a"), providerDone()]);
    const session = createAgent({ model, provider }).createSession();
    const oldest = session.subscribe({ maxQueuedEvents: 2, overflow: "drop_oldest" });
    const newest = session.subscribe({ maxQueuedEvents: 2, overflow: "drop_newest" });
    await session.run("x");
    expect((await reader(oldest)).map((e) => e.type)).toEqual(["turn_finished", "agent_finished"]);
    expect((await reader(newest)).map((e) => e.type)).toEqual(["agent_started", "turn_started"]);
    expect(() => session.subscribe({ overflow: "grow" as any })).toThrow(TypeError);
  });

  it("events reach subscribers through the redactor", async () => {
    const provider = createMockProvider([providerTextDelta("key is sk-9"), providerDone()]);
    const session = createAgent({ model, provider, redactor: createSecretRedactor(["sk-9"]) }).createSession();
    const events = reader(session.subscribe());
    const result = await session.run("x");
    expect(JSON.stringify(await events)).not.toContain("sk-9");
    // As in @arnilo/prism, the result is the host's own (unredacted); the stored transcript is redacted.
    expect(result.text).toBe("key is sk-9");
    expect(JSON.stringify(session.messages())).not.toContain("sk-9");
  });
});

describe("redaction of provider requests and provider errors", () => {
  it("L6: the configured redactor applies to every provider request", async () => {
    const requests: ProviderRequest[] = [];
    const secretTool: ToolDefinition = { name: "vault", description: "uses token tok-123", execute: (_a, ctx) => ({ toolCallId: ctx.toolCallId, name: "vault", value: "tok-123" }) };
    const provider = createMockProvider([[providerToolCall(toolCallContent("c1", "vault", {})), providerDone()], [providerDone()]], { onRequest: (r) => void requests.push(r) });
    const session = createAgent({ model, provider, tools: [secretTool], redactor: createSecretRedactor(["tok-123"]), instructions: "never say tok-123" }).createSession();
    await session.run("my token is tok-123", { metadata: { note: "tok-123" } });
    expect(requests).toHaveLength(2);
    for (const r of requests) {
      expect(JSON.stringify({ ...r, signal: undefined })).not.toContain("tok-123");
      expect(r.signal).toBeInstanceOf(AbortSignal);
      expect(typeof r.tools[0].execute).toBe("function");
    }
  });

  it("issue 12: a provider error event is redacted like a thrown one, in the result and in the error event", async () => {
    const provider = createMockProvider([[{ type: "error", error: { message: "401 invalid key sk-live-4242" } } as ProviderEvent]]);
    const session = createAgent({ model, provider, secrets: ["sk-live-4242"] }).createSession();
    const events = reader(session.subscribe());
    const err = await runError(session.run("x"));
    expect(err.result.error?.message).toBe("401 invalid key [REDACTED]");
    expect(err.message).not.toContain("sk-live-4242");
    expect(JSON.stringify(await events)).not.toContain("sk-live-4242");
    expect((await events).at(-1)).toMatchObject({ type: "error", error: { message: "401 invalid key [REDACTED]" } });
  });

  it("issue 12: a string provider error becomes an ErrorInfo", async () => {
    const provider = createMockProvider([[{ type: "error", error: "503 from sk-live-4242" } as any]]);
    const err = await runError(createAgent({ model, provider, secrets: ["sk-live-4242"] }).createSession().run("x"));
    expect(err.result.error).toMatchObject({ message: "503 from [REDACTED]" });
    expect(typeof err.result.error).toBe("object");
  });

  it("redactAgentEvent / redactProviderRequest / redactMessage / redactSessionEntry take (value, redactor)", () => {
    const r = createSecretRedactor(["pw-1"]);
    const signal = new AbortController().signal;
    expect(redactAgentEvent({ type: "message_delta", content: { type: "text", text: "pw-1" } }, r)).toEqual({ type: "message_delta", content: { type: "text", text: "[REDACTED]" } });
    expect(redactMessage({ role: "user", content: [{ type: "text", text: "pw-1" }] }, r).content[0].text).toBe("[REDACTED]");
    expect(redactSessionEntry({ id: "e1", message: "pw-1" }, r)).toEqual({ id: "e1", message: "[REDACTED]" });
    const req = redactProviderRequest({ model, messages: [{ role: "user", content: [{ type: "text", text: "pw-1" }] }], signal }, r);
    expect(req.signal).toBe(signal);
    expect(JSON.stringify(req.messages)).not.toContain("pw-1");
    const same = { a: 1 };
    expect(redactAgentEvent(same, undefined)).toBe(same);
    expect(() => redactMessage(same, r, {} as any)).toThrow(/field policies/);
  });
});

describe("abort while the provider stream is stuck (issue 12)", () => {
  it("session.abort() settles the run", async () => {
    const session = createAgent({ model, provider: stuckProvider() }).createSession();
    const run = session.run("x");
    await new Promise((r) => setTimeout(r, 5));
    session.abort("enough");
    const err = await runError(run);
    expect(err.result).toMatchObject({ status: "aborted", abortReason: "enough" });
  });

  it("options.signal settles the run", async () => {
    const controller = new AbortController();
    const run = createAgent({ model, provider: stuckProvider() }).createSession().run("x", { signal: controller.signal });
    await new Promise((r) => setTimeout(r, 5));
    controller.abort(new Error("deadline"));
    const err = await runError(run);
    expect(err.result).toMatchObject({ status: "aborted", error: { message: "deadline" } });
  });
});

describe("createMockProvider and the abort signal (T8)", () => {
  it("an already-aborted signal throws the abort reason instead of yielding", async () => {
    const controller = new AbortController();
    const reason = new Error("stop");
    controller.abort(reason);
    const events: ProviderEvent[] = [];
    const run = async () => {
      for await (const e of createMockProvider([providerDone()]).generate({ model, messages: [], tools: [], signal: controller.signal, metadata: {} } as any)) events.push(e);
    };
    await expect(run()).rejects.toBe(reason);
    expect(events).toEqual([]);
  });
});

describe("limits refuse NaN (issue 12)", () => {
  it("limits.maxToolRounds, limits.maxTurns and loop.toolConcurrency refuse NaN like 0.5", async () => {
    const session = createAgent({ model, provider: createMockProvider([providerDone()]) }).createSession();
    for (const options of [{ limits: { maxToolRounds: NaN } }, { limits: { maxTurns: NaN } }, { loop: { toolConcurrency: NaN } }, { limits: { maxToolRounds: 0.5 } }]) {
      // Upstream's class (TypeError) and message for limits; the loop's own option keeps its RangeError.
      await expect(session.run("x", options as any)).rejects.toMatchObject({ name: options.loop ? "RangeError" : "TypeError", code: "invalid_run_limits" });
    }
    await expect(createAgent({ model, provider: createMockProvider([providerDone()]), limits: { maxToolRounds: NaN } }).createSession().run("x")).rejects.toMatchObject({ code: "invalid_run_limits" });
  });
});

describe("upstream options this package does not implement are refused", () => {
  const doc = readFileSync(new URL("../docs/agent.md", import.meta.url), "utf8");
  const config = ["context", "skills", "activateAllSkills", "skillsDisclosure", "inputBuilder", "promptBuilder", "resourceLoader", "store", "providerOptions", "providerRequestPolicies", "systemPrompt", "idempotencyKey", "compaction", "instructionInjectors", "inputLayout", "secure"];
  const run = ["providerOptions", "providerRequestPolicies", "systemPrompt", "compaction", "idempotencyKey", "activeSkills", "skills", "activateAllSkills", "skillsDisclosure", "instructionInjectors", "inputLayout"];

  it("createAgent refuses each by name, with code unsupported_agent_option; the docs table lists it", () => {
    const provider = createMockProvider([providerDone()]);
    for (const option of config) {
      expect(() => createAgent({ model, provider, [option]: {} } as any), option).toThrow(new RegExp(`option "${option}"`));
      expect(() => createAgent({ model, provider, [option]: {} } as any)).toThrow(expect.objectContaining({ code: "unsupported_agent_option", option }));
      expect(doc, option).toContain(`| \`${option}\` | refused`);
    }
    // `false` is upstream's "disabled" and is accepted.
    expect(() => createAgent({ model, provider, retry: false, compaction: false } as any)).not.toThrow();
  });

  it("session.run refuses each before any provider turn; input/output guardrails too", async () => {
    let turns = 0;
    const provider = createMockProvider([providerDone()], { onRequest: () => void turns++ });
    const agent = createAgent({ model, provider });
    for (const option of run) {
      await expect(agent.createSession().run("x", { [option]: {} } as any), option).rejects.toMatchObject({ code: "unsupported_agent_option", option });
      expect(doc, option).toContain(`| \`${option}\` | refused`);
    }
    await expect(agent.createSession().run("x", { guardrails: { input: [{ name: "g", check: () => ({ action: "allow" }) }] } } as any)).rejects.toMatchObject({ option: "guardrails.input" });
    expect(() => createAgent({ model, provider, guardrails: { output: [{}] } } as any)).toThrow(/guardrails.output/);
    expect(() => agent.createSession({ store: {} } as any)).toThrow(/option "store"/);
    expect(turns).toBe(0);
  });
});
