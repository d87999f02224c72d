// A local stand-in for Anthropic's Messages API, for code that reads ANTHROPIC_BASE_URL (the docs'
// examples): no network, no key. The same rule as openai-stand-in.ts: when the request offers tools and
// carries no tool result yet, it calls the first tool with the required properties filled in; otherwise
// it answers with text that quotes the last tool result. `POST /messages` streams (the API's SSE events,
// with cache token counts in the usage); `GET /models` lists one model.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

interface WireTool {
  name: string;
  input_schema?: { properties?: Record<string, { type?: unknown }>; required?: string[] };
}

function sampleInput(tool: WireTool): Record<string, unknown> {
  const schema = tool.input_schema ?? {};
  const input: Record<string, unknown> = {};
  for (const name of schema.required ?? []) {
    const type = schema.properties?.[name]?.type;
    input[name] = type === "number" || type === "integer" ? 1 : type === "boolean" ? true : "Oslo";
  }
  return input;
}

/** The content block the stand-in answers with, and the stop reason. */
function reply(body: any): { block: Record<string, unknown>; delta: Record<string, unknown>; stop: string } {
  const messages: any[] = Array.isArray(body?.messages) ? body.messages : [];
  const tools: WireTool[] = Array.isArray(body?.tools) ? body.tools : [];
  const results = messages.flatMap((m) => (Array.isArray(m.content) ? m.content : [])).filter((b: any) => b?.type === "tool_result");
  if (tools.length > 0 && results.length === 0) {
    const block = { type: "tool_use", id: "toolu_stand_in_1", name: tools[0].name, input: {} };
    return { block, delta: { type: "input_json_delta", partial_json: JSON.stringify(sampleInput(tools[0])) }, stop: "tool_use" };
  }
  const last = results.at(-1);
  const text = last ? `The tool said: ${typeof last.content === "string" ? last.content : JSON.stringify(last.content)}` : "Hello from the local stand-in.";
  return { block: { type: "text", text: "" }, delta: { type: "text_delta", text }, stop: "end_turn" };
}

const MODEL = { type: "model", id: "claude-sonnet-4-5", display_name: "Claude Sonnet 4.5", created_at: "2025-09-29T00:00:00Z", max_input_tokens: 200000, max_tokens: 64000 };

export interface AnthropicStandIn {
  baseUrl: string;
  close(): Promise<void>;
}

export async function startAnthropicStandIn(): Promise<AnthropicStandIn> {
  const server: Server = createServer((req, res) => {
    let raw = "";
    req.setEncoding("utf8");
    req.on("data", (c) => (raw += c));
    req.on("end", () => {
      const json = (status: number, value: unknown) => res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(value));
      if (req.method === "GET" && /\/models(\?|$)/.test(req.url ?? "")) {
        json(200, { data: [MODEL], has_more: false, first_id: MODEL.id, last_id: MODEL.id });
        return;
      }
      if (req.method !== "POST" || !req.url?.endsWith("/messages")) {
        json(404, { type: "error", error: { type: "not_found_error", message: `stand-in: no ${req.method} ${req.url}` } });
        return;
      }
      let body: any;
      try {
        body = JSON.parse(raw);
      } catch {
        json(400, { type: "error", error: { type: "invalid_request_error", message: "stand-in: body is not JSON" } });
        return;
      }
      const { block, delta, stop } = reply(body);
      // A request that marks a cache breakpoint reads the cache (as a repeated prompt would) and writes it.
      const cached = JSON.stringify(body).includes('"cache_control"');
      const usage = { input_tokens: 12, output_tokens: 1, cache_read_input_tokens: cached ? 2048 : 0, cache_creation_input_tokens: cached ? 64 : 0 };
      const event = (type: string, data: object) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
      res.writeHead(200, { "content-type": "text/event-stream" });
      event("message_start", { message: { id: "msg_stand_in", type: "message", role: "assistant", model: body.model, content: [], stop_reason: null, usage } });
      event("content_block_start", { index: 0, content_block: block });
      event("content_block_delta", { index: 0, delta });
      event("content_block_stop", { index: 0 });
      event("message_delta", { delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 7 } });
      event("message_stop", {});
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
