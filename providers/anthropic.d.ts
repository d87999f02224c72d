// Subpath `prism-tools-native/providers/anthropic`.
export {
  createAnthropicMessagesProvider,
  anthropicMessagesEvents,
  anthropicMessagesBody,
  toAnthropicTools,
  ANTHROPIC_API_VERSION,
  ANTHROPIC_DEFAULT_BASE_URL,
  AnthropicMessagesProviderOptions,
  AnthropicToolDefinition,
  PromptCacheBreakpoint,
  PromptCacheHints,
  defineAnthropicModel,
  mapAnthropicModel,
  listAnthropicModels,
  AnthropicModelEntry,
  ListAnthropicModelsOptions,
} from "../types/providers";
