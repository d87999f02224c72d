// Shared by the provider suites: OpenAI-compatible stream pieces for scripted replies, and the two
// tools (read_file, lookup) their agent runs call.
import type { ToolDefinition } from "../../index.mjs";
import { sse } from "./sse-server";

/** A `chat.completion.chunk` whose one choice carries `delta` (and `finish_reason`). */
export const chunk = (delta: object, finish: string | null = null) => sse({ id: "c", object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: finish }] });
/** The usage chunk a stream with `include_usage` ends with. */
export const usageChunk = (p: number, c: number) => sse({ id: "c", object: "chat.completion.chunk", choices: [], usage: { prompt_tokens: p, completion_tokens: c, total_tokens: p + c } });
export const DONE = "data: [DONE]\n\n";

/** `read_file` and `lookup`, each logging `[name, args]` to `log` when it runs. */
export function tools(log: Array<[string, unknown]>): ToolDefinition[] {
  return [
    {
      name: "read_file",
      description: "Read a file",
      parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
      execute: (args: any, ctx: any) => (log.push(["read_file", args]), { toolCallId: ctx.toolCallId, name: "read_file", value: { text: `contents of ${args.path}` } }),
    },
    {
      name: "lookup",
      parameters: { type: "object", properties: { q: { type: "string" } }, required: ["q"] },
      execute: (args: any, ctx: any) => (log.push(["lookup", args]), { toolCallId: ctx.toolCallId, name: "lookup", value: { hits: args.q.length } }),
    },
  ];
}
