// Lists cross the boundary as lists: a string holding NUL is one item, never two. These pin that for
// the plans dispatch compiles from `secrets` and for the run rules over a tool list.
import { describe, expect, it } from "vitest";
import { createAgent, createToolRegistry, dispatchToolCall, providerDone, providerToolCall, toolCallContent, type AgentEvent, type ToolDefinition } from "../index.mjs";

describe("a list item holding NUL stays one item", () => {
  it("dispatch: the secrets [\"x\\0y\"] and [\"x\", \"y\"] compile to different plans", async () => {
    const registry = createToolRegistry();
    registry.register({ name: "say", description: "says", parameters: { type: "object" }, execute: () => ({ toolCallId: "c1", name: "say", content: "x and y" }) });
    const run = (secrets: string[]) => dispatchToolCall({ registry, secrets, call: { id: "c1", name: "say", arguments: {} } });
    // The first list holds one secret that never occurs in the result.
    expect((await run(["x\u0000y"])).content).toBe("x and y");
    // The second holds two, and both are redacted: it must not reuse the first list's plan.
    expect((await run(["x", "y"])).content).toBe("[REDACTED] and [REDACTED]");
  });
});

describe("a tool name holding NUL does not shift the run's tool list", () => {
  const model = { provider: "p", model: "m" };
  const tool = (name: string, ran: string[]): ToolDefinition => ({
    name,
    parameters: { type: "object" },
    execute: (_args, ctx) => (ran.push(name), { toolCallId: ctx.toolCallId, name, value: name }),
  });
  // Calls `name` once, and records the tool names of each request.
  function callOnce(name: string, seen: string[][]) {
    return {
      id: "scripted",
      async *generate(request: { messages: unknown[]; tools?: { name: string }[] }) {
        seen.push((request.tools ?? []).map((t) => t.name));
        if ((request.messages.at(-1) as { role: string }).role !== "tool") yield providerToolCall(toolCallContent("c1", name, {}));
        yield providerDone();
      },
    };
  }

  it("a run granted `c` beside a tool named \"a\\0b\" sees and runs `c` alone", async () => {
    const ran: string[] = [];
    const seen: string[][] = [];
    const agent = createAgent({ model, provider: callOnce("c", seen), tools: [tool("a\u0000b", ran), tool("c", ran)] });
    const result = await agent.createSession().run("x", { toolNames: ["c"] });
    expect(result.status).toBe("succeeded");
    expect(ran).toEqual(["c"]);
    expect(seen[0]).toEqual(["c"]);
  });

  it("the whole grant lists \"a\\0b\" as one tool, and its hash differs from the names \"a\", \"b\"", async () => {
    const hashes: unknown[] = [];
    for (const names of [["a\u0000b", "c"], ["a", "b", "c"]]) {
      const seen: string[][] = [];
      const ran: string[] = [];
      const agent = createAgent({ model, provider: callOnce("c", seen), tools: names.map((n) => tool(n, ran)) });
      const session = agent.createSession();
      const events: AgentEvent[] = [];
      const sub = (async () => {
        for await (const e of session.subscribe()) events.push(e);
      })();
      expect((await session.run("x")).status).toBe("succeeded");
      await sub;
      expect(seen[0]).toEqual(names);
      const started = events.find((e) => e.type === "turn_started") as { metadata: { tools: { count: number; idsHash: string } } } | undefined;
      expect(started?.metadata.tools.count).toBe(names.length);
      hashes.push(started?.metadata.tools.idsHash);
    }
    expect(hashes[0]).not.toBe(hashes[1]);
  });
});
