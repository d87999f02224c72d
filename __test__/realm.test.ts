// Values made in another realm (a `node:vm` context, as Jest and vitest's vmThreads/vmForks pools load
// test files) are plain JSON when their shape says so: every JSON-object check of the harness accepts
// them, and the answers are the same as for this realm's objects.
import { createRequire } from "node:module";
import vm from "node:vm";
import { describe, expect, it } from "vitest";
import {
  canonicalToolEffectJson,
  createAgent,
  createJsonSchemaToolArgumentValidator,
  createMemoryToolEffectStore,
  createMockProvider,
  createToolRegistry,
  dispatchToolCall,
  providerDone,
  providerToolCall,
  toolCallContent,
  toolEffectArgumentsHash,
  type ToolDefinition,
} from "../index.js";
import { call, ctx, echoTool, recorder } from "./helpers/harness.js";

const require = createRequire(import.meta.url);

/** A value built by `source` inside a fresh context: its objects have that context's prototypes. */
const foreign = (source: string): any => vm.runInNewContext(`(${source})`);

describe("plain objects from another realm", () => {
  it("are not this realm's objects (the premise of every test below)", () => {
    const args = foreign('{ text: "hi" }');
    expect(Object.getPrototypeOf(args)).not.toBe(Object.prototype);
    expect(args instanceof Object).toBe(false);
  });

  it("dispatch: the tool runs with them, events and rows carry them", async () => {
    const rec = recorder();
    const result = await dispatchToolCall({
      call: call("echo", foreign('{ text: "hi", nested: { list: [1, { deep: true }] } }')),
      registry: createToolRegistry([echoTool()]),
      context: ctx(),
      emit: rec.emit,
      ledger: rec.ledger,
    });
    expect(result).toEqual({ toolCallId: "call_1", name: "echo", value: { text: "hi", nested: { list: [1, { deep: true }] } } });
    expect(rec.types()).toEqual(["tool_execution_started", "tool_execution_finished"]);
    expect(rec.rows.map((r) => r.status)).toEqual(["started", "finished"]);
    expect(rec.rows[0].arguments).toEqual({ text: "hi", nested: { list: [1, { deep: true }] } });
  });

  it("dispatch: a null-prototype object from another realm is accepted too", async () => {
    const args = vm.runInNewContext('Object.assign(Object.create(null), { text: "bare" })');
    const result = await dispatchToolCall({ call: call("echo", args), registry: createToolRegistry([echoTool()]), context: ctx() });
    expect(result).toMatchObject({ name: "echo", value: { text: "bare" } });
  });

  it("dispatch: another realm's class instance, array or Map is still refused as arguments", async () => {
    const registry = createToolRegistry([echoTool()]);
    for (const source of ["new (class Point { constructor() { this.x = 1 } })()", "[1, 2]", "new Map([['a', 1]])"]) {
      const result = await dispatchToolCall({ call: call("echo", foreign(source)), registry, context: ctx() });
      expect(result, source).toEqual({ toolCallId: "call_1", name: "echo", error: { message: "Tool arguments must be a JSON object" } });
    }
  });

  it("an object whose prototype only pretends to be Object.prototype is refused", async () => {
    const fake = Object.create(null);
    fake.constructor = function Other() {};
    fake.constructor.prototype = fake;
    const result = await dispatchToolCall({ call: call("echo", Object.create(fake)), registry: createToolRegistry([echoTool()]), context: ctx() });
    expect(result).toEqual({ toolCallId: "call_1", name: "echo", error: { message: "Tool arguments must be a JSON object" } });
  });

  it("JSON Schema validation reads them as JSON, both for a pass and for the issues", () => {
    const validate = createJsonSchemaToolArgumentValidator();
    const tool: ToolDefinition = {
      name: "issue",
      parameters: { type: "object", properties: { n: { type: "integer", minimum: 1 } }, required: ["n"], additionalProperties: false },
      execute: () => ({ toolCallId: "x", name: "issue" }),
    };
    expect(validate(tool, foreign("{ n: 2 }"))).toBeUndefined();
    expect(validate(tool, foreign("{ n: 0 }"))).toBe(validate(tool, { n: 0 }));
    expect(validate(tool, foreign("{ n: 0 }"))).toMatch(/^\/n: /);
  });

  it("effect keys: canonical JSON and the arguments hash equal this realm's", () => {
    const here = { b: [1, { c: "x" }], a: null };
    const there = foreign('{ b: [1, { c: "x" }], a: null }');
    expect(canonicalToolEffectJson(there)).toBe('{"a":null,"b":[1,{"c":"x"}]}');
    expect(toolEffectArgumentsHash(there)).toBe(toolEffectArgumentsHash(here));
    // A class instance from there is not JSON, as here.
    expect(() => toolEffectArgumentsHash(foreign("new (class A {})()"))).toThrow();
  });

  it("dispatch with an effect store claims, runs once, and replays for arguments from there", async () => {
    const store = createMemoryToolEffectStore();
    let runs = 0;
    const pay: ToolDefinition = {
      name: "pay",
      effect: { kind: "external_mutation", idempotency: "required" },
      execute: (args, c) => {
        runs += 1;
        return { toolCallId: c.toolCallId, name: "pay", value: { charged: args.amount } };
      },
    };
    const identity = { tenantId: "t1", userId: "u1", principal: { kind: "user", id: "u1" }, scopes: ["payments"], issuedAt: new Date().toISOString(), verified: true as const };
    const options = { call: call("pay", foreign("{ amount: 5 }")), registry: createToolRegistry([pay]), context: ctx(), identity, effectStore: store };
    expect(await dispatchToolCall(options)).toEqual({ toolCallId: "call_1", name: "pay", value: { charged: 5 } });
    expect(await dispatchToolCall(options)).toEqual({ toolCallId: "call_1", name: "pay", value: { charged: 5 } });
    expect(runs).toBe(1);
  });

  it("the whole package used from inside a vm context: an agent run calls the tool", async () => {
    // The context gets the package itself, as a vm-based test runner hands a test file its imports;
    // the tool, the provider script and the arguments are all made in there.
    const context = vm.createContext({ pkg: require("../index.js") });
    const run = vm.runInContext(
      `(async () => {
        const { createAgent, createMockProvider, providerToolCall, providerDone, toolCallContent } = pkg;
        const seen = [];
        const add = {
          name: "add",
          parameters: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"] },
          execute: (args, c) => { seen.push(args); return { toolCallId: c.toolCallId, name: "add", value: { sum: args.a + args.b } }; },
        };
        const provider = createMockProvider([
          [providerToolCall(toolCallContent("c1", "add", { a: 2, b: 3 })), providerDone()],
          [providerDone()],
        ]);
        const agent = createAgent({ model: { provider: "mock", model: "scripted" }, provider, tools: [add] });
        const session = agent.createSession({ id: "vm" });
        await session.run("add 2 and 3");
        return { seen, messages: session.messages() };
      })()`,
      context,
    );
    const { seen, messages } = await run;
    expect(JSON.parse(JSON.stringify(seen))).toEqual([{ a: 2, b: 3 }]);
    const results = messages.filter((m: any) => m.role === "tool").map((m: any) => m.content[0]);
    expect(results).toHaveLength(1);
    expect(results[0].error).toBeUndefined();
    expect(JSON.parse(JSON.stringify(results[0].result))).toEqual({ sum: 5 });
  });
});

// The same run from this realm, as the control.
describe("the same agent run in this realm", () => {
  it("calls the tool", async () => {
    let sum = 0;
    const add: ToolDefinition = {
      name: "add",
      execute: (args, c) => {
        sum = (args.a as number) + (args.b as number);
        return { toolCallId: c.toolCallId, name: "add", value: { sum } };
      },
    };
    const provider = createMockProvider([
      [providerToolCall(toolCallContent("c1", "add", { a: 2, b: 3 })), providerDone()],
      [providerDone()],
    ]);
    await createAgent({ model: { provider: "mock", model: "scripted" }, provider, tools: [add] }).createSession().run("add");
    expect(sum).toBe(5);
  });
});
