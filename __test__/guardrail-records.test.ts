import { describe, expect, it } from "vitest";
import { createSecretRedactor, createToolRegistry, dispatchToolCall, runGuardrails } from "../index.js";

// One set of record rules for both guardrail runners: dispatch's own `tool_input` stage and
// `runGuardrails` over the same stage must write the same `guardrail_decision` records.
const SECRET = "sk-live-0123456789abcdef";
const redactor = createSecretRedactor([SECRET]);
const cyclic: Record<string, unknown> = { a: 1 };
cyclic.self = cyclic;

type Decide = () => unknown;
const cases: [string, Decide][] = [
  ["allow with metadata", () => ({ action: "allow", reason: "fine", metadata: { at: new Date(0), f: () => 1, n: 1 } })],
  ["huge metadata", () => ({ action: "allow", metadata: { blob: "y".repeat(20_000) } })],
  ["cyclic metadata", () => ({ action: "allow", metadata: cyclic })],
  ["array metadata", () => ({ action: "allow", metadata: [1, 2] })],
  ["secret everywhere", () => ({ action: "allow", reason: `key ${SECRET}`, metadata: { token: SECRET } })],
  ["long unicode reason", () => ({ action: "allow", reason: "é😀".repeat(3000) })],
  ["a throw", () => { throw new Error(`failed with ${SECRET}`); }],
  ["a non-Error throw", () => { throw { toString: () => "object thrown" }; }],
  ["an unreadable throw", () => { throw { toString: () => { throw new Error("no"); } }; }],
  ["a rejection", () => Promise.reject(new Error("async failure"))],
  ["no decision", () => undefined],
  ["an unknown action", () => ({ action: "maybe" })],
  ["a block", () => ({ action: "block", reason: "stop here", metadata: { why: "test" } })],
];

async function throughRunGuardrails(name: string, decide: Decide) {
  const result = await runGuardrails({
    stage: "tool_input",
    value: { type: "tool_call", id: "c1", name: "echo", arguments: {} },
    context: { sessionId: "s", runId: "r", toolCallId: "c1", toolName: "echo" },
    guardrails: { toolInput: [{ name, stage: "tool_input", evaluate: decide as never }] },
    redactor,
  });
  return result.records;
}

async function throughDispatch(name: string, decide: Decide) {
  const records: unknown[] = [];
  const registry = createToolRegistry([{ name: "echo", execute: (_a: unknown, c: { toolCallId: string }) => ({ toolCallId: c.toolCallId, name: "echo", value: 1 }) }]);
  await dispatchToolCall({
    call: { type: "tool_call", id: "c1", name: "echo", arguments: {} },
    registry,
    context: { sessionId: "s", runId: "r", toolCallId: "c1" },
    guardrails: { toolInput: [{ name, stage: "tool_input", evaluate: decide as never }] },
    redactor,
    emit: (e: any) => void (e.type === "guardrail_decision" && records.push(e.record)),
  }).catch(() => undefined);
  return records;
}

describe("guardrail records: dispatch and runGuardrails write the same", () => {
  for (const [label, decide] of cases) {
    it(label, async () => {
      const name = label.replace(/ /g, "-");
      const expected = await throughRunGuardrails(name, decide);
      expect(expected).toHaveLength(1);
      expect(await throughDispatch(name, decide)).toEqual(expected);
      // The secret never reaches a record.
      expect(JSON.stringify(expected)).not.toContain(SECRET);
    });
  }

  it("a failed guardrail's record keeps its name and the cause's message", async () => {
    const [record] = await throughDispatch("checker", () => { throw new Error(`boom ${SECRET}`); });
    expect(record).toEqual({ guardrail: "checker", stage: "tool_input", action: "tripwire", reason: "guardrail_failed", metadata: { error: "boom [REDACTED]" } });
  });

  it("oversized metadata is { truncated: true } and unserializable metadata { invalid: true } on both", async () => {
    const [big] = await throughDispatch("big", () => ({ action: "allow", metadata: { blob: "y".repeat(20_000) } }));
    expect((big as any).metadata).toEqual({ truncated: true });
    const records = await runGuardrails({
      stage: "tool_input",
      value: {},
      context: { sessionId: "s", runId: "r" },
      guardrails: { toolInput: [{ name: "bigint", stage: "tool_input", evaluate: () => ({ action: "allow", metadata: { n: 1n } }) as never }] },
    });
    expect(records.records[0].metadata).toEqual({ invalid: true });
    const registry = createToolRegistry([{ name: "echo", execute: (_a: unknown, c: { toolCallId: string }) => ({ toolCallId: c.toolCallId, name: "echo", value: 1 }) }]);
    const seen: any[] = [];
    await dispatchToolCall({
      call: { type: "tool_call", id: "c1", name: "echo", arguments: {} },
      registry,
      context: { sessionId: "s", runId: "r", toolCallId: "c1" },
      guardrails: { toolInput: [{ name: "bigint", stage: "tool_input", evaluate: () => ({ action: "allow", metadata: { n: 1n } }) as never }] },
      emit: (e: any) => void (e.type === "guardrail_decision" && seen.push(e.record)),
    });
    expect(seen[0].metadata).toEqual({ invalid: true });
  });
});
