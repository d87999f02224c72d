// The agent's `retry` option against a real HTTP server on 127.0.0.1: which provider turns are asked
// again, how long the run waits (Retry-After, backoff, cap), what it emits, and what ends the waiting.
import { describe, expect, it } from "vitest";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import {
  AgentRunError,
  createAgent,
  createDefaultRetryPolicy,
  createMiddlewareRegistry,
  isTransientErrorInfo,
  waitForRetry,
  type AgentEvent,
  type ToolDefinition,
} from "../index.mjs";
import { createOpenAICompatibleProvider } from "../providers/openai-compatible.mjs";
import { createAnthropicMessagesProvider } from "../providers/anthropic.mjs";
import { serveForTest, sse, type Reply } from "./helpers/sse-server";
import { chunk, usageChunk, DONE } from "./helpers/provider-replies";

const KEY = "sk-retry-test-0123456789";
const model = { provider: "openai-compatible", model: "gpt-test" };

const textReply = (text: string): Reply => ({ chunks: [chunk({ role: "assistant", content: "" }), chunk({ content: text }), chunk({}, "stop"), usageChunk(5, 2), DONE] });
const toolReply: Reply = {
  chunks: [
    chunk({ role: "assistant", content: null }),
    chunk({ tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "add", arguments: '{"a":2,"b":3}' } }] }),
    chunk({}, "tool_calls"),
    usageChunk(9, 4),
    DONE,
  ],
};

function addTool(log: unknown[]): ToolDefinition {
  return {
    name: "add",
    parameters: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"] },
    execute: (args: any, ctx: any) => (log.push(args), { toolCallId: ctx.toolCallId, name: "add", value: { sum: args.a + args.b } }),
  };
}

async function runCollect(agent: ReturnType<typeof createAgent>, options: object = {}) {
  const session = agent.createSession();
  const events: AgentEvent[] = [];
  const sub = session.subscribe();
  const reading = (async () => {
    for await (const e of sub) events.push(e);
  })();
  let result: any;
  let error: any;
  try {
    result = await session.run("add 2 and 3", options as any);
  } catch (err) {
    error = err;
  }
  await reading;
  return { result, error, events };
}

const scheduled = (events: AgentEvent[]) => events.filter((e) => e.type === "retry_scheduled") as any[];

