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
