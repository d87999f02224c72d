'use strict'
// The package entry (CommonJS). It re-exports the napi-generated loader (`binding.js`) and the few
// small JS pieces the language requires (Error subclasses, the dispatch command loop). No decisions live here.
const native = require('./binding.js')
const errors = require('./lib/errors.js')
const middleware = require('./lib/middleware.js')
const extensions = require('./lib/extensions.js')
const effects = require('./lib/effects.js')
const validation = require('./lib/validation.js')
const argumentsText = require('./lib/arguments-text.js')

// ----- dispatch: the command loop of the native machine (lib/dispatch.js) ---------------------

const { dispatchToolCall, createToolDispatcher, createSecretRedactor } = require('./lib/dispatch.js')(native, errors)

module.exports = {
  nativeVersion: native.nativeVersion,
  // registry and filters
  createToolRegistry: native.createToolRegistry,
  filterTools: native.filterTools,
  // dispatch
  dispatchToolCall,
  createToolDispatcher,
  // redaction
  redactSecrets: native.redactSecrets,
  createSecretRedactor,
  errorToErrorInfo: native.errorToErrorInfo,
  redactRunLedgerRecord: native.redactRunLedgerRecord,
  // middleware, extensions, policies, policy errors
  createMiddlewareRegistry: middleware.createMiddlewareRegistry,
  createExtensionKernel: extensions.createExtensionKernel,
  createExtensionEventBus: extensions.createExtensionEventBus,
  createContributionRegistries: native.createContributionRegistries,
  ContributionRegistry: native.ContributionRegistry,
  createStaticPermissionPolicy: native.createStaticPermissionPolicy,
  createStaticTrustPolicy: native.createStaticTrustPolicy,
  PermissionDeniedError: errors.PermissionDeniedError,
  TrustDeniedError: errors.TrustDeniedError,
  GuardrailError: errors.GuardrailError,
  ProviderTransportError: errors.ProviderTransportError,
  AgentRunError: errors.AgentRunError,

  // Validation (SPEC.md section 6) and provider argument text — docs/validation.md
  createToolParameterValidator: validation.createToolParameterValidator,
  createJsonSchemaArgumentValidator: validation.createJsonSchemaArgumentValidator,
  createJsonSchemaToolArgumentValidator: validation.createJsonSchemaToolArgumentValidator,
  toolCallFromArgumentsText: argumentsText.toolCallFromArgumentsText,
  reconstructToolCallDeltas: argumentsText.reconstructToolCallDeltas,

  // Recoverable tool effects and run ledgers (types/effects.d.ts, types/ledger.d.ts).
  ToolEffectError: effects.ToolEffectError,
  IdentityError: effects.IdentityError,
  canonicalToolEffectJson: native.canonicalToolEffectJson,
  toolEffectArgumentsHash: native.toolEffectArgumentsHash,
  deriveToolEffectKey: native.deriveToolEffectKey,
  resolveToolEffectDeclaration: native.resolveToolEffectDeclaration,
  isAgentIdentityActive: native.isAgentIdentityActive,
  identityMatchesOwnership: native.identityMatchesOwnership,
  assertIdentityActive: native.assertIdentityActive,
  assertIdentityMatchesOwnership: native.assertIdentityMatchesOwnership,
  createMemoryToolEffectStore: native.createMemoryToolEffectStore,
  createSqliteToolEffectStore: native.createSqliteToolEffectStore,
  createMemoryRunLedger: native.createMemoryRunLedger,
  createSqliteRunLedger: native.createSqliteRunLedger,
  // end of recoverable tool effects and run ledgers

  // Tool search: BM25-lite index, the generated search_tools tool, fail-closed disclosure.
  createToolSearchIndex: native.createToolSearchIndex,
  ToolSearchIndex: native.ToolSearchIndex,
  createSearchToolsTool: native.createSearchToolsTool,
  selectDisclosedTools: native.selectDisclosedTools,
  activateToolNames: native.activateToolNames,
  SEARCH_TOOLS_NAME: native.SEARCH_TOOLS_NAME,
  TOOL_SEARCH_LIMITS: native.toolSearchLimits(),
  // End of tool search.
}

// ----- Agent tool loop: createAgent / session.run, the provider seam and the mock provider ------
// (types/agent.d.ts, docs/agent.md)
{
  const provider = require('./lib/provider.js')
  const { createAgent } = require('./lib/agent.js')({
    createToolDispatcher,
    createToolRegistry: native.createToolRegistry,
    errorToErrorInfo: native.errorToErrorInfo,
    reconstructToolCallDeltas: argumentsText.reconstructToolCallDeltas,
    search: {
      createToolSearchIndex: native.createToolSearchIndex,
      createSearchToolsTool: native.createSearchToolsTool,
      selectDisclosedTools: native.selectDisclosedTools,
      activateToolNames: native.activateToolNames,
      SEARCH_TOOLS_NAME: native.SEARCH_TOOLS_NAME,
    },
  })
  Object.assign(module.exports, {
    createAgent,
    createMockProvider: provider.createMockProvider,
    providerTextDelta: provider.providerTextDelta,
    providerToolCall: provider.providerToolCall,
    providerToolCallDelta: provider.providerToolCallDelta,
    providerUsage: provider.providerUsage,
    providerDone: provider.providerDone,
    providerError: provider.providerError,
    toolCallContent: provider.toolCallContent,
    AGENT_RUN_LIMITS: Object.freeze(JSON.parse(native.runLimitsTable())),
  })
}
// End of the agent tool loop.
