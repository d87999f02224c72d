// MCP Apps (`mcpApps: true`), as `@arnilo/prism-mcp` has them: the extension is offered and must be
// acknowledged, an app-only tool never reaches the model (not in `bridge.tools`, so not in a registry),
// and the host reaches it through `bridge.apps`, with its UI resource read as bounded HTML5.
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { createToolRegistry, dispatchToolCall } from "../index.mjs";
import { attachMcpToolBridge, connectMcpTools } from "../mcp/index.mjs";
import { hostileStdio } from "./helpers/mcp-servers";

const require = createRequire(import.meta.url);
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { Server } = require("@modelcontextprotocol/sdk/server/index.js");
const { InMemoryTransport } = require("@modelcontextprotocol/sdk/inMemory.js");
const types = require("@modelcontextprotocol/sdk/types.js");

const UI = "io.modelcontextprotocol/ui";
const HTML = "text/html;profile=mcp-app";
const ctx = { sessionId: "s1", runId: "r1", toolCallId: "c1" };

async function fixture(options: { acknowledge?: boolean; tools?: unknown[]; html?: string } = {}) {
  const calls: string[] = [];
  const server = new Server(
    { name: "weather", version: "1" },
    { capabilities: { tools: {}, resources: {}, ...(options.acknowledge === false ? {} : { extensions: { [UI]: {} } }) } },
  );
  server.setRequestHandler(types.ListToolsRequestSchema, async () => ({
    tools: options.tools ?? [
      { name: "weather", description: "The weather", inputSchema: { type: "object" }, _meta: { ui: { resourceUri: "ui://weather/view", visibility: ["model", "app"] } } },
      { name: "refresh", inputSchema: { type: "object" }, _meta: { ui: { resourceUri: "ui://weather/view", visibility: ["app"] } } },
    ],
  }));
  server.setRequestHandler(types.CallToolRequestSchema, async (request: any) => {
    calls.push(request.params.name);
    return { content: [{ type: "text", text: `called ${request.params.name}` }] };
  });
  server.setRequestHandler(types.ListResourcesRequestSchema, async () => ({
    resources: [{ uri: "ui://weather/view", name: "weather", mimeType: HTML, _meta: { ui: { csp: { connectDomains: ["https://list.example"] } } } }],
  }));
  server.setRequestHandler(types.ReadResourceRequestSchema, async (request: any) => ({
    contents: [
      {
        uri: request.params.uri,
        mimeType: HTML,
        text: options.html ?? "<!doctype html><html><body>weather</body></html>",
        _meta: { ui: { csp: { connectDomains: ["https://read.example"] }, prefersBorder: true } },
      },
    ],
  }));
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  await server.connect(serverTransport);
  const client = new Client({ name: "host", version: "1" }, { capabilities: { extensions: { [UI]: {} } } });
  await client.connect(clientTransport);
  return { client, transport: clientTransport, calls };
}

