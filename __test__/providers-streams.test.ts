// Provider streams as loose servers send them, and errors that quote nothing a server sent
// (issue 27 items 8-11, issue 29 item 4). Every server is a real HTTP server on 127.0.0.1.
import { createServer as createTcpServer } from "node:net";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { createAgent, type ProviderEvent, type ToolDefinition } from "../index.mjs";
import { createOpenAICompatibleProvider } from "../providers/openai-compatible.mjs";
import { createAnthropicMessagesProvider } from "../providers/anthropic.mjs";
import { serveForTest, sse, type Reply } from "./helpers/sse-server";
import { chunk, DONE } from "./helpers/provider-replies";

const KEY = "sk-live-ABCDEFGHIJ0123456789";
const model = { provider: "openai-compatible", model: "m" };

const piece = (p: { index?: number; id?: string; name?: string; args?: string }) =>
  chunk({
    tool_calls: [
      {
        ...(p.index !== undefined ? { index: p.index } : {}),
        ...(p.id ? { id: p.id, type: "function" } : {}),
        function: { ...(p.name !== undefined ? { name: p.name } : {}), ...(p.args !== undefined ? { arguments: p.args } : {}) },
      },
    ],
  });
const toolReply = (pieces: string[]): Reply => ({ chunks: [chunk({ role: "assistant", content: null }), ...pieces, chunk({}, "tool_calls"), DONE] });
const textReply = (text: string): Reply => ({ chunks: [chunk({ content: text }), chunk({}, "stop"), DONE] });

function echoTool(log: unknown[]): ToolDefinition {
  return {
    name: "echo",
    parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
    execute: (args: any, ctx: any) => (log.push([ctx.toolCallId, args]), { toolCallId: ctx.toolCallId, name: "echo", value: { said: args.text } }),
  };
}

async function collect(provider: { generate(r: any): AsyncIterable<ProviderEvent> }, request: object = {}) {
  const out: ProviderEvent[] = [];
  for await (const e of provider.generate({ model, messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }], ...request })) out.push(e);
  return out;
}
const callsOf = (out: ProviderEvent[]) => out.filter((e) => e.type === "tool_call").map((e: any) => e.call);

describe("OpenAI-compatible stream assembly (issue 27 item 8)", () => {
  it("keeps two calls streamed without index apart, keyed by id", async () => {
    const server = await serveForTest([
      toolReply([
        piece({ id: "call_a", name: "echo", args: "" }),
        piece({ args: '{"text":' }),
        piece({ args: '"one"}' }),
        piece({ id: "call_b", name: "echo", args: '{"text":"two"}' }),
      ]),
    ]);
    const out = await collect(createOpenAICompatibleProvider({ baseUrl: server.url }));
    expect(callsOf(out)).toEqual([
      { type: "tool_call", id: "call_a", name: "echo", arguments: { text: "one" } },
      { type: "tool_call", id: "call_b", name: "echo", arguments: { text: "two" } },
    ]);
  });

  it("keeps two calls apart when a server numbers both index 0", async () => {
    const server = await serveForTest([toolReply([piece({ index: 0, id: "call_a", name: "echo", args: '{"text":"one"}' }), piece({ index: 0, id: "call_b", name: "echo", args: '{"text":"two"}' })])]);
    const out = await collect(createOpenAICompatibleProvider({ baseUrl: server.url }));
    expect(callsOf(out).map((c: any) => [c.id, c.name, c.arguments])).toEqual([
      ["call_a", "echo", { text: "one" }],
      ["call_b", "echo", { text: "two" }],
    ]);
  });

  it("does not concatenate a name repeated in every chunk, nor one resent whole", async () => {
    const server = await serveForTest([
      toolReply([
        piece({ index: 0, id: "call_a", name: "echo", args: '{"te' }),
        piece({ index: 0, id: "call_a", name: "echo", args: 'xt":"x"}' }),
        piece({ index: 1, id: "call_b", name: "ec", args: "" }),
        piece({ index: 1, name: "echo", args: '{"text":"y"}' }),
        piece({ index: 1, name: "echo" }),
      ]),
    ]);
    const out = await collect(createOpenAICompatibleProvider({ baseUrl: server.url }));
    expect(callsOf(out).map((c: any) => [c.id, c.name, c.arguments])).toEqual([
      ["call_a", "echo", { text: "x" }],
      ["call_b", "echo", { text: "y" }],
    ]);
    // Each delta carries the name assembled so far, so a consumer that replaces names reads "echo".
    expect(out.filter((e: any) => e.type === "tool_call_delta" && e.name !== undefined).map((e: any) => e.name)).toEqual(["echo", "echo", "ec", "echo", "echo"]);
  });

  it("runs both calls of such a stream through an agent, each once", async () => {
    const server = await serveForTest([
      toolReply([piece({ id: "call_a", name: "echo", args: '{"text":"one"}' }), piece({ id: "call_b", name: "echo" }), piece({ name: "echo", args: '{"text":"two"}' })]),
      textReply("done"),
    ]);
    const log: unknown[] = [];
    const session = createAgent({ model, provider: createOpenAICompatibleProvider({ baseUrl: server.url }), tools: [echoTool(log)] }).createSession();
    const result = await session.run("go");
    expect(result.status).toBe("succeeded");
    expect(log).toEqual([
      ["call_a", { text: "one" }],
      ["call_b", { text: "two" }],
    ]);
    const tail = server.requests[1].body.messages.slice(-3);
    expect(tail[0].tool_calls.map((c: any) => [c.id, c.function.name])).toEqual([
      ["call_a", "echo"],
      ["call_b", "echo"],
    ]);
    expect(tail.slice(1).map((m: any) => m.tool_call_id)).toEqual(["call_a", "call_b"]);
  });
});

