// A tool's contract beyond its arguments: `title`, `annotations` and `outputSchema`, served in `tools/list`
// with results as `structuredContent` (checked against the schema before they leave), and kept on a
// bridged remote tool whose `structuredContent` is checked by the package's validator, a mismatch a tool
// error that names the path. The official SDK's Client and Server on both sides, over in-memory transports.
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { createToolRegistry, dispatchToolCall } from "../index.mjs";
import { attachMcpToolBridge, createPrismMcpServer } from "../mcp/index.mjs";

const require = createRequire(import.meta.url);
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { Server } = require("@modelcontextprotocol/sdk/server/index.js");
const { InMemoryTransport } = require("@modelcontextprotocol/sdk/inMemory.js");
const types = require("@modelcontextprotocol/sdk/types.js");

const allow = () => ({ allowed: true as const });
const ctx = { sessionId: "s1", runId: "r1", toolCallId: "c1" };
const weatherSchema = {
  type: "object",
  properties: { city: { type: "string" }, temp: { type: "number" }, unit: { enum: ["C", "F"] } },
  required: ["city", "temp"],
  additionalProperties: false,
};

async function clientOf(server: { connect(transport: unknown): Promise<void> }) {
  const client = new Client({ name: "t", version: "1" });
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(b);
  await client.connect(a);
  return client;
}

function servedTools() {
  return [
    {
      name: "weather",
      title: "Current weather",
      description: "The weather in a city",
      parameters: { type: "object", properties: { city: { type: "string" }, mode: { type: "string" } }, required: ["city"] },
      outputSchema: weatherSchema,
      // readOnlyHint contradicts the effect below: the effect wins. `x-vendor` is not an MCP annotation.
      annotations: { title: "Weather", readOnlyHint: false, idempotentHint: true, "x-vendor": 1 },
      effect: { kind: "none" as const, idempotency: "none" as const },
      execute: (args: { city: string; mode?: string }) => {
        if (args.mode === "wrong") return { city: args.city, temp: "warm" };
        if (args.mode === "text") return "sunny";
        return { city: args.city, temp: 21.5, unit: "C" };
      },
    },
    { name: "plain", parameters: { type: "object" }, execute: () => ({ any: "shape" }) },
  ];
}

