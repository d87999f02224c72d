import { describe, expect, it } from "vitest";
import { createAgent, providerDone, providerTextDelta, providerToolCall, toolCallContent, type ProviderRequest, type ToolDefinition } from "../index.mjs";

// Upstream's default prompt lists the turn's tools as text for a model that does not declare
// `capabilities.tools`: `@arnilo/prism` hosts that run text-only models rely on that message.
const tool = (name: string, description?: string): ToolDefinition => ({
  name,
  ...(description === undefined ? {} : { description }),
  parameters: { type: "object", properties: {} },
  execute: (_args, ctx) => ({ toolCallId: ctx.toolCallId, name, value: name }),
});

function recording(script: (request: ProviderRequest) => unknown[]) {
  const requests: ProviderRequest[] = [];
  const provider = {
    id: "rec",
    async *generate(request: ProviderRequest) {
      requests.push({ ...request, messages: request.messages.slice() });
      yield* script(request) as any[];
    },
  };
  return { provider, requests };
}

const answer = () => [providerTextDelta("ok"), providerDone()];
const texts = (request: ProviderRequest) => request.messages.filter((m) => m.role === "system").map((m: any) => m.content[0].text);

describe("the Available tools message", () => {
  it("leads the request for a model without tool capability, before the instructions; an empty description is left out", async () => {
    const { provider, requests } = recording(answer);
    const agent = createAgent({ model: { provider: "p", model: "m" }, provider, tools: [tool("a", "Reads a"), tool("b", ""), tool("c")], instructions: "Be brief." });
    await agent.createSession().run("go");
    expect(requests[0].messages.map((m) => m.role)).toEqual(["system", "system", "user"]);
    expect(texts(requests[0])).toEqual(["Available tools:\n- a: Reads a\n- b\n- c", "System instruction:\nBe brief."]);
  });

  it("is left out when the model declares capabilities.tools, and when no tool is disclosed", async () => {
    const capable = recording(answer);
    await createAgent({ model: { provider: "p", model: "m", capabilities: { tools: true } }, provider: capable.provider, tools: [tool("a", "x")] }).createSession().run("go");
    expect(capable.requests[0].messages.map((m) => m.role)).toEqual(["user"]);
    const none = recording(answer);
    await createAgent({ model: { provider: "p", model: "m" }, provider: none.provider }).createSession().run("go");
    expect(none.requests[0].messages.map((m) => m.role)).toEqual(["user"]);
    // `capabilities.tools: false` (or any value but `true`) keeps the list, as upstream.
    const notCapable = recording(answer);
    await createAgent({ model: { provider: "p", model: "m", capabilities: { tools: false } }, provider: notCapable.provider, tools: [tool("a", "x")] }).createSession().run("go");
    expect(texts(notCapable.requests[0])).toEqual(["Available tools:\n- a: x"]);
  });

  it("lists exactly the tools the turn discloses (narrowing), on every turn", async () => {
    const { provider, requests } = recording((request) =>
      request.messages.at(-1)!.role === "tool" ? answer() : [providerToolCall(toolCallContent("c1", "b", {})), providerDone()],
    );
    const agent = createAgent({
      model: { provider: "p", model: "m" },
      provider,
      tools: [tool("a", "A"), tool("b", "B"), tool("c", "C")],
      toolNarrowing: ({ toolIds }: { toolIds: string[] }) => toolIds.filter((id) => id !== "a"),
    } as any);
    const result = await agent.createSession().run("go");
    expect(result.status).toBe("succeeded");
    expect(requests).toHaveLength(2);
    for (const request of requests) {
      expect(request.tools.map((t) => t.name)).toEqual(["b", "c"]);
      expect(texts(request)).toEqual(["Available tools:\n- b: B\n- c: C"]);
    }
  });

  it("follows a description changed between runs of one agent", async () => {
    const { provider, requests } = recording(answer);
    const t = tool("a", "first");
    const agent = createAgent({ model: { provider: "p", model: "m" }, provider, tools: [t] });
    await agent.createSession().run("go");
    t.description = "second";
    await agent.createSession().run("go");
    expect(requests.map((r) => texts(r)[0])).toEqual(["Available tools:\n- a: first", "Available tools:\n- a: second"]);
  });

  it("goes through the redactor with the rest of the request", async () => {
    const { provider, requests } = recording(answer);
    const agent = createAgent({ model: { provider: "p", model: "m" }, provider, tools: [tool("a", "uses key sk-live-123456")], secrets: ["sk-live-123456"] } as any);
    await agent.createSession().run("go");
    expect(JSON.stringify(requests[0].messages)).not.toContain("sk-live-123456");
    expect(texts(requests[0])[0]).toMatch(/^Available tools:\n- a: uses key /);
  });
});
