import { describe, expect, it } from "vitest";
import { createToolRegistry, filterTools, type ToolDefinition } from "../index.js";

const tool = (name: string, extra: Partial<ToolDefinition> = {}): ToolDefinition => ({
  name,
  execute: (args, ctx) => ({ toolCallId: ctx.toolCallId, name, value: args }),
  ...extra,
});

describe("createToolRegistry", () => {
  it("hands back the very objects it was given, parameters untouched", () => {
    const parameters = { type: "object", properties: { text: { type: "string" } } } as const;
    const echo = tool("echo", { parameters: parameters as never });
    const registry = createToolRegistry([echo]);
    expect(registry.get("echo")).toBe(echo);
    expect(registry.resolve("echo")).toBe(echo);
    expect(registry.get("echo")!.parameters).toBe(parameters);
    expect(registry.list()).toEqual([echo]);
    expect(registry.list()[0]).toBe(echo);
  });

  it("keeps insertion order and replaces in place by default", () => {
    const a1 = tool("a");
    const b = tool("b");
    const a2 = tool("a");
    const registry = createToolRegistry([a1, b]);
    registry.register(a2);
    expect(registry.list().map((t) => t.name)).toEqual(["a", "b"]);
    expect(registry.get("a")).toBe(a2);
  });

  it("rejects silent shadowing in strict mode, from the constructor and from register", () => {
    expect(() => createToolRegistry([tool("a"), tool("a")], { duplicate: "error" })).toThrow("Duplicate tool: a");
    const registry = createToolRegistry([tool("a")], { duplicate: "error" });
    let caught: any;
    try {
      registry.register(tool("a"));
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(Error);
    expect(caught.message).toBe("Duplicate tool: a");
    expect(caught.code).toBe("ERR_PRISM_DUPLICATE_TOOL");
    expect(registry.list()).toHaveLength(1);
  });

  it("fails closed for unknown names", () => {
    const registry = createToolRegistry();
    expect(registry.get("nope")).toBeUndefined();
    expect(() => registry.resolve("nope")).toThrow("Unknown tool: nope");
    expect(registry.get(42 as never)).toBeUndefined();
    expect(() => registry.resolve(42 as never)).toThrow("Unknown tool: 42");
  });

  it("rejects malformed definitions and options with clear errors", () => {
    expect(() => createToolRegistry([null as never])).toThrow("Tool definition must be an object");
    expect(() => createToolRegistry([{ execute() {} } as never])).toThrow("Tool definition must have a non-empty string name");
    expect(() => createToolRegistry([tool("")])).toThrow("non-empty string name");
    expect(() => createToolRegistry([], { duplicate: "ignore" as never })).toThrow(
      'createToolRegistry: options.duplicate must be "replace" or "error"',
    );
    expect(() => createToolRegistry("x" as never)).toThrow("tools must be an array");
  });

  it("keeps working when methods are detached and the registry is dropped", () => {
    const { get, list } = createToolRegistry([tool("a")]);
    (globalThis as any).gc?.();
    expect(get("a")!.name).toBe("a");
    expect(list()).toHaveLength(1);
  });

  it("registers 1 000 tools and looks each one up exactly", () => {
    const tools = Array.from({ length: 1000 }, (_, i) => tool(`tool_${i}`));
    const registry = createToolRegistry(tools);
    expect(registry.list()).toHaveLength(1000);
    for (const t of tools) expect(registry.get(t.name)).toBe(t);
    expect(registry.get("tool_1000")).toBeUndefined();
    expect(registry.get("TOOL_1")).toBeUndefined();
  });
});

describe("filterTools", () => {
  const tools = ["a", "b", "c", "d"].map((n) => tool(n));

  it("returns every tool without a filter, as a new array in input order", () => {
    const out = filterTools(tools);
    expect(out).toEqual(tools);
    expect(out).not.toBe(tools);
  });

  it("applies exact allow and deny; deny wins", () => {
    expect(filterTools(tools, { allow: ["a", "b"], deny: ["b"] }).map((t) => t.name)).toEqual(["a"]);
    expect(filterTools(tools, { allow: [] }).map((t) => t.name)).toEqual(["a", "b", "c", "d"]);
    expect(filterTools(tools, { deny: ["c"] }).map((t) => t.name)).toEqual(["a", "b", "d"]);
    expect(filterTools(tools, { allow: ["A", "a "] })).toEqual([]);
  });

  it("requires every non-empty allow list of several filters to include the tool", () => {
    const out = filterTools(tools, [{ allow: ["a", "b", "c"] }, { allow: ["b", "c", "d"] }, { deny: ["c"] }, {}]);
    expect(out.map((t) => t.name)).toEqual(["b"]);
  });

  it("never returns anything outside the input and keeps input order", () => {
    const out = filterTools([tools[3], tools[0]], { allow: ["a", "d", "zzz"] });
    expect(out).toEqual([tools[3], tools[0]]);
  });

  it("reads a filter afresh at every call, however it changed since the last one", () => {
    const names = (filter: Parameters<typeof filterTools>[1]) => filterTools(tools, filter).map((t) => t.name);
    const filter = { allow: ["a", "b"], deny: ["b"] };
    expect(names(filter)).toEqual(["a"]);
    expect(names(filter)).toEqual(["a"]);
    // Changed in place: the same arrays, other items.
    filter.allow.push("c");
    expect(names(filter)).toEqual(["a", "c"]);
    filter.deny[0] = "a";
    expect(names(filter)).toEqual(["b", "c"]);
    filter.deny.length = 0;
    expect(names(filter)).toEqual(["a", "b", "c"]);
    // The same names moved between allow and deny, or split over several rules.
    expect(names({ allow: ["a"], deny: [] })).toEqual(["a"]);
    expect(names({ allow: [], deny: ["a"] })).toEqual(["b", "c", "d"]);
    expect(names([{ allow: ["a", "b"] }])).toEqual(["a", "b"]);
    expect(names([{ allow: ["a"] }, { allow: ["b"] }])).toEqual([]);
    // A getter that answers a new list at each read.
    let turn = 0;
    const moving = {
      get allow() {
        turn++;
        return turn % 2 === 1 ? ["a"] : ["d"];
      },
    };
    expect([names(moving), names(moving), names(moving)]).toEqual([["a"], ["d"], ["a"]]);
    expect(turn).toBe(3);
  });

  it("uses each name as it was checked: a list whose items answer differently on a second read", () => {
    let reads = 0;
    // Index 0 answers "a" at its first read and a number after: a second read would see what was never checked.
    const shifty = new Proxy(["a", "b"], {
      get(target, key, receiver) {
        if (key === "0") return reads++ === 0 ? "a" : 42;
        return Reflect.get(target, key, receiver);
      },
    });
    expect(filterTools(tools, { deny: shifty }).map((t) => t.name)).toEqual(["c", "d"]);
    expect(reads).toBe(1);
  });

  it("rejects malformed filters instead of guessing", () => {
    expect(() => filterTools(tools, { allow: "a" as never })).toThrow("filter.allow must be an array of tool names");
    expect(() => filterTools(tools, { deny: [1] as never })).toThrow("filter.deny must contain only strings");
    expect(() => filterTools(tools, [null as never])).toThrow("A tool filter must be an object");
  });
});

describe("registry and filter errors carry stable codes", () => {
  const codeOf = (f: () => unknown) => {
    try {
      f();
    } catch (e: any) {
      return [e.constructor.name, e.code, e.message];
    }
    return undefined;
  };

  it("names the code of every refusal", () => {
    expect(codeOf(() => createToolRegistry().resolve("x"))).toEqual(["Error", "ERR_PRISM_UNKNOWN_TOOL", "Unknown tool: x"]);
    expect(codeOf(() => createToolRegistry([1 as never]))).toEqual(["TypeError", "ERR_PRISM_INVALID_TOOL", "Tool definition must be an object"]);
    expect(codeOf(() => createToolRegistry([], 5 as never))).toEqual(["TypeError", "ERR_PRISM_INVALID_OPTION", "createToolRegistry: options must be an object"]);
    expect(codeOf(() => filterTools("x" as never))).toEqual(["TypeError", "ERR_PRISM_INVALID_OPTION", "filterTools: tools must be an array of tool definitions"]);
    expect(codeOf(() => filterTools([], { deny: "x" } as never))).toEqual(["TypeError", "ERR_PRISM_INVALID_FILTER", "filter.deny must be an array of tool names"]);
  });

  it("skips entries that are not tools instead of throwing, and reads each name once", () => {
    let reads = 0;
    const counted = { get name() { reads++; return "a"; }, execute() {} };
    expect(filterTools([null, 3, { name: 7 }, counted] as never, { allow: ["a"] })).toEqual([counted]);
    expect(reads).toBe(1);
  });

  it("a registry spread into a new object keeps working (methods are closures, not prototype methods)", () => {
    const a = tool("a");
    const wrapped = { ...createToolRegistry([a]), extra: true };
    expect(wrapped.get("a")).toBe(a);
    wrapped.register(tool("b"));
    expect(wrapped.list().map((t) => t.name)).toEqual(["a", "b"]);
  });
});

describe("dispatch finds tools through registry.get", () => {
  it("asks a host-written registry's get once per call and runs what it answered", async () => {
    const { dispatchToolCall } = await import("../index.js");
    const asked: string[] = [];
    const echo = { name: "echo", execute: (args: any, ctx: any) => ({ toolCallId: ctx.toolCallId, name: "echo", value: args }) };
    const registry = {
      register() {},
      get(name: string) {
        asked.push(name);
        return name === "echo" ? echo : undefined;
      },
      resolve() {
        return echo;
      },
      list: () => [echo],
    };
    const ok = await dispatchToolCall({ call: { type: "tool_call", id: "c1", name: "echo", arguments: { x: 1 } }, registry, context: { sessionId: "s", runId: "r" } });
    expect(ok).toMatchObject({ value: { x: 1 } });
    const missing = await dispatchToolCall({ call: { type: "tool_call", id: "c2", name: "nope", arguments: {} }, registry, context: { sessionId: "s", runId: "r" } });
    expect(missing.error?.message).toBe("Unknown tool: nope");
    expect(asked).toEqual(["echo", "nope"]);
  });
});
