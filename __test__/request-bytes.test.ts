import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { createAgent, providerDone, type ToolDefinition } from "../index.mjs";

// The request size the run limits charge (lib/run-limits.js): exactly the UTF-8 bytes of the request as
// JSON, with each tool definition measured once until one of its own properties changes.
const require = createRequire(import.meta.url);
const { requestJsonBytes, rememberTextMessageBytes } = require("../lib/run-limits.js") as {
  requestJsonBytes: (request: unknown) => number;
  rememberTextMessageBytes: (message: object, bytes: number) => void;
};
const whole = (value: unknown) => Buffer.byteLength(JSON.stringify(value) ?? "", "utf8");

const tool = (i: number, extra: Record<string, unknown> = {}) => ({
  name: `tool_${i}`,
  description: `Tool ${i}: é, 😀, "quoted", \\ and a lone \ud800 surrogate`,
  parameters: { type: "object", properties: { q: { type: "string", description: "ü" } } },
  execute: () => 1,
  ...extra,
});

describe("requestJsonBytes", () => {
  it("equals the whole request's JSON bytes, for every shape of request and tool list", () => {
    const signal = new AbortController().signal;
    const model = { provider: "p", model: "m" };
    const messages = [{ role: "user", content: [{ type: "text", text: "hé 😀" }] }];
    class Box {
      constructor(public v = 1) {}
    }
    const requests: unknown[] = [
      { model, messages, tools: [tool(1), tool(2)], metadata: { a: 1 }, signal },
      { tools: [tool(1)] },
      { tools: [] },
      { model, tools: [] },
      { tools: [undefined, null, () => 1, Symbol("s"), 7, "x", true, [1, [2]], new Box(), new String("ab")] },
      { tools: [{ toJSON: () => ({ replaced: "é" }) }, tool(3, { skipped: undefined, fn() {} })] },
      { model, messages, tools: undefined },
      { model, messages, tools: "not a list" },
      { model, messages, tools: { 0: tool(1), length: 1 } },
      { model, toJSON: () => ({ shown: 1 }), tools: [tool(1)] },
      Object.assign(Object.create({ inherited: 1 }), { tools: [tool(1)] }),
      Object.assign([tool(1)], { tools: [tool(2)] }),
      { [Symbol("hidden")]: 1, model, tools: [tool(4)] },
      "text",
      42,
      null,
    ];
    for (const request of requests) expect(requestJsonBytes(request)).toBe(whole(request));
    const withListToJSON = Object.assign([tool(1)], { toJSON: () => ["x"] });
    expect(requestJsonBytes({ model, tools: withListToJSON })).toBe(whole({ model, tools: withListToJSON }));
  });

  it("measures a tool again when an own property is replaced, added or removed", () => {
    const t: Record<string, unknown> = tool(1);
    const request = { model: { provider: "p", model: "m" }, tools: [t] };
    expect(requestJsonBytes(request)).toBe(whole(request));
    t.description = "a much longer description, with ünïcödé and 😀😀😀";
    expect(requestJsonBytes(request)).toBe(whole(request));
    t.parameters = { type: "object", properties: { amount: { type: "number", maximum: 5 } } };
    expect(requestJsonBytes(request)).toBe(whole(request));
    t.added = ["x"];
    expect(requestJsonBytes(request)).toBe(whole(request));
    delete t.added;
    expect(requestJsonBytes(request)).toBe(whole(request));
    Object.defineProperty(t, "name", { value: "renamed", enumerable: false });
    expect(requestJsonBytes(request)).toBe(whole(request));
    // A definition whose prototype has enumerable keys: JSON reads only its own; counted exactly, twice.
    const inherited = Object.assign(Object.create({ shared: "not in JSON" }), tool(2));
    const withProto = { tools: [inherited] };
    expect(requestJsonBytes(withProto)).toBe(whole(withProto));
    inherited.description = "changed";
    expect(requestJsonBytes(withProto)).toBe(whole(withProto));
    // An array in the list, made longer in place: its holes are `null`s in JSON.
    const list: unknown[] = [1, 2];
    const withArray = { tools: [list] };
    expect(requestJsonBytes(withArray)).toBe(whole(withArray));
    list.length = 5;
    expect(requestJsonBytes(withArray)).toBe(whole(withArray));
  });

  it("follows a global toJSON while one is defined", () => {
    const request = { tools: [tool(1)] };
    expect(requestJsonBytes(request)).toBe(whole(request));
    (Array.prototype as any).toJSON = function () {
      return "array";
    };
    try {
      expect(requestJsonBytes(request)).toBe(whole(request));
    } finally {
      delete (Array.prototype as any).toJSON;
    }
    expect(requestJsonBytes(request)).toBe(whole(request));
  });

  it("refuses what JSON cannot hold with the run limits' TypeError", () => {
    const cyclic: Record<string, unknown> = tool(1);
    cyclic.self = cyclic;
    const throwing = Object.defineProperty(tool(2), "description", {
      enumerable: true,
      get() {
        throw new Error("getter");
      },
    });
    for (const request of [{ tools: [cyclic] }, { tools: [throwing] }, { tools: [tool(3, { big: 1n })] }, { model: 1n, tools: [] }]) {
      expect(() => requestJsonBytes(request)).toThrow(new TypeError("Provider request or event must be JSON-serializable for run limits"));
    }
  });
});

