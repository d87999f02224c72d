import { describe, expect, it } from "vitest";
import { createMiddlewareRegistry, type ExtensionEvent, type MiddlewareRegistry } from "../index.js";

type Internal = MiddlewareRegistry & { runSync<T>(hook: string, value: T): T | Promise<T> };

function collecting(options: Record<string, unknown> = {}) {
  const errors: ExtensionEvent[] = [];
  const registry = createMiddlewareRegistry({ ...options, onError: (event) => void errors.push(event) }) as Internal;
  return { registry, errors };
}

describe("middleware chain", () => {
  it("runs middlewares in registration order, each seeing the previous output", async () => {
    const m = createMiddlewareRegistry();
    m.use<{ steps: string[] }>("provider_request", async (value, next) => {
      value.steps.push("one");
      return next(value);
    });
    m.use<{ steps: string[] }>("provider_request", (value) => ({ steps: [...value.steps, "two"] }));
    expect(await m.run("provider_request", { steps: [] })).toEqual({ steps: ["one", "two"] });
  });

  it("passes the value through unchanged when a hook has no middleware", async () => {
    const m = createMiddlewareRegistry();
    const call = { type: "tool_call", id: "c1", name: "echo", arguments: {} };
    expect(await m.run("tool_call", call)).toBe(call);
  });

  it("keeps the current value when a middleware returns undefined without calling next", async () => {
    const m = createMiddlewareRegistry();
    const value = { n: 1 };
    m.use("tool_call", () => undefined);
    m.use("tool_call", async () => undefined);
    expect(await m.run("tool_call", value)).toBe(value);
  });

  it("passes any returned value on, garbage included, and null", async () => {
    const m = createMiddlewareRegistry();
    m.use("h", () => 42);
    expect(await m.run("h", { a: 1 })).toBe(42);
    const n = createMiddlewareRegistry();
    n.use("h", () => null);
    expect(await n.run("h", { a: 1 })).toBeNull();
  });

  it("commits next(v); `return next(v)` is silent", async () => {
    const { registry, errors } = collecting();
    registry.use<{ v: number }>("context", (value, next) => next({ v: value.v + 1 }));
    registry.use<{ v: number }>("context", async (value, next) => next({ v: value.v * 10 }));
    expect(await registry.run("context", { v: 1 })).toEqual({ v: 20 });
    expect(errors).toEqual([]);
  });

  it("next() and next(undefined) pass the received value on", async () => {
    const m = createMiddlewareRegistry();
    const value = { v: 1 };
    m.use("h", (_v, next) => {
      void next();
    });
    m.use("h", (_v, next) => next(undefined));
    expect(await m.run("h", value)).toBe(value);
  });

  it("next returns a promise of the committed value", async () => {
    const m = createMiddlewareRegistry();
    let seen: unknown;
    m.use<number>("h", async (v, next) => {
      seen = await next(v + 1);
    });
    expect(await m.run("h", 1)).toBe(2);
    expect(seen).toBe(2);
  });

  it("a conflicting return after next(v) is discarded and reported, next's value wins", async () => {
    const { registry, errors } = collecting();
    registry.use<{ v: number }>("context", async (value, next) => {
      await next({ v: value.v + 1 });
      return { v: 999 };
    });
    expect(await registry.run("context", { v: 1 })).toEqual({ v: 2 });
    expect(errors).toEqual([
      {
        type: "extension_error",
        extension: "middleware:context",
        error: {
          name: "Error",
          message:
            'Middleware hook "context" #0: called next(value) and returned a different value; the next() value wins, the return is discarded',
          code: "ERR_PRISM_MIDDLEWARE_CONFLICT",
        },
      },
    ]);
  });

  it("a conflict is reported, not thrown, under errorPolicy throw", async () => {
    const { registry, errors } = collecting({ errorPolicy: "throw" });
    registry.use<number>("h", (v, next) => {
      void next(v + 1);
      return 7;
    });
    expect(await registry.run("h", 1)).toBe(2);
    expect(errors.map((e) => e.error?.code)).toEqual(["ERR_PRISM_MIDDLEWARE_CONFLICT"]);
  });

  it("calling next twice is reported with hook and index, and the middleware is skipped", async () => {
    const { registry, errors } = collecting();
    registry.use<{ v: number }>("context", (value) => ({ v: value.v + 1 }));
    registry.use<{ v: number }>("context", async (value, next) => {
      await next({ v: 100 });
      return next({ v: 200 });
    });
    expect(await registry.run("context", { v: 1 })).toEqual({ v: 2 });
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({
      type: "extension_error",
      extension: "middleware:context",
      error: {
        message: 'Middleware hook "context" #1: next() called more than once',
        code: "ERR_PRISM_MIDDLEWARE_NEXT_TWICE",
      },
    });
  });

  it("a swallowed second next() is still reported once", async () => {
    const { registry, errors } = collecting();
    registry.use<number>("h", (v, next) => {
      void next(v + 1);
      try {
        void next(v + 2);
      } catch {
        // swallowed by the middleware
      }
      return undefined;
    });
    expect(await registry.run("h", 1)).toBe(1);
    expect(errors.map((e) => e.error?.code)).toEqual(["ERR_PRISM_MIDDLEWARE_NEXT_TWICE"]);
  });

  it("next twice rejects run under errorPolicy throw", async () => {
    const strict = createMiddlewareRegistry({ errorPolicy: "throw" });
    strict.use<{ v: number }>("context", async (value, next) => {
      await next(value);
      return next(value);
    });
    await expect(strict.run("context", { v: 1 })).rejects.toMatchObject({
      message: 'Middleware hook "context" #0: next() called more than once',
      code: "ERR_PRISM_MIDDLEWARE_NEXT_TWICE",
    });
  });

  it("a next() after the middleware settled is reported and ignored", async () => {
    const { registry, errors } = collecting();
    let late: ((v?: number) => Promise<number>) | undefined;
    registry.use<number>("h", (_v, next) => {
      late = next;
      return undefined;
    });
    expect(await registry.run("h", 1)).toBe(1);
    await expect(late!(5)).resolves.toBe(5);
    expect(errors).toHaveLength(1);
    expect(errors[0]!.error).toMatchObject({
      message: 'Middleware hook "h" #0: next() called after the middleware settled; the value is ignored',
      code: "ERR_PRISM_MIDDLEWARE_LATE_NEXT",
    });
  });

  it("a run keeps the chain it started with", async () => {
    const m = createMiddlewareRegistry();
    const order: string[] = [];
    m.use("h", async () => {
      order.push("a");
      m.use("h", () => void order.push("added"));
      await Promise.resolve();
    });
    await m.run("h", 0);
    expect(order).toEqual(["a"]);
    await m.run("h", 0);
    expect(order).toEqual(["a", "a", "added"]);
  });
});

