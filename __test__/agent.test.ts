import { describe, expect, it } from "vitest";
import {
  createAgent,
  createMemoryRunLedger,
  createMockProvider,
  createToolRegistry,
  providerDone,
  providerError,
  providerTextDelta,
  providerToolCall,
  providerToolCallDelta,
  toolCallContent,
  AGENT_RUN_LIMITS,
  type ProviderEvent,
  type ProviderRequest,
  type ToolDefinition,
} from "../index.mjs";
import { failure, streamEvents } from "./helpers/agent.js";

const model = { provider: "mock", model: "demo" };

function tool(name: string, log?: string[], extra: Partial<ToolDefinition> = {}): ToolDefinition {
  return {
    name,
    description: `The ${name} tool`,
    parameters: { type: "object", properties: {} },
    execute(args, ctx) {
      log?.push(name);
      return { toolCallId: ctx.toolCallId, name, value: { name, args } };
    },
    ...extra,
  };
}

function calls(...names: string[]): ProviderEvent[] {
  return names.map((n, i) => providerToolCall(toolCallContent(`c${i + 1}`, n, {})));
}

describe("createAgent / session.run", () => {
  it("runs tool calls through dispatch and keeps the transcript in call order", async () => {
    const log: string[] = [];
    const requests: ProviderRequest[] = [];
    const provider = createMockProvider(
      [
        [providerTextDelta("Looking. "), ...calls("a", "b"), providerDone({ inputTokens: 10, outputTokens: 2 })],
        [providerTextDelta("Done."), providerDone({ inputTokens: 20, outputTokens: 3 })],
      ],
      { onRequest: (r) => void requests.push({ ...r, messages: r.messages.slice() }) },
    );
    const session = createAgent({ model, provider, tools: [tool("a", log), tool("b", log)], instructions: "Be brief." }).createSession({ id: "s1" });
    const result = await session.run("hi");
    expect(result).toMatchObject({ sessionId: "s1", status: "succeeded", text: "Done.", finishReason: "stop", usage: { inputTokens: 30, outputTokens: 5 } });
    expect(result.message).toEqual({ role: "assistant", content: [{ type: "text", text: "Done." }] });
    expect(log).toEqual(["a", "b"]);
    expect(session.messages().map((m) => m.role)).toEqual(["user", "assistant", "tool", "tool", "assistant"]);
    expect(session.messages()[1].content).toEqual([
      { type: "text", text: "Looking. " },
      toolCallContent("c1", "a", {}),
      toolCallContent("c2", "b", {}),
    ]);
    expect(session.messages().slice(2, 4).map((m: any) => m.content[0].toolCallId)).toEqual(["c1", "c2"]);
    // Tool results are `@arnilo/prism`'s rows: the value under `result` (what its serializers send).
    expect(session.messages()[2]).toEqual({ role: "tool", content: [{ type: "tool_result", toolCallId: "c1", name: "a", result: { name: "a", args: {} }, error: undefined }] });
    // The second turn sees the results. As upstream's default prompt: the text list of the turn's tools
    // (the model does not declare `capabilities.tools`), then the instructions, lead every request.
    expect(requests[0].messages[0]).toEqual({ role: "system", content: [{ type: "text", text: "Available tools:\n- a: The a tool\n- b: The b tool" }] });
    expect(requests[0].messages[1]).toEqual({ role: "system", content: [{ type: "text", text: "System instruction:\nBe brief." }] });
    expect(requests[1].messages.map((m) => m.role)).toEqual(["system", "system", "user", "assistant", "tool", "tool"]);
    expect(requests[0].model).toEqual(model);
  });

  it("a flat event list replays on every turn; a turn past a script is a clear error", async () => {
    let seen = 0;
    const flat = createMockProvider([providerTextDelta("same"), providerDone()], { onRequest: () => void seen++ });
    const agent = createAgent({ model, provider: flat });
    expect((await agent.createSession().run("1")).text).toBe("same");
    expect((await agent.createSession().run("2")).text).toBe("same");
    expect(seen).toBe(2);
    const short = createMockProvider([[...calls("a"), providerDone()]]);
    const result = await failure(createAgent({ model, provider: short, tools: [tool("a")] }).createSession().run("x"));
    expect(result.status).toBe("failed");
    expect(result.error).toMatchObject({ code: "mock_script_exhausted", message: "Mock provider mock has no scripted turn 2 (1 scripted)" });
  });

  it("malformed streamed arguments are blocked and the model corrects itself next turn", async () => {
    const log: string[] = [];
    const provider = createMockProvider([
      [providerToolCallDelta({ index: 0, id: "c1", name: "a" }), providerToolCallDelta({ index: 0, argumentsText: '{"q": ' }), providerDone()],
      [providerToolCallDelta({ index: 0, id: "c2", name: "a", argumentsText: '{"q":' }), providerToolCallDelta({ index: 0, argumentsText: ' "ok"}' }), providerDone()],
      [providerTextDelta("fixed"), providerDone()],
    ]);
    const ledger = createMemoryRunLedger();
    const session = createAgent({ model, provider, tools: [tool("a", log)], runLedger: ledger }).createSession();
    const events = await streamEvents(session, "go");
    const blocked = events.find((e) => e.type === "tool_execution_blocked") as any;
    expect(blocked).toMatchObject({ toolCallId: "c1", reason: "invalid_arguments", error: { code: "invalid_json_arguments" } });
    const tools = session.messages().filter((m) => m.role === "tool");
    expect(tools[0].content[0]).toMatchObject({ toolCallId: "c1", error: { code: "invalid_json_arguments" } });
    expect(tools[1].content[0]).toMatchObject({ toolCallId: "c2", result: { args: { q: "ok" } } });
    expect(log).toEqual(["a"]);
    expect(events.at(-1)!.type).toBe("agent_finished");
    expect(session.messages().at(-1)!.content).toEqual([{ type: "text", text: "fixed" }]);
  });

  it("provider error events and throwing providers fail the run", async () => {
    const erroring = createMockProvider([providerTextDelta("x"), providerError(Object.assign(new Error("rate limited"), { code: "rate_limit" }))]);
    const r1 = await failure(createAgent({ model, provider: erroring }).createSession().run("x"));
    expect(r1).toMatchObject({ status: "failed", finishReason: "error", error: { message: "rate limited", code: "rate_limit" } });
    const throwing = { id: "t", async *generate(): AsyncIterable<ProviderEvent> { throw new Error("socket closed"); } };
    const r2 = await failure(createAgent({ model, provider: throwing }).createSession().run("x"));
    expect(r2).toMatchObject({ status: "failed", error: { message: "socket closed" } });
  });

  it("maxToolRounds ends with turn_limit and executes nothing past it", async () => {
    const log: string[] = [];
    const provider = createMockProvider([...calls("a"), providerDone()]);
    const session = createAgent({ model, provider, tools: [tool("a", log)], limits: { maxToolRounds: 2 } }).createSession();
    const result = await session.run("loop");
    expect(result).toMatchObject({ status: "succeeded", finishReason: "turn_limit" });
    expect(log).toEqual(["a", "a"]);
    const last = session.messages().at(-1)!;
    expect(last.content[0]).toMatchObject({ error: { code: "tool_call_not_dispatched", message: "Tool call a was not dispatched: the run reached its tool round limit" } });
    // Default 8, hard cap 64.
    const log8: string[] = [];
    await createAgent({ model, provider, tools: [tool("a", log8)] }).createSession().run("x");
    expect(log8.length).toBe(8);
    // 64 rounds need 65 turns: the turn budget is raised to its hard cap.
    const log64: string[] = [];
    await createAgent({ model, provider, tools: [tool("a", log64)] }).createSession().run("x", { limits: { maxToolRounds: 64, maxTurns: 64, maxToolCalls: 256, maxProviderAttempts: 256 } }).catch(() => undefined);
    expect(log64.length).toBe(64);
    expect(AGENT_RUN_LIMITS).toMatchObject({ defaultMaxToolRounds: 8, maxToolRounds: 64 });
    // Above the hard cap, or below 1, is refused with upstream's message.
    await expect(createAgent({ model, provider }).createSession().run("x", { limits: { maxToolRounds: 1000 } })).rejects.toThrow("maxToolRounds must be a positive safe integer at most 64");
    await expect(createAgent({ model, provider }).createSession().run("x", { limits: { maxToolRounds: -1 } })).rejects.toMatchObject({ code: "invalid_run_limits" });
  });

  it("limits.maxTurns caps provider turns: the turn past it fails the run with the breach", async () => {
    let turns = 0;
    const provider = createMockProvider([...calls("a"), providerDone()], { onRequest: () => void turns++ });
    const result = await failure(createAgent({ model, provider, tools: [tool("a")] }).createSession().run("x", { limits: { maxTurns: 3 } }));
    expect(result).toMatchObject({ status: "failed", limit: { limit: "maxTurns", maximum: 3, observed: 4 }, error: { name: "RunLimitError", code: "ERR_PRISM_RUN_LIMIT" } });
    expect(turns).toBe(3);
  });
});

