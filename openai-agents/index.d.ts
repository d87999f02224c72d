// Subpath `prism-tools-native/openai-agents` (docs/openai-agents.md).
export { toOpenAIAgentsTools, fromOpenAIAgentsTools, openAIAgentsToolFilter, createApprovalGate, localIdentity, isLocalIdentity, contentToolCallId, ToolCallError } from "../types/adapters";
export type { AdapterOptions, ApprovalGate, ApprovalGateOptions, GateCall, GateDecision, GateOutcome, GatePending } from "../types/adapters";
