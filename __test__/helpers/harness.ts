// Small builders shared by the dispatch suites: real tools, a recording ledger and event log.
import type { AgentEvent, JsonObject, ToolCallContent, ToolCallRecord, ToolDefinition } from "../../index.js";

export const call = (name: string, args: unknown = {}, id = "call_1", extra: Partial<ToolCallContent> = {}): ToolCallContent =>
  ({ type: "tool_call", id, name, arguments: args as JsonObject, ...extra }) as ToolCallContent;

export const ctx = (extra: Record<string, unknown> = {}) => ({ sessionId: "s1", runId: "r1", toolCallId: "ignored", ...extra });

export function echoTool(name = "echo", log?: string[]): ToolDefinition {
  return {
    name,
    parameters: { type: "object", properties: { text: { type: "string" } } },
    execute(args, context) {
      log?.push("execute");
      return { toolCallId: context.toolCallId, name, value: args };
    },
  };
}

export function recorder() {
  const events: AgentEvent[] = [];
  const rows: ToolCallRecord[] = [];
  return {
    events,
    rows,
    emit: (e: AgentEvent) => {
      events.push(e);
    },
    ledger: { appendToolCall: (r: ToolCallRecord) => void rows.push(r) },
    types: () => events.map((e) => e.type),
    terminalRows: (toolCallId?: string) =>
      rows.filter((r) => r.status !== "started" && (toolCallId === undefined || r.toolCallId === toolCallId)),
  };
}
