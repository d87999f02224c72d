// OAuth for remote MCP servers, with `@arnilo/prism-mcp`'s API, against a local authorization server
// and resource server built from the SDK's server auth helpers (helpers/mcp-oauth-server.ts): dynamic
// registration, the authorization code flow with PKCE (S256) and state, a bridged call with the bearer
// token, refresh when the access token stops working, revocation; tokens never in errors, events or rows.
import { createRequire } from "node:module";
import { afterEach, describe, expect, it } from "vitest";
import { createMemoryRunLedger, createToolRegistry, dispatchToolCall } from "../index.mjs";
import { connectMcpTools, createMcpClientAuth, createMcpOAuthFetch, createMcpOAuthTransport, McpOAuthError } from "../mcp/index.mjs";
import { memoryAuthState, startOAuthServers } from "./helpers/mcp-oauth-server";

const require = createRequire(import.meta.url);
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");

const REDIRECT = "http://127.0.0.1:9/callback";
const servers: { close(): Promise<void> }[] = [];
afterEach(async () => {
  while (servers.length) await servers.pop()!.close();
});

function oauthConfig(mcpUrl: string, rsOrigin: string, state: ReturnType<typeof memoryAuthState>, onRedirect: (url: URL) => void) {
  return {
    type: "streamable-http" as const,
    url: mcpUrl,
    allowedOrigins: [rsOrigin],
    allowLoopbackHttp: true,
    auth: {
      state,
      strategy: {
        kind: "dcr" as const,
        clientMetadata: { client_name: "test", redirect_uris: [REDIRECT], grant_types: ["authorization_code", "refresh_token"], response_types: ["code"], token_endpoint_auth_method: "none" },
      },
      scopes: ["mcp"],
      redirectUri: REDIRECT,
      onRedirectRequired: onRedirect,
    },
  };
}

/** The user approves in a browser: the authorization server redirects to the callback with a code. */
async function approve(authorizationUrl: URL) {
  const response = await fetch(authorizationUrl, { redirect: "manual" });
  expect(response.status).toBe(302);
  const location = new URL(response.headers.get("location")!);
  expect(location.origin + location.pathname).toBe(REDIRECT);
  expect(location.searchParams.get("state")).toBe(authorizationUrl.searchParams.get("state"));
  return location.searchParams.get("code")!;
}

