import { describe, expect, it } from "vitest";
import { assertGuardrailsAllowed, GuardrailError, runGuardrails, type RunGuardrail } from "../index.js";

const context = { sessionId: "s", runId: "r" };
const guard = (name: string, action: any, extra: Partial<RunGuardrail> = {}): RunGuardrail => ({
  name,
  stage: "input",
  evaluate: () => ({ action, reason: `${name} says ${action}` }),
  ...extra,
});

describe("runGuardrails", () => {
  it("no guardrails: no records", async () => {
    expect(await runGuardrails({ stage: "input", value: "x", context })).toEqual({ records: [] });
  });

  it("stops at the first non-allow decision, emits one event per record in order", async () => {
    const events: any[] = [];
    let thirdRan = false;
    const result = await runGuardrails({
      stage: "input",
      value: "hello",
      context,
      guardrails: { input: [guard("a", "allow"), guard("b", "block"), { ...guard("c", "allow"), evaluate: () => ((thirdRan = true), { action: "allow" }) }] },
      emit: (e) => void events.push(e),
    });
    expect(result.records.map((r) => [r.guardrail, r.action])).toEqual([["a", "allow"], ["b", "block"]]);
    expect(result.terminal).toMatchObject({ guardrail: "b", action: "block", reason: "b says block", stage: "input" });
    expect(thirdRan).toBe(false);
    expect(events.map((e) => [e.type, e.record.guardrail])).toEqual([["guardrail_decision", "a"], ["guardrail_decision", "b"]]);
    const e = (() => {
      try {
        assertGuardrailsAllowed(result);
      } catch (err) {
        return err as any;
      }
    })();
    expect(e).toBeInstanceOf(GuardrailError);
    expect(e.message).toBe("Guardrail blocked run");
    expect(e.code).toBe("ERR_PRISM_GUARDRAIL_BLOCKED");
    expect(e.record).toBe(result.terminal);
  });

  it("a throwing, malformed or garbage-answering guardrail is a tripwire with a redacted, bounded cause", async () => {
    const redactor = { redact: <T,>(v: T): T => (typeof v === "string" ? (v.replaceAll("sk-9", "[REDACTED]") as T) : v) };
    const run = (g: RunGuardrail) => runGuardrails({ stage: "input", value: 1, context, guardrails: { input: [g] }, redactor });
    const thrown = await run({ ...guard("t", "allow"), evaluate: () => { throw new Error("down sk-9"); } });
    expect(thrown.terminal).toMatchObject({ action: "tripwire", reason: "guardrail_failed", metadata: { error: "down [REDACTED]" } });
    expect((await run({ ...guard("w", "allow"), stage: "output" })).terminal?.reason).toBe("guardrail_invalid");
    expect((await run({ ...guard("g", "allow"), evaluate: () => ({ action: "maybe" }) as never })).terminal?.reason).toBe("guardrail_invalid_decision");
    const huge = await run({ ...guard("h", "allow"), evaluate: () => ({ action: "block", reason: "é".repeat(5000), metadata: { big: "x".repeat(20_000) } }) });
    expect(Buffer.byteLength(huge.terminal!.reason!)).toBeLessThanOrEqual(4096);
    expect(huge.terminal!.metadata).toEqual({ truncated: true });
  });

  it("an interrupt outside a durable input stage names the stage and its own code", async () => {
    const result = await runGuardrails({ stage: "tool_input", value: {}, context, guardrails: { toolInput: [{ ...guard("i", "interrupt"), stage: "tool_input" }] } });
    const e = new GuardrailError(result.terminal!);
    expect(e.code).toBe("ERR_PRISM_GUARDRAIL_INTERRUPT_UNAVAILABLE");
    expect(e.message).toContain('stage "tool_input"');
  });

  it("refuses a bad stage and a bad maxConcurrency", async () => {
    await expect(runGuardrails({ stage: "nope" as never, value: 1, context })).rejects.toThrow('stage must be "input"');
    await expect(runGuardrails({ stage: "input", value: 1, context, guardrails: { input: [guard("a", "allow")], maxConcurrency: 17 } })).rejects.toThrow(
      "Guardrail maxConcurrency must be a safe integer from 1 to 16",
    );
  });
});
