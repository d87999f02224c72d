// prism-tools-native/ai-sdk under the real AI SDK 7 (`ai`), with its own mock language model
// (`ai/test`'s MockLanguageModelV4): every call goes through this package's dispatch.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { generateText, jsonSchema, stepCountIs, streamText, tool, type ModelMessage } from "ai";
import { MockLanguageModelV4, convertArrayToReadableStream } from "ai/test";
import * as z from "zod";
import { createMemoryRunLedger, createMemoryToolEffectStore, createSqliteCheckpointStore, createStaticPermissionPolicy, createToolRegistry } from "../index.mjs";
import { aiSdkPrepareStep, aiSdkToolApproval, createApprovalGate, fromAiSdkTools, localIdentity, toAiSdkTools } from "../ai-sdk/index.mjs";

const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } };
type Call = { id: string; name: string; input: unknown };
const toolTurn = (...calls: Call[]) => ({
  content: calls.map((c) => ({ type: "tool-call" as const, toolCallId: c.id, toolName: c.name, input: JSON.stringify(c.input) })),
  finishReason: { unified: "tool-calls" as const, raw: undefined },
  usage,
  warnings: [],
});
const textTurn = (text = "done") => ({ content: [{ type: "text" as const, text }], finishReason: { unified: "stop" as const, raw: undefined }, usage, warnings: [] });
const model = (...turns: any[]) => new MockLanguageModelV4({ doGenerate: turns });
const streamModel = (...turns: any[][]) =>
  new MockLanguageModelV4({ doStream: turns.map((parts) => ({ stream: convertArrayToReadableStream([{ type: "stream-start", warnings: [] }, ...parts]) })) });

// The tool message the model was sent at request `n` (the results of the step before it).
function toolResultsSent(m: MockLanguageModelV4, n: number, stream = false): any[] {
  const prompt = (stream ? m.doStreamCalls : m.doGenerateCalls)[n].prompt;
  return prompt.filter((p: any) => p.role === "tool").flatMap((p: any) => p.content);
}

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), "prism-ai-sdk-"));
  dirs.push(d);
  return d;
};

const chargeParams = { type: "object", properties: { amount: { type: "number", minimum: 1 } }, required: ["amount"], additionalProperties: false } as const;

