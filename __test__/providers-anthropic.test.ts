import { describe, expect, it } from "vitest";
import { createAgent, type ProviderEvent } from "../index.mjs";
import { createAnthropicMessagesProvider, toAnthropicTools } from "../providers/anthropic.mjs";
import { serveForTest, sse, type Reply } from "./helpers/sse-server";
import { tools } from "./helpers/provider-replies";

const KEY = "sk-ant-test-0123456789";
const model = { provider: "anthropic", model: "claude-test" };

const ev = (data: { type: string } & Record<string, unknown>) => sse(data, data.type);
const start = (input: number) => ev({ type: "message_start", message: { id: "msg_1", type: "message", role: "assistant", content: [], usage: { input_tokens: input, output_tokens: 1 } } });
const stop = (reason: string, output: number) => [ev({ type: "message_delta", delta: { stop_reason: reason }, usage: { output_tokens: output } }), ev({ type: "message_stop" })];
const textBlock = (index: number, text: string) => [
  ev({ type: "content_block_start", index, content_block: { type: "text", text: "" } }),
  ...text.split(" ").map((w, i) => ev({ type: "content_block_delta", index, delta: { type: "text_delta", text: (i ? " " : "") + w } })),
  ev({ type: "content_block_stop", index }),
];
const toolStart = (index: number, id: string, name: string) => ev({ type: "content_block_start", index, content_block: { type: "tool_use", id, name, input: {} } });
const json = (index: number, partial: string) => ev({ type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: partial } });
const blockStop = (index: number) => ev({ type: "content_block_stop", index });
const textReply = (text: string): Reply => ({ chunks: [start(11), ev({ type: "ping" }), ...textBlock(0, text), ...stop("end_turn", 4)] });
const parallelReply: Reply = {
  chunks: [
    start(30),
    ev({ type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "" } }),
    ev({ type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "three lookups" } }),
    blockStop(0),
    toolStart(1, "toolu_a", "read_file"),
    json(1, '{"path":"a\\"b'),
    json(1, '.txt"}'),
    blockStop(1),
    toolStart(2, "toolu_b", "lookup"),
    json(2, '{"q":"tab\\'),
    json(2, 'tx"}'),
    blockStop(2),
    toolStart(3, "toolu_c", "lookup"),
    json(3, '{"q":"\\u00'),
    json(3, 'e9t\u00e9"}'),
    blockStop(3),
    ...stop("tool_use", 40),
  ],
};

async function events(provider: ReturnType<typeof createAnthropicMessagesProvider>, request: object = {}) {
  const out: ProviderEvent[] = [];
  const messages = [
    { role: "system", content: [{ type: "text", text: "be brief" }] },
    { role: "user", content: [{ type: "text", text: "hi" }] },
  ];
  for await (const e of provider.generate({ model, messages, ...request } as any)) out.push(e);
  return out;
}

