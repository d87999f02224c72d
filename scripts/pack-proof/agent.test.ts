// Run by vitest in the threads, forks and vmThreads pools (vmThreads loads this file in a node:vm
// context, as Jest does): an agent calls a tool through the installed package and gets its result.
import { describe, expect, it } from "vitest";
import { createAgent, createMockProvider, providerDone, providerToolCall, toolCallContent, type ToolDefinition } from "prism-tools-native";

describe("the installed package", () => {
  it("runs an agent whose provider calls a tool", async () => {
    const calls: unknown[] = [];
    const add: ToolDefinition = {
      name: "add",
      parameters: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"] },
      execute(args, context) {
        calls.push(args);
        return { toolCallId: context.toolCallId, name: "add", value: { sum: Number(args.a) + Number(args.b) } };
      },
    };
    const provider = createMockProvider([
      [providerToolCall(toolCallContent("c1", "add", { a: 2, b: 3 })), providerDone()],
      [providerDone()],
    ]);
    const session = createAgent({ model: { provider: "mock", model: "scripted" }, provider, tools: [add] }).createSession({ id: "s" });
    const result = await session.run("add 2 and 3");
    expect(result.status).toBe("succeeded");
    expect(calls).toEqual([{ a: 2, b: 3 }]);
    const toolMessages = session.messages().filter((m: any) => m.role === "tool");
    expect(toolMessages.map((m: any) => m.content[0].result)).toEqual([{ sum: 5 }]);
  });
});