describe("a leading message whose size the loop kept", () => {
  // The loop measures its `Available tools:` message once per tool list and keeps the size with
  // the message; the request is still charged exactly what it is as JSON, whatever happened to it.
  const remembered = (text: string) => {
    const block: Record<string, unknown> = { type: "text", text };
    const content: unknown[] = [block];
    const message: Record<string, unknown> = { role: "system", content };
    rememberTextMessageBytes(message, whole(message));
    return { message, content, block };
  };
  const user = { role: "user", content: [{ type: "text", text: "hé" }] };

  it("counts the kept size while the message is unchanged, alone or before others", () => {
    for (const rest of [[], [user], [user, user]]) {
      const { message } = remembered("Available tools:\n- a: é 😀 \"q\" \\ \ud800");
      const request = { model: { provider: "p", model: "m" }, messages: [message, ...rest], tools: [tool(1)] };
      expect(requestJsonBytes(request)).toBe(whole(request));
    }
  });

  it("measures it again after any change to the message, its content list or its block", () => {
    const changes: ((m: ReturnType<typeof remembered>) => void)[] = [
      ({ block }) => (block.text = "Available tools:\n- a much longer list than before"),
      ({ block }) => (block.cache_control = { type: "ephemeral" }),
      ({ block }) => delete block.type,
      ({ content }) => content.push({ type: "text", text: "more" }),
      ({ content }) => (content[0] = { type: "text", text: "other" }),
      ({ message }) => (message.role = "developer"),
      ({ message }) => (message.content = [{ type: "text", text: "replaced" }]),
      ({ message }) => (message.metadata = { note: "ünïcödé" }),
      // A toJSON JSON.stringify would call, though no enumerable key shows it.
      ({ block }) => Object.defineProperty(block, "toJSON", { value: () => ({ type: "text", text: "a different text" }) }),
      ({ content }) => Object.defineProperty(content, "toJSON", { value: () => [] }),
      ({ message }) => Object.defineProperty(message, "toJSON", { value: () => ({ role: "user" }) }),
      ({ message }) => Object.setPrototypeOf(message, { inherited: "enumerable, so not plain any more" }),
      ({ block }) => Object.defineProperty(block, "text", { get: () => "a getter's longer text", enumerable: true }),
    ];
    for (const change of changes) {
      const parts = remembered("Available tools:\n- a");
      const request = { messages: [parts.message, user], tools: [tool(2)] };
      expect(requestJsonBytes(request)).toBe(whole(request));
      change(parts);
      expect(requestJsonBytes(request)).toBe(whole(request));
    }
  });

  it("is not used when it is not first, or when the messages list is not a plain array", () => {
    const { message } = remembered("Available tools:\n- a");
    const second = { messages: [user, message], tools: [] };
    expect(requestJsonBytes(second)).toBe(whole(second));
    const withToJSON = { messages: Object.assign([message], { toJSON: () => ["x"] }), tools: [] };
    expect(requestJsonBytes(withToJSON)).toBe(whole(withToJSON));
  });
});

describe("maxRequestBytes through an agent", () => {
  // A run whose requests add up to `bytes` fails at a limit one byte lower, naming the exact count,
  // and succeeds at exactly `bytes`.
  async function chargedExactly(agent: ReturnType<typeof createAgent>, bytes: number) {
    const over = await agent
      .createSession()
      .run("x", { limits: { maxRequestBytes: bytes - 1 } })
      .catch((e: any) => e.result ?? e);
    expect(over.limit).toEqual({ limit: "maxRequestBytes", maximum: bytes - 1, observed: bytes });
    expect((await agent.createSession().run("x", { limits: { maxRequestBytes: bytes } })).status).toBe("succeeded");
  }

  it("charges the Available tools message exactly, also when a provider changed it before a retry", async () => {
    // A retried attempt sends the same request object again: what the first attempt did to the
    // loop's message is what the second one is charged for (the limit counts every attempt).
    const sizes: number[] = [];
    const provider = {
      id: "mutating",
      async *generate(request: any) {
        sizes.push(whole(request));
        if (sizes.length % 2 === 1) {
          const block = request.messages[0].content[0];
          expect(block.text).toBe("Available tools:\n- a: reads a");
          block.text += " — and a much longer note, ünïcödé 😀";
          block.cache_control = { type: "ephemeral" };
          throw Object.assign(new Error("service temporarily unavailable"), { code: "503" });
        }
        yield providerDone();
      },
    };
    const tools: ToolDefinition[] = [{ name: "a", description: "reads a", parameters: { type: "object" }, execute: () => 1 }];
    const agent = createAgent({ model: { provider: "p", model: "m" }, provider, tools, retry: { baseDelayMs: 1, jitter: 0 } });
    expect((await agent.createSession().run("x")).status).toBe("succeeded");
    expect(sizes).toHaveLength(2);
    expect(sizes[1]).toBeGreaterThan(sizes[0]);
    await chargedExactly(agent, sizes[0] + sizes[1]);
  });

  it("charges each request's exact size, also after a tool's definition changes between runs", async () => {
    const sizes: number[] = [];
    const provider = {
      id: "recording",
      async *generate(request: unknown) {
        sizes.push(whole(request));
        yield providerDone();
      },
    };
    const a: ToolDefinition = { name: "a", description: "short", parameters: { type: "object" }, execute: () => 1 };
    const agent = createAgent({ model: { provider: "p", model: "m" }, provider, tools: [a] });
    const first = await agent.createSession().run("x");
    expect(first.status).toBe("succeeded");
    a.description = "a longer description, ünïcödé 😀, measured again";
    expect((await agent.createSession().run("x")).status).toBe("succeeded");
    expect(sizes[1]).toBeGreaterThan(sizes[0]);
    await chargedExactly(agent, sizes[1]);
  });
});
