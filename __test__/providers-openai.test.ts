import { describe, expect, it } from "vitest";
import { createAgent, type ProviderEvent, type ToolDefinition } from "../index.mjs";
import { createOpenAICompatibleProvider } from "../providers/openai-compatible.mjs";
import { serializeOpenAITool, toOpenAITools } from "../providers/openai.mjs";
import { serveForTest, sse, type Reply } from "./helpers/sse-server";
import { chunk, usageChunk, DONE, tools } from "./helpers/provider-replies";

const KEY = "sk-test-0123456789abcdef";
const model = { provider: "openai-compatible", model: "gpt-test" };

const textReply = (text: string, usage = true): Reply => ({
  chunks: [chunk({ role: "assistant", content: "" }), ...text.split(" ").map((w, i) => chunk({ content: (i ? " " : "") + w })), chunk({}, "stop"), ...(usage ? [usageChunk(7, 3)] : []), DONE],
});
const tc = (index: number, fields: { id?: string; name?: string; args?: string }) =>
  chunk({ tool_calls: [{ index, ...(fields.id ? { id: fields.id, type: "function" } : {}), function: { ...(fields.name !== undefined ? { name: fields.name } : {}), ...(fields.args !== undefined ? { arguments: fields.args } : {}) } }] });

// Three parallel calls: interleaved indexes, a name split in two, arguments split mid-string and mid-escape.
const parallelReply: Reply = {
  chunks: [
    chunk({ role: "assistant", content: null }),
    tc(0, { id: "call_a", name: "read", args: "" }),
    tc(1, { id: "call_b", name: "lookup", args: '{"q":"tab\\' }),
    tc(0, { name: "_file", args: '{"path":"a\\"b' }),
    tc(2, { id: "call_c", name: "lookup", args: '{"q":"\\u00' }),
    tc(1, { args: 'tx"}' }),
    tc(0, { args: '.txt"}' }),
    tc(2, { args: 'e9t\u00e9"}' }),
    chunk({}, "tool_calls"),
    usageChunk(20, 9),
    DONE,
  ],
};

async function events(provider: ReturnType<typeof createOpenAICompatibleProvider>, request: object = {}) {
  const out: ProviderEvent[] = [];
  for await (const e of provider.generate({ model, messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }], ...request } as any)) out.push(e);
  return out;
}

