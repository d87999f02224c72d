// The run machine's promises, through `createAgent` (docs/agent.md "The run machine"): a resumed
// run goes on with the budget its checkpoint saved; a tool result is redacted before any cut
// (output budget, fold summary cap); `toolChoice` is enforced, not only sent; a never-settling
// fold summarizer or tool ends with the run.
import { describe, expect, it } from "vitest";
import {
  createAgent,
  createMockProvider,
  createMemoryCheckpointStore,
  providerDone,
  providerTextDelta,
  providerToolCall,
  providerUsage,
  resumeAgentRun,
  toolCallContent,
  AGENT_RUN_STATE_NAMESPACE,
  type AgentEvent,
  type ProviderEvent,
  type ProviderRequest,
  type RunLedger,
  type ToolDefinition,
} from "../index.mjs";

const model = { provider: "mock", model: "demo" };
const call = (id: string, name: string, args: Record<string, unknown> = {}): ProviderEvent => providerToolCall(toolCallContent(id, name, args));

/** A ledger keeping every row's JSON. */
function recorder() {
  const rows: string[] = [];
  const keep = (record: unknown) => void rows.push(JSON.stringify(record));
  const ledger = { appendRun: keep, appendEvent: keep, appendToolCall: keep, appendUsage: keep } as unknown as RunLedger;
  return { ledger, rows };
}

/** Every piece of `secret` of at least `min` characters that occurs in `text`. */
function pieces(text: string, secret: string, min = 6): string[] {
  const found: string[] = [];
  for (let i = 0; i + min <= secret.length; i++) {
    const piece = secret.slice(i, i + min);
    if (text.includes(piece)) found.push(piece);
  }
  return found;
}

async function collect(session: any): Promise<{ events: AgentEvent[]; done: Promise<void> }> {
  const events: AgentEvent[] = [];
  const done = (async () => {
    for await (const e of session.subscribe()) events.push(e);
  })();
  return { events, done };
}

describe("a resumed run goes on with the budget its checkpoint saved", () => {
  // Each turn asks for two ungated reads and one approval-gated payment, and reports 6 output
  // tokens costing 0.6 USD: the run suspends on the payment every turn.
  function scenario() {
    const executed: string[] = [];
    const tool = (name: string, gated: boolean): ToolDefinition =>
      ({
        name,
        parameters: { type: "object" },
        needsApproval: gated,
        execute: (_args: unknown, ctx: any) => (executed.push(name), { toolCallId: ctx.toolCallId, name, value: "ok" }),
      }) as any;
    const turn = (n: number): ProviderEvent[] => [
      call(`r${n}a`, "read"),
      call(`r${n}b`, "read"),
      call(`p${n}`, "pay"),
      providerUsage({ inputTokens: 1, outputTokens: 6, cost: 0.6, currency: "USD" } as any),
      providerDone(),
    ];
    const provider = createMockProvider(Array.from({ length: 12 }, (_, i) => turn(i + 1)));
    const store = createMemoryCheckpointStore();
    const agent = createAgent({
      id: "budget-agent",
      model,
      provider,
      tools: [tool("read", false), tool("pay", true)],
      limits: { maxToolCalls: 3, maxOutputTokens: 10, maxCost: { amount: 1, currency: "USD" } },
    });
    const runState = { checkpoints: store, definitionRevision: "r1", interruptBeforeTool: false };
    return { agent, runState, store, executed };
  }

  it("breaches at the first resume, where one unsuspended run would, not after five fresh budgets", async () => {
    const { agent, runState, executed } = scenario();
    let result: any = await agent.createSession().run("pay", { runState });
    expect(result.status).toBe("suspended");
    let resumes = 0;
    while (result.status === "suspended" && resumes < 5) {
      const decisions = result.interruption.pendingDecisions.map((d: any) => ({ approvalId: d.approvalId, outcome: "allow_once" }));
      expect(decisions).toHaveLength(1);
      resumes++;
      result = await resumeAgentRun(agent, result, { decisions, expectedVersion: result.runState.version }, runState).catch((e: any) => e.result ?? e);
    }
    expect(resumes).toBe(1);
    expect(result).toMatchObject({ status: "failed", limit: { limit: "maxOutputTokens", maximum: 10, observed: 12 } });
    // Two reads in the first turn, the approved payment on resume; nothing after the breach.
    expect(executed).toEqual(["read", "read", "pay"]);
  });

  it("the checkpoint carries every counter and the deadline, under upstream's names", async () => {
    const { agent, runState, store } = scenario();
    const result: any = await agent.createSession().run("pay", { runState });
    const saved: any = (await store.loadCheckpoint({ namespace: AGENT_RUN_STATE_NAMESPACE, key: result.runId }))?.value;
    expect(Object.keys(saved.counters).sort()).toEqual(
      ["cost", "inputTokens", "outputTokens", "providerAttempts", "requestBytes", "responseBytes", "toolCalls", "toolRounds", "totalTokens", "turns", "wallTimeMs"].sort(),
    );
    expect(saved.counters).toMatchObject({ turns: 1, toolRounds: 1, toolCalls: 2, providerAttempts: 1, outputTokens: 6, totalTokens: 7, cost: 0.6 });
    expect(Date.parse(saved.deadlineAt)).toBeGreaterThan(Date.now());
    // The public run state does not show them.
    expect(result.runState.counters).toBeUndefined();
  });

  it("a checkpoint written before the budget was saved is refused with ERR_PRISM_AGENT_RUN_STATE", async () => {
    const { agent, runState, store, executed } = scenario();
    const result: any = await agent.createSession().run("pay", { runState });
    const key = { namespace: AGENT_RUN_STATE_NAMESPACE, key: result.runId };
    const saved: any = (await store.loadCheckpoint(key))!.value;
    const { deadlineAt: _deadline, ...before } = saved;
    before.counters = { rounds: 1, turns: 1 };
    const { version } = await store.saveCheckpoint({ ...key, value: before, version: 2, expectedVersion: 1, category: "agent-run" } as any);
    const approvalId = result.interruption.pendingDecisions[0].approvalId;
    await expect(resumeAgentRun(agent, result, { decisions: [{ approvalId, outcome: "allow_once" }], expectedVersion: version }, runState)).rejects.toMatchObject({
      name: "AgentRunStateError",
      code: "ERR_PRISM_AGENT_RUN_STATE",
      message: "Malformed agent run state",
    });
    expect(executed).toEqual(["read", "read"]); // the approved payment never ran
  });
});