describe("mcpApps", () => {
  it("keeps an app-only tool from the model and reaches it through bridge.apps", async () => {
    const { client, transport, calls } = await fixture();
    const bridge: any = await attachMcpToolBridge(client, transport, { serverId: "weather", mcpApps: true });
    try {
      expect(bridge.tools.map((t: any) => t.name)).toEqual(["mcp:weather:weather"]);
      expect(bridge.apps.negotiated).toBe(true);
      expect(bridge.apps.tools.map((t: any) => [t.name, t.prismName, t.resourceUri, t.visibility])).toEqual([
        ["weather", "mcp:weather:weather", "ui://weather/view", ["model", "app"]],
        ["refresh", "mcp:weather:refresh", "ui://weather/view", ["app"]],
      ]);
      // The model cannot call it: it is in no registry built from bridge.tools.
      const blocked: any = await dispatchToolCall({
        call: { type: "tool_call", id: "c1", name: "mcp:weather:refresh", arguments: {} },
        registry: createToolRegistry(bridge.tools),
        context: ctx,
      });
      expect(blocked.error).toBeDefined();
      expect(calls).toEqual([]);
      // The host's app can.
      const result: any = await bridge.apps.callTool("refresh", {}, ctx);
      expect(result.name).toBe("mcp:weather:refresh");
      expect(result.content).toEqual([{ type: "text", text: "called refresh" }]);
      expect(calls).toEqual(["refresh"]);
      expect(() => bridge.apps.callTool("nope", {}, ctx)).toThrow("MCP App tool is unavailable");

      const listed = await bridge.apps.listResources();
      expect(listed).toEqual([{ uri: "ui://weather/view", name: "weather", mimeType: HTML, ui: { csp: { connectDomains: ["https://list.example"] } } }]);
      const resource = await bridge.apps.readResource("ui://weather/view");
      expect(resource.html).toBe("<!doctype html><html><body>weather</body></html>");
      expect(resource.ui).toEqual({ csp: { connectDomains: ["https://read.example"] }, prefersBorder: true });
      await expect(bridge.apps.readResource("ui://other/view")).rejects.toThrow("MCP App resource is unavailable");
      await expect(bridge.apps.readResource("https://evil.example/")).rejects.toThrow("MCP App resource URI is invalid");
    } finally {
      await bridge.close();
    }
  });

  it("without mcpApps every tool is offered, as upstream", async () => {
    const { client, transport } = await fixture();
    const bridge: any = await attachMcpToolBridge(client, transport, { serverId: "weather" });
    try {
      expect(bridge.tools.map((t: any) => t.name)).toEqual(["mcp:weather:weather", "mcp:weather:refresh"]);
      expect(bridge.apps).toBeUndefined();
    } finally {
      await bridge.close();
    }
  });

  it("a server that does not acknowledge the extension, or a client without request, is 'not negotiated'", async () => {
    const { client, transport } = await fixture({ acknowledge: false });
    await expect(attachMcpToolBridge(client, transport, { serverId: "weather", mcpApps: true })).rejects.toMatchObject({
      message: "MCP Apps extension was not negotiated",
      code: "ERR_PRISM_MCP_APPS",
    });
    await client.close();
    const bare = { getServerCapabilities: () => ({}), setNotificationHandler: () => undefined };
    await expect(attachMcpToolBridge(bare as any, { close: async () => undefined } as any, { serverId: "weather", mcpApps: true })).rejects.toThrow(/not negotiated/);
    // connectMcpTools against a real server that knows nothing of MCP Apps: refused, and the server stopped.
    await expect(connectMcpTools({ serverId: "plain", transport: hostileStdio("shapes"), mcpApps: true })).rejects.toThrow("MCP Apps extension was not negotiated");
  });

  it("bad UI metadata leaves that tool out with a reason; a resource that is not HTML5 is refused", async () => {
    const { client, transport } = await fixture({
      tools: [
        { name: "ok", inputSchema: { type: "object" }, _meta: { ui: { resourceUri: "ui://weather/view" } } },
        { name: "bad_visibility", inputSchema: { type: "object" }, _meta: { ui: { visibility: ["robot"] } } },
        { name: "bad_uri", inputSchema: { type: "object" }, _meta: { ui: { resourceUri: "https://evil.example/x" } } },
      ],
      html: "<p>not a document</p>",
    });
    const bridge: any = await attachMcpToolBridge(client, transport, { serverId: "weather", mcpApps: true });
    try {
      expect(bridge.tools.map((t: any) => t.name)).toEqual(["mcp:weather:ok"]);
      expect(bridge.rejectedTools).toEqual([
        { remoteName: "bad_uri", reason: "MCP tool bad_uri MCP Apps resource URI is invalid" },
        { remoteName: "bad_visibility", reason: "MCP tool bad_visibility has invalid MCP Apps visibility" },
      ]);
      await expect(bridge.apps.readResource("ui://weather/view")).rejects.toThrow("MCP App resource is not bounded HTML5");
    } finally {
      await bridge.close();
    }
  });
});