describe("createOpenAICompatibleProvider: the event stream", () => {
  it("streams text deltas, counts the usage chunk once and ends with done and the finish reason", async () => {
    const server = await serveForTest([textReply("hello there world")]);
    const provider = createOpenAICompatibleProvider({ baseUrl: server.url, apiKey: KEY });
    const out = await events(provider, { tools: tools([]) });
    expect(out.filter((e) => e.type === "content_delta").map((e: any) => e.content.text).join("")).toBe("hello there world");
    expect(out.filter((e) => e.type === "usage")).toEqual([{ type: "usage", usage: { inputTokens: 7, outputTokens: 3, totalTokens: 10 } }]);
    expect(out.at(-1)).toEqual({ type: "done", usage: { inputTokens: 7, outputTokens: 3, totalTokens: 10 }, stopReason: "stop" });
    const req = server.requests[0];
    expect(req.url).toBe("/chat/completions");
    expect(req.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(req.body).toMatchObject({ model: "gpt-test", stream: true, stream_options: { include_usage: true }, messages: [{ role: "user", content: "hi" }] });
    expect(req.body.tools).toEqual(tools([]).map(serializeOpenAITool));
  });

  it("reassembles three interleaved parallel tool calls with split names, strings and escapes", async () => {
    const server = await serveForTest([parallelReply]);
    const out = await events(createOpenAICompatibleProvider({ baseUrl: server.url }));
    const calls = out.filter((e) => e.type === "tool_call").map((e: any) => e.call);
    expect(calls).toEqual([
      { type: "tool_call", id: "call_a", name: "read_file", arguments: { path: 'a"b.txt' } },
      { type: "tool_call", id: "call_b", name: "lookup", arguments: { q: "tab\tx" } },
      { type: "tool_call", id: "call_c", name: "lookup", arguments: { q: "\u00e9t\u00e9" } },
    ]);
    // Every piece also arrives as a tool_call_delta, before the assembled calls.
    const deltas = out.filter((e) => e.type === "tool_call_delta") as any[];
    expect(deltas.map((d) => d.index)).toEqual([0, 1, 0, 2, 1, 0, 2]);
    expect(out.findIndex((e) => e.type === "tool_call")).toBeGreaterThan(out.findLastIndex((e) => e.type === "tool_call_delta"));
    expect(out.at(-1)).toMatchObject({ type: "done", stopReason: "tool_calls" });
    expect(server.requests[0].headers.authorization).toBeUndefined();
  });

  it("answers a 401 with an error event whose message keeps the status but not the echoed key", async () => {
    const server = await serveForTest([{ status: 401, headers: { "content-type": "application/json" }, chunks: [JSON.stringify({ error: { message: `Incorrect API key provided: ${KEY}` } })] }]);
    const out = await events(createOpenAICompatibleProvider({ baseUrl: server.url, apiKey: () => KEY }));
    expect(out).toHaveLength(1);
    const error = (out[0] as any).error;
    expect(error.message).toContain("401");
    expect(error.message).toContain("Incorrect API key");
    expect(JSON.stringify(out)).not.toContain(KEY);
    expect(error.code).toBe(401);
    expect(server.requests).toHaveLength(1); // 401 is not retried
  });

  it("retries a 429 after its Retry-After and a 500, then streams the answer", async () => {
    const server = await serveForTest([
      { status: 429, headers: { "retry-after": "0" }, chunks: ["slow down"] },
      { status: 500, chunks: ["upstream exploded"] },
      textReply("ok"),
    ]);
    const out = await events(createOpenAICompatibleProvider({ baseUrl: server.url, retry: { initialDelayMs: 1 } }));
    expect(out.filter((e) => e.type === "content_delta").map((e: any) => e.content.text).join("")).toBe("ok");
    expect(server.requests).toHaveLength(3);
  });

  it("stops retrying at maxAttempts and reports the last status", async () => {
    const server = await serveForTest([
      { status: 503, chunks: ["busy"] },
      { status: 503, chunks: ["still busy"] },
    ]);
    const out = await events(createOpenAICompatibleProvider({ baseUrl: server.url, retry: { maxAttempts: 2, initialDelayMs: 1 } }));
    expect(out).toEqual([{ type: "error", error: expect.objectContaining({ code: 503, message: expect.stringContaining("still busy") }) }]);
    expect(server.requests).toHaveLength(2);
  });

  it("uses mapHttpError, authStyle api-key, extraHeaders and chatCompletionsUrl", async () => {
    const server = await serveForTest([{ status: 400, chunks: ["bad"] }]);
    const out = await events(
      createOpenAICompatibleProvider({
        id: "azure",
        baseUrl: "http://unused.invalid",
        chatCompletionsUrl: `${server.url}/deployments/x/chat/completions?api-version=1`,
        apiKey: KEY,
        authStyle: "api-key",
        extraHeaders: () => ({ "x-tenant": "t1" }),
        mapHttpError: (response, body) => Object.assign(new Error(`mapped ${response.status} ${body}`), { code: "mapped" }),
      }),
    );
    expect(out).toEqual([{ type: "error", error: expect.objectContaining({ message: "mapped 400 bad", code: "mapped" }) }]);
    expect(server.requests[0].url).toBe("/deployments/x/chat/completions?api-version=1");
    expect(server.requests[0].headers["api-key"]).toBe(KEY);
    expect(server.requests[0].headers["x-tenant"]).toBe("t1");
  });

  it("turns a stream cut mid-event into an error, never a done", async () => {
    const server = await serveForTest([{ chunks: [chunk({ content: "par" }), 'data: {"id":"c","choices":[{"index":0,"delta":{"content":"ti'], end: "destroy" }]);
    const out = await events(createOpenAICompatibleProvider({ baseUrl: server.url, retry: false }));
    expect(out.some((e) => e.type === "done")).toBe(false);
    expect(out.at(-1)!.type).toBe("error");
  });

  it("turns a stream that ends without [DONE] into an error naming what is missing", async () => {
    const server = await serveForTest([{ chunks: [chunk({ content: "partial" })] }]);
    const out = await events(createOpenAICompatibleProvider({ baseUrl: server.url }));
    expect((out.at(-1) as any).error.message).toContain("[DONE]: missing");
  });

  it("ends a stalled stream when the signal aborts", async () => {
    const server = await serveForTest([{ chunks: [chunk({ content: "thinking..." })], end: "stall" }]);
    const controller = new AbortController();
    const provider = createOpenAICompatibleProvider({ baseUrl: server.url });
    const out: ProviderEvent[] = [];
    for await (const e of provider.generate({ model, messages: [], signal: controller.signal } as any)) {
      out.push(e);
      if (e.type === "content_delta") controller.abort();
    }
    expect(out.at(-1)).toEqual({ type: "error", error: expect.objectContaining({ code: "aborted" }) });
  });

  it("rejects at once on an already-aborted signal, sending nothing", async () => {
    const server = await serveForTest([textReply("never")]);
    const controller = new AbortController();
    controller.abort(new Error("stop now"));
    await expect(events(createOpenAICompatibleProvider({ baseUrl: server.url }), { signal: controller.signal })).rejects.toThrow("stop now");
    expect(server.requests).toHaveLength(0);
  });

  it("bounds the streamed response size", async () => {
    const server = await serveForTest([{ chunks: Array.from({ length: 20 }, () => chunk({ content: "x".repeat(500) })) }]);
    const out = await events(createOpenAICompatibleProvider({ baseUrl: server.url, maxResponseBytes: 4096 }));
    expect(out.at(-1)).toEqual({ type: "error", error: expect.objectContaining({ code: "response_body_overflow" }) });
  });

  it("answers malformed JSON in an event with an error event", async () => {
    const server = await serveForTest([{ chunks: ["data: {not json\n\n", DONE] }]);
    const out = await events(createOpenAICompatibleProvider({ baseUrl: server.url }));
    expect(out).toEqual([{ type: "error", error: expect.objectContaining({ message: expect.stringContaining("malformed JSON") }) }]);
  });

  it("streams reasoning as thinking deltas and maps usage with mapUsage", async () => {
    const server = await serveForTest([{ chunks: [chunk({ reasoning_content: "hmm" }), chunk({ content: "yes" }, "stop"), sse({ choices: [], usage: { in: 1, out: 2 } }), DONE] }]);
    const out = await events(createOpenAICompatibleProvider({ baseUrl: server.url, mapUsage: (u: any) => ({ inputTokens: u.in, outputTokens: u.out }) }));
    expect(out[0]).toEqual({ type: "content_delta", content: { type: "thinking", text: "hmm" } });
    expect(out.filter((e) => e.type === "usage")).toEqual([{ type: "usage", usage: { inputTokens: 1, outputTokens: 2 } }]);
  });

  it("refuses bad options at construction", () => {
    expect(() => createOpenAICompatibleProvider(undefined as any)).toThrow(TypeError);
    expect(() => createOpenAICompatibleProvider({ baseUrl: "x", authStyle: "cookie" as any })).toThrow(/authStyle/);
  });
});

describe("createOpenAICompatibleProvider through createAgent", () => {
  it("runs a text-only transcript and counts usage once", async () => {
    const server = await serveForTest([textReply("all done")]);
    const session = createAgent({ model, provider: createOpenAICompatibleProvider({ baseUrl: server.url, apiKey: KEY }), tools: tools([]) }).createSession();
    const result = await session.run("hello");
    expect(result.status).toBe("succeeded");
    expect(result.text).toBe("all done");
    expect(result.usage).toMatchObject({ inputTokens: 7, outputTokens: 3, totalTokens: 10 });
  });

  it("runs one tool call: the tool executes once and its result reaches the next request as a tool message", async () => {
    const server = await serveForTest([
      { chunks: [tc(0, { id: "call_1", name: "read_file", args: '{"path":"notes.md"}' }), chunk({}, "tool_calls"), usageChunk(10, 5), DONE] },
      textReply("read it"),
    ]);
    const log: Array<[string, unknown]> = [];
    const session = createAgent({ model, provider: createOpenAICompatibleProvider({ baseUrl: server.url }), tools: tools(log) }).createSession();
    const result = await session.run("read notes");
    expect(result.status).toBe("succeeded");
    expect(log).toEqual([["read_file", { path: "notes.md" }]]);
    const second = server.requests[1].body.messages;
    expect(second.at(-2)).toEqual({ role: "assistant", content: "", tool_calls: [{ id: "call_1", type: "function", function: { name: "read_file", arguments: '{"path":"notes.md"}' } }] });
    expect(second.at(-1)).toEqual({ role: "tool", tool_call_id: "call_1", content: JSON.stringify({ text: "contents of notes.md" }) });
    expect(result.usage).toMatchObject({ inputTokens: 17, outputTokens: 8, totalTokens: 25 });
  });

  it("runs three parallel calls: each tool executes exactly once and all results reach the next request", async () => {
    const server = await serveForTest([parallelReply, textReply("done")]);
    const log: Array<[string, unknown]> = [];
    const session = createAgent({ model, provider: createOpenAICompatibleProvider({ baseUrl: server.url }), tools: tools(log) }).createSession();
    const result = await session.run("go");
    expect(result.status).toBe("succeeded");
    expect(log).toEqual([
      ["read_file", { path: 'a"b.txt' }],
      ["lookup", { q: "tab\tx" }],
      ["lookup", { q: "\u00e9t\u00e9" }],
    ]);
    const tail = server.requests[1].body.messages.slice(-3);
    expect(tail.map((m: any) => [m.role, m.tool_call_id])).toEqual([
      ["tool", "call_a"],
      ["tool", "call_b"],
      ["tool", "call_c"],
    ]);
    expect(JSON.parse(tail[1].content)).toEqual({ hits: 5 });
    expect(result.usage).toMatchObject({ inputTokens: 27, outputTokens: 12 });
  });

  it("fails the run on a 401 without leaking the key", async () => {
    const server = await serveForTest([{ status: 401, chunks: [`bad key ${KEY}`] }]);
    const session = createAgent({ model, provider: createOpenAICompatibleProvider({ baseUrl: server.url, apiKey: KEY }) }).createSession();
    const result = await session.run("x").catch((e: any) => e.result);
    expect(result.status).toBe("failed");
    expect(JSON.stringify(result)).not.toContain(KEY);
  });

  it("fails the run on a stream cut mid-event: the half-sent call never runs", async () => {
    const server = await serveForTest([{ chunks: [chunk({ role: "assistant", content: null }), tc(0, { id: "call_a", name: "lookup", args: '{"q":"x' }), 'data: {"id":"c","choi'], end: "destroy" }]);
    const log: Array<[string, unknown]> = [];
    const session = createAgent({ model, provider: createOpenAICompatibleProvider({ baseUrl: server.url }), tools: tools(log) }).createSession();
    const result = await session.run("x").catch((e: any) => e.result);
    expect(result.status).toBe("failed");
    expect(log).toEqual([]);
  });

  it("aborts a run whose stream stalls", async () => {
    const server = await serveForTest([{ chunks: [chunk({ content: "wait" })], end: "stall" }]);
    const controller = new AbortController();
    const session = createAgent({ model, provider: createOpenAICompatibleProvider({ baseUrl: server.url }) }).createSession();
    const run = session.run("x", { signal: controller.signal }).catch((e: any) => e.result);
    setTimeout(() => controller.abort(), 50);
    const result = await run;
    expect(result.status).toBe("aborted");
  });
});

describe("tool definitions for OpenAI", () => {
  const t: ToolDefinition = {
    name: "search",
    description: "Search",
    parameters: { type: "object", properties: { q: { type: "string", minLength: 1 }, limit: { type: "integer" } }, required: ["q"], additionalProperties: true },
    execute: () => ({ toolCallId: "", name: "search" }),
  };
  it("serializes tools as function entries", () => {
    expect(toOpenAITools([t])).toEqual([{ type: "function", function: { name: "search", description: "Search", parameters: t.parameters } }]);
    expect(serializeOpenAITool({ name: "bare" } as any)).toEqual({ type: "function", function: { name: "bare", description: undefined, parameters: { type: "object" } } });
  });
  it("strict mode closes objects, makes optional fields nullable-required and reports what it dropped", () => {
    const { tools: out, dropped } = toOpenAITools([t], { strict: true }) as any;
    expect(out[0].function.strict).toBe(true);
    expect(out[0].function.parameters).toEqual({
      type: "object",
      properties: { q: { type: "string" }, limit: { type: ["integer", "null"] } },
      required: ["q", "limit"],
      additionalProperties: false,
    });
    expect(dropped).toEqual([
      { tool: "search", path: "/properties/q", keyword: "minLength", reason: "not supported in strict mode" },
      { tool: "search", path: "", keyword: "additionalProperties", reason: "strict mode closes every object" },
    ]);
    expect(() => toOpenAITools({} as any)).toThrow(TypeError);
  });
  it("strict mode stops at a bounded depth on a deep schema", () => {
    let deep: any = { type: "string" };
    for (let i = 0; i < 200; i++) deep = { type: "array", items: deep };
    const { dropped } = toOpenAITools([{ name: "d", parameters: { type: "object", properties: { x: deep } } } as any], { strict: true }) as any;
    expect(dropped.some((d: any) => d.keyword === "(depth)")).toBe(true);
  });
});

describe("an apiKey that never resolves", () => {
  for (const which of ["openai-compatible", "anthropic"] as const) {
    it(`does not hold a direct generate() past its signal (${which})`, async () => {
      const { createAnthropicMessagesProvider } = await import("../providers/anthropic.mjs");
      const apiKey = () => new Promise<string>(() => {}); // a key vault that never answers
      const provider =
        which === "anthropic"
          ? createAnthropicMessagesProvider({ baseUrl: "http://127.0.0.1:9", apiKey })
          : createOpenAICompatibleProvider({ baseUrl: "http://127.0.0.1:9", apiKey });
      const controller = new AbortController();
      const events: ProviderEvent[] = [];
      const run = (async () => {
        for await (const e of provider.generate({ model: { provider: "p", model: "m" }, messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }], signal: controller.signal } as never)) events.push(e);
      })();
      setTimeout(() => controller.abort(), 20);
      await run; // ends: before the fix, this never settled
      expect(events.at(-1), JSON.stringify(events)).toMatchObject({ type: "error", error: { code: "aborted" } });
    });
  }
});
