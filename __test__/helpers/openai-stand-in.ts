// A local stand-in for an OpenAI-compatible Chat Completions endpoint, for code that reads
// OPENAI_BASE_URL (the docs' examples): no network, no key. Its one rule, so an agent's tool round runs:
// when the request offers tools and has no tool result yet, it calls the first tool with the required
// properties filled in ("Oslo" for a string, 1 for a number, true for a boolean); otherwise it answers
// with text that quotes the last tool result. Streams when the request asks to.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

interface WireTool {
  function: { name: string; parameters?: { properties?: Record<string, { type?: unknown }>; required?: string[] } };
}

function sampleArguments(tool: WireTool): Record<string, unknown> {
  const schema = tool.function.parameters ?? {};
  const args: Record<string, unknown> = {};
  for (const name of schema.required ?? []) {
    const type = schema.properties?.[name]?.type;
    args[name] = type === "number" || type === "integer" ? 1 : type === "boolean" ? true : "Oslo";
  }
  return args;
}

function reply(body: any): { delta: Record<string, unknown>; finish: string } {
  const messages: any[] = Array.isArray(body?.messages) ? body.messages : [];
  const tools: WireTool[] = Array.isArray(body?.tools) ? body.tools : [];
  const lastTool = [...messages].reverse().find((m) => m.role === "tool");
  if (tools.length > 0 && !lastTool) {
    const call = { index: 0, id: "call_stand_in_1", type: "function", function: { name: tools[0].function.name, arguments: JSON.stringify(sampleArguments(tools[0])) } };
    return { delta: { role: "assistant", tool_calls: [call] }, finish: "tool_calls" };
  }
  const text = lastTool ? `The tool said: ${typeof lastTool.content === "string" ? lastTool.content : JSON.stringify(lastTool.content)}` : "Hello from the local stand-in.";
  return { delta: { role: "assistant", content: text }, finish: "stop" };
}

export interface StandIn {
  baseUrl: string;
  requests: number;
  close(): Promise<void>;
}

export async function startOpenAIStandIn(): Promise<StandIn> {
  const state = { requests: 0 };
  const server: Server = createServer((req, res) => {
    let raw = "";
    req.setEncoding("utf8");
    req.on("data", (c) => (raw += c));
    req.on("end", () => {
      state.requests += 1;
      if (req.method !== "POST" || !req.url?.endsWith("/chat/completions")) {
        res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: `stand-in: no ${req.method} ${req.url}` } }));
        return;
      }
      let body: any;
      try {
        body = JSON.parse(raw);
      } catch {
        res.writeHead(400, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: "stand-in: body is not JSON" } }));
        return;
      }
      const { delta, finish } = reply(body);
      const usage = { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 };
      if (!body.stream) {
        const message = { ...delta, tool_calls: (delta.tool_calls as any[] | undefined)?.map(({ index: _i, ...c }) => c) };
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ id: "c", object: "chat.completion", choices: [{ index: 0, message, finish_reason: finish }], usage }));
        return;
      }
      const sse = (data: unknown) => `data: ${JSON.stringify(data)}\n\n`;
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(sse({ id: "c", object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: null }] }));
      res.write(sse({ id: "c", object: "chat.completion.chunk", choices: [{ index: 0, delta: {}, finish_reason: finish }] }));
      res.write(sse({ id: "c", object: "chat.completion.chunk", choices: [], usage }));
      res.end("data: [DONE]\n\n");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    get requests() {
      return state.requests;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
