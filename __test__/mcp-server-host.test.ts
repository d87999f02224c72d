// DNS rebinding: a web page whose name was rebound to 127.0.0.1 reaches a loopback MCP server with its
// own name in the Host header. Without allowedHosts, a served registry on 127.0.0.1 (through
// createPrismMcpNodeHandler, which knows the socket) answers only to loopback host names, any port —
// as the MCP SDK's localhostHostValidation — with the SDK's 403. allowedHosts replaces the default.
import { request as httpRequest } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { startServedRegistry } from "./helpers/mcp-server-http.mjs";

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  while (open.length) await open.pop()!.close();
});

const INIT = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
});

/** A POST initialize to `url` with the given Host header (or none), by node:http, which lets us set it. */
function post(url: string, host: string | undefined): Promise<{ status: number; body: string }> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        hostname: target.hostname,
        port: target.port,
        path: target.pathname,
        method: "POST",
        setHost: host !== undefined,
        headers: {
          ...(host === undefined ? {} : { host }),
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          authorization: "Bearer alice",
        },
      },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (chunk) => (body += chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on("error", reject);
    req.end(INIT);
  });
}

describe("the Host header of a loopback MCP server", () => {
  it("is refused unless it names a loopback host, when allowedHosts is unset", async () => {
    const served = await startServedRegistry({ enableJsonResponse: true });
    open.push(served);
    const port = new URL(served.url).port;
    for (const host of ["evil.example", `evil.example:${port}`, `127.0.0.1.nip.io:${port}`, `localhost.evil.example:${port}`, "10.0.0.1", "[::2]"]) {
      const answer = await post(served.url, host);
      expect([host, answer.status]).toEqual([host, 403]);
      expect(JSON.parse(answer.body)).toEqual({ jsonrpc: "2.0", error: { code: -32000, message: `Invalid Host header: ${host}` }, id: null });
    }
    // No Host at all: node:http answers 400 itself (HTTP/1.1 requires it) before any handler runs.
    expect((await post(served.url, undefined)).status).toBe(400);
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`, "localhost", "LOCALHOST:1"]) {
      const answer = await post(served.url, host);
      expect([host, answer.status]).toEqual([host, 200]);
      expect(JSON.parse(answer.body).result.serverInfo).toBeDefined();
    }
  });

  it("is checked against allowedHosts alone when they are given", async () => {
    const served = await startServedRegistry({ enableJsonResponse: true, allowedHosts: ["mcp.internal.example"] });
    open.push(served);
    expect((await post(served.url, "mcp.internal.example")).status).toBe(200);
    const loopback = await post(served.url, `127.0.0.1:${new URL(served.url).port}`);
    expect(loopback.status).toBe(403);
  });
});
