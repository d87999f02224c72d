// What validation judges is what `execute` receives: arguments that are not plain JSON data (a
// toJSON method, an accessor, a non-enumerable property, a Proxy, a class instance) are refused by
// both of the package's validators, cold and warm, whether they came as a host object or as provider
// text that host code changed in place before validation.
import { describe, expect, it } from "vitest";
import {
  createJsonSchemaArgumentValidator,
  createJsonSchemaToolArgumentValidator,
  createMiddlewareRegistry,
  createToolParameterValidator,
  createToolRegistry,
  dispatchToolCall,
  toolCallFromArgumentsText,
  type ToolValidator,
} from "../index.js";

const schema = {
  type: "object",
  properties: { amount: { type: "number", maximum: 5 }, note: { type: "string" }, items: { type: "array", items: { type: "object", properties: { n: { type: "number", maximum: 5 } } } } },
  required: ["amount"],
  additionalProperties: false,
};

const validators: [string, () => ToolValidator][] = [
  ["createJsonSchemaToolArgumentValidator", () => createJsonSchemaToolArgumentValidator()],
  ["createToolParameterValidator(createJsonSchemaArgumentValidator())", () => createToolParameterValidator(createJsonSchemaArgumentValidator())],
];

class Amount {
  amount = 999;
}

// Each case: arguments whose plain reading the schema refuses, dressed so that JSON text (or a
// careless read) would see something valid. `why` is what the refusal must say.
const hostile: [string, () => Record<string, unknown>, RegExp][] = [
  ["an own toJSON", () => ({ amount: 999, toJSON: () => ({ amount: 1 }) }), /toJSON method is not plain JSON/],
  ["a nested toJSON", () => ({ amount: 1, items: [{ n: 999, toJSON: () => ({ n: 1 }) }] }), /\/items\/0.*toJSON method/],
  ["a toJSON on an array", () => ({ amount: 1, items: Object.assign([{ n: 999 }], { toJSON: () => [] }) }), /an array with a toJSON method/],
  [
    "a stateful getter",
    () => {
      let reads = 0;
      return Object.defineProperty({}, "amount", { enumerable: true, get: () => (++reads <= 1 ? 1 : 999) });
    },
    /accessor property \("amount"\)/,
  ],
  ["a non-enumerable property", () => Object.defineProperty({ note: "x" }, "amount", { value: 999, enumerable: false }), /non-enumerable property \("amount"\)/],
  [
    "a Proxy that hides a key from JSON text",
    () =>
      new Proxy({ amount: 999 } as Record<string, unknown>, {
        ownKeys: () => [],
        get: (t, k) => (k === "toJSON" ? undefined : t[k as string]),
      }),
    /a Proxy is not plain JSON/,
  ],
  ["a nested Proxy", () => ({ amount: 1, items: [new Proxy({ n: 999 }, {})] }), /a Proxy/],
  ["a nested class instance", () => ({ amount: 1, items: [new Amount()] }), /an instance of Amount/],
];

function setup(validate: ToolValidator) {
  const seen: unknown[] = [];
  const registry = createToolRegistry([
    {
      name: "pay",
      parameters: schema,
      execute: (args: Record<string, unknown>, ctx) => {
        // What the tool reads, read as a tool would.
        seen.push({ amount: args.amount, items: Array.isArray(args.items) ? args.items.map((i: { n?: unknown }) => i?.n) : undefined });
        return { toolCallId: ctx.toolCallId, name: "pay", value: "charged" };
      },
    },
  ]);
  const run = (args: unknown, extra: Record<string, unknown> = {}) =>
    dispatchToolCall({
      call: { type: "tool_call", id: "c1", name: "pay", arguments: args as Record<string, unknown> },
      registry,
      context: { sessionId: "s", runId: "r", toolCallId: "c1" },
      validate,
      ...extra,
    });
  return { seen, run };
}

// What the tool read must be what the schema accepts.
function assertValidReads(seen: unknown[]) {
  for (const s of seen as { amount: unknown; items?: unknown[] }[]) {
    expect(typeof s.amount === "number" && s.amount <= 5).toBe(true);
    for (const n of s.items ?? []) expect(n === undefined || (typeof n === "number" && n <= 5)).toBe(true);
  }
}

