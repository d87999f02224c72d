// Rich tool results: images, files, audio and resource links a tool returns beside its value reach
// each provider the way its API takes them, and events and ledger rows describe them without bytes.
import { createHash } from "node:crypto";
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { createAgent, createToolRegistry, dispatchToolCall, type ToolDefinition } from "../index.mjs";
import { attachMcpToolBridge, createPrismMcpServer, mapMcpContentToBlocks } from "../mcp/index.mjs";
import { createAnthropicMessagesProvider } from "../providers/anthropic.mjs";
import { createOpenAICompatibleProvider } from "../providers/openai-compatible.mjs";
import { call, ctx, recorder } from "./helpers/harness.js";
import { chunk, usageChunk, DONE } from "./helpers/provider-replies";
import { serveForTest, sse, type Reply } from "./helpers/sse-server";

const require = createRequire(import.meta.url);

// A real 1×1 PNG and a small PDF-like payload: what matters is that the bytes arrive unchanged.
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
const PDF = Buffer.from("%PDF-1.4\n% a report\n%%EOF\n").toString("base64");
const WAV = Buffer.from("RIFF\u0000\u0000\u0000\u0000WAVEfmt ").toString("base64");
const sha256 = (b64: string) => createHash("sha256").update(Buffer.from(b64, "base64")).digest("hex");

/** A tool that returns a value, a caption, an image, a PDF, a WAV clip and a resource link. */
function screenshotTool(): ToolDefinition {
  return {
    name: "screenshot",
    parameters: { type: "object" },
    execute: (_args, c) => ({
      toolCallId: c.toolCallId,
      name: "screenshot",
      value: { page: "home" },
      content: [
        { type: "text", text: "the home page" },
        { type: "image", mimeType: "image/png", data: PNG },
        { type: "file", mediaType: "application/pdf", name: "report.pdf", data: PDF },
        { type: "audio", mediaType: "audio/wav", data: WAV },
        { type: "resource_link", uri: "https://example.test/page", name: "page", mimeType: "text/html" },
      ],
    }) as any,
  };
}

describe("OpenAI-compatible: a tool message holds text, the media follow in one user message", () => {
  const ask: Reply = {
    chunks: [
      chunk({ role: "assistant", content: null }),
      chunk({ tool_calls: [{ index: 0, id: "call_a", type: "function", function: { name: "screenshot", arguments: "{}" } }] }),
      chunk({ tool_calls: [{ index: 1, id: "call_b", type: "function", function: { name: "screenshot", arguments: "{}" } }] }),
      chunk({}, "tool_calls"),
      usageChunk(5, 5),
      DONE,
    ],
  };
  const done: Reply = { chunks: [chunk({ role: "assistant", content: "seen" }), chunk({}, "stop"), usageChunk(5, 1), DONE] };

  it("sends each image, file and audio clip as the Chat Completions content part for it", async () => {
    const server = await serveForTest([ask, done]);
    const provider = createOpenAICompatibleProvider({ baseUrl: server.url, apiKey: "sk-test-0123456789abcdef" });
    const session = createAgent({ model: { provider: "openai-compatible", model: "gpt-test" }, provider, tools: [screenshotTool()] }).createSession();
    const result = await session.run("look");
    expect(result.status).toBe("succeeded");
    const messages = server.requests[1]!.body.messages;
    const roles = messages.map((m: any) => m.role);
    // Both tool messages come straight after the assistant's calls; the attachments after them.
    expect(roles.slice(-5)).toEqual(["user", "assistant", "tool", "tool", "user"]);
    const [, , first, second, attachments] = messages.slice(-5);
    expect(first.tool_call_id).toBe("call_a");
    expect(second.tool_call_id).toBe("call_b");
    expect(first.content).toBe(
      [
        JSON.stringify({ page: "home" }),
        "the home page",
        "[image image/png attached in the next user message]",
        "[file application/pdf attached in the next user message]",
        "[audio audio/wav attached in the next user message]",
        "Resource link page: https://example.test/page — mime=text/html",
      ].join("\n"),
    );
    const expectedParts = (id: string) => [
      { type: "text", text: `Attachments of tool call ${id} (screenshot):` },
      { type: "image_url", image_url: { url: `data:image/png;base64,${PNG}` } },
      { type: "file", file: { filename: "report.pdf", file_data: `data:application/pdf;base64,${PDF}` } },
      { type: "input_audio", input_audio: { data: WAV, format: "wav" } },
    ];
    expect(attachments.content).toEqual([...expectedParts("call_a"), ...expectedParts("call_b")]);
  });
});

