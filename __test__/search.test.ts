import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import {
  activateToolNames,
  createSearchToolsTool,
  createToolSearchIndex,
  SEARCH_TOOLS_NAME,
  selectDisclosedTools,
  TOOL_SEARCH_LIMITS,
  ToolSearchIndex,
  type SearchableTool,
} from "../index.mjs";

const require = createRequire(import.meta.url);
const fixture = (name: string) => JSON.parse(readFileSync(new URL(`../fixtures/${name}`, import.meta.url), "utf8"));
const github: SearchableTool[] = fixture("github-mcp-tools.json");

function tool(name: string, description?: string, parameters?: object) {
  return { name, description, parameters, execute: () => ({ toolCallId: "x", name }) };
}

function codeOf(fn: () => unknown): { name: string; code: unknown } {
  try {
    fn();
  } catch (e) {
    const err = e as Error & { code?: unknown };
    return { name: err.name, code: err.code };
  }
  throw new Error("expected a throw");
}

describe("createToolSearchIndex / search", () => {
  const index = createToolSearchIndex(github);

  it("indexes every tool and ranks by name and description", () => {
    expect(index).toBeInstanceOf(ToolSearchIndex);
    expect(index.size).toBe(117);
    const hits = index.search("merge the pull request", { k: 3 });
    expect(hits[0]).toEqual({ name: "merge_pull_request", score: expect.any(Number), matched: ["merge", "pull", "request"] });
    expect(hits).toHaveLength(3);
    for (let i = 1; i < hits.length; i++) expect(hits[i].score).toBeLessThanOrEqual(hits[i - 1].score);
  });

  it("splits identifiers on _ - . / and camelCase, lower-cased", () => {
    const idx = createToolSearchIndex([tool("getWeatherForecast"), tool("fs.read-file/v2"), tool("other", "nothing here")]);
    expect(idx.search("WEATHER forecast")[0].name).toBe("getWeatherForecast");
    expect(idx.search("read file")[0]).toMatchObject({ name: "fs.read-file/v2", matched: ["read", "file"] });
  });

  it("breaks ties by input order", () => {
    const idx = createToolSearchIndex([tool("b_tool", "same words"), tool("a_tool", "same words"), tool("c_tool", "same words")]);
    expect(idx.search("same words").map((h) => h.name)).toEqual(["b_tool", "a_tool", "c_tool"]);
  });

  it("uses parameter names and descriptions as a weaker field", () => {
    const idx = createToolSearchIndex([
      tool("convert", "Convert a value", { type: "object", properties: { celsius: { type: "number", description: "temperature" } } }),
      tool("celsius_info", "Facts about Anders Celsius"),
    ]);
    const hits = idx.search("celsius temperature");
    expect(hits.map((h) => h.name)).toEqual(["celsius_info", "convert"]);
    expect(hits[1].matched).toEqual(["celsius", "temperature"]);
  });

  it("keeps the first tool of a repeated name", () => {
    const idx = createToolSearchIndex([tool("dup", "alpha"), tool("dup", "beta"), tool("other", "gamma")]);
    expect(idx.size).toBe(2);
    expect(idx.search("alpha").map((h) => h.name)).toEqual(["dup"]);
    expect(idx.search("beta")).toEqual([]);
  });

  it("indexes tools without a description by name", () => {
    const idx = createToolSearchIndex([tool("list_branches"), { name: "bare" }, tool("nulled", null as unknown as string)]);
    expect(idx.search("branches")[0].name).toBe("list_branches");
    expect(idx.search("bare")[0].name).toBe("bare");
  });

  it("returns [] for empty, whitespace-only, punctuation-only and emoji-only queries", () => {
    for (const q of ["", "   ", "\t\n ", "?!.,", "🔍🚀"]) expect(index.search(q)).toEqual([]);
  });

  it("cuts long queries at the query-byte limit (default 4 096) on a UTF-8 boundary", () => {
    const mb = "x".repeat(1 << 20);
    expect(index.search(`merge ${mb}`)[0].name).toBe("merge_pull_request");
    expect(index.search(`${"x ".repeat(2100)} merge`)).toEqual([]);
    const wide = createToolSearchIndex(github, { queryBytes: 1e9 });
    expect(wide.search(`${"x ".repeat(2100)} merge`)[0].name).toBe("merge_pull_request");
    expect(wide.search(`${"é".repeat(40_000)} merge`)).toEqual([]); // 80 000 bytes > the 65 536 cap
    expect(index.search(`${"é".repeat(2047)}🔍 merge`.repeat(1))).toEqual([]);
  });

  it("handles non-ASCII text: CJK, emoji, combining marks, lone surrogates", () => {
    const idx = createToolSearchIndex([
      tool("translate", "翻訳 ツール"),
      tool("cafe_finder", "Find a cafe\u0301 nearby"),
      tool("groesse", "Größe ändern"),
    ]);
    expect(idx.search("翻訳")[0].name).toBe("translate");
    expect(idx.search("ツール 🔍")[0]).toMatchObject({ name: "translate", matched: ["ツール"] });
    expect(idx.search("cafe\u0301")[0].name).toBe("cafe_finder");
    expect(idx.search("GRÖSSE")).toEqual([]); // ß upper-cases to SS: no case folding beyond lower-casing
    expect(idx.search("größe")[0].name).toBe("groesse");
    expect(idx.search("\ud800finder\udfff")[0]).toMatchObject({ name: "cafe_finder", matched: ["finder"] });
    expect(idx.search("\ud800")).toEqual([]);
  });

  it("fuses a host-supplied ranking by reciprocal rank fusion, naming only indexed tools", () => {
    const idx = createToolSearchIndex([
      tool("create_issue", "Create a new issue"),
      tool("merge_pull_request", "Merge a pull request"),
      tool("get_weather", "Current weather for a city"),
    ]);
    // Without a ranking the lexical order stands; the seam is off by default.
    expect(idx.search("issue").map((h) => h.name)).toEqual(["create_issue"]);
    const fused = idx.search("issue", { ranking: ["get_weather", "not_a_tool", "create_issue", "get_weather"] });
    // create_issue is in both lists; get_weather only in the host's; not_a_tool is inert.
    expect(fused.map((h) => h.name)).toEqual(["create_issue", "get_weather"]);
    // Lexical rank 1 adds 1 / (5 + 1); the host's rank 2 (after the unknown name) adds 1.5 / (5 + 2).
    expect(fused[0].score).toBeCloseTo(1 / 6 + 1.5 / 7, 6);
    expect(fused[1].score).toBeCloseTo(1.5 / 6, 6);
    expect(fused[0].matched).toEqual(["issue"]);
    expect(fused[1]).toMatchObject({ matched: [] });
    expect(idx.search("issue", { ranking: [], k: 1 }).map((h) => h.name)).toEqual(["create_issue"]);
    expect(() => idx.search("issue", { ranking: "create_issue" as never })).toThrow(
      expect.objectContaining({ name: "TypeError", code: "invalid_tool_search_input" }),
    );
  });

  it("weighs the host's ranking by rankingWeight: 0 keeps the lexical order, a heavy weight lets it lead", () => {
    const idx = createToolSearchIndex([
      tool("create_issue", "Create a new issue"),
      tool("update_issue", "Update an issue"),
      tool("get_weather", "Current weather for a city"),
    ]);
    const lexical = idx.search("create issue").map((h) => h.name);
    expect(lexical).toEqual(["create_issue", "update_issue"]);
    const ranking = ["get_weather", "update_issue"];
    expect(idx.search("create issue", { ranking, rankingWeight: 0 }).map((h) => h.name)).toEqual(lexical);
    // Default 1.5: the host's first (get_weather, 1.5 / 6) passes the lexical first alone (1 / 6)
    // but not update_issue, which both lists hold (1 / 7 + 1.5 / 7).
    expect(idx.search("create issue", { ranking }).map((h) => h.name)).toEqual(["update_issue", "get_weather", "create_issue"]);
    expect(idx.search("create issue", { ranking, rankingWeight: Number.NaN }).map((h) => h.name)).toEqual([
      "update_issue",
      "get_weather",
      "create_issue",
    ]);
    const heavy = idx.search("create issue", { ranking, rankingWeight: Number.POSITIVE_INFINITY });
    expect(heavy.map((h) => h.name)).toEqual(["get_weather", "update_issue", "create_issue"]);
    expect(heavy[0].score).toBeCloseTo(100 / 6, 4); // clamped to 100
    expect(idx.search("create issue", { ranking, rankingWeight: -3 }).map((h) => h.name)).toEqual(lexical);
    // Without a ranking the weight is ignored.
    expect(idx.search("create issue", { rankingWeight: 50 }).map((h) => h.name)).toEqual(lexical);
    expect(() => idx.search("create issue", { ranking, rankingWeight: "2" as never })).toThrow(
      expect.objectContaining({ name: "TypeError", code: "invalid_tool_search_input", message: expect.stringContaining("rankingWeight") }),
    );
  });

  it("never names a tool whose name holds a lone surrogate (two such names would read alike)", () => {
    const tools = [tool("pay\ud800", "Pay an invoice"), tool("pay\udc00", "Pay a bill"), tool("refund", "Refund a payment")];
    const idx = createToolSearchIndex(tools);
    expect(idx.size).toBe(1);
    const names = new Set(tools.map((t) => t.name));
    for (const q of ["pay", "pay invoice bill", "pay\ufffd", "refund payment"]) {
      for (const hit of idx.search(q)) expect(names.has(hit.name)).toBe(true);
    }
    expect(idx.search("pay invoice")).toEqual([]);
    // A real U+FFFD name stays searchable and is not confused with the surrogate names.
    const withReal = createToolSearchIndex([tool("pay\ufffd", "Pay an invoice"), tools[0]]);
    expect(withReal.search("invoice").map((h) => h.name)).toEqual(["pay\ufffd"]);
    const searchTools = createSearchToolsTool(idx);
    const r = searchTools.execute({ query: "pay invoice bill" }, { toolCallId: "c" });
    expect(r.value.names).toEqual([]);
    // Disclosure cannot tell the two names apart by text: it fails closed to the whole list.
    expect(selectDisclosedTools({ tools, input: "pay", topK: 1 })).toEqual(tools);
    expect(selectDisclosedTools({ tools, input: "pay", topK: 1, index: idx })).toEqual(tools);
  });

  it("reads long lists as the tool-by-tool reader does, all ASCII or not (32 tools cross as one string)", () => {
    // 100 tools cross in four strings. All-ASCII text is read as bytes; one non-ASCII character or
    // lone surrogate anywhere sends the whole list through the UTF-16 reader. Both must index what
    // binding.js's entry point indexes reading each field through Node-API.
    const binding = require("../binding.js");
    const base = Array.from({ length: 100 }, (_, i) =>
      tool(`tool_${i}`, `Does thing number ${i} for the caller`, { type: "object", properties: { [`field${i}`]: { description: `the ${i} value` } } }),
    );
    const lists = [
      base,
      base.map((t, i) => (i === 70 ? tool(t.name, `${t.description} café`, t.parameters) : t)),
      base.map((t, i) => (i === 99 ? tool("tool_99\ud800", t.description, t.parameters) : t)),
      base.map((t, i) => (i === 33 ? tool(t.name, t.description, { type: "object", properties: { größe: { description: "Größe" } } }) : t)),
      base.map((t, i) => (i === 0 ? tool(t.name, `${"x".repeat(16_500)} beyond`) : t)),
    ];
    const queries = ["thing number 5", "field42", "the 77 value", "caller", "tool 99", "tool_31 tool_32 tool_64", "café", "größe", "beyond"];
    for (const tools of lists) {
      const [bulk, single] = [createToolSearchIndex(tools), binding.createToolSearchIndex(tools)];
      expect(bulk.size).toBe(single.size);
      for (const q of queries) expect(bulk.search(q, { k: 64 })).toEqual(single.search(q, { k: 64 }));
    }
    expect(createToolSearchIndex(lists[1]).search("café")[0]).toMatchObject({ name: "tool_70", matched: ["café"] });
    expect(createToolSearchIndex(lists[2]).size).toBe(99); // the lone-surrogate name is left out
    expect(createToolSearchIndex(lists[3]).search("größe")[0]).toMatchObject({ name: "tool_33" });
    expect(createToolSearchIndex(lists[4]).search("beyond")).toEqual([]); // past the 16 KB of description read
    expect(createToolSearchIndex(base).search("thing number 64")[0].name).toBe("tool_64");
  });

  it("tells its native memory (memoryBytes), which grows with the tool text", () => {
    const tools: SearchableTool[] = fixture("bfcl-tool-retrieval.json").catalog;
    const text = tools.reduce((n, t) => n + t.name.length + (t.description?.length ?? 0), 0);
    const big = createToolSearchIndex(tools);
    // At least the names and descriptions it keeps, and one posting per tool; well under 16 MB.
    expect(big.memoryBytes).toBeGreaterThan(text + tools.length * 8);
    expect(big.memoryBytes).toBeLessThan(16_000_000);
    const small = createToolSearchIndex(tools.slice(0, 10));
    expect(small.memoryBytes).toBeGreaterThan(0);
    expect(small.memoryBytes).toBeLessThan(big.memoryBytes / 4);
    expect(createToolSearchIndex([]).memoryBytes).toBeGreaterThanOrEqual(0);
  });

  it("clamps k: 0 and negative give [], fractions floor, NaN gives 16, huge gives 64", () => {
    const many = createToolSearchIndex(Array.from({ length: 100 }, (_, i) => tool(`tool_${i}`, "common word")));
    expect(many.search("common", { k: 0 })).toEqual([]);
    expect(many.search("common", { k: -5 })).toEqual([]);
    expect(many.search("common", { k: 0.9 })).toEqual([]);
    expect(many.search("common", { k: 2.7 })).toHaveLength(2);
    expect(many.search("common", { k: NaN })).toHaveLength(16);
    expect(many.search("common")).toHaveLength(16);
    expect(many.search("common", {})).toHaveLength(16);
    expect(many.search("common", { k: 1e12 })).toHaveLength(64);
    expect(many.search("common", { k: Infinity })).toHaveLength(64);
  });

  it("throws TypeError with a stable code on misuse", () => {
    expect(codeOf(() => index.search(5 as unknown as string))).toEqual({ name: "TypeError", code: "invalid_tool_search_input" });
    expect(codeOf(() => index.search("x", { k: "5" as unknown as number }))).toEqual({ name: "TypeError", code: "invalid_tool_search_input" });
    expect(codeOf(() => createToolSearchIndex("tools" as unknown as SearchableTool[]))).toEqual({ name: "TypeError", code: "invalid_tool_search_input" });
    expect(codeOf(() => createToolSearchIndex([{ description: "no name" } as unknown as SearchableTool]))).toEqual({
      name: "TypeError",
      code: "invalid_tool_search_input",
    });
  });

  it("refuses more than 1 024 tools with RangeError tool_search_index_cap", () => {
    const tools = Array.from({ length: 10_000 }, (_, i) => tool(`t${i}`));
    expect(codeOf(() => createToolSearchIndex(tools))).toEqual({ name: "RangeError", code: "tool_search_index_cap" });
    expect(createToolSearchIndex(tools.slice(0, 1024)).size).toBe(1024);
  });

  it("maxTools raises the cap up to 16 384: 10 000 tools indexed, searched and disclosed in part", () => {
    const tools = Array.from({ length: 10_000 }, (_, i) => tool(`t${i}`, `Does task w${i} for the caller`));
    const big = createToolSearchIndex(tools, { maxTools: 10_000 });
    expect(big.size).toBe(10_000);
    expect(big.search("w9999", { k: 3 }).map((h) => h.name)).toEqual(["t9999"]);
    // One over the raised cap, and the cap clamped to the hard limit.
    expect(codeOf(() => createToolSearchIndex([...tools, tool("extra")], { maxTools: 10_000 }))).toEqual({ name: "RangeError", code: "tool_search_index_cap" });
    expect(TOOL_SEARCH_LIMITS.hardMaxIndexedTools).toBe(16_384);
    expect(() => createToolSearchIndex(tools.concat(tools.map((t) => tool(`${t.name}b`))), { maxTools: 1e9 })).toThrow(/index cap of 16384/);
    expect(codeOf(() => createToolSearchIndex(tools, { maxTools: "many" as unknown as number }))).toEqual({ name: "TypeError", code: "invalid_tool_search_input" });
    // Disclosure through the index built for the list: the top tool, not the whole list.
    const picked = selectDisclosedTools({ tools, input: "w4242", topK: 1, index: big });
    expect(picked.map((t) => t.name)).toEqual(["t4242"]);
    // Without an index built for it, a list past the default cap is disclosed whole (fail closed).
    expect(selectDisclosedTools({ tools, input: "w4242", topK: 1 })).toHaveLength(10_000);
  });

  it("indexes 10 KB names", () => {
    const long = `${"segment_".repeat(1280)}end`;
    const idx = createToolSearchIndex([tool(long, "a very long name"), tool("short", "other")]);
    expect(idx.search("segment")[0].name).toBe(long);
  });

  it("reads tools in bulk exactly as the tool-by-tool native reader does", () => {
    // lib/search.js hands the text over as one string; binding.js's entry point reads each field
    // through Node-API. Both must index the same text: the same cuts, the same surrogate rules.
    const binding = require("../binding.js");
    const longParams: Record<string, unknown> = {};
    for (let i = 0; i < 70; i++) longParams[`p${i}`] = { description: i === 66 ? "zebra" : `param number ${i}` };
    const bigParams: Record<string, unknown> = {
      first: { description: `${"ä".repeat(9000)} early` },
      second: { description: "late quokka" },
    };
    const fnParams = Object.assign(() => 0, { properties: { 7: { description: "numeric key walrus" }, x: null, y: "str" } });
    const tools = [
      tool("long_desc", `${"é".repeat(20_000)} needle`),
      tool("edge_desc", `${"a".repeat(16_383)}😀 tail`),
      tool("many_params", "seventy parameters", { type: "object", properties: longParams }),
      tool("big_params", "parameter text past 16 KB", { type: "object", properties: bigParams }),
      tool("pay\ud800", "\udc00 invoice straddle"),
      tool("pay\ufffd", "real replacement character"),
      { name: "fn_params", description: "function parameters", parameters: fnParams },
      tool("größe_ändern", "Größe ändern 翻訳 cafe\u0301"),
      tool("long_desc", "a repeated name"),
    ];
    const bulk = createToolSearchIndex(tools);
    const single = binding.createToolSearchIndex(tools);
    expect(bulk.size).toBe(single.size);
    expect(bulk.size).toBe(7);
    const queries = ["needle", "tail", "zebra", "param number", "early", "late quokka", "invoice straddle", "pay", "replacement",
      "walrus numeric", "function", "größe", "翻訳", "cafe\u0301", "repeated name", "seventy parameters"];
    for (const q of queries) expect(bulk.search(q, { k: 64 })).toEqual(single.search(q, { k: 64 }));
    // Without U+FFFD in any name the bulk reader takes its UTF-8 path; it must agree as well.
    const utf8 = tools.filter((t) => !t.name.startsWith("pay"));
    const [bulk8, single8] = [createToolSearchIndex(utf8), binding.createToolSearchIndex(utf8)];
    expect(bulk8.size).toBe(6);
    for (const q of queries) expect(bulk8.search(q, { k: 64 })).toEqual(single8.search(q, { k: 64 }));
    expect(bulk.search("needle")).toEqual([]); // past the 16 KB of description that is read
    expect(bulk.search("zebra")).toEqual([]); // the 67th parameter is not read
    expect(bulk.search("quokka")).toEqual([]); // past 16 KB of parameter text
    expect(bulk.search("walrus")[0].name).toBe("fn_params");
    expect(bulk.search("invoice").map((h) => h.name)).toEqual([]); // a lone-surrogate name is never indexed
    expect(bulk.search("replacement")[0].name).toBe("pay\ufffd");
  });

  it("builds from an empty list, and while a tool's getter builds another index", () => {
    expect(createToolSearchIndex([]).size).toBe(0);
    expect(createToolSearchIndex([]).search("anything")).toEqual([]);
    const inner = [tool("inner_tool", "a nested build")];
    const outer = [
      tool("first", "alpha beta"),
      {
        name: "second",
        get description() {
          createToolSearchIndex(inner);
          return "gamma delta";
        },
      },
      tool("third", "epsilon zeta"),
    ];
    const idx = createToolSearchIndex(outer);
    expect(idx.search("alpha")[0].name).toBe("first");
    expect(idx.search("gamma")[0].name).toBe("second");
    expect(idx.search("zeta")[0].name).toBe("third");
  });

  it("returns every hit and every matched term when they do not fit the first result buffer", () => {
    const words = Array.from({ length: 40 }, (_, i) => `word${i}x`);
    const idx = createToolSearchIndex(Array.from({ length: 80 }, (_, i) => tool(`t_${i}`, words.join(" "))));
    const hits = idx.search(words.join(" "), { k: 64 });
    expect(hits).toHaveLength(64);
    for (const h of hits) expect(h.matched).toEqual(words);
    expect(hits.map((h) => h.name)).toEqual(Array.from({ length: 64 }, (_, i) => `t_${i}`));
    // The next, small search still reads its own hits.
    expect(idx.search("word3x", { k: 2 }).map((h) => [h.name, h.matched])).toEqual([["t_0", ["word3x"]], ["t_1", ["word3x"]]]);
  });

  it("reaches the recall floors on the BFCL fixture through the JS API", () => {
    const bfcl = fixture("bfcl-tool-retrieval.json");
    const idx = createToolSearchIndex(bfcl.catalog);
    let at5 = 0;
    let at16 = 0;
    for (const q of bfcl.queries as { query: string; expected: string[] }[]) {
      const names = idx.search(q.query, { k: 16 }).map((h) => h.name);
      if (q.expected.every((e) => names.slice(0, 5).includes(e))) at5++;
      if (q.expected.every((e) => names.includes(e))) at16++;
    }
    expect(at5 / bfcl.queries.length).toBeGreaterThanOrEqual(0.88);
    expect(at16 / bfcl.queries.length).toBeGreaterThanOrEqual(0.95);
  });
});

