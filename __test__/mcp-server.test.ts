// createPrismMcpServer: a registry served over stdio (a child process) to the official SDK's Client.
// Listing with the host's filter and bounded schemas; every tools/call through dispatch: validation,
// blocked calls, effect claims in a memory store (a retried call with the same id runs once), ledger
// rows, redaction, progress notifications and the client's cancel. Then the options' bounds.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { createMemoryRunLedger, createToolRegistry } from "../index.mjs";
import { createPrismMcpServer, DEFAULT_MAX_SESSIONS, HARD_MAX_SESSIONS, McpBridgeError } from "../mcp/index.mjs";
import { SECRET, serverTools } from "./helpers/mcp-server-tools.mjs";

const helper = join(__dirname, "helpers", "mcp-server-stdio.mjs");
const dir = mkdtempSync(join(tmpdir(), "mcp-server-"));
const ledgerFile = join(dir, "ledger.json");
let client: Client;
let transport: StdioClientTransport;

const readDump = () => JSON.parse(readFileSync(ledgerFile, "utf8")) as { rows: any[]; state: { charges: number; slowAborted: number } };
const text = (result: any) => result.content.map((block: any) => block.text).join("\n");

beforeAll(async () => {
  transport = new StdioClientTransport({ command: process.execPath, args: [helper, ledgerFile], stderr: "inherit" });
  client = new Client({ name: "prism-test-client", version: "1.0.0" });
  await client.connect(transport);
});

