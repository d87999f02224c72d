// Tool definitions that say more to the provider (issue 47 items 3, 4 and 7): `strict`, `inputExamples`
// and `deferLoading`, and a provider's tool cap. Registration refuses what a provider would refuse; the
// request bodies are asserted field by field on a real HTTP server on 127.0.0.1.
import { describe, expect, it } from "vitest";
import { createAgent, createToolRegistry, type ToolDefinition } from "../index.mjs";
import { createOpenAICompatibleProvider } from "../providers/openai-compatible.mjs";
import { createAnthropicMessagesProvider, toAnthropicTools } from "../providers/anthropic.mjs";
import { serveForTest, sse, type Reply } from "./helpers/sse-server";
import { chunk, DONE } from "./helpers/provider-replies";

const oaModel = { provider: "openai-compatible", model: "m", capabilities: { tools: true } };
const anModel = { provider: "anthropic", model: "claude", capabilities: { tools: true } };
const oaText = (text: string): Reply => ({ chunks: [chunk({ content: text }), chunk({}, "stop"), DONE] });
const oaCall = (id: string, name: string, args: object): Reply => ({
  chunks: [chunk({ tool_calls: [{ index: 0, id, type: "function", function: { name, arguments: JSON.stringify(args) } }] }), chunk({}, "tool_calls"), DONE],
});
const ev = (data: { type: string } & Record<string, unknown>) => sse(data, data.type);
const anStart = ev({ type: "message_start", message: { id: "msg", usage: { input_tokens: 1, output_tokens: 0 } } });
const anEnd = (stop: string) => [ev({ type: "message_delta", delta: { stop_reason: stop }, usage: { output_tokens: 1 } }), ev({ type: "message_stop" })];
const anText = (text: string): Reply => ({
  chunks: [
    anStart,
    ev({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }),
    ev({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text } }),
    ev({ type: "content_block_stop", index: 0 }),
    ...anEnd("end_turn"),
  ],
});

// A strict schema: closed objects, every property required, the optional one nullable.
const strictParameters = {
  type: "object",
  properties: {
    city: { type: "string", description: "City name" },
    unit: { type: ["string", "null"], enum: ["c", "f", null] },
    when: { type: "object", properties: { date: { type: "string", format: "date" } }, required: ["date"], additionalProperties: false },
  },
  required: ["city", "unit", "when"],
  additionalProperties: false,
};

function tool(name: string, extra: Partial<ToolDefinition<any>> = {}, log: unknown[] = []): ToolDefinition<any> {
  return {
    name,
    description: `The ${name} tool.`,
    parameters: { type: "object", properties: { q: { type: "string" } }, required: ["q"] },
    execute: (args: any) => (log.push([name, args]), { ok: name }),
    ...extra,
  };
}

const refusal = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    return err as Error & { code?: string; keyword?: string; path?: string; index?: number };
  }
  throw new Error("expected a refusal");
};

