// Model-chosen call ids and tool names are redacted wherever the agent's events and messages carry
// them (docs/agent.md "Redaction"): a provider may put a secret in a `toolCallId` or a tool name,
// and the subscriber events, the ledger event rows and `session.messages()` never show it.
import { describe, expect, it } from "vitest";
import { createAgent, createSecretRedactor, type AgentEvent, type ProviderEvent, type RunLedger, type ToolDefinition } from "../index.mjs";

const S = "sk-live-5e3c1a9b7d2f4e6a";
const model = { provider: "scripted", model: "m" };
const echo: ToolDefinition = {
  name: "echo",
  parameters: { type: "object", properties: { x: { type: "number" } } },
  execute: (args: any, ctx) => ({ toolCallId: ctx.toolCallId, name: "echo", value: args }),
};

/** A provider that plays `turns` in order (the last one again when the run asks for more). */
function scripted(turns: ProviderEvent[][]) {
  let n = 0;
  return {
    id: "scripted",
    async *generate() {
      const events = turns[Math.min(n++, turns.length - 1)];
      for (const e of events) yield e;
    },
  };
}

async function run(turns: ProviderEvent[][], config: Record<string, unknown>, options: Record<string, unknown> = {}) {
  const rows: unknown[] = [];
  const runLedger = { appendEvent: (r: unknown) => void rows.push(r), appendToolCall: (r: unknown) => void rows.push(r) } as unknown as RunLedger;
  const session = createAgent({ model, provider: scripted(turns), tools: [echo], runLedger, ...config } as any).createSession();
  const events: AgentEvent[] = [];
  try {
    for await (const e of session.stream("go", options)) events.push(e);
  } catch {
    // a failed run still has its events and messages
  }
  return { events, rows, messages: session.messages() };
}

const call = (id: string, name: string): ProviderEvent => ({ type: "tool_call", call: { type: "tool_call", id, name, arguments: { x: 1 } } }) as ProviderEvent;
const done = { type: "done" } as ProviderEvent;
const text = (t: string) => ({ type: "content_delta", content: { type: "text", text: t } }) as ProviderEvent;

const cases: [string, ProviderEvent[][], Record<string, unknown>?][] = [
  ["a known tool's call id", [[call(`call_${S}`, "echo"), done], [text("ok"), done]]],
  ["an unknown tool's name", [[call("c1", `echo${S}`), done], [text("ok"), done]]],
  ["an unknown tool's name and id", [[call(`id${S}`, `x${S}`), done], [text("ok"), done]]],
  ["a call id rebuilt from tool_call_delta fragments", [[{ type: "tool_call_delta", index: 0, id: `d_${S}`, name: "echo", argumentsDelta: '{"x":1}' } as ProviderEvent, done], [text("ok"), done]]],
  ["a call left undispatched at the turn limit", [[call(`t_${S}`, `n${S}`), done]], { limits: { maxTurns: 1 } }],
];

describe("model-chosen call ids and tool names holding a secret", () => {
  for (const [what, turns, options] of cases) {
    for (const [how, config] of [
      ["secrets", { secrets: [S] }],
      ["a redactor", { redactor: createSecretRedactor([S]) }],
    ] as const) {
      it(`${what} (${how}): redacted in events, ledger rows and session.messages()`, async () => {
        const out = await run(turns, config, options);
        expect(out.events.length).toBeGreaterThan(3);
        expect(out.messages.some((m) => m.role === "tool")).toBe(true);
        const all = JSON.stringify(out);
        expect(all).not.toContain(S);
        expect(all).toContain("[REDACTED]");
      });
    }
  }

  it("an unknown tool stays blocked and a known one still runs under its redacted id", async () => {
    const out = await run([[call(`call_${S}`, "echo"), call("c2", `echo${S}`), done], [text("ok"), done]], { secrets: [S] });
    const results = out.messages.filter((m) => m.role === "tool").map((m) => (m.content as any[])[0]);
    expect(results[0]).toMatchObject({ toolCallId: "call_[REDACTED]", name: "echo", result: { x: 1 } });
    expect(results[1]).toMatchObject({ toolCallId: "c2", name: "echo[REDACTED]" });
    expect(results[1].error.message).toMatch(/Unknown tool/);
  });
});