describe("toAiSdkTools under generateText", () => {
  it("a call with invalid arguments is a tool error naming the field, and the tool does not run", async () => {
    let ran = 0;
    const tools = toAiSdkTools([{ name: "charge", description: "Charge", parameters: chargeParams, execute: () => (ran++, { ok: true }) }]);
    const m = model(toolTurn({ id: "c1", name: "charge", input: { amount: "ten" } }), textTurn());
    const r = await generateText({ model: m, tools, prompt: "charge ten", stopWhen: stepCountIs(3) });
    expect(ran).toBe(0);
    expect(r.text).toBe("done");
    const [sent] = toolResultsSent(m, 1);
    expect(sent).toMatchObject({ type: "tool-result", toolCallId: "c1", toolName: "charge", output: { type: "error-text" } });
    expect(sent.output.value).toMatch(/Tool charge: \/amount: expected number/);
  });

  it("an AI SDK zod tool: JSON Schema validation first, then zod's own parse (defaults apply before execute)", async () => {
    const seen: unknown[] = [];
    const set = {
      weather: tool({
        description: "Weather for a city",
        inputSchema: z.object({ city: z.string().min(2), units: z.enum(["c", "f"]).default("c") }),
        execute: async (input) => (seen.push(input), { tempC: 21 }),
      }),
    };
    const tools = toAiSdkTools(set);
    const m = model(toolTurn({ id: "w1", name: "weather", input: { city: "Paris" } }, { id: "w2", name: "weather", input: { city: 7 } }), textTurn());
    await generateText({ model: m, tools, prompt: "weather", stopWhen: stepCountIs(3) });
    expect(seen).toEqual([{ city: "Paris", units: "c" }]);
    const sent = toolResultsSent(m, 1);
    expect(sent.find((p) => p.toolCallId === "w1").output).toEqual({ type: "json", value: { tempC: 21 } });
    expect(sent.find((p) => p.toolCallId === "w2").output.value).toMatch(/Tool weather: \/city: expected string/);
  });

  it("zod's .nullable() (an anyOf) names the bound the value broke, with the validation_failed reason", async () => {
    let ran = 0;
    const ledger = createMemoryRunLedger();
    const tools = toAiSdkTools({ rate: tool({ inputSchema: z.object({ stars: z.number().max(5).nullable() }), execute: async () => (ran++, "ok") }) }, { ledger });
    const m = model(toolTurn({ id: "r1", name: "rate", input: { stars: 9 } }), textTurn());
    await generateText({ model: m, tools, prompt: "rate", stopWhen: stepCountIs(3) });
    expect(ran).toBe(0);
    const message = "/stars: expected a value matching at least one of the anyOf schemas, found integer 9 (branch 1: expected a number <= 5; branch 2: expected null)";
    expect(toolResultsSent(m, 1)[0].output.value).toContain(`Tool rate: ${message}`);
    // Its code, as upstream's validation failures carry it: the blocked reason, in the row and the event.
    const [row] = ledger.list("tool_call") as any[];
    expect(row).toMatchObject({ status: "blocked", reason: "validation_failed", result: { error: { message } } });
  });

  it("a secret in a result never reaches the next model request", async () => {
    const secret = "sk-live-7f3a9c1e";
    const tools = toAiSdkTools([{ name: "lookup", parameters: { type: "object", properties: {} }, execute: () => ({ apiKey: secret, note: `key ${secret}` }) }], { secrets: [secret] });
    const m = model(toolTurn({ id: "l1", name: "lookup", input: {} }), textTurn());
    await generateText({ model: m, tools, prompt: "look up", stopWhen: stepCountIs(3) });
    const next = JSON.stringify(m.doGenerateCalls[1].prompt);
    expect(next).not.toContain(secret);
    expect(next).toContain("[REDACTED]");
  });

  it("a retried effect runs once and leaves ledger rows; with content call ids a new model id is the same call", async () => {
    let charged = 0;
    const effectStore = createMemoryToolEffectStore();
    const ledger = createMemoryRunLedger();
    const charge = {
      name: "charge",
      parameters: chargeParams,
      effect: { kind: "external_mutation", idempotency: "required" },
      execute: (args: any, ctx: any) => (charged++, { receipt: `r-${args.amount}`, key: ctx.idempotencyKey }),
    };
    const options = { effectStore, ledger, identity: localIdentity({ user: "ana", host: "laptop" }), context: { sessionId: "s1", runId: "order-42" }, callIds: "content" as const };
    // The first run, then a retry of the whole request whose model gives the call another id.
    const first = model(toolTurn({ id: "call_A", name: "charge", input: { amount: 5 } }), textTurn());
    await generateText({ model: first, tools: toAiSdkTools([charge], options), prompt: "charge 5", stopWhen: stepCountIs(3) });
    const retry = model(toolTurn({ id: "call_B", name: "charge", input: { amount: 5 } }), textTurn());
    await generateText({ model: retry, tools: toAiSdkTools([charge], options), prompt: "charge 5", stopWhen: stepCountIs(3) });
    expect(charged).toBe(1);
    const [again] = toolResultsSent(retry, 1);
    expect(again.output).toMatchObject({ type: "json", value: { receipt: "r-5" } });
    const rows = ledger.list("tool_call") as any[];
    // One started row (the one execution) and a finished row for each of the two calls.
    expect(rows.map((r) => r.status)).toEqual(["started", "finished", "finished"]);
    expect(rows.every((r) => r.name === "charge" && r.sessionId === "s1" && r.runId === "order-42")).toBe(true);
  });

  it("a durable effect without a store or identity is refused when the tools are adapted, naming the tool and the fix", () => {
    const charge = { name: "charge", parameters: chargeParams, effect: { kind: "external_mutation", idempotency: "required" }, execute: () => ({}) };
    // Neither: one error names both fixes.
    expect(() => toAiSdkTools([charge])).toThrow(
      expect.objectContaining({ code: "ERR_PRISM_TOOL_EFFECT_REQUIRED", message: expect.stringMatching(/Tool charge declares effect .*pass options\.effectStore .*, and options\.identity .*localIdentity\(\)/) }),
    );
    // An identity but no store: only the store is named.
    let noStore: unknown;
    try {
      toAiSdkTools([charge], { identity: localIdentity() });
    } catch (e) {
      noStore = e;
    }
    expect(noStore).toMatchObject({ code: "ERR_PRISM_TOOL_EFFECT_REQUIRED", message: expect.stringMatching(/pass options\.effectStore \(createSqliteToolEffectStore\(path\), or createMemoryToolEffectStore\(\) in tests\)$/) });
    expect(() => toAiSdkTools([charge], { effectStore: createMemoryToolEffectStore() })).toThrow(
      expect.objectContaining({ code: "ERR_PRISM_IDENTITY", message: expect.stringMatching(/Tool charge .*pass options\.identity .*localIdentity\(\)/) }),
    );
  });

  it("a call the permission policy denies is a tool error, and a filtered tool is not offered", async () => {
    let ran = 0;
    const registry = createToolRegistry([
      { name: "read", parameters: { type: "object", properties: {} }, execute: () => "ok" },
      { name: "delete_all", parameters: { type: "object", properties: {} }, execute: () => (ran++, "gone") },
    ]);
    expect(Object.keys(toAiSdkTools(registry, { filter: { deny: ["delete_all"] } }))).toEqual(["read"]);
    const tools = toAiSdkTools(registry, { permission: createStaticPermissionPolicy({ allow: ["read"] }) });
    const m = model(toolTurn({ id: "d1", name: "delete_all", input: {} }), textTurn());
    await generateText({ model: m, tools, prompt: "x", stopWhen: stepCountIs(3) });
    expect(ran).toBe(0);
    expect(toolResultsSent(m, 1)[0].output).toMatchObject({ type: "error-text", value: expect.stringMatching(/^PermissionDeniedError: Tool delete_all: /) });
  });
});

