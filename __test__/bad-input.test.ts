// Hostile and malformed input through the public API: each case ends in a clear result or error,
// nothing crashes, nothing leaks a secret, every dispatched call leaves exactly one terminal row.
import { getEventListeners } from "node:events";
import { describe, expect, it } from "vitest";
import {
  createMiddlewareRegistry,
  createToolRegistry,
  dispatchToolCall,
  type ToolDefinition,
  type ToolRegistry,
} from "../index.js";
import { call, ctx, echoTool, recorder } from "./helpers/harness.js";

function deep(levels: number): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  let cur = root;
  for (let i = 0; i < levels; i++) {
    const next: Record<string, unknown> = {};
    cur.child = next;
    cur = next;
  }
  return root;
}

describe("hostile arguments", () => {
  it("dispatches cyclic and 10 000-level arguments, bounding every row and event", async () => {
    const cyclic: Record<string, unknown> = { name: "loop" };
    cyclic.self = cyclic;
    for (const args of [cyclic, deep(10_000)]) {
      const rec = recorder();
      const r = await dispatchToolCall({
        call: call("echo", args),
        registry: createToolRegistry([echoTool()]),
        context: ctx(),
        emit: rec.emit,
        ledger: rec.ledger,
        secrets: ["never-present"],
      });
      expect(r.error).toBeUndefined();
      // The redacted copies in rows are bounded: cycles and depth become markers.
      const text = JSON.stringify(rec.rows);
      expect(text).toMatch(/\[Circular\]|\[MaxDepth\]/);
      expect(rec.terminalRows()).toHaveLength(1);
    }
  });

  it("carries __proto__ and constructor keys as plain data without polluting prototypes", async () => {
    const args = JSON.parse('{"__proto__": {"polluted": true}, "constructor": {"prototype": {"polluted": true}}, "text": "x"}');
    const r = await dispatchToolCall({ call: call("echo", args), registry: createToolRegistry([echoTool()]), context: ctx(), secrets: ["s"] });
    expect(r.error).toBeUndefined();
    expect(({} as any).polluted).toBeUndefined();
    expect(Object.prototype.hasOwnProperty.call(r.value, "__proto__")).toBe(true);
  });

  it("redacts secrets that appear in argument keys, values, thrown messages and nested results", async () => {
    const SECRET = "hunter2-secret";
    const rec = recorder();
    const tool: ToolDefinition = {
      name: "leak",
      execute: (args) => ({ toolCallId: "x", name: "leak", value: { echoed: args, note: `key=${SECRET}`, [SECRET]: [SECRET] } }),
    };
    const r = await dispatchToolCall({
      call: call("leak", { [SECRET]: SECRET, list: [{ deeper: SECRET }] }),
      registry: createToolRegistry([tool]),
      context: ctx(),
      secrets: [SECRET],
      emit: rec.emit,
      ledger: rec.ledger,
    });
    expect(JSON.stringify([r, rec.events, rec.rows])).not.toContain(SECRET);
  });
});

