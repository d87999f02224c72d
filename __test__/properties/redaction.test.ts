// "No secret substring ever appears in any event, row, error or validator message", over
// generated values: strings, keys, functions, own toJSON, getters (returning or throwing), Proxies,
// class instances, Maps, Sets and Errors, in a tool's arguments, its result, or what it throws.
import fc from "fast-check";
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { budget as propertyBudget } from "./budget.js";
import type { ToolCallRecord, ToolDefinition } from "../../index.js";

const require = createRequire(import.meta.url);
const { createJsonSchemaToolArgumentValidator, createMemoryRunLedger, createToolRegistry, dispatchToolCall }: typeof import("../../index.js") =
  require("../../index.js");

const budget = propertyBudget(250, 5_000);
const SECRET = "sk-live-9f8e7d6c";

class Account {
  constructor(public holder: unknown) {}
}

// A host value that carries the secret somewhere, built from a plain description so fast-check can
// shrink it (Proxies and getters cannot be compared or printed usefully).
type Shape =
  | { k: "str"; pre: string; post: string }
  | { k: "key"; inner: Shape }
  | { k: "arr"; items: Shape[] }
  | { k: "fn" }
  | { k: "toJSON"; inner: Shape }
  | { k: "getter"; inner: Shape }
  | { k: "throwingGetter" }
  | { k: "proxy"; inner: Shape }
  | { k: "instance"; inner: Shape }
  | { k: "map"; inner: Shape }
  | { k: "set"; inner: Shape }
  | { k: "error"; pre: string };

const shape: fc.Arbitrary<Shape> = fc.letrec<{ s: Shape }>((tie) => ({
  s: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.record({ k: fc.constant("str" as const), pre: fc.string({ maxLength: 4 }), post: fc.string({ maxLength: 4 }) }),
    fc.record({ k: fc.constant("key" as const), inner: tie("s") }),
    fc.record({ k: fc.constant("arr" as const), items: fc.array(tie("s"), { maxLength: 3 }) }),
    fc.constant({ k: "fn" as const }),
    fc.record({ k: fc.constant("toJSON" as const), inner: tie("s") }),
    fc.record({ k: fc.constant("getter" as const), inner: tie("s") }),
    fc.constant({ k: "throwingGetter" as const }),
    fc.record({ k: fc.constant("proxy" as const), inner: tie("s") }),
    fc.record({ k: fc.constant("instance" as const), inner: tie("s") }),
    fc.record({ k: fc.constant("map" as const), inner: tie("s") }),
    fc.record({ k: fc.constant("set" as const), inner: tie("s") }),
    fc.record({ k: fc.constant("error" as const), pre: fc.string({ maxLength: 4 }) }),
  ),
})).s;

function build(s: Shape): unknown {
  switch (s.k) {
    case "str":
      return `${s.pre}${SECRET}${s.post}`;
    case "key":
      return { [`k-${SECRET}`]: build(s.inner) };
    case "arr":
      return [SECRET, ...s.items.map(build)];
    case "fn": {
      const f = () => SECRET;
      (f as any).secret = SECRET;
      return { f };
    }
    case "toJSON": {
      const inner = build(s.inner);
      return { account: { toJSON: () => inner } };
    }
    case "getter": {
      const inner = build(s.inner);
      return Object.defineProperty({}, "value", { enumerable: true, get: () => inner });
    }
    case "throwingGetter":
      return Object.defineProperty({}, "value", {
        enumerable: true,
        get() {
          throw new Error(`cannot read ${SECRET}`);
        },
      });
    case "proxy":
      return new Proxy({ inner: build(s.inner) }, {});
    case "instance":
      return new Account(build(s.inner));
    case "map":
      return new Map([[SECRET, build(s.inner)]]);
    case "set":
      return new Set([build(s.inner)]);
    case "error":
      return new Error(`${s.pre}${SECRET}`);
  }
}

const where = fc.constantFrom("result", "throw", "reject", "arguments", "invalid-arguments");

describe("secrets never leak", () => {
  it("no event, row, result, error or validator message holds the secret", async () => {
    const validate = createJsonSchemaToolArgumentValidator();
    await fc.assert(
      fc.asyncProperty(shape, where, async (s, place) => {
        const events: unknown[] = [];
        const rows: ToolCallRecord[] = [];
        const memory = createMemoryRunLedger();
        const value = build(s);
        const tool: ToolDefinition = {
          name: "t",
          // "invalid-arguments": a schema the arguments fail, so the validator quotes them.
          parameters: place === "invalid-arguments" ? { type: "object", properties: { v: { type: "number" } }, required: ["v", "w"] } : undefined,
          execute(_args, c) {
            if (place === "throw") throw Object.assign(new Error(`failed with ${SECRET}`), { detail: value });
            if (place === "reject") return Promise.reject(value);
            return { toolCallId: c.toolCallId, name: "t", value: (place === "result" ? value : 1) as any };
          },
        };
        const args = place === "arguments" || place === "invalid-arguments" ? { v: value, s: SECRET } : {};
        const result = await dispatchToolCall({
          call: { type: "tool_call", id: "call_1", name: "t", arguments: args as any },
          registry: createToolRegistry([tool]),
          context: { sessionId: "s", runId: "r", toolCallId: "x" },
          emit: (e) => void events.push(e),
          ledger: {
            appendToolCall(r: ToolCallRecord) {
              rows.push(r);
              memory.appendToolCall(r);
            },
          },
          validate,
          secrets: [SECRET],
        } as any).then(
          (r) => r,
          (e) => ({ thrown: e instanceof Error ? { name: e.name, message: e.message } : e }),
        );
        const seen = JSON.stringify({ result, events, rows, stored: memory.list() }, (_k, v) => (typeof v === "bigint" ? String(v) : v));
        expect(seen).not.toContain(SECRET);
        expect(rows.filter((r) => r.status !== "started")).toHaveLength(1);
      }),
      budget,
    );
  });
});
