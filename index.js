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
const registry = require('./lib/registry.js')
const contributions = require('./lib/contributions.js')
const ledger = require('./lib/ledger.js')
const policy = require('./lib/policy.js')
const identity = require('./lib/identity.js')
const guardrails = require('./lib/guardrails.js')
const toolSearch = require('./lib/search.js')

// ----- dispatch: the command loop of the native machine (lib/dispatch.js) ---------------------

const { dispatchToolCall, createToolDispatcher, createSecretRedactor } = require('./lib/dispatch.js')

module.exports = {
  nativeVersion: native.nativeVersion,
  // registry and filters
  createToolRegistry: registry.createToolRegistry,
  filterTools: registry.filterTools,
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
  createContributionRegistries: contributions.createContributionRegistries,
  createContributionRegistry: contributions.createContributionRegistry,
  registerDiscoveredContributions: contributions.registerDiscoveredContributions,
  ContributionRegistry: contributions.ContributionRegistry,
  createStaticPermissionPolicy: native.createStaticPermissionPolicy,
  createStaticTrustPolicy: native.createStaticTrustPolicy,
  assertPermission: policy.assertPermission,
  assertTrusted: policy.assertTrusted,
  PermissionDeniedError: errors.PermissionDeniedError,
  TrustDeniedError: errors.TrustDeniedError,
  GuardrailError: errors.GuardrailError,
  runGuardrails: guardrails.runGuardrails,
  assertGuardrailsAllowed: guardrails.assertGuardrailsAllowed,
  MAX_GUARDRAIL_CONCURRENCY: guardrails.MAX_GUARDRAIL_CONCURRENCY,
  ProviderTransportError: errors.ProviderTransportError,
  AgentRunError: errors.AgentRunError,

  // Validation (docs/spec.md section 6) and provider argument text — docs/validation.md
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
  // identity helpers (types/policy.d.ts): all of lib/identity.js is public
  ...identity,
  createMemoryToolEffectStore: effects.createMemoryToolEffectStore,
  createSqliteToolEffectStore: effects.createSqliteToolEffectStore,
  createMemoryRunLedger: ledger.createMemoryRunLedger,
  createSqliteRunLedger: ledger.createSqliteRunLedger,
  createBatchedRunLedger: ledger.createBatchedRunLedger,
  isFlushableRunLedger: ledger.isFlushableRunLedger,
  DEFAULT_LEDGER_BATCH_ENTRIES: ledger.DEFAULT_LEDGER_BATCH_ENTRIES,
  HARD_LEDGER_BATCH_ENTRIES: ledger.HARD_LEDGER_BATCH_ENTRIES,
  DEFAULT_LEDGER_BATCH_BYTES: ledger.DEFAULT_LEDGER_BATCH_BYTES,
  HARD_LEDGER_BATCH_BYTES: ledger.HARD_LEDGER_BATCH_BYTES,
  DEFAULT_LEDGER_BATCH_DELAY_MS: ledger.DEFAULT_LEDGER_BATCH_DELAY_MS,
  HARD_LEDGER_BATCH_DELAY_MS: ledger.HARD_LEDGER_BATCH_DELAY_MS,
  // end of recoverable tool effects and run ledgers

  // Tool search: BM25-lite index, the generated search_tools tool, fail-closed disclosure.
  createToolSearchIndex: toolSearch.createToolSearchIndex,
  ToolSearchIndex: native.ToolSearchIndex,
  createSearchToolsTool: toolSearch.createSearchToolsTool,
  selectDisclosedTools: toolSearch.selectDisclosedTools,
  activateToolNames: native.activateToolNames,
  SEARCH_TOOLS_NAME: native.SEARCH_TOOLS_NAME,
  TOOL_SEARCH_LIMITS: native.toolSearchLimits(),
  // End of tool search.
}

