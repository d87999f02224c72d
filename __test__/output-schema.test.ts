// A local tool's `outputSchema`: a successful result's `value` (its structured content, MCP's
// `structuredContent`) is checked against it by the bounded validator, in dispatch, so every way a tool
// is called (createToolDispatcher, the agent loop, the MCP server) refuses a mismatch the same way: a
// tool error `ToolResultError` / `ERR_PRISM_INVALID_OUTPUT` whose message names the tool and the path.
// `title` and `annotations` stay on the definition and reach the provider request and `tools/list`.
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import {
  createAgent,
  createMemoryRunLedger,
  createMemoryToolEffectStore,
  createMockProvider,
  createToolDispatcher,
  createToolRegistry,
  providerDone,
  providerToolCall,
  toolCallContent,
  type ProviderRequest,
  type ToolDefinition,
} from "../index.mjs";
import { createPrismMcpServer } from "../mcp/index.mjs";

const require = createRequire(import.meta.url);
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { InMemoryTransport } = require("@modelcontextprotocol/sdk/inMemory.js");

const weatherSchema = {
  type: "object",
  properties: { city: { type: "string" }, temp: { type: "number" } },
  required: ["city", "temp"],
  additionalProperties: false,
};

/** A tool whose `mode` argument picks what it returns. */
function weather(outputSchema: unknown = weatherSchema): ToolDefinition {
  return {
    name: "weather",
    title: "Current weather",
    annotations: { readOnlyHint: true },
    parameters: { type: "object", properties: { mode: { type: "string" } } },
    outputSchema: outputSchema as any,
    effect: { kind: "none", idempotency: "none" },
    execute: (args: any) => {
      switch (args.mode) {
        case "wrong":
          return { value: { city: "Oslo", temp: "warm" } };
        case "extra":
          return { city: "Oslo", temp: 3, wind: 9 }; // a bare result: its value is this object
        case "content":
          return { content: "3 degrees in Oslo" };
        case "error":
          return { error: { message: "no data for Oslo" } };
        default:
          return { value: { city: "Oslo", temp: 3 } };
      }
    },
  };
}

const call = (mode?: string) => ({ type: "tool_call" as const, id: "c1", name: "weather", arguments: mode ? { mode } : {} });
const ctx = { sessionId: "s", runId: "r", toolCallId: "c1" };

async function dispatch(tool: ToolDefinition, mode?: string) {
  const dispatcher = createToolDispatcher({ registry: createToolRegistry([tool]) });
  return dispatcher.dispatch(call(mode), ctx);
}

describe("outputSchema on a local tool, through createToolDispatcher", () => {
  it("passes a matching value through untouched", async () => {
    const r = await dispatch(weather());
    expect(r).toEqual({ toolCallId: "c1", name: "weather", value: { city: "Oslo", temp: 3 } });
  });

  it("makes a mismatch a tool error that names the tool and the path, as argument errors do", async () => {
    const r: any = await dispatch(weather(), "wrong");
    expect(r.value).toBeUndefined();
    expect(r.error).toEqual({
      name: "ToolResultError",
      code: "ERR_PRISM_INVALID_OUTPUT",
      message: 'Tool weather result does not match its outputSchema: /temp: expected number, found string "warm"',
    });
    const extra: any = await dispatch(weather(), "extra");
    expect(extra.error.message).toBe("Tool weather result does not match its outputSchema: /wind: property is not allowed by the schema (additionalProperties)");
  });

  it("refuses a successful result without a value, and leaves a tool's own error alone", async () => {
    const content: any = await dispatch(weather(), "content");
    expect(content.error.message).toBe("Tool weather result does not match its outputSchema: the result has no value (its structured content)");
    const failed: any = await dispatch(weather(), "error");
    expect(failed.error).toEqual({ message: "no data for Oslo" });
  });

  it("checks nothing for a tool without outputSchema", async () => {
    const { outputSchema: _, ...plain } = weather();
    const r: any = await dispatch(plain as ToolDefinition, "wrong");
    expect(r.value).toEqual({ city: "Oslo", temp: "warm" });
  });

  it("reads the schema in its own dialect, and an unknown dialect is an error naming the tool", async () => {
    // draft-04: a boolean exclusiveMinimum beside minimum.
    const draft4 = { $schema: "http://json-schema.org/draft-04/schema#", type: "object", properties: { temp: { type: "number", minimum: 3, exclusiveMinimum: true } } };
    const r: any = await dispatch(weather(draft4));
    expect(r.error.message).toBe("Tool weather result does not match its outputSchema: /temp: expected a number > 3, found integer 3");
    const unknown = { $schema: "http://json-schema.org/draft-03/schema#", type: "object" };
    const u: any = await dispatch(weather(unknown));
    expect(u.error.code).toBe("ERR_PRISM_INVALID_OUTPUT");
    expect(u.error.message).toBe(
      'Tool weather result does not match its outputSchema: schema keyword "$schema" names an unsupported dialect "http://json-schema.org/draft-03/schema": use draft 2020-12 (the default), 2019-09, 07, 06 or 04',
    );
  });

  it("an effectful tool whose result does not match leaves its effect unknown: it ran, its outcome is not known", async () => {
    const store = createMemoryToolEffectStore();
    const tool = { ...weather(), effect: { kind: "external_mutation" as const, idempotency: "required" as const } };
    const identity = { tenantId: "t1", userId: "u1", principal: { kind: "user", id: "u1" }, scopes: ["weather"], issuedAt: new Date().toISOString(), verified: true as const };
    const dispatcher = createToolDispatcher({ registry: createToolRegistry([tool]), effectStore: store, identity } as any);
    const r: any = await dispatcher.dispatch(call("wrong"), ctx);
    expect(r.error.code).toBe("ERR_PRISM_TOOL_EFFECT_UNKNOWN");
    const ok: any = await dispatcher.dispatch({ ...call(), id: "c2" }, { ...ctx, toolCallId: "c2" });
    expect(ok.value).toEqual({ city: "Oslo", temp: 3 });
  });
});

