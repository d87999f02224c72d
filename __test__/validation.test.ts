import { createServer } from "node:http";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";
import * as esm from "../index.mjs";
import * as subEsm from "../validation/json-schema.mjs";

const require = createRequire(import.meta.url);
const cjs = require("../index.js");
const subCjs = require("../validation/json-schema.js");
const binding = require("../binding.js");
const {
  createToolParameterValidator,
  createJsonSchemaArgumentValidator,
  createJsonSchemaToolArgumentValidator,
  toolCallFromArgumentsText,
} = cjs;

type Schema = Record<string, any>;
const github: { name: string; parameters: Schema }[] = JSON.parse(
  readFileSync(new URL("../fixtures/github-mcp-tools.json", import.meta.url), "utf8"),
);
const bfcl: { catalog: { name: string; parameters: Schema }[] } = JSON.parse(
  readFileSync(new URL("../fixtures/bfcl-tool-retrieval.json", import.meta.url), "utf8"),
);

const adapter = () => createJsonSchemaArgumentValidator();
const tool = (parameters?: unknown, name = "t") => ({ name, parameters, execute: () => ({}) });
const objectSchema = {
  type: "object",
  properties: { owner: { type: "string" }, n: { type: "integer", minimum: 1 }, state: { enum: ["open", "closed"] } },
  required: ["owner"],
  additionalProperties: false,
};

/** Arguments that satisfy a schema (required properties only), for the fixture schemas. */
function goodValue(s: Schema | undefined): unknown {
  if (!s || typeof s !== "object") return {};
  if (Array.isArray(s.enum)) return s.enum[0];
  if ("const" in s) return s.const;
  const alt = s.oneOf ?? s.anyOf;
  if (Array.isArray(alt)) return goodValue(alt[0]);
  const type = Array.isArray(s.type) ? s.type[0] : s.type;
  switch (type) {
    case "string":
      return "x".repeat(Math.max(1, s.minLength ?? 1));
    case "integer":
    case "number":
      return s.minimum ?? (s.exclusiveMinimum !== undefined ? s.exclusiveMinimum + 1 : 1);
    case "boolean":
      return true;
    case "null":
      return null;
    case "array":
      return Array.from({ length: s.minItems ?? 0 }, () => goodValue(s.items));
    default: {
      const out: Record<string, unknown> = {};
      for (const key of s.required ?? []) out[key] = goodValue(s.properties?.[key]);
      return out;
    }
  }
}

describe("exports", () => {
  it("come from the main entry and the validation/json-schema subpath, CJS and ESM alike", () => {
    for (const name of ["createJsonSchemaArgumentValidator", "createJsonSchemaToolArgumentValidator"]) {
      expect(typeof cjs[name]).toBe("function");
      expect(subCjs[name]).toBe(cjs[name]);
      expect((subEsm as any)[name]).toBe(cjs[name]);
      expect((esm as any)[name]).toBe(cjs[name]);
    }
    expect((esm as any).createToolParameterValidator).toBe(createToolParameterValidator);
    expect(require("prism-tools-native/validation/json-schema").createJsonSchemaArgumentValidator).toBe(
      createJsonSchemaArgumentValidator,
    );
  });
});

describe("options", () => {
  const caps: [string, number, number][] = [
    ["maxErrors", 8, 64],
    ["maxDepth", 64, 128],
    ["maxProperties", 1_000, 100_000],
    ["maxStringLength", 1_000_000, 8_388_608],
    ["maxArrayLength", 10_000, 100_000],
    ["maxSchemaBytes", 262_144, 1_048_576],
    ["maxSchemaDepth", 64, 128],
    ["maxSchemaProperties", 10_000, 100_000],
    ["maxSchemaRefs", 128, 1_024],
    ["maxSchemaKeywords", 10_000, 100_000],
    ["maxCompiledSchemas", 256, 1_024],
  ];
  it.each(caps)("%s accepts 1 and its cap, and throws RangeError naming itself and the cap past it", (name, _d, cap) => {
    expect(() => createJsonSchemaArgumentValidator({ [name]: 1 })).not.toThrow();
    expect(() => createJsonSchemaToolArgumentValidator({ [name]: cap })).not.toThrow();
    for (const bad of [cap + 1, 0, -1, 1.5, NaN, Infinity, "8", null]) {
      expect(() => createJsonSchemaArgumentValidator({ [name]: bad } as any)).toThrow(RangeError);
      expect(() => createJsonSchemaToolArgumentValidator({ [name]: bad } as any)).toThrow(
        `${name} must be a positive safe integer no greater than ${cap}`,
      );
    }
  });

  it("missingSchema is allow or reject", () => {
    expect(() => createJsonSchemaToolArgumentValidator({ missingSchema: "deny" as any })).toThrow(
      new RangeError('missingSchema must be "allow" or "reject"'),
    );
    expect(() => createToolParameterValidator(adapter(), { missingSchema: "x" as any })).toThrow(RangeError);
  });

  it("the defaults hold: maxErrors 8, maxArrayLength 10 000", () => {
    const many = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, 1]));
    const r = adapter().validate({ type: "object", additionalProperties: false }, many);
    expect(r.errors).toHaveLength(8);
    const r2 = adapter().validate({}, { a: new Array(10_001).fill(0) });
    expect(r2.errors![0]).toEqual({ path: "/a", message: "array exceeds maximum length 10000 (maxArrayLength; found 10001 items)" });
  });
});

