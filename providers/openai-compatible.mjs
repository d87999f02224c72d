// Subpath `prism-tools-native/providers/openai-compatible` (ES modules).
import cjs from './openai-compatible.js'
export const { createOpenAICompatibleProvider, openAIChatEvents, buildOpenAIChatBody } = cjs
export default cjs