const ev = (data: { type: string } & Record<string, unknown>) => sse(data, data.type);
const anthropicReply = (blocks: string[]): Reply => ({
  chunks: [
    ev({ type: "message_start", message: { id: "msg_1", usage: { input_tokens: 5, output_tokens: 0 } } }),
    ...blocks,
    ev({ type: "message_delta", delta: { stop_reason: "tool_use" }, usage: { output_tokens: 9 } }),
    ev({ type: "message_stop" }),
  ],
});
const toolUse = (index: number | undefined, id: string, input: object, partial?: string[]) => {
  const at = index === undefined ? {} : { index };
  return [
    ev({ type: "content_block_start", ...at, content_block: { type: "tool_use", id, name: "echo", input } }),
    ...(partial ?? []).map((p) => ev({ type: "content_block_delta", ...at, delta: { type: "input_json_delta", partial_json: p } })),
    ev({ type: "content_block_stop", ...at }),
  ];
};

describe("Anthropic tool_use assembly (issue 27 item 9)", () => {
  it("keeps two tool_use blocks at the same index, in order", async () => {
    const server = await serveForTest([anthropicReply([...toolUse(0, "toolu_a", {}, ['{"text":', '"one"}']), ...toolUse(0, "toolu_b", {}, ['{"text":"two"}'])])]);
    const out = await collect(createAnthropicMessagesProvider({ baseUrl: server.url }));
    expect(callsOf(out).map((c: any) => [c.id, c.arguments])).toEqual([
      ["toolu_a", { text: "one" }],
      ["toolu_b", { text: "two" }],
    ]);
  });

  it("keeps two tool_use blocks without index", async () => {
    const server = await serveForTest([anthropicReply([...toolUse(undefined, "toolu_a", {}, ['{"text":"one"}']), ...toolUse(undefined, "toolu_b", {}, ['{"text":"two"}'])])]);
    const out = await collect(createAnthropicMessagesProvider({ baseUrl: server.url }));
    expect(callsOf(out).map((c: any) => [c.id, c.arguments])).toEqual([
      ["toolu_a", { text: "one" }],
      ["toolu_b", { text: "two" }],
    ]);
  });

  it("uses a start block's whole input when no delta follows, through an agent", async () => {
    const server = await serveForTest([
      anthropicReply([ev({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }), ev({ type: "content_block_stop", index: 0 }), ...toolUse(1, "toolu_a", { text: "whole" })]),
      {
        chunks: [
          ev({ type: "message_start", message: { id: "msg_2", usage: { input_tokens: 5, output_tokens: 0 } } }),
          ev({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }),
          ev({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "ok" } }),
          ev({ type: "content_block_stop", index: 0 }),
          ev({ type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 1 } }),
          ev({ type: "message_stop" }),
        ],
      },
    ]);
    const log: unknown[] = [];
    const session = createAgent({ model: { provider: "anthropic", model: "claude" }, provider: createAnthropicMessagesProvider({ baseUrl: server.url }), tools: [echoTool(log)] }).createSession();
    const result = await session.run("go");
    expect(result.status).toBe("succeeded");
    expect(log).toEqual([["toolu_a", { text: "whole" }]]);
  });
});

