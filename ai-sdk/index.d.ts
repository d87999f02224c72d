// Subpath `prism-tools-native/ai-sdk` (docs/ai-sdk.md).
export { toAiSdkTools, fromAiSdkTools, aiSdkPrepareStep, aiSdkToolApproval, createApprovalGate, localIdentity, isLocalIdentity, contentToolCallId, ToolCallError } from "../types/adapters";
export type { AdapterOptions, AiSdkExecutionOptions, AiSdkPrepareStepOptions, ApprovalGate, ApprovalGateOptions, GateCall, GateDecision, GateOutcome, GatePending } from "../types/adapters";