describe("strict: true at registration", () => {
  it("registers a schema in the strict subset, as written", () => {
    const weather = tool("weather", { strict: true, parameters: strictParameters });
    const registry = createToolRegistry([weather]);
    expect(registry.get("weather")).toBe(weather);
    expect(weather.parameters).toEqual(strictParameters);
  });

  it("refuses each schema a strict provider would refuse, naming the tool, the keyword and its path", () => {
    const cases: Array<[object, string, string]> = [
      [{ ...strictParameters, required: ["city", "when"] }, "required", "/properties/unit"],
      [{ type: "object", properties: { q: { type: "string", minLength: 1 } }, required: ["q"], additionalProperties: false }, "minLength", "/properties/q"],
      [{ type: "object", properties: { q: { type: "string" } }, required: ["q"] }, "additionalProperties", ""],
      [{ type: "object", properties: { n: { oneOf: [{ type: "string" }, { type: "integer" }] } }, required: ["n"], additionalProperties: false }, "oneOf", "/properties/n"],
      [{ type: "object", properties: { u: { type: "string", format: "uri" } }, required: ["u"], additionalProperties: false }, "format", "/properties/u"],
      [{ type: "object", properties: { n: { type: "integer", maximum: 9 } }, required: ["n"], additionalProperties: false }, "maximum", "/properties/n"],
      [{ type: "object", properties: { q: { type: "string", default: "x" } }, required: ["q"], additionalProperties: false }, "default", "/properties/q"],
      [{ type: "object", properties: { m: { type: "object", additionalProperties: { type: "string" } } }, required: ["m"], additionalProperties: false }, "additionalProperties", "/properties/m"],
      [
        {
          type: "object",
          properties: { tree: { $ref: "#/$defs/node" } },
          required: ["tree"],
          additionalProperties: false,
          $defs: { node: { type: "object", properties: { kids: { type: "array", items: { $ref: "#/$defs/node" } } }, required: ["kids"], additionalProperties: false } },
        },
        "$ref",
        "/$defs/node",
      ],
      [{ type: "object", properties: { x: { $ref: "https://example.com/s.json" } }, required: ["x"], additionalProperties: false }, "$ref", "/properties/x"],
    ];
    for (const [parameters, keyword, path] of cases) {
      const err = refusal(() => createToolRegistry([tool("t1", { strict: true, parameters: parameters as any })]));
      expect(err.code, JSON.stringify(parameters)).toBe("ERR_PRISM_INVALID_TOOL");
      expect(err.message).toContain("Tool t1: strict mode cannot take");
      expect([err.keyword, err.path], JSON.stringify(parameters)).toEqual([keyword, path]);
      expect(err.message).toContain(`"${keyword}"`);
    }
  });

  it("refuses a root that is not one object schema", () => {
    for (const parameters of [{ anyOf: [{ type: "object" }] }, { type: "array" }, undefined]) {
      const err = refusal(() => createToolRegistry([tool("t1", { strict: true, parameters: parameters as any })]));
      expect(err.code).toBe("ERR_PRISM_INVALID_TOOL");
      expect(err.message).toMatch(/^Tool t1: strict mode needs `parameters`/);
    }
  });

  it("refuses at createAgent and at registry.register, and a strict that is not a boolean", () => {
    const bad = tool("loose", { strict: true });
    expect(refusal(() => createAgent({ model: oaModel, tools: [bad] }))).toMatchObject({ code: "ERR_PRISM_INVALID_TOOL", keyword: "additionalProperties" });
    const registry = createToolRegistry();
    expect(refusal(() => registry.register(bad))).toMatchObject({ code: "ERR_PRISM_INVALID_TOOL" });
    expect(registry.get("loose")).toBeUndefined();
    expect(refusal(() => createToolRegistry([tool("t", { strict: "yes" as any })])).message).toBe("Tool t: strict must be a boolean");
    expect(refusal(() => createToolRegistry([tool("t", { deferLoading: 1 as any })])).message).toBe("Tool t: deferLoading must be a boolean");
  });
});

