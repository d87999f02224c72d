// prism-tools-native/openai-agents under the real OpenAI Agents SDK (`@openai/agents`), with a model
// written to the SDK's own Model interface (no network): every call goes through this package's dispatch.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Agent, RunState, Usage, run, setTracingDisabled, tool, type Model, type ModelRequest } from "@openai/agents";
import * as z from "zod";
import { createMemoryRunLedger, createMemoryToolEffectStore, createSqliteCheckpointStore } from "../index.mjs";
import { createApprovalGate, fromOpenAIAgentsTools, localIdentity, toOpenAIAgentsTools } from "../openai-agents/index.mjs";

beforeAll(() => setTracingDisabled(true));
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), "prism-agents-"));
  dirs.push(d);
  return d;
};

type Out = any[];
const call = (callId: string, name: string, args: unknown) => ({ type: "function_call", callId, name, arguments: JSON.stringify(args), status: "completed" });
const say = (text: string) => ({ type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text }] });

// A scripted model: one output per request; it keeps every request it was sent.
function scripted(...outputs: Out[]) {
  const requests: ModelRequest[] = [];
  const model: Model = {
    async getResponse(request) {
      requests.push(request);
      const output = outputs.shift() ?? [say("done")];
      return { usage: new Usage(), output, responseId: `resp_${requests.length}` } as any;
    },
    getStreamedResponse() {
      throw new Error("not used");
    },
  };
  return { model, requests };
}
// The function_call_result items the model was sent at request `n`.
const resultsSent = (requests: ModelRequest[], n: number) => (requests[n].input as any[]).filter((i) => i.type === "function_call_result");
const outputText = (item: any) => (typeof item.output === "string" ? item.output : item.output?.text);

const chargeParams = { type: "object", properties: { amount: { type: "number", minimum: 1 } }, required: ["amount"], additionalProperties: false } as const;

describe("toOpenAIAgentsTools under run", () => {
  it("invalid arguments reach the model as the tool's error with its message; the tool does not run", async () => {
    let ran = 0;
    const tools = toOpenAIAgentsTools([{ name: "charge", description: "Charge", parameters: chargeParams, execute: () => (ran++, { ok: true }) }]);
    const { model, requests } = scripted([call("c1", "charge", { amount: "ten" })], [say("sorry")]);
    const r = await run(new Agent({ name: "billing", model, tools }), "charge ten");
    expect(r.finalOutput).toBe("sorry");
    expect(ran).toBe(0);
    expect(outputText(resultsSent(requests, 1)[0])).toMatch(/^Tool charge: \/amount: expected number/);
  });

  it("a secret in a result never reaches the next model request", async () => {
    const secret = "sk-live-44aa91";
    const tools = toOpenAIAgentsTools([{ name: "whoami", parameters: { type: "object", properties: {} }, execute: () => ({ token: secret }) }], { secrets: [secret] });
    const { model, requests } = scripted([call("w1", "whoami", {})], [say("ok")]);
    await run(new Agent({ name: "a", model, tools }), "who am i");
    const next = JSON.stringify(requests[1].input);
    expect(next).not.toContain(secret);
    expect(next).toContain("[REDACTED]");
  });

  it("passes the run context through, and a retried effect runs once with ledger rows", async () => {
    let charged = 0;
    const seen: unknown[] = [];
    const ledger = createMemoryRunLedger();
    const charge = {
      name: "charge",
      parameters: chargeParams,
      effect: { kind: "external_mutation", idempotency: "required" },
      execute: (args: any, ctx: any) => (charged++, seen.push(ctx.runContext.context.orderId), { receipt: `r-${args.amount}` }),
    };
    const options = {
      effectStore: createMemoryToolEffectStore(),
      ledger,
      identity: localIdentity({ user: "ana", host: "laptop" }),
      callIds: "content" as const,
      // The call context from the Agents SDK's run context: one order, one effect run.
      context: (rc: any) => ({ sessionId: "s1", runId: rc.context.orderId }),
    };
    for (const id of ["call_A", "call_B"]) {
      const { model, requests } = scripted([call(id, "charge", { amount: 9 })], [say("ok")]);
      await run(new Agent({ name: "billing", model, tools: toOpenAIAgentsTools([charge], options) }), "charge 9", { context: { orderId: "order-9" } });
      expect(JSON.parse(outputText(resultsSent(requests, 1)[0]))).toEqual({ receipt: "r-9" });
    }
    expect(charged).toBe(1);
    expect(seen).toEqual(["order-9"]);
    const rows = ledger.list("tool_call") as any[];
    expect(rows.map((r) => r.status)).toEqual(["started", "finished", "finished"]);
    expect(rows.every((r) => r.runId === "order-9")).toBe(true);
  });
});

