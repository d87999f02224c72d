'use strict'
// `@arnilo/prism` options this package does not implement. Each is refused with an error naming the
// option and what it is, never ignored: a silently dropped option would run without what its host
// configured. docs/agent.md ("Upstream options") lists them.

const { toolList } = require('./agent-values.js')
const { readToolTimeout } = require('./dispatch-deadline.js')
const { resolveOutputBudget } = require('./output-budget.js')
const { resolveToolResultFold } = require('./tool-result-fold.js')
const { isLoopStrategy, checkLoopStrategy } = require('./agent-loop.js')
const { checkToolChoice } = require('./providers/request-options.js')
const { checkToolContract } = require('./tool-contract.js')

const WHERE = 'see docs/agent.md "Upstream options"; use @arnilo/prism for it'

// option -> what it is. `false` (upstream's "disable") and `undefined` are accepted for every one.
const AGENT_CONFIG_REFUSED = {
  context: 'context providers',
  skills: 'skills',
  activateAllSkills: 'skills',
  skillsDisclosure: 'skills',
  inputBuilder: 'input assembly builders',
  promptBuilder: 'prompt builders',
  resourceLoader: 'resource loading',
  store: 'session stores and branching',
  providerOptions: 'provider options and structured output',
  providerRequestPolicies: 'provider request policies',
  systemPrompt: 'layered system prompts',
  idempotencyKey: 'run idempotency keys',
  compaction: 'compaction',
  instructionInjectors: 'instruction injectors',
  inputLayout: 'input layouts',
  secure: 'secure agent defaults',
}

const RUN_OPTIONS_REFUSED = {
  providerOptions: 'provider options and structured output',
  providerRequestPolicies: 'provider request policies',
  systemPrompt: 'layered system prompts',
  compaction: 'compaction',
  idempotencyKey: 'run idempotency keys',
  activeSkills: 'skills',
  skills: 'skills',
  activateAllSkills: 'skills',
  skillsDisclosure: 'skills',
  instructionInjectors: 'instruction injectors',
  inputLayout: 'input layouts',
}

const SESSION_CONFIG_REFUSED = {
  store: 'session stores and branching',
  leafId: 'session stores and branching',
}

/** A TypeError with code `unsupported_agent_option` naming `option` and the feature it belongs to. */
function unsupportedOption(where, option, what) {
  const err = new TypeError(`${where}: option "${option}" (${what}) is not supported by prism-tools-native; ${WHERE}`)
  err.code = 'unsupported_agent_option'
  err.option = option
  return err
}

function refuseUnsupported(object, table, where) {
  // The tables are this file's plain literals: `for…in` reads their keys without a fresh array per call.
  for (const option in table) {
    const value = object[option]
    if (value !== undefined && value !== false) throw unsupportedOption(where, option, table[option])
  }
}

function refuseGuardrailStages(guardrails, where) {
  if (guardrails === null || typeof guardrails !== 'object') return
  for (const stage of ['input', 'output']) {
    if (Array.isArray(guardrails[stage]) && guardrails[stage].length > 0) {
      throw unsupportedOption(where, `guardrails.${stage}`, `${stage} guardrails (this package runs the toolInput and toolOutput stages)`)
    }
  }
}

function refuseLoop(loop, where) {
  if (loop === undefined || loop === null || typeof loop !== 'object') return
  // A custom strategy object (`{ name, run(ctx) }`, lib/agent-loop.js) is checked for its shape.
  if (isLoopStrategy(loop)) return checkLoopStrategy(loop, where)
  if (loop.structuredOutputTiming !== undefined) {
    throw unsupportedOption(where, 'loop.structuredOutputTiming', 'structured output')
  }
}

const checked = new WeakSet() // configs already accepted (sessions of one agent skip the checks)

/** Refuses a `createAgent` config this package cannot honour; a config is checked once. */
function checkConfig(config) {
  if (config !== null && typeof config === 'object' && checked.has(config)) return
  if (config === null || typeof config !== 'object') throw new TypeError('createAgent: config must be an object')
  refuseUnsupported(config, AGENT_CONFIG_REFUSED, 'createAgent')
  if (config.provider !== undefined && (config.provider === null || typeof config.provider.generate !== 'function')) {
    throw new TypeError('createAgent: provider must have a generate(request) method')
  }
  if (config.providerSource !== undefined && typeof config.providerSource !== 'function') {
    throw new TypeError('createAgent: providerSource must be a function (model) => AIProvider | undefined')
  }
  if (config.instructions !== undefined && typeof config.instructions !== 'string') {
    throw unsupportedOption('createAgent', 'instructions', 'instructions other than one string (layered instructions, instruction injectors)')
  }
  refuseGuardrailStages(config.guardrails, 'createAgent')
  refuseLoop(config.loop, 'createAgent')
  // Refuses a bad `tools` at construction; a registry checked its tools when they were registered.
  if (Array.isArray(config.tools)) for (const tool of toolList(config.tools)) checkToolContract(tool)
  else toolList(config.tools)
  resolveOutputBudget(config.toolOutputBudget, 'createAgent: toolOutputBudget')
  resolveToolResultFold(undefined, config.toolResultFold)
  checkToolChoice(config.toolChoice, 'createAgent')
  readToolTimeout(config.toolTimeoutMs, 'createAgent')
  checked.add(config)
}

/** Refuses run options this package cannot honour, before anything of the run happens. */
function checkRunOptions(options) {
  if (options === null || typeof options !== 'object') throw new TypeError('session.run: options must be an object')
  // Removed from `@arnilo/prism` in 0.1.5: honouring it would mis-apply the round cap.
  if (options.maxToolRounds !== undefined) {
    throw new TypeError('RunOptions.maxToolRounds was removed in 0.1.5; use RunOptions.limits.maxToolRounds instead')
  }
  refuseUnsupported(options, RUN_OPTIONS_REFUSED, 'session.run')
  const signal = options.signal
  if (signal !== undefined && signal !== null && (typeof signal !== 'object' || typeof signal.addEventListener !== 'function' || typeof signal.removeEventListener !== 'function')) {
    throw new TypeError('session.run: signal must be an AbortSignal')
  }
  refuseGuardrailStages(options.guardrails, 'session.run')
  refuseLoop(options.loop, 'session.run')
  checkToolChoice(options.toolChoice, 'session.run')
  readToolTimeout(options.toolTimeoutMs, 'session.run')
}

module.exports = {
  unsupportedOption,
  refuseUnsupported,
  checkConfig,
  checkRunOptions,
  AGENT_CONFIG_REFUSED,
  RUN_OPTIONS_REFUSED,
  SESSION_CONFIG_REFUSED,
}