describe("MCP OAuth", () => {
  it("authorization code with PKCE, a bridged call with the token, refresh, revocation; no token in errors, events or rows", async () => {
    const servers0 = await startOAuthServers();
    servers.push(servers0);
    const { provider, mcpUrl, rsOrigin, asOrigin } = servers0;
    const state = memoryAuthState();
    let authorizationUrl: URL | undefined;
    const config = oauthConfig(mcpUrl, rsOrigin, state, (url) => void (authorizationUrl = url));

    // First connect: no token; discovery and registration run and the user is sent to authorize.
    const { transport, auth } = createMcpOAuthTransport(config);
    const first = new Client({ name: "host", version: "1" });
    const refused = await first.connect(transport).catch((e: unknown) => e);
    expect(String(refused)).toMatch(/Unauthorized/);
    expect(authorizationUrl!.origin).toBe(asOrigin);
    expect(authorizationUrl!.searchParams.get("code_challenge_method")).toBe("S256");
    expect(authorizationUrl!.searchParams.get("code_challenge")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(authorizationUrl!.searchParams.get("state")).toMatch(/^[0-9a-f-]{36}$/);
    expect(authorizationUrl!.searchParams.get("resource")).toBe(mcpUrl);
    expect(state.data.client.client_id).toBeDefined();
    expect(state.data.verifier).toMatch(/^[A-Za-z0-9._~-]{43,128}$/);

    await auth.finishAuth(await approve(authorizationUrl!));
    const tokens = await auth.getTokens();
    expect(tokens.access_token).toMatch(/^at-/);
    await transport.close();

    // Connect again with the stored tokens: the bridged call carries the bearer token.
    const bridge: any = await connectMcpTools({ serverId: "oauth", transport: config as any });
    try {
      const ledger = createMemoryRunLedger();
      const events: unknown[] = [];
      const registry = createToolRegistry(bridge.tools);
      const run = (id: string) =>
        dispatchToolCall({ call: { type: "tool_call", id, name: "mcp:oauth:whoami", arguments: {} }, registry, context: { sessionId: "s", runId: "r" }, ledger, emit: (e: unknown) => events.push(e) });
      const result: any = await run("c1");
      expect(result.content).toEqual([{ type: "text", text: "client authenticated" }]);
      expect(servers0.seenAuthorization.at(-1)).toBe(`Bearer ${tokens.access_token}`);

      // The access token stops working: the transport refreshes once and the call goes through.
      provider.expireAccessTokens();
      const again: any = await run("c2");
      expect(again.content).toEqual([{ type: "text", text: "client authenticated" }]);
      expect(provider.refreshes).toBe(1);
      const refreshed = await auth.getTokens();
      expect(refreshed.access_token).not.toBe(tokens.access_token);

      // No token anywhere the host records or shows.
      const recorded = JSON.stringify([result, again, events, ledger.list("tool_call"), ledger.list("event")]);
      for (const token of provider.issued) expect(recorded).not.toContain(token);
    } finally {
      await bridge.close();
    }

    // Revocation: the refresh token is revoked at the server and the local tokens are gone.
    const current = await auth.getTokens();
    await auth.revoke();
    expect(provider.revoked).toEqual([current.refresh_token]);
    expect(await auth.getTokens()).toBeUndefined();
  });

  it("a refused code exchange or a missing verifier is an McpOAuthError or OAuth error that names no secret", async () => {
    const servers0 = await startOAuthServers();
    servers.push(servers0);
    const state = memoryAuthState();
    let authorizationUrl: URL | undefined;
    const config = oauthConfig(servers0.mcpUrl, servers0.rsOrigin, state, (url) => void (authorizationUrl = url));
    const { transport, auth } = createMcpOAuthTransport(config);
    await new Client({ name: "host", version: "1" }).connect(transport).catch(() => undefined);
    const verifier = state.data.verifier;
    const wrong = await auth.finishAuth("not-a-code").catch((e: Error) => e);
    expect(wrong).toBeInstanceOf(Error);
    expect(JSON.stringify({ message: (wrong as Error).message, cause: String((wrong as any).cause) })).not.toContain(verifier);
    await state.clear("verifier");
    const missing: any = await auth.finishAuth(await approve(authorizationUrl!)).catch((e: Error) => e);
    expect(missing).toBeInstanceOf(McpOAuthError);
    expect(missing).toMatchObject({ code: "ERR_PRISM_MCP_OAUTH_STATE", message: "PKCE code verifier is missing from the auth round trip" });
    await transport.close();
  });

  it("discovery requests to other origins are public https only, without redirects or bearer headers", async () => {
    const config = {
      type: "streamable-http" as const,
      url: "https://mcp.example.test/mcp",
      allowedOrigins: ["https://mcp.example.test"],
      auth: { state: memoryAuthState(), strategy: { kind: "static" as const, clientId: "c" } },
    };
    const fetch = createMcpOAuthFetch(config as any);
    const codes = async (url: string) => fetch(url).then(() => "fetched", (e: any) => [e.name, e.code, e.message]);
    expect(await codes("https://169.254.169.254/.well-known/oauth-authorization-server")).toEqual(["McpOAuthError", "ERR_PRISM_MCP_OAUTH_SSRF", "OAuth discovery URL is not public"]);
    expect(await codes("https://127.0.0.1/.well-known/oauth-authorization-server")).toEqual(["McpOAuthError", "ERR_PRISM_MCP_OAUTH_SSRF", "OAuth discovery URL is not public"]);
    expect(await codes("http://auth.example.test/token")).toEqual([
      "McpOAuthError",
      "ERR_PRISM_MCP_OAUTH_SSRF",
      "Plaintext OAuth discovery is allowed only for an explicitly enabled loopback endpoint",
    ]);
    expect(await codes("https://user:pw@auth.example.test/")).toEqual(["McpOAuthError", "ERR_PRISM_MCP_OAUTH_SSRF", "OAuth discovery URL must not embed credentials"]);
    expect(() => createMcpClientAuth({ state: {}, strategy: { kind: "static", clientId: "c" } } as any, { serverUrl: "https://x.test", fetch })).toThrow(
      "MCP OAuth state must implement loadTokens()",
    );

    // A loopback discovery endpoint (with the opt-in) that redirects is refused, and a GET loses its bearer header.
    const servers0 = await startOAuthServers();
    servers.push(servers0);
    const loop = createMcpOAuthFetch({ ...config, url: servers0.mcpUrl, allowedOrigins: [servers0.rsOrigin], allowLoopbackHttp: true } as any);
    const redirected = await loop(`${servers0.asOrigin}/moved`).catch((e: any) => e);
    expect(redirected).toMatchObject({ code: "ERR_PRISM_MCP_OAUTH_DISCOVERY", message: "OAuth discovery redirects are not allowed (status 302)" });
    const metadata = await loop(`${servers0.asOrigin}/.well-known/oauth-authorization-server`, { headers: { authorization: "Bearer secret-canary" } });
    expect((await metadata.json()).issuer).toBe(`${servers0.asOrigin}/`);
  });
});
