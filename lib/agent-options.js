'use strict'
// `@arnilo/prism` options this package does not implement. Each is refused with an error naming the
// option and what it is, never ignored: a silently dropped option would run without what its host
// configured. docs/agent.md ("Upstream options") lists them.

const WHERE = 'see docs/agent.md "Upstream options"; use @arnilo/prism for it'

// option -> what it is. `false` (upstream's "disable") and `undefined` are accepted for every one.
const AGENT_CONFIG_REFUSED = {
  context: 'context providers',
  skills: 'skills',
  activateAllSkills: 'skills',
  skillsDisclosure: 'skills',
  toolResultFold: 'tool result folding',
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
  toolResultFold: 'tool result folding',
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
  for (const option of Object.keys(table)) {
    const value = object[option]
    if (value !== undefined && value !== false) throw unsupportedOption(where, option, table[option])
  }
}

module.exports = { unsupportedOption, refuseUnsupported, AGENT_CONFIG_REFUSED, RUN_OPTIONS_REFUSED, SESSION_CONFIG_REFUSED }