describe("ToolValidator", () => {
  it("passes a tool without parameters under allow, refuses it under reject", () => {
    expect(createJsonSchemaToolArgumentValidator()(tool(), {})).toBeUndefined();
    expect(createJsonSchemaToolArgumentValidator({ missingSchema: "reject" })(tool(undefined, "get_me"), {})).toBe(
      "Tool get_me has no parameters schema",
    );
    expect(createToolParameterValidator(adapter(), { missingSchema: "reject" })(tool(undefined, "x"), {})).toBe(
      "Tool x has no parameters schema",
    );
    expect(createToolParameterValidator(adapter())(tool(), {})).toBeUndefined();
  });

  it("returns synchronously: undefined, or the issues joined as path: message", () => {
    for (const v of [createJsonSchemaToolArgumentValidator(), createToolParameterValidator(adapter())]) {
      const t = tool(objectSchema);
      expect(v(t, { owner: "o", n: 2 })).toBeUndefined();
      expect(v(t, { n: 0, state: "merged", extra: true })).toBe(
        '/n: expected a number >= 1, found integer 0; /state: expected one of "open", "closed", found string "merged"; /extra: property is not allowed by the schema (additionalProperties); /owner: required property is missing',
      );
    }
  });

  it("createToolParameterValidator wraps any adapter, sync or async", async () => {
    const sync = { validate: () => ({ ok: false, errors: [{ path: "/a", message: "bad" }, { message: "worse" }] }) };
    expect(createToolParameterValidator(sync)(tool({}), {})).toBe("/a: bad; worse");
    const async = { validate: async () => ({ ok: false, errors: [{ path: "/b", message: "no" }] }) };
    await expect(createToolParameterValidator(async as any)(tool({}), {})).resolves.toBe("/b: no");
    expect(createToolParameterValidator({ validate: () => ({ ok: true }) })(tool({}), {})).toBeUndefined();
  });

  it("notices a replaced parameters object and an evicted cache entry", () => {
    const v = createJsonSchemaToolArgumentValidator({ maxCompiledSchemas: 1 });
    const a = tool({ type: "object", required: ["a"] }, "a");
    const b = tool({ type: "object", required: ["b"] }, "b");
    for (let i = 0; i < 3; i++) {
      expect(v(a, { a: 1 })).toBeUndefined();
      expect(v(b, { a: 1 })).toBe("/b: required property is missing");
    }
    a.parameters = { type: "object", required: ["z"] };
    expect(v(a, { a: 1 })).toBe("/z: required property is missing");
  });
});

describe("adapter", () => {
  it("reports issues with a JSON Pointer and what was expected and found", () => {
    const r = adapter().validate(
      { type: "object", properties: { items: { type: "array", items: { type: "string", maxLength: 3 } } } },
      { items: ["ok", 7, "toolong"] },
    );
    expect(r).toEqual({
      ok: false,
      errors: [
        { path: "/items/1", message: "expected string, found integer 7" },
        { path: "/items/2", message: "expected at most 3 characters, found 7" },
      ],
    });
    expect(adapter().validate({ type: "object" }, { a: 1 })).toEqual({ ok: true });
  });

  it("keys the cache by content: equal schemas compile once, a mutated schema is noticed", () => {
    const engine = binding.jsonSchemaEngineCreate(undefined);
    const id = binding.jsonSchemaSchemaId(engine, JSON.stringify({ type: "string" }));
    expect(binding.jsonSchemaSchemaId(engine, JSON.stringify({ type: "string" }))).toBe(id);
    expect(binding.jsonSchemaCachedCount(engine)).toBe(1);
    const v = adapter();
    const schema: Schema = { type: "object", required: ["a"] };
    expect(v.validate(schema, { a: 1 }).ok).toBe(true);
    schema.required = ["b"];
    expect(v.validate(schema, { a: 1 }).errors).toEqual([{ path: "/b", message: "required property is missing" }]);
  });

  it("chooses the draft by $schema (2020-12 by default, 2019-09, 07, 06, 04) and refuses others", () => {
    const tuple = { items: [{ type: "string" }] };
    expect(adapter().validate({ $schema: "http://json-schema.org/draft-07/schema#", ...tuple }, ["a", 1]).ok).toBe(true);
    expect(adapter().validate({ $schema: "http://json-schema.org/draft-06/schema#", ...tuple }, ["a"]).ok).toBe(true);
    expect(adapter().validate({ $schema: "https://json-schema.org/draft/2019-09/schema", type: "string" }, 1).ok).toBe(false);
    expect(adapter().validate({ prefixItems: [{ type: "string" }] }, [1]).errors![0].path).toBe("/0");
    const r = adapter().validate(tuple, []);
    expect(r.errors![0].message).toMatch(/^schema keyword "items" at #\/items is invalid/);
    const draft4 = { $schema: "http://json-schema.org/draft-04/schema#", minimum: 1, exclusiveMinimum: true };
    expect(adapter().validate(draft4, 1).errors![0].message).toBe("expected a number > 1, found integer 1");
    expect(adapter().validate(draft4, 2).ok).toBe(true);
    expect(adapter().validate({ $schema: "http://json-schema.org/draft-03/schema#" }, {}).errors![0].message).toMatch(
      /unsupported dialect/,
    );
  });

  it("checks the schema against its meta-schema and names the keyword", () => {
    expect(adapter().validate({ type: "object", minimum: "one" }, {}).errors).toEqual([
      { message: 'schema keyword "minimum" at #/minimum is invalid: expected number, found string "one"' },
    ]);
  });
});

describe("fixtures", () => {
  it("compiles all 117 GitHub MCP schemas and accepts good arguments for each", () => {
    expect(github).toHaveLength(117);
    const v = createJsonSchemaToolArgumentValidator();
    const a = adapter();
    for (const t of github) {
      const args = goodValue(t.parameters);
      expect(v(t, args), t.name).toBeUndefined();
      expect(a.validate(t.parameters, args), t.name).toEqual({ ok: true });
      const text = toolCallFromArgumentsText("c", t.name, JSON.stringify(args));
      expect(v(t, text.arguments), t.name).toBeUndefined();
    }
  });

  it("refuses each of the 919 BFCL schemas with a clear message naming the keyword", () => {
    expect(bfcl.catalog).toHaveLength(919);
    const v = createJsonSchemaToolArgumentValidator();
    for (const f of bfcl.catalog) {
      const out = v(f, {});
      expect(out, f.name).toMatch(/^schema keyword "(type|[^"]+)" at #\S* /);
    }
    expect(v(bfcl.catalog[0], {})).toBe(
      'schema keyword "type" at #/type has the unknown type "dict": expected one of "array", "boolean", "integer", "null", "number", "object", "string"',
    );
  });
});

