// The package's pieces working together through dispatch, as a host wires them.
import { describe, expect, it } from "vitest";
import {
  createJsonSchemaToolArgumentValidator,
  createMemoryRunLedger,
  createMiddlewareRegistry,
  createStaticPermissionPolicy,
  createToolRegistry,
  dispatchToolCall,
  toolCallFromArgumentsText,
  type ToolDefinition,
} from "../index.js";

const weather: ToolDefinition = {
  name: "get_weather",
  parameters: {
    type: "object",
    properties: { city: { type: "string", minLength: 1 }, unit: { enum: ["c", "f"] } },
    required: ["city"],
    additionalProperties: false,
  },
  execute: (args, ctx) => ({ toolCallId: ctx.toolCallId, name: "get_weather", value: { city: args.city, temp: 21 } }),
};

describe("a host's full wiring", () => {
  const registry = createToolRegistry([weather]);
  const base = {
    registry,
    context: { sessionId: "s1", runId: "r1" },
    validate: createJsonSchemaToolArgumentValidator(),
    permission: createStaticPermissionPolicy({ allow: ["get_weather"] }),
    middleware: createMiddlewareRegistry(),
  };

  it("validates provider text against the tool's schema and runs valid calls", async () => {
    const ledger = createMemoryRunLedger();
    const ok = await dispatchToolCall({ ...base, ledger, call: toolCallFromArgumentsText("c1", "get_weather", '{"city":"Oslo","unit":"c"}') as never });
    expect(ok.value).toEqual({ city: "Oslo", temp: 21 });
    expect(ledger.list().map((r) => r.status)).toEqual(["started", "finished"]);
  });

  it("blocks arguments the schema refuses, naming the path, and never runs the tool", async () => {
    const ledger = createMemoryRunLedger();
    const bad = await dispatchToolCall({ ...base, ledger, call: toolCallFromArgumentsText("c2", "get_weather", '{"city":"","unit":"k","x":1}') as never });
    expect(bad.error?.message).toMatch(/city/);
    expect(ledger.list().map((r) => [r.status, r.reason])).toEqual([["blocked", "validation_failed"]]);
  });

  it("blocks malformed provider JSON before validation, with invalid_json_arguments", async () => {
    const r = await dispatchToolCall({ ...base, call: toolCallFromArgumentsText("c3", "get_weather", '{"city": "Os') as never });
    expect(r.error?.code).toBe("invalid_json_arguments");
  });

  it("denies a tool the static policy does not allow", async () => {
    const other: ToolDefinition = { ...weather, name: "delete_city" };
    const r = await dispatchToolCall({ ...base, registry: createToolRegistry([weather, other]), call: { type: "tool_call", id: "c4", name: "delete_city", arguments: { city: "x" } } });
    expect(r.error).toMatchObject({ name: "PermissionDeniedError", code: "ERR_PRISM_PERMISSION_DENIED" });
  });
});
