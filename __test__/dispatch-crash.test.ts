// Crash safety through dispatch (issue 6): a child process runs `dispatchToolCall` with a side-effecting
// tool against a SQLite effect store and is killed with SIGKILL at each point of the claim path; a fresh
// process redispatching the same call never runs the side effect a second time.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { serviceIdentity } from "./helpers/service-identity.mjs";
import { createSqliteToolEffectStore, deriveToolEffectKey, toolEffectArgumentsHash } from "../index.js";
import { killAt } from "./helpers/kill-at.js";

const child = join(__dirname, "helpers", "dispatch-child.mjs");
const dir = mkdtempSync(join(tmpdir(), "prism-dispatch-crash-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// The child's identity and call (see helpers/dispatch-child.mjs).
const identity = serviceIdentity;
const argumentsHash = toolEffectArgumentsHash({ amount: 5 });
const base = { identity, ownership: { tenantId: "tenant" }, sessionId: "session", runId: "run", toolCallId: "crash", toolName: "charge", argumentsHash };
const effectKey = { ...base, key: deriveToolEffectKey(base) };
const charged = { toolCallId: "crash", name: "charge", value: { charged: 5 } };
const unknown = { name: "ToolEffectError", message: "tool effect outcome requires reconciliation", code: "ERR_PRISM_TOOL_EFFECT_UNKNOWN" };
const notDispatchable = { name: "ToolEffectError", message: "tool effect is not dispatchable", code: "ERR_PRISM_TOOL_EFFECT_CONFLICT" };
/** Past the child's 60 s claim lease. */
const LEASE_PASSED_MS = 61_000;

/** Starts a dispatch in a child and kills it with SIGKILL once it reports `point`. */
const crashAt = (db: string, file: string, point: string) => killAt(child, ["crash", db, file], point);

/** A fresh process redispatching the same call. */
function redispatch(db: string, file: string, clockSkewMs = 0): { result: { error?: unknown; value?: unknown }; executed: number } {
  const r = spawnSync(process.execPath, [child, "run", db, file, String(clockSkewMs)], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`redispatch exited ${r.status}: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

const sideEffects = (file: string) => (existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean).length : 0);

async function statusOf(db: string, clockSkewMs = 0) {
  const store = createSqliteToolEffectStore(db, clockSkewMs ? { now: () => Date.now() + clockSkewMs } : {});
  try {
    return (await store.get(effectKey))?.status;
  } finally {
    store.close();
  }
}

describe("a dispatch killed with SIGKILL never makes a fresh dispatch repeat the side effect", () => {
  let n = 0;
  const files = () => {
    n += 1;
    return [join(dir, `effects-${n}.db`), join(dir, `side-effect-${n}.txt`)] as const;
  };

  it("after the claim (begin): refused while the lease runs, executed exactly once after it expires", async () => {
    const [db, file] = files();
    await crashAt(db, file, "after-claim");
    expect(sideEffects(file)).toBe(0);
    expect(await statusOf(db)).toBe("pending");

    const during = redispatch(db, file);
    expect(during.result.error).toEqual(notDispatchable);
    expect(during.executed).toBe(0);

    // The claim was never dispatched: once its lease runs out it reads failed_retryable and the next
    // dispatch claims it again (attempt 2) and runs the tool once.
    expect(await statusOf(db, LEASE_PASSED_MS)).toBe("failed_retryable");
    const after = redispatch(db, file, LEASE_PASSED_MS);
    expect(after).toEqual({ result: charged, executed: 1 });
    expect(sideEffects(file)).toBe(1);

    const replay = redispatch(db, file);
    expect(replay).toEqual({ result: charged, executed: 0 });
    expect(sideEffects(file)).toBe(1);
  });

  it("after markDispatched: unknown, never executed again, also once the lease has run out", async () => {
    const [db, file] = files();
    await crashAt(db, file, "after-dispatched");
    expect(sideEffects(file)).toBe(0);
    expect(await statusOf(db)).toBe("dispatched");
    for (const skew of [0, LEASE_PASSED_MS]) {
      const again = redispatch(db, file, skew);
      expect(again.result.error).toEqual(unknown);
      expect(again.executed).toBe(0);
    }
    expect(await statusOf(db, LEASE_PASSED_MS)).toBe("unknown");
    expect(sideEffects(file)).toBe(0);
  });

  it("during execute (after the side effect): unknown, the side effect stays at one", async () => {
    const [db, file] = files();
    await crashAt(db, file, "during-execute");
    expect(sideEffects(file)).toBe(1);
    expect(await statusOf(db)).toBe("dispatched");
    for (const skew of [0, LEASE_PASSED_MS]) {
      const again = redispatch(db, file, skew);
      expect(again.result.error).toEqual(unknown);
      expect(again.executed).toBe(0);
    }
    expect(sideEffects(file)).toBe(1);
  });

  it("after execute, before complete: unknown until reconciled, then the reconciled result replays", async () => {
    const [db, file] = files();
    await crashAt(db, file, "after-execute");
    expect(sideEffects(file)).toBe(1);
    const again = redispatch(db, file);
    expect(again.result.error).toEqual(unknown);
    expect(again.executed).toBe(0);

    // An operator who checked the payment provider resolves the record once its lease has run out.
    const operator = createSqliteToolEffectStore(db, { now: () => Date.now() + LEASE_PASSED_MS });
    const record = (await operator.get(effectKey))!;
    expect(record.status).toBe("unknown");
    expect(await operator.resolveUnknown({ ...effectKey, expectedVersion: record.version, status: "completed", result: charged })).toMatchObject({ status: "completed" });
    operator.close();

    const replay = redispatch(db, file);
    expect(replay).toEqual({ result: charged, executed: 0 });
    expect(sideEffects(file)).toBe(1);
  });

  it("after complete, before dispatch returned: the stored result replays", async () => {
    const [db, file] = files();
    await crashAt(db, file, "after-complete");
    expect(sideEffects(file)).toBe(1);
    expect(await statusOf(db)).toBe("completed");
    const replay = redispatch(db, file);
    expect(replay).toEqual({ result: charged, executed: 0 });
    expect(sideEffects(file)).toBe(1);
  });
});