describe("hostile schemas", () => {
  const first = (schema: unknown, value: unknown = {}) => {
    const r = adapter().validate(schema, value);
    expect(r.ok).toBe(false);
    return r.errors![0].message;
  };

  it("keeps @arnilo/prism's words for each bound, which hosts match on, then names the option", () => {
    const with_ = (options: object, schema: unknown, value: unknown = {}) => {
      const r = createJsonSchemaArgumentValidator(options).validate(schema, value);
      expect(r.ok).toBe(false);
      return r.errors![0].message;
    };
    expect(first({ properties: { x: { $ref: "https://example.com/schema.json" } } })).toMatch(/remote \$ref/);
    expect(first(JSON.parse('{"type":"object","properties":{"__proto__":{"type":"object"}}}'))).toMatch(/forbidden JSON key/);
    expect(with_({ maxStringLength: 4 }, { type: "object" }, { text: "toolong" })).toBe(
      "string exceeds maximum length 4 (maxStringLength; found 7 characters)",
    );
    expect(with_({ maxArrayLength: 2 }, { type: "object" }, { a: [1, 2, 3] })).toBe("array exceeds maximum length 2 (maxArrayLength; found 3 items)");
    const deep = { type: "object", properties: { x: { type: "object", properties: { y: { type: "string" } } } } };
    expect(with_({ maxSchemaDepth: 2 }, deep)).toBe("schema exceeds maximum schema depth 2 (maxSchemaDepth)");
    expect(with_({ maxSchemaBytes: 32 }, { description: "x".repeat(64) })).toBe("schema exceeds maximum bytes 32 (maxSchemaBytes; found 82 bytes)");
    const refs = { allOf: [{ $ref: "#/$defs/x" }, { $ref: "#/$defs/x" }], $defs: { x: {} } };
    expect(with_({ maxSchemaRefs: 1 }, refs)).toBe("schema exceeds maximum refs 1 (maxSchemaRefs)");
    expect(with_({ maxDepth: 2 }, { type: "object" }, { a: { b: { c: 1 } } })).toBe("arguments exceed maximum depth 2 (maxDepth)");
  });

  it.each(["http://example.com/s.json", "https://example.com/s.json#/a", "file:///etc/passwd", "other.json#", "other.json#/x"])(
    "refuses the non-local $ref %s",
    (ref) => {
      expect(first({ $ref: ref })).toMatch(/is not a local reference \(remote \$ref is not allowed\): only fragment references \("#…"\) are allowed, nothing is fetched$/);
      expect(first({ properties: { a: { $ref: ref } } })).toMatch(/at #\/properties\/a is not a local reference/);
    },
  );

  it("never fetches anything, even through $id, $schema or nested refs", async () => {
    let requests = 0;
    const server = createServer((_req, res) => {
      requests++;
      res.end("{}");
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
    const url = `http://127.0.0.1:${(server.address() as any).port}`;
    try {
      first({ $ref: `${url}/s.json` });
      first({ $schema: `${url}/meta.json` });
      first({ $id: `${url}/base.json`, properties: { a: { $ref: "other.json" } } });
      adapter().validate({ $id: `${url}/base.json`, $defs: { x: { $id: "inner.json", $ref: "#" } } }, {});
    } finally {
      server.close();
    }
    expect(requests).toBe(0);
  });

  it("refuses a schema whose $id is no URI reference, whatever the arguments", () => {
    // Such a schema used to wait to compile when its plan restated it: valid arguments passed and
    // invalid ones met the compile error.
    const schema = { $id: "not a uri", type: "object", properties: { n: { type: "integer" } } };
    const validate = createJsonSchemaToolArgumentValidator();
    const t = { name: "t", parameters: schema, execute: () => undefined } as never;
    for (const args of [{ n: 1 }, { n: "x" }, { n: 1 }]) {
      expect(validate(t, args, {} as never)).toMatch(/Invalid URI reference 'not a uri'/);
    }
    expect(first(schema, { n: 1 })).toMatch(/Invalid URI reference/);
  });

  it("refuses $ref cycles that never reach the arguments", () => {
    expect(first({ $ref: "#" })).toBe("schema $ref cycle never reaches the arguments: # → #");
    expect(first({ $defs: { a: { $ref: "#/$defs/b" }, b: { anyOf: [{ $ref: "#/$defs/a" }] } }, $ref: "#/$defs/a" })).toMatch(/cycle/);
    // A recursive schema that goes down the arguments is fine.
    const tree = { type: "object", properties: { children: { type: "array", items: { $ref: "#" } } } };
    expect(adapter().validate(tree, { children: [{ children: [] }] })).toEqual({ ok: true });
  });

  it("refuses a JS object cycle", () => {
    const s: Schema = { type: "object" };
    s.properties = { self: s };
    expect(first(s)).toBe("schema contains a cycle, which is not plain JSON");
    expect(createJsonSchemaToolArgumentValidator()(tool(s), {})).toBe("schema contains a cycle, which is not plain JSON");
  });

  it.each(["__proto__", "prototype", "constructor"])("refuses the key %s anywhere in a schema", (key) => {
    const s = JSON.parse(`{"type":"object","properties":{"${key}":{"type":"string"}}}`);
    expect(first(s)).toBe(`schema uses forbidden JSON key "${key}" at #/properties/${key}`);
    expect(first(JSON.parse(`{"enum":[{"${key}":1}]}`))).toMatch(`forbidden JSON key "${key}"`);
  });

  it.each([NaN, Infinity, -Infinity])("refuses the number %s", (n) => {
    expect(first({ type: "number", maximum: n })).toBe(`schema value at #/maximum is not plain JSON: ${n}`);
  });

  it("refuses a schema over 1 MiB, deeper than 200, with 20 000 keywords or 2 000 refs", () => {
    expect(first({ description: "x".repeat(1_100_000) })).toMatch(/^schema exceeds maximum bytes 262144 \(maxSchemaBytes; found 1100\d{3} bytes\)$/);
    let deep: Schema = { type: "string" };
    for (let i = 0; i < 200; i++) deep = { properties: { a: deep } };
    expect(first(deep)).toBe("schema exceeds maximum schema depth 64 (maxSchemaDepth)");
    const keywords = Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`x-${i}`, 1]));
    const keywordsOnly = createJsonSchemaArgumentValidator({ maxSchemaProperties: 100_000 }).validate(keywords, {});
    expect(keywordsOnly.errors![0].message).toBe("schema exceeds maximum keywords 10000 (maxSchemaKeywords, keys of the schema's objects)");
    const props = Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`p${i}`, {}]));
    expect(first({ properties: props })).toBe("schema exceeds maximum properties 10000 (maxSchemaProperties, keys of the schema's objects)");
    // As @arnilo/prism counts: every key of every object, keywords and names alike (type, properties, x, y).
    const counted = (o: object) => createJsonSchemaArgumentValidator(o).validate({ type: "object", properties: { x: {}, y: {} } }, {}).ok;
    expect([counted({ maxSchemaProperties: 3 }), counted({ maxSchemaProperties: 4 })]).toEqual([false, true]);
    expect([counted({ maxSchemaKeywords: 3 }), counted({ maxSchemaKeywords: 4 })]).toEqual([false, true]);
    const refs = Array.from({ length: 2_000 }, () => ({ $ref: "#/$defs/a" }));
    expect(first({ $defs: { a: { type: "string" } }, anyOf: refs })).toBe("schema exceeds maximum refs 128 (maxSchemaRefs)");
  });

  it.each([["string"], [42], [null], [[{ type: "string" }]], [undefined]])("refuses the non-object schema %j", (s) => {
    expect(first(s)).toMatch(/^schema must be a JSON object or a boolean, found |is not plain JSON/);
  });

  it("accepts boolean schemas", () => {
    expect(adapter().validate(true, { a: 1 })).toEqual({ ok: true });
    expect(adapter().validate(false, 1).errors![0].message).toBe("no value is allowed here, found integer 1");
  });
});