describe("hostile registries and hooks", () => {
  it("blocks with unknown_tool when a host registry's get throws", async () => {
    const registry: ToolRegistry = {
      register() {},
      resolve() {
        throw new Error("x");
      },
      list: () => [],
      get() {
        throw new Error("registry backend down");
      },
    };
    const rec = recorder();
    const r = await dispatchToolCall({ call: call("echo"), registry, context: ctx(), emit: rec.emit, ledger: rec.ledger });
    expect(r.error).toEqual({ message: "Unknown tool: echo" });
    expect(rec.rows.map((x) => x.status)).toEqual(["blocked"]);
  });

  it("rejects a registry without get, a non-function validator and malformed guardrail options", async () => {
    await expect(dispatchToolCall({ call: call("echo"), registry: {} as never, context: ctx() })).rejects.toThrow(
      "dispatchToolCall: registry must have get(name)",
    );
    await expect(
      dispatchToolCall({ call: call("echo"), registry: createToolRegistry([echoTool()]), context: ctx(), validate: 5 as never }),
    ).rejects.toThrow("validate must be a function");
    await expect(
      dispatchToolCall({ call: call("echo"), registry: createToolRegistry([echoTool()]), context: ctx(), guardrails: { toolInput: {} as never } }),
    ).rejects.toThrow("guardrails.toolInput must be an array of guardrails");
  });

  it("ends a call whose tool never settles when the caller's signal aborts", async () => {
    const controller = new AbortController();
    const rec = recorder();
    let seenSignal: AbortSignal | undefined;
    const hang: ToolDefinition = { name: "hang", execute: (_a, c) => ((seenSignal = c.signal), new Promise(() => {})) };
    const pending = dispatchToolCall({
      call: call("hang"),
      registry: createToolRegistry([hang]),
      context: ctx({ signal: controller.signal }),
      emit: rec.emit,
      ledger: rec.ledger,
    });
    setTimeout(() => controller.abort(), 5);
    const r = await pending;
    expect(seenSignal).toBe(controller.signal);
    expect(r.error).toMatchObject({ name: "AbortError", message: "Tool call aborted: hang", code: "ERR_PRISM_ABORTED" });
    expect(rec.types()).toEqual(["tool_execution_started", "tool_execution_error"]);
    expect(rec.rows.map((x) => x.status)).toEqual(["started", "error"]);
  });

  it("ends a call whose hook never settles when the signal aborts, without running the tool", async () => {
    const controller = new AbortController();
    const log: string[] = [];
    const rec = recorder();
    const pending = dispatchToolCall({
      call: call("echo"),
      registry: createToolRegistry([echoTool("echo", log)]),
      context: ctx({ signal: controller.signal }),
      permission: { check: () => new Promise(() => {}) },
      emit: rec.emit,
      ledger: rec.ledger,
    });
    setTimeout(() => controller.abort(), 5);
    const r = await pending;
    expect(log).toEqual([]);
    expect(r.error).toMatchObject({ name: "AbortError", code: "ERR_PRISM_ABORTED" });
    expect((rec.events[0] as any).reason).toBe("execution_denied");
    expect(rec.rows.map((x) => x.status)).toEqual(["blocked"]);
  });

  it("calls waiting on one signal share one listener on it; aborting it ends every one of them", async () => {
    const controller = new AbortController();
    const hang: ToolDefinition = { name: "hang", execute: () => new Promise(() => {}) };
    const registry = createToolRegistry([hang]);
    const pending = Array.from({ length: 50 }, (_, i) =>
      dispatchToolCall({ call: { ...call("hang"), id: `c${i}` }, registry, context: ctx({ signal: controller.signal }) }),
    );
    await new Promise((resolve) => setImmediate(resolve));
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(1);
    controller.abort();
    const results = await Promise.all(pending);
    expect(results.map((r) => r.error?.code)).toEqual(Array(50).fill("ERR_PRISM_ABORTED"));
    expect(results.map((r) => r.toolCallId)).toEqual(Array.from({ length: 50 }, (_, i) => `c${i}`));
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
  });

  it("a signal-like object without removeEventListener still aborts a call, and its idle listener is left alone", async () => {
    const listeners: Array<() => void> = [];
    const like = { aborted: false, reason: undefined, addEventListener: (_type: string, f: () => void) => listeners.push(f) };
    const registry = createToolRegistry([echoTool(), { name: "hang", execute: () => new Promise(() => {}) }]);
    const done = await dispatchToolCall({ call: call("echo", { text: "a" }), registry, context: ctx({ signal: like as any }) });
    expect(done.error).toBeUndefined();
    // The shared listener's sweep (about a second after the last wait) finds no removeEventListener.
    await new Promise((resolve) => setTimeout(resolve, 1_300));
    const pending = dispatchToolCall({ call: call("hang"), registry, context: ctx({ signal: like as any }) });
    await new Promise((resolve) => setImmediate(resolve));
    like.aborted = true;
    for (const f of [...listeners]) f();
    expect((await pending).error).toMatchObject({ name: "AbortError", message: "Tool call aborted: hang", code: "ERR_PRISM_ABORTED" });
  });

  it("a signal whose addEventListener throws fails the call with that error", async () => {
    const signal = { aborted: false, addEventListener: () => { throw new Error("no listeners here") } };
    const registry = createToolRegistry([{ name: "slow", execute: () => new Promise((resolve) => setTimeout(() => resolve({ content: [] }), 5)) }]);
    const r = await dispatchToolCall({ call: call("slow"), registry, context: ctx({ signal: signal as any }) });
    expect(r.error).toMatchObject({ name: "Error", message: "no listeners here" });
  });

  it("does not run a tool when the signal is already aborted", async () => {
    const log: string[] = [];
    const controller = new AbortController();
    controller.abort();
    const r = await dispatchToolCall({ call: call("echo"), registry: createToolRegistry([echoTool("echo", log)]), context: ctx({ signal: controller.signal }) });
    expect(log).toEqual([]);
    expect(r.error!.code).toBe("ERR_PRISM_ABORTED");
  });

  it("survives hooks that return garbage", async () => {
    const r = await dispatchToolCall({
      call: call("echo", { text: "hi" }),
      registry: createToolRegistry([echoTool()]),
      context: ctx(),
      trust: { check: () => ({ trusted: true }) },
      permission: { check: () => ({ allowed: "yes" }) as never },
    });
    expect(r.error!.message).toBe("Permission denied for tool:echo:execute");
    const r2 = await dispatchToolCall({
      call: call("echo", { text: "hi" }),
      registry: createToolRegistry([echoTool()]),
      context: ctx(),
      beforeExecute: () => 42 as never,
      emit: () => "not a promise" as never,
      ledger: { appendToolCall: () => ({ then: "not callable" }) as never },
    });
    expect(r2.value).toEqual({ text: "hi" });
  });

  it("keeps exactly one terminal row when a middleware calls next twice or throws", async () => {
    const errors: unknown[] = [];
    const middleware = createMiddlewareRegistry({ onError: (e) => void errors.push(e) });
    middleware.use("tool_call", async (v: any, next: any) => {
      await next(v);
      return next(v);
    });
    middleware.use("tool_result", () => {
      throw "a thrown string";
    });
    const rec = recorder();
    const r = await dispatchToolCall({ call: call("echo", { text: "ok" }), registry: createToolRegistry([echoTool()]), context: ctx(), middleware, ledger: rec.ledger });
    expect(r.value).toEqual({ text: "ok" });
    expect(errors.length).toBeGreaterThanOrEqual(2);
    expect(rec.terminalRows()).toHaveLength(1);
  });

  it("writes the terminal row, then rejects, when a middleware fails under errorPolicy throw", async () => {
    const middleware = createMiddlewareRegistry({ errorPolicy: "throw" });
    const boom = new Error("middleware failed");
    middleware.use("tool_call", () => {
      throw boom;
    });
    const rec = recorder();
    const err = await dispatchToolCall({ call: call("echo"), registry: createToolRegistry([echoTool()]), context: ctx(), middleware, ledger: rec.ledger }).then(
      () => null,
      (e) => e,
    );
    expect(err).toBe(boom);
    expect(rec.rows.map((x) => x.status)).toEqual(["blocked"]);
  });

  it("does not leak memory or crash over many unknown, denied and failing calls", async () => {
    const registry = createToolRegistry([{ name: "boom", execute: () => { throw undefined; } }]);
    for (let i = 0; i < 2000; i++) {
      const r = await dispatchToolCall({ call: call(i % 2 ? "boom" : `missing_${i}`, {}, `c${i}`), registry, context: ctx(), filter: { deny: ["nothing"] } });
      expect(r.error).toBeDefined();
    }
  });
});

