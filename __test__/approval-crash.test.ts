// Durable approval across processes (docs/agent.md "Approval and durable runs"): a run suspended by
// one process is resumed by another after the first exited, and a resume killed with SIGKILL between
// the approval and the end of the side effect never runs the side effect twice: the claim is
// written before the call, and a claimed run is never replayed automatically.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { AGENT_RUN_STATE_NAMESPACE, createSqliteCheckpointStore } from "../index.js";
import { killAt } from "./helpers/kill-at.js";

const child = join(__dirname, "helpers", "approval-child.mjs");
const root = mkdtempSync(join(tmpdir(), "prism-approval-crash-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const fresh = () => {
  const d = join(root, `case-${n++}`);
  spawnSync("mkdir", ["-p", d]);
  return d;
};

function run(args: string[]) {
  const r = spawnSync(process.execPath, [child, ...args], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`child exited ${r.status}: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

const sideEffects = (dir: string) => {
  const f = join(dir, "side-effects.txt");
  return existsSync(f) ? readFileSync(f, "utf8").split("\n").filter(Boolean).length : 0;
};

/** What an operator would do by hand: put the run's suspended checkpoint back (a new version). */
async function restore(dir: string, runId: string, suspended: unknown) {
  const store = createSqliteCheckpointStore({ path: join(dir, "checkpoints.db") });
  try {
    const current = await store.loadCheckpoint({ namespace: AGENT_RUN_STATE_NAMESPACE, key: runId, tenantId: "tenant" });
    const next = current!.version + 1;
    await store.saveCheckpoint({ namespace: AGENT_RUN_STATE_NAMESPACE, key: runId, tenantId: "tenant", version: next, expectedVersion: current!.version, value: suspended as any });
    return next;
  } finally {
    store.close();
  }
}

async function stored(dir: string, runId: string) {
  const store = createSqliteCheckpointStore({ path: join(dir, "checkpoints.db") });
  try {
    return await store.loadCheckpoint({ namespace: AGENT_RUN_STATE_NAMESPACE, key: runId, tenantId: "tenant" });
  } finally {
    store.close();
  }
}

describe("durable approval across processes", () => {
  it("a fresh process resumes the suspended run; the next request carries the result", () => {
    const dir = fresh();
    const s = run(["suspend", dir]);
    expect(s.status).toBe("suspended");
    expect(sideEffects(dir)).toBe(0);
    const r = run(["resume", dir, s.runId, s.sessionId, String(s.version)]);
    expect(r).toMatchObject({ status: "succeeded", text: "charged", row: { toolCallId: "call-1", name: "charge", result: { charged: 5 } } });
    expect(sideEffects(dir)).toBe(1);
    // The run is over: approving it again changes nothing.
    const again = run(["resume", dir, s.runId, s.sessionId, String(s.version)]);
    expect(again.error).toMatchObject({ name: "AgentRunStateError", code: "ERR_PRISM_AGENT_RUN_STALE", message: "Stale or non-suspended agent run resume" });
    expect(sideEffects(dir)).toBe(1);
  });

  for (const [point, effects] of [["before-effect", 0], ["after-effect", 1]] as const) {
    it(`SIGKILL ${point.replace("-", " the ")}: a later resume is refused and the side effect ran ${effects} time(s)`, async () => {
      const dir = fresh();
      const s = run(["suspend", dir]);
      await killAt(child, ["resume", dir, s.runId, s.sessionId, String(s.version)], point);
      expect(sideEffects(dir)).toBe(effects);
      const record = await stored(dir, s.runId);
      // The claim was written before the call: the run is `running`, its call `dispatched`.
      expect(record?.version).toBe(s.version + 1);
      expect((record?.value as any).status).toBe("running");
      expect((record?.value as any).pendingCalls.map((e: any) => e.status)).toEqual(["dispatched"]);
      // The version read before the claim lost the race: stale. The current one: the run's claimed
      // call has no known outcome, so no resume runs it and the error says to reconcile.
      for (const [version, code] of [[s.version, "ERR_PRISM_AGENT_RUN_STALE"], [record!.version, "ERR_PRISM_AGENT_RUN_RECONCILE"]] as const) {
        const r = run(["resume", dir, s.runId, s.sessionId, String(version)]);
        expect(r.error).toMatchObject({ name: "AgentRunStateError", code });
      }
      expect(run(["resume", dir, s.runId, s.sessionId, String(record!.version)]).error.message).toMatch(/^Agent run needs reconciliation/);
      expect(sideEffects(dir)).toBe(effects);
    });
  }

  it("the effect store is a second line: a suspended checkpoint put back by hand still cannot repeat the side effect", async () => {
    // Completed: the replayed resume gets the stored result without running the tool again.
    const done = fresh();
    const s = run(["suspend", done]);
    const suspended = (await stored(done, s.runId))!.value;
    expect(run(["resume", done, s.runId, s.sessionId, String(s.version)]).status).toBe("succeeded");
    const again = run(["resume", done, s.runId, s.sessionId, String(await restore(done, s.runId, suspended))]);
    expect(again).toMatchObject({ status: "succeeded", row: { result: { charged: 5 } } });
    expect(sideEffects(done)).toBe(1);

    // Killed after the side effect, before the effect completed: the effect store refuses to run it again.
    const killed = fresh();
    const k = run(["suspend", killed]);
    const before = (await stored(killed, k.runId))!.value;
    await killAt(child, ["resume", killed, k.runId, k.sessionId, String(k.version)], "after-effect");
    const retry = run(["resume", killed, k.runId, k.sessionId, String(await restore(killed, k.runId, before))]);
    expect(retry.row.error.code).toMatch(/^ERR_PRISM_TOOL_EFFECT_/);
    expect(sideEffects(killed)).toBe(1);
  });
});
