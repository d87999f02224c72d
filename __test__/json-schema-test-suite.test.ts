// The official JSON-Schema-Test-Suite (fixtures/json-schema-test-suite: drafts 2020-12, 2019-09, 07, 06
// and 04, each read by its own rules; required tests, optional/ counted apart) on both validators, on the object path and, for object
// instances, the provider text path, each cold and warm. Every required test passes except the
// refusals by design listed in REFUSALS, each with its reason; the pass rates are in docs/validation.md.
import { readFileSync, readdirSync } from "node:fs";
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";

const require = createRequire(import.meta.url);
const {
  createToolParameterValidator,
  createJsonSchemaArgumentValidator,
  createJsonSchemaToolArgumentValidator,
  toolCallFromArgumentsText,
} = require("../index.js");

const root = new URL("../fixtures/json-schema-test-suite/tests/", import.meta.url);
type Case = { description: string; data: unknown; valid: boolean };
type Group = { description: string; schema: unknown; tests: Case[] };

/**
 * The exceptions, in one place, each with its reason (docs/validation.md lists the same). A case may
 * only be refused (a schema or argument error instead of a verdict) with one of these messages; a
 * wrong verdict is never excused, except the one documented difference in DIFFERENCES.
 */
const REFUSALS: { message: RegExp; reason: string }[] = [
  {
    message: /is not a local reference \(remote \$ref is not allowed\)/,
    reason: "only fragment-local $ref: remote, relative and $id-based references are refused, nothing is fetched",
  },
  {
    message: /forbidden (JSON key|property key) "(__proto__|constructor|prototype)"/,
    reason: "__proto__, constructor and prototype keys are refused in schemas and arguments (prototype pollution)",
  },
  {
    message: /names an unsupported dialect/,
    reason: "only the dialects 2020-12, 2019-09, 07, 06 and 04 (no custom meta-schemas, which would need a fetch)",
  },
];
/** Verdicts that differ by design: `file/group description/test description` prefixes and why. */
const DIFFERENCES: { test: RegExp; reason: string }[] = [
  {
    test: /^format \/ .* \/ invalid .* string is only an annotation by default$/,
    reason: "formats are asserted by default (a tool argument in a known format is checked); the suite's 2020-12 default is annotation only",
  },
];

function load(dir: string): [string, Group[]][] {
  const url = new URL(`${dir}/`, root);
  return readdirSync(url)
    .filter((f) => f.endsWith(".json"))
    .sort()
    .map((f) => [f.replace(/\.json$/, ""), JSON.parse(readFileSync(new URL(f, url), "utf8"))]);
}

const dialects: Record<string, string> = {
  "draft2020-12": "https://json-schema.org/draft/2020-12/schema",
  "draft2019-09": "https://json-schema.org/draft/2019-09/schema",
  draft7: "http://json-schema.org/draft-07/schema#",
  draft6: "http://json-schema.org/draft-06/schema#",
  draft4: "http://json-schema.org/draft-04/schema#",
};

type Outcome = { pass: number; fail: string[]; refused: number; byReason: number[]; differ: number; total: number };

function run(dir: string): Outcome {
  const out: Outcome = { pass: 0, fail: [], refused: 0, byReason: REFUSALS.map(() => 0), differ: 0, total: 0 };
  const dialect = dialects[dir.split("/")[0]];
  const validators: [string, (tool: any, args: unknown) => unknown][] = [
    ["tool", createJsonSchemaToolArgumentValidator()],
    ["adapter", createToolParameterValidator(createJsonSchemaArgumentValidator())],
  ];
  for (const [file, groups] of load(dir)) {
    for (const group of groups) {
      // The suite's harness contract: a schema without `$schema` is read in the draft under test.
      const schema =
        typeof group.schema === "object" && group.schema !== null && !("$schema" in group.schema)
          ? { $schema: dialect, ...group.schema }
          : group.schema;
      const tool = { name: "t", parameters: schema };
      for (const test of group.tests) {
        out.total++;
        const verdicts: string[] = [];
        for (const [label, validate] of validators) {
          const inputs: [string, () => unknown][] = [["object", () => test.data]];
          if (typeof test.data === "object" && test.data !== null && !Array.isArray(test.data)) {
            inputs.push(["text", () => toolCallFromArgumentsText("c", "t", JSON.stringify(test.data)).arguments]);
          }
          for (const [path, args] of inputs) {
            for (const temp of ["cold", "warm"]) {
              const m = validate(tool, args());
              const refused = typeof m === "string" && /^(schema |Tool t arguments could not)|forbidden property key/.test(m);
              const verdict = refused ? "refused" : m === undefined ? "valid" : "invalid";
              verdicts.push(`${label}/${path}/${temp}:${verdict}${refused ? ` (${m})` : ""}`);
            }
          }
        }
        const expected = test.valid ? "valid" : "invalid";
        const wrong = verdicts.filter((v) => !v.includes(`:${expected}`));
        const name = `${file} / ${group.description} / ${test.description}`;
        if (wrong.length === 0) out.pass++;
        else if (wrong.every((v) => v.includes(":refused") && REFUSALS.some((r) => r.message.test(v)))) {
          out.refused++;
          out.byReason[REFUSALS.findIndex((r) => r.message.test(wrong[0]))]++;
        }
        else if (DIFFERENCES.some((d) => d.test.test(name))) out.differ++;
        else out.fail.push(`${name}: ${wrong.slice(0, 2).join("; ")}`);
      }
    }
  }
  return out;
}

for (const draft of Object.keys(dialects)) {
  describe(`JSON-Schema-Test-Suite ${draft}`, () => {
    it("every required test passes, except the refusals by design", () => {
      const r = run(draft);
      console.log(
        `${draft} required: ${r.pass}/${r.total} pass (${((100 * r.pass) / r.total).toFixed(1)}%), ${r.refused} refused by design (${r.byReason.join(" / ")}), ${r.differ} differ by design, ${r.fail.length} fail`,
      );
      expect(r.fail).toEqual([]);
      expect(r.pass + r.refused + r.differ).toBe(r.total);
      // The dialect is read, not refused: only the suite's few cross-draft schemas (a `$schema` of
      // another draft, or a custom meta-schema) may name a dialect this validator does not take.
      expect(r.byReason[2]).toBeLessThan(r.total / 50);
      expect(r.pass / r.total).toBeGreaterThan(0.85);
    });
    it("optional tests, counted apart", () => {
      const r = run(`${draft}/optional`);
      const f = run(`${draft}/optional/format`);
      console.log(`${draft} optional: ${r.pass}/${r.total} pass; optional/format: ${f.pass}/${f.total} pass`);
      expect(r.total + f.total).toBeGreaterThan(0);
    });
  });
}