// ----- Agent tool loop: createAgent / session.run, the provider seam and the mock provider ------
// (types/agent.d.ts, docs/agent.md)
{
  const redaction = require('./lib/agent-redaction.js')
  const retryApi = require('./lib/retry.js')
  const { createAgent, createAgentSession } = require('./lib/agent.js')({
    createToolDispatcher,
    createToolRegistry: registry.createToolRegistry,
    errorToErrorInfo: native.errorToErrorInfo,
    createSecretRedactor: native.createSecretRedactor,
    redactWith: native.redactRunLedgerRecord,
    reconstructToolCallDeltas: argumentsText.reconstructToolCallDeltas,
    search: {
      createToolSearchIndex: toolSearch.createToolSearchIndex,
      createSearchToolsTool: toolSearch.createSearchToolsTool,
      selectDisclosedTools: toolSearch.selectDisclosedTools,
      activateToolNames: native.activateToolNames,
      SEARCH_TOOLS_NAME: native.SEARCH_TOOLS_NAME,
    },
  })
  Object.assign(module.exports, {
    createAgent,
    createAgentSession,
    // The mock provider and the provider event builders: all of lib/provider.js is public.
    ...require('./lib/provider.js'),
    // Provider-turn retry (lib/retry.js, docs/agent.md "Retry")
    createDefaultRetryPolicy: retryApi.createDefaultRetryPolicy,
    isTransientErrorInfo: retryApi.isTransientErrorInfo,
    waitForRetry: retryApi.waitForRetry,
    redactAgentEvent: redaction.redactAgentEvent,
    redactProviderRequest: redaction.redactProviderRequest,
    redactMessage: redaction.redactMessage,
    redactSessionEntry: redaction.redactSessionEntry,
    AGENT_RUN_LIMITS: Object.freeze(JSON.parse(native.runLimitsTable())),
  })
}
// Run limits, tool result folding and loop strategies, with `@arnilo/prism`'s names
// (types/agent.d.ts; docs/agent.md "The run budget", "Tool result folding", "Custom loop strategies").
{
  const runLimits = require('./lib/run-limits.js')
  const loop = require('./lib/agent-loop.js')
  Object.assign(module.exports, {
    DEFAULT_RUN_LIMITS: runLimits.DEFAULT_RUN_LIMITS,
    HARD_RUN_LIMITS: runLimits.HARD_RUN_LIMITS,
    HARD_MAX_RUN_COST: runLimits.HARD_MAX_RUN_COST,
    RunLimitError: runLimits.RunLimitError,
    RunLimitTracker: runLimits.RunLimitTracker,
    resolveRunLimits: runLimits.resolveRunLimits,
    createRunLimitTracker: runLimits.createRunLimitTracker,
    // Tool result folding: all of lib/tool-result-fold.js is public.
    ...require('./lib/tool-result-fold.js'),
    AgentLoopStateError: loop.AgentLoopStateError,
  })
}
// End of the agent tool loop.

// ----- Human approval and durable runs: runState, resumeAgentRun, checkpoint stores ------------
// (types/approval.d.ts, docs/agent.md "Approval and durable runs")
{
  const approval = require('./lib/approval.js')
  Object.assign(module.exports, {
    resumeAgentRun: approval.resumeAgentRun,
    resumeAgentRunStream: approval.resumeAgentRunStream,
    agentFingerprint: approval.agentFingerprint,
    AgentDecisionError: approval.AgentDecisionError,
    AgentRunStateError: approval.AgentRunStateError,
    CheckpointConflictError: approval.CheckpointConflictError,
    CHECKPOINT_CONFLICT_CODE: approval.CHECKPOINT_CONFLICT_CODE,
    AGENT_RUN_STATE_NAMESPACE: approval.AGENT_RUN_STATE_NAMESPACE,
    APPROVAL_LIMITS: approval.APPROVAL_LIMITS,
    createMemoryCheckpointStore: approval.createMemoryCheckpointStore,
    createSqliteCheckpointStore: approval.createSqliteCheckpointStore,
    createAgentRunLifecycle: require('./lib/agent-lifecycle.js').createAgentRunLifecycle,
  })
}
// End of human approval and durable runs.