describe("agent retry: provider turns that failed before any output", () => {
  it("waits out a 429's Retry-After, backs off after a 500, then runs the tool and finishes", async () => {
    const server = await serveForTest([
      { status: 429, headers: { "retry-after": "0.05" }, chunks: [`rate limited for ${KEY}`] },
      { status: 500, chunks: ["upstream exploded"] },
      toolReply,
      textReply("The sum is 5."),
    ]);
    const log: unknown[] = [];
    const agent = createAgent({
      model,
      provider: createOpenAICompatibleProvider({ baseUrl: server.url, apiKey: KEY }),
      tools: [addTool(log)],
      retry: { baseDelayMs: 10, maxDelayMs: 1000, jitter: 0, secrets: [KEY] },
    });
    const { result, error, events } = await runCollect(agent);
    expect(error).toBeUndefined();
    expect(result.status).toBe("succeeded");
    expect(result.text).toBe("The sum is 5.");
    expect(log).toEqual([{ a: 2, b: 3 }]); // the tool ran exactly once
    // One request per attempt: the provider does not retry underneath the agent.
    expect(server.requests).toHaveLength(4);
    const retries = scheduled(events);
    expect(retries.map((e) => [e.attempt, e.delayMs, e.error.code])).toEqual([
      [1, 50, 429], // Retry-After: 0.05 s
      [2, 20, 500], // baseDelayMs * 2^(2-1)
    ]);
    expect(JSON.stringify(retries)).not.toContain(KEY);
    expect(retries[0].error.message).toContain("[REDACTED]");
    const attempts = events.filter((e) => e.type === "provider_turn_started").map((e: any) => e.metadata.attempt);
    expect(attempts).toEqual([1, 2, 3, 1]);
    const finished = events.filter((e) => e.type === "provider_turn_finished") as any[];
    expect(finished.map((e) => e.error?.code)).toEqual([429, 500, undefined, undefined]);
    // Usage is counted from the turns that answered, once each.
    expect(result.usage).toEqual({ inputTokens: 14, outputTokens: 6, totalTokens: 20 });
    // The failed attempts left nothing in the transcript: the next request holds the tool result once.
    const msgs = server.requests[3].body.messages;
    expect(msgs.filter((m: any) => m.role === "tool")).toEqual([{ role: "tool", tool_call_id: "call_1", content: expect.stringContaining('"sum":5') }]);
    expect(msgs.filter((m: any) => m.role === "assistant")).toHaveLength(1);
  });

  it("caps a huge Retry-After at maxDelayMs", async () => {
    const server = await serveForTest([{ status: 503, headers: { "retry-after": "3600" }, chunks: ["down"] }, textReply("ok")]);
    const agent = createAgent({ model, provider: createOpenAICompatibleProvider({ baseUrl: server.url }), retry: { baseDelayMs: 1, maxDelayMs: 5, jitter: 0 } });
    const { result, events } = await runCollect(agent);
    expect(result.text).toBe("ok");
    expect(scheduled(events).map((e) => e.delayMs)).toEqual([5]);
  });

  it("an abort during the backoff ends the run as aborted without another request", async () => {
    const server = await serveForTest([{ status: 429, headers: { "retry-after": "60" }, chunks: ["wait a minute"] }, textReply("too late")]);
    const controller = new AbortController();
    const agent = createAgent({ model, provider: createOpenAICompatibleProvider({ baseUrl: server.url }), retry: { maxDelayMs: 120_000, jitter: 0 } });
    const session = agent.createSession();
    const sub = session.subscribe();
    const seen: string[] = [];
    const reading = (async () => {
      for await (const e of sub) {
        seen.push(e.type);
        if (e.type === "retry_scheduled") controller.abort(new Error("user cancelled"));
      }
    })();
    const error: any = await session.run("hi", { signal: controller.signal }).catch((e) => e);
    await reading;
    expect(error).toBeInstanceOf(AgentRunError);
    expect(error.result.status).toBe("aborted");
    expect(error.result.error.message).toContain("user cancelled");
    expect(server.requests).toHaveLength(1);
    expect(seen).toContain("retry_scheduled");
  });

  it("gives up after maxAttempts with the last error and its status", async () => {
    const server = await serveForTest([
      { status: 503, chunks: ["busy"] },
      { status: 502, chunks: ["bad gateway"] },
      { status: 503, chunks: [`still busy, key ${KEY}`] },
      textReply("never asked"),
    ]);
    const agent = createAgent({ model, provider: createOpenAICompatibleProvider({ baseUrl: server.url, apiKey: KEY }), retry: { baseDelayMs: 1, jitter: 0 } });
    const { error, events } = await runCollect(agent);
    expect(error).toBeInstanceOf(AgentRunError);
    expect(error.result.status).toBe("failed");
    expect(error.result.error).toMatchObject({ code: 503, message: expect.stringContaining("still busy") });
    expect(error.result.error.message).not.toContain(KEY);
    expect(server.requests).toHaveLength(3);
    expect(scheduled(events).map((e) => e.error.code)).toEqual([503, 502]);
  });

  it("never retries a turn whose stream already started", async () => {
    const server = await serveForTest([{ chunks: [chunk({ role: "assistant", content: "" }), chunk({ content: "half an ans" })], end: "destroy" }, textReply("second answer")]);
    const agent = createAgent({ model, provider: createOpenAICompatibleProvider({ baseUrl: server.url }), retry: { baseDelayMs: 1, maxAttempts: 5 } });
    const { error, events } = await runCollect(agent);
    expect(error).toBeInstanceOf(AgentRunError);
    expect(error.result.status).toBe("failed");
    expect(server.requests).toHaveLength(1);
    expect(scheduled(events)).toEqual([]);
    expect(events.some((e) => e.type === "message_delta")).toBe(true);
  });

  it("does not retry a 401 or a 400", async () => {
    const server = await serveForTest([{ status: 401, chunks: ["bad key"] }, textReply("never")]);
    const agent = createAgent({ model, provider: createOpenAICompatibleProvider({ baseUrl: server.url }), retry: { baseDelayMs: 1 } });
    const { error, events } = await runCollect(agent);
    expect(error.result.error.code).toBe(401);
    expect(server.requests).toHaveLength(1);
    expect(scheduled(events)).toEqual([]);
  });

  it("retries a refused connection (ECONNREFUSED) before any event", async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, "127.0.0.1", r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const agent = createAgent({ model, provider: createOpenAICompatibleProvider({ baseUrl: `http://127.0.0.1:${port}` }), retry: { maxAttempts: 2, baseDelayMs: 1 } });
    const { error, events } = await runCollect(agent);
    expect(error.result.status).toBe("failed");
    expect(scheduled(events).map((e) => e.error.code)).toEqual(["ECONNREFUSED"]);
    expect(error.result.error.code).toBe("ECONNREFUSED");
  });

  it("the run's retry: false turns the agent's retry off; the run's fields override the agent's", async () => {
    const server = await serveForTest([{ status: 500, chunks: ["x"] }, textReply("from the provider's own retry")]);
    const agent = createAgent({ model, provider: createOpenAICompatibleProvider({ baseUrl: server.url, retry: { initialDelayMs: 1 } }), retry: { baseDelayMs: 1 } });
    const off = await runCollect(agent, { retry: false });
    // With the agent's retry off, the provider keeps its own retry and asks again by itself.
    expect(off.result.text).toBe("from the provider's own retry");
    expect(server.requests).toHaveLength(2);
    expect(scheduled(off.events)).toEqual([]);

    const server2 = await serveForTest([{ status: 500, chunks: ["x"] }, { status: 500, chunks: ["y"] }, textReply("never")]);
    const agent2 = createAgent({ model, provider: createOpenAICompatibleProvider({ baseUrl: server2.url }), retry: { baseDelayMs: 1 } });
    const once = await runCollect(agent2, { retry: { maxAttempts: 2 } });
    expect(once.error.result.error.code).toBe(500);
    expect(server2.requests).toHaveLength(2);
  });

  it("retry middleware sees each decision and can stop retrying; a custom policy gets the context", async () => {
    const server = await serveForTest([{ status: 429, chunks: ["a"] }, { status: 429, chunks: ["b"] }, textReply("never")]);
    const contexts: any[] = [];
    const middleware = createMiddlewareRegistry();
    middleware.use("retry", (payload: any) => (payload.context.attempt >= 2 ? { ...payload, decision: { retry: false } } : payload));
    const agent = createAgent({
      model,
      provider: createOpenAICompatibleProvider({ baseUrl: server.url }),
      middleware,
      retry: { metadata: { tenant: "t1" }, policy: { name: "always", decide: (ctx: any) => (contexts.push(ctx), { retry: true, delayMs: 1 }) } },
    });
    const { error, events } = await runCollect(agent);
    expect(error.result.error.code).toBe(429);
    expect(server.requests).toHaveLength(2);
    expect(scheduled(events)).toHaveLength(1);
    expect(contexts.map((c) => [c.attempt, c.error.code, c.metadata])).toEqual([
      [1, 429, { tenant: "t1" }],
      [2, 429, { tenant: "t1" }],
    ]);
  });

  it("works the same for the Anthropic provider: 429 with Retry-After, then the answer", async () => {
    const ev = (data: { type: string } & Record<string, unknown>) => sse(data, data.type);
    const server = await serveForTest([
      { status: 429, headers: { "retry-after": "0.01" }, chunks: [JSON.stringify({ type: "error", error: { type: "rate_limit_error" } })] },
      {
        chunks: [
          ev({ type: "message_start", message: { id: "msg_1", type: "message", role: "assistant", content: [], usage: { input_tokens: 8, output_tokens: 1 } } }),
          ev({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }),
          ev({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "hello" } }),
          ev({ type: "content_block_stop", index: 0 }),
          ev({ type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 3 } }),
          ev({ type: "message_stop" }),
        ],
      },
    ]);
    const agent = createAgent({
      model: { provider: "anthropic", model: "claude-test" },
      provider: createAnthropicMessagesProvider({ baseUrl: server.url, apiKey: KEY }),
      retry: { jitter: 0 },
    });
    const { result, events } = await runCollect(agent);
    expect(result.text).toBe("hello");
    expect(scheduled(events).map((e) => [e.delayMs, e.error.code])).toEqual([[10, 429]]);
    expect(server.requests).toHaveLength(2);
  });
});

