// DNS-pinned Streamable HTTP (createSecureMcpFetch, as upstream's): a hostname is resolved once per request by
// `resolveHostname`, every answer must be public (a loopback name with allowLoopbackHttp: loopback), and the
// connection goes to the checked answer only. The resolvers here are the test's own: no real DNS is asked.
// The servers listen on 127.0.0.2, which `localhost` never resolves to, so a request that reaches them went
// to the pinned answer and not to a fresh lookup.
import { describe, expect, it } from "vitest";
import { serversClosedAfterEach } from "./helpers/http-servers.js";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { connectMcpTools, createMcpOAuthFetch, createMcpTransport, createSecureMcpFetch } from "../mcp/index.mjs";

const servers = serversClosedAfterEach();

async function listen(handler: (req: IncomingMessage, res: ServerResponse) => void, host = "127.0.0.2") {
  const seen: string[] = [];
  const server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url} host=${req.headers.host}`);
    handler(req, res);
  });
  servers.push(server);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, host, () => resolve());
  });
  const port = (server.address() as { port: number }).port;
  return { port, seen };
}

type Answer = { address: string; family: 4 | 6 };
function resolver(...rounds: Answer[][]) {
  const calls: string[] = [];
  const resolve = async (hostname: string, signal: AbortSignal) => {
    expect(signal).toBeInstanceOf(AbortSignal);
    calls.push(hostname);
    return rounds[Math.min(calls.length, rounds.length) - 1];
  };
  return Object.assign(resolve, { calls });
}

const v4 = (address: string): Answer => ({ address, family: 4 });
const v6 = (address: string): Answer => ({ address, family: 6 });

async function failure(promise: Promise<unknown>) {
  try {
    await promise;
  } catch (error) {
    return error as { message: string; code?: string };
  }
  throw new Error("expected a rejection");
}

const publicConfig = (resolveHostname: unknown, extra: Record<string, unknown> = {}) => ({
  type: "streamable-http" as const,
  url: "https://mcp.example.test/mcp",
  allowedOrigins: ["https://mcp.example.test"],
  resolveHostname: resolveHostname as any,
  ...extra,
});

describe("a public hostname that resolves to a non-public address", () => {
  it("is refused like the literal address, before any connection", async () => {
    for (const answers of [
      [v4("127.0.0.1")],
      [v4("169.254.169.254")],
      [v4("10.0.0.7")],
      [v4("192.168.0.1")],
      [v6("::1")],
      [v6("::ffff:127.0.0.1")],
      [v6("fd00::1")],
      [v6("64:ff9b::a9fe:a9fe")], // NAT64 of 169.254.169.254
      [v6("2002:a00:1::1")], // 6to4 of 10.0.0.1
      [v6("::ffff:0:7f00:1")], // SIIT of 127.0.0.1
      [v6("2001:0:4136:e378:8000:63bf:5601:5601")], // Teredo, client 169.254.169.254
      [v4("93.184.216.34"), v4("127.0.0.1")], // one bad answer among good ones
    ]) {
      const resolve = resolver(answers);
      const error = await failure(createSecureMcpFetch(publicConfig(resolve))("https://mcp.example.test/mcp", { method: "POST", body: "{}" }));
      expect(error.message, JSON.stringify(answers)).toBe("MCP hostname resolved to a private or non-public address");
      expect(error.code).toBe("ERR_PRISM_MCP_TRANSPORT");
      expect(resolve.calls).toEqual(["mcp.example.test"]);
    }
  });

  it("is refused even with allowLoopbackHttp: only a loopback name may resolve to loopback", async () => {
    const { port, seen } = await listen((_req, res) => res.end("ok"));
    const origin = `http://127.0.0.2:${port}`;
    // A public name pointing at the loopback server: refused, the server hears nothing.
    const resolve = resolver([v4("127.0.0.2")]);
    const config = publicConfig(resolve, { allowLoopbackHttp: true });
    const error = await failure(createSecureMcpFetch(config)("https://mcp.example.test/mcp"));
    expect(error.message).toBe("MCP hostname resolved to a private or non-public address");
    expect(seen).toEqual([]);
    // The literal loopback origin, with the opt-in, is served.
    const direct = createSecureMcpFetch({ type: "streamable-http", url: `${origin}/mcp`, allowedOrigins: [origin], allowLoopbackHttp: true });
    expect(await (await direct(`${origin}/mcp`)).text()).toBe("ok");
  });

  it("ends a bridge's connect with the reason (169.254.169.254, a cloud metadata address)", async () => {
    const resolve = resolver([v4("169.254.169.254")]);
    const error = await failure(connectMcpTools({ serverId: "meta", transport: publicConfig(resolve), connectTimeoutMs: 5_000 }));
    expect(error.message).toContain("MCP hostname resolved to a private or non-public address");
    expect(resolve.calls.length).toBeGreaterThanOrEqual(1);
  });

  it("is refused for OAuth discovery requests too", async () => {
    const resolve = resolver([v4("169.254.169.254")]);
    const oauthFetch = createMcpOAuthFetch(
      publicConfig(resolve, {
        auth: { state: {} as any, strategy: { kind: "static", clientId: "c" } },
      }) as any,
    );
    const error = await failure(oauthFetch("https://auth.example.test/.well-known/oauth-authorization-server"));
    expect(error.message).toBe("MCP hostname resolved to a private or non-public address");
    expect(resolve.calls).toEqual(["auth.example.test"]);
  });
});

