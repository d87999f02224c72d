'use strict'
// The package entry (CommonJS). It re-exports the napi-generated loader (`binding.js`) and the few
// small JS pieces the language requires (Error subclasses, the await driver). No decisions live here.
const native = require('./binding.js')
const glue = require('./lib/glue.js')
const { drive } = require('./lib/driver.js')
const errors = require('./lib/errors.js')
const middleware = require('./lib/middleware.js')
const extensions = require('./lib/extensions.js')
const effects = require('./lib/effects.js')
const validation = require('./lib/validation.js')
const argumentsText = require('./lib/arguments-text.js')

native.bindGlue({
  ...glue,
  guardrailError: (message, record) => new errors.GuardrailError(message, { record }),
})

// ----- dispatch ---------------------------------------------------------------------------------

const { dispatchStart, dispatchResume, dispatcherCreate, dispatcherStart } = native

// A plain options object holding exactly { call, registry, context } sets no hook: the native side
// then skips reading the options' keys. Anything else (more keys, other prototypes) is read in full.
function bareRegistry(options) {
  return options !== null &&
    typeof options === 'object' &&
    Object.getPrototypeOf(options) === Object.prototype &&
    Reflect.ownKeys(options).length === 3 &&
    'call' in options &&
    'context' in options
    ? options.registry
    : undefined
}

// The call's fields and the context's identity and signal are read here, where a property read
// costs about a nanosecond, and handed to the native machine as arguments.
function dispatchToolCall(options) {
  let out
  try {
    const call = options?.call
    const context = options?.context
    out = dispatchStart(
      options, call, context,
      call?.name, call?.id, call?.arguments, call?.argumentsError, call?.authority,
      context?.identity, context?.signal,
      bareRegistry(options),
    )
  } catch (e) {
    return Promise.reject(e)
  }
  return drive(out, dispatchResume)
}

function createToolDispatcher(options) {
  const bound = dispatcherCreate(options)
  return {
    dispatch(call, context) {
      let out
      try {
        out = dispatcherStart(
          bound, call, context,
          call?.name, call?.id, call?.arguments, call?.argumentsError, call?.authority,
          context?.identity, context?.signal,
        )
      } catch (e) {
        return Promise.reject(e)
      }
      return drive(out, dispatchResume)
    },
  }
}

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
  createSecretRedactor: native.createSecretRedactor,
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
  const redaction = require('./lib/agent-redaction.js')
  const { createAgent, createAgentSession } = require('./lib/agent.js')({
    createToolDispatcher,
    createToolRegistry: native.createToolRegistry,
    errorToErrorInfo: native.errorToErrorInfo,
    createSecretRedactor: native.createSecretRedactor,
    redactWith: native.redactRunLedgerRecord,
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
    createAgentSession,
    createMockProvider: provider.createMockProvider,
    providerTextDelta: provider.providerTextDelta,
    providerThinkingDelta: provider.providerThinkingDelta,
    providerContentDelta: provider.providerContentDelta,
    providerToolCall: provider.providerToolCall,
    providerToolCallDelta: provider.providerToolCallDelta,
    providerUsage: provider.providerUsage,
    providerDone: provider.providerDone,
    providerError: provider.providerError,
    toolCallContent: provider.toolCallContent,
    redactAgentEvent: redaction.redactAgentEvent,
    redactProviderRequest: redaction.redactProviderRequest,
    redactMessage: redaction.redactMessage,
    redactSessionEntry: redaction.redactSessionEntry,
    AGENT_RUN_LIMITS: Object.freeze(JSON.parse(native.runLimitsTable())),
  })
}
// End of the agent tool loop.
