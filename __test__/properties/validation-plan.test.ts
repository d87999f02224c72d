// A warm schema made only of plain keywords is first checked by its acceptance plan in JS, on the
// live object (lib/validation-plan.js); only what the plan is unsure of is serialized and validated
// in Rust. Over generated plan-able schemas and hostile argument objects (values JSON.stringify
// changes, drops or refuses; lengths and depths at the limits; keys Rust refuses), the warm verdict
// must equal the cold one — the plan may only ever accept what Rust accepts — and the plan must
// actually accept a good share of the valid ones, or it would be dead weight.
import fc from "fast-check";
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { budget as propertyBudget } from "./budget.js";

const require = createRequire(import.meta.url);
const { createJsonSchemaToolArgumentValidator }: typeof import("../../index.js") = require("../../index.js");
const binding = require("../../binding.js");
const { acceptorOf } = require("../../lib/validation-plan.js");

const budget = propertyBudget(400, 8_000);
const LIMITS = { maxDepth: 5, maxStringLength: 8, maxArrayLength: 4, maxProperties: 3 };

class Point {
  x = 1;
}
const throwing = () =>
  Object.defineProperty({}, "a", {
    enumerable: true,
    get() {
      throw new Error("getter");
    },
  });
const hidden = () => Object.defineProperty({ b: 1 }, "a", { enumerable: false, value: "x" });

const leaf = fc.oneof(
  fc.integer({ min: -4, max: 4 }),
  fc.double({ min: -6, max: 6, noNaN: true }),
  fc.constantFrom(9007199254740993, 2 ** 53, 1e21, -0, 0.5, NaN, Infinity, -Infinity),
  fc.string({ maxLength: 10 }),
  fc.constantFrom("😀😀", "😀😀😀😀😀", "a\u0000b", "é", "\ud800", "\udc00x", "123456789", "12345678"),
  fc.boolean(),
  fc.constantFrom(null, undefined),
  fc.constantFrom("open", "closed", 1, 2, true),
);
const hostile = fc.constantFrom<() => unknown>(
  () => new Date(0),
  () => new Map([["a", 1]]),
  () => new Point(),
  () => Object.create(null),
  () => Object.assign(Object.create(null), { a: 1 }),
  () => JSON.parse('{"__proto__": 1}'),
  () => ({ constructor: 1 }),
  () => ({ prototype: "x" }),
  () => ({ "\u0000prism:nonjson": "Map" }),
  () => ({ "\ud800": 1 }),
  () => ({ a: undefined }),
  () => [1, , 3],
  () => () => 1,
  () => Symbol("s"),
  () => 10n,
  () => new String("s"),
  throwing,
  hidden,
  () => ({ toJSON: () => "x" }),
  () => new Proxy({ a: 1 }, {}),
);
const value = fc.letrec((tie) => ({
  v: fc.oneof(
    { depthSize: "small" },
    leaf,
    hostile.map((make) => make()),
    fc.array(tie("v"), { maxLength: 6 }),
    fc.dictionary(fc.constantFrom("a", "b", "c", "d", "x y"), tie("v"), { maxKeys: 5 }),
  ),
})).v;

// Schemas from the keywords a plan restates (and annotations it ignores).
const schema = fc.letrec((tie) => ({
  s: fc.oneof(
    { depthSize: "small" },
    fc.record(
      {
        type: fc.oneof(
          fc.constantFrom("integer", "number", "string", "boolean", "null", "array", "object"),
          fc.subarray(["integer", "number", "string", "null", "object"], { minLength: 1 }),
        ),
        minimum: fc.integer({ min: -5, max: 5 }),
        maximum: fc.double({ min: -10, max: 10, noNaN: true }),
        exclusiveMinimum: fc.constantFrom(-1, 0, 0.5),
        exclusiveMaximum: fc.constantFrom(1, 2, 1e21),
        maxLength: fc.integer({ min: 0, max: 5 }),
        minLength: fc.integer({ min: 0, max: 3 }),
        enum: fc.array(fc.constantFrom("open", "closed", 1, 2, -0, true, null, "😀😀"), { minLength: 1, maxLength: 3 }),
        const: fc.constantFrom("open", 1, null),
        minItems: fc.integer({ min: 0, max: 2 }),
        maxItems: fc.integer({ min: 0, max: 3 }),
        uniqueItems: fc.constant(false),
        description: fc.constant("annotation"),
        default: fc.constant(1),
      },
      { requiredKeys: [] },
    ),
    fc.record(
      {
        type: fc.constant("object"),
        properties: fc.dictionary(fc.constantFrom("a", "b", "c"), tie("s"), { maxKeys: 3 }),
        required: fc.subarray(["a", "b", "c", "d"]),
        additionalProperties: fc.oneof(fc.boolean(), tie("s")),
        title: fc.constant("t"),
      },
      { requiredKeys: ["type"] },
    ),
    fc.record({ type: fc.constant("array"), items: fc.oneof(tie("s"), fc.constant(true)), maxItems: fc.integer({ min: 0, max: 5 }) }, { requiredKeys: ["type"] }),
    fc.constant(true),
  ),
})).s;