describe("createSearchToolsTool", () => {
  const index = createToolSearchIndex(github);
  const searchTools = createSearchToolsTool(index);

  it("is a ToolDefinition named search_tools with { query, k? } parameters", () => {
    expect(searchTools.name).toBe("search_tools");
    expect(SEARCH_TOOLS_NAME).toBe("search_tools");
    expect(typeof searchTools.description).toBe("string");
    expect(searchTools.parameters).toEqual({
      type: "object",
      properties: {
        query: { type: "string", description: expect.any(String) },
        k: { type: "integer", description: expect.any(String), minimum: 1, maximum: 64 },
      },
      required: ["query"],
      additionalProperties: false,
    });
  });

  it("returns inert lines and the names to activate", () => {
    const result = searchTools.execute({ query: "star a repository", k: 3 }, { toolCallId: "call_1", sessionId: "s", runId: "r" });
    expect(result.toolCallId).toBe("call_1");
    expect(result.name).toBe("search_tools");
    expect(result.error).toBeUndefined();
    expect(result.value.names).toHaveLength(3);
    expect(result.value.names[0]).toBe("star_repository");
    const lines = result.content!.split("\n");
    expect(lines).toHaveLength(3);
    expect(lines[0]).toBe("star_repository: Star a GitHub repository [matched: star, repository]");
    lines.forEach((l, i) => expect(l.startsWith(`${result.value.names[i]}: `)).toBe(true));
    expect(result.content).not.toContain("properties");
    expect(result.metadata).toEqual({ k: 3, queryTruncated: false });
  });

  it("keeps to one line per tool, shortens descriptions and omits a missing one", () => {
    const idx = createToolSearchIndex([
      tool("multi", `First sentence here. Second sentence.\nSecond line {"type":"object"}`),
      tool("nodesc"),
      tool("long", "word ".repeat(200)),
      tool("evil\nname", "evil tool"),
    ]);
    const st = createSearchToolsTool(idx, { defaultK: 10 });
    const text = (q: string) => st.execute({ query: q }, { toolCallId: "c" }).content;
    expect(text("multi")).toBe("multi: First sentence here. [matched: multi]");
    expect(text("nodesc")).toBe("nodesc [matched: nodesc]");
    const long = text("long")!;
    expect(long.length).toBeLessThan(220);
    expect(long).toMatch(/…\s\[matched: long\]$/);
    expect(text("evil")).toBe("evil name: evil tool [matched: evil]");
  });

  it("defaults k to 8 and clamps it like search", () => {
    const idx = createToolSearchIndex(Array.from({ length: 100 }, (_, i) => tool(`tool_${i}`, "common word")));
    const st = createSearchToolsTool(idx);
    expect(st.execute({ query: "common" }, { toolCallId: "c" }).value.names).toHaveLength(8);
    expect(st.execute({ query: "common", k: "3" }, { toolCallId: "c" }).value.names).toHaveLength(8);
    expect(st.execute({ query: "common", k: 1000 }, { toolCallId: "c" }).value.names).toHaveLength(64);
    expect(st.execute({ query: "common", k: 0 }, { toolCallId: "c" }).value.names).toHaveLength(0);
  });

  it("reports no match, bad arguments and long queries as results, never throwing", () => {
    expect(searchTools.execute({ query: "zzzz" }, { toolCallId: "c" })).toEqual({
      toolCallId: "c",
      name: "search_tools",
      content: "No tools matched the query.",
      value: { names: [] },
      metadata: { k: 8, queryTruncated: false },
    });
    for (const args of [{}, { query: 42 }, null, undefined, "merge"]) {
      const r = searchTools.execute(args as never, { toolCallId: "c" });
      expect(r.error).toEqual({ message: "search_tools: query must be a string", code: "invalid_arguments" });
      expect(r.value).toEqual({ names: [] });
    }
    const noCtx = searchTools.execute({ query: "merge" });
    expect(noCtx.toolCallId).toBeUndefined();
    const long = searchTools.execute({ query: `merge ${"x".repeat(1 << 20)}` }, { toolCallId: "c" });
    expect(long.metadata).toEqual({ k: 8, queryTruncated: true });
    expect(long.value.names[0]).toBe("merge_pull_request");
  });

  it("only ever names tools of its index", () => {
    const names = new Set(github.map((t) => t.name));
    for (const q of ["issue", "pull request review", "delete everything", "repository"]) {
      for (const n of searchTools.execute({ query: q, k: 64 }, { toolCallId: "c" }).value.names) expect(names.has(n)).toBe(true);
    }
  });
});