describe("toAiSdkTools under streamText", () => {
  it("invalid arguments are a tool error and a secret is redacted before the next request", async () => {
    const secret = "tok_9d8e7f";
    let ran = 0;
    const tools = toAiSdkTools(
      [
        { name: "charge", parameters: chargeParams, execute: () => (ran++, {}) },
        { name: "whoami", parameters: { type: "object", properties: {} }, execute: () => ({ token: secret }) },
      ],
      { secrets: [secret] },
    );
    const finish = (reason: string) => ({ type: "finish", finishReason: { unified: reason, raw: undefined }, usage });
    const m = streamModel(
      [
        { type: "tool-call", toolCallId: "s1", toolName: "charge", input: JSON.stringify({ amount: 0 }) },
        { type: "tool-call", toolCallId: "s2", toolName: "whoami", input: "{}" },
        finish("tool-calls"),
      ],
      [{ type: "text-start", id: "t" }, { type: "text-delta", id: "t", delta: "ok" }, { type: "text-end", id: "t" }, finish("stop")],
    );
    const r = streamText({ model: m, tools, prompt: "go", stopWhen: stepCountIs(3) });
    expect(await r.text).toBe("ok");
    expect(ran).toBe(0);
    const sent = toolResultsSent(m, 1, true);
    expect(sent.find((p) => p.toolCallId === "s1").output.value).toMatch(/Tool charge: \/amount: expected a number >= 1/);
    const next = JSON.stringify(m.doStreamCalls[1].prompt);
    expect(next).not.toContain(secret);
    expect(next).toContain("[REDACTED]");
  });
});