describe("middleware errors", () => {
  const thrown: Array<[string, unknown, Record<string, unknown>]> = [
    ["an Error", new Error("boom"), { name: "Error", message: "boom" }],
    ["a TypeError with a code", Object.assign(new TypeError("bad"), { code: "E_BAD" }), { name: "TypeError", message: "bad", code: "E_BAD" }],
    ["a string", "plain string", { message: "plain string" }],
    ["a number", 42, { message: "42" }],
    ["undefined", undefined, { message: "undefined" }],
    ["null", null, { message: "null" }],
    ["an object with a message", { message: "objmsg", code: 7 }, { message: "objmsg", code: 7 }],
    ["an object without a message", { foo: 1 }, { message: "[object Object]" }],
    ["a null-prototype object", Object.create(null), { message: "[object Object]" }],
    ["a symbol", Symbol("sym"), { message: "Symbol(sym)" }],
  ];

  for (const [label, value, info] of thrown) {
    it(`skips and reports a middleware that throws ${label}`, async () => {
      const { registry, errors } = collecting();
      registry.use<number>("h", () => {
        throw value;
      });
      registry.use<number>("h", (v) => v + 1);
      expect(await registry.run("h", 1)).toBe(2);
      expect(errors).toEqual([{ type: "extension_error", extension: "middleware:h", error: info }]);
    });

    it(`skips and reports a middleware that rejects with ${label}`, async () => {
      const { registry, errors } = collecting();
      registry.use<number>("h", () => Promise.reject(value));
      registry.use<number>("h", (v) => v + 1);
      expect(await registry.run("h", 1)).toBe(2);
      expect(errors).toEqual([{ type: "extension_error", extension: "middleware:h", error: info }]);
    });
  }

  it("a getter that throws on the error leaves that field out", async () => {
    const { registry, errors } = collecting();
    const hostile = {
      get message(): string {
        throw new Error("getter");
      },
    };
    registry.use("h", () => {
      throw hostile;
    });
    expect(await registry.run("h", 1)).toBe(1);
    expect(errors[0]!.error!.message).toBe("[object Object]");
  });

  it("a failed middleware's next() commit is discarded", async () => {
    const { registry } = collecting();
    registry.use<number>("h", (v, next) => {
      void next(v + 100);
      throw new Error("after next");
    });
    expect(await registry.run("h", 1)).toBe(1);
  });

  it("rethrows the very value thrown under errorPolicy throw", async () => {
    const m = createMiddlewareRegistry({ errorPolicy: "throw" });
    const error = new Error("boom");
    m.use("retry", () => {
      throw error;
    });
    await expect(m.run("retry", {})).rejects.toBe(error);
    const n = createMiddlewareRegistry({ errorPolicy: "throw" });
    n.use("h", () => Promise.reject("just a string"));
    await expect(n.run("h", {})).rejects.toBe("just a string");
  });

  it("redacts secrets from message, name and code before onError sees them", async () => {
    const { registry, errors } = collecting({ secrets: ["token-123", "", undefined, "sk-live-abcdef", "sk-live"] });
    registry.use("tool_call", () => {
      const e = new Error("bad token-123 and sk-live-abcdef");
      e.name = "Err token-123";
      (e as Error & { code: string }).code = "E_token-123";
      throw e;
    });
    registry.use("tool_call", () => Promise.reject("rejected with sk-live"));
    await registry.run("tool_call", {});
    expect(errors.map((e) => e.error)).toEqual([
      { name: "Err [REDACTED]", message: "bad [REDACTED] and [REDACTED]", code: "E_[REDACTED]" },
      { message: "rejected with [REDACTED]" },
    ]);
    expect(JSON.stringify(errors)).not.toMatch(/token-123|sk-live/);
  });

  it("awaits an async onError before the chain goes on", async () => {
    const order: string[] = [];
    const m = createMiddlewareRegistry({
      onError: async () => {
        await new Promise((r) => setTimeout(r, 5));
        order.push("reported");
      },
    });
    m.use("h", () => {
      throw new Error("x");
    });
    m.use("h", () => void order.push("second"));
    await m.run("h", 0);
    expect(order).toEqual(["reported", "second"]);
  });

  it("a throwing onError makes run reject", async () => {
    const failure = new Error("onError broke");
    const m = createMiddlewareRegistry({
      onError: () => {
        throw failure;
      },
    });
    m.use("h", () => {
      throw new Error("x");
    });
    await expect(m.run("h", 0)).rejects.toBe(failure);
  });

  it("a middleware that never calls next and returns nothing is fine", async () => {
    const m = createMiddlewareRegistry();
    m.use("h", () => {});
    expect(await m.run("h", "v")).toBe("v");
  });
});

