// Subpath `prism-tools-native/providers/anthropic` (ES modules).
import cjs from './anthropic.js'
export const { createAnthropicMessagesProvider, anthropicMessagesEvents, anthropicMessagesBody, toAnthropicTools, ANTHROPIC_API_VERSION, ANTHROPIC_DEFAULT_BASE_URL, defineAnthropicModel, mapAnthropicModel, listAnthropicModels } = cjs
export default cjs