describe("createAnthropicMessagesProvider: the event stream", () => {
  it("streams text and joins message_start's input tokens with message_delta's output tokens", async () => {
    const server = await serveForTest([textReply("hello there")]);
    const out = await events(createAnthropicMessagesProvider({ baseUrl: server.url, apiKey: KEY }), { tools: tools([]) });
    expect(out.filter((e) => e.type === "content_delta").map((e: any) => e.content.text).join("")).toBe("hello there");
    const usage = { inputTokens: 11, outputTokens: 4, totalTokens: 15 };
    expect(out.filter((e) => e.type === "usage")).toEqual([{ type: "usage", usage }]);
    expect(out.at(-1)).toEqual({ type: "done", usage, stopReason: "end_turn" });
    const req = server.requests[0];
    expect(req.url).toBe("/messages");
    expect(req.headers["x-api-key"]).toBe(KEY);
    expect(req.headers["anthropic-version"]).toBe("2023-06-01");
    expect(req.body).toMatchObject({ model: "claude-test", stream: true, max_tokens: 4096, system: "be brief", messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }] });
    expect(req.body.tools).toEqual(toAnthropicTools(tools([])));
  });

  it("reassembles tool_use blocks from input_json_delta split mid-string and mid-escape, with thinking", async () => {
    const server = await serveForTest([parallelReply]);
    const out = await events(createAnthropicMessagesProvider({ baseUrl: server.url }));
    expect(out[0]).toEqual({ type: "content_delta", content: { type: "thinking", text: "three lookups" } });
    expect(out.filter((e) => e.type === "tool_call").map((e: any) => e.call)).toEqual([
      { type: "tool_call", id: "toolu_a", name: "read_file", arguments: { path: 'a"b.txt' } },
      { type: "tool_call", id: "toolu_b", name: "lookup", arguments: { q: "tab\tx" } },
      { type: "tool_call", id: "toolu_c", name: "lookup", arguments: { q: "\u00e9t\u00e9" } },
    ]);
    expect(out.at(-1)).toEqual({ type: "done", usage: { inputTokens: 30, outputTokens: 40, totalTokens: 70 }, stopReason: "tool_use" });
  });

  it("answers a 401 echoing the key with a redacted error", async () => {
    const server = await serveForTest([{ status: 401, chunks: [JSON.stringify({ type: "error", error: { type: "authentication_error", message: `invalid x-api-key ${KEY}` } })] }]);
    const out = await events(createAnthropicMessagesProvider({ baseUrl: server.url, apiKey: KEY }));
    expect(out).toHaveLength(1);
    expect((out[0] as any).error).toMatchObject({ code: 401, message: expect.stringContaining("authentication_error") });
    expect(JSON.stringify(out)).not.toContain(KEY);
  });

  it("retries 429 (Retry-After) and 529/500, then streams", async () => {
    const server = await serveForTest([
      { status: 429, headers: { "retry-after": "0" }, chunks: ["rate limited"] },
      { status: 529, chunks: ["overloaded"] },
      textReply("fine"),
    ]);
    const out = await events(createAnthropicMessagesProvider({ baseUrl: server.url, retry: { initialDelayMs: 1, maxAttempts: 3 } }));
    expect(out.at(-1)).toMatchObject({ type: "done" });
    expect(server.requests).toHaveLength(3);
  });

  it("turns a stream cut mid-event or missing message_stop into an error", async () => {
    const server = await serveForTest([{ chunks: [start(3), toolStart(0, "toolu_x", "lookup"), 'event: content_block_delta\ndata: {"type":"content_block_delta","ind'], end: "destroy" }]);
    const out = await events(createAnthropicMessagesProvider({ baseUrl: server.url, retry: false }));
    expect(out.some((e) => e.type === "done" || e.type === "tool_call")).toBe(false);
    expect(out.at(-1)!.type).toBe("error");
  });

  it("answers an in-stream error event with an error", async () => {
    const server = await serveForTest([{ chunks: [start(3), ev({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } })] }]);
    const out = await events(createAnthropicMessagesProvider({ baseUrl: server.url }));
    expect(out.at(-1)).toEqual({ type: "error", error: expect.objectContaining({ code: "overloaded_error" }) });
  });

  it("ends a stalled stream when the signal aborts", async () => {
    const server = await serveForTest([{ chunks: [start(3), ...textBlock(0, "partial")], end: "stall" }]);
    const controller = new AbortController();
    const out: ProviderEvent[] = [];
    for await (const e of createAnthropicMessagesProvider({ baseUrl: server.url }).generate({ model, messages: [], signal: controller.signal } as any)) {
      out.push(e);
      if (e.type === "content_delta") controller.abort();
    }
    expect(out.at(-1)).toEqual({ type: "error", error: expect.objectContaining({ code: "aborted" }) });
  });
});

