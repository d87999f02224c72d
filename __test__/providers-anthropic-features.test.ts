// The Anthropic provider as `@arnilo/prism-provider-anthropic` has it (issue 29 item 10): thinking and
// effort, prompt-cache breakpoints with retention, document and file blocks, x-client-request-id.
// Request bodies and headers are asserted on a real HTTP server on 127.0.0.1.
import { describe, expect, it } from "vitest";
import { createAgent, type ProviderEvent } from "../index.mjs";
import { createAnthropicMessagesProvider, defineAnthropicModel, listAnthropicModels, mapAnthropicModel } from "../providers/anthropic.mjs";
import { serveForTest, sse, type Reply } from "./helpers/sse-server";


const ev = (data: { type: string } & Record<string, unknown>) => sse(data, data.type);
const textReply = (text = "ok"): Reply => ({
  chunks: [
    ev({ type: "message_start", message: { id: "msg", usage: { input_tokens: 1, output_tokens: 0 } } }),
    ev({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }),
    ev({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text } }),
    ev({ type: "content_block_stop", index: 0 }),
    ev({ type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 1 } }),
    ev({ type: "message_stop" }),
  ],
});
const model = { provider: "anthropic", model: "claude-test" };
const user = (text: string) => ({ role: "user", content: [{ type: "text", text }] });

async function send(server: { url: string }, request: object, providerOptions: object = {}) {
  const out: ProviderEvent[] = [];
  const provider = createAnthropicMessagesProvider({ baseUrl: server.url, apiKey: "k-anthropic-test", ...providerOptions });
  for await (const e of provider.generate({ model, messages: [user("hi")], ...request } as any)) out.push(e);
  return out;
}

describe("thinking and effort", () => {
  it("sends the request's compat.thinking and effort over the model's, and passes other compat and extra keys", async () => {
    const server = await serveForTest([textReply(), textReply(), textReply()]);
    await send(server, { model: { ...model, parameters: { maxTokens: 444 }, compat: { thinking: { type: "enabled", budget_tokens: 2048 }, effort: "low" } } });
    await send(server, {
      model: { ...model, compat: { thinking: { type: "enabled", budget_tokens: 2048 }, effort: "low" } },
      options: { compat: { thinking: { type: "adaptive" }, reasoning_effort: "high", service_tier: "auto" }, extra: { metadata: { user_id: "u1" } } },
    });
    await send(server, { options: { compat: { thinking: false } } });
    const [a, b, c] = server.requests.map((r) => r.body);
    expect(a).toMatchObject({ max_tokens: 444, thinking: { type: "enabled", budget_tokens: 2048 }, effort: "low" });
    expect(b).toMatchObject({ thinking: { type: "adaptive" }, effort: "high", service_tier: "auto", metadata: { user_id: "u1" } });
    expect(b).not.toHaveProperty("reasoning_effort");
    expect(c.thinking).toEqual({ type: "disabled" });
    expect(c).not.toHaveProperty("effort");
  });

  it("reaches the request through an agent from the model's compat", async () => {
    const server = await serveForTest([textReply()]);
    const agent = createAgent({ model: { ...model, compat: { thinking: { type: "enabled", budget_tokens: 1024 } } }, provider: createAnthropicMessagesProvider({ baseUrl: server.url }) });
    await agent.createSession().run("x");
    expect(server.requests[0].body.thinking).toEqual({ type: "enabled", budget_tokens: 1024 });
  });
});

describe("prompt-cache breakpoints", () => {
  const messages = [
    { role: "system", content: [{ type: "text", text: "instructions" }] },
    user("preamble"),
    { role: "assistant", content: [{ type: "text", text: "ok" }] },
    user("current turn"),
  ];
  const marked = (body: any) =>
    body.messages.flatMap((m: any, i: number) => m.content.flatMap((b: any, j: number) => (b.cache_control ? [[i, j, b.cache_control]] : [])));

  it("marks the selected message's last block, with a 1 h ttl for retention long", async () => {
    const server = await serveForTest([textReply(), textReply()]);
    await send(server, { model: { ...model, cache: { kind: "cache_control" } }, messages, options: { cacheRetention: "long", cache: { breakpoints: [{ location: "last_stable_message" }] } } });
    await send(server, { model: { ...model, cache: { kind: "cache_control" } }, messages, options: { cache: { breakpoints: [{ location: "last_user_message" }, { location: "system_prompt" }] } } });
    expect(marked(server.requests[0].body)).toEqual([[1, 0, { type: "ephemeral", ttl: "1h" }]]);
    expect(server.requests[0].body.system).toBe("instructions");
    expect(marked(server.requests[1].body)).toEqual([[2, 0, { type: "ephemeral" }]]);
    expect(server.requests[1].body.system).toEqual([{ type: "text", text: "instructions", cache_control: { type: "ephemeral" } }]);
  });

  it("sends no marker unless the model declares cache_control or the mode is on, nor with retention none", async () => {
    const server = await serveForTest([textReply(), textReply(), textReply()]);
    const breakpoints = [{ location: "last_user_message" }];
    await send(server, { messages, options: { cache: { breakpoints } } });
    await send(server, { messages, options: { cache: { mode: "on", breakpoints } } });
    await send(server, { model: { ...model, cache: { kind: "cache_control" } }, messages, options: { cacheRetention: "none", cache: { breakpoints } } });
    expect(server.requests.map((r) => marked(r.body).length)).toEqual([0, 1, 0]);
  });

  it("takes the provider's cache defaults, so an agent's turns are cached", async () => {
    const server = await serveForTest([textReply()]);
    const provider = createAnthropicMessagesProvider({ baseUrl: server.url, cache: { mode: "on", breakpoints: [{ location: "last_user_message" }] }, cacheRetention: "long" });
    await createAgent({ model, provider, instructions: "be brief" }).createSession().run("question");
    const body = server.requests[0].body;
    expect(body.messages.at(-1).content.at(-1)).toEqual({ type: "text", text: "question", cache_control: { type: "ephemeral", ttl: "1h" } });
  });
});