describe("selectDisclosedTools", () => {
  const index = createToolSearchIndex(github);
  const searchTools = createSearchToolsTool(index);
  const tools = [...github, searchTools];

  it("sends the top-k, the activated names and search_tools, in input order, as the same objects", () => {
    const out = selectDisclosedTools({ tools, input: "merge the pull request", topK: 2, activated: ["get_me"] });
    const expected = new Set(["get_me", "search_tools", ...index.search("merge the pull request", { k: 2 }).map((h) => h.name)]);
    expect(out.map((t) => t.name)).toEqual(tools.filter((t) => expected.has(t.name)).map((t) => t.name));
    expect(out).toHaveLength(4);
    for (const t of out) expect(tools).toContain(t);
    expect(out.at(-1)).toBe(searchTools);
  });

  it("uses a prebuilt index and never returns a tool outside the input list", () => {
    const subset = tools.filter((t) => !t.name.includes("pull_request"));
    const out = selectDisclosedTools({ tools: subset, input: "merge the pull request", topK: 16, index });
    expect(out.length).toBeGreaterThan(0);
    for (const t of out) expect(subset).toContain(t);
  });

  it("defaults topK to 16 and clamps it to 64; 0 sends only activated and search_tools", () => {
    const many = Array.from({ length: 200 }, (_, i) => tool(`tool_${i}`, "common word"));
    const list = [...many, searchTools];
    expect(selectDisclosedTools({ tools: list, input: "common" })).toHaveLength(17);
    expect(selectDisclosedTools({ tools: list, input: "common", topK: 1000 })).toHaveLength(65);
    expect(selectDisclosedTools({ tools: list, input: "common", topK: NaN })).toHaveLength(17);
    expect(selectDisclosedTools({ tools: list, input: "common", topK: -1, activated: ["tool_7"] }).map((t) => t.name)).toEqual(["tool_7", "search_tools"]);
  });

  it("sends only search_tools and activated names for an empty input", () => {
    expect(selectDisclosedTools({ tools, input: "", activated: ["get_me", "not_a_tool"] }).map((t) => t.name)).toEqual(["get_me", "search_tools"]);
    expect(selectDisclosedTools({ tools, input: "   " })).toEqual([searchTools]);
  });

  it("keeps only the newest 128 activated names", () => {
    const many = Array.from({ length: 200 }, (_, i) => tool(`tool_${i}`, "x"));
    const activated = many.map((t) => t.name);
    const out = selectDisclosedTools({ tools: many, input: "", topK: 0, activated });
    expect(out).toHaveLength(128);
    expect(out[0].name).toBe("tool_72");
  });

  it("fails closed to the whole list, never zero tools", () => {
    const plain = github.slice(0, 5);
    const all = (o: Parameters<typeof selectDisclosedTools>[0]) => expect(selectDisclosedTools(o)).toEqual(o.tools);
    all({ tools: plain, input: "" }); // nothing selected and no search_tools in the list
    all({ tools: plain, input: undefined as unknown as string });
    all({ tools: [...plain, { description: "nameless" } as unknown as SearchableTool], input: "issue" });
    const huge = Array.from({ length: 10_000 }, (_, i) => tool(`t${i}`, "word"));
    const out = selectDisclosedTools({ tools: [...huge, searchTools], input: "word", topK: 4 });
    expect(out).toHaveLength(10_001);
    expect(out[9_999]).toBe(huge[9_999]);
    const throwing = { get name(): string { throw new Error("boom"); } } as SearchableTool;
    const closed = selectDisclosedTools({ tools: [throwing, searchTools], input: "x" });
    expect(closed).toHaveLength(2);
    expect(closed[0]).toBe(throwing);
    expect(closed[1]).toBe(searchTools);
    expect(selectDisclosedTools({ tools: [], input: "x" })).toEqual([]);
  });

  it("returns a new array and throws TypeError only for a missing tool list", () => {
    const out = selectDisclosedTools({ tools, input: "" });
    expect(out).not.toBe(tools);
    expect(codeOf(() => selectDisclosedTools({ tools: "x" } as never))).toEqual({ name: "TypeError", code: "invalid_tool_search_input" });
    expect(codeOf(() => selectDisclosedTools(undefined as never))).toEqual({ name: "TypeError", code: "invalid_tool_search_input" });
  });
});

