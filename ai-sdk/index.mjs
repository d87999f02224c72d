// Subpath `prism-tools-native/ai-sdk` (ES modules).
import cjs from './index.js'
export const { toAiSdkTools, fromAiSdkTools, aiSdkPrepareStep, aiSdkToolApproval, createApprovalGate, localIdentity, isLocalIdentity, contentToolCallId, ToolCallError } = cjs
export default cjs