/** Values shaped by a schema: mostly what it asks for, at and just past each bound, sometimes anything. */
function valueFor(s: any, depth = 0): fc.Arbitrary<unknown> {
  if (s === true || s === undefined || depth > 6) return value;
  const near = (n: number | undefined, fallback: number) => (n === undefined ? fallback : n);
  const shaped: fc.Arbitrary<unknown>[] = [];
  if (Array.isArray(s.enum)) shaped.push(fc.constantFrom(...s.enum));
  if ("const" in s) shaped.push(fc.constant(s.const));
  const types: string[] = s.type === undefined ? ["string", "number", "object"] : [s.type].flat();
  for (const t of types) {
    if (t === "string") {
      const hi = near(s.maxLength, 6);
      const lo = Math.min(near(s.minLength, 0), hi);
      shaped.push(
        fc.string({ minLength: Math.max(0, lo - 1), maxLength: hi + 1 }),
        fc.integer({ min: Math.max(0, lo - 1), max: hi + 1 }).chain((n) => fc.constantFrom("😀".repeat(n), "é".repeat(n), "\ud800" + "a".repeat(n))),
      );
    } else if (t === "number" || t === "integer") {
      const bounds = [s.minimum, s.maximum, s.exclusiveMinimum, s.exclusiveMaximum].filter((b) => b !== undefined);
      shaped.push(
        fc.integer({ min: -6, max: 6 }),
        fc.double({ min: -6, max: 6, noNaN: true }),
        ...bounds.map((b: number) => fc.constantFrom(b, b + 1, b - 1, b + 0.5, b - 1e-9)),
      );
    } else if (t === "boolean") shaped.push(fc.boolean());
    else if (t === "null") shaped.push(fc.constant(null));
    else if (t === "array") {
      shaped.push(fc.array(valueFor(s.items, depth + 1), { minLength: Math.max(0, Math.min(near(s.minItems, 0), near(s.maxItems, 4)) - 1), maxLength: near(s.maxItems, 4) + 1 }));
    } else if (t === "object") {
      const props: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [k, sub] of Object.entries(s.properties ?? {})) props[k] = valueFor(sub, depth + 1);
      for (const k of s.required ?? []) props[k] ??= value;
      const open = s.additionalProperties === undefined || s.additionalProperties === true || s.additionalProperties === false;
      const extra = open ? fc.oneof({ weight: 3, arbitrary: fc.constantFrom(1, "a", null, true) }, { weight: 1, arbitrary: value }) : valueFor(s.additionalProperties, depth + 1);
      shaped.push(
        fc.tuple(fc.record(props, { requiredKeys: [] }), fc.dictionary(fc.constantFrom("d", "x y", "e", "__proto__", "constructor", "prototype", "\u0000prism:nonjson"), extra, { maxKeys: 2 }), fc.boolean()).map(([own, more, both]) => (both ? { ...own, ...more } : own)),
      );
    }
  }
  return fc.oneof({ weight: 6, arbitrary: fc.oneof(...shaped) }, { weight: 1, arbitrary: value });
}

describe("acceptance plan", () => {
  it("never accepts what Rust refuses, and accepts valid plain objects", () => {
    let planned = 0;
    let accepted = 0;
    let validCold = 0;
    fc.assert(
      fc.property(schema.chain((s) => fc.tuple(fc.constant(s), valueFor(s))), ([s, args]) => {
        const tool = { name: "t", parameters: { type: "object", properties: { v: s }, additionalProperties: s } };
        const wrapped = { v: args };
        const cold = createJsonSchemaToolArgumentValidator(LIMITS)({ ...tool }, wrapped, {});
        const warm = createJsonSchemaToolArgumentValidator(LIMITS);
        for (let i = 0; i < 3; i++) expect(warm(tool, wrapped, {})).toEqual(cold);
        if (cold === undefined) validCold++;
        // The same decision straight from the plan, to see it is exercised.
        const engine = binding.jsonSchemaEngineCreate(JSON.stringify(LIMITS));
        const plan = binding.jsonSchemaAcceptancePlan(engine, binding.jsonSchemaSchemaId(engine, JSON.stringify(tool.parameters)));
        if (typeof plan === "string") {
          planned++;
          const accept = acceptorOf(plan);
          if (accept(wrapped)) {
            accepted++;
            expect(cold).toBeUndefined();
          }
        }
      }),
      budget,
    );
    expect(planned).toBeGreaterThan(0);
    // Valid arguments are a minority of generated cases; the plan must accept a real share of them.
    expect(accepted).toBeGreaterThan(validCold / 2);
  });
});
