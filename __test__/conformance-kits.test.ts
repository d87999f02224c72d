import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { createMemoryToolEffectStore, createToolRegistry, type ToolDefinition } from "../index.js";

const require = createRequire(import.meta.url);
const kit: typeof import("../testing/tool-conformance.js") = require("prism-tools-native/testing/tool-conformance");
const effects: typeof import("../testing/tool-effect-store-conformance.js") = require("prism-tools-native/testing/tool-effect-store-conformance");

const echo: ToolDefinition = { name: "echo", execute: (args, ctx) => ({ toolCallId: ctx.toolCallId, name: "echo", value: args }) };

describe("testing/tool-conformance", () => {
  it("a conforming setup passes the whole matrix", async () => {
    await kit.assertToolDispatchConforms(createToolRegistry(), { tool: echo, validArgs: { text: "hi" } });
  });

  it("dispatchAndCollect returns the result and every event in order", async () => {
    const { result, events } = await kit.dispatchAndCollect({
      call: { type: "tool_call", id: "c1", name: "echo", arguments: { text: "x" } },
      registry: createToolRegistry([echo]),
    });
    expect(result).toMatchObject({ toolCallId: "c1", name: "echo", value: { text: "x" } });
    expect(events.map((e) => e.type)).toEqual(["tool_execution_started", "tool_execution_finished"]);
  });

  it("assertToolBlocked names a wrong reason and a call that was not blocked", async () => {
    const registry = createToolRegistry([echo]);
    const call = { type: "tool_call" as const, id: "c", name: "echo", arguments: {} };
    await kit.assertToolBlocked({ call: { ...call, name: "nope" }, registry }, "unknown_tool");
    await expect(kit.assertToolBlocked({ call: { ...call, name: "nope" }, registry }, "tool_denied")).rejects.toThrow(
      "Blocked reason mismatch: expected tool_denied, got unknown_tool",
    );
    await expect(kit.assertToolBlocked({ call, registry }, "tool_denied")).rejects.toThrow(
      'Expected tool_execution_blocked for "tool_denied", but no blocked event was emitted',
    );
  });

  it("a host setup that refuses its own valid call fails the kit with the reason", async () => {
    const failing: ToolDefinition = { name: "boom", execute: () => { throw new Error("tool broke"); } };
    await expect(kit.assertToolDispatchConforms(createToolRegistry(), { tool: failing, validArgs: {} })).rejects.toThrow(
      "Valid tool call was not executed: tool broke",
    );
    await expect(
      kit.assertToolDispatchConforms(createToolRegistry(), { tool: echo, validArgs: {}, filter: { deny: ["echo"] } }),
    ).rejects.toThrow("Blocked reason mismatch: expected invalid_arguments, got tool_denied");
  });
});

describe("testing/tool-effect-store-conformance", () => {
  it("runToolEffectStoreConformance passes the built-in memory store and fails a broken one", async () => {
    await effects.runToolEffectStoreConformance(() => createMemoryToolEffectStore());
    const broken = () => {
      const store = createMemoryToolEffectStore();
      return { ...store, begin: async () => ({ status: "duplicate" }) } as never;
    };
    await expect(effects.runToolEffectStoreConformance(broken)).rejects.toThrow(/conformance/i);
  });
});