describe("hostile pieces", () => {
  it("OpenAI-compatible: junk pieces are skipped, a call without a name fails the turn as incomplete_delta", async () => {
    const server = await serveForTest([
      {
        chunks: [
          chunk({ tool_calls: [null, "x", { index: 0, id: "call_a", function: "not-an-object" }, { index: 0, function: { name: "echo", arguments: '{"text":"a"}' } }] }),
          chunk({ tool_calls: [{ index: -1, id: "call_b", function: { arguments: "{}" } }] }),
          chunk({}, "tool_calls"),
          DONE,
        ],
      },
    ]);
    const out = await collect(createOpenAICompatibleProvider({ baseUrl: server.url }));
    expect(out.at(-1)).toEqual({ type: "error", error: expect.objectContaining({ code: "incomplete_delta", message: "Incomplete tool call delta at index 1" }) });
    expect(callsOf(out)).toEqual([]);
  });

  it("OpenAI-compatible: a null or non-object choice, or choices that are not an array, are skipped (found by fuzz/js/openai-stream)", async () => {
    const raw = (data: object) => `data: ${JSON.stringify(data)}\n\n`;
    const server = await serveForTest([
      {
        chunks: [
          raw({ choices: [null] }),
          raw({ choices: { 0: { delta: { content: "x" } } } }),
          raw({ choices: [7, { delta: { content: "ok" } }] }),
          chunk({}, "stop"),
          DONE,
        ],
      },
    ]);
    const out = await collect(createOpenAICompatibleProvider({ baseUrl: server.url }));
    expect(out.filter((e) => e.type === "error")).toEqual([]);
    expect(out.filter((e) => e.type === "content_delta").map((e: any) => e.content.text)).toEqual(["ok"]);
    expect(out.at(-1)).toMatchObject({ type: "done" });
  });

  it("Anthropic: an input_json_delta outside any tool_use block fails the turn, never joins another call", async () => {
    const server = await serveForTest([
      anthropicReply([
        ev({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }),
        ev({ type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json: '{"text":"smuggled"}' } }),
        ev({ type: "content_block_stop", index: 0 }),
      ]),
    ]);
    const out = await collect(createAnthropicMessagesProvider({ baseUrl: server.url }));
    expect(out.at(-1)).toEqual({ type: "error", error: expect.objectContaining({ code: "incomplete_delta", message: expect.stringContaining("outside a tool_use block") }) });
    expect(callsOf(out)).toEqual([]);
  });

  it("Anthropic: a content_block_start without a content_block is not a call", async () => {
    const server = await serveForTest([anthropicReply([ev({ type: "content_block_start", index: 0, content_block: null }), ev({ type: "content_block_stop", index: 0 }), ...toolUse(1, "toolu_a", { text: "x" })])]);
    const out = await collect(createAnthropicMessagesProvider({ baseUrl: server.url }));
    expect(callsOf(out).map((c: any) => [c.id, c.arguments])).toEqual([["toolu_a", { text: "x" }]]);
  });
});