describe("per-run grant (toolNames)", () => {
  const seenTools = () => {
    const seen: string[][] = [];
    return { seen, onRequest: (r: ProviderRequest) => void seen.push(r.tools.map((t) => t.name)) };
  };

  it("omitted grants every tool, [] none, a list that subset; guessed calls are unknown_tool", async () => {
    const log: string[] = [];
    const { seen, onRequest } = seenTools();
    const provider = createMockProvider([[...calls("secret"), providerDone()], [providerDone()]], { onRequest });
    const session = createAgent({ model, provider, tools: [tool("echo", log), tool("secret", log)] }).createSession();
    const events = await streamEvents(session, "hi", { toolNames: ["echo"] });
    expect(seen).toEqual([["echo"], ["echo"]]);
    expect(events.filter((e) => e.type === "tool_execution_blocked").map((e: any) => `${e.name}:${e.reason}`)).toEqual(["secret:unknown_tool"]);
    expect(log).toEqual([]);
    expect(session.state().toolNames).toEqual(["echo"]);

    const all = seenTools();
    await createAgent({ model, provider: createMockProvider([providerDone()], { onRequest: all.onRequest }), tools: [tool("echo"), tool("secret")] }).createSession().run("x");
    expect(all.seen).toEqual([["echo", "secret"]]);
    const none = seenTools();
    await createAgent({ model, provider: createMockProvider([providerDone()], { onRequest: none.onRequest }), tools: [tool("echo")] }).createSession().run("x", { toolNames: [] });
    expect(none.seen).toEqual([[]]);
  });

  it("unknown names and bad toolNames fail before any provider turn", async () => {
    let turns = 0;
    const provider = createMockProvider([providerDone()], { onRequest: () => void turns++ });
    const session = createAgent({ model, provider, tools: [tool("echo")] }).createSession();
    await expect(session.run("x", { toolNames: ["echo", "nope", "gone"] })).rejects.toThrow("Unknown run tool: nope, gone");
    await expect(session.run("x", { toolNames: ["nope"] })).rejects.toMatchObject({ code: "unknown_run_tool" });
    await expect(session.run("x", { toolNames: "echo" as any })).rejects.toMatchObject({ name: "TypeError", code: "invalid_tool_names" });
    await expect(session.run("x", { toolNames: [1] as any })).rejects.toMatchObject({ code: "invalid_tool_names" });
    await expect(session.run("x", { toolNames: Array.from({ length: 1025 }, (_, i) => `t${i}`) })).rejects.toThrow(/exceeds/);
    expect(turns).toBe(0);
    expect(session.messages()).toEqual([]);
  });

  it("snapshots the grant: a tool registered mid-run is invisible", async () => {
    const registry = createToolRegistry();
    registry.register({
      name: "echo",
      execute(_a, ctx) {
        registry.register(tool("late"));
        return { toolCallId: ctx.toolCallId, name: "echo", value: "ok" };
      },
    });
    const { seen, onRequest } = seenTools();
    const provider = createMockProvider([[...calls("echo"), providerDone()], [...calls("late"), providerDone()], [providerDone()]], { onRequest });
    const events = await streamEvents(createAgent({ model, provider, tools: registry }).createSession(), "x");
    expect(seen).toEqual([["echo"], ["echo"], ["echo"]]);
    expect(events.filter((e) => e.type === "tool_execution_blocked").map((e: any) => e.reason)).toEqual(["unknown_tool"]);
    expect(registry.get("late")).toBeDefined();
  });

  it("resume from state() intersects with the current registry and never widens", async () => {
    const registry = createToolRegistry([tool("echo"), tool("secret")]);
    const first = createAgent({ model, provider: createMockProvider([providerDone()]), tools: registry }).createSession({ id: "s" });
    await first.run("x", { toolNames: ["echo", "secret"] });
    const state = JSON.parse(JSON.stringify(first.state()));
    expect(state.toolNames).toEqual(["echo", "secret"]);
    const current = createToolRegistry([tool("echo"), tool("extra")]);
    const { seen, onRequest } = seenTools();
    const resumed = createAgent({ model, provider: createMockProvider([providerDone()], { onRequest }), tools: current }).createSession({ id: "s", state });
    await resumed.run("again");
    await resumed.run("again", { toolNames: ["echo", "extra"] });
    expect(seen).toEqual([["echo"], ["echo"]]);
  });

  it("RunOptions.validate overrides the agent's validator", async () => {
    const log: string[] = [];
    const provider = createMockProvider([[...calls("a"), providerDone()], [providerDone()]]);
    const agent = createAgent({ model, provider, tools: [tool("a", log)], validator: () => "agent says no" });
    const e1 = await streamEvents(agent.createSession(), "x");
    expect(e1.find((e) => e.type === "tool_execution_blocked")).toMatchObject({ reason: "validation_failed", error: { message: "agent says no" } });
    const provider2 = createMockProvider([[...calls("a"), providerDone()], [providerDone()]]);
    const agent2 = createAgent({ model, provider: provider2, tools: [tool("a", log)], validator: () => "agent says no" });
    const e2 = await streamEvents(agent2.createSession(), "x", { validate: () => "run says no" });
    expect(e2.find((e) => e.type === "tool_execution_blocked")).toMatchObject({ error: { message: "run says no" } });
    const provider3 = createMockProvider([[...calls("a"), providerDone()], [providerDone()]]);
    await createAgent({ model, provider: provider3, tools: [tool("a", log)], validator: () => "no" }).createSession().run("x", { validate: () => undefined });
    expect(log).toEqual(["a"]);
  });
});