describe("fromOpenAIAgentsTools", () => {
  it("Agents SDK tools (zod parameters) keep their own parse and defaults under this package's dispatch", async () => {
    const seen: unknown[] = [];
    const weather = tool({
      name: "weather",
      description: "Weather for a city",
      parameters: z.object({ city: z.string(), units: z.enum(["c", "f"]).default("c") }),
      execute: async (input) => (seen.push(input), `21${input.units}`),
    });
    const [def] = fromOpenAIAgentsTools([weather]);
    expect(def).toMatchObject({ name: "weather", description: "Weather for a city" });
    const tools = toOpenAIAgentsTools([weather]);
    const { model, requests } = scripted([call("w1", "weather", { city: "Oslo", units: "c" }), call("w2", "weather", { city: 3, units: "c" })], [say("ok")]);
    await run(new Agent({ name: "a", model, tools }), "weather");
    expect(seen).toEqual([{ city: "Oslo", units: "c" }]);
    const sent = resultsSent(requests, 1);
    expect(outputText(sent.find((i: any) => i.callId === "w1"))).toBe("21c");
    expect(outputText(sent.find((i: any) => i.callId === "w2"))).toMatch(/Tool weather: \/city: expected string/);
  });
});

describe("search_tools disclosure per turn (isEnabled)", () => {
  it("a 500-tool catalog: the first turn sends search_tools only, the next the tool it found", async () => {
    const catalog = Array.from({ length: 500 }, (_, i) => ({
      name: `tool_${i}`,
      description: i === 211 ? "Look up a shipment's tracking status by parcel number" : `Internal operation ${i} for ledger batch ${i % 13}`,
      parameters: { type: "object", properties: { id: { type: "string" } } },
      execute: () => ({ ran: i }),
    }));
    const tools = toOpenAIAgentsTools(catalog, { search: true });
    const { model, requests } = scripted([call("q1", "search_tools", { query: "parcel tracking status" })], [call("t1", "tool_211", { id: "P9" })], [say("on its way")]);
    const r = await run(new Agent({ name: "a", model, tools }), "where is parcel P9?");
    expect(r.finalOutput).toBe("on its way");
    const names = requests.map((q) => q.tools.map((t: any) => t.name));
    expect(names[0]).toEqual(["search_tools"]);
    expect(names[1]).toContain("tool_211");
    expect(names[1].length).toBeLessThanOrEqual(9);
    expect(JSON.parse(outputText(resultsSent(requests, 2).find((i: any) => i.callId === "t1")))).toEqual({ ran: 211 });
  });
});