describe("validated arguments are the arguments that run", () => {
  for (const [vname, make] of validators) {
    for (const [what, args, why] of hostile) {
      for (const warmth of ["cold", "warm"] as const) {
        it(`${vname}, ${warmth}: ${what} is refused`, async () => {
          const { seen, run } = setup(make());
          if (warmth === "warm") {
            // Warm: the schema compiled, its acceptance plan built, plain arguments accepted in place.
            for (let i = 0; i < 3; i++) expect((await run({ amount: 2, items: [{ n: 1 }] })).error).toBeUndefined();
            seen.length = 0;
          }
          const r = await run(args());
          expect(r.error?.message ?? "").toMatch(why);
          expect(seen).toEqual([]);
          assertValidReads(seen);
        });
      }
    }

    for (const warmth of ["cold", "warm"] as const) {
      it(`${vname}, ${warmth}: provider arguments changed in place by a tool_call middleware are judged as changed`, async () => {
        const { seen, run } = setup(make());
        const middleware = createMiddlewareRegistry();
        middleware.use("tool_call", (call: { arguments: Record<string, unknown> }) => {
          call.arguments.amount = 5000; // the same object, changed after the provider's text was parsed
          return call;
        });
        if (warmth === "warm") for (let i = 0; i < 3; i++) await run(toolCallFromArgumentsText("c1", "pay", '{"amount":1}').arguments);
        seen.length = 0;
        const r = await run(toolCallFromArgumentsText("c1", "pay", '{"amount":1}').arguments, { middleware });
        expect(r.error?.message).toMatch(/amount/);
        expect(seen).toEqual([]);
      });

      it(`${vname}, ${warmth}: provider arguments changed in place by a tool_input guardrail are judged as changed`, async () => {
        const { seen, run } = setup(make());
        const guardrails = {
          toolInput: [
            {
              name: "meddler",
              stage: "tool_input" as const,
              evaluate(ctx: { value: { arguments: Record<string, unknown> } }) {
                ctx.value.arguments.amount = 5000;
                return { action: "allow" as const };
              },
            },
          ],
        };
        if (warmth === "warm") for (let i = 0; i < 3; i++) await run(toolCallFromArgumentsText("c1", "pay", '{"amount":1}').arguments);
        seen.length = 0;
        const r = await run(toolCallFromArgumentsText("c1", "pay", '{"amount":1}').arguments, { guardrails });
        expect(r.error?.message).toMatch(/amount/);
        expect(seen).toEqual([]);
      });

      it(`${vname}, ${warmth}: plain provider and host arguments still run, the very object handed over`, async () => {
        const validate = make();
        let got: unknown;
        const registry = createToolRegistry([{ name: "pay", parameters: schema, execute: (a, ctx) => ((got = a), { toolCallId: ctx.toolCallId, name: "pay", value: 1 }) }]);
        const go = (args: Record<string, unknown>) =>
          dispatchToolCall({ call: { type: "tool_call", id: "c1", name: "pay", arguments: args }, registry, context: { sessionId: "s", runId: "r", toolCallId: "c1" }, validate });
        if (warmth === "warm") for (let i = 0; i < 3; i++) await go({ amount: 1 });
        const text = toolCallFromArgumentsText("c1", "pay", '{"amount":2,"items":[{"n":3}]}').arguments;
        expect((await go(text)).error).toBeUndefined();
        expect(got).toBe(text);
        const host = { amount: 3, note: "n", items: [] };
        expect((await go(host)).error).toBeUndefined();
        expect(got).toBe(host);
      });
    }
  }

  it("the refusal is validation_failed and names the path and why", async () => {
    const { run } = setup(createJsonSchemaToolArgumentValidator());
    const r = await run({ amount: 1, items: [{ n: 2, toJSON: () => ({}) }] });
    expect(r.error?.message).toBe("/items/0: an object with a toJSON method is not plain JSON");
  });
});
