// Properties of provider argument text: what toolCallFromArgumentsText gives equals JSON.parse,
// numbers included; deltas split anywhere rebuild the same call; and the validator judges the very
// value JSON.parse gives the tool (integers past 2^53, long decimals).
import fc from "fast-check";
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { budget as propertyBudget } from "./budget.js";

const require = createRequire(import.meta.url);
const { toolCallFromArgumentsText, reconstructToolCallDeltas, createJsonSchemaToolArgumentValidator }: typeof import("../../index.js") =
  require("../../index.js");

// Bounded: each property stops at numRuns or its time budget, whichever comes first.
const budget = propertyBudget(400, 3_000);

// Number literals as providers write them: huge integers, long decimals, exponents, negative zero.
const numberText = fc.oneof(
  fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }).map(String),
  fc.bigInt({ min: 2n ** 53n - 4n, max: 2n ** 53n + 64n }).map(String),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((d) => JSON.stringify(d)),
  fc
    .tuple(fc.boolean(), fc.stringMatching(/^[1-9][0-9]{0,24}$/), fc.stringMatching(/^[0-9]{1,24}$/), fc.integer({ min: -320, max: 300 }))
    .map(([neg, i, f, e]) => `${neg ? "-" : ""}${i}.${f}e${e}`),
  fc.constantFrom("-0", "0", "1e21", "2.2250738585072011e-308", "9007199254740993", "1.7976931348623157e308"),
);

// An arguments object whose leaves are number literals or other JSON, as text.
const objectText = fc
  .dictionary(
    fc.string({ maxLength: 8 }).filter((k) => !["__proto__", "prototype", "constructor"].includes(k)),
    fc.oneof(numberText, fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v) ?? "null")),
    { maxKeys: 6 },
  )
  .map((d) => `{${Object.entries(d).map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(",")}}`);

describe("provider argument text", () => {
  it("toolCallFromArgumentsText gives JSON.parse's value, and only objects", () => {
    fc.assert(
      fc.property(fc.oneof(objectText, fc.string(), fc.jsonValue().map((v) => JSON.stringify(v) ?? "")), (text) => {
        const call = toolCallFromArgumentsText("c", "t", text);
        let parsed: unknown;
        try {
          parsed = text.trim() === "" ? {} : JSON.parse(text);
        } catch {
          parsed = undefined;
        }
        const isObject = typeof parsed === "object" && parsed !== null && !Array.isArray(parsed);
        if (isObject) {
          expect(call.argumentsError).toBeUndefined();
          expect(call.arguments).toStrictEqual(parsed);
        } else {
          expect(call.arguments).toEqual({});
          expect(call.argumentsError?.code).toBe("invalid_json_arguments");
          expect(call.argumentsError?.message).toMatch(/^(Invalid tool arguments JSON for tool t: |Tool arguments for tool t )/);
        }
      }),
      budget,
    );
  });

  it("the validator sees the number the tool receives (const and uniqueItems agree with JSON.parse)", () => {
    const validate = createJsonSchemaToolArgumentValidator();
    fc.assert(
      fc.property(numberText, numberText, (a, b) => {
        const call = toolCallFromArgumentsText("c", "t", `{"n":${a},"pair":[${a},${b}]}`);
        fc.pre(call.argumentsError === undefined);
        const args = call.arguments as { n: number; pair: [number, number] };
        fc.pre(Number.isFinite(args.n) && Number.isFinite(args.pair[1]));
        const tool = (parameters: object) => ({ name: "t", parameters, execute: () => undefined }) as any;
        // The value JSON.parse gave, as a schema constant, matches what Rust validated.
        expect(validate(tool({ properties: { n: { const: args.n } } }), args as any, {} as any)).toBeUndefined();
        const unique = validate(tool({ properties: { pair: { uniqueItems: true } } }), args as any, {} as any);
        expect(unique === undefined).toBe(!Object.is(args.pair[0], args.pair[1]) && args.pair[0] !== args.pair[1]);
      }),
      budget,
    );
  });

  it("deltas split anywhere rebuild the call toolCallFromArgumentsText gives", () => {
    fc.assert(
      fc.property(
        objectText,
        fc.array(fc.nat(), { maxLength: 12 }),
        fc.boolean(),
        (text, cuts, withIndex) => {
          const points = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((x, y) => x - y);
          const parts: string[] = [];
          let at = 0;
          for (const p of points) {
            parts.push(text.slice(at, p));
            at = p;
          }
          parts.push(text.slice(at));
          const events = parts.map((argumentsDelta, i) =>
            i === 0
              ? { type: "tool_call_delta", ...(withIndex ? { index: 0 } : {}), id: "call_1", name: "t", argumentsDelta }
              : { type: "tool_call_delta", ...(withIndex ? { index: 0 } : {}), argumentsDelta },
          );
          const calls = reconstructToolCallDeltas(events as any);
          expect(calls).toHaveLength(1);
          expect(calls[0]).toStrictEqual(toolCallFromArgumentsText("call_1", "t", text));
        },
      ),
      budget,
    );
  });

  it("interleaved calls by index rebuild each call", () => {
    fc.assert(
      fc.property(fc.array(objectText, { minLength: 1, maxLength: 4 }), fc.array(fc.nat(), { maxLength: 40 }), (texts, order) => {
        // Split each text in chunks of 3 and interleave the chunks in a generated order.
        const queues = texts.map((t) => t.match(/[\s\S]{1,3}/g) ?? []);
        const events: object[] = texts.map((_, i) => ({ type: "tool_call_delta", index: i, id: `call_${i}`, name: `t${i}` }));
        let k = 0;
        while (queues.some((q) => q.length > 0)) {
          const live = queues.map((q, i) => [q, i] as const).filter(([q]) => q.length > 0);
          const [q, i] = live[(order[k++ % Math.max(order.length, 1)] ?? 0) % live.length];
          events.push({ type: "tool_call_delta", index: i, argumentsDelta: q.shift() });
        }
        const calls = reconstructToolCallDeltas(events as any);
        expect(calls.map((c) => c.id)).toEqual(texts.map((_, i) => `call_${i}`));
        calls.forEach((c, i) => expect(c).toStrictEqual(toolCallFromArgumentsText(`call_${i}`, `t${i}`, texts[i])));
      }),
      budget,
    );
  });
});
