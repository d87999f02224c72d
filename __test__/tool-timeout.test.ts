// Per-tool deadlines: a tool's `timeoutMs`, the dispatcher's `toolTimeoutMs` and the agent's.
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import {
  createAgent,
  createMemoryToolEffectStore,
  createMockProvider,
  createToolDispatcher,
  createToolRegistry,
  dispatchToolCall,
  providerDone,
  providerToolCall,
  toolCallContent,
  toolEffectArgumentsHash,
  deriveToolEffectKey,
  type ProviderRequest,
  type ToolDefinition,
} from "../index.js";
import { call, ctx, recorder } from "./helpers/harness.js";

const never = () => new Promise<never>(() => {});

describe("a tool's timeoutMs", () => {
  it("ends a call whose tool never settles, blocked with tool_timeout, and aborts the tool's signal", async () => {
    let signal: AbortSignal | undefined;
    const tool: ToolDefinition = {
      name: "stuck",
      timeoutMs: 30,
      execute: (_a, c) => {
        signal = c.signal;
        return never(); // ignores its signal
      },
    };
    const rec = recorder();
    const t0 = performance.now();
    const result = await dispatchToolCall({ call: call("stuck"), registry: createToolRegistry([tool]), context: ctx(), emit: rec.emit, ledger: rec.ledger });
    expect(performance.now() - t0).toBeGreaterThanOrEqual(25);
    expect(result).toEqual({
      toolCallId: "call_1",
      name: "stuck",
      error: { name: "ToolTimeoutError", message: "Tool call timed out after 30 ms: stuck", code: "ERR_PRISM_TOOL_TIMEOUT" },
    });
    expect(signal?.aborted).toBe(true);
    expect((signal?.reason as DOMException).name).toBe("TimeoutError");
    const blocked = rec.events.find((e) => e.type === "tool_execution_blocked") as any;
    expect(blocked.reason).toBe("tool_timeout");
    expect(blocked.error.code).toBe("ERR_PRISM_TOOL_TIMEOUT");
    expect(rec.terminalRows().map((r) => [r.status, (r as any).reason])).toEqual([["blocked", "tool_timeout"]]);
  });

  it("a tool that honours its signal stops at the deadline and its late rejection changes nothing", async () => {
    let stopped = false;
    const tool: ToolDefinition = {
      name: "polite",
      timeoutMs: 20,
      execute: (_a, c) =>
        new Promise((_resolve, reject) => {
          c.signal!.addEventListener("abort", () => {
            stopped = true;
            reject(c.signal!.reason);
          });
        }),
    };
    const result = await dispatchToolCall({ call: call("polite"), registry: createToolRegistry([tool]), context: ctx() });
    expect(stopped).toBe(true);
    expect(result.error?.code).toBe("ERR_PRISM_TOOL_TIMEOUT");
  });

  it("a tool that settles in time keeps its result, and its signal never aborts", async () => {
    let signal: AbortSignal | undefined;
    const tool: ToolDefinition = {
      name: "quick",
      timeoutMs: 1_000,
      execute: async (a, c) => {
        signal = c.signal;
        return { value: a };
      },
    };
    const result = await dispatchToolCall({ call: call("quick", { n: 1 }), registry: createToolRegistry([tool]), context: ctx() });
    expect(result).toEqual({ toolCallId: "call_1", name: "quick", value: { n: 1 } });
    await new Promise((r) => setTimeout(r, 5));
    expect(signal?.aborted).toBe(false);
  });

  it("joins the caller's signal: the caller's abort still ends the call as an abort", async () => {
    const controller = new AbortController();
    let seen: AbortSignal | undefined;
    const tool: ToolDefinition = { name: "slow", timeoutMs: 10_000, execute: (_a, c) => ((seen = c.signal), never()) };
    const pending = dispatchToolCall({ call: call("slow"), registry: createToolRegistry([tool]), context: ctx({ signal: controller.signal }) });
    setTimeout(() => controller.abort(new Error("user cancelled")), 10);
    const result = await pending;
    expect(result.error?.code).toBe("ERR_PRISM_ABORTED");
    expect(seen?.aborted).toBe(true);
    expect(seen).not.toBe(controller.signal);
  });

  it("the tool's own timeoutMs wins over the dispatcher's toolTimeoutMs", async () => {
    const registry = createToolRegistry([
      { name: "own", timeoutMs: 15, execute: never },
      { name: "inherits", execute: never },
      { name: "sync", execute: () => ({ value: "done" }) },
    ]);
    const dispatcher = createToolDispatcher({ registry, toolTimeoutMs: 40 });
    const own = await dispatcher.dispatch(call("own"), ctx());
    const inherited = await dispatcher.dispatch(call("inherits"), ctx());
    expect(own.error?.message).toBe("Tool call timed out after 15 ms: own");
    expect(inherited.error?.message).toBe("Tool call timed out after 40 ms: inherits");
    expect((await dispatcher.dispatch(call("sync"), ctx())).value).toBe("done");
  });

  it("refuses a bad deadline: a dispatcher option throws, a tool's is a definition error", async () => {
    const registry = createToolRegistry([{ name: "t", execute: () => 1 }]);
    for (const bad of [0, -1, 1.5, Number.NaN, "100", 2 ** 31]) {
      expect(() => createToolDispatcher({ registry, toolTimeoutMs: bad as number })).toThrow(
        /^createToolDispatcher: toolTimeoutMs must be an integer from 1 to 2147483647/,
      );
    }
    let ran = false;
    const result = await dispatchToolCall({
      call: call("bad"),
      registry: createToolRegistry([{ name: "bad", timeoutMs: -5, execute: () => ((ran = true), 1) }]),
      context: ctx(),
    });
    expect(ran).toBe(false);
    expect(result.error).toEqual({ name: "ToolDefinitionError", message: "Tool bad timeoutMs must be an integer from 1 to 2147483647", code: "invalid_tool" });
  });
});

