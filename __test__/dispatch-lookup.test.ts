// A registry made by createToolRegistry is looked up before the dispatch machine begins, and the
// answer handed over with the beginning (one crossing fewer a call). These cases pin that the
// shortcut is taken only where it cannot be seen: nothing runs before the lookup, and the registry's
// lookup is the one createToolRegistry made.
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { createMemoryToolEffectStore, createMiddlewareRegistry, createToolRegistry, dispatchToolCall } from "../index.js";
import { call, ctx, echoTool } from "./helpers/harness.js";

const binding = createRequire(import.meta.url)("../binding.js");
const C = binding.dispatchCodes();

describe("looking a tool up before the dispatch begins", () => {
  it("begins past the lookup with the host's answer, and at the lookup without one", () => {
    const plan = binding.dispatchPlan(undefined, undefined);
    const codeOf = (found?: number) => {
      const begun = binding.dispatchBegin(plan, 0, 0, 0, 1, "echo", 0, found);
      binding.dispatchEnd(Math.floor(begun / C.ID_STRIDE));
      return begun % C.ID_STRIDE;
    };
    expect(codeOf(undefined)).toBe(C.K_LOOKUP);
    expect(codeOf(0)).toBe(C.K_LOOKUP);
    expect(codeOf(2)).toBe(C.K_EFFECT_DECLARATION);
    expect(codeOf(3)).toBe(C.K_EXECUTE); // a tool with no effect: its declaration answered too
    expect(codeOf(1)).toBe(C.K_SET_ERROR); // an unknown tool's error
    expect(binding.dispatchLive()).toBe(0);
  });

  it("reads a declaration added by a hook that runs between the lookup and the declaration", async () => {
    let runs = 0;
    const tool = { ...echoTool(), execute: (args: unknown, c: { toolCallId: string }) => (runs++, { toolCallId: c.toolCallId, name: "echo", value: args }) };
    const registry = createToolRegistry([tool as never]);
    const effectStore = createMemoryToolEffectStore();
    const validate = () => {
      (tool as { effect?: unknown }).effect = { kind: "external_mutation", idempotency: "optional" };
      return undefined;
    };
    const r = await dispatchToolCall({ call: call("echo", { text: "x" }, "c_decl"), registry, context: ctx({ toolCallId: "c_decl" }), validate, effectStore });
    // The declaration the hook added is seen: a durable effect without an identity is refused.
    expect(r.error?.message).toMatch(/^verified identity is required for a durable tool effect: tool echo declares a durable effect but the call has no identity; pass `identity`/);
    expect(runs).toBe(0);
  });

  it("takes a valid answer's no-effect fact as the declaration's answer when that comes next", () => {
    const plan = binding.dispatchPlan(undefined, undefined);
    const afterValid = (noEffect: number) => {
      const begun = binding.dispatchBegin(plan, C.F_VALIDATE, 0, 0, 1, "echo", 0, 2);
      const id = Math.floor(begun / C.ID_STRIDE);
      expect(begun % C.ID_STRIDE).toBe(C.K_VALIDATE);
      const next = binding.dispatchStep(id, C.A_VALID, noEffect);
      binding.dispatchEnd(id);
      return next;
    };
    expect(afterValid(0)).toBe(C.K_EFFECT_DECLARATION);
    expect(afterValid(1)).toBe(C.K_EXECUTE);
    expect(binding.dispatchLive()).toBe(0);
  });

  it("answers an unknown tool as before", async () => {
    const registry = createToolRegistry([echoTool()]);
    const r = await dispatchToolCall({ call: call("missing"), registry, context: ctx() });
    expect(r.error?.message).toBe("Unknown tool: missing");
  });

  it("calls a get replaced after the registry was made, once a dispatch", async () => {
    const registry = createToolRegistry([echoTool()]);
    const own = registry.get;
    let calls = 0;
    registry.get = (name: string) => {
      calls++;
      return own(name);
    };
    const r = await dispatchToolCall({ call: call("echo", { text: "hi" }), registry, context: ctx() });
    expect(r.error).toBeUndefined();
    expect(calls).toBe(1);
    // A copy with its own get (the spread keeps the registry's other members) is asked too.
    const copy = { ...createToolRegistry([echoTool()]), get: registry.get };
    await dispatchToolCall({ call: call("echo", { text: "hi" }), registry: copy, context: ctx() });
    expect(calls).toBe(2);
  });

  it("looks up after call middleware and input guardrails, which may register the tool", async () => {
    const registry = createToolRegistry([]);
    const middleware = createMiddlewareRegistry();
    middleware.use("tool_call", (c: { name: string }) => {
      registry.register(echoTool());
      return { ...c, name: "echo" };
    });
    const viaMiddleware = await dispatchToolCall({ call: call("renamed", { text: "a" }), registry, context: ctx(), middleware });
    expect(viaMiddleware.error).toBeUndefined();
    expect(viaMiddleware.name).toBe("echo");

    const fresh = createToolRegistry([]);
    const guardrails = {
      toolInput: [
        {
          name: "registers",
          stage: "tool_input" as const,
          evaluate: () => {
            fresh.register(echoTool());
            return { action: "allow" as const };
          },
        },
      ],
    };
    const viaGuardrail = await dispatchToolCall({ call: call("echo", { text: "b" }), registry: fresh, context: ctx(), guardrails: guardrails as never });
    expect(viaGuardrail.error).toBeUndefined();
  });
});
