// Development check: runs @arnilo/prism's provider-conformance kit against this package's providers,
// each talking to a local 127.0.0.1 server that serves a recorded-format stream. Needs a built upstream:
//   UPSTREAM=/path/to/prism node scripts/provider-conformance.mjs
// (not part of `npm test`: CI has no upstream build).
import { createServer } from "node:http";
import { pathToFileURL } from "node:url";
import { createOpenAICompatibleProvider } from "../providers/openai-compatible.mjs";
import { createAnthropicMessagesProvider } from "../providers/anthropic.mjs";

const upstream = process.env.UPSTREAM ?? "/work/scratch/upstream";
const kit = await import(pathToFileURL(`${upstream}/dist/testing/provider-conformance.js`).href);

const KEY = "sk-conformance-0123456789";
const sse = (data, event) => `${event ? `event: ${event}\n` : ""}data: ${JSON.stringify(data)}\n\n`;
const openaiStream = [
  sse({ choices: [{ index: 0, delta: { content: "Hello" } }] }),
  sse({ choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: "call_1", function: { name: "lookup", arguments: '{"q":' } }] } }] }),
  sse({ choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '"x"}' } }] }, finish_reason: "tool_calls" }] }),
  sse({ choices: [], usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 } }),
  "data: [DONE]\n\n",
].join("");
const anthropicStream = [
  sse({ type: "message_start", message: { usage: { input_tokens: 5, output_tokens: 1 } } }, "message_start"),
  sse({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }, "content_block_start"),
  sse({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Hello" } }, "content_block_delta"),
  sse({ type: "content_block_stop", index: 0 }, "content_block_stop"),
  sse({ type: "content_block_start", index: 1, content_block: { type: "tool_use", id: "call_1", name: "lookup", input: {} } }, "content_block_start"),
  sse({ type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: '{"q":"x"}' } }, "content_block_delta"),
  sse({ type: "content_block_stop", index: 1 }, "content_block_stop"),
  sse({ type: "message_delta", delta: { stop_reason: "tool_use" }, usage: { output_tokens: 2 } }, "message_delta"),
  sse({ type: "message_stop" }, "message_stop"),
].join("");

let captured;
const server = createServer((req, res) => {
  let body = "";
  req.on("data", (c) => (body += c));
  req.on("end", () => {
    captured = { headers: new Headers(Object.entries(req.headers).map(([k, v]) => [k, String(v)])), body: JSON.parse(body) };
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.end(req.url.endsWith("/messages") ? anthropicStream : openaiStream);
  });
});
await new Promise((r) => server.listen(0, "127.0.0.1", r));
const base = `http://127.0.0.1:${server.address().port}`;

const request = () => ({
  model: { provider: "x", model: "m" },
  messages: [
    { role: "system", content: [{ type: "text", text: "canary-system" }] },
    { role: "user", content: [{ type: "text", text: "canary-user" }] },
    { role: "assistant", content: [{ type: "tool_call", id: "prev_1", name: "lookup", arguments: { q: "canary-arg" } }] },
    { role: "tool", content: [{ type: "tool_result", toolCallId: "prev_1", name: "lookup", result: { hit: "canary-result" } }] },
  ],
  tools: [{ name: "lookup", description: "Look up", parameters: { type: "object", properties: { q: { type: "string" } } } }],
  options: { headers: { "x-caller": "kept", "content-type": "text/plain", authorization: "Bearer caller", "x-api-key": "caller", "anthropic-version": "caller" } },
});

const providers = [
  ["openai-compatible", createOpenAICompatibleProvider({ baseUrl: base, apiKey: KEY }), { "content-type": "application/json", authorization: `Bearer ${KEY}` }],
  ["anthropic", createAnthropicMessagesProvider({ baseUrl: base, apiKey: KEY }), { "content-type": "application/json", "x-api-key": KEY, "anthropic-version": "2023-06-01" }],
];

let failures = 0;
for (const [name, provider, owned] of providers) {
  const checks = [
    ["stream conforms (text, usage)", async () => kit.assertProviderStreamConforms({ provider, request: request(), expect: { text: "Hello", usage: { inputTokens: 5, outputTokens: 2 } } })],
    ["tool call deltas reconstruct", async () => kit.assertToolCallDeltasReconstruct(await kit.collectProviderEvents(provider, request()), [{ index: 0, id: "call_1", name: "lookup", arguments: { q: "x" } }])],
    ["usage accounting", async () => kit.assertUsageAccounting(await kit.collectProviderEvents(provider, request()), { inputTokens: 5, outputTokens: 2 })],
    ["already-aborted signal observed", async () => kit.assertAbortIsObserved({ provider, request: request() })],
    ["no secret leak", async () => kit.assertNoSecretLeak(await kit.collectProviderEvents(provider, request()), [KEY])],
    ["serialized request covers content", async () => (await kit.collectProviderEvents(provider, request()), kit.assertSerializedRequestCoversContent(request(), captured.body))],
    ["provider-owned headers win", async () => (await kit.collectProviderEvents(provider, request()), kit.assertProviderOwnedHeadersWin(captured.headers, { owned, caller: request().options.headers }))],
  ];
  for (const [label, check] of checks) {
    try {
      await check();
      console.log(`ok   ${name}: ${label}`);
    } catch (err) {
      failures++;
      console.log(`FAIL ${name}: ${label}: ${err.message}`);
    }
  }
}
server.close();
process.exitCode = failures ? 1 : 0;
