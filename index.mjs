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
  ContributionRegistry,
  createStaticPermissionPolicy,
  createStaticTrustPolicy,
  PermissionDeniedError,
  TrustDeniedError,
  GuardrailError,

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
  createMemoryToolEffectStore,
  createSqliteToolEffectStore,
  createMemoryRunLedger,
  createSqliteRunLedger,
  // end of recoverable tool effects and run ledgers
} = cjs
export default cjs