describe('dispatch of arguments from another realm', () => {
  it('treats a plain object made in a node:vm context as a JSON object', async () => {
    const vm = await import('node:vm')
    const { createToolRegistry, dispatchToolCall } = await import('../index.js')
    const args = vm.runInNewContext('({ text: "hi" })')
    const registry = createToolRegistry([
      { name: 'echo', execute: (a: unknown, c: { toolCallId: string }) => ({ toolCallId: c.toolCallId, name: 'echo', value: a }) },
    ])
    const r = await dispatchToolCall({ call: { type: 'tool_call', id: 'c1', name: 'echo', arguments: args }, registry, context: {} })
    expect(r.error).toBeUndefined()
    expect((r.value as { text: string }).text).toBe('hi')
    // An array or a class instance from that realm is still refused.
    const arr = vm.runInNewContext('[1, 2]')
    const blocked = await dispatchToolCall({ call: { type: 'tool_call', id: 'c2', name: 'echo', arguments: arr }, registry, context: {} })
    expect(blocked.error?.message).toBe('Tool arguments must be a JSON object')
  })

  it('treats a tool result whose `then` getter throws as the tool throwing', async () => {
    const { createToolRegistry, dispatchToolCall } = await import('../index.js')
    const hostile = {}
    Object.defineProperty(hostile, 'then', { get() { throw new Error('then getter exploded') } })
    const registry = createToolRegistry([{ name: 'bad', execute: () => hostile }])
    const rows: Array<{ status: string }> = []
    const r = await dispatchToolCall({
      call: { type: 'tool_call', id: 'c3', name: 'bad', arguments: {} },
      registry,
      context: {},
      ledger: { appendToolCall: (row: { status: string }) => void rows.push(row) },
    })
    expect(r.error?.message).toBe('then getter exploded')
    expect(rows.map((x) => x.status)).toEqual(['started', 'error'])
  })
})

describe('ledger rows and the live arguments', () => {
  it('a started row without secrets holds a copy, not the arguments the tool mutates', async () => {
    const { createToolRegistry, dispatchToolCall } = await import('../index.js')
    const args: Record<string, unknown> = { text: 'before', nested: { n: 1 } }
    const rows: Array<{ status: string; arguments: Record<string, unknown> }> = []
    const registry = createToolRegistry([
      {
        name: 'mutate',
        execute: (a: Record<string, unknown>, c: { toolCallId: string }) => {
          a.text = 'after'
          ;(a.nested as { n: number }).n = 2
          return { toolCallId: c.toolCallId, name: 'mutate', value: 'ok' }
        },
      },
    ])
    await dispatchToolCall({
      call: { type: 'tool_call', id: 'c1', name: 'mutate', arguments: args },
      registry,
      context: {},
      ledger: { appendToolCall: (row: { status: string; arguments: Record<string, unknown> }) => void rows.push(row) },
    })
    expect(rows[0].status).toBe('started')
    expect(rows[0].arguments).not.toBe(args)
    expect(rows[0].arguments).toEqual({ text: 'before', nested: { n: 1 } })
  })
})
