// Approval integrity (docs/agent.md "Approval integrity"): an approval id binds the tool name, the
// arguments hash and the call id it was issued for, so a checkpoint edited after the suspension
// (arguments, tool, call id, or the pending record with them) fails closed on resume: nothing runs,
// nothing is written. And a run with an identity saves its checkpoint under that identity's
// ownership: another tenant, or no identity, cannot resume it.
import { describe, expect, it } from "vitest";
import {
  createAgent,
  createMockProvider,
  createMemoryCheckpointStore,
  providerDone,
  providerTextDelta,
  providerToolCall,
  resumeAgentRun,
  toolCallContent,
  toolEffectArgumentsHash,
  AgentDecisionError,
  AgentRunStateError,
  AGENT_RUN_STATE_NAMESPACE,
  type CheckpointStore,
  type ToolDefinition,
} from "../index.mjs";
import { serviceIdentity } from "./helpers/service-identity.mjs";

const model = { provider: "mock", model: "demo" };

function setup(args: Record<string, unknown> = { amount: 5 }, config: Record<string, unknown> = {}) {
  const log: string[] = [];
  const make = (name: string): ToolDefinition => ({
    name,
    parameters: { type: "object", properties: { amount: { type: "number" } }, additionalProperties: false },
    needsApproval: true,
    execute(a, ctx) {
      log.push(`${name}:${JSON.stringify(a)}`);
      return { toolCallId: ctx.toolCallId, name, value: { done: name } };
    },
  });
  const provider = createMockProvider([
    [providerToolCall(toolCallContent("c1", "charge", args)), providerDone()],
    [providerTextDelta("done"), providerDone()],
  ]);
  const store = createMemoryCheckpointStore();
  const agent = createAgent({ id: "billing", model, provider, tools: [make("charge"), make("wipe")], ...config } as any);
  const runState = { checkpoints: store as CheckpointStore, definitionRevision: "r1" };
  return { agent, store, runState, log };
}

/** Rewrites the stored run state as a writer with access to the store could. */
async function tamper(store: CheckpointStore, runId: string, edit: (state: any) => void, owner: Record<string, string> = {}) {
  const key = { namespace: AGENT_RUN_STATE_NAMESPACE, key: runId, ...owner };
  const record = (await store.loadCheckpoint(key))!;
  const state = structuredClone(record.value) as any;
  edit(state);
  await store.saveCheckpoint({ ...key, version: record.version + 1, expectedVersion: record.version, value: state, category: "agent-run" });
  return record.version + 1;
}

async function refusal(p: Promise<unknown>) {
  try {
    await p;
  } catch (e) {
    return e as any;
  }
  throw new Error("the resume was not refused");
}

describe("an approval binds the call it was issued for", () => {
  async function suspended(config: Record<string, unknown> = {}) {
    const s = setup({ amount: 5 }, config);
    const result: any = await s.agent.createSession().run("charge 5", { runState: s.runState });
    expect(result.status).toBe("suspended");
    const pending = result.interruption.pendingDecisions[0];
    expect(pending.scope).toMatchObject({ toolName: "charge", argumentsHash: toolEffectArgumentsHash({ amount: 5 }) });
    return { ...s, result, approvalId: pending.approvalId as string };
  }

  const edits: [string, (state: any) => void][] = [
    ["the pending arguments", (st) => (st.pendingCalls[0].call.arguments = { amount: 5000 })],
    ["the tool name", (st) => (st.pendingCalls[0].call.name = "wipe")],
    ["the call id", (st) => (st.pendingCalls[0].call.id = "c9")],
    [
      "the arguments and the pending record's hash with them",
      (st) => {
        st.pendingCalls[0].call.arguments = { amount: 5000 };
        st.interruption.pendingDecisions[0].scope.argumentsHash = toolEffectArgumentsHash({ amount: 5000 });
      },
    ],
    [
      "the tool and the pending record's tool with it",
      (st) => {
        st.pendingCalls[0].call.name = "wipe";
        st.interruption.pendingDecisions[0].scope.toolName = "wipe";
        st.interruption.toolName = "wipe";
      },
    ],
  ];

  for (const [what, edit] of edits) {
    it(`editing ${what} after the suspension fails closed: nothing runs, nothing is written`, async () => {
      const { agent, store, runState, log, result, approvalId } = await suspended();
      const version = await tamper(store, result.runId, edit);
      const err = await refusal(resumeAgentRun(agent, { runId: result.runId }, { expectedVersion: version, decisions: [{ approvalId, outcome: "allow_once" }] }, runState));
      expect(err).toBeInstanceOf(AgentDecisionError);
      expect(err.code).toBe("ERR_PRISM_DECISION_BINDING");
      expect(err.message).toMatch(/Approval binding mismatch: .*nothing was run/);
      expect(log).toEqual([]);
      const after = await store.loadCheckpoint({ namespace: AGENT_RUN_STATE_NAMESPACE, key: result.runId });
      expect(after!.version).toBe(version);
      expect((after!.value as any).status).toBe("suspended");
    });
  }

  it("the legacy { decision: 'approve' } resume is refused the same way", async () => {
    const { agent, store, runState, log, result } = await suspended();
    const version = await tamper(store, result.runId, edits[0][1]);
    const err = await refusal(resumeAgentRun(agent, { runId: result.runId }, { expectedVersion: version, decision: "approve" }, runState));
    expect(err.code).toBe("ERR_PRISM_DECISION_BINDING");
    expect(log).toEqual([]);
  });

  it("an approval id rewritten in the checkpoint is one no approver holds", async () => {
    const { agent, store, runState, log, result, approvalId } = await suspended();
    const forged = "approval_" + "0".repeat(32) + "." + "A".repeat(43);
    const version = await tamper(store, result.runId, (st) => {
      st.pendingCalls[0].approvalId = forged;
      st.interruption.pendingDecisions[0].approvalId = forged;
      st.pendingCalls[0].call.arguments = { amount: 5000 };
    });
    const err = await refusal(resumeAgentRun(agent, { runId: result.runId }, { expectedVersion: version, decisions: [{ approvalId, outcome: "allow_once" }] }, runState));
    expect(["ERR_PRISM_DECISION_BINDING", "ERR_PRISM_DECISION_UNKNOWN"]).toContain(err.code);
    expect(log).toEqual([]);
  });

  it("a checkpoint moved to another run's key is refused", async () => {
    const { agent, store, runState, log, result, approvalId } = await suspended();
    const record = (await store.loadCheckpoint({ namespace: AGENT_RUN_STATE_NAMESPACE, key: result.runId }))!;
    await store.saveCheckpoint({ namespace: AGENT_RUN_STATE_NAMESPACE, key: "run_other", version: 1, value: { ...(record.value as any), runId: "run_other" } });
    const err = await refusal(resumeAgentRun(agent, { runId: "run_other" }, { expectedVersion: 1, decisions: [{ approvalId, outcome: "allow_once" }] }, runState));
    expect(err.code).toBe("ERR_PRISM_DECISION_BINDING");
    expect(log).toEqual([]);
  });

  it("the unedited checkpoint resumes and runs the approved call once", async () => {
    const { agent, runState, log, result, approvalId } = await suspended();
    const resumed: any = await resumeAgentRun(agent, { runId: result.runId }, { expectedVersion: 1, decisions: [{ approvalId, outcome: "allow_once" }] }, runState);
    expect(resumed.status).toBe("succeeded");
    expect(log).toEqual(['charge:{"amount":5}']);
  });
});