describe("createAnthropicMessagesProvider through createAgent", () => {
  it("runs three parallel tool_use blocks: each tool executes once, results go back in one user message", async () => {
    const server = await serveForTest([parallelReply, textReply("done")]);
    const log: Array<[string, unknown]> = [];
    const session = createAgent({ model, provider: createAnthropicMessagesProvider({ baseUrl: server.url, apiKey: KEY }), tools: tools(log) }).createSession();
    const result = await session.run("go");
    expect(result.status).toBe("succeeded");
    expect(log).toEqual([
      ["read_file", { path: 'a"b.txt' }],
      ["lookup", { q: "tab\tx" }],
      ["lookup", { q: "\u00e9t\u00e9" }],
    ]);
    const messages = server.requests[1].body.messages;
    expect(messages.at(-2).role).toBe("assistant");
    expect(messages.at(-2).content.filter((b: any) => b.type === "tool_use").map((b: any) => b.id)).toEqual(["toolu_a", "toolu_b", "toolu_c"]);
    expect(messages.at(-1)).toEqual({
      role: "user",
      content: [
        { type: "tool_result", tool_use_id: "toolu_a", content: JSON.stringify({ text: 'contents of a"b.txt' }) },
        { type: "tool_result", tool_use_id: "toolu_b", content: JSON.stringify({ hits: 5 }) },
        { type: "tool_result", tool_use_id: "toolu_c", content: JSON.stringify({ hits: 3 }) },
      ],
    });
    expect(result.usage).toMatchObject({ inputTokens: 41, outputTokens: 44 });
  });

  it("runs a text-only transcript and counts usage once", async () => {
    const server = await serveForTest([textReply("hi")]);
    const result = await createAgent({ model, provider: createAnthropicMessagesProvider({ baseUrl: server.url }) }).createSession().run("x");
    expect(result.text).toBe("hi");
    expect(result.usage).toMatchObject({ inputTokens: 11, outputTokens: 4, totalTokens: 15 });
  });

  it("fails the run on a 401 echoing the key without leaking it", async () => {
    const server = await serveForTest([{ status: 401, chunks: [JSON.stringify({ type: "error", error: { type: "authentication_error", message: `invalid x-api-key ${KEY}` } })] }]);
    const session = createAgent({ model, provider: createAnthropicMessagesProvider({ baseUrl: server.url, apiKey: KEY }) }).createSession();
    const result = await session.run("x").catch((e: any) => e.result);
    expect(result.status).toBe("failed");
    expect(result.error.code).toBe(401);
    expect(JSON.stringify(result)).not.toContain(KEY);
  });

  it("fails the run on a stream cut mid-event: no tool runs, no answer is kept", async () => {
    const server = await serveForTest([{ chunks: [start(5), toolStart(0, "toolu_a", "lookup"), json(0, '{"q":"x'), 'event: content_block_delta\ndata: {"type":"content_bl'], end: "destroy" }]);
    const log: Array<[string, unknown]> = [];
    const session = createAgent({ model, provider: createAnthropicMessagesProvider({ baseUrl: server.url }), tools: tools(log) }).createSession();
    const result = await session.run("x").catch((e: any) => e.result);
    expect(result.status).toBe("failed");
    expect(log).toEqual([]);
    expect(server.requests).toHaveLength(1);
  });

  it("aborts a run whose stream stalls", async () => {
    const server = await serveForTest([{ chunks: [start(3), ...textBlock(0, "partial")], end: "stall" }]);
    const controller = new AbortController();
    const session = createAgent({ model, provider: createAnthropicMessagesProvider({ baseUrl: server.url }) }).createSession();
    const sub = session.subscribe();
    const run = session.run("x", { signal: controller.signal }).catch((e: any) => e.result);
    for await (const e of sub) if (e.type === "message_delta") controller.abort();
    const result = await run;
    expect(result.status).toBe("aborted");
  });
});

describe("toAnthropicTools", () => {
  it("maps parameters to input_schema and refuses a non-array", () => {
    expect(toAnthropicTools([{ name: "a", description: "d", parameters: { type: "object" } } as any])).toEqual([{ name: "a", description: "d", input_schema: { type: "object" } }]);
    expect(toAnthropicTools([{ name: "b" } as any])).toEqual([{ name: "b", input_schema: { type: "object" } }]);
    expect(() => toAnthropicTools(null as any)).toThrow(TypeError);
  });
});
