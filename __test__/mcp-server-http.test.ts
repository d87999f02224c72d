// createPrismMcpWebHandler: the registry served over Streamable HTTP on 127.0.0.1 to the SDK's Client.
// Identity comes from the request's Bearer token (resolveAuthInfo → authorize); effect claims and
// ledger rows carry it; sessions belong to their principal and are bounded; bodies are bounded.
import { afterEach, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { createPrismMcpServer, createPrismMcpWebHandler, relayStatelessBody } from "../mcp/index.mjs";
import { SECRET } from "./helpers/mcp-server-tools.mjs";
import { startServedRegistry } from "./helpers/mcp-server-http.mjs";

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  while (open.length) await open.pop()!.close();
});

async function serve(handlerOptions: any = {}, serverOptions: any = {}) {
  const served = await startServedRegistry(handlerOptions, serverOptions);
  open.push(served);
  return served;
}

async function connect(url: string, principal: string) {
  const client = new Client({ name: `client-${principal}`, version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${principal}` } } });
  await client.connect(transport);
  open.push({ close: () => client.close() });
  return { client, transport };
}

const init = (id = 1) => ({
  jsonrpc: "2.0",
  id,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
});
const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: "Bearer alice", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });

describe("a registry served over Streamable HTTP", () => {
  it("lists and calls tools with the principal's identity; claims and ledger rows carry it", async () => {
    const served = await serve();
    const { client: alice, transport } = await connect(served.url, "alice");
    expect(transport.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect((await alice.listTools()).tools.map((tool) => tool.name)).toEqual(["echo", "charge", "leak", "slow"]);
    const echo: any = await alice.callTool({ name: "echo", arguments: { text: "over http" } });
    expect(echo.structuredContent).toEqual({ echo: "over http" });

    const meta = { "prism/toolCallId": "pay-7", "prism/sessionId": "checkout" };
    const first: any = await alice.callTool({ name: "charge", arguments: { amount: 9 }, _meta: meta });
    const retry: any = await alice.callTool({ name: "charge", arguments: { amount: 9 }, _meta: meta });
    expect(first.structuredContent).toMatchObject({ charged: 9, execution: 1 });
    expect(retry.structuredContent).toEqual(first.structuredContent);
    expect(served.state.charges).toBe(1);

    // A retry after reconnecting (a new session) with the same ids replays as well.
    const { client: again } = await connect(served.url, "alice");
    const replay: any = await again.callTool({ name: "charge", arguments: { amount: 9 }, _meta: meta });
    expect(replay.structuredContent).toEqual(first.structuredContent);
    expect(served.state.charges).toBe(1);

    // Another principal's call with the same ids is another claim: it runs.
    const { client: bob } = await connect(served.url, "bob");
    const theirs: any = await bob.callTool({ name: "charge", arguments: { amount: 9 }, _meta: meta });
    expect(theirs.structuredContent).toMatchObject({ execution: 2 });
    expect(theirs.structuredContent.key).not.toBe(first.structuredContent.key);

    const rows = served.ledger.list("tool_call").filter((row: any) => row.toolCallId === "pay-7");
    expect(rows.map((row: any) => [row.status, row.userId, row.sessionId])).toEqual([
      ["started", "alice", "checkout"],
      ["finished", "alice", "checkout"],
      ["finished", "alice", "checkout"],
      ["finished", "alice", "checkout"],
      ["started", "bob", "checkout"],
      ["finished", "bob", "checkout"],
    ]);
    expect(served.authorized).toContain("alice:charge");
    expect(served.authorized).toContain("bob:charge");
  });

  it("redacts secrets, blocks bad calls, streams progress and cancels over HTTP", async () => {
    const served = await serve();
    const { client } = await connect(served.url, "alice");
    const leak: any = await client.callTool({ name: "leak", arguments: {} });
    expect(JSON.stringify(leak)).not.toContain(SECRET);
    const invalid: any = await client.callTool({ name: "charge", arguments: { amount: "all" } });
    expect(invalid._meta["prism/error"]).toEqual({ code: "ERR_PRISM_MCP_BLOCKED", reason: "validation_failed", tool: "charge" });
    expect(served.state.charges).toBeUndefined();

    const controller = new AbortController();
    const progress: any[] = [];
    const call = client.callTool({ name: "slow", arguments: { steps: 2 } }, undefined, {
      signal: controller.signal,
      onprogress: (p) => {
        progress.push(p);
        if (p.progress === 2) controller.abort(new Error("stop"));
      },
    });
    await expect(call).rejects.toThrow(/stop/);
    expect(progress.map((p) => p.message)).toEqual(["step 1", "step 2"]);
    for (let i = 0; i < 200 && !served.state.slowAborted; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(served.state.slowAborted).toBe(1);
    let rows: any[] = [];
    for (let i = 0; i < 200 && !rows.some((row) => row.status === "error"); i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      rows = served.ledger.list("tool_call").filter((row: any) => row.name === "slow");
    }
    expect(rows.at(-1)).toMatchObject({ status: "error", userId: "alice" });
    expect(JSON.stringify(served.ledger.list())).not.toContain(SECRET);
  });

  it("binds a session to its principal and refuses unauthenticated requests", async () => {
    const served = await serve();
    const { transport } = await connect(served.url, "alice");
    const sessionId = transport.sessionId!;
    const list = { jsonrpc: "2.0", id: 2, method: "tools/list", params: {} };
    const stolen = await post(served.url, list, { authorization: "Bearer bob", "mcp-session-id": sessionId, "mcp-protocol-version": "2025-06-18" });
    expect(stolen.status).toBe(404);
    const body = await stolen.text();
    expect(JSON.parse(body)).toEqual({ error: { message: "MCP session not found" } });
    expect(body).not.toMatch(/alice|Bearer/);
    const anonymous = await post(served.url, init(), { authorization: "" });
    expect(anonymous.status).toBe(401);
    const unknown = await post(served.url, list, { "mcp-session-id": "no-such-session" });
    expect(unknown.status).toBe(404);
    const noSession = await post(served.url, list);
    expect(noSession.status).toBe(400);
    expect((await noSession.json()).error.code).toBe("ERR_PRISM_MCP_SESSION_REQUIRED");
  });

  it("bounds sessions: past maxSessions a new session is refused until one ends", async () => {
    const served = await serve({ maxSessions: 2 });
    const first = await connect(served.url, "alice");
    await connect(served.url, "bob");
    expect(served.handler.sessionCount).toBe(2);
    const refused = await post(served.url, init());
    expect(refused.status).toBe(503);
    expect(await refused.json()).toEqual({ error: { message: "MCP session limit reached", code: "ERR_PRISM_MCP_SESSION_LIMIT" } });
    await first.transport.terminateSession();
    expect(served.handler.sessionCount).toBe(1);
    const { client } = await connect(served.url, "alice");
    expect((await client.listTools()).tools.length).toBe(4);
  });

  it("evicts a session idle past sessionIdleMs to make room", async () => {
    const served = await serve({ maxSessions: 1, sessionIdleMs: 1 });
    const { transport } = await connect(served.url, "alice");
    const stale = transport.sessionId;
    await new Promise((resolve) => setTimeout(resolve, 5));
    const { transport: fresh } = await connect(served.url, "bob");
    expect(fresh.sessionId).not.toBe(stale);
    expect(served.handler.sessionCount).toBe(1);
    const gone = await post(served.url, { jsonrpc: "2.0", id: 3, method: "tools/list" }, { "mcp-session-id": stale! });
    expect(gone.status).toBe(404);
  });

  it("bounds request bodies and checks their type", async () => {
    const served = await serve({ maxRequestBytes: 512 });
    const big = await post(served.url, { ...init(), padding: "x".repeat(600) });
    expect(big.status).toBe(413);
    expect((await big.json()).error.message).toBe("MCP request body too large");
    const text = await fetch(served.url, { method: "POST", headers: { "content-type": "text/plain", authorization: "Bearer alice" }, body: "{}" });
    expect(text.status).toBe(415);
    const broken = await post(served.url, "{not json");
    expect(broken.status).toBe(400);
    expect((await broken.json()).error.message).toBe("Invalid MCP JSON body");
  });

  it("bounds a JSON response body (507) and serves stateless requests from a factory", async () => {
    const factory = () => createPrismMcpServer({ tools: [{ name: "big", execute: (_a: any, ctx: any) => ({ toolCallId: ctx.toolCallId, name: "big", value: "y".repeat(5000) }) }], authorize: () => ({ allowed: true }) });
    const handler = await createPrismMcpWebHandler(factory, { maxResponseBytes: 2048 });
    const request = (body: unknown) =>
      handler(new Request("http://127.0.0.1/mcp", { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream" }, body: JSON.stringify(body) }));
    const initialized = await request(init());
    expect(initialized.status).toBe(200);
    expect(await initialized.text()).toContain("prism-mcp-server");
    const tooBig = await request({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "big", arguments: {} } });
    expect(tooBig.status).toBe(507);
    expect(await tooBig.json()).toEqual({ error: { message: "MCP response too large", code: "ERR_PRISM_MCP_RESPONSE_LIMIT" } });
  });

  it("ends a request whose resolveAuthInfo never answers at requestTimeoutMs (408)", async () => {
    const factory = () => createPrismMcpServer({ tools: [], authorize: () => ({ allowed: true }) });
    const handler = await createPrismMcpWebHandler(factory, { requestTimeoutMs: 50, resolveAuthInfo: () => new Promise(() => undefined) });
    const response = await handler(
      new Request("http://127.0.0.1/mcp", { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream" }, body: JSON.stringify(init()) }),
    );
    expect(response.status).toBe(408);
    expect((await response.json()).error.message).toBe("MCP request timed out");
  });

  it("refuses bad handler options with upstream's messages", async () => {
    const server = createPrismMcpServer({ tools: [], authorize: () => ({ allowed: true }) });
    await expect(createPrismMcpWebHandler(server)).rejects.toThrow(/Stateless MCP web handlers require a server factory/);
    await expect(createPrismMcpWebHandler(server, { sessionIdGenerator: () => "s" })).rejects.toThrow("Stateful MCP sessions require resolveIdentity and exact allowedOrigins");
    await expect(createPrismMcpWebHandler(() => server, { maxSessions: 513 })).rejects.toThrow("maxSessions must be a positive safe integer <= 512");
    await expect(createPrismMcpWebHandler(() => server, { maxRequestBytes: 0 })).rejects.toMatchObject({ code: "ERR_PRISM_MCP_LIMIT" });
    await expect(createPrismMcpWebHandler(() => server, { protectedResource: { authorizationServers: ["http://auth.example.com"], resource: "https://mcp.example.com" } })).rejects.toThrow(
      "authorization server URL must use https: (plaintext loopback is allowed)",
    );
  });

  it("serves RFC 9728 protected-resource metadata and challenges unauthenticated requests", async () => {
    const served = await serve({ protectedResource: { authorizationServers: ["https://auth.example.com"], resource: "https://mcp.example.com/mcp", scopesSupported: ["tools:execute"] } });
    const metadata = await fetch(`${served.origin}/.well-known/oauth-protected-resource`);
    expect(await metadata.json()).toEqual({ authorization_servers: ["https://auth.example.com/"], resource: "https://mcp.example.com/mcp", scopes_supported: ["tools:execute"] });
    const challenged = await post(served.url, init(), { authorization: "" });
    expect(challenged.status).toBe(401);
    expect(challenged.headers.get("www-authenticate")).toBe(`Bearer resource_metadata="${served.origin}/.well-known/oauth-protected-resource"`);
  });
});

describe("relayStatelessBody", () => {
  const enc = new TextEncoder();

  it("relays the chunks in order and closes once when the body ends", async () => {
    let closed = 0;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(enc.encode("data: one\n\n"));
        controller.enqueue(enc.encode("data: two\n\n"));
        controller.close();
      },
    });
    const relayed = relayStatelessBody(body, () => void closed++);
    expect(closed).toBe(0);
    expect(await relayed!.text()).toBe("data: one\n\ndata: two\n\n");
    expect(closed).toBe(1);
  });

  it("cancels the source and closes once when the reader cancels a pending stream", async () => {
    let closed = 0;
    let cancelled: unknown;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (!cancelled) controller.enqueue(enc.encode("data: first\n\n"));
        return new Promise(() => undefined); // never ends, like a long-lived event stream
      },
      cancel(reason) {
        cancelled = reason;
      },
    });
    const reader = relayStatelessBody(body, () => void closed++)!.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe("data: first\n\n");
    await reader.cancel("client left");
    await reader.cancel("again");
    await new Promise((resolve) => setImmediate(resolve));
    expect(closed).toBe(1);
    expect(cancelled).toBe("client left");
  });

  it("closes once when the source fails, and at once for a null body", async () => {
    let closed = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        controller.error(new Error("source broke"));
      },
    });
    await expect(relayStatelessBody(body, () => void closed++)!.text()).rejects.toThrow(/source broke/);
    expect(closed).toBe(1);
    expect(relayStatelessBody(null, () => void closed++)).toBeNull();
    expect(closed).toBe(2);
  });

  it("refuses a body that is not a stream and a missing onClose, with a code", () => {
    let closed = 0;
    expect(() => relayStatelessBody("text" as any, () => void closed++)).toThrow(
      expect.objectContaining({ code: "ERR_PRISM_MCP_OPTIONS", message: "relayStatelessBody needs a ReadableStream body or null" }),
    );
    expect(closed).toBe(1);
    expect(() => relayStatelessBody(null, undefined as any)).toThrow(expect.objectContaining({ code: "ERR_PRISM_MCP_OPTIONS" }));
  });
});