afterAll(async () => {
  await client.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("a registry served over stdio", () => {
  it("lists the registry's tools with the host's filter applied, their schemas and effect hints", async () => {
    expect(client.getServerVersion()).toMatchObject({ name: "prism-test-registry" });
    const { tools } = await client.listTools();
    const defs = serverTools({});
    expect(tools.map((tool) => tool.name)).toEqual(["echo", "charge", "leak", "slow"]); // `danger` denied by the filter
    expect(tools[0]).toEqual({
      name: "echo",
      description: "Echo text back",
      inputSchema: defs[0].parameters,
      annotations: { readOnlyHint: true, openWorldHint: false },
    });
    expect(tools[1].annotations).toEqual({ readOnlyHint: false, openWorldHint: true });
    // A tool without `type` gets `type: "object"`, as MCP requires.
    expect(tools[2].inputSchema).toEqual({ type: "object", properties: { fail: { type: "boolean" } } });
  });

  it("calls a tool through dispatch: its value as text and structured content", async () => {
    const result: any = await client.callTool({ name: "echo", arguments: { text: "hello" } });
    expect(result.isError).toBe(false);
    expect(result.structuredContent).toEqual({ echo: "hello" });
    expect(JSON.parse(text(result))).toEqual({ echo: "hello" });
  });

  it("blocks invalid arguments, unknown and denied tools with dispatch's reason and a stable code", async () => {
    const invalid: any = await client.callTool({ name: "echo", arguments: { text: 42 } });
    expect(invalid.isError).toBe(true);
    expect(text(invalid)).toContain("/text: expected string");
    expect(invalid._meta["prism/error"]).toEqual({ code: "ERR_PRISM_MCP_BLOCKED", reason: "validation_failed", tool: "echo" });

    const extra: any = await client.callTool({ name: "echo", arguments: { text: "x", more: 1 } });
    expect(extra._meta["prism/error"].reason).toBe("validation_failed");

    const denied: any = await client.callTool({ name: "danger", arguments: {} });
    expect(denied.isError).toBe(true);
    expect(text(denied)).toBe("Tool denied: danger");
    expect(denied._meta["prism/error"]).toMatchObject({ code: "ERR_PRISM_MCP_BLOCKED", reason: "tool_denied" });

    const unknown: any = await client.callTool({ name: "nope", arguments: {} });
    expect(text(unknown)).toBe("Unknown tool: nope");
    expect(unknown._meta["prism/error"].reason).toBe("unknown_tool");

    const badId: any = await client.callTool({ name: "echo", arguments: { text: "x" }, _meta: { "prism/toolCallId": "bad id with spaces" } });
    expect(badId.isError).toBe(true);
    expect(text(badId)).toMatch(/^ERR_PRISM_MCP_CALL_ID: Invalid _meta\["prism\/toolCallId"\]/);
  });

  it("claims effects in the store: a retried call with the same id runs once and replays its result", async () => {
    const first: any = await client.callTool({ name: "charge", arguments: { amount: 5 }, _meta: { "prism/toolCallId": "pay-1" } });
    const retry: any = await client.callTool({ name: "charge", arguments: { amount: 5 }, _meta: { "prism/toolCallId": "pay-1" } });
    expect(first.structuredContent).toMatchObject({ charged: 5, execution: 1 });
    expect(first.structuredContent.key).toMatch(/^prism:tool-effect:v1:[0-9a-f]{64}$/);
    expect(retry.structuredContent).toEqual(first.structuredContent);
    // Without an id each request is its own call: it runs again.
    const other: any = await client.callTool({ name: "charge", arguments: { amount: 5 } });
    expect(other.structuredContent).toMatchObject({ execution: 2 });
    expect(other.structuredContent.key).not.toBe(first.structuredContent.key);
    expect(readDump().state.charges).toBe(2);
    const rows = readDump().rows.filter((row) => row.toolCallId === "pay-1");
    expect(rows.map((row) => row.status)).toEqual(["started", "finished", "finished"]);
    expect(rows[0]).toMatchObject({ sessionId: "mcp", runId: "pay-1", name: "charge", arguments: { amount: 5 }, tenantId: "acme", userId: "local" });
  });

  it("redacts the host's secrets from results, errors and ledger rows", async () => {
    const ok: any = await client.callTool({ name: "leak", arguments: {} });
    const failed: any = await client.callTool({ name: "leak", arguments: { fail: true } });
    expect(JSON.stringify(ok)).not.toContain(SECRET);
    expect(ok.structuredContent).toEqual({ token: "[REDACTED]", note: "the key is [REDACTED]" });
    expect(failed.isError).toBe(true);
    expect(text(failed)).toBe("upstream refused key [REDACTED]");
    expect(JSON.stringify(failed)).not.toContain(SECRET);
    const rows = readDump().rows.filter((row) => row.name === "leak");
    expect(rows.map((row) => row.status)).toEqual(["started", "finished", "started", "error"]);
    expect(JSON.stringify(rows)).not.toContain(SECRET);
  });

  it("sends tool progress as MCP progress notifications and aborts the tool when the client cancels", async () => {
    const controller = new AbortController();
    const progress: any[] = [];
    const call = client.callTool({ name: "slow", arguments: { steps: 3 } }, undefined, {
      signal: controller.signal,
      onprogress: (p) => {
        progress.push(p);
        if (p.progress === 3) controller.abort(new Error("user cancelled"));
      },
    });
    await expect(call).rejects.toThrow(/user cancelled/);
    expect(progress[0]).toEqual({ progress: 1, total: 3, message: "step 1" });
    expect(progress.at(-1)).toEqual({ progress: 3, total: 3, message: "step 3" });
    // The server ends the call when the cancellation arrives; its ledger row says so.
    let rows: any[] = [];
    for (let i = 0; i < 200 && !rows.some((row) => row.status === "error"); i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      rows = readDump().rows.filter((row) => row.name === "slow");
    }
    expect(rows.at(-1)).toMatchObject({ status: "error", name: "slow" });
    expect(JSON.stringify(rows.at(-1))).toMatch(/abort/i);
    expect(rows.filter((row) => row.progress).map((row) => row.progress.progress)).toEqual([1, 2, 3]);
    expect(readDump().state.slowAborted).toBe(1);
  });
});

describe("createPrismMcpServer options", () => {
  const connect = async (server: any) => {
    const c = new Client({ name: "t", version: "1" });
    const [a, b] = InMemoryTransport.createLinkedPair();
    await server.connect(b);
    await c.connect(a);
    return c;
  };
  const allow = () => ({ allowed: true as const });

  it("refuses bad options with a clear error and a code", () => {
    const tools = serverTools({});
    const attempt = (options: any) => {
      try {
        createPrismMcpServer(options);
      } catch (error: any) {
        return { name: error.name, code: error.code, message: error.message };
      }
      return undefined;
    };
    expect(attempt({ tools })).toMatchObject({ code: "ERR_PRISM_MCP_OPTIONS", message: expect.stringContaining("authorize") });
    expect(attempt({ tools, registry: createToolRegistry(tools), authorize: allow })).toMatchObject({ code: "ERR_PRISM_MCP_OPTIONS" });
    expect(attempt({ tools, authorize: allow, maxResultBytes: 9 * 1024 * 1024 })).toEqual({
      name: "McpBridgeError",
      code: "ERR_PRISM_MCP_LIMIT",
      message: "maxResultBytes must be a positive safe integer <= 8388608",
    });
    expect(attempt({ tools, authorize: allow, maxConcurrentCalls: 0 })?.message).toBe("maxConcurrentCalls must be a positive safe integer <= 256");
    expect(attempt({ tools, authorize: allow, callTimeoutMs: 1.5 })?.message).toBe("callTimeoutMs must be a positive safe integer <= 1800000");
    expect(attempt({ tools: [tools[0], tools[0]], authorize: allow })?.message).toBe("Duplicate tool: echo");
    expect(attempt({ tools, commands: [{ name: "echo", execute: () => ({ name: "echo" }) }], authorize: allow })).toMatchObject({
      code: "ERR_PRISM_MCP_DUPLICATE",
      message: "Duplicate or empty MCP capability name: echo",
    });
    const wide = { name: "wide", parameters: { type: "object", properties: { s: { type: "string", enum: ["x".repeat(300 * 1024)] } } }, execute: () => ({}) };
    expect(attempt({ tools: [wide], authorize: allow })).toMatchObject({ code: "ERR_PRISM_MCP_LIMIT", message: "MCP tool wide inputSchema exceeds 262144 bytes" });
    const array = { name: "list", parameters: { type: "array" }, execute: () => ({}) };
    expect(attempt({ tools: [array], authorize: allow })).toMatchObject({ code: "ERR_PRISM_MCP_SCHEMA", message: 'MCP tool list parameters must be a JSON Schema of type "object"' });
    expect(attempt({ tools, authorize: allow, agentRuns: { "bad id": { lifecycle: {} } } })?.message).toBe("Invalid agent lifecycle capability id: bad id");
    expect(DEFAULT_MAX_SESSIONS).toBe(32);
    expect(HARD_MAX_SESSIONS).toBe(512);
    expect(McpBridgeError).toBeTypeOf("function");
  });

  it("fails closed when authorize refuses, throws, or returns an identity outside its ownership", async () => {
    const state: any = {};
    const tools = serverTools(state);
    const identity = { tenantId: "acme", principal: { kind: "user", id: "u" }, scopes: ["x"], issuedAt: new Date(Date.now() - 1000).toISOString(), verified: true };
    for (const authorize of [
      () => false,
      () => {
        throw new Error("auth backend down");
      },
      () => ({ allowed: true, identity, ownership: { tenantId: "other" } }),
      () => ({ allowed: true, identity: { ...identity, verified: false } }),
      () => ({ ownership: { tenantId: "acme" } }),
    ]) {
      const c = await connect(createPrismMcpServer({ tools, authorize: authorize as any }));
      const result: any = await c.callTool({ name: "charge", arguments: { amount: 1 } });
      expect(result).toEqual({ isError: true, content: [{ type: "text", text: "ERR_PRISM_MCP_FORBIDDEN: Forbidden" }], _meta: { "prism/error": { code: "ERR_PRISM_MCP_FORBIDDEN" } } });
      await c.close();
    }
    expect(state.charges).toBeUndefined();
  });

  it("bounds concurrent calls, the call's time and the result's bytes", async () => {
    const state: any = {};
    const ledger = createMemoryRunLedger();
    const c = await connect(
      createPrismMcpServer({ tools: serverTools(state), authorize: allow, maxConcurrentCalls: 1, callTimeoutMs: 300, maxResultBytes: 16, ledger }),
    );
    const slow = c.callTool({ name: "slow", arguments: {} }, undefined, { onprogress: () => undefined });
    for (let i = 0; i < 200 && !state.slowStarted; i++) await new Promise((resolve) => setTimeout(resolve, 5));
    const busy: any = await c.callTool({ name: "echo", arguments: { text: "hi" } });
    expect(text(busy)).toBe("ERR_PRISM_MCP_CO"); // cut to 16 bytes
    expect(busy._meta["prism/error"].code).toBe("ERR_PRISM_MCP_CONCURRENCY");
    const timedOut: any = await slow;
    expect(timedOut.isError).toBe(true);
    expect(timedOut._meta["prism/error"].code).toBe("ERR_PRISM_MCP_SERVER");
    expect(state.slowAborted).toBe(1); // the deadline aborted the tool's signal
    const long: any = await c.callTool({ name: "echo", arguments: { text: "é".repeat(40) } });
    expect(Buffer.byteLength(text(long))).toBeLessThanOrEqual(16);
    expect(long._meta["prism/truncated"]).toBe(true);
    expect(long.structuredContent).toBeUndefined();
    await c.close();
  });

  it("serves commands, resources, prompts and agent lifecycle tools beside the registry", async () => {
    const seen: string[] = [];
    const server = createPrismMcpServer({
      tools: [serverTools({})[0]],
      commands: [{ name: "workflow.status", parameters: { type: "object", properties: { runId: { type: "string" } } }, execute: (args: any) => ({ name: "workflow.status", value: { runId: args.runId, status: "suspended" } }) }],
      resources: [{ name: "readme", uri: "file:///readme.md", mimeType: "text/markdown", read: ({ uri }: any) => ({ contents: [{ uri, text: `# readme ${SECRET}` }] }) }],
      prompts: [{ name: "greet", arguments: { who: { required: true } }, get: ({ arguments: args }: any) => ({ messages: [{ role: "user", content: { type: "text", text: `hi ${args.who}` } }] }) }],
      agentRuns: { support: { lifecycle: { status: async (ref: any) => ({ runId: ref.runId, status: "suspended" }), resume: async () => ({ status: "denied" }) } } },
      authorize: (input: any) => {
        seen.push(`${input.kind}:${input.name}`);
        return { allowed: true, ownership: { tenantId: "t", userId: "u" } };
      },
      secrets: [SECRET],
    });
    const c = await connect(server);
    expect((await c.listTools()).tools.map((tool) => tool.name)).toEqual(["echo", "workflow.status", "agent.support.status", "agent.support.resume"]);
    expect(((await c.callTool({ name: "workflow.status", arguments: { runId: "r1" } })) as any).structuredContent).toEqual({ runId: "r1", status: "suspended" });
    expect(((await c.callTool({ name: "agent.support.status", arguments: { runId: "r1" } })) as any).structuredContent).toEqual({ runId: "r1", status: "suspended" });
    expect((await c.readResource({ uri: "file:///readme.md" })).contents[0].text).toBe("# readme [REDACTED]");
    expect((await c.getPrompt({ name: "greet", arguments: { who: "Ada" } })).messages[0].content).toEqual({ type: "text", text: "hi Ada" });
    await expect(c.getPrompt({ name: "greet", arguments: {} })).rejects.toThrow(/needs argument who/);
    expect(seen).toEqual(["command:workflow.status", "tool:agent.support.status", "resource:readme", "prompt:greet"]);
    await c.close();
  });
});

describe("examples/mcp-server-demo.mjs", () => {
  it("serves the demo's tools over stdio and runs a session against itself", async () => {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [join(__dirname, "..", "examples", "mcp-server-demo.mjs"), "--self"], { timeout: 60_000 });
    expect(stdout).toContain("tools/list: 114 of 117 tools (delete_* hidden by the host's filter)");
    expect(stdout).toContain('get_me        → {"ok":true,"tool":"get_me","args":{},"auth":"token [REDACTED]"}');
    expect(stdout).toContain("bad arguments → validation_failed - /repo: required property is missing");
    expect(stdout).toContain("delete_file   → tool_denied - Tool denied: delete_file");
    expect(stdout).toMatch(/create_issue {2}→ same result on retry \(claimed once\): true/);
    expect(stderr).toContain("prism-demo-github: 7 ledger rows; statuses started, finished, blocked");
  });
});