describe("inputExamples at registration", () => {
  it("refuses an example that does not match the schema, naming the tool, the index and the path", () => {
    const parameters = { type: "object", properties: { q: { type: "string" }, limit: { type: "integer", minimum: 1 } }, required: ["q"] };
    const err = refusal(() => createToolRegistry([tool("search", { parameters, inputExamples: [{ q: "a" }, { q: "b", limit: 0 }] })]));
    expect(err.code).toBe("ERR_PRISM_INVALID_TOOL");
    expect(err.message).toMatch(/^Tool search: inputExamples\[1\] does not match its parameters at \/limit: /);
    expect([err.index, err.path]).toEqual([1, "/limit"]);
    expect(() => createToolRegistry([tool("search", { parameters, inputExamples: [{ q: "a" }, { q: "b", limit: 3 }] })])).not.toThrow();
  });

  it("bounds the examples: an array of objects, at most 20, each at most 16 KiB of JSON", () => {
    const at = (inputExamples: unknown) => refusal(() => createToolRegistry([tool("t", { parameters: undefined, inputExamples: inputExamples as any })])).message;
    expect(at({ q: "x" })).toBe("Tool t: inputExamples must be an array of argument objects");
    expect(at([{ q: "x" }, "q=x"])).toBe("Tool t: inputExamples[1] must be an object of arguments");
    expect(at(Array.from({ length: 21 }, () => ({ q: "x" })))).toBe("Tool t: inputExamples has 21 examples; at most 20");
    expect(at([{ q: "x".repeat(17 * 1024) }])).toBe("Tool t: inputExamples[0] is over 16384 bytes of JSON");
    const cyclic: any = { q: "x" };
    cyclic.self = cyclic;
    expect(at([cyclic])).toMatch(/^Tool t: inputExamples\[0\] is not JSON/);
  });
});

describe("strict and inputExamples in the requests", () => {
  it("OpenAI-compatible: function.strict and the schema as registered; examples at the end of the description, bounded", async () => {
    const server = await serveForTest([oaText("ok")]);
    const big = Array.from({ length: 20 }, (_, i) => ({ city: `c${i}-${"x".repeat(150)}`, unit: null, when: { date: "2026-01-01" } }));
    const tools = [
      tool("weather", { strict: true, parameters: strictParameters, inputExamples: [{ city: "Lyon", unit: "c", when: { date: "2026-12-24" } }] }),
      tool("forecast", { parameters: strictParameters, inputExamples: big }),
      tool("plain"),
    ];
    await createAgent({ model: oaModel, provider: createOpenAICompatibleProvider({ baseUrl: server.url }), tools }).createSession().run("x");
    const [weather, forecast, plain] = server.requests[0].body.tools;
    expect(weather).toEqual({
      type: "function",
      function: {
        name: "weather",
        description: 'The weather tool.\n\nExample inputs:\n{"city":"Lyon","unit":"c","when":{"date":"2026-12-24"}}',
        parameters: strictParameters,
        strict: true,
      },
    });
    // Whole examples only, as many as fit in 2 KiB (a line and its newline each).
    const lines = forecast.function.description.split("\n").slice(3);
    let fit = 0;
    for (let bytes = 0; fit < big.length && bytes + JSON.stringify(big[fit]).length + 1 <= 2048; fit++) bytes += JSON.stringify(big[fit]).length + 1;
    expect(fit).toBeGreaterThan(1);
    expect(fit).toBeLessThan(big.length);
    expect(lines.map((l: string) => JSON.parse(l))).toEqual(big.slice(0, fit));
    expect(forecast.function.description.startsWith("The forecast tool.\n\nExample inputs:\n")).toBe(true);
    expect(forecast.function).not.toHaveProperty("strict");
    expect(plain).toEqual({ type: "function", function: { name: "plain", description: "The plain tool.", parameters: tool("plain").parameters } });
  });

  it("Anthropic: strict and input_examples on the tool; nothing added to a tool without them", async () => {
    const server = await serveForTest([anText("ok")]);
    const examples = [{ city: "Lyon", unit: "c", when: { date: "2026-12-24" } }];
    const tools = [tool("weather", { strict: true, parameters: strictParameters, inputExamples: examples }), tool("plain")];
    await createAgent({ model: anModel, provider: createAnthropicMessagesProvider({ baseUrl: server.url }), tools }).createSession().run("x");
    expect(server.requests[0].body.tools).toEqual([
      { name: "weather", description: "The weather tool.", input_schema: strictParameters, strict: true, input_examples: examples },
      { name: "plain", description: "The plain tool.", input_schema: tool("plain").parameters },
    ]);
  });
});