describe("a tool result is redacted before any cut", () => {
  const secret = "tok_live_7Hq2ZpX9wLmR4vNc8TbY3sKd6FgJ1aUe0QiW"; // 44 characters

  it("a secret straddling the output budget's cut leaves no part of itself anywhere", async () => {
    // The head keeps about half of the budget and the tail the other half: a copy of the secret
    // crosses each edge of the cut.
    const text = "h".repeat(100) + secret + "m".repeat(4000) + secret + "t".repeat(90);
    const tool: ToolDefinition = { name: "dump", parameters: { type: "object" }, execute: () => text };
    const requests: ProviderRequest[] = [];
    const provider = createMockProvider([[call("c1", "dump"), providerDone()], [providerTextDelta("ok"), providerDone()]], { onRequest: (r) => void requests.push(r) });
    const { ledger, rows } = recorder();
    const agent = createAgent({ model, provider, tools: [tool], secrets: [secret], toolOutputBudget: { maxBytes: 256 }, runLedger: ledger });
    const session = agent.createSession();
    const { events, done } = await collect(session);
    const result = await session.run("dump");
    await done;
    expect(result.status).toBe("succeeded");
    const row = requests[1].messages.find((m) => m.role === "tool")!.content[0] as any;
    expect(row.result).toContain("bytes omitted");
    expect(Buffer.byteLength(row.result)).toBeLessThanOrEqual(256);
    for (const [where, seen] of [
      ["provider request", JSON.stringify(requests[1].messages)],
      ["session.messages()", JSON.stringify(session.messages())],
      ["ledger rows", rows.join("\n")],
      ["events", JSON.stringify(events)],
    ]) {
      expect(pieces(seen, secret), where).toEqual([]);
    }
  });

  it("a secret straddling the fold summary's cap leaves no part of itself in the request", async () => {
    const maxSummaryBytes = 64;
    const summarize = () => "s".repeat(maxSummaryBytes - 20) + secret;
    const tool: ToolDefinition = { name: "dump", parameters: { type: "object" }, execute: () => "x".repeat(200) };
    const requests: ProviderRequest[] = [];
    const provider = createMockProvider([[call("c1", "dump"), providerDone()], [providerTextDelta("ok"), providerDone()]], { onRequest: (r) => void requests.push(r) });
    const agent = createAgent({ model, provider, tools: [tool], secrets: [secret], toolResultFold: { summarize, minAgeTurns: 1, minBytes: 1, maxSummaryBytes } });
    const session = agent.createSession();
    expect((await session.run("dump")).status).toBe("succeeded");
    const row = requests[1].messages.find((m) => m.role === "tool")!.content[0] as any;
    expect(row.result).toMatch(/^Tool result dump \[c1\]: s+/);
    expect(pieces(JSON.stringify(requests[1]), secret)).toEqual([]);
  });

  it("the summarizer reads redacted text", async () => {
    const seen: string[] = [];
    const summarize = (input: { text: string }) => (seen.push(input.text), "short");
    const tool: ToolDefinition = { name: "dump", parameters: { type: "object" }, execute: () => `value ${secret} end` };
    const provider = createMockProvider([[call("c1", "dump"), providerDone()], [providerTextDelta("ok"), providerDone()]]);
    const agent = createAgent({ model, provider, tools: [tool], secrets: [secret], toolResultFold: { summarize, minAgeTurns: 1, minBytes: 1 } });
    await agent.createSession().run("dump");
    expect(seen).toHaveLength(1);
    expect(seen[0]).toContain("[REDACTED]");
    expect(pieces(seen[0], secret)).toEqual([]);
  });
});