describe("registry API", () => {
  it("use returns an idempotent unsubscribe that removes that registration only", async () => {
    const m = createMiddlewareRegistry();
    const inc = (v: number) => v + 1;
    const off1 = m.use("h", inc);
    m.use("h", inc);
    expect(m.list("h")).toEqual([inc, inc]);
    off1();
    off1();
    expect(m.list("h")).toEqual([inc]);
    expect(await m.run("h", 0)).toBe(1);
  });

  it("list returns a copy in order, and [] for an unknown hook", () => {
    const m = createMiddlewareRegistry();
    const a = () => undefined;
    const b = () => undefined;
    m.use("h", a);
    m.use("h", b);
    const list = m.list("h") as unknown[];
    expect(list).toEqual([a, b]);
    list.pop();
    expect(m.list("h")).toEqual([a, b]);
    expect(m.list("nothing")).toEqual([]);
  });

  it("rejects a non-function middleware with a TypeError", () => {
    const m = createMiddlewareRegistry();
    for (const bad of [undefined, null, 1, "fn", {}, []]) {
      expect(() => m.use("h", bad as never)).toThrow(TypeError);
    }
    try {
      m.use("tool_call", 5 as never);
    } catch (e) {
      expect(e).toMatchObject({ message: 'Middleware for hook "tool_call" must be a function, got number', code: "ERR_INVALID_ARG_TYPE" });
    }
    expect(m.list("h")).toEqual([]);
  });

  it("rejects hooks that are not strings", async () => {
    const m = createMiddlewareRegistry();
    for (const bad of [undefined, null, 1, {}, Symbol("h")]) {
      expect(() => m.use(bad as never, () => undefined)).toThrow("Middleware hook must be a string");
      expect(() => m.list(bad as never)).toThrow(TypeError);
      await expect(m.run(bad as never, 1)).rejects.toMatchObject({ name: "TypeError", code: "ERR_INVALID_ARG_TYPE" });
    }
  });

  it("validates its options", () => {
    expect(() => createMiddlewareRegistry({ errorPolicy: "loud" as never })).toThrow('errorPolicy must be "event" or "throw"');
    expect(() => createMiddlewareRegistry({ onError: 1 as never })).toThrow("onError must be a function, got number");
    expect(() => createMiddlewareRegistry({ secrets: "abc" as never })).toThrow("secrets must be an array of strings");
    expect(() => createMiddlewareRegistry(null as never)).toThrow(TypeError);
  });

  it("has exactly use, run and list as enumerable keys; runSync is hidden", () => {
    const m = createMiddlewareRegistry();
    expect(Object.keys(m)).toEqual(["use", "run", "list"]);
    expect(typeof (m as Internal).runSync).toBe("function");
    expect(Object.getOwnPropertyDescriptor(m, "runSync")?.enumerable).toBe(false);
  });

  it("run always returns a promise, even with no middleware", () => {
    const m = createMiddlewareRegistry();
    expect(m.run("h", 1)).toBeInstanceOf(Promise);
  });
});