describe("a deadline with an effect store", () => {
  const identity = {
    tenantId: "t1",
    userId: "u1",
    principal: { kind: "user", id: "u1" },
    scopes: ["payments"],
    issuedAt: new Date().toISOString(),
    verified: true as const,
  };

  it("leaves a dispatched effect unknown and never runs it again", async () => {
    const store = createMemoryToolEffectStore();
    let charges = 0;
    const pay: ToolDefinition = {
      name: "pay",
      timeoutMs: 20,
      effect: { kind: "external_mutation", idempotency: "required" },
      execute: () => {
        charges += 1; // the side effect happened; the answer never comes
        return never();
      },
    };
    const options = { call: call("pay", { amount: 5 }), registry: createToolRegistry([pay]), context: ctx(), identity, effectStore: store };
    const first = await dispatchToolCall(options);
    expect(first.error?.code).toBe("ERR_PRISM_TOOL_TIMEOUT");
    const key = deriveToolEffectKey({
      identity,
      ownership: { tenantId: "t1", userId: "u1" },
      sessionId: "s1",
      runId: "r1",
      toolCallId: "call_1",
      toolName: "pay",
      argumentsHash: toolEffectArgumentsHash({ amount: 5 }),
    });
    const record = await store.get({ identity, ownership: { tenantId: "t1", userId: "u1" }, key, sessionId: "s1", runId: "r1", toolCallId: "call_1", toolName: "pay", argumentsHash: toolEffectArgumentsHash({ amount: 5 }) } as never);
    expect(record!.status).toBe("unknown");
    const again = await dispatchToolCall(options);
    expect(again.error?.code).toBe("ERR_PRISM_TOOL_EFFECT_UNKNOWN");
    expect(charges).toBe(1);
  });
});