describe("toolChoice is enforced, not only sent", () => {
  function setup(toolChoice: unknown, script: ProviderEvent[][]) {
    const executed: string[] = [];
    const tool = (name: string): ToolDefinition => ({ name, parameters: { type: "object" }, execute: (_a: unknown, ctx: any) => (executed.push(name), { toolCallId: ctx.toolCallId, name, value: "done" }) });
    const requests: ProviderRequest[] = [];
    const provider = createMockProvider(script, { onRequest: (r) => void requests.push(r) });
    const agent = createAgent({ model, provider, tools: [tool("read"), tool("wipe")], toolChoice } as any);
    return { agent, executed, requests };
  }
  const blockedRows = (request: ProviderRequest) =>
    request.messages.filter((m) => m.role === "tool").map((m) => m.content[0] as any).filter((b) => b.error !== undefined);

  it('"none": a call the provider still returns never runs and gets a blocked result', async () => {
    const { agent, executed, requests } = setup("none", [[call("c1", "wipe"), call("c2", "read"), providerDone()], [providerTextDelta("ok"), providerDone()]]);
    const session = agent.createSession();
    const { events, done } = await collect(session);
    const result = await session.run("go");
    await done;
    expect(result.status).toBe("succeeded");
    expect(executed).toEqual([]);
    expect((requests[0] as any).options).toEqual({ toolChoice: "none" });
    expect(blockedRows(requests[1])).toEqual([
      { type: "tool_result", toolCallId: "c1", name: "wipe", error: { name: "ToolChoiceError", code: "tool_choice_denied", message: 'Tool call wipe refused: toolChoice is "none"' } },
      { type: "tool_result", toolCallId: "c2", name: "read", error: { name: "ToolChoiceError", code: "tool_choice_denied", message: 'Tool call read refused: toolChoice is "none"' } },
    ].map((b) => expect.objectContaining(b)));
    const blocked = events.filter((e) => e.type === "tool_execution_blocked") as any[];
    expect(blocked.map((e) => [e.toolCallId, e.reason])).toEqual([["c1", "tool_choice_denied"], ["c2", "tool_choice_denied"]]);
  });

  it("a named choice runs only that tool; the others of the turn are blocked", async () => {
    const { agent, executed, requests } = setup({ type: "tool", name: "read" }, [[call("c1", "wipe"), call("c2", "read"), providerDone()], [providerTextDelta("ok"), providerDone()]]);
    const result = await agent.createSession().run("go");
    expect(result.status).toBe("succeeded");
    expect(executed).toEqual(["read"]);
    const rows = requests[1].messages.filter((m) => m.role === "tool").map((m) => m.content[0] as any);
    expect(rows.map((b) => [b.toolCallId, b.error?.code ?? "ran"])).toEqual([["c1", "tool_choice_denied"], ["c2", "ran"]]);
    expect(rows[0].error.message).toBe('Tool call wipe refused: toolChoice names tool "read"');
    // The forced choice held for the first turn only: the next request sends none.
    expect((requests[1] as any).options).toBeUndefined();
  });

  it('holds in the generate-validate-revise loop: "none" blocks the tool round\'s calls', async () => {
    const { agent, executed, requests } = setup("none", [[call("c1", "wipe"), providerDone()], [providerTextDelta("final"), providerDone()]]);
    const result: any = await agent.createSession().run("go", { loop: { strategy: "generate-validate-revise", toolCalls: "bounded", validator: () => ({ ok: true }) } } as any);
    expect(result).toMatchObject({ status: "succeeded", artifact: "final" });
    expect(executed).toEqual([]);
    expect(blockedRows(requests[1]).map((b) => [b.toolCallId, b.error.code]), JSON.stringify(requests[1].messages)).toEqual([["c1", "tool_choice_denied"]]);
  });

  it("holds in a host's own loop: ctx.dispatchToolCall answers a refused call with its blocked result", async () => {
    const { agent, executed } = setup({ type: "tool", name: "read" }, [[call("c1", "wipe"), call("c2", "read"), providerDone()], [providerTextDelta("ok"), providerDone()]]);
    const answers: any[] = [];
    const strategy = {
      name: "mine",
      async run(ctx: any) {
        const { calls } = await ctx.generate(await ctx.assemble(ctx.input, undefined, 1));
        ctx.chargeToolRound(calls);
        for (const c of calls) answers.push(await ctx.dispatchToolCall(c));
        return undefined;
      },
    };
    await agent.createSession().run("go", { loop: strategy } as any);
    expect(executed).toEqual(["read"]);
    expect(answers.map((a) => [a.toolCallId, a.error?.code ?? "ran"])).toEqual([["c1", "tool_choice_denied"], ["c2", "ran"]]);
  });

  it('"required" runs the calls the provider returns', async () => {
    const { agent, executed } = setup("required", [[call("c1", "wipe"), providerDone()], [providerTextDelta("ok"), providerDone()]]);
    expect((await agent.createSession().run("go")).status).toBe("succeeded");
    expect(executed).toEqual(["wipe"]);
  });
});

