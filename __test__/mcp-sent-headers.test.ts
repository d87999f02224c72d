// A remote MCP server that echoes the request's headers — in a 500 body, a JSON-RPC error, a tool's
// result, a progress message — must not hand the bearer token (or any header value the host configured)
// back into the bridge's errors, results, events and ledger rows. The server is a real HTTP server on
// 127.0.0.1 speaking Streamable HTTP (JSON answers), written here so it can echo what it was sent.
import { createServer, type IncomingMessage, type Server } from "node:http";
import { describe, expect, it } from "vitest";
import { serversClosedAfterEach } from "./helpers/http-servers.js";
import { createMemoryRunLedger, createToolRegistry, dispatchToolCall } from "../index.mjs";
import { connectMcpTools } from "../mcp/index.mjs";

const TOKEN = "tok_live_4f9d2c81e7a3";
const TENANT_KEY = "tenant-key-0b5e77d2";
const servers = serversClosedAfterEach();

type Mode = "500-always" | "echo" | "list-fails";

async function body(req: IncomingMessage): Promise<any> {
  let text = "";
  for await (const chunk of req) text += chunk;
  return text ? JSON.parse(text) : undefined;
}

/** An MCP server on 127.0.0.1 whose answers repeat the request's headers. */
async function echoServer(mode: Mode): Promise<string> {
  const server = createServer(async (req, res) => {
    const headers = JSON.stringify(req.headers);
    if (mode === "500-always") {
      res.writeHead(500, { "content-type": "text/plain" }).end(`internal error; request headers were ${headers}`);
      return;
    }
    if (req.method !== "POST") {
      res.writeHead(405).end();
      return;
    }
    const message = await body(req);
    if (message.id === undefined) {
      res.writeHead(202).end();
      return;
    }
    const reply = (payload: object) => res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ jsonrpc: "2.0", id: message.id, ...payload }));
    switch (message.method) {
      case "initialize":
        return reply({ result: { protocolVersion: message.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "echo", version: "1.0.0" } } });
      case "tools/list":
        if (mode === "list-fails") return reply({ error: { code: -32603, message: `cannot list; headers ${headers}` } });
        return reply({
          result: {
            tools: ["fails", "echoes", "progresses"].map((name) => ({ name, inputSchema: { type: "object" } })),
          },
        });
      case "tools/call":
        if (message.params.name === "fails") return reply({ error: { code: -32603, message: `cannot serve; headers ${headers}` } });
        if (message.params.name === "progresses") {
          // An SSE answer: a progress notification that echoes the headers, then the result.
          const progressToken = message.params._meta?.progressToken;
          const notification = { jsonrpc: "2.0", method: "notifications/progress", params: { progressToken, progress: 1, total: 2, message: `halfway; headers ${headers}` } };
          const result = { jsonrpc: "2.0", id: message.id, result: { content: [{ type: "text", text: "done" }] } };
          res.writeHead(200, { "content-type": "text/event-stream" });
          res.end(`event: message\ndata: ${JSON.stringify(notification)}\n\nevent: message\ndata: ${JSON.stringify(result)}\n\n`);
          return;
        }
        return reply({ result: { content: [{ type: "text", text: `you sent ${headers}` }], structuredContent: { headers: req.headers } } });
      default:
        return reply({ error: { code: -32601, message: `no ${message.method}` } });
    }
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

const transport = (origin: string) => ({
  type: "streamable-http" as const,
  url: `${origin}/mcp`,
  allowedOrigins: [origin],
  allowLoopbackHttp: true,
  requestInit: { headers: { Authorization: `Bearer ${TOKEN}`, "X-Tenant-Key": TENANT_KEY } },
});

async function rejection(promise: Promise<unknown>): Promise<any> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected a rejection");
}

describe("header values the bridge sent", () => {
  it("do not come back in connectMcpTools' error when a 500 body echoes them", async () => {
    const origin = await echoServer("500-always");
    const error = await rejection(connectMcpTools({ serverId: "echo", transport: transport(origin) }));
    const seen = `${error.message}\n${error.stack}\n${String(error.cause?.message ?? "")}`;
    expect(error.message).toContain("[REDACTED]"); // the body is there, what was sent is not
    expect(seen).not.toContain(TOKEN);
    expect(seen).not.toContain(TENANT_KEY);
    // What is not a header value the host set stays readable.
    expect(error.message).toContain("internal error; request headers were");
    expect(error.message).toContain("application/json");
  });

  it("do not come back in a tool's error or result, nor in dispatch's events and ledger rows", async () => {
    const origin = await echoServer("echo");
    const bridge = await connectMcpTools({ serverId: "echo", transport: transport(origin) });
    try {
      const ledger = createMemoryRunLedger();
      const events: unknown[] = [];
      const registry = createToolRegistry(bridge.tools);
      const call = (id: string, name: string) =>
        dispatchToolCall({ call: { type: "tool_call", id, name, arguments: {} }, registry, context: { sessionId: "s", runId: "r" }, ledger, emit: (e: unknown) => void events.push(e) });
      const failed: any = await call("c1", "mcp:echo:fails");
      expect(failed.error.message).toContain("cannot serve; headers");
      expect(failed.error.message).toContain("[REDACTED]");
      const echoed: any = await call("c2", "mcp:echo:echoes");
      expect(echoed.error).toBeUndefined();
      expect(JSON.stringify(echoed.content)).toContain("[REDACTED]");
      const progressed: unknown[] = [];
      const withProgress: any = await dispatchToolCall({
        call: { type: "tool_call", id: "c3", name: "mcp:echo:progresses", arguments: {} },
        registry,
        context: { sessionId: "s", runId: "r", progress: (p: unknown) => void progressed.push(p) },
        ledger,
        emit: (e: unknown) => void events.push(e),
      });
      expect(withProgress.error).toBeUndefined();
      expect(JSON.stringify(progressed)).toContain("halfway; headers");
      expect(JSON.stringify(progressed)).toContain("[REDACTED]");
      const everything = JSON.stringify({ failed, echoed, progressed, events, rows: ledger.list("tool_call") });
      expect(everything).not.toContain(TOKEN);
      expect(everything).not.toContain(TENANT_KEY);
    } finally {
      await bridge.close();
    }
  });

  it("do not come back when the tool listing fails with them", async () => {
    const origin = await echoServer("list-fails");
    const error = await rejection(connectMcpTools({ serverId: "echo", transport: transport(origin) }));
    expect(error.message).toContain("cannot list; headers");
    expect(`${error.message}\n${error.stack}`).not.toContain(TOKEN);
    expect(`${error.message}\n${error.stack}`).not.toContain(TENANT_KEY);
  });
});