describe("hostile arguments", () => {
  const v = createJsonSchemaToolArgumentValidator();
  const t = tool({ type: "object" });

  it("refuses depth 10 000, as an object and as provider text", () => {
    let deep: any = {};
    for (let i = 0; i < 10_000; i++) deep = { a: deep };
    expect(v(t, deep)).toMatch(/exceed maximum depth 64 \(maxDepth\)|nested too deep to serialize \(maxDepth 64/);
    const text = '{"a":'.repeat(10_000) + "1" + "}".repeat(10_000);
    const call = toolCallFromArgumentsText("c", "t", text);
    expect(call.argumentsError).toBeUndefined();
    expect(v(t, call.arguments)).toBe("arguments exceed maximum depth 64 (maxDepth)");
    let d65: any = {};
    for (let i = 0; i < 64; i++) d65 = { a: d65 };
    expect(v(t, d65)).toBe("arguments exceed maximum depth 64 (maxDepth)");
  });

  it("refuses a 10 MB string", () => {
    expect(v(t, { s: "x".repeat(10_000_000) })).toBe("/s: string exceeds maximum length 1000000 (maxStringLength; found 10000000 characters)");
  });

  it("refuses a 200 000-item array", () => {
    expect(v(t, { a: new Array(200_000).fill(1) })).toBe("/a: array exceeds maximum length 10000 (maxArrayLength; found 200000 items)");
  });

  it("refuses an object with more than maxProperties properties", () => {
    const wide = { a: Object.fromEntries(Array.from({ length: 1_001 }, (_, i) => [`k${i}`, 1])) };
    expect(v(t, wide)).toBe("/a: object exceeds maximum properties 1000 (maxProperties; found 1001)");
  });

  it.each(["__proto__", "prototype", "constructor"])("refuses the key %s, from an object and from text", (key) => {
    const text = `{"x":{"${key}":{"polluted":true}}}`;
    expect(v(t, JSON.parse(text))).toBe(`/x/${key}: forbidden property key "${key}"`);
    expect(v(t, toolCallFromArgumentsText("c", "t", text).arguments)).toBe(`/x/${key}: forbidden property key "${key}"`);
  });

  it("refuses class instances, Map, Set, Date, functions, BigInt and NaN with their path", () => {
    class Point {
      x = 1;
    }
    expect(v(t, { p: new Point() })).toBe("/p: an instance of Point is not plain JSON");
    expect(v(t, { m: new Map([["a", 1]]) })).toBe("/m: an instance of Map is not plain JSON");
    expect(v(t, { s: [new Set()] })).toBe("/s/0: an instance of Set is not plain JSON");
    expect(v(t, { d: new Date(0) })).toBe("/d: an instance of Date is not plain JSON");
    expect(v(t, { f: () => 1 })).toBe("/f: a function is not plain JSON");
    expect(v(t, { b: 1n })).toBe("/b: a bigint is not plain JSON");
    expect(v(t, { n: NaN })).toBe("/n: NaN is not plain JSON");
    expect(v(t, new Point())).toBe("an instance of Point is not plain JSON");
    expect(v(t, Object.create(null))).toBeUndefined();
  });

  it("refuses cyclic objects and getters without throwing or running them", () => {
    const c: any = { a: 1 };
    c.b = { c };
    expect(v(t, c)).toBe("arguments contain a cycle, which is not plain JSON");
    const g = {
      get boom() {
        throw new Error("getter");
      },
    };
    // An accessor is refused without running it: a getter could answer the tool differently.
    expect(v(t, g)).toBe('an object with an accessor property ("boom") is not plain JSON');
  });

  it("reads a schema as its JSON text: a getter in it is read, what JSON cannot carry is refused", () => {
    const validate = createJsonSchemaToolArgumentValidator();
    const props = { n: { type: "integer", maximum: 5 } };
    // Nothing but the schema's JSON text is used (the validator compiles it, a provider is sent it).
    const schema = {
      type: "object",
      get properties() {
        return props;
      },
    };
    const tool = { name: "g", parameters: schema };
    expect(validate(tool, { n: 3 }, {})).toBeUndefined();
    expect(validate(tool, { n: 9 }, {})).toMatch(/^\/n: /);
    const withToJson = { name: "j", parameters: { type: "object", toJSON: () => ({ type: "string" }) } };
    expect(validate(withToJson, { n: 1 }, {})).toMatch(/toJSON/);
  });

  it("refuses lone UTF-16 surrogates, as an object and as provider text", () => {
    expect(v(t, { s: "a\ud800b" })).toMatch(/^arguments contain a lone UTF-16 surrogate/);
    const call = toolCallFromArgumentsText("c", "t", '{"s":"\\udc00"}');
    expect(call.argumentsError).toBeUndefined();
    expect(v(t, call.arguments)).toMatch(/^arguments contain a lone UTF-16 surrogate/);
  });
});

describe("warm arguments checked in place (acceptance plan)", () => {
  const open = { type: "object", properties: { s: { type: "string", minLength: 2, maxLength: 3 }, n: { type: "integer", exclusiveMinimum: 0, maximum: 9007199254740992 }, e: { enum: ["a", 1, null] }, list: { type: "array", items: { type: "number" }, maxItems: 2 } }, required: ["s"] };
  const closed = { ...open, additionalProperties: false };

  it("accepts plainly valid arguments of a warm schema without serializing them", () => {
    const v = createJsonSchemaToolArgumentValidator();
    const t = tool(closed);
    const args = { s: "ab", n: 5, e: null, list: [1, 2.5] };
    expect(v(t, args)).toBeUndefined();
    const stringify = vi.spyOn(JSON, "stringify");
    try {
      for (let i = 0; i < 3; i++) expect(v(t, args)).toBeUndefined();
      expect(stringify).not.toHaveBeenCalled();
      // An invalid value is serialized and refused in Rust, with its message.
      expect(v(t, { s: "ab", n: 0 })).toBe("/n: expected a number > 0, found integer 0");
      expect(stringify).toHaveBeenCalled();
    } finally {
      stringify.mockRestore();
    }
  });

  it("judges every record of an array by its own keys, whatever shapes come before it", () => {
    const v = createJsonSchemaToolArgumentValidator();
    const row = { type: "object", properties: { id: { type: "integer" }, name: { type: "string" } }, required: ["id"], additionalProperties: false };
    const t = tool({ type: "object", properties: { rows: { type: "array", items: row } }, required: ["rows"] });
    const ok = { rows: [{ id: 1, name: "a" }, { id: 2, name: "b" }, { name: "c", id: 3 }, { id: 4 }] };
    for (let i = 0; i < 3; i++) expect(v(t, ok)).toBeUndefined();
    expect(v(t, { rows: [{ id: 1, name: "a" }, { id: 2, name: "b", extra: 1 }] })).toMatch(/extra/);
    expect(v(t, { rows: [{ id: 1, name: "a" }, { id: 2, name: 3 }] })).toMatch(/\/rows\/1\/name/);
    expect(v(t, { rows: [{ id: 1, name: "a" }, { name: "b" }] })).toMatch(/id/);
    // An enumerable key on Object.prototype is not JSON data: the same records stay valid, judged by own keys.
    (Object.prototype as any).polluted = 1;
    try {
      expect(v(t, ok)).toBeUndefined();
      expect(v(t, { rows: [{ id: 1, name: "a" }, { id: 2, name: "b", extra: 1 }] })).toMatch(/extra/);
    } finally {
      delete (Object.prototype as any).polluted;
    }
    expect(v(t, ok)).toBeUndefined();
  });

  it("accepts plainly valid provider arguments of a warm schema without a second parse in Rust", () => {
    const v = createJsonSchemaToolArgumentValidator();
    const t = tool(closed);
    const text = '{"s":"ab","n":5,"list":[1,2.5]}';
    expect(v(t, toolCallFromArgumentsText("c", "t", text).arguments)).toBeUndefined();
    const rust = vi.spyOn(binding, "jsonSchemaValidateId");
    try {
      for (let i = 0; i < 3; i++) expect(v(t, toolCallFromArgumentsText("c", "t", text).arguments)).toBeUndefined();
      expect(rust).not.toHaveBeenCalled();
      // Refusals still come from the text, in Rust.
      expect(v(t, toolCallFromArgumentsText("c", "t", '{"s":"ab","n":0}').arguments)).toBe("/n: expected a number > 0, found integer 0");
      expect(v(t, toolCallFromArgumentsText("c", "t", '{"s":"\\ud800"}').arguments)).toMatch(/lone UTF-16 surrogate/);
      expect(rust).toHaveBeenCalledTimes(2);
    } finally {
      rust.mockRestore();
    }
  });

  const hidden = Object.defineProperty({ n: 1 }, "s", { value: "ab", enumerable: false });
  const throwing = Object.defineProperty({ s: "ab" }, "n", { enumerable: true, get: () => { throw new Error("getter"); } });
  const cases: [string, object, unknown][] = [
    ["a forbidden key where other keys are admitted", open, JSON.parse('{"s":"ab","__proto__":1}')],
    ["constructor as a key", open, { s: "ab", constructor: 1 }],
    ["the non-JSON tag as a key", open, { s: "ab", "\u0000prism:nonjson": "Map" }],
    ["an undefined property", open, { s: "ab", n: undefined }],
    ["an undefined required property", open, { s: undefined }],
    ["a required property that is not enumerable", open, hidden],
    ["a throwing getter", open, throwing],
    ["a sparse array", open, { s: "ab", list: [1, , 2] }],
    ["a Date", open, { s: "ab", d: new Date(0) }],
    ["a class instance as the arguments", open, new (class Args { s = "ab"; })()],
    ["a lone surrogate", open, { s: "a\ud800" }],
    ["a lone surrogate in a key", open, { s: "ab", "\udc00": 1 }],
    ["astral characters within maxLength", closed, { s: "😀😀😀" }],
    ["astral characters past maxLength", closed, { s: "😀😀😀😀" }],
    ["one astral character under minLength", closed, { s: "😀" }],
    ["-0 against exclusiveMinimum 0", closed, { s: "ab", n: -0 }],
    ["2^53 + 2 past maximum 2^53", closed, { s: "ab", n: 2 ** 53 + 2 }],
    ["1.0 as an integer", closed, { s: "ab", n: 1.0 }],
    ["NaN", closed, { s: "ab", n: NaN }],
    ["an enum value of another type", closed, { s: "ab", e: "1" }],
    ["an extra key when none is admitted", closed, { s: "ab", x: 1 }],
    ["too many items", closed, { s: "ab", list: [1, 2, 3] }],
    ["a cycle", open, (() => { const c: any = { s: "ab" }; c.x = { c }; return c; })()],
    ["a proxy", open, new Proxy({ s: "ab" }, {})],
    ["a null-prototype object", closed, Object.assign(Object.create(null), { s: "ab" })],
  ];

  it.each(cases)("%s: the warm verdict is the cold one", (_, schema, args) => {
    const cold = createJsonSchemaToolArgumentValidator()(tool(schema), args, {});
    const warm = createJsonSchemaToolArgumentValidator();
    const t = tool(schema);
    for (let i = 0; i < 3; i++) expect(warm(t, args, {})).toEqual(cold);
  });

  // allOf, anyOf and oneOf: a oneOf is accepted in place only when one branch accepts and every
  // other one certainly refuses (its type, its enum, a missing required key); the rest is Rust's.
  const label = { oneOf: [{ type: "string", minLength: 1 }, { type: "object", required: ["name"], properties: { name: { type: "string" }, score: { type: "number" } } }] };
  const combos = {
    type: "object",
    properties: {
      labels: { type: "array", items: label },
      kind: { anyOf: [{ type: "string", minLength: 1 }, { type: "null" }] },
      target: {
        oneOf: [
          { type: "object", required: ["id"], additionalProperties: false, properties: { id: { type: "integer" } } },
          { type: "object", required: ["node"], additionalProperties: false, properties: { node: { type: "string" } } },
        ],
      },
      num: { oneOf: [{ type: "number" }, { type: "integer" }] },
      code: { oneOf: [{ enum: ["a", 1] }, { const: 1 }] },
      both: { allOf: [{ type: "object", required: ["a"] }, { properties: { a: { type: "string", maxLength: 2 } } }] },
      overlap: { oneOf: [{ type: "string", minLength: 2 }, { type: "string", maxLength: 1 }] },
      // "xy" is valid for both branches (the second through its own oneOf), so invalid here: the
      // second branch does not accept it in place, and does not certainly refuse it either.
      nested: { oneOf: [{ type: "string", maxLength: 3 }, { oneOf: [{ type: "string", minLength: 2 }, { type: "string", maxLength: 1 }] }] },
    },
  };

  it("accepts plainly valid arguments of allOf, anyOf and oneOf in place", () => {
    const v = createJsonSchemaToolArgumentValidator();
    const t = tool(combos);
    const args = { labels: ["bug", { name: "p1", score: 0.5 }], kind: null, target: { node: "n1" }, num: 1.5, code: "a", both: { a: "xy" } };
    expect(v(t, args)).toBeUndefined();
    const stringify = vi.spyOn(JSON, "stringify");
    try {
      for (let i = 0; i < 3; i++) expect(v(t, args)).toBeUndefined();
      expect(stringify).not.toHaveBeenCalled();
    } finally {
      stringify.mockRestore();
    }
    // Two branches valid at once, or none: refused in Rust with the validator's words.
    expect(v(t, { num: 2 })).toMatch(/^\/num: /);
    expect(v(t, { code: 1 })).toMatch(/^\/code: /);
    expect(v(t, { target: { id: 1, node: "n" } })).toMatch(/^\/target: /);
    expect(v(t, { labels: [{ score: 1 }] })).toMatch(/^\/labels\/0: /);
    for (let i = 0; i < 3; i++) expect(v(t, { nested: "xy" })).toMatch(/^\/nested: /);
    // A oneOf the plan cannot settle (two string branches: a length is not a certain refusal) is
    // left to Rust, and valid all the same.
    const rust = vi.spyOn(binding, "jsonSchemaValidateId");
    try {
      expect(v(t, { overlap: "x" })).toBeUndefined();
      expect(v(t, { nested: "xyzw" })).toBeUndefined();
      expect(rust).toHaveBeenCalledTimes(2);
    } finally {
      rust.mockRestore();
    }
  });

  it("gives the same verdict warm and cold for allOf, anyOf and oneOf over generated values", () => {
    const value = fc.oneof(
      fc.constantFrom(null, true, 0, 1, 1.5, -0, 2 ** 53 + 2, NaN, "", "x", "xy", "xyz", "a", "😀", "\ud800", undefined),
      fc.array(fc.oneof(fc.constantFrom("bug", "", 1, null), fc.record({ name: fc.constantFrom("p", 1), score: fc.constantFrom(0.5, "x") }, { requiredKeys: [] })), { maxLength: 3 }),
      fc.record({ id: fc.constantFrom(1, 1.5, "1"), node: fc.constantFrom("n", 2), a: fc.constantFrom("xy", "xyz", 3), extra: fc.constant(1) }, { requiredKeys: [] }),
    );
    const args = fc.record(
      { labels: value, kind: value, target: value, num: value, code: value, both: value, overlap: value, nested: value },
      { requiredKeys: [] },
    );
    const t = tool(combos);
    const warm = createJsonSchemaToolArgumentValidator();
    fc.assert(
      fc.property(args, (a) => {
        const cold = createJsonSchemaToolArgumentValidator()(tool(combos), a, {});
        for (let i = 0; i < 2; i++) expect(warm(t, a, {})).toEqual(cold);
      }),
      { numRuns: 400, seed: 26 },
    );
  });

  it("keeps every argument bound: depth, properties, string and array lengths", () => {
    const limits = { maxDepth: 4, maxProperties: 2, maxStringLength: 4, maxArrayLength: 2 };
    const t = tool({ type: "object" });
    const over = [{ a: { b: { c: { d: { e: 1 } } } } }, { a: [[[[1]]]] }, { a: 1, b: 2, c: 3 }, { a: "abcde" }, { abcde: 1 }, { a: [1, 2, 3] }];
    for (const args of over) {
      const cold = createJsonSchemaToolArgumentValidator(limits)(tool({ type: "object" }), args, {});
      expect(cold).toMatch(/maximum|depth/);
      const warm = createJsonSchemaToolArgumentValidator(limits);
      for (let i = 0; i < 3; i++) expect(warm(t, args, {})).toBe(cold);
    }
  });

  it("keeps the depth bound where the schema types every level", () => {
    const limits = { maxDepth: 4 };
    const level = (items: object) => ({ type: "array", items });
    const typed = { type: "object", properties: { a: level(level(level(level({ type: "integer" })))), o: { type: "object", properties: { p: { type: "object", properties: { q: { type: "object", properties: { r: { type: "object" } } } } } } } } };
    const within = [{ a: [[[]]] }, { o: { p: { q: {} } } }];
    const over = [{ a: [[[[1]]]] }, { o: { p: { q: { r: {} } } } }];
    const warm = createJsonSchemaToolArgumentValidator(limits);
    const t = tool(typed);
    for (let i = 0; i < 3; i++) {
      for (const args of within) expect(warm(t, args, {})).toBeUndefined();
      for (const args of over) expect(warm(t, args, {})).toBe("arguments exceed maximum depth 4 (maxDepth)");
    }
  });
});

describe("validation from provider text", () => {
  const schema = { type: "object", properties: { q: { type: "string" } }, required: ["q"] };

  it("validates the text while the arguments are still that object, and the object once replaced", () => {
    const v = createJsonSchemaToolArgumentValidator();
    const t = tool(schema);
    const call = toolCallFromArgumentsText("c", "t", '{"q": 1}');
    expect(v(t, call.arguments)).toBe("/q: expected string, found integer 1");
    expect(v(t, { ...call.arguments, q: "fixed" })).toBeUndefined();
    expect(adapter().validate(schema, call.arguments).errors).toEqual([{ path: "/q", message: "expected string, found integer 1" }]);
  });

  it("validates ~100 KB arguments the same way from text and from the object", () => {
    const big = { q: "x", rows: Array.from({ length: 1_000 }, (_, i) => ({ id: i, name: `row ${i}`, tags: ["a", "b"], note: "y".repeat(50) })) };
    const text = JSON.stringify(big);
    expect(text.length).toBeGreaterThan(90_000);
    const v = createJsonSchemaToolArgumentValidator();
    expect(v(tool(schema), toolCallFromArgumentsText("c", "t", text).arguments)).toBeUndefined();
    expect(v(tool(schema), big)).toBeUndefined();
  });
});

describe("a tool's $schema names a dialect the validator reads", () => {
  const tool = (uri: unknown) => ({ name: "weather", parameters: { $schema: uri, type: "object" }, execute: () => "sunny" });
  it("an unknown dialect is a registration error naming the tool, in createToolRegistry, register and createAgent", () => {
    const expected = {
      code: "ERR_PRISM_INVALID_TOOL",
      keyword: "$schema",
      message:
        'Tool weather: parameters: schema keyword "$schema" names an unsupported dialect "http://json-schema.org/draft-03/schema": use draft 2020-12 (the default), 2019-09, 07, 06 or 04',
    };
    expect(() => cjs.createToolRegistry([tool("http://json-schema.org/draft-03/schema#")])).toThrow(expect.objectContaining(expected));
    expect(() => cjs.createToolRegistry([]).register(tool("http://json-schema.org/draft-03/schema#"))).toThrow(expect.objectContaining(expected));
    expect(() => cjs.createAgent({ model: { provider: "mock", model: "m" }, provider: cjs.createMockProvider([]), tools: [tool("http://json-schema.org/draft-03/schema#")] })).toThrow(
      expect.objectContaining(expected),
    );
    expect(() => cjs.createToolRegistry([tool(42)])).toThrow(
      expect.objectContaining({ code: "ERR_PRISM_INVALID_TOOL", message: 'Tool weather: parameters: schema keyword "$schema" must be a string, found integer 42' }),
    );
  });
  it("every dialect the validator reads registers", () => {
    for (const uri of [
      "https://json-schema.org/draft/2020-12/schema",
      "https://json-schema.org/draft/2019-09/schema",
      "http://json-schema.org/draft-07/schema#",
      "http://json-schema.org/draft-06/schema#",
      "http://json-schema.org/draft-04/schema#",
    ]) {
      expect(cjs.createToolRegistry([tool(uri)]).get("weather")).toBeDefined();
    }
  });
});
