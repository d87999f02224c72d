// The MCP bridge against the published @modelcontextprotocol/server-everything, over stdio and over
// Streamable HTTP on 127.0.0.1: tools through dispatch, progress, structured content, isError,
// resources and prompts through the facades, names, and the processes it starts.
import { afterAll, describe, expect, it } from "vitest";
import {
  createJsonSchemaToolArgumentValidator,
  createMemoryRunLedger,
  createToolRegistry,
  createToolSearchIndex,
  dispatchToolCall,
  selectDisclosedTools,
} from "../index.mjs";
import {
  connectMcpCapabilities,
  connectMcpTools,
  formatMcpToolName,
  formatProviderSafeMcpToolName,
  isProviderSafeToolName,
  mapMcpContentToBlocks,
  McpBridgeClosedError,
  McpUnsupportedCapabilityError,
  measureBoundedJson,
  resolveMcpClientLimits,
} from "../mcp/index.mjs";
import { everythingStdio, isAlive, startEverythingHttp, stopAll, track, waitFor } from "./helpers/mcp-servers";

afterAll(async () => {
  expect(await stopAll()).toEqual([]);
});

const ctx = { sessionId: "s1", runId: "r1" };
const call = (id: string, name: string, args: Record<string, unknown> = {}) => ({ type: "tool_call" as const, id, name, arguments: args as any });

const transports: Array<[string, () => Promise<any>]> = [
  ["stdio", async () => everythingStdio()],
  [
    "streamable-http",
    async () => {
      const server = await startEverythingHttp();
      return { type: "streamable-http", url: server.url, allowedOrigins: [server.origin], allowLoopbackHttp: true };
    },
  ],
];

describe.each(transports)("server-everything over %s", (_label, makeTransport) => {
  it("bridges its tools and runs them through dispatch with validation, progress, structured content and isError", async () => {
    const bridge = await connectMcpCapabilities({ serverId: "everything", transport: await makeTransport(), callTimeoutMs: 20_000 });
    track(bridge.pid);
    try {
      expect(bridge.state).toBe("connected");
      const names = bridge.tools.map((tool: any) => tool.name);
      for (const name of ["echo", "get-sum", "get-structured-content", "trigger-long-running-operation", "get-resource-reference"]) {
        expect(names).toContain(`mcp:everything:${name}`);
      }
      const sum = bridge.tools.find((tool: any) => tool.name === "mcp:everything:get-sum");
      expect(sum.parameters).toMatchObject({ type: "object", properties: { a: { type: "number" }, b: { type: "number" } } });
      // readOnlyHint → an observation effect that may run in parallel.
      expect(sum.effect).toEqual({ kind: "none", idempotency: "none" });
      expect(sum.exclusive).toBe(false);

      const registry = createToolRegistry(bridge.tools);
      const ledger = createMemoryRunLedger();
      const validate = createJsonSchemaToolArgumentValidator();
      const run = (c: any, extra: any = {}) => dispatchToolCall({ call: c, registry, context: ctx, ledger, validate, ...extra });

      const echoed: any = await run(call("c1", "mcp:everything:echo", { message: "hello bridge" }));
      expect(echoed.error).toBeUndefined();
      expect(echoed.content).toEqual([{ type: "text", text: "Echo: hello bridge" }]);
      expect(echoed.metadata).toMatchObject({ untrusted: true, trust: "untrusted_external", mcp: { serverId: "everything", remoteName: "echo" } });

      const added: any = await run(call("c2", "mcp:everything:get-sum", { a: 2, b: 40 }));
      expect(added.content[0].text).toBe("The sum of 2 and 40 is 42.");

      // The package's validator blocks a bad call before it reaches the server.
      const blocked: any = await run(call("c3", "mcp:everything:get-sum", { a: "two", b: 40 }));
      expect(blocked.error.message).toMatch(/\/a: expected number/);

      const weather: any = await run(call("c4", "mcp:everything:get-structured-content", { location: "Chicago" }));
      expect(weather.value).toEqual({ temperature: 36, conditions: "Light rain / drizzle", humidity: 82 });
      expect(JSON.parse(weather.content[0].text)).toEqual(weather.value);

      const progress: any[] = [];
      const events: any[] = [];
      const long: any = await run(call("c5", "mcp:everything:trigger-long-running-operation", { duration: 0.3, steps: 3 }), {
        context: { ...ctx, progress: (p: unknown) => progress.push(p) },
        emit: (event: any) => events.push(event),
      });
      expect(long.content[0].text).toMatch(/Long running operation completed/);
      expect(progress.length).toBeGreaterThanOrEqual(1);
      expect(progress[0]).toMatchObject({ progress: 1, total: 3 });
      expect(events.filter((e) => e.type === "tool_execution_progress").map((e) => e.progress)).toEqual(progress);

      // The server throws inside the tool: an isError result becomes an error result with its text.
      const failed: any = await run(call("c6", "mcp:everything:get-resource-reference", { resourceType: "Text", resourceId: -1 }));
      expect(failed.error).toMatchObject({ name: "McpToolError", code: "ERR_PRISM_MCP_TOOL", message: "Invalid resourceId: -1. Must be a finite positive integer." });

      const rows = ledger.list ? ledger.list() : (ledger as any).records();
      const statuses = rows.filter((row: any) => row.status !== "started").map((row: any) => [row.toolCallId, row.status]);
      expect(statuses).toEqual([
        ["c1", "finished"],
        ["c2", "finished"],
        ["c3", "blocked"],
        ["c4", "finished"],
        ["c5", "finished"],
        ["c6", "finished"],
      ]);

      // Resources and prompts: facades beside the tools, never tools.
      expect(names.some((name: string) => /resource\/|prompt/.test(name) && !name.startsWith("mcp:everything:get-"))).toBe(false);
      const resources: any[] = await bridge.listResources();
      expect(resources.length).toBeGreaterThan(0);
      const read: any = await bridge.readResource(resources[0].uri);
      expect(read.contents[0].uri).toBe(resources[0].uri);
      const prompts: any[] = await bridge.listPrompts();
      expect(prompts.map((p) => p.name)).toEqual(expect.arrayContaining(["simple-prompt", "args-prompt"]));
      const prompt: any = await bridge.getPrompt("args-prompt", { city: "Lisbon" });
      expect(JSON.stringify(prompt.messages)).toContain("Lisbon");
      await expect(bridge.getPrompt("no-such-prompt")).rejects.toThrow();
    } finally {
      const pid = bridge.pid;
      await bridge.close();
      expect(bridge.state).toBe("closed");
      if (pid !== undefined) expect(await waitFor(() => !isAlive(pid))).toBe(true);
    }
    expect(() => bridge.tools).toThrow(McpBridgeClosedError);
  });
});

