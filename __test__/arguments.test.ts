import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";

const require = createRequire(import.meta.url);
const { toolCallFromArgumentsText, reconstructToolCallDeltas } = require("../index.js");

const error = (message: string) => ({ name: "ProviderTransportError", message, code: "invalid_json_arguments" });

describe("toolCallFromArgumentsText", () => {
  it("parses a JSON object", () => {
    expect(toolCallFromArgumentsText("c1", "search", '{"q":"rust","k":3}')).toEqual({
      type: "tool_call",
      id: "c1",
      name: "search",
      arguments: { q: "rust", k: 3 },
    });
  });

  it("treats empty or all-whitespace text as no arguments", () => {
    expect(toolCallFromArgumentsText("c", "t", "")).toEqual({ type: "tool_call", id: "c", name: "t", arguments: {} });
    expect(toolCallFromArgumentsText("c", "t", "  \n").argumentsError).toBeUndefined();
  });

  it("gives argumentsError naming the tool for malformed JSON, never a throw", () => {
    expect(toolCallFromArgumentsText("c", "get_me", '{"a":')).toEqual({
      type: "tool_call",
      id: "c",
      name: "get_me",
      arguments: {},
      argumentsError: error("Invalid tool arguments JSON for tool get_me: EOF while parsing a value at line 1 column 5"),
    });
    expect(toolCallFromArgumentsText("c", "t", "{'a':1}").argumentsError.message).toMatch(/^Invalid tool arguments JSON for tool t: key must be a string/);
  });

  it.each([
    ["[1,2]", "array"],
    ['"text"', "string"],
    ["42", "integer"],
    ["null", "null"],
    ["true", "boolean"],
  ])("refuses the non-object %s", (text, found) => {
    const call = toolCallFromArgumentsText("c", "t", text);
    expect(call.arguments).toEqual({});
    expect(call.argumentsError).toEqual(error(`Tool arguments for tool t must be a JSON object, found ${found}`));
  });

  it("refuses non-string text", () => {
    for (const text of [undefined, null, 5, {}]) {
      const call = toolCallFromArgumentsText("c", "t", text as any);
      expect(call.arguments).toEqual({});
      expect(call.argumentsError.code).toBe("invalid_json_arguments");
      expect(call.argumentsError.message).toMatch(/^Tool arguments for tool t must be JSON text, found /);
    }
  });

  it("refuses text over the size bound (1 MiB by default, counted in UTF-8 bytes)", () => {
    const big = JSON.stringify({ s: "x".repeat(1_048_576) });
    expect(toolCallFromArgumentsText("c", "t", big).argumentsError).toEqual(error("Tool arguments for tool t exceeded 1048576 bytes"));
    expect(toolCallFromArgumentsText("c", "t", '{"a":1}', { maxBytes: 6 }).argumentsError).toEqual(
      error("Tool arguments for tool t exceeded 6 bytes"),
    );
    // 3 characters, 9 bytes: over a bound of 8.
    expect(toolCallFromArgumentsText("c", "t", '"€€€"', { maxBytes: 8 }).argumentsError.message).toBe("Tool arguments for tool t exceeded 8 bytes");
    expect(toolCallFromArgumentsText("c", "t", '{"a":"€"}', { maxBytes: 11 }).arguments).toEqual({ a: "€" });
  });

  it("throws RangeError for a bad maxBytes", () => {
    for (const bad of [0, -1, 1.5, NaN, 67_108_865]) {
      expect(() => toolCallFromArgumentsText("c", "t", "{}", { maxBytes: bad })).toThrow(
        new RangeError("maxBytes must be a positive safe integer no greater than 67108864"),
      );
    }
  });

  it("keeps a JSON __proto__ key as data, not as the prototype", () => {
    const call = toolCallFromArgumentsText("c", "t", '{"__proto__":{"polluted":true}}');
    expect(Object.getPrototypeOf(call.arguments)).toBe(Object.prototype);
    expect(({} as any).polluted).toBeUndefined();
  });
});