describe("errors that quote nothing the server sent (issue 27 item 10)", () => {
  it("a malformed JSON chunk is named by position and kind, never by its bytes (OpenAI-compatible)", async () => {
    const server = await serveForTest([{ chunks: [`data: {"echo": ${KEY} }\n\n`, DONE] }]);
    const out = await collect(createOpenAICompatibleProvider({ baseUrl: server.url, apiKey: "another-key-entirely" }));
    const error = (out.at(-1) as any).error;
    expect(error.message).toMatch(/malformed JSON/);
    expect(error.message).toContain("unexpected character where a value was expected at position 9");
    expect(error.code).toBe("malformed_json");
    for (let i = 0; i + 4 <= KEY.length; i++) expect(error.message).not.toContain(KEY.slice(i, i + 4));
  });

  it("a malformed JSON event is named by position and kind, never by its bytes (Anthropic)", async () => {
    const server = await serveForTest([{ chunks: [`event: message_start\ndata: {"type":"message_start","x":"${KEY}\n\n`] }]);
    const out = await collect(createAnthropicMessagesProvider({ baseUrl: server.url }));
    const error = (out.at(-1) as any).error;
    expect(error.message).toMatch(/malformed JSON in an event: unterminated string at position \d+/);
    for (let i = 0; i + 4 <= KEY.length; i++) expect(error.message).not.toContain(KEY.slice(i, i + 4));
  });
});