describe("toAiSdkTools under streamText: effects, ledger, a large catalog and durable approval", () => {
  const finish = (reason: string) => ({ type: "finish", finishReason: { unified: reason, raw: undefined }, usage });
  const callParts = (...calls: Call[]) => [...calls.map((c) => ({ type: "tool-call", toolCallId: c.id, toolName: c.name, input: JSON.stringify(c.input) })), finish("tool-calls")];
  const textParts = (text: string) => [{ type: "text-start", id: "t" }, { type: "text-delta", id: "t", delta: text }, { type: "text-end", id: "t" }, finish("stop")];

  it("a retried effect runs once, is replayed to the model, and leaves ledger rows", async () => {
    let charged = 0;
    const ledger = createMemoryRunLedger();
    const charge = {
      name: "charge",
      parameters: chargeParams,
      effect: { kind: "external_mutation", idempotency: "required" },
      execute: (args: any) => (charged++, { receipt: `r-${args.amount}` }),
    };
    const options = { effectStore: createMemoryToolEffectStore(), ledger, identity: localIdentity({ user: "ana", host: "laptop" }), context: { sessionId: "s1", runId: "order-7" } };
    // The request, then the same request again (a client retry): the model keeps the call's id.
    for (const attempt of [1, 2]) {
      const m = streamModel(callParts({ id: "call_1", name: "charge", input: { amount: 5 } }), textParts("ok"));
      const r = streamText({ model: m, tools: toAiSdkTools([charge], options), prompt: "charge 5", stopWhen: stepCountIs(3) });
      expect(await r.text, `attempt ${attempt}`).toBe("ok");
      expect(toolResultsSent(m, 1, true)[0].output).toMatchObject({ type: "json", value: { receipt: "r-5" } });
    }
    expect(charged).toBe(1);
    const rows = ledger.list("tool_call") as any[];
    expect(rows.map((r) => r.status)).toEqual(["started", "finished", "finished"]);
    expect(rows.every((r) => r.name === "charge" && r.toolCallId === "call_1" && r.runId === "order-7")).toBe(true);
  });

  it("a 500-tool catalog through prepareStep: each streamed step sends the top tools, search_tools and what search found", async () => {
    const catalog = Array.from({ length: 500 }, (_, i) => ({
      name: `tool_${i}`,
      description: i === 212 ? "Translate a sentence into another language" : `Internal operation number ${i} for inventory batch ${i % 17}`,
      parameters: { type: "object", properties: { q: { type: "string" } } },
      execute: () => ({ ran: `tool_${i}` }),
    }));
    const tools = toAiSdkTools(catalog, { search: { topK: 8 } });
    const m = streamModel(
      callParts({ id: "q1", name: "search_tools", input: { query: "translate sentence language" } }),
      callParts({ id: "x1", name: "tool_212", input: { q: "hello" } }),
      textParts("hola"),
    );
    const r = streamText({ model: m, tools, prepareStep: aiSdkPrepareStep(tools), prompt: "say hello in Spanish", stopWhen: stepCountIs(5) });
    expect(await r.text).toBe("hola");
    const sentNames = m.doStreamCalls.map((c) => (c.tools ?? []).map((t: any) => t.name));
    expect(sentNames[0]).toContain("search_tools");
    expect(sentNames[0].length).toBeLessThanOrEqual(9);
    expect(sentNames[1]).toContain("tool_212");
    expect(sentNames[1].length).toBeLessThanOrEqual(10);
    expect((await r.steps)[1].toolResults[0]).toMatchObject({ toolName: "tool_212", output: { ran: "tool_212" } });
  });

  it("durable approval: the stream pauses, a restarted gate decides, and the call runs once", async () => {
    const file = join(tmp(), "approvals.db");
    const charged: unknown[] = [];
    const charge = { name: "charge", parameters: chargeParams, execute: (a: any) => (charged.push(a), { receipt: "r1" }) };
    const start = () => {
      const gate = createApprovalGate({ checkpoints: createSqliteCheckpointStore(file), runId: "conv-s", needsApproval: { charge: true } });
      const tools = toAiSdkTools([charge], { approval: gate, context: { sessionId: "conv-s" } });
      return { gate, tools, toolApproval: aiSdkToolApproval(tools) };
    };
    const p1 = start();
    const r1 = streamText({ model: streamModel(callParts({ id: "c9", name: "charge", input: { amount: 12 } })), tools: p1.tools, toolApproval: p1.toolApproval, prompt: "charge 12", stopWhen: stepCountIs(3) });
    const request = (await r1.content).find((p: any) => p.type === "tool-approval-request") as any;
    expect(request.toolCall).toMatchObject({ toolCallId: "c9", toolName: "charge" });
    expect(charged).toEqual([]);
    const messages: ModelMessage[] = [{ role: "user", content: "charge 12" }, ...(await r1.response).messages];

    // A restart: a new store, gate and tools over the same file.
    const p2 = start();
    const [pending] = await p2.gate.pending();
    expect(pending).toMatchObject({ toolCallId: "c9", toolName: "charge", arguments: { amount: 12 } });
    await p2.gate.decide([{ approvalId: pending.approvalId, outcome: "allow_once" }]);
    messages.push({ role: "tool", content: [{ type: "tool-approval-response", approvalId: request.approvalId, approved: true }] });
    const r2 = streamText({ model: streamModel(textParts("charged")), tools: p2.tools, toolApproval: p2.toolApproval, messages, stopWhen: stepCountIs(3) });
    expect(await r2.text).toBe("charged");
    expect(charged).toEqual([{ amount: 12 }]);
    expect(await p2.gate.pending()).toEqual([]);
  });
});

