// Where a Streamable HTTP transport may go (as `@arnilo/prism-mcp`: a non-public host is refused unless
// loopback is explicitly enabled, and then only loopback), and how large a server's thrown error may get.
import { describe, expect, it, afterAll } from "vitest";
import { createSecretRedactor, createToolRegistry, dispatchToolCall } from "../index.mjs";
import { connectMcpTools, createMcpTransport } from "../mcp/index.mjs";
import { hostileStdio, stopAll, track } from "./helpers/mcp-servers";

afterAll(async () => {
  expect(await stopAll()).toEqual([]);
});

const http = (url: string, extra: Record<string, unknown> = {}) => ({ type: "streamable-http" as const, url, allowedOrigins: [new URL(url).origin], ...extra });

describe("createMcpTransport addresses", () => {
  it("refuses loopback, private, link-local and local names as not public", () => {
    for (const url of [
      "https://127.0.0.1/mcp",
      "https://127.8.9.10/mcp",
      "https://[::1]/mcp",
      "https://169.254.169.254/mcp",
      "https://10.0.0.5/mcp",
      "https://192.168.1.1/mcp",
      "https://172.16.0.1/mcp",
      "https://100.64.0.1/mcp",
      "https://0.0.0.0/mcp",
      "https://[::ffff:127.0.0.1]/mcp",
      "https://[fd00::1]/mcp",
      "https://[fe80::1]/mcp",
      "https://localhost/mcp",
      "https://printer.local/mcp",
      "https://metadata.google.internal/mcp",
      // IPv6 forms that carry a non-public IPv4 address (169.254.169.254 is a9fe:a9fe).
      "https://[64:ff9b::a9fe:a9fe]/mcp", // NAT64
      "https://[64:ff9b::169.254.169.254]/mcp",
      "https://[64:ff9b:1::808:808]/mcp", // NAT64 local use: never public
      "https://[2002:a9fe:a9fe::1]/mcp", // 6to4
      "https://[::ffff:0:a9fe:a9fe]/mcp", // SIIT
      "https://[::a9fe:a9fe]/mcp", // IPv4-compatible
      "https://[2001:0:4136:e378:8000:63bf:5601:5601]/mcp", // Teredo, client 169.254.169.254
      "https://[2001:0:a00:1:8000:63bf:f7f7:f7f7]/mcp", // Teredo, server 10.0.0.1
    ]) {
      let error: any;
      try {
        createMcpTransport(http(url));
      } catch (e) {
        error = e;
      }
      expect(error?.message, url).toBe("MCP HTTP URL is not public");
      expect(error.code).toBe("ERR_PRISM_MCP_TRANSPORT");
    }
    expect(() => createMcpTransport(http("https://mcp.example.test/mcp"))).not.toThrow();
    expect(() => createMcpTransport(http("https://93.184.216.34/mcp"))).not.toThrow();
    for (const host of ["64:ff9b::808:808", "2002:808:808::1", "2001:0:4136:e378:8000:63bf:f7f7:f7f7"]) {
      expect(() => createMcpTransport(http(`https://[${host}]/mcp`)), host).not.toThrow();
    }
  });

  it("allowLoopbackHttp admits loopback (https or http) and nothing else that is not public", () => {
    for (const url of ["https://127.0.0.1/mcp", "https://[::1]:8443/mcp", "http://127.0.0.1:3000/mcp", "http://localhost:3000/mcp"]) {
      expect(() => createMcpTransport(http(url, { allowLoopbackHttp: true })), url).not.toThrow();
    }
    for (const url of ["https://169.254.169.254/mcp", "https://10.0.0.5/mcp"]) {
      expect(() => createMcpTransport(http(url, { allowLoopbackHttp: true })), url).toThrow("MCP HTTP URL is not public");
    }
    expect(() => createMcpTransport(http("http://10.0.0.5/mcp", { allowLoopbackHttp: true }))).toThrow("MCP allowed origin must use HTTPS: http://10.0.0.5");
  });
});

describe("a server's thrown error", () => {
  it("is bounded by maxResultBytes and redacted before it reaches the result", async () => {
    const bridge: any = await connectMcpTools({ serverId: "errors", transport: hostileStdio("malformed"), maxResultBytes: 128 });
    track(bridge.pid);
    try {
      const secret = "mcp-client-secret-canary";
      const result: any = await dispatchToolCall({
        call: { type: "tool_call", id: "c1", name: "mcp:errors:throws", arguments: {} },
        registry: createToolRegistry(bridge.tools),
        context: { sessionId: "s1", runId: "r1" },
        redactor: createSecretRedactor([secret]),
      });
      expect(result.error.code).toBe("ERR_PRISM_MCP_TOOL");
      expect(Buffer.byteLength(result.error.message)).toBeLessThanOrEqual(128);
      expect(result.error.message).toMatch(/^MCP error -32603: /);
      expect(JSON.stringify(result)).not.toContain(secret);
    } finally {
      await bridge.close();
    }
  });
});
