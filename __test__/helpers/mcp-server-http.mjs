// The tests' registry served over Streamable HTTP on 127.0.0.1 (an ephemeral port) in this process:
// createPrismMcpServer per session, createPrismMcpWebHandler, createPrismMcpNodeHandler. Bearer tokens
// name principals (`Bearer alice`); the host's authorize turns the token into a verified identity.
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import { createMemoryRunLedger, createMemoryToolEffectStore, createToolRegistry } from "../../index.mjs";
import { createPrismMcpNodeHandler, createPrismMcpServer, createPrismMcpWebHandler } from "../../mcp/index.mjs";
import { SECRET, identityFor, serverTools } from "./mcp-server-tools.mjs";

const PRINCIPALS = new Set(["alice", "bob"]);

export async function startServedRegistry(handlerOptions = {}, serverOptions = {}) {
  const state = {};
  const ledger = createMemoryRunLedger();
  const effectStore = createMemoryToolEffectStore();
  const registry = createToolRegistry(serverTools(state));
  const authorized = [];
  const factory = () =>
    createPrismMcpServer({
      registry,
      filter: { deny: ["danger"] },
      authorize: ({ authInfo, name }) => {
        const principal = authInfo?.extra?.principal;
        authorized.push(`${principal}:${name}`);
        if (!PRINCIPALS.has(principal)) return false;
        return { allowed: true, ownership: { tenantId: "acme", userId: principal }, identity: identityFor(principal) };
      },
      effectStore,
      ledger,
      secrets: [SECRET],
      ...serverOptions,
    });
  let listener = (_req, res) => res.writeHead(503).end();
  const http = createServer((req, res) => listener(req, res));
  await new Promise((resolve) => http.listen(0, "127.0.0.1", resolve));
  const origin = `http://127.0.0.1:${http.address().port}`;
  const handler = await createPrismMcpWebHandler(factory, {
    sessionIdGenerator: () => randomUUID(),
    allowedOrigins: [origin],
    enableJsonResponse: false,
    resolveAuthInfo: (request) => {
      const match = /^Bearer ([a-z]+)$/.exec(request.headers.get("authorization") ?? "");
      return match ? { token: match[1], clientId: "test", scopes: ["tools:execute"], extra: { principal: match[1] } } : undefined;
    },
    resolveIdentity: (_request, authInfo) => (authInfo && PRINCIPALS.has(authInfo.token) ? { id: authInfo.token } : false),
    ...handlerOptions,
  });
  listener = createPrismMcpNodeHandler(handler);
  return {
    url: `${origin}/mcp`,
    origin,
    state,
    ledger,
    effectStore,
    authorized,
    handler,
    async close() {
      await handler.close();
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
    },
  };
}