describe("retry helpers", () => {
  it("the default policy: transient errors only, attempts bounded, aborts never retried", () => {
    const policy = createDefaultRetryPolicy({ maxAttempts: 3, baseDelayMs: 100, maxDelayMs: 250, jitter: 0 });
    const ctx = (attempt: number, error: object, signal?: AbortSignal) => ({ sessionId: "s", runId: "r", attempt, error: { message: "x", ...error }, signal });
    expect(policy.decide(ctx(1, { code: 429 }))).toEqual({ retry: true, delayMs: 100 });
    expect(policy.decide(ctx(2, { code: 502 }))).toEqual({ retry: true, delayMs: 200 });
    expect(policy.decide(ctx(2, { code: 429, retryAfterMs: 10_000 }))).toEqual({ retry: true, delayMs: 250 });
    expect(policy.decide(ctx(3, { code: 503 }))).toEqual({ retry: false });
    expect(policy.decide(ctx(1, { code: 400 }))).toEqual({ retry: false });
    expect(policy.decide(ctx(1, { code: 503 }, AbortSignal.abort()))).toEqual({ retry: false });
    expect(isTransientErrorInfo({ message: "Request timeout" })).toBe(true);
    expect(isTransientErrorInfo({ name: "AbortError", message: "aborted", code: 503 })).toBe(false);
    expect(isTransientErrorInfo({ message: "x", code: "ECONNRESET" })).toBe(true);
    expect(isTransientErrorInfo({ message: "invalid request", code: 422 })).toBe(false);
  });

  it("jitter spreads delays within ±jitter of the computed one", () => {
    const low = createDefaultRetryPolicy({ baseDelayMs: 100, jitter: 0.5, random: () => 0 });
    const high = createDefaultRetryPolicy({ baseDelayMs: 100, jitter: 0.5, random: () => 1 });
    const ctx = { sessionId: "s", runId: "r", attempt: 1, error: { message: "x", code: 500 } };
    expect(low.decide(ctx)).toEqual({ retry: true, delayMs: 50 });
    expect(high.decide(ctx)).toEqual({ retry: true, delayMs: 150 });
  });

  it("waitForRetry rejects with the signal's reason when it aborts", async () => {
    const controller = new AbortController();
    const waiting = waitForRetry({ retry: true, delayMs: 60_000 }, controller.signal);
    controller.abort(new Error("stop"));
    await expect(waiting).rejects.toThrow("stop");
    await expect(waitForRetry({ retry: true, delayMs: 0 })).resolves.toBeUndefined();
  });

  it("a malformed retry option is refused before the run starts", async () => {
    const provider = createOpenAICompatibleProvider({ baseUrl: "http://127.0.0.1:9" });
    await expect(createAgent({ model, provider, retry: { policy: {} } as any }).createSession().run("x")).rejects.toThrow(/retry.policy/);
    await expect(createAgent({ model, provider }).createSession().run("x", { retry: 3 } as any)).rejects.toThrow(/retry must be an object/);
  });
});