describe("pinning the checked answer", () => {
  it("connects to the answer that was checked, asking the resolver once per request", async () => {
    const { port, seen } = await listen((_req, res) => res.end("pinned"));
    const origin = `http://localhost:${port}`;
    // Real DNS would give 127.0.0.1 or ::1 for localhost, where nothing listens on this port.
    const resolve = resolver([v4("127.0.0.2")]);
    const fetch = createSecureMcpFetch({ type: "streamable-http", url: `${origin}/mcp`, allowedOrigins: [origin], allowLoopbackHttp: true, resolveHostname: resolve });
    for (const method of ["POST", "GET", "DELETE"]) {
      const response = await fetch(`${origin}/mcp`, { method, body: method === "POST" ? "{}" : undefined, headers: { authorization: "Bearer t" } });
      expect(await response.text()).toBe("pinned");
    }
    expect(resolve.calls).toEqual(["localhost", "localhost", "localhost"]);
    expect(seen).toEqual([`POST /mcp host=localhost:${port}`, `GET /mcp host=localhost:${port}`, `DELETE /mcp host=localhost:${port}`]);
  });

  it("takes ::1 as loopback however the resolver writes it", async () => {
    const { port, seen } = await listen((_req, res) => res.end("six"), "::1");
    const origin = `http://localhost:${port}`;
    for (const address of ["0:0:0:0:0:0:0:1", "::0.0.0.1", "0000::0001"]) {
      const fetch = createSecureMcpFetch({ type: "streamable-http", url: `${origin}/mcp`, allowedOrigins: [origin], allowLoopbackHttp: true, resolveHostname: resolver([v6(address)]) });
      expect(await (await fetch(`${origin}/mcp`)).text(), address).toBe("six");
    }
    expect(seen).toHaveLength(3);
  });

  it("refuses a rebound answer: loopback first, then a private address", async () => {
    const { port, seen } = await listen((_req, res) => res.end("ok"));
    const origin = `http://localhost:${port}`;
    const resolve = resolver([v4("127.0.0.2")], [v4("10.0.0.1")]);
    const fetch = createSecureMcpFetch({ type: "streamable-http", url: `${origin}/mcp`, allowedOrigins: [origin], allowLoopbackHttp: true, resolveHostname: resolve });
    expect(await (await fetch(`${origin}/mcp`)).text()).toBe("ok");
    const error = await failure(fetch(`${origin}/mcp`));
    expect(error.message).toBe("MCP loopback hostname resolved outside loopback");
    expect(error.code).toBe("ERR_PRISM_MCP_TRANSPORT");
    expect(seen).toHaveLength(1);
  });

  it("carries a whole MCP session (initialize, list, call) over pinned connections", async () => {
    const { createPrismMcpServer, createPrismMcpWebHandler, createPrismMcpNodeHandler } = await import("../mcp/index.mjs");
    const handler = await createPrismMcpWebHandler(() =>
      createPrismMcpServer({
        tools: [{ name: "echo", parameters: { type: "object" }, execute: (args: any, ctx: any) => ({ toolCallId: ctx.toolCallId, name: "echo", value: args }) }],
        authorize: () => ({ allowed: true }),
      } as any),
    );
    const node = createPrismMcpNodeHandler(handler);
    const { port } = await listen((req, res) => void node(req, res));
    const origin = `http://localhost:${port}`;
    const resolve = resolver([v4("127.0.0.2")]);
    const bridge: any = await connectMcpTools({
      serverId: "pinned",
      transport: { type: "streamable-http", url: `${origin}/mcp`, allowedOrigins: [origin], allowLoopbackHttp: true, resolveHostname: resolve },
    });
    try {
      expect(bridge.tools.map((t: any) => t.name)).toEqual(["mcp:pinned:echo"]);
      const result = await bridge.tools[0].execute({ text: "hi" }, { toolCallId: "c1", sessionId: "s", runId: "r", signal: new AbortController().signal });
      expect(JSON.stringify(result.content)).toContain("hi");
      expect(resolve.calls.length).toBeGreaterThanOrEqual(3);
      expect(new Set(resolve.calls)).toEqual(new Set(["localhost"]));
    } finally {
      await bridge.close();
    }
  });
});

