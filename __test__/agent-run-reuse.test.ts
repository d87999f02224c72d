import { describe, expect, it } from "vitest";
import { createAgent, providerDone, providerToolCall, toolCallContent, type AgentEvent, type ToolDefinition } from "../index.mjs";

// Runs of one agent share what they can (the grant, the loop limits, the tool list's hash): each run
// must still see the agent's config as it is when the run starts.
const model = { provider: "p", model: "m" };
const tool = (name: string): ToolDefinition => ({ name, parameters: { type: "object" }, execute: (_args, ctx) => ({ toolCallId: ctx.toolCallId, name, value: name }) });

function callOnce(name: string) {
  return {
    id: "scripted",
    async *generate(request: { messages: unknown[] }) {
      if ((request.messages.at(-1) as { role: string }).role !== "tool") yield providerToolCall(toolCallContent("c1", name, {}));
      yield providerDone();
    },
  };
}

describe("runs of one agent reuse decisions only while the config is unchanged", () => {
  it("a tool added to config.tools between runs is granted to the next run", async () => {
    const ran: string[] = [];
    const b: ToolDefinition = { ...tool("b"), execute: (_args, ctx) => (ran.push(ctx.runId), { toolCallId: ctx.toolCallId, name: "b", value: "b" }) };
    const tools = [tool("a")];
    const agent = createAgent({ model, provider: callOnce("b"), tools });
    const first = await agent.createSession().run("x");
    expect(first.status).toBe("succeeded");
    expect(ran).toEqual([]);
    tools.push(b);
    const second = await agent.createSession().run("x");
    expect(ran).toEqual([second.runId]);
  });

  it("loop options changed in place between runs are read again", async () => {
    const config = { model, provider: callOnce("a"), tools: [tool("a")], loop: { toolConcurrency: 2 } };
    const agent = createAgent(config);
    expect((await agent.createSession().run("x")).status).toBe("succeeded");
    config.loop.toolConcurrency = 0;
    await expect(agent.createSession().run("x")).rejects.toMatchObject({ code: "invalid_run_limits", message: "loop.toolConcurrency must be an integer of at least 1" });
    config.loop.toolConcurrency = 3;
    expect((await agent.createSession().run("x")).status).toBe("succeeded");
  });

  it("a renamed tool changes the turn's tool hash; the shared hash object cannot be changed by a host", async () => {
    const a = tool("a");
    const agent = createAgent({ model, provider: callOnce("a"), tools: [a] });
    const hashes: { count: number; idsHash: string }[] = [];
    for (const rename of [false, true]) {
      if (rename) a.name = "renamed";
      const session = agent.createSession();
      const seen: AgentEvent[] = [];
      const sub = (async () => {
        for await (const e of session.subscribe()) seen.push(e);
      })();
      await session.run("x");
      await sub;
      const started = seen.find((e) => e.type === "turn_started") as any;
      hashes.push(started.metadata.tools);
      expect(() => {
        "use strict";
        started.metadata.tools.count = 99;
      }).toThrow(TypeError);
    }
    expect(hashes[0].count).toBe(1);
    expect(hashes[1].idsHash).not.toBe(hashes[0].idsHash);
  });
});

describe("what a run skips when nobody observes it is still there for whoever does", () => {
  it("agent limits changed in place between runs are read again", async () => {
    const config = { model, provider: callOnce("a"), tools: [tool("a")], limits: { maxTurns: 2 } };
    const agent = createAgent(config);
    expect((await agent.createSession().run("x")).status).toBe("succeeded");
    config.limits.maxTurns = 1;
    await expect(agent.createSession().run("x")).rejects.toMatchObject({ result: { status: "failed", limit: { limit: "maxTurns", maximum: 1 } } });
    config.limits.maxTurns = 2;
    expect((await agent.createSession().run("x")).status).toBe("succeeded");
  });

  it("a subscriber that joins during a run gets the tool events of the calls after it", async () => {
    const seen: AgentEvent[] = [];
    let session: ReturnType<ReturnType<typeof createAgent>["createSession"]>;
    const provider = {
      id: "scripted",
      async *generate(request: { messages: unknown[] }) {
        if ((request.messages.at(-1) as { role: string }).role !== "tool") {
          // Nobody observed the run until now.
          void (async () => {
            for await (const e of session.subscribe()) seen.push(e);
          })();
          yield providerToolCall(toolCallContent("c1", "a", {}));
        }
        yield providerDone();
      },
    };
    session = createAgent({ model, provider, tools: [tool("a")] }).createSession();
    await session.run("x");
    await new Promise((resolve) => setImmediate(resolve));
    const types = seen.map((e) => e.type);
    expect(types).toContain("tool_execution_started");
    expect(seen.find((e) => e.type === "tool_execution_finished")).toMatchObject({ toolName: "a", result: { toolCallId: "c1", value: "a" } });
    expect(types.at(-1)).toBe("agent_finished");
  });
});
