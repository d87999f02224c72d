// createAgentRunLifecycle (docs/agent.md "The run lifecycle"): status, resume and resumeStream of a
// stored durable run for its owner, through the agent resolveAgent answers. Refusals (another owner,
// a missing run, another session or agent, a stale fencing token, an edited checkpoint, bad options)
// change nothing: no resolveAgent call where the run was refused on load, no write, no tool call.
// Last, the MCP server's agent.<id>.status / agent.<id>.resume tools over it.
import { describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import {
  createAgent,
  createAgentRunLifecycle,
  createMemoryCheckpointStore,
  createMockProvider,
  providerDone,
  providerTextDelta,
  providerToolCall,
  toolCallContent,
  AgentDecisionError,
  AgentRunStateError,
  AGENT_RUN_STATE_NAMESPACE,
  type AgentRunLifecycle,
  type CheckpointStore,
  type OwnershipScope,
  type ProviderEvent,
} from "../index.mjs";
import { createPrismMcpServer } from "../mcp/index.mjs";

const model = { provider: "mock", model: "demo" };
const OWNER: OwnershipScope = { tenantId: "tenant-1", userId: "user-1" };
const call = (id: string, name: string, args: Record<string, unknown> = {}): ProviderEvent => providerToolCall(toolCallContent(id, name, args));

/** A store that counts saves. */
function counting(store: CheckpointStore = createMemoryCheckpointStore()) {
  const counts = { saves: 0 };
  const wrapped: CheckpointStore = {
    saveCheckpoint: (input) => {
      counts.saves++;
      return store.saveCheckpoint(input);
    },
    loadCheckpoint: (input) => store.loadCheckpoint(input),
    listCheckpoints: (q) => store.listCheckpoints(q),
    deleteCheckpoint: (input) => store.deleteCheckpoint(input),
  };
  return { store: wrapped, raw: store, counts };
}

/**
 * An agent "billing" whose first turn calls pay(amount) (and send when `two`), then answers "done";
 * a durable run of it suspended for OWNER before the side effect.
 */
async function suspendedRun(opts: { two?: boolean; fencingToken?: number; ownership?: OwnershipScope | null } = {}) {
  const log: string[] = [];
  const { store, raw, counts } = counting();
  const first = [call("c1", "pay", { amount: 5 })];
  if (opts.two) first.push(call("c2", "send", { to: "x" }));
  const provider = createMockProvider([
    [...first, providerDone()],
    [providerTextDelta("done"), providerDone()],
  ]);
  const tool = (name: string) => ({
    name,
    parameters: { type: "object", properties: { amount: { type: "number" }, to: { type: "string" } }, additionalProperties: false },
    execute: (args: unknown, ctx: { toolCallId: string }) => {
      log.push(`${name}:${JSON.stringify(args)}`);
      return { toolCallId: ctx.toolCallId, name, value: "ok" };
    },
  });
  const runState: any = { checkpoints: store, definitionRevision: "r1", interruptBeforeTool: true };
  if (opts.fencingToken !== undefined) runState.fencingToken = opts.fencingToken;
  const agent = createAgent({ id: "billing", model, provider, tools: [tool("pay"), tool("send")] } as any);
  const ownership = opts.ownership === null ? undefined : (opts.ownership ?? OWNER);
  const suspended: any = await agent.createSession().run("pay 5", { runState, ...(ownership ? { ownership } : {}) });
  expect(suspended.status).toBe("suspended");
  const resolved: Array<{ agentId: string; ownership?: OwnershipScope }> = [];
  const lifecycle = (extra: { fencingToken?: number } = {}): AgentRunLifecycle =>
    createAgentRunLifecycle({
      checkpoints: store,
      resolveAgent: ({ agentId, ownership }) => {
        resolved.push({ agentId, ownership });
        return { agent, definitionRevision: "r1" };
      },
      ...extra,
    });
  const ref = { runId: suspended.runId as string, sessionId: suspended.sessionId as string };
  const approve = { decision: "approve" as const, expectedVersion: suspended.runState.version as number };
  return { agent, log, store, raw, counts, suspended, lifecycle, resolved, ref, approve };
}

async function refusal(promise: Promise<unknown>) {
  try {
    await promise;
  } catch (error: any) {
    return { name: error.name, code: error.code, message: error.message };
  }
  throw new Error("expected a refusal");
}

describe("lifecycle.status", () => {
  it("answers the run's public state and version for its owner, nothing internal", async () => {
    const { lifecycle, suspended, ref, resolved } = await suspendedRun();
    const status = await lifecycle().status(ref, { ownership: OWNER, agentId: "billing" });
    expect(status.version).toBe(suspended.runState.version);
    expect(status.state).toEqual(suspended.runState);
    expect(status.state).toMatchObject({ schemaVersion: 1, agentId: "billing", definitionRevision: "r1", status: "suspended", runId: ref.runId, sessionId: ref.sessionId });
    expect(status.state.interruption?.pendingDecisions?.[0]).toMatchObject({ toolCallId: "c1", scope: { toolName: "pay" } });
    // The stored run keeps the transcript, the pending calls with their arguments and the owner: none leaves.
    expect(Object.keys(status.state).sort()).toEqual(["agentId", "definitionRevision", "fingerprint", "interruption", "model", "runId", "schemaVersion", "sessionId", "status", "version"]);
    expect(JSON.stringify(status)).not.toContain('"amount"');
    // Without the sessionId, and without the agentId capability, the same answer.
    expect(await lifecycle().status({ runId: ref.runId }, { ownership: OWNER })).toEqual(status);
    expect(resolved).toEqual([]); // status never resolves the agent
  });

  it("an unowned run is read without ownership", async () => {
    const { lifecycle, ref } = await suspendedRun({ ownership: null });
    expect((await lifecycle().status(ref)).state.status).toBe("suspended");
  });
});

describe("lifecycle.resume", () => {
  it("approve: resolves the stored run's agent for the caller's owner and runs the call once", async () => {
    const { lifecycle, log, ref, approve, resolved } = await suspendedRun();
    const lc = lifecycle();
    const result: any = await lc.resume(ref, approve, { ownership: OWNER, agentId: "billing" });
    expect(result.status).toBe("succeeded");
    expect(result.text).toBe("done");
    expect(log).toEqual(['pay:{"amount":5}']);
    expect(resolved).toEqual([{ agentId: "billing", ownership: OWNER }]);
    const after = await lc.status(ref, { ownership: OWNER });
    expect(after.state.status).toBe("succeeded");
    expect(after.version).toBeGreaterThan(approve.expectedVersion);
    // The same version again is stale: nothing runs twice.
    expect(await refusal(lc.resume(ref, approve, { ownership: OWNER }))).toMatchObject({ name: "AgentRunStateError", message: "Stale or non-suspended agent run resume" });
    expect(log).toHaveLength(1);
  });

  it("deny: the run ends denied and nothing runs", async () => {
    const { lifecycle, log, ref, approve } = await suspendedRun();
    const result: any = await lifecycle().resume(ref, { ...approve, decision: "deny" }, { ownership: OWNER });
    expect(result.status).toBe("denied");
    expect(log).toEqual([]);
    expect((await lifecycle().status(ref, { ownership: OWNER })).state.status).toBe("denied");
  });

  it("a decision batch: a partial one re-suspends, the rest resumes", async () => {
    const { lifecycle, log, ref, suspended } = await suspendedRun({ two: true });
    const [pay, send] = suspended.interruption.pendingDecisions;
    const lc = lifecycle();
    const partial: any = await lc.resume(ref, { expectedVersion: suspended.runState.version, decisions: [{ approvalId: pay.approvalId, outcome: "allow_once" }] }, { ownership: OWNER });
    expect(partial.status).toBe("suspended");
    expect(log).toEqual([]);
    const status = await lc.status(ref, { ownership: OWNER });
    expect(status.state.interruption?.pendingDecisions?.map((p) => p.approvalId)).toEqual([send.approvalId]);
    const done: any = await lc.resume(ref, { expectedVersion: status.version, decisions: [{ approvalId: send.approvalId, outcome: "reject_once", reason: "no" }] }, { ownership: OWNER });
    expect(done.status).toBe("succeeded");
    expect(log).toEqual(['pay:{"amount":5}']);
  });

  it("the approval binding still applies: an edited pending call is refused and nothing runs", async () => {
    const { lifecycle, log, ref, approve, raw } = await suspendedRun();
    const record: any = await raw.loadCheckpoint({ namespace: AGENT_RUN_STATE_NAMESPACE, key: ref.runId, ...OWNER });
    record.value.pendingCalls[0].call.arguments = { amount: 5000 };
    await raw.saveCheckpoint({ namespace: AGENT_RUN_STATE_NAMESPACE, key: ref.runId, version: record.version + 1, expectedVersion: record.version, value: record.value, ...OWNER });
    const err: any = await refusal(lifecycle().resume(ref, { ...approve, expectedVersion: record.version + 1 }, { ownership: OWNER }));
    expect(err).toMatchObject({ name: "AgentDecisionError", code: "ERR_PRISM_DECISION_BINDING" });
    expect(err.message).toMatch(/^Approval binding mismatch: .*nothing was run$/);
    expect(log).toEqual([]);
  });

  it("an agent of another revision is refused by the resume's own checks", async () => {
    const { agent, store, ref, approve, log } = await suspendedRun();
    const lc = createAgentRunLifecycle({ checkpoints: store, resolveAgent: () => ({ agent, definitionRevision: "r2" }) });
    expect(await refusal(lc.resume(ref, approve, { ownership: OWNER }))).toMatchObject({ name: "AgentRunStateError", message: "Agent definition revision or fingerprint mismatch on resume" });
    expect(log).toEqual([]);
  });

  it("an invalid resume is refused with the resume's own error", async () => {
    const { lifecycle, ref, log, counts } = await suspendedRun();
    const saves = counts.saves;
    const err = await refusal(lifecycle().resume(ref, { decision: "sideways", expectedVersion: 1 } as any, { ownership: OWNER }));
    expect(err).toMatchObject({ name: "AgentDecisionError", code: "ERR_PRISM_DECISION_INVALID" });
    expect(counts.saves).toBe(saves);
    expect(log).toEqual([]);
    expect(AgentDecisionError).toBeTypeOf("function");
  });
});

describe("lifecycle.resumeStream", () => {
  it("streams the resumed run's events, bounded by maxQueuedEvents / overflow", async () => {
    const { lifecycle, log, ref, approve, resolved } = await suspendedRun();
    const events: any[] = [];
    for await (const event of lifecycle().resumeStream(ref, approve, { ownership: OWNER, agentId: "billing", maxQueuedEvents: 64, overflow: "close" })) events.push(event);
    expect(log).toEqual(['pay:{"amount":5}']);
    expect(events.some((e) => e.type === "agent_resumed")).toBe(true);
    expect(events.at(-1)?.type).toBe("agent_finished");
    expect(events.every((e) => e.runId === undefined || e.runId === ref.runId)).toBe(true);
    expect(resolved).toEqual([{ agentId: "billing", ownership: OWNER }]);
  });

  it("a deny yields one agent_denied event", async () => {
    const { lifecycle, log, ref, approve } = await suspendedRun();
    const events: any[] = [];
    for await (const event of lifecycle().resumeStream(ref, { ...approve, decision: "deny" }, { ownership: OWNER })) events.push(event);
    expect(events).toEqual([{ type: "agent_denied", sessionId: ref.sessionId, runId: ref.runId, interruption: expect.any(Object), version: approve.expectedVersion + 1 }]);
    expect(log).toEqual([]);
  });

  it("an aborted signal stops it before anything is read", async () => {
    const { lifecycle, ref, approve, resolved, log } = await suspendedRun();
    const controller = new AbortController();
    controller.abort(new Error("caller went away"));
    const it = lifecycle().resumeStream(ref, approve, { ownership: OWNER, signal: controller.signal });
    await expect(it.next()).rejects.toThrow("caller went away");
    await expect(lifecycle().status(ref, { ownership: OWNER, signal: controller.signal })).rejects.toThrow("caller went away");
    expect(resolved).toEqual([]);
    expect(log).toEqual([]);
  });
});

describe("refusals change nothing", () => {
  async function expectUntouched(run: Awaited<ReturnType<typeof suspendedRun>>, saves: number) {
    expect(run.counts.saves).toBe(saves);
    expect(run.log).toEqual([]);
    expect(run.resolved).toEqual([]);
    expect((await run.lifecycle().status(run.ref, { ownership: OWNER })).state.status).toBe("suspended");
  }

  it("another owner (or none) may neither read the status nor resume", async () => {
    const run = await suspendedRun();
    const saves = run.counts.saves;
    const lc = run.lifecycle();
    for (const ownership of [{ tenantId: "tenant-2", userId: "user-1" }, { tenantId: "tenant-1" }, { tenantId: "tenant-1", userId: "user-1", accountId: "a" }, undefined]) {
      const options = ownership ? { ownership } : {};
      expect(await refusal(lc.status(run.ref, options))).toEqual({ name: "AgentRunStateError", code: "ERR_PRISM_AGENT_RUN_STATE", message: `Agent run ${run.ref.runId} belongs to another owner: status refused` });
      expect(await refusal(lc.resume(run.ref, run.approve, options))).toMatchObject({ name: "AgentRunStateError", message: `Agent run ${run.ref.runId} belongs to another owner: resume refused` });
      expect(await refusal((async () => {
        for await (const _ of lc.resumeStream(run.ref, run.approve, options));
      })())).toMatchObject({ name: "AgentRunStateError", message: `Agent run ${run.ref.runId} belongs to another owner: resume refused` });
    }
    await expectUntouched(run, saves);
  });

  it("a store that ignores ownership on load still cannot hand the run to another owner", async () => {
    const run = await suspendedRun();
    const blind: CheckpointStore = {
      ...run.store,
      loadCheckpoint: ({ namespace, key }) => run.raw.loadCheckpoint({ namespace, key, ...OWNER }),
    };
    const lc = createAgentRunLifecycle({ checkpoints: blind, resolveAgent: () => ({ agent: run.agent, definitionRevision: "r1" }) });
    const other = { ownership: { tenantId: "tenant-2" } };
    expect((await refusal(lc.status(run.ref, other))).message).toBe(`Agent run ${run.ref.runId} belongs to another owner: status refused`);
    expect((await refusal(lc.resume(run.ref, run.approve, other))).message).toBe(`Agent run ${run.ref.runId} belongs to another owner: resume refused`);
    expect(run.log).toEqual([]);
  });

  it("an unknown run, another session, another agent", async () => {
    const run = await suspendedRun();
    const saves = run.counts.saves;
    const lc = run.lifecycle();
    const cases: Array<[any, any, string]> = [
      [{ runId: "run_missing" }, { ownership: OWNER }, "No durable agent run run_missing"],
      [{ runId: run.ref.runId, sessionId: "another-session" }, { ownership: OWNER }, "Agent run session mismatch"],
      [run.ref, { ownership: OWNER, agentId: "support" }, "Agent run capability mismatch"],
    ];
    for (const [ref, options, message] of cases) {
      expect(await refusal(lc.status(ref, options))).toEqual({ name: "AgentRunStateError", code: "ERR_PRISM_AGENT_RUN_STATE", message });
      expect((await refusal(lc.resume(ref, run.approve, options))).message).toBe(message);
      expect((await refusal((async () => {
        for await (const _ of lc.resumeStream(ref, run.approve, options));
      })())).message).toBe(message);
    }
    await expectUntouched(run, saves);
  });

  it("a checkpoint under the run namespace that is not a durable run of this package", async () => {
    const store = createMemoryCheckpointStore();
    const lc = createAgentRunLifecycle({ checkpoints: store, resolveAgent: () => {
      throw new Error("not reached");
    } });
    const put = (key: string, value: any) => store.saveCheckpoint({ namespace: AGENT_RUN_STATE_NAMESPACE, key, version: 1, value });
    await put("r-array", [1]);
    await put("r-v2", { schemaVersion: 2 });
    await put("r-bare", { schemaVersion: 1, runId: "r-bare" });
    await put("r-moved", { schemaVersion: 1, agentId: "a", definitionRevision: "1", fingerprint: "f", runId: "r-elsewhere", sessionId: "s", status: "suspended" });
    expect((await refusal(lc.status({ runId: "r-array" }))).message).toBe("Agent run state must be an object");
    expect((await refusal(lc.status({ runId: "r-v2" }))).message).toBe("Unsupported agent run state schemaVersion 2");
    expect((await refusal(lc.status({ runId: "r-bare" }))).message).toBe("Malformed agent run state");
    expect((await refusal(lc.resume({ runId: "r-moved" }, { decision: "approve", expectedVersion: 1 }))).message).toBe("Malformed agent run state");
  });

  it("a fencing token below the stored one is refused; a newer one resumes and is stored", async () => {
    const run = await suspendedRun({ fencingToken: 5 });
    const saves = run.counts.saves;
    expect(await refusal(run.lifecycle({ fencingToken: 3 }).resume(run.ref, run.approve, { ownership: OWNER }))).toMatchObject({ name: "AgentRunStateError", message: "Stale or non-suspended agent run resume" });
    expect(run.log).toEqual([]);
    expect(run.counts.saves).toBe(saves + 1); // the refused claim's one attempt
    expect((await run.lifecycle().status(run.ref, { ownership: OWNER })).state.status).toBe("suspended");
    const result: any = await run.lifecycle({ fencingToken: 7 }).resume(run.ref, run.approve, { ownership: OWNER });
    expect(result.status).toBe("succeeded");
    expect(run.log).toEqual(['pay:{"amount":5}']);
    expect((await run.raw.loadCheckpoint({ namespace: AGENT_RUN_STATE_NAMESPACE, key: run.ref.runId, ...OWNER }))?.fencingToken).toBe(7);
  });
});

describe("bad options and requests", () => {
  const store = createMemoryCheckpointStore();
  const resolveAgent = () => ({ agent: {} as any, definitionRevision: "r1" });

  it("createAgentRunLifecycle refuses bad options with ERR_PRISM_INVALID_OPTION", () => {
    const attempt = (options: any) => {
      try {
        createAgentRunLifecycle(options);
      } catch (error: any) {
        return { name: error.name, code: error.code, message: error.message };
      }
      return undefined;
    };
    expect(attempt(undefined)).toEqual({ name: "TypeError", code: "ERR_PRISM_INVALID_OPTION", message: "createAgentRunLifecycle: options must be { checkpoints, resolveAgent, fencingToken? }" });
    expect(attempt({ resolveAgent })?.message).toBe("createAgentRunLifecycle: checkpoints must be a CheckpointStore (saveCheckpoint, loadCheckpoint)");
    expect(attempt({ checkpoints: { loadCheckpoint() {} }, resolveAgent })?.code).toBe("ERR_PRISM_INVALID_OPTION");
    expect(attempt({ checkpoints: store })?.message).toMatch(/^createAgentRunLifecycle: resolveAgent must be a function/);
    for (const fencingToken of [-1, 1.5, "3", Number.MAX_SAFE_INTEGER + 1]) {
      expect(attempt({ checkpoints: store, resolveAgent, fencingToken })?.message).toBe("createAgentRunLifecycle: fencingToken must be a non-negative safe integer");
    }
    expect(attempt({ checkpoints: store, resolveAgent, fencingToken: 0 })).toBeUndefined();
  });

  it("a bad ref, request or resolveAgent answer is refused with a clear error", async () => {
    const run = await suspendedRun();
    const lc = run.lifecycle();
    for (const ref of [null, {}, { runId: "" }, { runId: 7 }, { runId: "r", sessionId: 1 }]) {
      expect(await refusal(lc.status(ref as any))).toEqual({ name: "AgentRunStateError", code: "ERR_PRISM_AGENT_RUN_STATE", message: "agentRunLifecycle.status: ref must be { runId, sessionId? }" });
    }
    expect((await refusal(lc.status(run.ref, "x" as any))).message).toBe("agentRunLifecycle.status: options must be an object { ownership?, signal?, agentId? }");
    expect((await refusal(lc.status(run.ref, { agentId: 1 } as any))).message).toBe("agentRunLifecycle.status: agentId must be a string");
    expect((await refusal(lc.status(run.ref, { ownership: "tenant-1" } as any))).message).toBe("agentRunLifecycle.status: ownership must be an object { tenantId?, accountId?, userId? }");
    // Skill session state is not supported here: refused, never dropped.
    expect(await refusal(lc.resume(run.ref, run.approve, { ownership: OWNER, persistSessionState: true } as any))).toMatchObject({ name: "TypeError", code: "unsupported_agent_option", message: expect.stringContaining('option "persistSessionState" (skills)') });
    expect((await refusal(lc.resume(run.ref, run.approve, { ownership: OWNER, includeSkillBodies: true } as any))).code).toBe("unsupported_agent_option");
    for (const answer of [null, {}, { agent: run.agent }, { agent: null, definitionRevision: "r1" }]) {
      const bad = createAgentRunLifecycle({ checkpoints: run.store, resolveAgent: () => answer as any });
      expect(await refusal(bad.resume(run.ref, run.approve, { ownership: OWNER }))).toEqual({ name: "TypeError", code: "ERR_PRISM_INVALID_OPTION", message: "createAgentRunLifecycle: resolveAgent must answer { agent, definitionRevision } (agent billing)" });
    }
    // A resolveAgent that throws: its error, nothing run.
    const throwing = createAgentRunLifecycle({ checkpoints: run.store, resolveAgent: async () => {
      throw new Error("agent registry down");
    } });
    expect((await refusal(throwing.resume(run.ref, run.approve, { ownership: OWNER }))).message).toBe("agent registry down");
    expect(run.log).toEqual([]);
    expect(AgentRunStateError).toBeTypeOf("function");
  });
});

describe("the MCP server's agent lifecycle tools over it", () => {
  it("status and resume as upstream's server test uses them; another tenant gets Agent run not found", async () => {
    const run = await suspendedRun();
    let tenant = OWNER;
    const server = createPrismMcpServer({
      tools: [{ name: "echo", execute: (_args: unknown, ctx: any) => ({ toolCallId: ctx.toolCallId, name: "echo" }) }],
      agentRuns: { billing: { lifecycle: run.lifecycle() } },
      authorize: () => ({ allowed: true, ownership: tenant }),
    } as any);
    const client = new Client({ name: "t", version: "1" });
    const [a, b] = InMemoryTransport.createLinkedPair();
    await server.connect(b);
    await client.connect(a);
    try {
      const status: any = await client.callTool({ name: "agent.billing.status", arguments: { runId: run.ref.runId } });
      expect(status.isError).toBe(false);
      expect(status.structuredContent).toMatchObject({ version: run.approve.expectedVersion, state: { status: "suspended", runId: run.ref.runId } });
      tenant = { tenantId: "tenant-2", userId: "user-1" };
      const foreign: any = await client.callTool({ name: "agent.billing.status", arguments: { runId: run.ref.runId } });
      expect(foreign.isError).toBe(true);
      expect(JSON.stringify(foreign.content)).toContain("Agent run not found");
      const foreignResume: any = await client.callTool({ name: "agent.billing.resume", arguments: { runId: run.ref.runId, decision: "approve", expectedVersion: run.approve.expectedVersion } });
      expect(JSON.stringify(foreignResume.content)).toContain("Agent run not found");
      expect(run.log).toEqual([]);
      tenant = OWNER;
      const denied: any = await client.callTool({ name: "agent.billing.resume", arguments: { runId: run.ref.runId, decision: "deny", expectedVersion: run.approve.expectedVersion } });
      expect(denied.isError).toBe(false);
      expect(denied.structuredContent).toMatchObject({ status: "denied", runId: run.ref.runId });
      expect(run.log).toEqual([]);
    } finally {
      await client.close();
    }
  });
});