describe("deferLoading with Anthropic's tool search", () => {
  it("sends deferred tools with defer_loading and the bm25 search last; regex on request; none when nothing is deferred", () => {
    const tools = [tool("a"), tool("b", { deferLoading: true })];
    expect(toAnthropicTools(tools)).toEqual([
      { name: "a", description: "The a tool.", input_schema: tools[0].parameters },
      { name: "b", description: "The b tool.", input_schema: tools[1].parameters, defer_loading: true },
      { type: "tool_search_tool_bm25_20251119", name: "tool_search_tool_bm25" },
    ]);
    expect(toAnthropicTools(tools, { toolSearch: "regex" }).at(-1)).toEqual({ type: "tool_search_tool_regex_20251119", name: "tool_search_tool_regex" });
    expect(toAnthropicTools([tool("a")])).toHaveLength(1);
    expect(() => createAnthropicMessagesProvider({ toolSearch: "fuzzy" as any })).toThrow('createAnthropicMessagesProvider: toolSearch must be "bm25" or "regex"');
  });

  it("runs the deferred tool the provider's search found, never its search call, and replays the search before it", async () => {
    const searchTurn: Reply = {
      chunks: [
        anStart,
        ev({ type: "content_block_start", index: 0, content_block: { type: "server_tool_use", id: "srvtoolu_1", name: "tool_search_tool_bm25", input: {} } }),
        ev({ type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json: '{"query":"weather"}' } }),
        ev({ type: "content_block_stop", index: 0 }),
        ev({
          type: "content_block_start",
          index: 1,
          content_block: { type: "tool_search_tool_result", tool_use_id: "srvtoolu_1", content: { type: "tool_search_tool_search_result", tool_references: [{ type: "tool_reference", tool_name: "weather" }] } },
        }),
        ev({ type: "content_block_stop", index: 1 }),
        ev({ type: "content_block_start", index: 2, content_block: { type: "tool_use", id: "toolu_1", name: "weather", input: {} } }),
        ev({ type: "content_block_delta", index: 2, delta: { type: "input_json_delta", partial_json: '{"q":"Lyon"}' } }),
        ev({ type: "content_block_stop", index: 2 }),
        ...anEnd("tool_use"),
      ],
    };
    const server = await serveForTest([searchTurn, anText("sunny")]);
    const log: unknown[] = [];
    const tools = [tool("echo", {}, log), tool("weather", { deferLoading: true }, log)];
    const result = await createAgent({ model: anModel, provider: createAnthropicMessagesProvider({ baseUrl: server.url }), tools }).createSession().run("weather in Lyon?");
    expect(result.status).toBe("succeeded");
    expect(log).toEqual([["weather", { q: "Lyon" }]]);
    const [first, second] = server.requests.map((r) => r.body);
    expect(first.tools.map((t: any) => [t.name, t.defer_loading])).toEqual([["echo", undefined], ["weather", true], ["tool_search_tool_bm25", undefined]]);
    const assistant = second.messages[1];
    expect(assistant.role).toBe("assistant");
    expect(assistant.content).toEqual([
      { type: "server_tool_use", id: "srvtoolu_1", name: "tool_search_tool_bm25", input: { query: "weather" } },
      { type: "tool_search_tool_result", tool_use_id: "srvtoolu_1", content: { type: "tool_search_tool_search_result", tool_references: [{ type: "tool_reference", tool_name: "weather" }] } },
      { type: "tool_use", id: "toolu_1", name: "weather", input: { q: "Lyon" } },
    ]);
    expect(second.messages[2].content).toEqual([{ type: "tool_result", tool_use_id: "toolu_1", content: JSON.stringify({ ok: "weather" }) }]);
  });
});

