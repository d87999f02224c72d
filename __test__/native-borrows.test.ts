// The binding's borrow rule, tested: no Rust borrow of native state is held while JS runs. Every
// export that calls back into JS mid-call (a store's clock, a getter on the value it reads, a hook of
// dispatch) is re-entered here from inside that callback, on the same native object. A borrow held
// across the callback would show as a RefCell panic (a thrown "panic" error or an abort of the
// process), a stale or torn answer, or a lost record; each case checks the answers of both the outer
// and the inner call. (The addon's exports are built without napi-derive's own borrow scopes, so this
// suite is what checks the rule.)
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { serviceIdentity } from "./helpers/service-identity.mjs";
import type { AgentIdentity, ToolEffectKey } from "../index.js";

const require = createRequire(import.meta.url);
const p: typeof import("../index.js") = require("../index.js");

const identity: AgentIdentity = serviceIdentity;

function keyOf(toolCallId: string): ToolEffectKey {
  const base = { identity, ownership: { tenantId: "tenant" }, sessionId: "s", runId: "r", toolCallId, toolName: "pay", argumentsHash: p.toolEffectArgumentsHash({ amount: 1 }) };
  return { ...base, key: p.deriveToolEffectKey(base) };
}

describe("native borrows: re-entered from JS callbacks", () => {
  it("a memory store's clock that uses the same store (get, begin, complete) mid-operation", async () => {
    let depth = 0;
    const inner: string[] = [];
    const store = p.createMemoryToolEffectStore({
      now: () => {
        if (depth === 0) {
          depth++;
          const k = keyOf(`inner-${inner.length}`);
          const began = store.begin(k);
          inner.push((began as unknown as { outcome: string }).outcome ?? "promise");
          depth--;
        }
        return Date.now();
      },
    });
    const outer = await store.begin(keyOf("outer"));
    expect(outer.outcome).toBe("acquired");
    expect(inner).toEqual(["promise"]); // the face returns a promise; the inner claim ran to the end
    expect((await store.get(keyOf("inner-0")))?.status).toBe("pending");
    const claim = { ...keyOf("outer"), claimToken: outer.record.claimToken! };
    const dispatched = await store.markDispatched({ ...claim, expectedVersion: outer.record.version });
    const done = await store.complete({ ...claim, expectedVersion: dispatched.version, result: { toolCallId: "outer", name: "pay", value: 1 } });
    expect(done.status).toBe("completed");
    // the clock ran at each of the four operations (begin, get, markDispatched, complete), each time
    // claiming another key
    expect(inner).toHaveLength(4);
    for (let i = 0; i < 4; i++) expect((await store.get(keyOf(`inner-${i}`)))?.status).toBe("pending");
  });

  it("dispatch with a memory store whose clock starts another dispatch on the same store", async () => {
    let executed = 0;
    let nested: Promise<unknown> | undefined;
    let started = false;
    const tool = {
      name: "pay",
      effect: { kind: "external_mutation" as const, idempotency: "required" as const },
      execute: (args: { amount: number }, ctx: { toolCallId: string }) => {
        executed++;
        return { toolCallId: ctx.toolCallId, name: "pay", value: { charged: args.amount } };
      },
    };
    const registry = p.createToolRegistry([tool as never]);
    const call = (id: string, amount: number) =>
      p.dispatchToolCall({ call: { type: "tool_call", id, name: "pay", arguments: { amount } }, registry, context: { sessionId: "s", runId: "r", toolCallId: id }, effectStore: store, identity });
    const store = p.createMemoryToolEffectStore({
      now: () => {
        if (!started) {
          started = true;
          nested = call("inner", 2);
        }
        return Date.now();
      },
    });
    const outer = await call("outer", 1);
    const inner = (await nested) as { value: { charged: number } };
    expect(outer.value).toEqual({ charged: 1 });
    expect(inner.value).toEqual({ charged: 2 });
    expect(executed).toBe(2);
    // Both replay from the store: neither runs again.
    expect((await call("outer", 1)).value).toEqual({ charged: 1 });
    expect((await call("inner", 2)).value).toEqual({ charged: 2 });
    expect(executed).toBe(2);
  });

  it("dispatch whose hooks start dispatches on the same registry and store, at every step", async () => {
    const store = p.createMemoryToolEffectStore();
    let executed = 0;
    const tool = {
      name: "pay",
      effect: { kind: "external_mutation" as const, idempotency: "required" as const },
      execute: async (args: { amount: number }, ctx: { toolCallId: string }) => {
        executed++;
        return { toolCallId: ctx.toolCallId, name: "pay", value: { charged: args.amount } };
      },
    };
    const registry = p.createToolRegistry([tool as never]);
    const nested: Promise<{ value?: unknown }>[] = [];
    let n = 0;
    const spawn = () => {
      if (n < 6) nested.push(run(`nested-${n++}`, 100 + n) as Promise<{ value?: unknown }>);
    };
    const run = (id: string, amount: number): Promise<unknown> =>
      p.dispatchToolCall({
        call: { type: "tool_call", id, name: "pay", arguments: { amount } },
        registry,
        context: { sessionId: "s", runId: "r", toolCallId: id },
        effectStore: store,
        identity,
        validate: () => (spawn(), undefined),
        beforeExecute: () => void spawn(),
        permission: { check: () => (spawn(), { allowed: true }) },
        trust: { check: () => (spawn(), { trusted: true }) },
        emit: () => spawn(),
      });
    const outer = (await run("outer", 1)) as { value: unknown };
    const inner = await Promise.all(nested);
    expect(outer.value).toEqual({ charged: 1 });
    expect(inner).toHaveLength(6);
    // Spawned from inside each other's hooks, they settle in any order: each ran once with its own amount.
    expect(inner.map((r) => (r.value as { charged: number }).charged).sort()).toEqual([101, 102, 103, 104, 105, 106]);
    expect(executed).toBe(7);
  });

  it("a redactor re-entered from a getter of the value it is redacting", () => {
    const redactor = p.createSecretRedactor(["sk-live-123"]);
    let inner: unknown;
    const value = {
      a: "token sk-live-123",
      get b() {
        inner = redactor.redact({ c: "again sk-live-123" });
        return "b sk-live-123";
      },
    };
    const out = redactor.redact(value) as Record<string, string>;
    expect(out.a).not.toContain("sk-live-123");
    expect(inner).toEqual({ c: expect.not.stringContaining("sk-live-123") });
    if ("b" in out) expect(out.b).not.toContain("sk-live-123");
  });

  it("a static policy's check re-entered from a getter of its request", async () => {
    const policy = p.createStaticPermissionPolicy({ allow: ["tool:pay:execute"], deny: ["tool:drop:execute"] });
    let inner: unknown;
    const request = {
      kind: "tool",
      action: "execute",
      get target() {
        inner = policy.check({ kind: "tool", action: "execute", target: "drop" });
        return "pay";
      },
    };
    const outer = await policy.check(request as never);
    expect(outer).toMatchObject({ allowed: true });
    expect(await inner).toMatchObject({ allowed: false });
  });

  it("a validator re-entered from a getter of the arguments it validates", () => {
    const validate = p.createJsonSchemaToolArgumentValidator();
    const tool = { name: "t", parameters: { type: "object", properties: { n: { type: "number", maximum: 5 } }, required: ["n"] } };
    let inner: unknown;
    const args = {
      get n() {
        inner = validate(tool as never, { n: 9 }, {} as never);
        return 1;
      },
    };
    const outer = validate(tool as never, args as never, {} as never);
    // An accessor is not plain data: refused with the reason, without running the getter.
    expect(outer).toBe('an object with an accessor property ("n") is not plain JSON');
    expect(inner).toBeUndefined();
    // A validator re-entered from a schema getter (the tool's parameters read as the call begins).
    const lazy = {
      name: "lazy",
      get parameters() {
        inner = validate(tool as never, { n: 9 }, {} as never);
        return tool.parameters;
      },
    };
    expect(validate(lazy as never, { n: 1 }, {} as never)).toBeUndefined();
    expect(inner).toBe("/n: expected a number <= 5, found integer 9");
    expect(validate(lazy as never, { n: 7 }, {} as never)).toBe("/n: expected a number <= 5, found integer 7");
  });
});
