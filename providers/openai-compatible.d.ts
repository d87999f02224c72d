// Subpath `prism-tools-native/providers/openai-compatible`.
export { createOpenAICompatibleProvider, openAIChatEvents, buildOpenAIChatBody, OpenAICompatibleProviderOptions, ProviderRetryOptions, CredentialValueSource } from "../types/providers";