describe("connectMcpTools on server-everything", () => {
  it("applies allow/deny to remote names, the provider-safe formatter, and search disclosure", async () => {
    const bridge = await connectMcpTools({
      serverId: "everything",
      transport: everythingStdio(),
      formatName: formatProviderSafeMcpToolName,
      deny: ["get-env", "toggle-simulated-logging"],
    });
    track(bridge.pid);
    try {
      const names = bridge.tools.map((tool: any) => tool.name);
      expect(names).toContain("mcp_everything_get-sum");
      expect(names).not.toContain("mcp_everything_get-env");
      expect(names.every(isProviderSafeToolName)).toBe(true);
      const index = createToolSearchIndex(bridge.tools);
      const hits = index.search("add two numbers sum", { k: 3 });
      expect(hits[0].name).toBe("mcp_everything_get-sum");
      const disclosed = selectDisclosedTools({ tools: bridge.tools, input: "what is the sum of 2 and 3", topK: 2, index });
      expect(disclosed.map((tool: any) => tool.name)).toContain("mcp_everything_get-sum");
      expect(disclosed.length).toBeLessThan(bridge.tools.length);
    } finally {
      await bridge.close();
    }
  });

  it("a host effect policy wins over annotations", async () => {
    const bridge = await connectMcpTools({
      serverId: "everything",
      transport: everythingStdio(),
      allow: ["get-sum", "toggle-simulated-logging"],
      effect: ({ remoteName }: any) => (remoteName === "get-sum" ? { kind: "external_mutation", idempotency: "required" } : undefined),
    });
    track(bridge.pid);
    try {
      const byName = new Map(bridge.tools.map((tool: any) => [tool.name, tool]));
      expect([...byName.keys()]).toEqual(["mcp:everything:get-sum", "mcp:everything:toggle-simulated-logging"]);
      expect((byName.get("mcp:everything:get-sum") as any).effect).toEqual({ kind: "external_mutation", idempotency: "required" });
      expect((byName.get("mcp:everything:get-sum") as any).exclusive).toBe(true);
      // No policy answer: annotations (destructiveHint false, not read-only, not idempotent).
      const toggle: any = byName.get("mcp:everything:toggle-simulated-logging");
      expect(toggle.effect).toEqual({ kind: "external_mutation", idempotency: "unsupported" });
    } finally {
      await bridge.close();
    }
  });

  it("refuses bad options and a connection it cannot make", async () => {
    await expect(connectMcpTools({ serverId: "", transport: everythingStdio() } as any)).rejects.toThrow(/serverId/);
    await expect(connectMcpTools({ serverId: "x", transport: everythingStdio(), callTimeoutMs: 0 })).rejects.toThrow(
      "callTimeoutMs must be a positive safe integer <= 1800000",
    );
    await expect(
      connectMcpTools({ serverId: "x", transport: { type: "streamable-http", url: "http://example.com/mcp", allowedOrigins: ["http://example.com"] } }),
    ).rejects.toThrow("MCP allowed origin must use HTTPS: http://example.com");
    await expect(
      connectMcpTools({ serverId: "x", transport: { type: "streamable-http", url: "https://a.example/mcp", allowedOrigins: ["https://b.example"] } }),
    ).rejects.toThrow("MCP HTTP origin https://a.example is not allow-listed");
    await expect(connectMcpTools({ serverId: "x", transport: { type: "pigeon" } as any })).rejects.toThrow("Unsupported MCP transport: pigeon");
    await expect(
      connectMcpTools({ serverId: "x", transport: { type: "stdio", command: "/nonexistent/mcp-server-binary" }, callTimeoutMs: 5_000 }),
    ).rejects.toThrow();
    const aborted = new AbortController();
    aborted.abort(new Error("host gave up"));
    await expect(connectMcpTools({ serverId: "x", transport: everythingStdio(), signal: aborted.signal })).rejects.toThrow("host gave up");
  });

  it("a server without resources gives McpUnsupportedCapabilityError from the facade", async () => {
    const { hostileStdio } = await import("./helpers/mcp-servers");
    const bridge = await connectMcpCapabilities({ serverId: "plain", transport: hostileStdio("hang") });
    track(bridge.pid);
    try {
      await expect(bridge.listResources()).rejects.toBeInstanceOf(McpUnsupportedCapabilityError);
      await expect(bridge.getPrompt("x")).rejects.toMatchObject({ code: "ERR_PRISM_MCP_UNSUPPORTED_CAPABILITY" });
    } finally {
      await bridge.close();
    }
  });
});