describe("Anthropic: media go inside tool_result as image and document blocks", () => {
  const ev = (data: { type: string } & Record<string, unknown>) => sse(data, data.type);
  const start = ev({ type: "message_start", message: { id: "m", type: "message", role: "assistant", content: [], usage: { input_tokens: 3, output_tokens: 1 } } });
  const stop = [ev({ type: "message_delta", delta: { stop_reason: "tool_use" }, usage: { output_tokens: 2 } }), ev({ type: "message_stop" })];
  const ask: Reply = {
    chunks: [
      start,
      ev({ type: "content_block_start", index: 0, content_block: { type: "tool_use", id: "toolu_1", name: "screenshot", input: {} } }),
      ev({ type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json: "{}" } }),
      ev({ type: "content_block_stop", index: 0 }),
      ...stop,
    ],
  };
  const done: Reply = {
    chunks: [
      start,
      ev({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }),
      ev({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "seen" } }),
      ev({ type: "content_block_stop", index: 0 }),
      ev({ type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 1 } }),
      ev({ type: "message_stop" }),
    ],
  };

  it("sends the value, text, image and PDF as blocks, and names what Anthropic does not take", async () => {
    const server = await serveForTest([ask, done]);
    const provider = createAnthropicMessagesProvider({ baseUrl: server.url, apiKey: "sk-ant-test-0123456789" });
    const session = createAgent({ model: { provider: "anthropic", model: "claude-test" }, provider, tools: [screenshotTool()] }).createSession();
    expect((await session.run("look")).status).toBe("succeeded");
    const last = server.requests[1]!.body.messages.at(-1);
    expect(last.role).toBe("user");
    expect(last.content).toHaveLength(1);
    const block = last.content[0];
    expect(block.type).toBe("tool_result");
    expect(block.tool_use_id).toBe("toolu_1");
    expect(block.is_error).toBeUndefined();
    expect(block.content).toEqual([
      { type: "text", text: JSON.stringify({ page: "home" }) },
      { type: "text", text: "the home page" },
      { type: "image", source: { type: "base64", media_type: "image/png", data: PNG } },
      { type: "document", source: { type: "base64", media_type: "application/pdf", data: PDF }, title: "report.pdf" },
      { type: "text", text: `[audio audio/wav, ${Buffer.from(WAV, "base64").length} bytes omitted: Anthropic Messages does not accept it in a tool result]` },
      { type: "text", text: "Resource link page: https://example.test/page — mime=text/html" },
    ]);
  });
});

describe("events and ledger rows describe media, never hold their bytes", () => {
  it("a finished event and row carry kind, type, size and SHA-256 in place of each media block", async () => {
    const rec = recorder();
    const result = await dispatchToolCall({ call: call("screenshot"), registry: createToolRegistry([screenshotTool()]), context: ctx(), emit: rec.emit, ledger: rec.ledger });
    // The caller (and so the model) gets the bytes.
    expect((result.content as any[])[1].data).toBe(PNG);
    const finished = rec.events.find((e) => e.type === "tool_execution_finished") as any;
    const row = rec.terminalRows()[0] as any;
    for (const recorded of [finished.result, row.result]) {
      expect(JSON.stringify(recorded)).not.toContain(PNG);
      expect(JSON.stringify(recorded)).not.toContain(PDF);
      expect(recorded.value).toEqual({ page: "home" });
      expect(recorded.content).toEqual([
        { type: "text", text: "the home page" },
        { type: "image", mimeType: "image/png", bytes: Buffer.from(PNG, "base64").length, sha256: sha256(PNG), omitted: true },
        { type: "file", mediaType: "application/pdf", name: "report.pdf", bytes: Buffer.from(PDF, "base64").length, sha256: sha256(PDF), omitted: true },
        { type: "audio", mediaType: "audio/wav", bytes: Buffer.from(WAV, "base64").length, sha256: sha256(WAV), omitted: true },
        { type: "resource_link", uri: "https://example.test/page", name: "page", mimeType: "text/html" },
      ]);
    }
  });

  it("bounds what it describes: a data: URL counts as bytes, a long name is cut, past 64 blocks only a count", async () => {
    const many = Array.from({ length: 70 }, () => ({ type: "image", url: `data:image/png;base64,${PNG}`, name: "n".repeat(2000) }));
    const tool: ToolDefinition = { name: "gallery", execute: () => ({ content: many }) as any };
    const rec = recorder();
    await dispatchToolCall({ call: call("gallery"), registry: createToolRegistry([tool]), context: ctx(), ledger: rec.ledger });
    const content = (rec.terminalRows()[0] as any).result.content;
    expect(content).toHaveLength(65);
    expect(content[0]).toEqual({ type: "image", mimeType: "image/png", name: "n".repeat(512), bytes: Buffer.from(PNG, "base64").length, sha256: sha256(PNG), omitted: true });
    expect(content[64]).toEqual({ type: "text", text: "[6 more content blocks omitted]" });
  });

  it("secrets in a media block's name are redacted in the row", async () => {
    const tool: ToolDefinition = { name: "t", execute: () => ({ content: [{ type: "file", mediaType: "text/plain", name: "key-sk-live-123.txt", data: "aGk=" }] }) as any };
    const rec = recorder();
    await dispatchToolCall({ call: call("t"), registry: createToolRegistry([tool]), context: ctx(), ledger: rec.ledger, secrets: ["sk-live-123"] });
    const row = rec.terminalRows()[0] as any;
    expect(JSON.stringify(row)).not.toContain("sk-live-123");
    expect(row.result.content[0]).toMatchObject({ type: "file", bytes: 2, omitted: true });
  });
});

