// Subpath `prism-tools-native/providers/openai`.
export { serializeOpenAITool, toOpenAITools, serializeOpenAIChatMessage, mapOpenAIChatUsage, OpenAIToolDefinition, StrictSchemaDrop } from "../types/providers";