describe("the optional peer dependency", () => {
  it("neither the main entry nor the mcp subpath loads the SDK until a bridge connects", async () => {
    const { spawnSync } = await import("node:child_process");
    const script = [
      "const loaded = () => Object.keys(require.cache).some((k) => k.includes('@modelcontextprotocol'));",
      "require('./index.js'); const a = loaded();",
      "const mcp = require('./mcp/index.js'); const b = loaded();",
      "mcp.connectMcpTools({ serverId: 'x', transport: { type: 'pigeon' } }).catch(() => { console.log(JSON.stringify([a, b, loaded()])); });",
    ].join("\n");
    const out = spawnSync(process.execPath, ["-e", script], { cwd: new URL("..", import.meta.url), encoding: "utf8", timeout: 20_000 });
    expect(out.stdout.trim()).toBe("[false,false,true]");
  });
});

describe("bad input to a bridged tool", () => {
  it("non-object, hostile and oversized arguments end with an error result, never a request", async () => {
    const bridge: any = await connectMcpTools({ serverId: "bad", transport: everythingStdio(), allow: ["echo"] });
    track(bridge.pid);
    try {
      const echo = bridge.tools[0];
      const run = (args: unknown) => echo.execute(args, { ...ctx, toolCallId: "c" });
      for (const args of [null, "text", [1, 2], { message: "x".repeat(2_000_000) }, JSON.parse('{"message":"x","__proto__":{"polluted":true}}'), { message: 7 }]) {
        const result: any = await run(args);
        expect(result.error.code).toBe("ERR_PRISM_MCP_INVALID_ARGUMENTS");
      }
      const cyclic: any = { message: "x" };
      cyclic.self = cyclic;
      expect(((await run(cyclic)) as any).error.code).toBe("ERR_PRISM_MCP_INVALID_ARGUMENTS");
      expect(({} as any).polluted).toBeUndefined();
      // The bridge is still fine.
      expect(((await run({ message: "ok" })) as any).content[0].text).toBe("Echo: ok");
    } finally {
      await bridge.close();
    }
  });
});

