// The packed crossing of tool search (prism_tools_core::search::packed): typed arrays over shared
// memory are refused, malformed packed input is a TypeError with a stable code, and the generated
// tool can be called again from inside its own argument's getter.
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { createSearchToolsTool, createToolSearchIndex } from "../index.mjs";

const require = createRequire(import.meta.url);
const binding = require("../binding.js");

const tools = [
  { name: "get_weather", description: "Current weather for a city" },
  { name: "send_email", description: "Send an email to one recipient" },
];

type Packed = {
  _searchPacked(query: unknown, k: unknown, ranking: unknown, weight: unknown, out: unknown): string | number | undefined;
};

function thrown(fn: () => unknown): { name: string; code: unknown; message: string } {
  try {
    fn();
  } catch (e) {
    const err = e as Error & { code?: unknown };
    return { name: err.name, code: err.code, message: err.message };
  }
  throw new Error("expected a throw");
}

/** The packed build input of `tools` as lib/search.js makes it (no parameters). */
function packed(list: { name: string; description: string }[]) {
  const text = list.map((t) => t.name + t.description).join("");
  const lengths = list.flatMap((t) => [t.name.length, t.description.length, 0]);
  return { texts: [text], lengths };
}

describe("tool search crossing: typed arrays over shared memory", () => {
  const index = createToolSearchIndex(tools) as unknown as Packed;

  it("answers a query through plain typed arrays", () => {
    const out = new Float64Array(64);
    expect(index._searchPacked("weather", 4, new Uint32Array([1, 0]), undefined, out)).toBe("weather");
    expect(out[0]).toBeGreaterThan(0);
  });

  it("refuses a ranking backed by a SharedArrayBuffer", () => {
    const ranking = new Uint32Array(new SharedArrayBuffer(8));
    ranking.set([1, 0]);
    const e = thrown(() => index._searchPacked("weather", 4, ranking, undefined, new Float64Array(64)));
    expect(e).toMatchObject({ name: "TypeError", code: "invalid_tool_search_input" });
    expect(e.message).toMatch(/ranking must not be backed by a SharedArrayBuffer/);
  });

  it("refuses a result array backed by a SharedArrayBuffer, and writes nothing to it", () => {
    const out = new Float64Array(new SharedArrayBuffer(64 * 8));
    const e = thrown(() => index._searchPacked("weather", 4, undefined, undefined, out));
    expect(e).toMatchObject({ name: "TypeError", code: "invalid_tool_search_input" });
    expect(e.message).toMatch(/out must not be backed by a SharedArrayBuffer/);
    expect(out.every((x) => x === 0)).toBe(true);
  });

  it("refuses build lengths or positions backed by a SharedArrayBuffer", () => {
    const { texts, lengths } = packed(tools);
    const plain = binding._buildToolSearchIndex(texts, new Uint32Array(lengths), tools.length, undefined, new Uint32Array(2));
    expect(plain.size).toBe(2);
    const shared = new Uint32Array(new SharedArrayBuffer(lengths.length * 4));
    shared.set(lengths);
    const e1 = thrown(() => binding._buildToolSearchIndex(texts, shared, tools.length, undefined, new Uint32Array(2)));
    expect(e1).toMatchObject({ name: "TypeError", code: "invalid_tool_search_input" });
    expect(e1.message).toMatch(/lengths must not be backed by a SharedArrayBuffer/);
    const positions = new Uint32Array(new SharedArrayBuffer(8));
    const e2 = thrown(() => binding._buildToolSearchIndex(texts, new Uint32Array(lengths), tools.length, undefined, positions));
    expect(e2).toMatchObject({ name: "TypeError", code: "invalid_tool_search_input" });
    expect(e2.message).toMatch(/positions must not be backed by a SharedArrayBuffer/);
    expect(Array.from(positions)).toEqual([0, 0]);
  });
});

describe("tool search crossing: malformed packed input", () => {
  it("is a TypeError with invalid_tool_search_input, never a crash", () => {
    const { texts, lengths } = packed(tools);
    const build = (t: unknown, l: unknown, n: number, p: unknown) => () => binding._buildToolSearchIndex(t, l, n, undefined, p);
    const cases = [
      build(texts, new Uint32Array([...lengths.slice(0, 5), 99]), 2, new Uint32Array(2)), // lengths past the text
      build(texts, new Uint32Array(lengths.slice(0, 4)), 2, new Uint32Array(2)), // fewer lengths than tools
      build(texts, lengths, 2, new Uint32Array(2)), // a plain array, not a Uint32Array
      build([1, 2], new Uint32Array(lengths), 2, new Uint32Array(2)), // texts not strings
      build(texts, new Uint32Array(lengths), 2, new Uint32Array(1)), // positions too short
      build(texts, new Float64Array(lengths), 2, new Uint32Array(2)), // wrong element type
    ];
    for (const c of cases) expect(thrown(c)).toMatchObject({ name: "TypeError", code: "invalid_tool_search_input" });
    const index = createToolSearchIndex(tools) as unknown as Packed;
    expect(thrown(() => index._searchPacked("weather", 4, undefined, undefined, [0, 0]))).toMatchObject({
      name: "TypeError",
      code: "invalid_tool_search_input",
    });
  });
});

describe("tool search crossing: re-entrant search_tools", () => {
  it("runs a call started from inside its own argument's getter", () => {
    const tool = createSearchToolsTool(createToolSearchIndex(tools));
    let inner: unknown;
    const args = {
      get query() {
        inner = tool.execute({ query: "email" }, { toolCallId: "inner" });
        return "weather";
      },
    };
    const outer = tool.execute(args as { query: string }, { toolCallId: "outer" }) as { value: { names: string[] } };
    expect(outer.value.names).toEqual(["get_weather"]);
    expect((inner as { value: { names: string[] } }).value.names).toEqual(["send_email"]);
  });
});
