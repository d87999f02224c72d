// Type-level usage of the framework adapters (checked by `tsc -p __test__/tsconfig.json`).
import { generateText, stepCountIs, tool, type ToolSet } from "ai";
import { Agent, type FunctionTool } from "@openai/agents";
import * as z from "zod";
import { createMemoryCheckpointStore, createMemoryToolEffectStore } from "prism-tools-native";
import { aiSdkPrepareStep, aiSdkToolApproval, createApprovalGate, localIdentity, toAiSdkTools, fromAiSdkTools, type ApprovalGate } from "prism-tools-native/ai-sdk";
import { toOpenAIAgentsTools, fromOpenAIAgentsTools, contentToolCallId } from "prism-tools-native/openai-agents";

const defs = [{ name: "echo", parameters: { type: "object", properties: { text: { type: "string" } } }, execute: (args: { text?: string }) => args.text ?? "" }];
const gate: ApprovalGate = createApprovalGate({ checkpoints: createMemoryCheckpointStore(), runId: "r1", needsApproval: { echo: true } });
const set: ToolSet = toAiSdkTools(defs, { secrets: ["s"], effectStore: createMemoryToolEffectStore(), identity: localIdentity(), approval: gate, callIds: "content", context: (o) => ({ sessionId: o.toolCallId }) });
const fromSet: ToolSet = toAiSdkTools({ w: tool({ inputSchema: z.object({ city: z.string() }), execute: async ({ city }) => city }) });
export async function aiSdk(model: Parameters<typeof generateText>[0]["model"]) {
  return generateText({ model, tools: set, prepareStep: aiSdkPrepareStep(set, { topK: 4 }), toolApproval: aiSdkToolApproval(set), prompt: "hi", stopWhen: stepCountIs(3) });
}
export const defsBack = fromAiSdkTools(fromSet).map((d) => d.name);
const agentTools: FunctionTool<any, any, any>[] = toOpenAIAgentsTools(defs, { context: (rc) => ({ runId: String((rc.context as { id?: string }).id) }) });
export const agent = new Agent({ name: "a", tools: [...agentTools, ...toOpenAIAgentsTools(fromOpenAIAgentsTools(agentTools))] });
export const id: string = contentToolCallId("echo", { text: "x" });
export const decided = gate.decide([{ toolCallId: "c1", outcome: "allow_once" }]);
