// Event shapes one handler can read: `toolName` on every `tool_execution_*` event (upstream's own
// fields kept), and `@arnilo/prism`'s provider-turn metadata (`providerId`, `attempt`, `requestId`,
// `latencyMs`, `httpStatus`).
import { describe, expect, it } from "vitest";
import {
  createAgent,
  createMockProvider,
  createToolRegistry,
  dispatchToolCall,
  providerDone,
  providerTextDelta,
  providerToolCall,
  toolCallContent,
  type AgentEvent,
  type AIProvider,
} from "../index.mjs";

const model = { provider: "mock", model: "demo" };

async function eventsOf(session: { subscribe(): AsyncIterable<AgentEvent> }, run: () => Promise<unknown>): Promise<AgentEvent[]> {
  const out: AgentEvent[] = [];
  const reading = (async () => {
    for await (const e of session.subscribe()) out.push(e);
  })();
  await run().catch(() => undefined);
  await reading;
  return out;
}

describe("tool_execution_* events carry toolName", () => {
  it("started, progress, finished, error and blocked, beside upstream's fields", async () => {
    const registry = createToolRegistry([
      {
        name: "echo",
        execute(_args, ctx) {
          ctx.progress?.({ step: 1 });
          return { toolCallId: ctx.toolCallId, name: "echo", value: "ok" };
        },
      },
      {
        name: "boom",
        execute() {
          throw new Error("fail");
        },
      },
    ]);
    const events: any[] = [];
    const emit = (e: AgentEvent) => void events.push(e);
    for (const [id, name] of [["c1", "echo"], ["c2", "boom"], ["c3", "missing"]]) {
      await dispatchToolCall({
        call: { type: "tool_call", id: id!, name: name!, arguments: {} },
        registry,
        context: { sessionId: "s1", runId: "r1", toolCallId: id! },
        emit,
      });
    }
    const byType = (t: string) => events.filter((e) => e.type === t);
    expect(byType("tool_execution_started").map((e) => [e.toolName, e.call.name])).toEqual([
      ["echo", "echo"],
      ["boom", "boom"],
    ]);
    expect(byType("tool_execution_progress").map((e) => [e.toolName, e.name, e.progress])).toEqual([["echo", "echo", { step: 1 }]]);
    expect(byType("tool_execution_finished").map((e) => [e.toolName, e.result.name])).toEqual([["echo", "echo"]]);
    expect(byType("tool_execution_error").map((e) => [e.toolName, e.call.name, e.error.message])).toEqual([["boom", "boom", "fail"]]);
    const blocked = byType("tool_execution_blocked");
    expect(blocked.map((e) => [e.toolName, e.name, e.toolCallId, e.reason])).toEqual([["missing", "missing", "c3", "unknown_tool"]]);
    // Every tool event of the three calls names its tool.
    const toolEvents = events.filter((e) => String(e.type).startsWith("tool_execution_"));
    expect(toolEvents.length).toBe(6);
    expect(toolEvents.every((e) => typeof e.toolName === "string" && e.toolName.length > 0)).toBe(true);
  });

  it("in an agent run", async () => {
    const provider = createMockProvider([
      [providerToolCall(toolCallContent("c1", "echo", {})), providerDone()],
      [providerTextDelta("done"), providerDone()],
    ]);
    const session = createAgent({
      model,
      provider,
      tools: [{ name: "echo", execute: (_a: unknown, ctx: any) => ({ toolCallId: ctx.toolCallId, name: "echo", value: 1 }) }],
    }).createSession();
    const events = await eventsOf(session, () => session.run("go"));
    const tools = events.filter((e) => e.type.startsWith("tool_execution_")) as any[];
    expect(tools.map((e) => [e.type, e.toolName])).toEqual([
      ["tool_execution_started", "echo"],
      ["tool_execution_finished", "echo"],
    ]);
  });
});

describe("provider-turn events carry upstream's metadata", () => {
  it("providerId, attempt, requestId on both; latencyMs on provider_turn_finished", async () => {
    const session = createAgent({
      model,
      provider: createMockProvider([providerTextDelta("hi"), providerDone({ inputTokens: 1, outputTokens: 2 })]),
    }).createSession();
    const events = await eventsOf(session, () => session.run("hello", { metadata: { requestId: "req_42" } }));
    const started = events.find((e) => e.type === "provider_turn_started") as any;
    const finished = events.find((e) => e.type === "provider_turn_finished") as any;
    expect(started.metadata).toMatchObject({ providerId: "mock", attempt: 1, requestId: "req_42", model });
    expect(started.metadata.latencyMs).toBeUndefined();
    expect(finished.metadata).toMatchObject({ providerId: "mock", attempt: 1, requestId: "req_42", model });
    expect(Number.isInteger(finished.metadata.latencyMs) && finished.metadata.latencyMs >= 0).toBe(true);
    expect(finished.metadata.httpStatus).toBeUndefined();
    expect(finished.usage).toEqual({ inputTokens: 1, outputTokens: 2 });
  });

  it("a run without a requestId has none", async () => {
    const session = createAgent({ model, provider: createMockProvider([providerTextDelta("hi"), providerDone()]) }).createSession();
    const events = await eventsOf(session, () => session.run("hello"));
    const finished = events.find((e) => e.type === "provider_turn_finished") as any;
    expect("requestId" in finished.metadata).toBe(false);
  });

  it("a failed turn with a numeric code reports httpStatus; each retry attempt is numbered", async () => {
    let calls = 0;
    const provider: AIProvider = {
      id: "flaky",
      async *generate() {
        calls += 1;
        if (calls === 1) {
          yield { type: "error", error: { message: "unavailable", code: 503 } } as any;
          return;
        }
        yield providerTextDelta("ok");
        yield providerDone();
      },
    };
    const session = createAgent({ model, provider }).createSession();
    const events = await eventsOf(session, () =>
      session.run("go", { retry: { maxAttempts: 2, initialDelayMs: 0, maxDelayMs: 0 } } as any),
    );
    const finished = events.filter((e) => e.type === "provider_turn_finished") as any[];
    expect(finished.map((e) => [e.metadata.providerId, e.metadata.attempt, e.metadata.httpStatus, e.error?.message])).toEqual([
      ["flaky", 1, 503, "unavailable"],
      ["flaky", 2, undefined, undefined],
    ]);
    expect(events.filter((e) => e.type === "provider_turn_started").map((e: any) => e.metadata.attempt)).toEqual([1, 2]);
  });
});
