// Compiled (not run) under moduleResolution node16, nodenext and bundler, strict: the main exports and
// a subpath export type-check for a user's ES module.
import {
  createAgent,
  createMockProvider,
  createToolRegistry,
  dispatchToolCall,
  providerDone,
  providerToolCall,
  toolCallContent,
  type ToolDefinition,
  type ToolResult,
} from "prism-tools-native";
import { createJsonSchemaArgumentValidator } from "prism-tools-native/validation/json-schema";

const add: ToolDefinition = {
  name: "add",
  parameters: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"] },
  execute(args, context) {
    return { toolCallId: context.toolCallId, name: "add", value: { sum: Number(args.a) + Number(args.b) } };
  },
};

export async function run(): Promise<string> {
  const result: ToolResult = await dispatchToolCall({
    call: toolCallContent("c1", "add", { a: 1, b: 2 }),
    registry: createToolRegistry([add]),
    context: { sessionId: "s", runId: "r", toolCallId: "c1" },
  });
  const provider = createMockProvider([[providerToolCall(toolCallContent("c2", "add", { a: 2, b: 3 })), providerDone()], [providerDone()]]);
  const session = createAgent({ model: { provider: "mock", model: "scripted" }, provider, tools: [add] }).createSession();
  const out = await session.run("add");
  const validator = createJsonSchemaArgumentValidator();
  return `${result.name} ${out.status} ${typeof validator.validate}`;
}