describe("durable approval with the Agents SDK's interruptions", () => {
  it("pauses, survives a restart, and runs the approved call once", async () => {
    const file = join(tmp(), "approvals.db");
    const charged: unknown[] = [];
    const charge = { name: "charge", parameters: chargeParams, execute: (a: any) => (charged.push(a), { receipt: "r1" }) };
    const start = (outputs: Out[]) => {
      const gate = createApprovalGate({ checkpoints: createSqliteCheckpointStore(file), runId: "conv-3", needsApproval: { charge: true } });
      const { model, requests } = scripted(...outputs);
      const agent = new Agent({ name: "billing", model, tools: toOpenAIAgentsTools([charge], { approval: gate }) });
      return { gate, agent, requests };
    };
    const p1 = start([[call("c9", "charge", { amount: 12 })]]);
    const r1 = await run(p1.agent, "charge 12");
    expect(r1.interruptions).toHaveLength(1);
    expect(charged).toEqual([]);
    const saved = r1.state.toString();

    // A restart: a new store, gate, model and agent; the run state comes back from its string.
    const p2 = start([[say("charged")]]);
    const state = await RunState.fromString(p2.agent, saved);
    const [item] = state.getInterruptions();
    expect(await p2.gate.pending()).toEqual([expect.objectContaining({ toolCallId: "c9", arguments: { amount: 12 } })]);
    await p2.gate.decide([{ toolCallId: (item.rawItem as any).callId, outcome: "allow_once" }]);
    state.approve(item);
    const r2 = await run(p2.agent, state);
    expect(r2.finalOutput).toBe("charged");
    expect(charged).toEqual([{ amount: 12 }]);
  });

  it("across a real process restart: the first process pauses and exits, the second decides and runs the call", async () => {
    const file = join(tmp(), "approvals.db");
    // Process 1: a child node process runs until the interruption, prints the run state and exits.
    const child = `
      import { Agent, Usage, run, setTracingDisabled } from "@openai/agents";
      import { createSqliteCheckpointStore } from "prism-tools-native";
      import { createApprovalGate, toOpenAIAgentsTools } from "prism-tools-native/openai-agents";
      setTracingDisabled(true);
      const output = [${JSON.stringify(call("k1", "charge", { amount: 77 }))}];
      const model = { async getResponse() { return { usage: new Usage(), output, responseId: "resp_1" }; }, getStreamedResponse() { throw new Error("not used"); } };
      const gate = createApprovalGate({ checkpoints: createSqliteCheckpointStore(${JSON.stringify(file)}), runId: "conv-x", needsApproval: { charge: true } });
      const charge = { name: "charge", parameters: { type: "object", properties: { amount: { type: "number" } } }, execute: () => { throw new Error("must not run in process 1"); } };
      const r = await run(new Agent({ name: "billing", model, tools: toOpenAIAgentsTools([charge], { approval: gate }) }), "charge 77");
      if (r.interruptions.length !== 1) throw new Error("expected one interruption");
      process.stdout.write(r.state.toString());
    `;
    const { execFileSync } = await import("node:child_process");
    const saved = execFileSync(process.execPath, ["--input-type=module", "-e", child], { cwd: join(import.meta.dirname, ".."), encoding: "utf8" });

    // Process 2 (this one): a person approves; the call runs once, with the arguments shown.
    const charged: unknown[] = [];
    const gate = createApprovalGate({ checkpoints: createSqliteCheckpointStore(file), runId: "conv-x", needsApproval: { charge: true } });
    const charge = { name: "charge", parameters: { type: "object", properties: { amount: { type: "number" } } }, execute: (a: any) => (charged.push(a), "ok") };
    const { model } = scripted([say("charged 77")]);
    const agent = new Agent({ name: "billing", model, tools: toOpenAIAgentsTools([charge], { approval: gate }) });
    const state = await RunState.fromString(agent, saved);
    const [item] = state.getInterruptions();
    const [pending] = await gate.pending();
    expect(pending).toMatchObject({ toolCallId: "k1", toolName: "charge", arguments: { amount: 77 } });
    await gate.decide([{ approvalId: pending.approvalId, outcome: "allow_once" }]);
    state.approve(item);
    const r = await run(agent, state);
    expect(r.finalOutput).toBe("charged 77");
    expect(charged).toEqual([{ amount: 77 }]);
  });

  it("approving in the Agents SDK alone does not run a call the gate has no decision for", async () => {
    const ran: unknown[] = [];
    const gate = createApprovalGate({ checkpoints: createSqliteCheckpointStore(join(tmp(), "b.db")), runId: "conv-4", needsApproval: true });
    const { model, requests } = scripted([call("d1", "drop_table", { table: "users" })], [say("ok")]);
    const agent = new Agent({ name: "a", model, tools: toOpenAIAgentsTools([{ name: "drop_table", parameters: { type: "object", properties: { table: { type: "string" } } }, execute: (a: any) => (ran.push(a), "dropped") }], { approval: gate }) });
    const r1 = await run(agent, "drop users");
    r1.state.approve(r1.interruptions[0]);
    await run(agent, r1.state);
    expect(ran).toEqual([]);
    expect(outputText(resultsSent(requests, 1)[0])).toMatch(/waiting for approval .*ERR_PRISM_AGENT_RUN_SUSPENDED/);
  });
});
