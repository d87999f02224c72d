// Serves a registry over stdio with createPrismMcpServer: the tests' tools, a memory effect store, a
// memory ledger (every row written to the file named by the first argument, or $PRISM_LEDGER_FILE, after each append), redaction of SECRET and a
// filter denying `danger`. The identity is the process owner's, as for any stdio server.
import { writeFileSync } from "node:fs";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { createMemoryRunLedger, createMemoryToolEffectStore, createToolRegistry } from "../../index.mjs";
import { createPrismMcpServer } from "../../mcp/index.mjs";
import { SECRET, identityFor, serverTools } from "./mcp-server-tools.mjs";

const state = {};
const memory = createMemoryRunLedger();
const file = process.argv[2] ?? process.env.PRISM_LEDGER_FILE;
const dump = () => file && writeFileSync(file, JSON.stringify({ rows: memory.list("tool_call"), state: { charges: state.charges ?? 0, slowAborted: state.slowAborted ?? 0 } }));
const ledger = {
  ...memory,
  appendToolCall(record) {
    memory.appendToolCall(record);
    dump();
  },
};
const server = createPrismMcpServer({
  name: "prism-test-registry",
  registry: createToolRegistry(serverTools(state)),
  filter: { deny: ["danger"] },
  authorize: () => ({ allowed: true, ownership: { tenantId: "acme", userId: "local" }, identity: identityFor("local") }),
  effectStore: createMemoryToolEffectStore(),
  ledger,
  secrets: [SECRET],
});
await server.connect(new StdioServerTransport());
process.stdin.on("close", () => {
  dump();
  process.exit(0);
});