describe("reconstructToolCallDeltas", () => {
  it("groups by index, then id, in first-seen order, and concatenates the text", () => {
    const calls = reconstructToolCallDeltas([
      { type: "tool_call_delta", index: 0, id: "a", name: "search", argumentsDelta: '{"q":' },
      { type: "tool_call_delta", index: 1, id: "b", name: "fetch", argumentsDelta: "" },
      { type: "text_delta", text: "ignored" },
      { type: "tool_call_delta", index: 0, argumentsDelta: '"rust"}' },
      { type: "tool_call_delta", index: 1, argumentsDelta: '{"url":"x"}' },
    ]);
    expect(calls).toEqual([
      { type: "tool_call", id: "a", name: "search", arguments: { q: "rust" } },
      { type: "tool_call", id: "b", name: "fetch", arguments: { url: "x" } },
    ]);
  });

  it("groups by id when there is no index; a delta with neither continues the last call", () => {
    const calls = reconstructToolCallDeltas([
      { id: "x", name: "a", argumentsDelta: '{"n"' },
      { id: "y", name: "b", argumentsDelta: "{}" },
      { id: "x", argumentsDelta: ":1" },
      { argumentsDelta: "" },
      { id: "x", argumentsDelta: "}" },
    ]);
    expect(calls.map((c: any) => [c.id, c.name, c.arguments])).toEqual([
      ["x", "a", { n: 1 }],
      ["y", "b", {}],
    ]);
  });

  it("reads the protocol's argumentsText and orders calls by index", () => {
    const calls = reconstructToolCallDeltas([
      { type: "tool_call_delta", index: 1, id: "b", name: "fetch", argumentsText: '{"url":' },
      { type: "tool_call_delta", index: 0, id: "a", name: "search", argumentsText: '{"q":"rust"}' },
      { type: "tool_call_delta", index: 1, argumentsText: '"x"}' },
    ]);
    expect(calls).toEqual([
      { type: "tool_call", id: "a", name: "search", arguments: { q: "rust" } },
      { type: "tool_call", id: "b", name: "fetch", arguments: { url: "x" } },
    ]);
  });

  it("assembles names and ids by the providers' stream rules: split, repeated whole, renumbered", () => {
    const calls = reconstructToolCallDeltas([
      // A name split in pieces is joined; a name repeated whole in every piece is kept once.
      { index: 0, id: "a", name: "get_", argumentsText: '{"city":' },
      { index: 0, name: "weather", argumentsText: '"Oslo"}' },
      { index: 1, id: "b", name: "search", argumentsText: "{}" },
      { index: 1, name: "search" },
      // A server that numbers every call 0: the same index under another id is another call.
      { index: 0, id: "c", name: "fetch", argumentsText: '{"url":"x"}' },
    ]);
    expect(calls.map((c: any) => [c.id, c.name, c.arguments])).toEqual([
      ["a", "get_weather", { city: "Oslo" }],
      ["c", "fetch", { url: "x" }],
      ["b", "search", {}],
    ]);
  });

  it("throws ProviderTransportError incomplete_delta for a group without an id or a name", () => {
    const { ProviderTransportError } = require("../index.js");
    const incomplete = (events: object[]) => {
      try {
        reconstructToolCallDeltas(events as any);
      } catch (e: any) {
        expect(e).toBeInstanceOf(ProviderTransportError);
        return [e.code, e.message];
      }
      return "no error";
    };
    expect(incomplete([{ index: 3, name: "t", argumentsText: "{}" }])).toEqual(["incomplete_delta", "Incomplete tool call delta at index 3"]);
    expect(incomplete([{ index: 0, id: "c1", argumentsText: "{}" }])).toEqual(["incomplete_delta", "Incomplete tool call delta at index 0"]);
    // One incomplete group fails the whole list: no complete sibling is returned to run.
    expect(incomplete([{ index: 0, id: "ok", name: "t", argumentsText: "{}" }, { index: 1, id: "bad", argumentsText: "{}" }])).toEqual([
      "incomplete_delta",
      "Incomplete tool call delta at index 1",
    ]);
  });

  it("turns malformed or oversized streamed text into argumentsError", () => {
    const [bad] = reconstructToolCallDeltas([{ index: 0, id: "a", name: "t", argumentsDelta: '{"q":' }]);
    expect(bad.argumentsError).toEqual(error("Invalid tool arguments JSON for tool t: EOF while parsing a value at line 1 column 5"));
    const chunks = Array.from({ length: 100 }, () => ({ index: 0, id: "a", name: "t", argumentsDelta: "x".repeat(1_000) }));
    const [big] = reconstructToolCallDeltas(chunks, { maxBytes: 10_000 });
    expect(big.argumentsError).toEqual(error("Tool arguments for tool t exceeded 10000 bytes"));
  });

  it("validates the reconstructed text in one pass", () => {
    const { createJsonSchemaToolArgumentValidator } = require("../index.js");
    const v = createJsonSchemaToolArgumentValidator();
    const [call] = reconstructToolCallDeltas([{ index: 0, id: "a", name: "t", argumentsDelta: '{"q":5}' }]);
    expect(v({ name: "t", parameters: { properties: { q: { type: "string" } } } }, call.arguments)).toBe(
      "/q: expected string, found integer 5",
    );
  });
});
