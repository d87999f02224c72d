// `pattern`, `patternProperties` and the `regex` format against JS `RegExp` with the `u` flag: the
// same verdict for every pattern of the corpus on every subject, on the object path and the provider
// text path, cold and warm, with both validators. A pattern JS refuses is refused as a schema error;
// the few JS accepts that the validator refuses by design are listed below, each with its reason.
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";

const require = createRequire(import.meta.url);
const {
  createToolParameterValidator,
  createJsonSchemaArgumentValidator,
  createJsonSchemaToolArgumentValidator,
  toolCallFromArgumentsText,
} = require("../index.js");

const patterns = [
  // The four cases of issue 27: Rust syntax, Unicode `\b`, `[^]`, named back-references.
  "(?i)abc", "\\bé", "[^]", "(?<n>a)\\k<n>",
  "^abc$", "abc", "^a*$", "^a+$", "a{2}", "^a{2,}$", "^a{1,2}$", "^a??$", "^(a|b)+$", "^(?:ab)+$",
  "\\d", "^\\d+$", "\\D", "\\w", "^\\w+$", "\\W", "\\s", "\\S", "^\\S*$", ".", "^.$", "^.+$", "^.*$",
  "[a-c]", "[^a-c]", "^[\\d-]+$", "^[\\w-]+$", "^[\\s\\S]$", "[]", "^[^]$", "^[^]*$", "\\b", "\\B", "\\bfoo\\b", "\\Bé", "é\\b",
  "^\\u{1F600}$", "\\uD83D\\uDE00", "^\\u00e9$", "\\x41", "\\cJ", "\\0", "\\/", "\\.", "\\$", "\\^", "\\[\\]", "^\\\\$",
  "\\p{Lu}", "^\\p{L}+$", "^\\p{Script=Greek}+$", "\\P{L}", "^[\\p{N}]+$", "^[^\\p{L}]$", "\\p{Ll}",
  "(?=a)", "(?!a)", "a(?=b)", "(?<=a)b", "(?<!a)b", "^(a)\\1$", "^(?<x>a|b)\\k<x>$", "\\1(a)", "^(a)?\\1b$", "^(?:a|b)*$",
  "$^", "^$", "a|", "|", "()", "(?:)", "^[-a]+$", "^[a-]+$", "^[a\\-z]+$", "^[\\^]$", "^[\\]]$", "^[\\b]$", "^\\t$", "^\\n$", "^[\\n\\r]$",
  "^-?\\d+(\\.\\d+)?$", "^[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\\.[A-Za-z]{2,}$", "^\\d{4}-\\d{2}-\\d{2}$", "^(https?|ftp)://[^\\s/$.?#].[^\\s]*$",
  "^[a-z]+(?:-[a-z]+)*$", "^x-", "^\\S+$", "^[^\\s@]+$", "^\\$[a-z]", "^(?!foo)", "ä", "^Σ$", "^[σΣ]$", "ǅ", "^\\s+$",
  // Refused by JS with the u flag.
  "\\k<n>", "a{,2}", "\\-", "{", "}", "]", "\\p{Foo}", "[z-a]", "(?P<n>a)", "\\A", "\\Z", "\\z", "(?<n>a)(?<n>b)", "[[:alpha:]]",
  "\\x{41}", "a**", "(?#c)", "\\e", "\\u{110000}", "(", ")", "[", "\\", "\\c1", "\\8", "(?<1>a)", "a{2,1}", "x*+", "\\h", "\\R", "\\Q.\\E", "(?s).", "(?m)^a",
];
const subjects = [
  "", "a", "A", "abc", "ABC", "aBc", "é", "aé", "é a", "foo bar", "foo", "foo_bar", "afoo", "x-1", "123", "-12.5", "٣", "\n", "\r", "\u2028", "\t", " ", "\u00a0", "\ufeff",
  "😀", "a😀b", "aa", "aaa", "ab", "ba", "abab", "b", "-", "[", "]", "^", "$", "/", "\\", "a.b", "a\nb", "\b", "k<n>", "0", "\u0000", "Σ", "σ", "ǅ", "ä",
  "a-b-c", "a--b", "2024-01-31", "user@example.com", "https://x.io/p", "$ref", "foobar", "bar", "\u000b", "\u000c", "Aa", "a b",
];

/** Valid in JS, refused by the validator by design (docs/validation.md, "Regular expressions"). */
const REFUSED_BY_DESIGN: Record<string, string> = {
  "(?:(a)|b)+\\1": "ECMAScript clears a group at each repetition; the matching engine keeps the last capture",
  "(a)+\\1": "the same: a back-reference to a group inside a repeated group",
  "(?<=(a))\\1": "a look-behind matches right to left in ECMAScript; its captures differ",
  "(?<=\\1(a))b": "the same, a back-reference inside a look-behind",
  "(?i:a)": "modifier groups (ES2025; refused by Node 20 itself, accepted by later Node versions)",
};
/** Back-references cannot be carried into `patternProperties` keys (they stay valid for `pattern`). */
const PATTERN_PROPERTIES_REFUSED = new Set(["(?<n>a)\\k<n>", "^(a)\\1$", "^(?<x>a|b)\\k<x>$", "\\1(a)", "^(a)?\\1b$"]);
/** Where V8 itself departs from ECMA-262: it tries an empty match between the two halves of a
 * surrogate pair (`/\B/u.exec("a😀b").index === 2`); the specification advances by code point. */
const V8_DEVIATIONS = new Set(["\\B a😀b"]);