describe("endpoint URLs and transport errors (issue 27 item 11, issue 29 item 4)", () => {
  it("refuses a baseUrl with user:password@ at creation, without repeating the password", () => {
    for (const create of [
      () => createOpenAICompatibleProvider({ baseUrl: "http://alice:hunter2-pw@127.0.0.1:9/v1" }),
      () => createAnthropicMessagesProvider({ baseUrl: "http://alice:hunter2-pw@127.0.0.1:9/v1" }),
    ]) {
      let caught: any;
      try {
        create();
      } catch (e) {
        caught = e;
      }
      expect(caught).toBeInstanceOf(TypeError);
      expect(caught.code).toBe("ERR_PRISM_INVALID_OPTION");
      expect(caught.message).toContain("must not embed credentials");
      expect(caught.message).toContain("http://127.0.0.1:9/v1");
      expect(caught.message).not.toContain("hunter2");
      expect(caught.message).not.toContain("alice");
    }
  });

  it("refuses a computed chatCompletionsUrl with userinfo in an error event without the password", async () => {
    const provider = createOpenAICompatibleProvider({ chatCompletionsUrl: () => "http://bob:s3cret-pass@127.0.0.1:9/chat" } as any);
    const out = await collect(provider);
    expect(out).toHaveLength(1);
    expect(JSON.stringify(out)).not.toContain("s3cret");
    expect((out[0] as any).error.code).toBe("ERR_PRISM_INVALID_OPTION");
  });

  it("refuses a baseUrl without a scheme, or not http(s), at creation", () => {
    expect(() => createOpenAICompatibleProvider({ baseUrl: "127.0.0.1:8080/v1" })).toThrow(/not an absolute URL/);
    expect(() => createOpenAICompatibleProvider({ baseUrl: "ftp://127.0.0.1/v1" })).toThrow(/must use http: or https:/);
    expect(() => createAnthropicMessagesProvider({ baseUrl: "localhost" })).toThrow(expect.objectContaining({ code: "ERR_PRISM_INVALID_OPTION" }));
  });

  it("a refused connection names the method, the URL and the cause, and is not retried by the provider", async () => {
    const closed = createTcpServer();
    await new Promise<void>((r) => closed.listen(0, "127.0.0.1", r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    let attempts = 0;
    const counting: typeof fetch = (input, init) => (attempts++, fetch(input, init));
    const out = await collect(createOpenAICompatibleProvider({ baseUrl: `http://127.0.0.1:${port}/v1`, fetch: counting }));
    const error = (out.at(-1) as any).error;
    expect(error.code).toBe("ECONNREFUSED");
    expect(error.message).toContain(`POST http://127.0.0.1:${port}/v1/chat/completions`);
    expect(error.message).toContain("connection refused");
    expect(attempts).toBe(1);
  });

  it("a TLS failure names the cause and is not retried", async () => {
    const server = await serveForTest([textReply("never")]);
    let attempts = 0;
    const counting: typeof fetch = (input, init) => (attempts++, fetch(input, init));
    const out = await collect(createAnthropicMessagesProvider({ baseUrl: server.url.replace("http:", "https:"), fetch: counting }));
    const error = (out.at(-1) as any).error;
    expect(error.message).toContain(`POST ${server.url.replace("http:", "https:")}/messages: TLS failure`);
    expect(attempts).toBe(1);
  });

  it("timeoutMs bounds each attempt until the headers: a silent server times out, named, after the retries", async () => {
    // Requests that arrived (undici may open a spare connection that never carries one).
    let requests = 0;
    const silent = createTcpServer((socket) => {
      socket.once("data", () => requests++);
      socket.on("error", () => {});
    });
    await new Promise<void>((r) => silent.listen(0, "127.0.0.1", r));
    const port = (silent.address() as AddressInfo).port;
    try {
      const out = await collect(createOpenAICompatibleProvider({ baseUrl: `http://127.0.0.1:${port}/v1`, timeoutMs: 250, retry: { maxAttempts: 2, initialDelayMs: 1 } }));
      const error = (out.at(-1) as any).error;
      expect(error.code).toBe("timeout");
      expect(error.message).toBe(`OpenAI-compatible request failed: POST http://127.0.0.1:${port}/v1/chat/completions: timeout: no response headers within 250 ms`);
      expect(requests).toBe(2);
    } finally {
      silent.close();
    }
    expect(() => createAnthropicMessagesProvider({ timeoutMs: 0 })).toThrow(expect.objectContaining({ code: "ERR_PRISM_INVALID_OPTION" }));
    expect(() => createOpenAICompatibleProvider({ baseUrl: "http://127.0.0.1:9", timeoutMs: "5" as any })).toThrow(/timeoutMs must be a positive number/);
  });

  it("a connection closed before any answer is retried and then succeeds", async () => {
    const server = await serveForTest([{ chunks: [], end: "destroy" }, textReply("second time")]);
    const out = await collect(createOpenAICompatibleProvider({ baseUrl: server.url, retry: { initialDelayMs: 1 } }));
    expect(out.filter((e) => e.type === "content_delta").map((e: any) => e.content.text).join("")).toBe("second time");
    expect(server.requests).toHaveLength(2);
  });
});

describe("the JSON fault locator agrees with JSON.parse", () => {
  it("answers a fault exactly for the texts JSON.parse refuses (seeded corpus of mutated JSON)", async () => {
    const { locateJsonFault } = await import("../lib/providers/wire-errors.js" as any);
    let seed = 0x2f6e2b1;
    const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) >>> 0) % n);
    const alphabet = ['{', '}', '[', ']', '"', ':', ',', '\\', 'u', '0', '1', '-', '.', 'e', 'E', '+', 't', 'n', 'f', ' ', '\n', '\u0001', 'a', 'é'];
    const bases = [`{"a":[1,2.5e3,-0,true,false,null],"b":{"c":"d\\n\\u00e9"}}`, `[[[]],{},"x"]`, `-12.5E+3`, `"s\\"t"`, `{"k":{"k":{"k":[{}]}}}`];
    let faults = 0;
    for (let i = 0; i < 20000; i++) {
      const chars = [...bases[rand(bases.length)]];
      for (let m = rand(3); m >= 0; m--) {
        const at = rand(chars.length + 1);
        const op = rand(3);
        if (op === 0) chars.splice(at, 1);
        else if (op === 1) chars.splice(at, 0, alphabet[rand(alphabet.length)]);
        else chars[at] = alphabet[rand(alphabet.length)];
      }
      const text = chars.join("");
      let ok = true;
      try {
        JSON.parse(text);
      } catch {
        ok = false;
      }
      const fault = locateJsonFault(text);
      expect(fault === undefined, text).toBe(ok);
      if (fault) {
        faults++;
        expect(fault.position).toBeGreaterThanOrEqual(0);
        expect(fault.position).toBeLessThanOrEqual(text.length);
      }
    }
    expect(faults).toBeGreaterThan(1000);
    expect(locateJsonFault("[".repeat(100000))).toEqual({ position: 100000, kind: "unexpected end of input" });
  });
});
