// The package entry (ES modules): the same objects as the CommonJS entry, as named exports.
import cjs from './index.js'

export const {
  nativeVersion,
  // registry and filters
  createToolRegistry,
  filterTools,
  // dispatch
  dispatchToolCall,
  createToolDispatcher,
  // redaction
  redactSecrets,
  createSecretRedactor,
  errorToErrorInfo,
  redactRunLedgerRecord,
  // middleware, extensions, policies, policy errors
  createMiddlewareRegistry,
  createExtensionKernel,
  createExtensionEventBus,
  createContributionRegistries,
  createContributionRegistry,
  registerDiscoveredContributions,
  ContributionRegistry,
  createStaticPermissionPolicy,
  createStaticTrustPolicy,
  assertPermission,
  assertTrusted,
  PermissionDeniedError,
  TrustDeniedError,
  GuardrailError,
  runGuardrails,
  assertGuardrailsAllowed,
  MAX_GUARDRAIL_CONCURRENCY,
  ProviderTransportError,
  AgentRunError,

  // Validation and provider argument text
  createToolParameterValidator,
  createJsonSchemaArgumentValidator,
  createJsonSchemaToolArgumentValidator,
  toolCallFromArgumentsText,
  reconstructToolCallDeltas,

  // Recoverable tool effects and run ledgers.
  ToolEffectError,
  IdentityError,
  canonicalToolEffectJson,
  toolEffectArgumentsHash,
  deriveToolEffectKey,
  resolveToolEffectDeclaration,
  isAgentIdentityActive,
  identityMatchesOwnership,
  assertIdentityActive,
  assertIdentityMatchesOwnership,
  DEFAULT_IDENTITY_LIMITS,
  HARD_IDENTITY_LIMITS,
  resolveIdentityLimits,
  ownershipFromIdentity,
  narrowIdentity,
  assertIdentityPropagation,
  resolveRunIdentity,
  identityTelemetryAttributes,
  createMemoryToolEffectStore,
  createSqliteToolEffectStore,
  createMemoryRunLedger,
  createSqliteRunLedger,
  createBatchedRunLedger,
  isFlushableRunLedger,
  DEFAULT_LEDGER_BATCH_ENTRIES,
  HARD_LEDGER_BATCH_ENTRIES,
  DEFAULT_LEDGER_BATCH_BYTES,
  HARD_LEDGER_BATCH_BYTES,
  DEFAULT_LEDGER_BATCH_DELAY_MS,
  HARD_LEDGER_BATCH_DELAY_MS,
  // end of recoverable tool effects and run ledgers

  // Tool search: BM25-lite index, the generated search_tools tool, fail-closed disclosure.
  createToolSearchIndex,
  ToolSearchIndex,
  createSearchToolsTool,
  selectDisclosedTools,
  activateToolNames,
  SEARCH_TOOLS_NAME,
  TOOL_SEARCH_LIMITS,
  // End of tool search.

  // Agent tool loop: createAgent / session.run, the provider seam and the mock provider.
  createAgent,
  createAgentSession,
  createMockProvider,
  providerTextDelta,
  providerThinkingDelta,
  providerContentDelta,
  providerToolCall,
  providerToolCallDelta,
  providerUsage,
  providerDone,
  providerError,
  toolCallContent,
  redactAgentEvent,
  redactProviderRequest,
  redactMessage,
  redactSessionEntry,
  AGENT_RUN_LIMITS,
  // End of the agent tool loop.
} = cjs
export default cjs