describe("MCP: image, audio and resource_link content round-trips through the server and the bridge", () => {
  const allow = () => ({ allowed: true as const });

  /** This package's server, a real SDK client over an in-memory pair, and the bridge on that client. */
  async function served(tools: ToolDefinition[], options: object = {}) {
    const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
    const { InMemoryTransport } = require("@modelcontextprotocol/sdk/inMemory.js");
    const server = createPrismMcpServer({ tools, authorize: allow, ...options });
    const [a, b] = InMemoryTransport.createLinkedPair();
    await server.connect(b);
    const client = new Client({ name: "host", version: "1" });
    await client.connect(a);
    const bridge: any = await attachMcpToolBridge(client, a, { serverId: "shots" });
    return { client, bridge };
  }

  it("the SDK client reads MCP image, audio, resource and resource_link blocks; the bridge gives back the tool's blocks", async () => {
    const { client, bridge } = await served([screenshotTool()]);
    try {
      // What goes over the wire, as the SDK client parses it against its own schema.
      const wire: any = await client.callTool({ name: "screenshot", arguments: {} });
      expect(wire.isError).toBe(false);
      expect(wire.content).toEqual([
        { type: "text", text: "the home page" },
        { type: "image", data: PNG, mimeType: "image/png" },
        { type: "resource", resource: { uri: "attachment:report.pdf", mimeType: "application/pdf", blob: PDF } },
        { type: "audio", data: WAV, mimeType: "audio/wav" },
        { type: "resource_link", uri: "https://example.test/page", name: "page", mimeType: "text/html" },
      ]);
      // Through the bridge and dispatch: the blocks come back as the tool returned them (the PDF,
      // embedded as a resource, comes back as text naming it, as upstream maps embedded resources).
      const registry = createToolRegistry(bridge.tools);
      const result: any = await dispatchToolCall({ call: call("mcp:shots:screenshot"), registry, context: ctx() });
      expect(result.error).toBeUndefined();
      expect(result.content).toEqual([
        { type: "text", text: "the home page" },
        { type: "image", mimeType: "image/png", data: PNG },
        { type: "text", text: "Resource attachment:report.pdf (application/pdf): [blob application/pdf]" },
        { type: "audio", mediaType: "audio/wav", data: WAV },
        { type: "resource_link", uri: "https://example.test/page", name: "page", mimeType: "text/html" },
      ]);
    } finally {
      await bridge.close();
    }
  });

  it("media over the server's result budget become a note, and the call says it was cut", async () => {
    const big = Buffer.alloc(3_000, 7).toString("base64");
    const tool: ToolDefinition = { name: "big", execute: () => ({ content: [{ type: "audio", mediaType: "audio/wav", data: big }] }) as any };
    const { client, bridge } = await served([tool], { maxResultBytes: 1024 });
    try {
      const wire: any = await client.callTool({ name: "big", arguments: {} });
      expect(wire.content).toEqual([{ type: "text", text: "[audio audio/wav omitted: over 1024 bytes]" }]);
      expect(wire._meta).toEqual({ "prism/truncated": true });
    } finally {
      await bridge.close();
    }
  });

  it("mapMcpContentToBlocks keeps upstream's text for audio and links unless richContent is set", () => {
    const blocks = [
      { type: "audio", data: WAV, mimeType: "audio/wav" },
      { type: "resource_link", uri: "file:///a", name: "a", size: 3, extra: "dropped" },
    ];
    expect(mapMcpContentToBlocks(blocks as any, { maxResultBytes: 10_000 }).content).toEqual([
      { type: "text", text: `[audio content audio/wav, ${Buffer.from(WAV, "base64").length} bytes]` },
      { type: "text", text: "Resource link a: file:///a — size=3" },
    ]);
    expect(mapMcpContentToBlocks(blocks as any, { maxResultBytes: 10_000, richContent: true }).content).toEqual([
      { type: "audio", mediaType: "audio/wav", data: WAV },
      { type: "resource_link", uri: "file:///a", name: "a", size: 3 },
    ]);
  });
});