describe("one argument check per call", () => {
  it("dispatch's own validator passing spares the bridge its check; any other validate, or another schema, does not", async () => {
    const bridge: any = await connectMcpTools({ serverId: "once", transport: everythingStdio(), allow: ["echo"] });
    track(bridge.pid);
    try {
      const echo = bridge.tools[0];
      const dispatch = (tool: any, args: Record<string, unknown>, validate: any) =>
        dispatchToolCall({ call: call("c1", echo.name, args), registry: createToolRegistry([tool]), context: ctx, validate }) as Promise<any>;
      // A string over the bridge's default 1 000 000 units, under the host validator's raised limit.
      const long = { message: "x".repeat(1_200_000) };
      expect((await echo.execute(long, { ...ctx, toolCallId: "c0" })).error.code).toBe("ERR_PRISM_MCP_INVALID_ARGUMENTS");
      const raised = createJsonSchemaToolArgumentValidator({ maxStringLength: 2_000_000 });
      const passed = await dispatch(echo, long, raised);
      expect(passed.error).toBeUndefined();
      expect(passed.content[0].text).toBe(`Echo: ${long.message}`);
      // A host's own validate proves nothing to the bridge.
      expect((await dispatch(echo, { message: 7 }, () => undefined)).error.code).toBe("ERR_PRISM_MCP_INVALID_ARGUMENTS");
      // Nor does the package's validator passing another schema than the bridged tool's.
      const loose = { ...echo, parameters: { type: "object" } };
      expect((await dispatch(loose, { message: 7 }, raised)).error.code).toBe("ERR_PRISM_MCP_INVALID_ARGUMENTS");
      // The package's validator refusing is dispatch's refusal, before the bridge.
      const refused = await dispatch(echo, { message: 7 }, raised);
      expect(refused.error.code).not.toBe("ERR_PRISM_MCP_INVALID_ARGUMENTS");
      // The mark does not travel with a copied context into a nested call.
      const nested = {
        name: "outer",
        execute: (_a: unknown, c: any) => echo.execute(long, { ...c }),
      };
      const out: any = await dispatchToolCall({ call: call("c2", "outer", long), registry: createToolRegistry([nested]), context: ctx, validate: raised });
      expect(out.error.code).toBe("ERR_PRISM_MCP_INVALID_ARGUMENTS");
    } finally {
      await bridge.close();
    }
  });
});

describe("names, limits and content mapping", () => {
  it("formatMcpToolName keeps upstream's names; the provider-safe formatter is safe and collision-free", () => {
    expect(formatMcpToolName("mcp:fs:", "read_file")).toBe("mcp:fs:read_file");
    const remote = ["read.file", "read_file", "read file", "read:file", "ä-read", "x".repeat(200), "x".repeat(201), "", "a/b/c"];
    const mapped = remote.map((name) => formatProviderSafeMcpToolName("mcp:fs:", name));
    expect(mapped[1]).toBe("mcp_fs_read_file");
    for (const name of mapped) expect(name).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
    expect(new Set(mapped).size).toBe(remote.length);
    // Deterministic: the same input gives the same name.
    expect(formatProviderSafeMcpToolName("mcp:fs:", "read.file")).toBe(mapped[0]);
    // A very long prefix still leaves a valid name.
    expect(formatProviderSafeMcpToolName("p".repeat(100), "tool")).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
  });

  it("limits are checked against upstream's hard caps", () => {
    expect(resolveMcpClientLimits({}).maxTools).toBe(500);
    expect(() => resolveMcpClientLimits({ maxTools: 5001 })).toThrow("maxTools must be a positive safe integer <= 5000");
    expect(() => resolveMcpClientLimits({ maxResultBytes: 1.5 })).toThrow("maxResultBytes must be a positive safe integer <= 16777216");
  });

  it("content blocks are mapped within the byte budget", () => {
    const mapped = mapMcpContentToBlocks(
      [
        { type: "text", text: "héllo" },
        { type: "image", data: "aGk=", mimeType: "image/png" },
        { type: "resource_link", uri: "file:///a", name: "a" },
        { type: "text", text: "z".repeat(100) },
      ] as any,
      { maxResultBytes: 40 },
    );
    expect(mapped.content[0]).toEqual({ type: "text", text: "héllo" });
    expect(mapped.content[1]).toEqual({ type: "image", mimeType: "image/png", data: "aGk=" });
    expect(mapped.content[2]).toEqual({ type: "text", text: "Resource link a: file:///a" });
    expect(mapped.truncated).toBe(true);
    expect(mapped.bytesUsed).toBeLessThanOrEqual(40);
  });

  it("measureBoundedJson counts JSON bytes exactly and stops at cycles, depth and size", () => {
    const value = { a: [1, "x\n", null, true], "é": { b: false } };
    expect(measureBoundedJson(value, { maxBytes: 1000, maxDepth: 10, maxProperties: 100 }).bytes).toBe(Buffer.byteLength(JSON.stringify(value)));
    const cyclic: any = { a: {} };
    cyclic.a.self = cyclic;
    expect(() => measureBoundedJson(cyclic, { maxBytes: 1000, maxDepth: 10, maxProperties: 100 })).toThrow("MCP JSON contains a cycle");
    expect(() => measureBoundedJson({ a: { b: { c: 1 } } }, { maxBytes: 1000, maxDepth: 2, maxProperties: 100 })).toThrow("exceeds depth 2");
    expect(() => measureBoundedJson("x".repeat(20), { maxBytes: 10, maxDepth: 2, maxProperties: 100 })).toThrow("exceeds 10 bytes");
  });
});