describe("document and file blocks", () => {
  const pdf = Buffer.from("%PDF-1.4").toString("base64");
  it("sends PDF and plain-text documents and files as document blocks", async () => {
    const server = await serveForTest([textReply()]);
    const out = await send(server, {
      messages: [
        {
          role: "user",
          content: [
            { type: "document", mediaType: "application/pdf", name: "brief.pdf", data: pdf },
            { type: "file", mediaType: "application/pdf", url: "https://example.org/report.pdf" },
            { type: "file", mediaType: "text/plain; charset=utf-8", name: "notes.txt", data: Buffer.from("héllo").toString("base64") },
            { type: "text", text: "summarise" },
          ],
        },
      ],
    });
    expect(out.at(-1)!.type).toBe("done");
    expect(server.requests[0].body.messages[0].content).toEqual([
      { type: "document", source: { type: "base64", media_type: "application/pdf", data: pdf }, title: "brief.pdf" },
      { type: "document", source: { type: "url", url: "https://example.org/report.pdf" } },
      { type: "document", source: { type: "text", media_type: "text/plain", data: "héllo" }, title: "notes.txt" },
      { type: "text", text: "summarise" },
    ]);
  });

  it("refuses a file it cannot map with an error naming the media type, before any request", async () => {
    const server = await serveForTest([textReply()]);
    const out = await send(server, { messages: [{ role: "user", content: [{ type: "file", mediaType: "application/zip", data: "UEs=" }] }] });
    expect(out).toEqual([{ type: "error", error: expect.objectContaining({ message: expect.stringContaining("got application/zip") }) }]);
    expect(server.requests).toHaveLength(0);
  });
});

describe("x-client-request-id", () => {
  it("is the request's sessionId, and caller headers cannot replace the provider's own", async () => {
    const server = await serveForTest([textReply(), textReply()]);
    await send(server, { options: { sessionId: "sess-1", headers: { "x-api-key": "attacker", "anthropic-version": "attacker", "x-client-request-id": "forged", "x-caller": "kept" } } });
    await send(server, {});
    const [first, second] = server.requests.map((r) => r.headers);
    expect(first).toMatchObject({ "x-client-request-id": "sess-1", "x-api-key": "k-anthropic-test", "anthropic-version": "2023-06-01", "x-caller": "kept" });
    expect(second["x-client-request-id"]).toBeUndefined();
  });
});

describe("model helpers", () => {
  it("listAnthropicModels reads every page of GET /models with the key and version, as model configs", async () => {
    const json = (body: object): Reply => ({ headers: { "content-type": "application/json" }, chunks: [JSON.stringify(body)] });
    const server = await serveForTest([
      json({ data: [{ id: "claude-sonnet-5", display_name: "Claude Sonnet 5", max_input_tokens: 1_000_000, max_tokens: 128_000 }], has_more: true, last_id: "claude-sonnet-5" }),
      json({ data: [{ id: "claude-haiku-4-5" }], has_more: false, last_id: "claude-haiku-4-5" }),
    ]);
    const models = await listAnthropicModels({ baseUrl: server.url, apiKey: "k-anthropic-test" });
    expect(server.requests.map((r) => r.url)).toEqual(["/models", "/models?after_id=claude-sonnet-5"]);
    expect(server.requests[0].headers).toMatchObject({ "x-api-key": "k-anthropic-test", "anthropic-version": "2023-06-01" });
    expect(models.map((m) => [m.model, m.displayName, m.limits?.contextWindow])).toEqual([
      ["claude-sonnet-5", "Claude Sonnet 5", 1_000_000],
      ["claude-haiku-4-5", "claude-haiku-4-5", undefined],
    ]);
    expect(models[1].compat).toMatchObject({ preserveThinking: true, thinking: { type: "enabled", budget_tokens: 10_000 } });
    expect(models[0].cache).toEqual({ kind: "cache_control", longRetention: true });
  });

  it("listAnthropicModels errors redact the key; mapAnthropicModel refuses an entry without id", async () => {
    const server = await serveForTest([{ status: 401, chunks: ["unauthorized k-anthropic-test"] }, { headers: { "content-type": "application/json" }, chunks: ['{"nope":1}'] }]);
    await expect(listAnthropicModels({ baseUrl: server.url, apiKey: "k-anthropic-test" })).rejects.toThrow(/^Anthropic model discovery failed: 401 unauthorized \[REDACTED\]$/);
    await expect(listAnthropicModels({ baseUrl: server.url })).rejects.toThrow(/no data array/);
    expect(() => mapAnthropicModel({ id: "" } as any)).toThrow(/missing id/);
    expect(() => mapAnthropicModel(undefined as any)).toThrow(/missing id/);
    await expect(listAnthropicModels({ baseUrl: "http://u:pw-secret@127.0.0.1:9" })).rejects.toThrow(expect.objectContaining({ code: "ERR_PRISM_INVALID_OPTION" }));
  });

  it("defineAnthropicModel gives a model that caches with the provider's breakpoints", async () => {
    const server = await serveForTest([textReply()]);
    const claude = defineAnthropicModel({ model: "claude-test" });
    const provider = createAnthropicMessagesProvider({ baseUrl: server.url, cache: { breakpoints: [{ location: "last_user_message" }] } });
    await createAgent({ model: claude, provider }).createSession().run("question");
    expect(server.requests[0].body.messages.at(-1).content.at(-1).cache_control).toEqual({ type: "ephemeral" });
  });
});
