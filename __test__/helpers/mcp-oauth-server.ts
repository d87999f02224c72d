// A local OAuth authorization server and an MCP resource server that requires its tokens, both on
// 127.0.0.1 and built from the SDK's own server auth helpers (`mcpAuthRouter`, `mcpAuthMetadataRouter`,
// `requireBearerAuth`), for the OAuth client tests. The provider is in memory: authorization codes
// (PKCE checked by the SDK's token handler), access and refresh tokens, dynamic registration, revocation.
import { randomUUID } from "node:crypto";
import type { Server as HttpServer } from "node:http";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const express = require("express");
const { mcpAuthRouter, mcpAuthMetadataRouter, getOAuthProtectedResourceMetadataUrl } = require("@modelcontextprotocol/sdk/server/auth/router.js");
const { requireBearerAuth } = require("@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js");
const { InvalidGrantError, InvalidTokenError } = require("@modelcontextprotocol/sdk/server/auth/errors.js");
const { McpServer } = require("@modelcontextprotocol/sdk/server/mcp.js");
const { StreamableHTTPServerTransport } = require("@modelcontextprotocol/sdk/server/streamableHttp.js");

export class MemoryOAuthProvider {
  clients = new Map<string, any>();
  codes = new Map<string, { client: any; params: any }>();
  access = new Map<string, { clientId: string; scopes: string[]; expiresAt: number; resource?: URL }>();
  refresh = new Map<string, { clientId: string; scopes: string[] }>();
  issued: string[] = [];
  revoked: string[] = [];
  refreshes = 0;
  clientsStore = {
    getClient: async (id: string) => this.clients.get(id),
    registerClient: async (client: any) => {
      this.clients.set(client.client_id, client);
      return client;
    },
  };
  async authorize(client: any, params: any, res: any) {
    const code = randomUUID();
    this.codes.set(code, { client, params });
    const target = new URL(params.redirectUri);
    target.searchParams.set("code", code);
    if (params.state) target.searchParams.set("state", params.state);
    res.redirect(target.href);
  }
  async challengeForAuthorizationCode(_client: any, code: string) {
    const data = this.codes.get(code);
    if (!data) throw new InvalidGrantError("unknown authorization code");
    return data.params.codeChallenge;
  }
  async exchangeAuthorizationCode(client: any, code: string, _verifier: string, _redirectUri: string, resource?: URL) {
    const data = this.codes.get(code);
    if (!data || data.client.client_id !== client.client_id) throw new InvalidGrantError("unknown authorization code");
    this.codes.delete(code);
    return this.issue(client.client_id, data.params.scopes ?? [], resource);
  }
  async exchangeRefreshToken(client: any, token: string, _scopes?: string[], resource?: URL) {
    const data = this.refresh.get(token);
    if (!data || data.clientId !== client.client_id) throw new InvalidGrantError("unknown refresh token");
    this.refresh.delete(token);
    this.refreshes++;
    return this.issue(client.client_id, data.scopes, resource);
  }
  async verifyAccessToken(token: string) {
    const data = this.access.get(token);
    if (!data) throw new InvalidTokenError("unknown or expired token");
    return { token, clientId: data.clientId, scopes: data.scopes, expiresAt: data.expiresAt, resource: data.resource };
  }
  async revokeToken(_client: any, request: { token: string }) {
    this.revoked.push(request.token);
    this.access.delete(request.token);
    this.refresh.delete(request.token);
  }
  /** Every access token stops working (as when they expire); refresh tokens still do. */
  expireAccessTokens() {
    this.access.clear();
  }
  private issue(clientId: string, scopes: string[], resource?: URL) {
    const accessToken = `at-${randomUUID()}`;
    const refreshToken = `rt-${randomUUID()}`;
    this.issued.push(accessToken, refreshToken);
    this.access.set(accessToken, { clientId, scopes, expiresAt: Math.floor(Date.now() / 1000) + 3600, resource });
    this.refresh.set(refreshToken, { clientId, scopes });
    return { access_token: accessToken, token_type: "bearer", expires_in: 3600, refresh_token: refreshToken, scope: scopes.join(" ") };
  }
}