describe("createSecureMcpFetch's other checks", () => {
  const loopback = async (handler: (req: IncomingMessage, res: ServerResponse) => void, extra: Record<string, unknown> = {}) => {
    const server = await listen(handler, "127.0.0.1");
    const origin = `http://127.0.0.1:${server.port}`;
    return { ...server, origin, fetch: createSecureMcpFetch({ type: "streamable-http", url: `${origin}/mcp`, allowedOrigins: [origin], allowLoopbackHttp: true, ...extra }) };
  };

  it("refuses redirects, a declared body over the bound and a streamed one", async () => {
    const { origin, fetch } = await loopback(
      (req, res) => {
        if (req.url === "/redirect") {
          res.writeHead(302, { location: "http://169.254.169.254/" });
          res.end();
        } else if (req.url === "/declared") {
          res.writeHead(200, { "content-length": "64" });
          res.end("z".repeat(64));
        } else {
          res.write("x".repeat(8));
          res.end("y".repeat(8));
        }
      },
      { maxResponseBytes: 10 },
    );
    expect((await failure(fetch(`${origin}/redirect`))).message).toBe("MCP HTTP redirects are not allowed (status 302)");
    expect((await failure(fetch(`${origin}/declared`))).message).toBe("MCP HTTP response exceeds 10 bytes");
    const streamed = await fetch(`${origin}/chunked`);
    expect((await failure(streamed.text())).message).toBe("MCP HTTP response exceeds 10 bytes");
  });

  it("refuses another origin, a Host override and an unsupported body, with upstream's messages", async () => {
    const { origin, fetch, seen } = await loopback((_req, res) => res.end("ok"));
    expect((await failure(fetch("http://example.test/mcp"))).message).toBe("MCP HTTP origin http://example.test is not allow-listed");
    expect((await failure(fetch(`${origin}/mcp`, { headers: { host: "evil.test" } }))).message).toBe("MCP HTTP requests must not override Host");
    const stream = new ReadableStream({ start: (c) => c.close() });
    expect((await failure(fetch(`${origin}/mcp`, { method: "POST", body: stream, duplex: "half" } as any))).message).toBe(
      "MCP HTTP request body type is not supported by the pinned transport",
    );
    const other = "http://127.0.0.1:1";
    const two = createSecureMcpFetch({ type: "streamable-http", url: `${origin}/mcp`, allowedOrigins: [origin, other], allowLoopbackHttp: true });
    expect((await failure(two(`${other}/mcp`))).message).toBe(`MCP HTTP request origin ${other} does not match configured endpoint`);
    expect(seen).toEqual([]);
  });

  it("aborts a pending request and its body with the caller's reason", async () => {
    let release!: () => void;
    const { origin, fetch } = await loopback((req, res) => {
      if (req.url === "/slow-head") return void (release = () => res.end("late"));
      res.write("first");
    });
    const early = new AbortController();
    const pending = fetch(`${origin}/slow-head`, { signal: early.signal });
    await new Promise((resolve) => setTimeout(resolve, 20));
    early.abort(new Error("stop now"));
    expect((await failure(pending)).message).toBe("stop now");
    release?.();
    const late = new AbortController();
    const response = await fetch(`${origin}/body`, { signal: late.signal });
    const reader = response.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe("first");
    late.abort(new Error("stop the body"));
    expect((await failure(reader.read())).message).toBe("stop the body");
  });

  it("refuses a bad resolver and bad answers with a code", async () => {
    expect(() => createSecureMcpFetch(publicConfig("dns"))).toThrow(expect.objectContaining({ message: "resolveHostname must be a function", code: "ERR_PRISM_MCP_TRANSPORT" }));
    expect(() => createMcpTransport(publicConfig(42))).toThrow("resolveHostname must be a function");
    const cases: Array<[() => unknown, string]> = [
      [() => [], "MCP hostname returned an invalid address count"],
      [() => Array.from({ length: 33 }, () => v4("93.184.216.34")), "MCP hostname returned an invalid address count"],
      [() => "93.184.216.34", "MCP hostname returned an invalid address count"],
      [() => [{ address: "93.184.216.34", family: 6 }], "MCP hostname resolver returned an invalid address"],
      [() => [{ address: "not-an-ip", family: 4 }], "MCP hostname resolver returned an invalid address"],
      [() => [null], "MCP hostname resolver returned an invalid address"],
      [
        () => {
          throw new Error("ENOTFOUND");
        },
        "MCP hostname mcp.example.test could not be resolved",
      ],
    ];
    for (const [answer, message] of cases) {
      const error = await failure(createSecureMcpFetch(publicConfig(async () => answer()))("https://mcp.example.test/mcp"));
      expect(error.message).toBe(message);
      expect(error.code).toBe("ERR_PRISM_MCP_TRANSPORT");
    }
  });

  it("a resolver that never answers is ended by the caller's signal", async () => {
    const fetch = createSecureMcpFetch(publicConfig(() => new Promise(() => undefined)));
    const controller = new AbortController();
    const pending = fetch("https://mcp.example.test/mcp", { signal: controller.signal });
    controller.abort(new Error("gave up"));
    expect((await failure(pending)).message).toBe("gave up");
  });
});
