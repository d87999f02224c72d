// What the providers send (issue 29 items 1, 2, 3 and 5): the tool choice, one parameter vocabulary,
// requests every OpenAI-compatible server accepts, and one text part per streamed assistant text.
// Request bodies are asserted on a real HTTP server on 127.0.0.1.
import { describe, expect, it } from "vitest";
import { createAgent, type ToolDefinition } from "../index.mjs";
import { buildOpenAIChatBody, createOpenAICompatibleProvider } from "../providers/openai-compatible.mjs";
import { anthropicMessagesBody, createAnthropicMessagesProvider } from "../providers/anthropic.mjs";
import { serveForTest, sse, type Reply } from "./helpers/sse-server";
import { chunk, DONE } from "./helpers/provider-replies";


const oaModel = { provider: "openai-compatible", model: "m" };
const anModel = { provider: "anthropic", model: "claude" };
const oaText = (text: string): Reply => ({ chunks: [...text.split(" ").map((w, i) => chunk({ content: (i ? " " : "") + w })), chunk({}, "stop"), DONE] });
const oaCall = (id: string, name: string, args: string): Reply => ({
  chunks: [chunk({ tool_calls: [{ index: 0, id, type: "function", function: { name, arguments: args } }] }), chunk({}, "tool_calls"), DONE],
});
const ev = (data: { type: string } & Record<string, unknown>) => sse(data, data.type);
const anText = (text: string): Reply => ({
  chunks: [
    ev({ type: "message_start", message: { id: "msg", usage: { input_tokens: 1, output_tokens: 0 } } }),
    ev({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }),
    ...text.split(" ").map((w, i) => ev({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: (i ? " " : "") + w } })),
    ev({ type: "content_block_stop", index: 0 }),
    ev({ type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 2 } }),
    ev({ type: "message_stop" }),
  ],
});

function tool(name: string, log: unknown[] = []): ToolDefinition {
  return {
    name,
    parameters: { type: "object", properties: { q: { type: "string" } } },
    execute: (args: any, ctx: any) => (log.push([name, args]), { toolCallId: ctx.toolCallId, name, value: { ok: true } }),
  };
}

describe("toolChoice (issue 29 item 1)", () => {
  it("carries the agent's toolChoice to the OpenAI-compatible request, the run's winning, and stops forcing after the forced call", async () => {
    const server = await serveForTest([oaText("a"), oaCall("call_1", "lookup", '{"q":"x"}'), oaText("done"), oaText("b")]);
    const log: unknown[] = [];
    const agent = createAgent({ model: oaModel, provider: createOpenAICompatibleProvider({ baseUrl: server.url }), tools: [tool("lookup", log), tool("other")], toolChoice: "required" });
    const session = agent.createSession();
    await session.run("one");
    const second = await session.run("two", { toolChoice: { type: "tool", name: "lookup" } });
    expect(second.status).toBe("succeeded");
    expect(log).toEqual([["lookup", { q: "x" }]]);
    await session.run("three", { toolChoice: "none" });
    const sent = server.requests.map((r) => r.body.tool_choice);
    // Run 1: the agent's "required"; run 2: the named tool, then nothing after the tool round; run 3: "none".
    expect(sent).toEqual(["required", { type: "function", function: { name: "lookup" } }, undefined, "none"]);
  });

  it("maps each choice for Anthropic: auto, none, any, tool", async () => {
    const server = await serveForTest([anText("a"), anText("b"), anText("c"), anText("d")]);
    const session = createAgent({ model: anModel, provider: createAnthropicMessagesProvider({ baseUrl: server.url }), tools: [tool("lookup")] }).createSession();
    for (const toolChoice of ["auto", "none", "required", { type: "tool", name: "lookup" }] as const) await session.run("x", { toolChoice });
    expect(server.requests.map((r) => r.body.tool_choice)).toEqual([{ type: "auto" }, { type: "none" }, { type: "any" }, { type: "tool", name: "lookup" }]);
  });

  it("fails the run before any request when the named tool is not active", async () => {
    const server = await serveForTest([oaText("never")]);
    const session = createAgent({ model: oaModel, provider: createOpenAICompatibleProvider({ baseUrl: server.url }), tools: [tool("lookup")] }).createSession();
    const result = await session.run("x", { toolChoice: { type: "tool", name: "wipe" } }).catch((e: any) => e.result);
    expect(result.status).toBe("failed");
    expect(result.error.code).toBe("ERR_PRISM_INVALID_OPTION");
    expect(result.error.message).toContain('toolChoice names tool "wipe", which is not active this turn (active tools: lookup)');
    expect(server.requests).toHaveLength(0);
  });

  it("refuses a toolChoice of the wrong shape at createAgent and at run", async () => {
    const provider = createOpenAICompatibleProvider({ baseUrl: "http://127.0.0.1:9" });
    for (const bad of ["any", { type: "function", name: "x" }, { type: "tool" }, { type: "tool", name: "" }, 3, null]) {
      expect(() => createAgent({ model: oaModel, provider, toolChoice: bad as any })).toThrow(expect.objectContaining({ code: "ERR_PRISM_INVALID_OPTION" }));
    }
    const session = createAgent({ model: oaModel, provider }).createSession();
    await expect(session.run("x", { toolChoice: "always" as any })).rejects.toThrow(/session.run: toolChoice must be "auto", "none", "required" or \{ type: "tool", name \}/);
  });
});

