// Human approval before side effects (docs/agent.md "Approval and durable runs"): durable
// suspension on `runState`, redacted pending decisions, resume with every outcome, sticky and
// partial batches, modified arguments, the no-side-effect guarantee of invalid resumes, and the
// agent fingerprint. Everything goes through the public API.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  createAgent,
  createMockProvider,
  createMemoryCheckpointStore,
  createSqliteCheckpointStore,
  providerDone,
  providerTextDelta,
  providerToolCall,
  providerUsage,
  resumeAgentRun,
  resumeAgentRunStream,
  toolCallContent,
  AgentDecisionError,
  AgentRunStateError,
  AGENT_RUN_STATE_NAMESPACE,
  APPROVAL_LIMITS,
  type ProviderEvent,
  type ProviderRequest,
  type ToolDefinition,
} from "../index.mjs";
import { assertCheckpointStoreConforms } from "../testing/checkpoint-store-conformance.mjs";

const model = { provider: "mock", model: "demo" };
const dir = mkdtempSync(join(tmpdir(), "prism-approval-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const call = (id: string, name: string, args: Record<string, unknown> = {}): ProviderEvent => providerToolCall(toolCallContent(id, name, args));

/** Tools that record each execution (name + arguments) in `log`. */
function tools(log: string[], extra: Record<string, Partial<ToolDefinition>> = {}): ToolDefinition[] {
  const make = (name: string): ToolDefinition => ({
    name,
    parameters: { type: "object", properties: { amount: { type: "number" }, to: { type: "string" } }, additionalProperties: false },
    execute(args, ctx) {
      log.push(`${name}:${JSON.stringify(args)}`);
      return { toolCallId: ctx.toolCallId, name, value: { done: name, args } };
    },
    ...extra[name],
  });
  return [make("pay"), make("send"), make("read")];
}

/** Counts every write to a store. */
function counting(store = createMemoryCheckpointStore()) {
  const counts = { saves: 0 };
  return {
    counts,
    store: {
      ...store,
      saveCheckpoint: (input: any) => {
        counts.saves++;
        return store.saveCheckpoint(input);
      },
      loadCheckpoint: (input: any) => store.loadCheckpoint(input),
      listCheckpoints: (q: any) => store.listCheckpoints(q),
      deleteCheckpoint: (input: any) => store.deleteCheckpoint(input),
    },
  };
}

function setup(script: ProviderEvent[][], opts: { extra?: Record<string, Partial<ToolDefinition>>; interrupt?: boolean; revision?: string; config?: Record<string, unknown> } = {}) {
  const log: string[] = [];
  const requests: ProviderRequest[] = [];
  const { store, counts } = counting();
  const provider = createMockProvider(script, { onRequest: (r) => void requests.push(r) });
  const agentTools = tools(log, opts.extra);
  const agent = createAgent({ id: "payments-agent", model, provider, tools: agentTools, ...opts.config } as any);
  const runState = { checkpoints: store, definitionRevision: opts.revision ?? "r1", interruptBeforeTool: opts.interrupt ?? true };
  return { agent, log, requests, store, counts, runState, agentTools };
}

/** The tool rows of a request, by call id. */
function toolRows(request: ProviderRequest) {
  const rows: Record<string, any> = {};
  for (const m of request.messages) if (m.role === "tool") for (const b of m.content as any[]) if (b.type === "tool_result") rows[b.toolCallId] = b;
  return rows;
}

describe("a durable run suspends before a gated side effect", () => {
  it("interruptBeforeTool suspends with a redacted interruption and runs nothing", async () => {
    const { agent, log, runState, store } = setup([[call("c1", "pay", { amount: 5, to: "secret-account" }), providerDone()], [providerTextDelta("paid"), providerDone()]]);
    const session = agent.createSession();
    const events: any[] = [];
    const sub = session.subscribe();
    const collecting = (async () => {
      for await (const e of sub) events.push(e);
    })();
    const result: any = await session.run("pay 5", { runState });
    await collecting;
    expect(result.status).toBe("suspended");
    expect(log).toEqual([]);
    expect(result.runState).toMatchObject({ status: "suspended", version: 1, agentId: "payments-agent", definitionRevision: "r1" });
    expect(result.runState.fingerprint).toMatch(/^sha256:[0-9a-f]{64}$/);
    const [pending] = result.interruption.pendingDecisions;
    expect(result.interruption).toMatchObject({ kind: "tool_approval", toolCallId: "c1", toolName: "pay" });
    expect(pending).toMatchObject({ kind: "tool_approval", toolCallId: "c1", scope: { toolName: "pay" }, reason: "Tool side effect requires approval" });
    expect(pending.approvalId).toMatch(/^approval_/);
    expect(pending.scope.argumentsHash).toMatch(/^[0-9a-f]{64}$/);
    // Never the raw arguments, neither in the result nor in its events.
    expect(JSON.stringify(result.interruption)).not.toContain("secret-account");
    expect(events.map((e) => e.type)).toContain("agent_suspended");
    expect(events.map((e) => e.type)).not.toContain("agent_finished");
    const saved = await store.loadCheckpoint({ namespace: AGENT_RUN_STATE_NAMESPACE, key: result.runId });
    expect(saved?.version).toBe(1);
    expect((saved?.value as any).status).toBe("suspended");
  });

  it("a parallel round suspends once with one pending decision per gated call; ungated calls still run", async () => {
    const { agent, log, runState } = setup(
      [[call("c1", "pay", { amount: 1 }), call("c2", "read"), call("c3", "send", { to: "x" }), providerDone()], [providerTextDelta("ok"), providerDone()]],
      { interrupt: false, extra: { pay: { needsApproval: true } as any, send: { needsApproval: (args: any) => args.to !== "self" } as any } },
    );
    const result: any = await agent.createSession().run("go", { runState, loop: { toolConcurrency: 3 } });
    expect(result.status).toBe("suspended");
    expect(log).toEqual(["read:{}"]);
    expect(result.interruption.pendingDecisions.map((p: any) => p.toolCallId)).toEqual(["c1", "c3"]);
    expect(result.interruption.reason).toBe("2 tool side effects require approval");
  });

  it("a needsApproval predicate decides per call; a throwing predicate keeps the pause", async () => {
    const { agent, log, runState } = setup(
      [[call("c1", "send", { to: "self" }), call("c2", "pay", { amount: 1 }), providerDone()], [providerTextDelta("ok"), providerDone()]],
      {
        interrupt: false,
        extra: {
          send: { needsApproval: (args: any) => args.to !== "self" } as any,
          pay: {
            needsApproval: () => {
              throw new Error("broken rule");
            },
          } as any,
        },
      },
    );
    const result: any = await agent.createSession().run("go", { runState });
    expect(log).toEqual(['send:{"to":"self"}']);
    expect(result.interruption.pendingDecisions.map((p: any) => p.toolCallId)).toEqual(["c2"]);
  });

  it("a run without gated calls finishes normally; needsApproval without runState is refused before any turn", async () => {
    const { agent, log, runState } = setup([[call("c1", "read"), providerDone()], [providerTextDelta("ok"), providerDone()]], { interrupt: false });
    expect((await agent.createSession().run("go", { runState })).status).toBe("succeeded");
    expect(log).toEqual(["read:{}"]);
    let turns = 0;
    const gated = createAgent({ id: "a", model, provider: createMockProvider([providerDone()], { onRequest: () => void turns++ }), tools: tools([], { pay: { needsApproval: true } as any }) });
    await expect(gated.createSession().run("go")).rejects.toBeInstanceOf(AgentRunStateError);
    await expect(gated.createSession().run("go")).rejects.toMatchObject({ code: "ERR_PRISM_AGENT_RUN_STATE" });
    expect(turns).toBe(0);
  });

  it("interruptBeforeTool does not gate the generated search_tools; the tool it finds still waits", async () => {
    const { agent, log, runState, requests } = setup([[call("s1", "search_tools", { query: "pay" }), call("c1", "pay", { amount: 1 }), providerDone()], [providerTextDelta("ok"), providerDone()]]);
    const result: any = await agent.createSession().run("go", { runState, toolsDisclosure: "search" });
    expect(result.status).toBe("suspended");
    expect(result.interruption.pendingDecisions.map((p: any) => p.toolCallId)).toEqual(["c1"]);
    expect(log).toEqual([]);
    expect(requests).toHaveLength(1);
  });

  it("a round that fails leaves no gated call without a row and no suspension", async () => {
    const tripwire = { name: "stop-reads", stage: "tool_input", evaluate: (ctx: any) => (ctx.value.name === "read" ? { action: "tripwire", reason: "no" } : { action: "allow" }) };
    const { agent, log, runState, store } = setup([[call("c1", "pay", { amount: 1 }), call("c2", "read"), providerDone()]], {
      interrupt: false,
      extra: { pay: { needsApproval: true } as any },
      config: { guardrails: { toolInput: [tripwire] } },
    });
    const session = agent.createSession();
    const err: any = await session.run("go", { runState }).catch((e) => e);
    expect(err.result.status).toBe("failed");
    expect(log).toEqual([]);
    const rows = session.messages().filter((m) => m.role === "tool").map((m: any) => m.content[0]);
    expect(rows.map((r: any) => r.toolCallId).sort()).toEqual(["c1", "c2"]);
    expect(rows.find((r: any) => r.toolCallId === "c1").error.code).toBe("tool_call_not_dispatched");
    expect((await store.listCheckpoints({ namespace: AGENT_RUN_STATE_NAMESPACE })).items).toEqual([]);
  });

  it("refuses a durable run without an agent id, revision or store", async () => {
    const provider = createMockProvider([providerDone()]);
    const anonymous = createAgent({ model, provider });
    const checkpoints = createMemoryCheckpointStore();
    await expect(anonymous.createSession().run("x", { runState: { checkpoints, definitionRevision: "r" } })).rejects.toThrow(/require AgentConfig.id or name/);
    const named = createAgent({ id: "a", model, provider });
    await expect(named.createSession().run("x", { runState: { checkpoints, definitionRevision: " " } })).rejects.toThrow(/definitionRevision/);
    await expect(named.createSession().run("x", { runState: { checkpoints: {}, definitionRevision: "r" } } as any)).rejects.toThrow(/CheckpointStore/);
  });
});

describe("resumeAgentRun", () => {
  it("allow_once runs the call, and the next provider request carries its result", async () => {
    const usage = providerUsage({ inputTokens: 10, outputTokens: 2 });
    const { agent, log, runState, requests } = setup([[call("c1", "pay", { amount: 5 }), usage, providerDone()], [providerTextDelta("paid"), usage, providerDone()]]);
    const first: any = await agent.createSession().run("pay 5", { runState });
    const approvalId = first.interruption.pendingDecisions[0].approvalId;
    const resumed: any = await resumeAgentRun(agent, { runId: first.runId, sessionId: first.sessionId }, { decisions: [{ approvalId, outcome: "allow_once" }], expectedVersion: first.runState.version }, runState);
    expect(resumed).toMatchObject({ status: "succeeded", text: "paid", runId: first.runId, sessionId: first.sessionId });
    expect(log).toEqual(['pay:{"amount":5}']);
    expect(requests).toHaveLength(2);
    const rows = toolRows(requests[1]);
    expect(rows.c1.result).toEqual({ done: "pay", args: { amount: 5 } });
    // The user message and the assistant's call are in the resumed request too, after the tool list.
    expect(requests[1].messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool"]);
    // The run's usage spans both sides of the suspension.
    expect(resumed.usage).toMatchObject({ inputTokens: 20, outputTokens: 4, totalTokens: 24 });
  });

  it("reject_once continues with the blocked result and its reason; the tool never runs", async () => {
    const { agent, log, runState, requests } = setup([[call("c1", "pay", { amount: 5 }), providerDone()], [providerTextDelta("not paid"), providerDone()]]);
    const first: any = await agent.createSession().run("pay 5", { runState });
    const approvalId = first.interruption.pendingDecisions[0].approvalId;
    const resumed: any = await resumeAgentRun(agent, first, { decisions: [{ approvalId, outcome: "reject_once", reason: "over budget" }], expectedVersion: 1 }, runState);
    expect(resumed.status).toBe("succeeded");
    expect(log).toEqual([]);
    expect(toolRows(requests[1]).c1.error).toMatchObject({ code: "approval_rejected", message: "over budget" });
  });

  it("legacy approve allows every pending call once; legacy deny ends the run denied", async () => {
    const a = setup([[call("c1", "pay", { amount: 1 }), call("c2", "send", { to: "x" }), providerDone()], [providerTextDelta("ok"), providerDone()]]);
    const first: any = await a.agent.createSession().run("go", { runState: a.runState });
    expect((await resumeAgentRun(a.agent, first, { decision: "approve", expectedVersion: 1 }, a.runState)).status).toBe("succeeded");
    expect(a.log).toEqual(['pay:{"amount":1}', 'send:{"to":"x"}']);

    const d = setup([[call("c1", "pay", { amount: 1 }), providerDone()], [providerTextDelta("ok"), providerDone()]]);
    const run: any = await d.agent.createSession().run("go", { runState: d.runState });
    const denied: any = await resumeAgentRun(d.agent, run, { decision: "deny", expectedVersion: 1 }, d.runState);
    expect(denied).toMatchObject({ status: "denied", runState: { status: "denied", version: 2 } });
    expect(d.log).toEqual([]);
    expect(d.requests).toHaveLength(1);
    // A denied run is over.
    await expect(resumeAgentRun(d.agent, run, { decision: "approve", expectedVersion: 2 }, d.runState)).rejects.toMatchObject({ code: "ERR_PRISM_AGENT_RUN_STATE" });
  });

  it("a partial batch re-suspends with the rest; the decided call runs when the batch completes", async () => {
    const { agent, log, runState, requests } = setup([[call("c1", "pay", { amount: 1 }), call("c2", "send", { to: "x" }), providerDone()], [providerTextDelta("ok"), providerDone()]]);
    const first: any = await agent.createSession().run("go", { runState });
    const [p1, p2] = first.interruption.pendingDecisions;
    const partial: any = await resumeAgentRun(agent, first, { decisions: [{ approvalId: p1.approvalId, outcome: "allow_once" }], expectedVersion: 1 }, runState);
    expect(partial.status).toBe("suspended");
    expect(partial.runState.version).toBe(2);
    expect(partial.interruption.pendingDecisions.map((p: any) => p.approvalId)).toEqual([p2.approvalId]);
    expect(partial.interruption.reason).toBe("1 approval request(s) remain");
    expect(log).toEqual([]);
    // The first approval id is decided: deciding it again is unknown.
    await expect(resumeAgentRun(agent, first, { decisions: [{ approvalId: p1.approvalId, outcome: "allow_once" }], expectedVersion: 2 }, runState)).rejects.toMatchObject({ code: "ERR_PRISM_DECISION_UNKNOWN" });
    const done: any = await resumeAgentRun(agent, first, { decisions: [{ approvalId: p2.approvalId, outcome: "reject_once" }], expectedVersion: 2 }, runState);
    expect(done.status).toBe("succeeded");
    expect(log).toEqual(['pay:{"amount":1}']);
    const rows = toolRows(requests[1]);
    expect(rows.c1.result).toMatchObject({ done: "pay" });
    expect(rows.c2.error).toMatchObject({ code: "approval_rejected", message: "Approval rejected" });
  });

  it("allow_for_run and reject_for_run stick for the rest of the run", async () => {
    const { agent, log, runState, requests } = setup([
      [call("c1", "pay", { amount: 1 }), call("c2", "send", { to: "x" }), providerDone()],
      [call("c3", "pay", { amount: 1 }), call("c4", "send", { to: "x" }), call("c5", "pay", { amount: 2 }), providerDone()],
      [providerTextDelta("ok"), providerDone()],
    ]);
    const first: any = await agent.createSession().run("go", { runState });
    const [p1, p2] = first.interruption.pendingDecisions;
    const second: any = await resumeAgentRun(
      agent,
      first,
      { decisions: [{ approvalId: p1.approvalId, outcome: "allow_for_run" }, { approvalId: p2.approvalId, outcome: "reject_for_run", reason: "never send" }], expectedVersion: 1 },
      runState,
    );
    // c3 (same scope as c1) runs, c4 (same scope as c2) is blocked, c5 (other arguments) waits.
    expect(second.status).toBe("suspended");
    expect(second.interruption.pendingDecisions.map((p: any) => p.toolCallId)).toEqual(["c5"]);
    expect(log).toEqual(['pay:{"amount":1}', 'pay:{"amount":1}']);
    const third: any = await resumeAgentRun(agent, first, { decision: "approve", expectedVersion: second.runState.version }, runState);
    expect(third.status).toBe("succeeded");
    const rows = toolRows(requests[2]);
    expect(rows.c4.error).toMatchObject({ code: "approval_rejected", message: "never send" });
    expect(rows.c5.result).toMatchObject({ args: { amount: 2 } });
  });

  it("modifiedArguments are revalidated; valid ones run in place of the model's", async () => {
    const guard = { name: "no-big", stage: "tool_input", evaluate: (ctx: any) => (ctx.value.arguments?.amount > 100 ? { action: "block", reason: "too big" } : { action: "allow" }) };
    const { agent, log, runState, counts } = setup([[call("c1", "pay", { amount: 5 }), providerDone()], [providerTextDelta("ok"), providerDone()]], { config: { guardrails: { toolInput: [guard] } } });
    const first: any = await agent.createSession().run("go", { runState });
    const approvalId = first.interruption.pendingDecisions[0].approvalId;
    const before = counts.saves;
    for (const modifiedArguments of [{ amount: "five" }, { amount: 5, extra: true }, { amount: 500 }]) {
      await expect(resumeAgentRun(agent, first, { decisions: [{ approvalId, outcome: "allow_once", modifiedArguments }], expectedVersion: 1 }, runState)).rejects.toMatchObject({
        name: "AgentDecisionError",
        code: "ERR_PRISM_DECISION_INVALID",
      });
    }
    expect(counts.saves).toBe(before);
    expect(log).toEqual([]);
    await resumeAgentRun(agent, first, { decisions: [{ approvalId, outcome: "allow_once", modifiedArguments: { amount: 3 } }], expectedVersion: 1 }, runState);
    expect(log).toEqual(['pay:{"amount":3}']);
  });

  it("invalid resume input fails closed: no checkpoint write, no tool call, no event", async () => {
    const { agent, log, runState, counts, requests } = setup([[call("c1", "pay", { amount: 5 }), providerDone()], [providerTextDelta("ok"), providerDone()]]);
    const session = agent.createSession();
    const first: any = await session.run("go", { runState });
    const approvalId = first.interruption.pendingDecisions[0].approvalId;
    const other = setup([[call("z1", "pay", { amount: 5 }), providerDone()]]);
    const foreign: any = await other.agent.createSession().run("go", { runState: other.runState });
    const foreignId = foreign.interruption.pendingDecisions[0].approvalId;
    const cyclic: any = { approvalId, outcome: "allow_once" };
    cyclic.self = cyclic;
    const cases: [unknown, string][] = [
      [null, "ERR_PRISM_DECISION_INVALID"],
      ["approve", "ERR_PRISM_DECISION_INVALID"],
      [{ decision: "approve" }, "ERR_PRISM_DECISION_INVALID"],
      [{ decision: "approve", expectedVersion: 0 }, "ERR_PRISM_DECISION_INVALID"],
      [{ decision: "approve", expectedVersion: NaN }, "ERR_PRISM_DECISION_INVALID"],
      [{ decision: "sideways", expectedVersion: 1 }, "ERR_PRISM_DECISION_INVALID"],
      [{ expectedVersion: 1 }, "ERR_PRISM_DECISION_INVALID"],
      [{ decision: "approve", decisions: [{ approvalId, outcome: "allow_once" }], expectedVersion: 1 }, "ERR_PRISM_DECISION_INVALID"],
      [{ decisions: [], expectedVersion: 1 }, "ERR_PRISM_DECISION_INVALID"],
      [{ decisions: {}, expectedVersion: 1 }, "ERR_PRISM_DECISION_INVALID"],
      [{ decisions: [null], expectedVersion: 1 }, "ERR_PRISM_DECISION_INVALID"],
      [{ decisions: [{ approvalId, outcome: "allow" }], expectedVersion: 1 }, "ERR_PRISM_DECISION_INVALID"],
      [{ decisions: [{ approvalId: 7, outcome: "allow_once" }], expectedVersion: 1 }, "ERR_PRISM_DECISION_INVALID"],
      [{ decisions: [{ approvalId, outcome: "allow_once", reason: 5 }], expectedVersion: 1 }, "ERR_PRISM_DECISION_INVALID"],
      [{ decisions: [{ approvalId, outcome: "allow_once", reason: () => "x" }], expectedVersion: 1 }, "ERR_PRISM_DECISION_INVALID"],
      [{ decisions: [{ approvalId, outcome: "allow_once", modifiedArguments: () => ({}) }], expectedVersion: 1 }, "ERR_PRISM_DECISION_INVALID"],
      [{ decisions: [{ approvalId, outcome: "allow_once", modifiedArguments: [] }], expectedVersion: 1 }, "ERR_PRISM_DECISION_INVALID"],
      [{ decisions: [cyclic], expectedVersion: 1 }, "ERR_PRISM_DECISION_INVALID"],
      [{ decisions: [{ approvalId, outcome: "reject_once", reason: "x".repeat(APPROVAL_LIMITS.MAX_DECISION_REASON_BYTES + 1) }], expectedVersion: 1 }, "ERR_PRISM_DECISION_LIMIT"],
      [{ decisions: [{ approvalId, outcome: "allow_once", modifiedArguments: { to: "y".repeat(APPROVAL_LIMITS.MAX_DECISION_PAYLOAD_BYTES) } }], expectedVersion: 1 }, "ERR_PRISM_DECISION_LIMIT"],
      [{ decisions: Array.from({ length: 129 }, (_, i) => ({ approvalId: `a${i}`, outcome: "allow_once" })), expectedVersion: 1 }, "ERR_PRISM_DECISION_LIMIT"],
      [{ decisions: [{ approvalId, outcome: "allow_once" }, { approvalId, outcome: "reject_once" }], expectedVersion: 1 }, "ERR_PRISM_DECISION_DUPLICATE"],
      [{ decisions: [{ approvalId: "approval_unknown", outcome: "allow_once" }], expectedVersion: 1 }, "ERR_PRISM_DECISION_UNKNOWN"],
      [{ decisions: [{ approvalId: foreignId, outcome: "allow_once" }], expectedVersion: 1 }, "ERR_PRISM_DECISION_UNKNOWN"],
      [{ decisions: [{ approvalId, outcome: "allow_once", elicitation: { a: 1 } }], expectedVersion: 1 }, "ERR_PRISM_DECISION_SCOPE"],
    ];
    const saves = counts.saves;
    for (const [i, [resume, code]] of cases.entries()) {
      const err: any = await resumeAgentRun(agent, first, resume as any, runState).then(
        () => undefined,
        (e) => e,
      );
      expect(err, `case ${i}`).toBeInstanceOf(AgentDecisionError);
      expect(err.code, `case ${i}`).toBe(code);
    }
    // A version the run is not at: AgentRunStateError, stale.
    await expect(resumeAgentRun(agent, first, { decision: "approve", expectedVersion: 2 }, runState)).rejects.toMatchObject({ name: "AgentRunStateError", code: "ERR_PRISM_AGENT_RUN_STALE" });
    // A stream resume refuses the same way and yields nothing.
    const stream = resumeAgentRunStream(agent, first, { decision: "sideways", expectedVersion: 1 } as any, runState);
    await expect(stream.next()).rejects.toBeInstanceOf(AgentDecisionError);
    expect(counts.saves).toBe(saves);
    expect(log).toEqual([]);
    expect(requests).toHaveLength(1);
    // The run is still resumable as it was.
    expect((await resumeAgentRun(agent, first, { decisions: [{ approvalId, outcome: "allow_once" }], expectedVersion: 1 }, runState)).status).toBe("succeeded");
  });

  it("a resume claims once: a second resume of the same version is stale", async () => {
    const { agent, log, runState } = setup([[call("c1", "pay", { amount: 5 }), providerDone()], [providerTextDelta("ok"), providerDone()]]);
    const first: any = await agent.createSession().run("go", { runState });
    const results = await Promise.allSettled([
      resumeAgentRun(agent, first, { decision: "approve", expectedVersion: 1 }, runState),
      resumeAgentRun(agent, first, { decision: "approve", expectedVersion: 1 }, runState),
    ]);
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    // Both read version 1; the loser's claim lost the compare-and-swap: stale (read the run again),
    // not a run to reconcile.
    expect(results.find((r) => r.status === "rejected")).toMatchObject({ reason: { name: "AgentRunStateError", code: "ERR_PRISM_AGENT_RUN_STALE", message: "Stale or non-suspended agent run resume" } });
    expect(log).toEqual(['pay:{"amount":5}']);
  });

  it("refuses a resume whose agent changed without a new definitionRevision", async () => {
    const { agent, runState, store, log } = setup([[call("c1", "pay", { amount: 5 }), providerDone()], [providerTextDelta("ok"), providerDone()]]);
    const first: any = await agent.createSession().run("go", { runState });
    const changedTools = tools(log);
    changedTools[0] = { ...changedTools[0], parameters: { type: "object", properties: { amount: { type: "number", maximum: 1 } } } };
    const changed = createAgent({ id: "payments-agent", model, provider: createMockProvider([providerDone()]), tools: changedTools });
    await expect(resumeAgentRun(changed, first, { decision: "approve", expectedVersion: 1 }, runState)).rejects.toThrow(/fingerprint mismatch/);
    const otherModel = createAgent({ id: "payments-agent", model: { provider: "mock", model: "other" }, provider: createMockProvider([providerDone()]), tools: tools(log) });
    await expect(resumeAgentRun(otherModel, first, { decision: "approve", expectedVersion: 1 }, runState)).rejects.toThrow(/fingerprint mismatch/);
    // The same definition under a new revision is still refused: the checkpoint names r1.
    await expect(resumeAgentRun(agent, first, { decision: "approve", expectedVersion: 1 }, { checkpoints: store, definitionRevision: "r2" })).rejects.toMatchObject({ code: "ERR_PRISM_AGENT_RUN_STATE" });
    expect(log).toEqual([]);
  });

  it("resumeAgentRunStream yields the resumed run's events", async () => {
    const { agent, runState } = setup([[call("c1", "pay", { amount: 5 }), providerDone()], [providerTextDelta("ok"), providerDone()]]);
    const first: any = await agent.createSession().run("go", { runState });
    const types: string[] = [];
    for await (const e of resumeAgentRunStream(agent, first, { decision: "approve", expectedVersion: 1 }, runState)) types.push(e.type);
    expect(types.slice(0, 2)).toEqual(["agent_started", "agent_resumed"]);
    expect(types).toContain("tool_execution_finished");
    expect(types.at(-1)).toBe("agent_finished");
  });

  it("more than 32 gated calls in one round fail the run with ERR_PRISM_DECISION_LIMIT", async () => {
    const calls = Array.from({ length: 33 }, (_, i) => call(`c${i}`, "pay", { amount: i }));
    const { agent, runState, log } = setup([[...calls, providerDone()]]);
    const session = agent.createSession();
    const err: any = await session.run("go", { runState }).catch((e) => e);
    expect(err.result.error.code).toBe("ERR_PRISM_DECISION_LIMIT");
    expect(log).toEqual([]);
    // No call is left without a row.
    expect(session.messages().filter((m) => m.role === "tool")).toHaveLength(33);
  });
});

describe("bounds set by the host", () => {
  it("runState.maxPendingDecisions lowers the pending bound; values past the hard cap are refused", async () => {
    const { agent, runState, log } = setup([[call("c1", "pay", { amount: 1 }), call("c2", "pay", { amount: 2 }), call("c3", "pay", { amount: 3 }), providerDone()]]);
    const err: any = await agent.createSession().run("go", { runState: { ...runState, maxPendingDecisions: 2 } }).catch((e) => e);
    expect(err.result.error).toMatchObject({ code: "ERR_PRISM_DECISION_LIMIT", message: "Pending decisions exceed 2 per run" });
    expect(log).toEqual([]);
    for (const bad of [0, 129, 1.5]) {
      await expect(agent.createSession().run("go", { runState: { ...runState, maxPendingDecisions: bad } })).rejects.toBeInstanceOf(AgentRunStateError);
    }
    await expect(agent.createSession().run("go", { runState: { ...runState, maxStickyDecisions: 257 } })).rejects.toBeInstanceOf(AgentRunStateError);
  });

  it("maxStickyDecisions bounds the sticky decisions a batch may add", async () => {
    const { agent, runState, log, counts } = setup([[call("c1", "pay", { amount: 1 }), call("c2", "send", { to: "x" }), providerDone()], [providerTextDelta("ok"), providerDone()]]);
    const bounded = { ...runState, maxStickyDecisions: 1 };
    const first: any = await agent.createSession().run("go", { runState: bounded });
    const decisions = first.interruption.pendingDecisions.map((p: any) => ({ approvalId: p.approvalId, outcome: "allow_for_run" }));
    const saves = counts.saves;
    await expect(resumeAgentRun(agent, first, { decisions, expectedVersion: 1 }, bounded)).rejects.toMatchObject({ code: "ERR_PRISM_DECISION_LIMIT" });
    expect(counts.saves).toBe(saves);
    expect(log).toEqual([]);
  });
});

describe("checkpoint stores", () => {
  it("the memory store passes the conformance kit", async () => {
    await assertCheckpointStoreConforms(() => createMemoryCheckpointStore());
  });

  it("the SQLite store passes the conformance kit and keeps a run across store instances", async () => {
    let n = 0;
    await assertCheckpointStoreConforms(() => createSqliteCheckpointStore({ path: join(dir, `kit-${n++}.db`) }));
    const path = join(dir, "run.db");
    const { agent, log } = setup([[call("c1", "pay", { amount: 5 }), providerDone()], [providerTextDelta("ok"), providerDone()]]);
    const a = createSqliteCheckpointStore({ path });
    const first: any = await agent.createSession().run("go", { runState: { checkpoints: a, definitionRevision: "r1", interruptBeforeTool: true } });
    a.close();
    const b = createSqliteCheckpointStore({ path });
    const resumed: any = await resumeAgentRun(agent, first, { decision: "approve", expectedVersion: 1 }, { checkpoints: b, definitionRevision: "r1" });
    expect(resumed.status).toBe("succeeded");
    expect(log).toEqual(['pay:{"amount":5}']);
    expect((await b.loadCheckpoint({ namespace: AGENT_RUN_STATE_NAMESPACE, key: first.runId }))?.value).toMatchObject({ status: "succeeded" });
    b.close();
  });
});