describe("fromAiSdkTools", () => {
  it("AI SDK tools (zod and jsonSchema) as registry tools, with the AI SDK's execute options", async () => {
    const seen: any[] = [];
    const defs = fromAiSdkTools({
      a: tool({ inputSchema: z.object({ n: z.number().default(2) }), execute: async (input, o) => (seen.push([input, o.toolCallId]), input.n * 2) }),
      b: tool({ description: "B", inputSchema: jsonSchema<{ s: string }>({ type: "object", properties: { s: { type: "string" } }, required: ["s"] }), execute: async (input) => input.s }),
    });
    expect(defs.map((d) => [d.name, d.description])).toEqual([["a", undefined], ["b", "B"]]);
    expect(defs[0].parameters).toEqual({ type: "object", properties: { n: { type: "number", default: 2 } } });
    const registry = createToolRegistry(defs);
    const { createToolDispatcher } = await import("../index.mjs");
    const r = await createToolDispatcher({ registry }).dispatch({ id: "x1", name: "a", arguments: {} }, {});
    expect(r).toMatchObject({ value: 4 });
    expect(seen).toEqual([[{ n: 2 }, "x1"]]);
  });

  it("a zod tool with z.date() is refused naming the tool, the field and the fix", () => {
    expect(() => toAiSdkTools({ book: tool({ inputSchema: z.object({ when: z.date() }), execute: async () => 1 }) })).toThrow(
      expect.objectContaining({ code: "ERR_PRISM_INVALID_TOOL", message: expect.stringMatching(/^Tool book: field when is z\.date\(\).*z\.iso\.datetime\(\)/) }),
    );
  });
});

