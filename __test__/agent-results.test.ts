import { createServer } from "node:http";
import { describe, expect, it } from "vitest";
import { createAgent, createMemoryRunLedger, createMockProvider, providerDone, providerToolCall, toolCallContent, type ProviderRequest, type ToolDefinition } from "../index.mjs";
import { createOpenAICompatibleProvider } from "../providers/openai-compatible.mjs";
// @ts-ignore -- the modules' own tests
import { cutText } from "../lib/output-budget.js";
import { resolveToolResultFold } from "../index.mjs";

const model = { provider: "mock", model: "demo" };
const call = (args: unknown, id = "c1", name = "t") => providerToolCall(toolCallContent(id, name, args as any));

// Runs one tool call then a final turn; answers the tool message the second request carried.
async function followUp(tool: ToolDefinition, args: unknown = {}, config: any = {}) {
  const requests: ProviderRequest[] = [];
  const provider = createMockProvider([[call(args), providerDone()], [providerDone()]], { onRequest: (r) => void requests.push(structuredClone({ messages: r.messages })) as any });
  const session = createAgent({ model, provider, tools: [tool], ...config }).createSession();
  const result = await session.run("x");
  const toolMessage = requests[1]?.messages.find((m: any) => m.role === "tool") as any;
  return { result, block: toolMessage?.content[0], message: toolMessage, session };
}

describe("validation on by default", () => {
  const city: ToolDefinition = { name: "t", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] }, execute: (args: any) => ({ value: `ran ${args.city}` }) };

  it("checks arguments against parameters without a validator; validator: false turns it off", async () => {
    const on = await followUp(city, { city: 42 });
    expect(on.block.error.message).toContain("/city: expected string");
    expect(on.block.result).toBeUndefined();
    const off = await followUp(city, { city: 42 }, { validator: false });
    expect(off.block.result).toBe("ran 42");
    const valid = await followUp(city, { city: "Oslo" });
    expect(valid.block.result).toBe("ran Oslo");
  });
});