describe("a never-settling summarizer or tool ends with the run", () => {
  const never = () => new Promise<never>(() => {});
  // Calls `dump` until a tool result is the last message, then answers; `direct` answers at once.
  function provider(state: { direct: boolean }) {
    let id = 0;
    return {
      id: "scripted",
      async *generate(request: ProviderRequest): AsyncIterable<ProviderEvent> {
        const last = request.messages[request.messages.length - 1];
        if (state.direct || last?.role === "tool") yield providerTextDelta("again");
        else yield call(`c${++id}`, "dump");
        yield providerDone();
      },
    };
  }

  it("a summarizer that never settles ends at maxWallTimeMs and on session.abort(); the session runs again", async () => {
    const state = { direct: false, settle: false };
    let called = 0;
    const summarize = (input: any) => {
      called++;
      expect(input.signal).toBeInstanceOf(AbortSignal);
      return state.settle ? "short" : never();
    };
    const tool: ToolDefinition = { name: "dump", parameters: { type: "object" }, execute: () => "x".repeat(100) };
    const agent = createAgent({ model, provider: provider(state), tools: [tool], toolResultFold: { summarize, minAgeTurns: 1, minBytes: 1 } });
    const session = agent.createSession();
    const timed: any = await session.run("go", { limits: { maxWallTimeMs: 200 } }).catch((e: any) => e.result);
    expect(timed).toMatchObject({ status: "failed", limit: { limit: "maxWallTimeMs" } });
    expect(called).toBe(1);

    const running = session.run("go").catch((e: any) => e.result);
    while (called < 2) await new Promise((r) => setTimeout(r, 5));
    session.abort("stop");
    expect(await running).toMatchObject({ status: "aborted" });
    state.settle = true;
    expect(await session.run("go")).toMatchObject({ status: "succeeded", text: "again" });
  });

  it("a tool that never settles ends at maxWallTimeMs and on session.abort(); the session runs again", async () => {
    const state = { direct: false };
    let called = 0;
    const tool: ToolDefinition = { name: "dump", parameters: { type: "object" }, execute: () => (called++, never()) };
    const agent = createAgent({ model, provider: provider(state), tools: [tool] });
    const session = agent.createSession();
    const timed: any = await session.run("go", { limits: { maxWallTimeMs: 200 } }).catch((e: any) => e.result);
    expect(timed).toMatchObject({ status: "failed", limit: { limit: "maxWallTimeMs" } });
    const running = session.run("go").catch((e: any) => e.result);
    while (called < 2) await new Promise((r) => setTimeout(r, 5));
    session.abort("stop");
    expect(await running).toMatchObject({ status: "aborted" });
    state.direct = true;
    expect(await session.run("go")).toMatchObject({ status: "succeeded", text: "again" });
  });
});