describe("runSync", () => {
  it("returns the value itself when every middleware answered synchronously", () => {
    const m = createMiddlewareRegistry() as Internal;
    const value = { v: 1 };
    expect(m.runSync("tool_call", value)).toBe(value);
    m.use<{ v: number }>("tool_call", (v) => ({ v: v.v + 1 }));
    m.use<{ v: number }>("tool_call", (v, next) => next({ v: v.v * 3 }));
    m.use<{ v: number }>("tool_call", () => undefined);
    expect(m.runSync("tool_call", value)).toEqual({ v: 6 });
  });

  it("reports synchronous errors synchronously under event", () => {
    const { registry, errors } = collecting();
    registry.use("h", () => {
      throw new Error("sync");
    });
    expect(registry.runSync("h", 3)).toBe(3);
    expect(errors).toHaveLength(1);
  });

  it("returns a promise once a middleware answers with one", async () => {
    const m = createMiddlewareRegistry() as Internal;
    m.use<number>("h", (v) => v + 1);
    m.use<number>("h", async (v) => v * 2);
    m.use<number>("h", (v) => v + 1);
    const out = m.runSync("h", 1);
    expect(out).toBeInstanceOf(Promise);
    expect(await out).toBe(5);
  });

  it("throws synchronously under errorPolicy throw", () => {
    const m = createMiddlewareRegistry({ errorPolicy: "throw" }) as Internal;
    m.use("h", () => {
      throw new Error("sync throw");
    });
    expect(() => m.runSync("h", 1)).toThrow("sync throw");
  });

  it("awaits non-native thenables", async () => {
    const m = createMiddlewareRegistry() as Internal;
    m.use<number>("h", (v) => ({ then: (resolve: (x: number) => void) => resolve(v + 10) }) as unknown as number);
    expect(await m.runSync("h", 1)).toBe(11);
  });

  it("a thenable whose then throws is a failing middleware", async () => {
    const { registry, errors } = collecting();
    registry.use<number>(
      "h",
      () =>
        ({
          then() {
            throw new Error("bad then");
          },
        }) as unknown as number,
    );
    expect(await registry.runSync("h", 1)).toBe(1);
    expect(errors[0]!.error!.message).toBe("bad then");
  });
});