describe("aiSdkPrepareStep", () => {
  it("a 500-tool catalog: each step sends the top tools, search_tools, and what search found", async () => {
    const names = Array.from({ length: 500 }, (_, i) => `tool_${i}`);
    const catalog = names.map((name, i) => ({
      name,
      description: i === 377 ? "Convert a currency amount using the daily exchange rate" : `Internal operation number ${i} for inventory batch ${i % 17}`,
      parameters: { type: "object", properties: { q: { type: "string" } } },
      execute: () => ({ ran: name }),
    }));
    const tools = toAiSdkTools(catalog, { search: { topK: 8 } });
    expect(Object.keys(tools)).toHaveLength(501);
    const prepareStep = aiSdkPrepareStep(tools);
    const m = model(
      toolTurn({ id: "q1", name: "search_tools", input: { query: "exchange rate currency" } }),
      toolTurn({ id: "x1", name: "tool_377", input: { q: "EUR" } }),
      textTurn(),
    );
    const r = await generateText({ model: m, tools, prepareStep, prompt: "how many dollars is 10 euro?", stopWhen: stepCountIs(5) });
    const sentNames = m.doGenerateCalls.map((c) => (c.tools ?? []).map((t: any) => t.name));
    expect(sentNames[0].length).toBeLessThanOrEqual(9);
    expect(sentNames[0]).toContain("search_tools");
    expect(sentNames[1]).toContain("tool_377");
    expect(sentNames[1].length).toBeLessThanOrEqual(10);
    expect(r.steps[1].toolResults[0]).toMatchObject({ toolName: "tool_377", output: { ran: "tool_377" } });
  });

  it("narrowing clamps to the grant", async () => {
    const defs = ["a", "b", "c"].map((name) => ({ name, parameters: { type: "object", properties: {} }, execute: () => name }));
    const tools = toAiSdkTools(defs);
    const prepareStep = aiSdkPrepareStep(tools, { toolNames: ["a", "b"], narrowing: ({ stepNumber }) => (stepNumber === 0 ? ["b", "c"] : ["a"]) });
    const m = model(toolTurn({ id: "1", name: "b", input: {} }), textTurn());
    await generateText({ model: m, tools, prepareStep, prompt: "x", stopWhen: stepCountIs(3) });
    expect(m.doGenerateCalls.map((c) => (c.tools ?? []).map((t: any) => t.name))).toEqual([["b"], ["a"]]);
  });
});