function jsRegExp(p: string): RegExp | undefined {
  try {
    return new RegExp(p, "u");
  } catch {
    return undefined;
  }
}

type Check = (schema: object, args: Record<string, unknown>) => string | undefined;

/** Both validators, each on the object path and the provider text path; each call is made twice
 * (cold, then warm) and both answers must agree. */
function paths(): [string, Check][] {
  const tool = createJsonSchemaToolArgumentValidator();
  const adapter = createToolParameterValidator(createJsonSchemaArgumentValidator());
  const tools = new Map<string, { name: string; parameters: object }>();
  const toolFor = (schema: object) => {
    const key = JSON.stringify(schema);
    let t = tools.get(key);
    if (t === undefined) tools.set(key, (t = { name: "t", parameters: schema }));
    return t;
  };
  const viaText = (v: any) => (schema: object, args: Record<string, unknown>) =>
    v(toolFor(schema), toolCallFromArgumentsText("c", "t", JSON.stringify(args)).arguments);
  const viaObject = (v: any) => (schema: object, args: Record<string, unknown>) => v(toolFor(schema), args);
  const twice = (check: Check): Check => (schema, args) => {
    const cold = check(schema, args);
    const warm = check(schema, args);
    expect(warm).toBe(cold);
    return cold;
  };
  return [
    ["tool validator, object", twice(viaObject(tool))],
    ["tool validator, text", twice(viaText(tool))],
    ["adapter validator, object", twice(viaObject(adapter))],
    ["adapter validator, text", twice(viaText(adapter))],
  ];
}

describe("pattern follows JS RegExp with the u flag", () => {
  for (const [label, check] of paths()) {
    it(`every corpus pattern, every subject: ${label}`, () => {
      let compared = 0;
      for (const p of patterns) {
        const re = jsRegExp(p);
        const schema = { type: "object", properties: { s: { type: "string", pattern: p } } };
        if (re === undefined) {
          const m = check(schema, { s: "a" });
          expect(m, p).toMatch(/^schema keyword "pattern" at #\/properties\/s\/pattern has a pattern .* that is refused: it is not a valid ECMAScript regular expression with the u flag/);
          continue;
        }
        for (const s of subjects) {
          if (V8_DEVIATIONS.has(`${p} ${s}`)) continue;
          const m = check(schema, { s });
          if (re.test(s)) expect(m, `${p} on ${JSON.stringify(s)}`).toBeUndefined();
          else expect(m, `${p} on ${JSON.stringify(s)}`).toMatch(/^\/s: expected a string matching the pattern /);
          compared++;
        }
      }
      expect(compared).toBeGreaterThan(5000);
    });
  }

  it("patternProperties matches property names the same way (additionalProperties sees the same matches)", () => {
    const [, check] = paths()[1];
    for (const p of patterns) {
      const re = jsRegExp(p);
      const schema = { type: "object", patternProperties: { [p]: { type: "integer" } }, additionalProperties: { type: "string" } };
      if (re === undefined || PATTERN_PROPERTIES_REFUSED.has(p)) {
        expect(check(schema, {}), p).toMatch(/^schema keyword "patternProperties" at #\/patternProperties has a pattern .* that is refused: /);
        continue;
      }
      for (const s of subjects) {
        if (V8_DEVIATIONS.has(`${p} ${s}`)) continue;
        // An integer value passes only when the name matches; a string value only when it does not.
        expect(check(schema, { [s]: 1 }), `${p} on ${JSON.stringify(s)}`)[re.test(s) ? "toBeUndefined" : "toBeDefined"]();
        expect(check(schema, { [s]: "x" }), `${p} on ${JSON.stringify(s)}`)[re.test(s) ? "toBeDefined" : "toBeUndefined"]();
      }
    }
  });

  it("the regex format accepts exactly what RegExp(v, 'u') accepts, less the refusals by design", () => {
    const [, check] = paths()[0];
    const schema = { type: "object", properties: { r: { type: "string", format: "regex" } } };
    for (const p of [...patterns, ...Object.keys(REFUSED_BY_DESIGN)]) {
      const ok = jsRegExp(p) !== undefined && !(p in REFUSED_BY_DESIGN);
      const m = check(schema, { r: p });
      if (ok) expect(m, p).toBeUndefined();
      else expect(m, p).toMatch(/^\/r: expected a string in format "regex"/);
    }
  });

  it("patterns JS accepts but the validator refuses by design are refused with the reason", () => {
    const [, check] = paths()[0];
    for (const [p, why] of Object.entries(REFUSED_BY_DESIGN)) {
      const m = check({ properties: { s: { type: "string", pattern: p } } }, { s: "a" });
      expect(m, why).toMatch(/^schema keyword "pattern" at #\/properties\/s\/pattern has a pattern .* that is refused: it uses .*, which this validator does not support/);
    }
  });

  it("a catastrophic pattern is refused at the step limit, cold and warm, on both paths", () => {
    const long = "a".repeat(20_000) + "!";
    for (const [label, check] of paths()) {
      // Regular: the linear engine answers at once.
      expect(check({ properties: { s: { pattern: "^(a+)+$" } } }, { s: long }), label).toMatch(/expected a string matching the pattern/);
      // A look-around keeps the backtracking engine: it stops at the step limit.
      expect(check({ properties: { s: { pattern: "^(?:(?=a)a+)+$" } } }, { s: long }), label).toBe(
        "/s: the schema's pattern could not be evaluated on this string: it passed the regular-expression backtracking limit of 100000 steps",
      );
    }
  });
});
