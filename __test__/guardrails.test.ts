import { describe, expect, it } from "vitest";
import {
  createMiddlewareRegistry,
  createToolRegistry,
  dispatchToolCall,
  GuardrailError,
  type Guardrail,
  type GuardrailContext,
} from "../index.js";
import { call, ctx, echoTool, recorder } from "./helpers/harness.js";

const allow = (name: string, log?: string[]): Guardrail => ({
  name,
  evaluate: () => (log?.push(name), { action: "allow" }),
});

async function run(guardrails: Parameters<typeof dispatchToolCall>[0]["guardrails"], secrets?: string[]) {
  const log: string[] = [];
  const rec = recorder();
  const promise = dispatchToolCall({
    call: call("echo", { text: "hi" }),
    registry: createToolRegistry([echoTool("echo", log)]),
    context: ctx({ metadata: { tenant: "t" } }),
    guardrails,
    secrets,
    emit: rec.emit,
    ledger: rec.ledger,
  });
  return { promise, log, rec };
}

describe("guardrails", () => {
  it("gives each guardrail the documented context and records each decision in order", async () => {
    const seen: GuardrailContext[] = [];
    const g: Guardrail = { name: "inspect", evaluate: (c) => (seen.push(c), { action: "allow", reason: "fine", metadata: { n: 1 } }) };
    const { promise, rec } = await run({ toolInput: [g], toolOutput: [g] });
    await promise;
    expect(seen[0]).toMatchObject({ stage: "tool_input", sessionId: "s1", runId: "r1", toolCallId: "call_1", toolName: "echo", metadata: { tenant: "t" } });
    expect(seen[0].value).toMatchObject({ name: "echo", arguments: { text: "hi" } });
    expect(seen[0].signal).toBeInstanceOf(AbortSignal);
    expect(seen[1].stage).toBe("tool_output");
    expect(seen[1].value).toEqual({ toolCallId: "call_1", name: "echo", value: { text: "hi" } });
    const decisions = rec.events.filter((e) => e.type === "guardrail_decision") as any[];
    expect(decisions.map((d) => d.record)).toEqual([
      { guardrail: "inspect", stage: "tool_input", action: "allow", reason: "fine", metadata: { n: 1 } },
      { guardrail: "inspect", stage: "tool_output", action: "allow", reason: "fine", metadata: { n: 1 } },
    ]);
  });

  it("blocks a call before lookup with guardrail_blocked and the default message", async () => {
    const { promise, log, rec } = await run({ toolInput: [allow("a"), { name: "no", evaluate: () => ({ action: "block" }) }] });
    const result = await promise;
    expect(log).toEqual([]);
    expect(result.error).toEqual({ message: "Tool call blocked by guardrail" });
    const blocked = rec.events.find((e) => e.type === "tool_execution_blocked") as any;
    expect(blocked.reason).toBe("guardrail_blocked");
    expect(rec.rows.map((r) => r.status)).toEqual(["blocked"]);
  });

  it("names the refusing rule of a rule pack, with its reason, bounded to 200 bytes and redacted", async () => {
    const SECRET = "tok_abcdef";
    const rule: Guardrail = { name: "pii", pack: "pii", rule: "email", evaluate: () => ({ action: "block", reason: `found ${SECRET} ${"x".repeat(400)}` }) };
    const { promise, rec } = await run({ toolInput: [rule] }, [SECRET]);
    const result = await promise;
    expect(result.error!.message.startsWith("Blocked by guardrail rule pack:pii/email: found [REDACTED]")).toBe(true);
    expect(Buffer.byteLength(result.error!.message)).toBeLessThanOrEqual(200);
    expect(JSON.stringify(rec.events)).not.toContain(SECRET);
    const blocked = rec.events.find((e) => e.type === "tool_execution_blocked") as any;
    expect(blocked.error.message).toBe(result.error!.message);
    expect(blocked.reason).toBe("guardrail_blocked");
  });

  it("blocks a result after execution with the output message", async () => {
    const { promise, log, rec } = await run({ toolOutput: [{ name: "out", evaluate: () => ({ action: "block" }) }] });
    const result = await promise;
    expect(log).toEqual(["execute"]);
    expect(result.error!.message).toBe("Tool result blocked by guardrail");
    expect(rec.rows.map((r) => r.status)).toEqual(["started", "blocked"]);
  });

  it("rejects with GuardrailError on tripwire and interrupt, after writing the terminal row", async () => {
    for (const action of ["tripwire", "interrupt"] as const) {
      const { promise, log, rec } = await run({ toolInput: [{ name: "trip", evaluate: async () => ({ action, reason: "stop" }) }] });
      const err = await promise.then(() => null, (e) => e);
      expect(err).toBeInstanceOf(GuardrailError);
      expect(err.code).toBe(action === "interrupt" ? "ERR_PRISM_GUARDRAIL_INTERRUPT_UNAVAILABLE" : "ERR_PRISM_GUARDRAIL_BLOCKED");
      expect(err.record).toEqual({ guardrail: "trip", stage: "tool_input", action, reason: "stop" });
      expect(log).toEqual([]);
      expect(rec.rows.map((r) => r.status)).toEqual(["blocked"]);
    }
  });

  it("turns malformed, invalid and throwing guardrails into tripwires with their reasons", async () => {
    const cases: [Guardrail, string][] = [
      [{ name: "no-evaluate" } as never, "guardrail_invalid"],
      [{ evaluate: () => ({ action: "allow" }) } as never, "guardrail_invalid"],
      [{ name: "wrong-stage", stage: "tool_output", evaluate: () => ({ action: "allow" }) }, "guardrail_invalid"],
      [{ name: "garbage", evaluate: () => ({ action: "maybe" }) as never }, "guardrail_invalid_decision"],
      // An action named like an Object.prototype member is no action either.
      [{ name: "inherited", evaluate: () => ({ action: "constructor" }) as never }, "guardrail_invalid_decision"],
      [{ name: "inherited2", evaluate: () => ({ action: "toString" }) as never }, "guardrail_invalid_decision"],
      [{ name: "nothing", evaluate: () => undefined as never }, "guardrail_invalid_decision"],
      [{ name: "throws", evaluate: () => { throw new Error("bug"); } }, "guardrail_failed"],
      [{ name: "rejects", evaluate: () => Promise.reject("bug") }, "guardrail_failed"],
    ];
    for (const [g, reason] of cases) {
      const { promise } = await run({ toolInput: [g] });
      const err = await promise.then(() => null, (e) => e);
      expect(err, reason).toBeInstanceOf(GuardrailError);
      expect(err.record.reason).toBe(reason);
      expect(err.record.action).toBe("tripwire");
    }
  });

  it("runs up to maxConcurrency at once, decides in declaration order and aborts the rest", async () => {
    const started: string[] = [];
    const aborted: string[] = [];
    const slow = (name: string, ms: number, action: "allow" | "block"): Guardrail => ({
      name,
      evaluate: (c) =>
        new Promise((resolve) => {
          started.push(name);
          c.signal.addEventListener("abort", () => aborted.push(name));
          setTimeout(() => resolve({ action }), ms);
        }),
    });
    const { promise, rec } = await run({
      maxConcurrency: 3,
      toolInput: [slow("a", 20, "allow"), slow("b", 5, "block"), slow("c", 50, "allow"), slow("d", 1, "allow")],
    });
    const result = await promise;
    expect(result.error!.message).toBe("Tool call blocked by guardrail");
    expect(started).toEqual(["a", "b", "c", "d"]);
    expect(aborted).toContain("c");
    const decisions = rec.events.filter((e) => e.type === "guardrail_decision").map((e: any) => e.record.guardrail);
    expect(decisions).toEqual(["a", "b"]);
  });

  it("bounds record fields and normalises metadata through JSON", async () => {
    const big = { blob: "y".repeat(20_000) };
    const cyclic: any = { a: 1 };
    cyclic.self = cyclic;
    const { promise, rec } = await run({
      toolInput: [
        { name: "n".repeat(300), evaluate: () => ({ action: "allow", reason: "r".repeat(10_000), metadata: big }) },
        { name: "cyclic", evaluate: () => ({ action: "allow", metadata: cyclic }) },
        { name: "dates", evaluate: () => ({ action: "allow", metadata: { at: new Date(0), f: () => 1 } }) },
      ],
    });
    await promise;
    const records = rec.events.filter((e) => e.type === "guardrail_decision").map((e: any) => e.record);
    expect(Buffer.byteLength(records[0].guardrail)).toBe(128);
    expect(Buffer.byteLength(records[0].reason)).toBe(4096);
    // As runGuardrails (and upstream's) records: over 16 KiB is `{ truncated: true }`, unserializable `{ invalid: true }`.
    expect(records[0].metadata).toEqual({ truncated: true });
    expect(records[1].metadata).toEqual({ invalid: true });
    expect(records[2].metadata).toEqual({ at: "1970-01-01T00:00:00.000Z" });
  });

  it("rejects maxConcurrency outside 1–16", async () => {
    for (const maxConcurrency of [0, 17, 1.5, Number.NaN]) {
      const { promise } = await run({ maxConcurrency, toolInput: [allow("a")] });
      await expect(promise).rejects.toThrow("guardrails.maxConcurrency must be an integer from 1 to 16");
    }
  });

  it("sees the call as rewritten by tool_call middleware", async () => {
    const middleware = createMiddlewareRegistry();
    middleware.use("tool_call", (c: any) => ({ ...c, arguments: { text: "rewritten" } }));
    let seen: any;
    const r = await dispatchToolCall({
      call: call("echo", { text: "original" }),
      registry: createToolRegistry([echoTool()]),
      context: ctx(),
      middleware,
      guardrails: { toolInput: [{ name: "look", evaluate: (c) => ((seen = c.value), { action: "allow" }) }] },
    });
    expect(seen.arguments).toEqual({ text: "rewritten" });
    expect(r.value).toEqual({ text: "rewritten" });
  });
});