describe("durable approval with the AI SDK's toolApproval", () => {
  it("pauses, survives a restart, and the decision covers exactly the call that was shown", async () => {
    const file = join(tmp(), "approvals.db");
    let charged: unknown[] = [];
    const charge = { name: "charge", parameters: chargeParams, execute: (a: any) => (charged.push(a), { receipt: "r1" }) };
    const start = () => {
      const gate = createApprovalGate({ checkpoints: createSqliteCheckpointStore(file), runId: "conv-7", needsApproval: { charge: true } });
      const tools = toAiSdkTools([charge], { approval: gate, context: { sessionId: "conv-7" } });
      return { gate, tools, toolApproval: aiSdkToolApproval(tools) };
    };

    // Process 1: the model asks to charge; the AI SDK stops with an approval request.
    const p1 = start();
    const m1 = model(toolTurn({ id: "c1", name: "charge", input: { amount: 30 } }));
    const r1 = await generateText({ model: m1, tools: p1.tools, toolApproval: p1.toolApproval, prompt: "charge 30", stopWhen: stepCountIs(3) });
    const request = r1.content.find((p: any) => p.type === "tool-approval-request") as any;
    expect(request.toolCall).toMatchObject({ toolCallId: "c1", toolName: "charge" });
    expect(charged).toEqual([]);
    const messages: ModelMessage[] = [{ role: "user", content: "charge 30" }, ...r1.response.messages];

    // Process 2 (a restart: new store, gate and tools over the same file): a person decides.
    const p2 = start();
    const pending = await p2.gate.pending();
    expect(pending).toEqual([expect.objectContaining({ toolCallId: "c1", toolName: "charge", arguments: { amount: 30 } })]);
    await p2.gate.decide([{ approvalId: pending[0].approvalId, outcome: "allow_once" }]);
    messages.push({ role: "tool", content: [{ type: "tool-approval-response", approvalId: request.approvalId, approved: true }] });
    const m2 = model(textTurn("charged"));
    const r2 = await generateText({ model: m2, tools: p2.tools, toolApproval: p2.toolApproval, messages, stopWhen: stepCountIs(3) });
    expect(r2.text).toBe("charged");
    expect(charged).toEqual([{ amount: 30 }]);
    expect(await p2.gate.pending()).toEqual([]);

    // The same call id with other arguments is not covered by that decision.
    const p3 = start();
    await expect(p3.gate.admit({ id: "c1", name: "charge", arguments: { amount: 3000 } })).rejects.toMatchObject({ code: "ERR_PRISM_DECISION_BINDING" });
    expect(charged).toHaveLength(1);
  });

  it("across a real process restart: the first process pauses and exits, the second decides and runs the call", async () => {
    const file = join(tmp(), "approvals.db");
    // Process 1: a child node process runs generateText until the approval request, prints the
    // conversation and exits.
    const child = `
      import { generateText, stepCountIs } from "ai";
      import { MockLanguageModelV4 } from "ai/test";
      import { createSqliteCheckpointStore } from "prism-tools-native";
      import { aiSdkToolApproval, createApprovalGate, toAiSdkTools } from "prism-tools-native/ai-sdk";
      const usage = ${JSON.stringify(usage)};
      const model = new MockLanguageModelV4({ doGenerate: [{ content: [{ type: "tool-call", toolCallId: "k1", toolName: "charge", input: '{"amount":77}' }], finishReason: { unified: "tool-calls" }, usage, warnings: [] }] });
      const gate = createApprovalGate({ checkpoints: createSqliteCheckpointStore(${JSON.stringify(file)}), runId: "conv-x", needsApproval: { charge: true } });
      const tools = toAiSdkTools([{ name: "charge", parameters: { type: "object", properties: { amount: { type: "number" } } }, execute: () => { throw new Error("must not run in process 1"); } }], { approval: gate });
      const r = await generateText({ model, tools, toolApproval: aiSdkToolApproval(tools), prompt: "charge 77", stopWhen: stepCountIs(3) });
      const request = r.content.find((p) => p.type === "tool-approval-request");
      process.stdout.write(JSON.stringify({ approvalId: request.approvalId, messages: [{ role: "user", content: "charge 77" }, ...r.response.messages] }));
    `;
    const { execFileSync } = await import("node:child_process");
    const out = JSON.parse(execFileSync(process.execPath, ["--input-type=module", "-e", child], { cwd: join(import.meta.dirname, ".."), encoding: "utf8" }));

    // Process 2 (this one): a person approves; the call runs once, with the arguments shown.
    const charged: unknown[] = [];
    const gate = createApprovalGate({ checkpoints: createSqliteCheckpointStore(file), runId: "conv-x", needsApproval: { charge: true } });
    const tools = toAiSdkTools([{ name: "charge", parameters: { type: "object", properties: { amount: { type: "number" } } }, execute: (a: any) => (charged.push(a), "ok") }], { approval: gate });
    const [pending] = await gate.pending();
    expect(pending).toMatchObject({ toolCallId: "k1", toolName: "charge", arguments: { amount: 77 } });
    await gate.decide([{ approvalId: pending.approvalId, outcome: "allow_once" }]);
    const messages = [...out.messages, { role: "tool", content: [{ type: "tool-approval-response", approvalId: out.approvalId, approved: true }] }];
    const r = await generateText({ model: model(textTurn("charged 77")), tools, toolApproval: aiSdkToolApproval(tools), messages, stopWhen: stepCountIs(3) });
    expect(r.text).toBe("charged 77");
    expect(charged).toEqual([{ amount: 77 }]);
  });

  it("a rejected call reaches the model as a tool error and does not run", async () => {
    let ran = 0;
    const gate = createApprovalGate({ checkpoints: createSqliteCheckpointStore(join(tmp(), "a.db")), runId: "r", needsApproval: true });
    const tools = toAiSdkTools([{ name: "wipe", parameters: { type: "object", properties: {} }, execute: () => (ran++, "wiped") }], { approval: gate });
    await gate.requires({ id: "w1", name: "wipe", arguments: {} });
    await gate.decide([{ toolCallId: "w1", outcome: "reject_once", reason: "not today" }]);
    const m = model(toolTurn({ id: "w1", name: "wipe", input: {} }), textTurn());
    await generateText({ model: m, tools, prompt: "wipe", stopWhen: stepCountIs(3) });
    expect(ran).toBe(0);
    expect(toolResultsSent(m, 1)[0].output.value).toMatch(/not today/);
  });
});
