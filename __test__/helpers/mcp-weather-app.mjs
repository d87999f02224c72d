// An MCP server over stdio that offers MCP Apps: a `weather` tool the model and the app share and an
// app-only `refresh`, both with the `ui://weather/view` HTML view. The docs' MCP Apps example starts it
// (docs-blocks.test.ts passes its path as WEATHER_APP_SERVER). The SDK's own Server and stdio transport.
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import {
  CallToolRequestSchema,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";

const UI = "io.modelcontextprotocol/ui";
const HTML = "text/html;profile=mcp-app";
const view = "ui://weather/view";

const server = new Server({ name: "weather", version: "1" }, { capabilities: { tools: {}, resources: {}, extensions: { [UI]: {} } } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({
  tools: [
    { name: "weather", description: "The weather in a city", inputSchema: { type: "object" }, _meta: { ui: { resourceUri: view, visibility: ["model", "app"] } } },
    { name: "refresh", description: "Reload the view's data", inputSchema: { type: "object" }, _meta: { ui: { resourceUri: view, visibility: ["app"] } } },
  ],
}));
server.setRequestHandler(CallToolRequestSchema, async (request) => ({ content: [{ type: "text", text: `${request.params.name}: 3 °C in Oslo` }] }));
server.setRequestHandler(ListResourcesRequestSchema, async () => ({ resources: [{ uri: view, name: "weather", mimeType: HTML }] }));
server.setRequestHandler(ReadResourceRequestSchema, async (request) => ({
  contents: [{ uri: request.params.uri, mimeType: HTML, text: "<!doctype html><html><body>3 °C in Oslo</body></html>", _meta: { ui: { csp: { connectDomains: [] } } } }],
}));
await server.connect(new StdioServerTransport());