describe("one parameter vocabulary (issue 29 item 2)", () => {
  const parameters = { maxTokens: 100, temperature: 0, topP: 0.5, stopSequences: ["END"], seed: 7, presencePenalty: 0.1, frequencyPenalty: 0.2, top_k: 5, logprobs: true };

  it("maps the shared names to Chat Completions fields and passes other keys as written", async () => {
    const server = await serveForTest([oaText("ok")]);
    await createAgent({ model: { ...oaModel, parameters }, provider: createOpenAICompatibleProvider({ baseUrl: server.url }) }).createSession().run("x");
    const body = server.requests[0].body;
    expect(body).toMatchObject({ max_tokens: 100, temperature: 0, top_p: 0.5, stop: ["END"], seed: 7, presence_penalty: 0.1, frequency_penalty: 0.2, top_k: 5, logprobs: true });
    for (const k of ["maxTokens", "topP", "stopSequences", "presencePenalty", "frequencyPenalty"]) expect(body).not.toHaveProperty(k);
  });

  it("maps them to Messages API fields; settings Anthropic lacks are not sent", async () => {
    const server = await serveForTest([anText("ok")]);
    await createAgent({ model: { ...anModel, parameters }, provider: createAnthropicMessagesProvider({ baseUrl: server.url }) }).createSession().run("x");
    const body = server.requests[0].body;
    expect(body).toMatchObject({ max_tokens: 100, temperature: 0, top_p: 0.5, stop_sequences: ["END"], top_k: 5, logprobs: true });
    for (const k of ["maxTokens", "topP", "stopSequences", "seed", "presencePenalty", "frequencyPenalty", "presence_penalty", "stop"]) expect(body).not.toHaveProperty(k);
  });
});

describe("requests every server accepts, one text part per turn (issue 29 items 3 and 5)", () => {
  it("sends assistant content as a string, never null, beside tool_calls", () => {
    const body: any = buildOpenAIChatBody({
      model: oaModel,
      messages: [{ role: "assistant", content: [{ type: "tool_call", id: "c1", name: "lookup", arguments: {} }] }],
    } as any);
    expect(body.messages[0]).toEqual({ role: "assistant", content: "", tool_calls: [{ id: "c1", type: "function", function: { name: "lookup", arguments: "{}" } }] });
  });

  it("keeps a streamed assistant text as one part in the transcript and in the next OpenAI-compatible request", async () => {
    const server = await serveForTest([oaText("hello there wide world"), oaText("again")]);
    const session = createAgent({ model: oaModel, provider: createOpenAICompatibleProvider({ baseUrl: server.url }) }).createSession();
    const first = await session.run("one");
    expect(first.content).toEqual([{ type: "text", text: "hello there wide world" }]);
    await session.run("two");
    const assistant = server.requests[1].body.messages.find((m: any) => m.role === "assistant");
    expect(assistant).toEqual({ role: "assistant", content: "hello there wide world" });
    const kept = (await session.messages()).filter((m: any) => m.role === "assistant");
    expect(kept[0].content).toEqual([{ type: "text", text: "hello there wide world" }]);
  });

  it("does the same for Anthropic, and with a redactor", async () => {
    const server = await serveForTest([anText("hello there world"), anText("again")]);
    const session = createAgent({ model: anModel, provider: createAnthropicMessagesProvider({ baseUrl: server.url }), secrets: ["sk-nothing-here-123"] } as any).createSession();
    await session.run("one");
    await session.run("two");
    const assistant = server.requests[1].body.messages.find((m: any) => m.role === "assistant");
    expect(assistant).toEqual({ role: "assistant", content: [{ type: "text", text: "hello there world" }] });
  });

  it("joins adjacent text parts a host's transcript carries, and a streamed thinking block with its signature", () => {
    const messages = [
      { role: "user", content: [{ type: "text", text: "q" }] },
      {
        role: "assistant",
        content: [
          { type: "thinking", text: "let me " },
          { type: "thinking", text: "think" },
          { type: "thinking", text: "", signature: "sig" },
          { type: "text", text: "a" },
          { type: "text", text: "b" },
          { type: "tool_call", id: "t1", name: "lookup", arguments: {} },
        ],
      },
    ];
    const an: any = anthropicMessagesBody({ model: anModel, messages } as any);
    expect(an.messages[1].content).toEqual([
      { type: "thinking", thinking: "let me think", signature: "sig" },
      { type: "text", text: "ab" },
      { type: "tool_use", id: "t1", name: "lookup", input: {} },
    ]);
    const oa: any = buildOpenAIChatBody({ model: oaModel, messages: [{ role: "user", content: [{ type: "text", text: "x" }, { type: "text", text: "y" }] }] } as any);
    expect(oa.messages[0]).toEqual({ role: "user", content: "xy" });
  });
});
