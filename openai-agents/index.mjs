// Subpath `prism-tools-native/openai-agents` (ES modules).
import cjs from './index.js'
export const { toOpenAIAgentsTools, fromOpenAIAgentsTools, openAIAgentsToolFilter, createApprovalGate, localIdentity, isLocalIdentity, contentToolCallId, ToolCallError } = cjs
export default cjs
