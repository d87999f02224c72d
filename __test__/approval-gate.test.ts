// The approval gate outside createAgent, the local identity and the content-derived call id
// (docs/approval.md).
import { describe, expect, it } from "vitest";
import { assertIdentityActive, createMemoryCheckpointStore, createMemoryToolEffectStore, createToolDispatcher, createToolRegistry } from "../index.mjs";
import { contentToolCallId, createApprovalGate, isLocalIdentity, localIdentity } from "../ai-sdk/index.mjs";

const refund = (id: string, amount: number) => ({ id, name: "refund", arguments: { amount } });

describe("createApprovalGate", () => {
  it("refuses bad options with a code and the fix", () => {
    expect(() => createApprovalGate({ runId: "r" } as any)).toThrow(expect.objectContaining({ code: "ERR_PRISM_INVALID_OPTION", message: expect.stringMatching(/checkpoints must be a checkpoint store/) }));
    expect(() => createApprovalGate({ checkpoints: createMemoryCheckpointStore(), runId: "" })).toThrow(/runId must be a string of 1 to 256/);
    expect(() => createApprovalGate({ checkpoints: createMemoryCheckpointStore(), runId: "r", needsApproval: [] as any })).toThrow(/needsApproval must be/);
  });

  it("records a pending call once, binds the decision to its arguments, and lets only that call run", async () => {
    const gate = createApprovalGate({ checkpoints: createMemoryCheckpointStore(), runId: "t1", needsApproval: { refund: true } });
    expect(await gate.requires({ id: "x", name: "lookup", arguments: {} })).toBe(false);
    expect(await gate.requires(refund("c1", 40))).toBe(true);
    expect(await gate.requires(refund("c1", 40))).toBe(true);
    const pending = await gate.pending();
    expect(pending).toHaveLength(1);
    expect(pending[0].approvalId).toMatch(/^approval_[0-9a-f]{32}\.[A-Za-z0-9_-]{43}$/);
    await expect(gate.admit(refund("c1", 40))).rejects.toMatchObject({ code: "ERR_PRISM_AGENT_RUN_SUSPENDED", approvalId: pending[0].approvalId });
    expect(await gate.decide([{ toolCallId: "c1", outcome: "allow_once" }])).toEqual([{ approvalId: pending[0].approvalId, toolCallId: "c1", toolName: "refund", outcome: "allow_once" }]);
    await expect(gate.admit(refund("c1", 40))).resolves.toBeUndefined();
    await expect(gate.admit(refund("c1", 41))).rejects.toMatchObject({ code: "ERR_PRISM_DECISION_BINDING" });
    // allow_once covers that call only: another call with the same arguments asks again.
    expect(await gate.status(refund("c2", 40))).toBe("user-approval");
  });

  it("sticky decisions: allow_for_run and reject_for_run cover later calls with the same scope", async () => {
    const gate = createApprovalGate({ checkpoints: createMemoryCheckpointStore(), runId: "t2" });
    await gate.requires(refund("a", 1));
    await gate.requires(refund("b", 2));
    await gate.decide([
      { toolCallId: "a", outcome: "allow_for_run" },
      { toolCallId: "b", outcome: "reject_for_run", reason: "no refunds of 2" },
    ]);
    expect(await gate.status(refund("a2", 1))).toBe("approved");
    expect(await gate.status(refund("b2", 2))).toEqual({ type: "denied", reason: "no refunds of 2" });
    await expect(gate.admit(refund("b3", 2))).rejects.toMatchObject({ code: "approval_rejected", message: "no refunds of 2" });
    expect(await gate.pending()).toEqual([]);
  });

  it("refuses malformed decisions as resumeAgentRun does, and unknown ids", async () => {
    const gate = createApprovalGate({ checkpoints: createMemoryCheckpointStore(), runId: "t3" });
    await gate.requires(refund("a", 1));
    await expect(gate.decide([{ toolCallId: "zz", outcome: "allow_once" }])).rejects.toMatchObject({ code: "ERR_PRISM_DECISION_UNKNOWN" });
    await expect(gate.decide([{ approvalId: "approval_x", outcome: "allow_once" }])).rejects.toMatchObject({ code: "ERR_PRISM_DECISION_UNKNOWN" });
    await expect(gate.decide([{ toolCallId: "a", outcome: "maybe" as any }])).rejects.toMatchObject({ code: "ERR_PRISM_DECISION_INVALID" });
    await expect(gate.decide([{ toolCallId: "a", outcome: "allow_once", modifiedArguments: { amount: 2 } } as any])).rejects.toMatchObject({ code: "ERR_PRISM_DECISION_INVALID" });
    await expect(gate.decide("yes" as any)).rejects.toMatchObject({ code: "ERR_PRISM_DECISION_INVALID" });
    expect(await gate.pending()).toHaveLength(1);
  });

  it("a checkpoint edited after the pause (other arguments under the same approval id) fails closed", async () => {
    const checkpoints = createMemoryCheckpointStore();
    const gate = createApprovalGate({ checkpoints, runId: "t4" });
    await gate.requires(refund("a", 5));
    const record = (await checkpoints.loadCheckpoint({ namespace: "prism.approval-gate", key: "t4" }))!;
    const edited = structuredClone(record.value) as any;
    edited.pendingCalls[0].call.arguments = { amount: 5000 };
    await checkpoints.saveCheckpoint({ namespace: "prism.approval-gate", key: "t4", version: record.version + 1, expectedVersion: record.version, value: edited });
    await expect(gate.decide([{ toolCallId: "a", outcome: "allow_once" }])).rejects.toMatchObject({ code: "ERR_PRISM_DECISION_BINDING" });
    await expect(gate.admit(refund("a", 5000))).rejects.toMatchObject({ code: "ERR_PRISM_DECISION_BINDING" });
  });

  it("two gates over one store (two processes) deciding at once both land", async () => {
    const checkpoints = createMemoryCheckpointStore();
    const g1 = createApprovalGate({ checkpoints, runId: "t5" });
    const g2 = createApprovalGate({ checkpoints, runId: "t5" });
    await g1.requires(refund("a", 1));
    await g1.requires(refund("b", 2));
    await Promise.all([g1.decide([{ toolCallId: "a", outcome: "allow_once" }]), g2.decide([{ toolCallId: "b", outcome: "reject_once" }])]);
    await expect(g2.admit(refund("a", 1))).resolves.toBeUndefined();
    await expect(g1.admit(refund("b", 2))).rejects.toMatchObject({ code: "approval_rejected" });
  });

  it("owned by its identity: another owner's gate cannot read it", async () => {
    const checkpoints = createMemoryCheckpointStore();
    const mine = createApprovalGate({ checkpoints, runId: "t6", identity: localIdentity({ user: "ana", host: "h" }) });
    await mine.requires(refund("a", 1));
    const theirs = createApprovalGate({ checkpoints, runId: "t6", identity: localIdentity({ user: "bob", host: "h" }) });
    await expect(theirs.pending()).rejects.toMatchObject({ code: "ERR_PRISM_AGENT_RUN_STATE" });
  });

  it("as the dispatch's beforeExecute: a call waiting for approval rejects the dispatch and leaves its effect claim retryable", async () => {
    let runs = 0;
    const gate = createApprovalGate({ checkpoints: createMemoryCheckpointStore(), runId: "t7" });
    const effectStore = createMemoryToolEffectStore();
    const registry = createToolRegistry([{ name: "refund", parameters: { type: "object" }, effect: { kind: "external_mutation", idempotency: "required" }, execute: () => (runs++, { ok: 1 }) }]);
    const d = createToolDispatcher({ registry, effectStore, identity: localIdentity(), beforeExecute: (call: any) => gate.admit(call) });
    const ctx = { sessionId: "s", runId: "t7" };
    await expect(d.dispatch(refund("a", 1), ctx)).rejects.toMatchObject({ code: "ERR_PRISM_AGENT_RUN_SUSPENDED" });
    await gate.decide([{ toolCallId: "a", outcome: "allow_once" }]);
    expect(await d.dispatch(refund("a", 1), ctx)).toMatchObject({ value: { ok: 1 } });
    expect(await d.dispatch(refund("a", 1), ctx)).toMatchObject({ value: { ok: 1 } });
    expect(runs).toBe(1);
  });
});