describe("Streamable HTTP server that dies mid-call", () => {
  it("gives the pending call an error result and the bridge a clear state", async () => {
    const server = await startEverythingHttp();
    const bridge: any = await connectMcpTools({
      serverId: "remote",
      transport: { type: "streamable-http", url: server.url, allowedOrigins: [server.origin], allowLoopbackHttp: true },
      callTimeoutMs: 30_000,
    });
    try {
      const registry = createToolRegistry(bridge.tools);
      const pending = dispatchToolCall({
        call: call("c1", "mcp:remote:trigger-long-running-operation", { duration: 20, steps: 20 }),
        registry,
        context: ctx,
      });
      await new Promise((resolve) => setTimeout(resolve, 300));
      server.child.kill("SIGKILL");
      const result: any = await pending;
      expect(result.error.code).toBe("ERR_PRISM_MCP_DISCONNECTED");
      expect(bridge.state).toBe("disconnected");
      const later: any = await dispatchToolCall({ call: call("c2", "mcp:remote:echo", { message: "x" }), registry, context: ctx });
      expect(later.error.code).toBe("ERR_PRISM_MCP_DISCONNECTED");
    } finally {
      await bridge.close();
    }
  });
});

describe("attachMcpToolBridge and host callbacks", () => {
  it("bridges a host's own SDK client; close() closes it and its server", async () => {
    const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
    const { StdioClientTransport } = await import("@modelcontextprotocol/sdk/client/stdio.js");
    const { attachMcpToolBridge } = await import("../mcp/index.mjs");
    const transport = new StdioClientTransport(everythingStdio());
    const client = new Client({ name: "host", version: "1.0.0" });
    await client.connect(transport);
    const pid = track(transport.pid ?? undefined);
    const bridge: any = await attachMcpToolBridge(client, transport, { serverId: "own", allow: ["get-sum"] });
    expect(bridge.tools.map((t: any) => t.name)).toEqual(["mcp:own:get-sum"]);
    const result: any = await bridge.tools[0].execute({ a: 1, b: 2 }, { ...ctx, toolCallId: "c1" });
    expect(result.content[0].text).toBe("The sum of 1 and 2 is 3.");
    await bridge.refresh();
    expect(bridge.tools.length).toBe(1);
    await bridge.close();
    expect(await waitFor(() => !isAlive(pid))).toBe(true);
    await expect(attachMcpToolBridge({} as any, {} as any, { serverId: "x" })).rejects.toThrow(/connected @modelcontextprotocol\/sdk Client/);
  });

  it("an invalid or throwing effect policy fails the connect and stops the server; throwing observers change nothing", async () => {
    await expect(
      connectMcpTools({ serverId: "e", transport: everythingStdio(), effect: () => ({ kind: "none", idempotency: "required" }) as any }),
    ).rejects.toThrow("MCP tool effect policy returned an invalid declaration");
    await expect(
      connectMcpTools({
        serverId: "e",
        transport: everythingStdio(),
        effect: () => {
          throw "not an Error";
        },
      }),
    ).rejects.toBe("not an Error");
    const bridge: any = await connectMcpTools({ serverId: "e", transport: everythingStdio(), allow: ["trigger-long-running-operation"] });
    track(bridge.pid);
    try {
      const result: any = await dispatchToolCall({
        call: call("c1", "mcp:e:trigger-long-running-operation", { duration: 0.2, steps: 2 }),
        registry: createToolRegistry(bridge.tools),
        context: {
          ...ctx,
          progress: () => {
            throw new Error("observer broke");
          },
        },
      });
      expect(result.error).toBeUndefined();
      expect(result.content[0].text).toMatch(/completed/);
    } finally {
      await bridge.close();
    }
  });

  it("Streamable HTTP bodies are bounded by maxResponseBytes", async () => {
    const server = await startEverythingHttp();
    await expect(
      connectMcpTools({
        serverId: "tiny",
        transport: { type: "streamable-http", url: server.url, allowedOrigins: [server.origin], allowLoopbackHttp: true, maxResponseBytes: 64 },
        connectTimeoutMs: 5_000,
      }),
    ).rejects.toThrow("MCP HTTP response exceeds 64 bytes");
  });
});