describe("outputSchema through createAgent", () => {
  it("the model is answered with the mismatch, and the ledger records the tool error", async () => {
    const requests: ProviderRequest[] = [];
    const provider = createMockProvider(
      [[providerToolCall(toolCallContent("c1", "weather", { mode: "wrong" })), providerDone()], [providerDone()]],
      { onRequest: (r) => void requests.push({ ...structuredClone({ messages: r.messages }), tools: r.tools }) as any },
    );
    const ledger = createMemoryRunLedger();
    const session = createAgent({ model: { provider: "mock", model: "m" }, provider, tools: [weather()], runLedger: ledger }).createSession();
    const result = await session.run("weather?");
    expect(result.status).toBe("succeeded");
    const toolMessage = requests[1].messages.find((m: any) => m.role === "tool") as any;
    expect(toolMessage.content[0].error).toMatchObject({
      code: "ERR_PRISM_INVALID_OUTPUT",
      message: 'Tool weather result does not match its outputSchema: /temp: expected number, found string "warm"',
    });
    // The definition reaches the provider with its contract: title, annotations and outputSchema.
    expect(requests[0].tools?.[0]).toMatchObject({ name: "weather", title: "Current weather", annotations: { readOnlyHint: true }, outputSchema: weatherSchema });
    const rows = (ledger as any).list("tool_call");
    expect(rows.find((r: any) => r.status === "error")?.result.error).toMatchObject({ code: "ERR_PRISM_INVALID_OUTPUT" });
  });
});

describe("outputSchema through the MCP server, with the SDK client", () => {
  async function client() {
    const server = createPrismMcpServer({ tools: [weather()], authorize: () => ({ allowed: true as const }) });
    const c = new Client({ name: "t", version: "1" });
    const [a, b] = InMemoryTransport.createLinkedPair();
    await server.connect(b);
    await c.connect(a);
    return c;
  }

  it("tools/list carries outputSchema, title and annotations; tools/call returns structuredContent", async () => {
    const c = await client();
    const { tools } = await c.listTools();
    expect(tools[0]).toMatchObject({ name: "weather", title: "Current weather", outputSchema: weatherSchema, annotations: { readOnlyHint: true } });
    const ok: any = await c.callTool({ name: "weather", arguments: {} });
    expect(ok.isError).toBe(false);
    expect(ok.structuredContent).toEqual({ city: "Oslo", temp: 3 });
    await c.close();
  });

  it("tools/call of a mismatch is an error result with the path, never structuredContent", async () => {
    const c = await client();
    await c.listTools();
    const wrong: any = await c.callTool({ name: "weather", arguments: { mode: "wrong" } });
    expect(wrong.isError).toBe(true);
    expect(wrong.structuredContent).toBeUndefined();
    expect(wrong._meta["prism/error"]).toMatchObject({ code: "ERR_PRISM_INVALID_OUTPUT", name: "ToolResultError", tool: "weather" });
    expect(wrong.content[0].text).toBe('Tool weather result does not match its outputSchema: /temp: expected number, found string "warm"');
    await c.close();
  });
});