describe("bare tool results", () => {
  class Point { constructor(public x: number) {} }
  const shapes: [string, unknown, unknown][] = [
    ["number", 42, 42],
    ["string", "hi", "hi"],
    ["array", [1, 2], [1, 2]],
    ["null", null, null],
    ["domain object", new Point(3), { x: 3 }],
    ["plain object without result keys", { a: 1 }, { a: 1 }],
    ["{ value } only", { value: 7 }, 7],
    ["empty ids", { toolCallId: "", name: "", value: 8 }, 8],
  ];
  for (const [label, returned, expected] of shapes) {
    it(`${label}: the follow-up request carries the call's id and name`, async () => {
      const { block, result } = await followUp({ name: "t", parameters: { type: "object" }, execute: async () => returned as any });
      expect(result.status).toBe("succeeded");
      expect(block).toMatchObject({ toolCallId: "c1", name: "t" });
      expect(block.result).toEqual(expected);
    });
  }

  it("an OpenAI-compatible endpoint gets tool_call_id, never an empty one", async () => {
    const bodies: any[] = [];
    const server = createServer((req, res) => {
      let body = "";
      req.on("data", (c) => (body += c));
      req.on("end", () => {
        bodies.push(JSON.parse(body));
        res.writeHead(200, { "content-type": "text/event-stream" });
        const delta = bodies.length === 1 ? { tool_calls: [{ index: 0, id: "call_9", type: "function", function: { name: "t", arguments: "{}" } }] } : { content: "done" };
        res.write(`data: ${JSON.stringify({ id: "x", choices: [{ index: 0, delta, finish_reason: null }] })}\n\n`);
        res.write(`data: ${JSON.stringify({ id: "x", choices: [{ index: 0, delta: {}, finish_reason: bodies.length === 1 ? "tool_calls" : "stop" }] })}\n\n`);
        res.end("data: [DONE]\n\n");
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    try {
      const port = (server.address() as any).port;
      const provider = createOpenAICompatibleProvider({ baseUrl: `http://127.0.0.1:${port}`, retry: false });
      const agent = createAgent({ model: { provider: "openai-compatible", model: "m" }, provider, tools: [{ name: "t", parameters: { type: "object" }, execute: () => ({ value: 5 }) as any }] });
      const result = await agent.createSession().run("x");
      expect(result.status).toBe("succeeded");
      const toolMsg = bodies[1].messages.find((m: any) => m.role === "tool");
      expect(toolMsg.tool_call_id).toBe("call_9");
    } finally {
      server.close();
    }
  });
});

describe("output budgets", () => {
  it("cuts head + marker + tail within maxBytes, never inside a character", () => {
    for (const [text, max] of [["a".repeat(1000), 100], ["é".repeat(1000), 101], ["😀".repeat(500), 77], ["a😀".repeat(300), 64]] as const) {
      const cut = cutText(text, max)!;
      expect(Buffer.byteLength(cut.text)).toBeLessThanOrEqual(max);
      expect(cut.text).not.toContain("\ufffd");
      expect(cut.text).toContain(`…[${cut.omittedBytes} bytes omitted]…`);
      const [head, tail] = cut.text.split(/\n…\[\d+ bytes omitted\]…\n/);
      expect(text.startsWith(head)).toBe(true);
      expect(text.endsWith(tail)).toBe(true);
      expect(Buffer.byteLength(head) + Buffer.byteLength(tail) + cut.omittedBytes).toBe(Buffer.byteLength(text));
    }
    expect(cutText("short", 64)).toBeUndefined();
  });

  it("the agent's toolOutputBudget and a tool's outputBudget (the tool's wins); the ledger row says it was cut", async () => {
    const big = "H" + "x".repeat(10_000) + "T";
    const tool: ToolDefinition = { name: "t", parameters: { type: "object" }, execute: () => big as any };
    const ledger = createMemoryRunLedger();
    const agentLevel = await followUp(tool, {}, { toolOutputBudget: { maxBytes: 200 }, runLedger: ledger });
    expect(Buffer.byteLength(agentLevel.block.result)).toBeLessThanOrEqual(200);
    expect(agentLevel.block.result.startsWith("H")).toBe(true);
    expect(agentLevel.block.result.endsWith("T")).toBe(true);
    expect(agentLevel.message.metadata.outputBudget).toMatchObject({ cut: true, originalBytes: 10_002, maxBytes: 200 });
    const rows = (ledger as any).list("tool_call");
    const done = rows.find((r: any) => r.status === "finished") as any;
    expect(done.result.metadata.outputBudget).toMatchObject({ cut: true, originalBytes: 10_002 });
    const toolLevel = await followUp({ ...tool, outputBudget: { maxBytes: 100 } } as any, {}, { toolOutputBudget: { maxBytes: 200 } });
    expect(Buffer.byteLength(toolLevel.block.result)).toBeLessThanOrEqual(100);
    const none = await followUp(tool);
    expect(none.block.result).toBe(big);
  });

  it("a bad budget is refused with code invalid_output_budget", () => {
    for (const budget of [{ maxBytes: 10 }, { maxBytes: 1.5 }, { maxBytes: "1k" }, 5]) {
      expect(() => createAgent({ model, provider: createMockProvider([providerDone()]), toolOutputBudget: budget } as any)).toThrow(expect.objectContaining({ code: "invalid_output_budget" }));
    }
  });
});

describe("toolResultFold", () => {
  it("folds old large results in later requests only; the transcript keeps them whole", async () => {
    const big = "payload-" + "x".repeat(5000);
    const requests: any[] = [];
    const provider = createMockProvider([[call({}), providerDone()], [call({}, "c2"), providerDone()], [call({}, "c3"), providerDone()], [providerDone()]], { onRequest: (r) => void requests.push(JSON.stringify(r.messages)) });
    const seen: any[] = [];
    const session = createAgent({ model, provider, tools: [{ name: "t", parameters: { type: "object" }, execute: () => big as any }], toolResultFold: { summarize: (i: any) => (seen.push(i), `ref ${i.toolCallId}`) } }).createSession();
    await session.run("x");
    expect(requests[1]).toContain("payload-xxx");
    expect(requests[3]).toContain("Tool result t [c1]: ref c1");
    expect(seen[0]).toMatchObject({ toolCallId: "c1", toolName: "t", turn: 1 });
    expect(JSON.stringify(session.messages())).not.toContain("Tool result t [c1]");
  });

  it("options are checked with upstream's messages; off without summarize", () => {
    expect(resolveToolResultFold(undefined, undefined)).toBeUndefined();
    expect(() => resolveToolResultFold({ summarize: () => "", maxSummaryBytes: 4097 })).toThrow("toolResultFold.maxSummaryBytes must be a safe integer from 1 to 4096");
    expect(() => createAgent({ model, provider: createMockProvider([providerDone()]), toolResultFold: { summarize: () => "", minAgeTurns: 0 } } as any)).toThrow(expect.objectContaining({ code: "invalid_tool_result_fold" }));
  });
});
