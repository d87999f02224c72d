// Subpath `prism-tools-native/providers/openai` (ES modules).
import cjs from './openai.js'
export const { serializeOpenAITool, toOpenAITools, serializeOpenAIChatMessage, mapOpenAIChatUsage } = cjs
export default cjs