describe("deferLoading elsewhere: search_tools discloses", () => {
  it("withholds a deferred tool until search_tools finds it, then sends it", async () => {
    const server = await serveForTest([oaCall("call_s", "search_tools", { query: "weather forecast" }), oaCall("call_w", "weather", { q: "Lyon" }), oaText("sunny")]);
    const log: unknown[] = [];
    const tools = [tool("echo", {}, log), tool("weather", { deferLoading: true, description: "Weather forecast for a city." }, log)];
    const result = await createAgent({ model: oaModel, provider: createOpenAICompatibleProvider({ baseUrl: server.url }), tools }).createSession().run("weather in Lyon?");
    expect(result.status).toBe("succeeded");
    expect(log).toEqual([["weather", { q: "Lyon" }]]);
    const names = server.requests.map((r) => r.body.tools.map((t: any) => t.function.name));
    expect(names).toEqual([
      ["echo", "search_tools"],
      ["echo", "weather", "search_tools"],
      ["echo", "weather", "search_tools"],
    ]);
  });

  it("with Anthropic's toolSearch: false, the agent's search_tools discloses and no defer_loading is sent", async () => {
    const server = await serveForTest([anText("ok")]);
    const tools = [tool("echo"), tool("weather", { deferLoading: true })];
    await createAgent({ model: anModel, provider: createAnthropicMessagesProvider({ baseUrl: server.url, toolSearch: false }), tools }).createSession().run("x");
    expect(server.requests[0].body.tools.map((t: any) => [t.name, t.defer_loading, t.type])).toEqual([
      ["echo", undefined, undefined],
      ["search_tools", undefined, undefined],
    ]);
  });
});

describe("a provider's tool cap", () => {
  const many = (n: number) => Array.from({ length: n }, (_, i) => tool(`tool_${i}`, { description: i === 7 ? "Convert currency amounts." : `Tool number ${i}.` }));

  it("OpenAI-compatible: a request over maxTools (128 by default) fails naming the cap; the provider says its cap", async () => {
    const server = await serveForTest([]);
    const provider = createOpenAICompatibleProvider({ baseUrl: server.url });
    expect(provider.maxTools).toBe(128);
    const events: any[] = [];
    for await (const e of provider.generate({ model: oaModel, messages: [{ role: "user", content: [{ type: "text", text: "x" }] }], tools: many(129) } as any)) events.push(e);
    expect(events).toHaveLength(1);
    expect(events[0].type).toBe("error");
    expect(events[0].error.message).toContain("the request has 129 tools and this provider takes at most 128 (maxTools)");
    expect(server.requests).toHaveLength(0);
    expect(() => createOpenAICompatibleProvider({ baseUrl: server.url, maxTools: 0 })).toThrow("createOpenAICompatibleProvider: maxTools must be a positive integer");
  });

  it("an agent's turn over the cap falls back to search disclosure and stays within it", async () => {
    const server = await serveForTest([oaText("ok")]);
    const provider = createOpenAICompatibleProvider({ baseUrl: server.url, maxTools: 4 });
    const result = await createAgent({ model: oaModel, provider, tools: many(10) }).createSession().run("convert currency amounts please");
    expect(result.status).toBe("succeeded");
    const names = server.requests[0].body.tools.map((t: any) => t.function.name);
    expect(names.length).toBeLessThanOrEqual(4);
    expect(names).toContain("tool_7");
    expect(names.at(-1)).toBe("search_tools");
  });

  it("an agent's turn that cannot be brought under the cap fails with ERR_PRISM_TOOL_CAP", async () => {
    const server = await serveForTest([oaText("ok")]);
    const provider = createOpenAICompatibleProvider({ baseUrl: server.url, maxTools: 2 });
    const session = createAgent({ model: oaModel, provider, tools: many(5) }).createSession({ state: { activatedToolNames: ["tool_1", "tool_2", "tool_3"] } as any });
    const result = await session.run("x").catch((e: any) => e.result);
    expect(result.status).toBe("failed");
    expect(result.error).toMatchObject({ code: "ERR_PRISM_TOOL_CAP" });
    expect(result.error.message).toContain("the provider takes at most 2 (maxTools)");
    expect(server.requests).toHaveLength(0);
  });
});