async function listen(app: any): Promise<{ server: HttpServer; origin: string }> {
  const server: HttpServer = await new Promise((resolve) => {
    const s = app.listen(0, "127.0.0.1", () => resolve(s));
  });
  const address = server.address() as { port: number };
  return { server, origin: `http://127.0.0.1:${address.port}` };
}

/** The authorization server and the resource server (`/mcp`, one `whoami` tool), on two origins. */
export async function startOAuthServers() {
  const provider = new MemoryOAuthProvider();
  let router: any;
  const asApp = express();
  // A metadata address that has moved: a client must not follow it.
  asApp.get("/moved", (_req: any, res: any) => res.redirect("https://example.test/.well-known/oauth-authorization-server"));
  asApp.use((req: any, res: any, next: any) => router(req, res, next));
  const as = await listen(asApp);
  const issuerUrl = new URL(as.origin);
  router = mcpAuthRouter({ provider, issuerUrl, scopesSupported: ["mcp"] });
  const oauthMetadata = {
    issuer: issuerUrl.href,
    authorization_endpoint: `${as.origin}/authorize`,
    token_endpoint: `${as.origin}/token`,
    registration_endpoint: `${as.origin}/register`,
    revocation_endpoint: `${as.origin}/revoke`,
    response_types_supported: ["code"],
    code_challenge_methods_supported: ["S256"],
    token_endpoint_auth_methods_supported: ["client_secret_post", "none"],
    grant_types_supported: ["authorization_code", "refresh_token"],
  };

  const seenAuthorization: string[] = [];
  let rsOrigin = "";
  const rsApp = express();
  rsApp.use(express.json());
  const rs = await listen(rsApp);
  rsOrigin = rs.origin;
  const mcpUrl = new URL(`${rsOrigin}/mcp`);
  rsApp.use(mcpAuthMetadataRouter({ oauthMetadata, resourceServerUrl: mcpUrl, scopesSupported: ["mcp"] }));
  const bearer = requireBearerAuth({ verifier: provider, resourceMetadataUrl: getOAuthProtectedResourceMetadataUrl(mcpUrl) });
  rsApp.all("/mcp", (req: any, _res: any, next: any) => {
    seenAuthorization.push(String(req.headers.authorization ?? ""));
    next();
  });
  rsApp.post("/mcp", bearer, async (req: any, res: any) => {
    const server = new McpServer({ name: "protected", version: "1" });
    server.registerTool("whoami", { description: "The OAuth client the token belongs to" }, async (extra: any) => ({
      content: [{ type: "text", text: `client ${extra.authInfo?.clientId ? "authenticated" : "anonymous"}` }],
    }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on("close", () => {
      transport.close();
      server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  });
  rsApp.all("/mcp", (_req: any, res: any) => res.status(405).end());

  return {
    provider,
    asOrigin: as.origin,
    rsOrigin,
    mcpUrl: mcpUrl.href,
    seenAuthorization,
    close: async () => {
      for (const s of [as.server, rs.server]) {
        s.closeAllConnections?.();
        await new Promise((resolve) => s.close(resolve));
      }
    },
  };
}

/** An in-memory McpClientAuthState (a host backs this with an encrypted store). */
export function memoryAuthState() {
  const data: Record<string, any> = {};
  return {
    data,
    loadTokens: async () => data.tokens,
    saveTokens: async (v: any) => void (data.tokens = v),
    loadDiscovery: async () => data.discovery,
    saveDiscovery: async (v: any) => void (data.discovery = v),
    loadClientInformation: async () => data.client,
    saveClientInformation: async (v: any) => void (data.client = v),
    loadCodeVerifier: async () => data.verifier,
    saveCodeVerifier: async (v: any) => void (data.verifier = v),
    clear: async (scope: string) => {
      if (scope === "all" || scope === "tokens") delete data.tokens;
      if (scope === "all" || scope === "client") delete data.client;
      if (scope === "all" || scope === "verifier") delete data.verifier;
      if (scope === "all" || scope === "discovery") delete data.discovery;
    },
  };
}