describe("a run with an identity is resumed only by its owner", () => {
  const tenantA = { ...serviceIdentity, tenantId: "a" };
  const tenantB = { ...serviceIdentity, tenantId: "b" };

  async function suspendedAs(identity: typeof tenantA) {
    const s = setup();
    const result: any = await s.agent.createSession().run("charge 5", { runState: s.runState, identity });
    expect(result.status).toBe("suspended");
    return { ...s, result, approvalId: result.interruption.pendingDecisions[0].approvalId as string };
  }

  it("the checkpoint is saved with the identity's tenant", async () => {
    const { store, result } = await suspendedAs(tenantA);
    const [item] = (await store.listCheckpoints({ namespace: AGENT_RUN_STATE_NAMESPACE, tenantId: "a" })).items;
    expect(item).toMatchObject({ key: result.runId, tenantId: "a" });
    expect((await store.listCheckpoints({ namespace: AGENT_RUN_STATE_NAMESPACE })).items.filter((r) => r.tenantId === undefined)).toEqual([]);
  });

  for (const [who, identity] of [["another tenant", tenantB], ["no identity", undefined]] as const) {
    it(`${who} cannot resume it: refused with a code, nothing runs, nothing is written`, async () => {
      const { agent, store, runState, log, result, approvalId } = await suspendedAs(tenantA);
      const options = identity === undefined ? runState : { ...runState, identity };
      const err = await refusal(resumeAgentRun(agent, { runId: result.runId }, { expectedVersion: 1, decisions: [{ approvalId, outcome: "allow_once" }] }, options));
      expect(err).toBeInstanceOf(AgentRunStateError);
      expect(err.code).toBe("ERR_PRISM_AGENT_RUN_STATE");
      expect(err.message).toMatch(/belongs to another owner/);
      expect(log).toEqual([]);
      const after = await store.loadCheckpoint({ namespace: AGENT_RUN_STATE_NAMESPACE, key: result.runId, tenantId: "a" });
      expect(after!.version).toBe(1);
    });
  }

  it("a store that ignores ownership on load still cannot hand the run to another tenant", async () => {
    const { agent, store, runState, log, result, approvalId } = await suspendedAs(tenantA);
    // A store keyed by namespace and key only: it neither checks nor returns owner fields.
    const loose: CheckpointStore = {
      saveCheckpoint: (i: any) => store.saveCheckpoint({ ...i, tenantId: "a" }),
      loadCheckpoint: async (i: any) => {
        const r: any = await store.loadCheckpoint({ namespace: i.namespace, key: i.key, tenantId: "a" });
        if (r) delete r.tenantId;
        return r;
      },
      listCheckpoints: (q: any) => store.listCheckpoints(q),
      deleteCheckpoint: (i: any) => store.deleteCheckpoint(i),
    } as CheckpointStore;
    const err = await refusal(resumeAgentRun(agent, { runId: result.runId }, { expectedVersion: 1, decisions: [{ approvalId, outcome: "allow_once" }] }, { ...runState, checkpoints: loose, identity: tenantB }));
    expect(err.message).toMatch(/belongs to another owner/);
    expect(log).toEqual([]);
  });

  it("the owner resumes it", async () => {
    const { agent, runState, log, result, approvalId } = await suspendedAs(tenantA);
    const resumed: any = await resumeAgentRun(agent, { runId: result.runId }, { expectedVersion: 1, decisions: [{ approvalId, outcome: "allow_once" }] }, { ...runState, identity: tenantA });
    expect(resumed.status).toBe("succeeded");
    expect(log).toEqual(['charge:{"amount":5}']);
  });
});