describe("createAgent's toolTimeoutMs", () => {
  it("a stuck tool ends its call at the deadline and the model gets the timeout as the tool's error", async () => {
    const requests: ProviderRequest[] = [];
    const provider = createMockProvider(
      [[providerToolCall(toolCallContent("c1", "stuck", {})), providerDone()], [providerDone()]],
      { onRequest: (r) => void requests.push(structuredClone({ messages: r.messages })) as any },
    );
    const tools: ToolDefinition[] = [{ name: "stuck", parameters: { type: "object" }, execute: never }];
    const session = createAgent({ model: { provider: "mock", model: "m" }, provider, tools, toolTimeoutMs: 25 }).createSession();
    await session.run("go");
    const block = (requests[1]!.messages.find((m: any) => m.role === "tool") as any).content[0];
    expect(block.error).toMatchObject({ code: "ERR_PRISM_TOOL_TIMEOUT", message: "Tool call timed out after 25 ms: stuck" });
    expect(() => createAgent({ model: { provider: "mock", model: "m" }, provider, tools, toolTimeoutMs: 0 })).toThrow(/toolTimeoutMs must be an integer/);
  });
});

describe("an adapter's toolTimeoutMs", () => {
  it("an AI SDK tool made by toAiSdkTools ends at the dispatcher's deadline with the timeout's code", async () => {
    const { toAiSdkTools } = await import("../ai-sdk/index.mjs");
    const tools: any = toAiSdkTools([{ name: "stuck", parameters: { type: "object" }, execute: never }], { toolTimeoutMs: 20 });
    await expect(tools.stuck.execute({}, { toolCallId: "c1", messages: [] })).rejects.toMatchObject({
      code: "ERR_PRISM_TOOL_TIMEOUT",
      name: "ToolTimeoutError",
      message: "Tool stuck: Tool call timed out after 20 ms: stuck",
    });
  });
});

describe("a deadline never outlives its call", () => {
  it("a caller's abort clears the deadline's timer: a child process with a day-long deadline exits at once", async () => {
    const { execFileSync } = await import("node:child_process");
    const script = `
      const { createToolRegistry, dispatchToolCall } = require(${JSON.stringify(fileURLToPath(new URL("../index.js", import.meta.url)))});
      const stop = new AbortController();
      const registry = createToolRegistry([{ name: "stuck", timeoutMs: 86400000, execute: () => new Promise(() => {}) }]);
      const t0 = Date.now();
      dispatchToolCall({ call: { type: "tool_call", id: "c", name: "stuck", arguments: {} }, registry, context: { sessionId: "s", runId: "r", signal: stop.signal } })
        .then((r) => { process.stdout.write(r.error.code); process.on("exit", () => process.stdout.write(" " + (Date.now() - t0 < 20000))); });
      setTimeout(() => stop.abort(), 10);
    `;
    const out = execFileSync(process.execPath, ["-e", script], { encoding: "utf8", timeout: 30_000 });
    expect(out).toBe("ERR_PRISM_ABORTED true");
  });
});

describe("a served tool's deadline over MCP", () => {
  it("the SDK client gets isError with the timeout's code and reason in _meta", async () => {
    const { createRequire } = await import("node:module");
    const req = createRequire(import.meta.url);
    const { Client } = req("@modelcontextprotocol/sdk/client/index.js");
    const { InMemoryTransport } = req("@modelcontextprotocol/sdk/inMemory.js");
    const { createPrismMcpServer } = await import("../mcp/index.mjs");
    const server = createPrismMcpServer({ tools: [{ name: "stuck", parameters: { type: "object" }, timeoutMs: 20, execute: never }], authorize: () => ({ allowed: true as const }) });
    const [a, b] = InMemoryTransport.createLinkedPair();
    await server.connect(b);
    const client = new Client({ name: "host", version: "1" });
    await client.connect(a);
    try {
      const r: any = await client.callTool({ name: "stuck", arguments: {} });
      expect(r.isError).toBe(true);
      expect(r.content).toEqual([{ type: "text", text: "Tool call timed out after 20 ms: stuck" }]);
      expect(r._meta["prism/error"]).toEqual({ code: "ERR_PRISM_TOOL_TIMEOUT", name: "ToolTimeoutError", reason: "tool_timeout", tool: "stuck" });
    } finally {
      await client.close();
    }
  });
});
