// A warm schema takes the fast path (arguments parsed into a flat tape, no Value tree); a cold one the
// Value path. Over generated schemas and arguments, both must give the same verdict and the same
// messages: the fast path may only ever say "valid" where the Value path does.
import fc from "fast-check";
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { budget as propertyBudget } from "./budget.js";

const require = createRequire(import.meta.url);
const { createJsonSchemaToolArgumentValidator }: typeof import("../../index.js") = require("../../index.js");

const budget = propertyBudget(300, 6_000);

const leaf = fc.oneof(
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(9007199254740993, 2 ** 53, 1.0, -0, 0.1),
  fc.string({ maxLength: 6 }),
  fc.constantFrom("😀", "a\u0000b", "é", "\ud800"),
  fc.boolean(),
  fc.constant(null),
);
const value = fc.letrec((tie) => ({
  v: fc.oneof({ depthSize: "small" }, leaf, fc.array(tie("v"), { maxLength: 4 }), fc.dictionary(fc.constantFrom("a", "b", "c", "__proto__", "x y"), tie("v"), { maxKeys: 3 })),
})).v;

const schema = fc.letrec((tie) => ({
  s: fc.oneof(
    { depthSize: "small" },
    fc.record(
      {
        type: fc.constantFrom("integer", "number", "string", "boolean", "null", "array", "object"),
        minimum: fc.integer({ min: -5, max: 5 }),
        maximum: fc.double({ min: -10, max: 10, noNaN: true }),
        multipleOf: fc.constantFrom(1, 2, 0.5),
        maxLength: fc.integer({ min: 0, max: 4 }),
        minLength: fc.integer({ min: 0, max: 2 }),
        enum: fc.array(leaf, { minLength: 1, maxLength: 3 }),
        const: leaf,
        uniqueItems: fc.boolean(),
        maxItems: fc.integer({ min: 0, max: 3 }),
        pattern: fc.constantFrom("^a", "b$", "[0-9]"),
        format: fc.constantFrom("date", "email", "uuid"),
      },
      { requiredKeys: [] },
    ),
    fc.record(
      {
        type: fc.constant("object"),
        properties: fc.dictionary(fc.constantFrom("a", "b", "c"), tie("s"), { maxKeys: 3 }),
        required: fc.subarray(["a", "b", "c"]),
        additionalProperties: fc.oneof(fc.boolean(), tie("s")),
        propertyNames: fc.constant({ maxLength: 1 }),
      },
      { requiredKeys: ["type"] },
    ),
    fc.record({ type: fc.constant("array"), items: tie("s"), contains: tie("s") }, { requiredKeys: ["type"] }),
    fc.record({ anyOf: fc.array(tie("s"), { minLength: 1, maxLength: 2 }) }),
    fc.record({ not: tie("s") }),
  ),
})).s;

describe("warm validation", () => {
  it("gives the cold verdict and messages", () => {
    fc.assert(
      fc.property(schema, fc.oneof(value, fc.dictionary(fc.constantFrom("a", "b", "c"), value, { maxKeys: 3 })), (s, args) => {
        const tool = { name: "t", parameters: { type: "object", properties: { v: s }, additionalProperties: s } };
        const wrapped = { v: args };
        const cold = createJsonSchemaToolArgumentValidator()(tool, wrapped, {});
        const warm = createJsonSchemaToolArgumentValidator();
        for (let i = 0; i < 3; i++) expect(warm(tool, wrapped, {})).toEqual(cold);
      }),
      budget,
    );
  });
});