describe("localIdentity", () => {
  it("is an active identity marked local twice", () => {
    const id = localIdentity({ user: "ana", host: "box" });
    expect(() => assertIdentityActive(id)).not.toThrow();
    expect(id).toMatchObject({ tenantId: "local:box", userId: "ana", principal: { kind: "local", id: "ana" }, verified: true });
    expect(isLocalIdentity(id)).toBe(true);
    expect(isLocalIdentity({ tenantId: "acme", principal: { kind: "user", id: "ana" } })).toBe(false);
    expect(isLocalIdentity({ tenantId: "acme", principal: { kind: "local", id: "x" } })).toBe(true);
    expect(() => localIdentity({ user: "" })).toThrow(expect.objectContaining({ code: "ERR_PRISM_INVALID_OPTION", message: expect.stringMatching(/options\.user must be a string/) }));
  });
});

describe("contentToolCallId", () => {
  it("is the same for the same tool and arguments (key order aside), different otherwise", () => {
    const a = contentToolCallId("charge", { amount: 5, currency: "usd" });
    expect(a).toMatch(/^call_[A-Za-z0-9_-]{32}$/);
    expect(contentToolCallId("charge", { currency: "usd", amount: 5 })).toBe(a);
    expect(contentToolCallId("charge", { amount: 6, currency: "usd" })).not.toBe(a);
    expect(contentToolCallId("refund", { amount: 5, currency: "usd" })).not.toBe(a);
    expect(contentToolCallId("charge", { amount: 5, currency: "usd" }, 1)).not.toBe(a);
    expect(() => contentToolCallId("", {})).toThrow(expect.objectContaining({ code: "ERR_PRISM_INVALID_OPTION" }));
  });
});