describe("activateToolNames and limits", () => {
  it("adds names newest-last, distinct, at most 128", () => {
    expect(activateToolNames(["a", "b"], ["a", "c"])).toEqual(["b", "a", "c"]);
    expect(activateToolNames(undefined, ["x", 1 as unknown as string, "x"])).toEqual(["x"]);
    const names = Array.from({ length: 300 }, (_, i) => `n${i}`);
    const out = activateToolNames(names.slice(0, 100), names.slice(100));
    expect(out).toHaveLength(128);
    expect(out[127]).toBe("n299");
    expect(out[0]).toBe("n172");
  });

  it("exports the limits, frozen", () => {
    expect(TOOL_SEARCH_LIMITS).toEqual({
      defaultTopK: 16,
      maxTopK: 64,
      searchToolsDefaultK: 8,
      maxIndexedTools: 1024,
      hardMaxIndexedTools: 16384,
      defaultQueryBytes: 4096,
      maxQueryBytes: 65536,
      maxActivatedNames: 128,
      descriptionChars: 160,
    });
    expect(Object.isFrozen(TOOL_SEARCH_LIMITS)).toBe(true);
    expect(require("../index.js").TOOL_SEARCH_LIMITS).toBe(TOOL_SEARCH_LIMITS);
  });
});