describe("served tools: title, annotations, outputSchema and structuredContent", () => {
  it("lists the contract and answers structuredContent the SDK client accepts", async () => {
    const client = await clientOf(createPrismMcpServer({ tools: servedTools(), authorize: allow }));
    const { tools } = await client.listTools();
    expect(tools[0]).toEqual({
      name: "weather",
      title: "Current weather",
      description: "The weather in a city",
      inputSchema: servedTools()[0].parameters,
      outputSchema: weatherSchema,
      annotations: { title: "Weather", readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    });
    expect(tools[1]).toEqual({ name: "plain", inputSchema: { type: "object" } });

    // The SDK client checks structuredContent against the listed outputSchema itself.
    const ok: any = await client.callTool({ name: "weather", arguments: { city: "Oslo" } });
    expect(ok.isError).toBe(false);
    expect(ok.structuredContent).toEqual({ city: "Oslo", temp: 21.5, unit: "C" });
    expect(JSON.parse(ok.content[0].text)).toEqual(ok.structuredContent);
    await client.close();
  });

  it("refuses a result that does not match the outputSchema, naming the path, before it leaves", async () => {
    const client = await clientOf(createPrismMcpServer({ tools: servedTools(), authorize: allow }));
    await client.listTools();
    const wrong: any = await client.callTool({ name: "weather", arguments: { city: "Oslo", mode: "wrong" } });
    expect(wrong.isError).toBe(true);
    expect(wrong.structuredContent).toBeUndefined();
    // Dispatch checks the result against the outputSchema (lib/output-schema.js), so the served
    // error is the tool's own `ToolResultError`.
    expect(wrong._meta["prism/error"]).toMatchObject({ code: "ERR_PRISM_INVALID_OUTPUT", name: "ToolResultError", tool: "weather" });
    expect(wrong.content[0].text).toBe('Tool weather result does not match its outputSchema: /temp: expected number, found string "warm"');
    const text: any = await client.callTool({ name: "weather", arguments: { city: "Oslo", mode: "text" } });
    expect(text.isError).toBe(true);
    expect(text.content[0].text).toBe('Tool weather result does not match its outputSchema: expected object, found string "sunny"');
    await client.close();
  });

  it("refuses a tool whose outputSchema or title MCP cannot list, naming the tool", () => {
    const attempt = (tool: Record<string, unknown>) => {
      try {
        createPrismMcpServer({ tools: [{ name: "t", parameters: { type: "object" }, execute: () => 1, ...tool } as any], authorize: allow });
      } catch (error: any) {
        return { code: error.code, message: error.message };
      }
      return undefined;
    };
    expect(attempt({ outputSchema: { type: "array" } })).toEqual({ code: "ERR_PRISM_MCP_SCHEMA", message: 'MCP tool t outputSchema must be a JSON Schema of type "object"' });
    expect(attempt({ title: 42 })?.code).toBe("ERR_PRISM_MCP_LIMIT");
    expect(attempt({ annotations: { readOnlyHint: "yes" } })).toEqual({ code: "ERR_PRISM_MCP_SCHEMA", message: "MCP tool t annotations.readOnlyHint must be a boolean" });
    expect(attempt({ annotations: [] })?.message).toBe("MCP tool t annotations must be an object");
  });
});

/** A real SDK server whose tools declare outputSchema; `reply` decides what each call answers. */
async function remoteServer(tools: unknown[], reply: (args: any) => unknown) {
  const server = new Server({ name: "weather", version: "1" }, { capabilities: { tools: {} } });
  server.setRequestHandler(types.ListToolsRequestSchema, async () => ({ tools }));
  server.setRequestHandler(types.CallToolRequestSchema, async (request: any) => reply(request.params.arguments ?? {}));
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  await server.connect(serverTransport);
  const client = new Client({ name: "host", version: "1" });
  await client.connect(clientTransport);
  return { client, transport: clientTransport };
}

const remoteWeather = {
  name: "weather",
  title: "Current weather",
  description: "The weather in a city",
  inputSchema: { type: "object", properties: { mode: { type: "string" } } },
  outputSchema: weatherSchema,
  annotations: { readOnlyHint: true, openWorldHint: true },
};

function weatherReply(args: { mode?: string }) {
  const good = { city: "Oslo", temp: 3 };
  switch (args.mode) {
    case "wrong":
      return { content: [{ type: "text", text: "{}" }], structuredContent: { city: "Oslo", temp: 3, wind: 9 } };
    case "missing":
      return { content: [{ type: "text", text: JSON.stringify(good) }] };
    case "error":
      return { content: [{ type: "text", text: "no data for Oslo" }], isError: true };
    default:
      return { content: [{ type: "text", text: JSON.stringify(good) }], structuredContent: good };
  }
}

describe("bridged tools: the remote contract kept, structuredContent checked", () => {
  it("keeps title, annotations and outputSchema on the definition", async () => {
    const { client, transport } = await remoteServer([remoteWeather], weatherReply);
    const bridge: any = await attachMcpToolBridge(client, transport, { serverId: "wx" });
    try {
      const [tool] = bridge.tools;
      expect(tool.name).toBe("mcp:wx:weather");
      expect(tool.title).toBe("Current weather");
      expect(tool.outputSchema).toEqual(weatherSchema);
      expect(tool.annotations).toEqual({ readOnlyHint: true, openWorldHint: true });
      expect(tool.effect).toEqual({ kind: "none", idempotency: "none" });
    } finally {
      await bridge.close();
    }
  });

  it("returns matching structuredContent as the value and refuses a mismatch or its absence with a path", async () => {
    const { client, transport } = await remoteServer([remoteWeather], weatherReply);
    const bridge: any = await attachMcpToolBridge(client, transport, { serverId: "wx" });
    const registry = createToolRegistry(bridge.tools);
    const call = (mode?: string) =>
      dispatchToolCall({ call: { type: "tool_call", id: "c1", name: "mcp:wx:weather", arguments: mode ? { mode } : {} }, registry, context: ctx });
    try {
      const ok: any = await call();
      expect(ok.error).toBeUndefined();
      expect(ok.value).toEqual({ city: "Oslo", temp: 3 });

      const wrong: any = await call("wrong");
      expect(wrong.value).toBeUndefined();
      expect(wrong.error).toMatchObject({ code: "ERR_PRISM_MCP_INVALID_OUTPUT" });
      expect(wrong.error.message).toBe("MCP tool weather structuredContent does not match its outputSchema: /wind: property is not allowed by the schema (additionalProperties)");

      const missing: any = await call("missing");
      expect(missing.error).toMatchObject({
        code: "ERR_PRISM_MCP_INVALID_OUTPUT",
        message: "MCP tool weather declares an outputSchema but returned no structuredContent",
      });

      // A tool error needs no structuredContent: it stays the server's error.
      const failed: any = await call("error");
      expect(failed.error.message).toBe("no data for Oslo");
    } finally {
      await bridge.close();
    }
  });

  it("leaves out a tool whose outputSchema the validator refuses, saying why", async () => {
    const bad = { ...remoteWeather, name: "bad", outputSchema: { type: "object", properties: { a: { type: "string", pattern: "((" } } } };
    const { client, transport } = await remoteServer([remoteWeather, bad], weatherReply);
    const bridge: any = await attachMcpToolBridge(client, transport, { serverId: "wx" });
    try {
      expect(bridge.tools.map((t: any) => t.name)).toEqual(["mcp:wx:weather"]);
      expect(bridge.rejectedTools).toEqual([{ remoteName: "bad", reason: expect.stringMatching(/^output schema refused: .*pattern/) }]);
    } finally {
      await bridge.close();
    }
  });

  it("serves a bridged tool on with its contract intact", async () => {
    const { client: upstream, transport } = await remoteServer([remoteWeather], weatherReply);
    const bridge: any = await attachMcpToolBridge(upstream, transport, { serverId: "wx" });
    const client = await clientOf(createPrismMcpServer({ registry: createToolRegistry(bridge.tools), authorize: allow }));
    try {
      const { tools } = await client.listTools();
      expect(tools[0]).toMatchObject({ name: "mcp:wx:weather", title: "Current weather", outputSchema: weatherSchema });
      expect(tools[0].annotations).toEqual({ readOnlyHint: true, openWorldHint: true });
      const result: any = await client.callTool({ name: "mcp:wx:weather", arguments: {} });
      expect(result.structuredContent).toEqual({ city: "Oslo", temp: 3 });
    } finally {
      await client.close();
      await bridge.close();
    }
  });
});
