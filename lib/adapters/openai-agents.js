'use strict'
// `prism-tools-native/openai-agents`: this package's dispatch under the OpenAI Agents SDK
// (`@openai/agents`). `toOpenAIAgentsTools` gives function tools (non-strict JSON Schema, so a bad call
// reaches the dispatch) whose every `execute` is a dispatch with the run context passed through; a
// blocked call or a validation failure is answered to the model as the tool's error text, with its
// code. With an approval gate, `needsApproval` asks it, so the Agents SDK's interruptions carry
// durable, argument-bound decisions.

const prism = require('../../index.js')
const { harnessTools, createAdapterDispatch, checkDurableEffects, adapterError, isRegistry } = require('./harness.js')
const { toolsOfSet, searchSetup, disclosureStep } = require('./disclosure.js')

function loadAgents() {
  try {
    return require('@openai/agents')
  } catch {
    throw adapterError(Error, 'prism-tools-native/openai-agents: the optional peer dependency "@openai/agents" is not installed: npm install @openai/agents', 'ERR_PRISM_INVALID_OPTION')
  }
}

const isFunctionTool = (t) => t !== null && typeof t === 'object' && t.type === 'function' && typeof t.invoke === 'function' && typeof t.name === 'string'

/**
 * Agents SDK function tools as this package's tool definitions: `parameters` is the tool's JSON
 * Schema and `execute` calls the tool's own `invoke` (its zod parse, defaults included) with the
 * run context of the dispatch (`ctx.runContext`, else a fresh one).
 */
function fromOpenAIAgentsTools(tools) {
  if (!Array.isArray(tools)) throw adapterError(TypeError, 'fromOpenAIAgentsTools: tools must be an array of Agents SDK function tools', 'ERR_PRISM_INVALID_OPTION')
  return tools.map((t, i) => {
    if (!isFunctionTool(t)) throw adapterError(TypeError, `fromOpenAIAgentsTools: tools[${i}] is not an Agents SDK function tool (tool({ name, parameters, execute }))`, 'ERR_PRISM_INVALID_OPTION')
    const def = {
      name: t.name,
      parameters: t.parameters,
      async execute(args, ctx) {
        const agents = loadAgents()
        const runContext = ctx.runContext ?? new agents.RunContext()
        const details = ctx.openaiAgents?.details ?? { toolCall: { type: 'function_call', callId: String(ctx.toolCallId), name: t.name, arguments: JSON.stringify(args) } }
        return t.invoke(runContext, JSON.stringify(args), details)
      },
    }
    if (typeof t.description === 'string' && t.description !== '') def.description = t.description
    return def
  })
}

function foreignList(tools) {
  return Array.isArray(tools) && tools.length > 0 && tools.every(isFunctionTool) ? fromOpenAIAgentsTools(tools) : undefined
}

// The model-visible text of a failed call: the dispatch's message and its code.
const errorText = (error) => `${error?.message ?? String(error)}${typeof error?.code === 'string' ? ` (${error.code})` : ''}`

// A non-strict Agents SDK parameters object: it asks for `required` and `additionalProperties`.
function parametersOf(t) {
  const p = t.parameters ?? { type: 'object', properties: {} }
  return { required: [], additionalProperties: true, ...p, properties: p.properties ?? {} }
}

/**
 * Agents SDK function tools over `tools` (this package's definitions, a registry, or Agents SDK
 * function tools) whose every call goes through `createToolDispatcher(options)`. `options` are the
 * dispatcher's options plus `context` (the call context, or a function of the Agents SDK's
 * RunContext answering it), `callIds`, `approval` (an approval gate) and `search`.
 */
function toOpenAIAgentsTools(tools, options = {}) {
  const agents = loadAgents()
  let { registry, list } = harnessTools(tools, (t) => (isRegistry(t) ? undefined : foreignList(t)), 'toOpenAIAgentsTools')
  checkDurableEffects(list, options, 'toOpenAIAgentsTools')
  const granted = options.filter !== undefined ? prism.filterTools(list, options.filter) : list
  const search = searchSetup(granted, options.search, 'toOpenAIAgentsTools')
  if (search !== undefined) {
    list = [...list, search.tool]
    registry = prism.createToolRegistry(list)
  }
  const d = createAdapterDispatch(registry, { ...options, context: undefined }, 'toOpenAIAgentsTools')
  const contextOf = typeof options.context === 'function' ? options.context : () => options.context
  const disclosure = search !== undefined ? runDisclosure(granted, search, options.search) : undefined
  const out = (search ? [...granted, search.tool] : granted).map((t) => {
    const name = t.name
    const spec = {
      name,
      description: typeof t.description === 'string' ? t.description : '',
      parameters: parametersOf(t),
      strict: false,
      async execute(input, runContext, details) {
        const frameworkId = details?.toolCall?.callId ?? details?.toolCall?.id
        const extra = { ...contextOf(runContext), runContext, openaiAgents: { details } }
        if (details?.signal !== undefined) extra.signal = details.signal
        const value = await d.call(name, input ?? {}, frameworkId, extra)
        if (disclosure !== undefined && name === prism.SEARCH_TOOLS_NAME) disclosure.found(runContext, value?.names)
        return value
      },
      errorFunction: (_runContext, error) => errorText(error),
    }
    if (disclosure !== undefined) spec.isEnabled = ({ runContext }) => disclosure.enabled(runContext, name)
    if (d.gate !== undefined) {
      spec.needsApproval = (_runContext, input, callId) => d.gate.requires({ id: d.idOf(name, input ?? {}, callId), name, arguments: input ?? {} })
    }
    return agents.tool(spec)
  })
  toolsOfSet.set(out, { list: granted, search, gate: d.gate, idOf: d.idOf })
  return out
}

/**
 * `search_tools` disclosure through the Agents SDK's per-turn `isEnabled`: each turn enables the top
 * tools for `search.input(runContext)` (without it, none: the model searches), the tools the run's
 * `search_tools` calls found, and `search_tools`. Kept per RunContext, computed once per change.
 */
function runDisclosure(granted, search, settings) {
  const inputOf = typeof settings?.input === 'function' ? settings.input : undefined
  const topK = inputOf === undefined ? 0 : search.topK
  const all = [...granted, search.tool]
  const runs = new WeakMap()
  const stateOf = (rc) => {
    const key = rc !== null && typeof rc === 'object' ? rc : runs
    let st = runs.get(key)
    if (st === undefined) runs.set(key, (st = { activated: [], names: undefined }))
    return st
  }
  return {
    found(rc, names) {
      if (!Array.isArray(names)) return
      const st = stateOf(rc)
      st.activated = prism.activateToolNames(st.activated, names)
      st.names = undefined
    },
    async enabled(rc, name) {
      const st = stateOf(rc)
      if (st.names === undefined) {
        const input = inputOf === undefined ? '' : String((await inputOf(rc)) ?? '')
        st.names = new Set(prism.selectDisclosedTools({ tools: all, input, topK, activated: st.activated, index: search.index }).map((t) => t.name))
      }
      return st.names.has(name)
    },
  }
}

/**
 * The Agents SDK has no per-turn tool list hook the way the AI SDK's prepareStep is one; this gives
 * the same disclosure as a function the host calls before each `run`: the names to enable for
 * `input` (the grant, `narrowing`, the top `topK`, the tools earlier `search_tools` calls found).
 */
function openAIAgentsToolFilter(tools, options = {}) {
  const step = disclosureStep(tools, options, 'openAIAgentsToolFilter')
  /** @param {{ input?: unknown, activated?: string[], stepNumber?: number }} [turn] */
  return async ({ input, activated = [], stepNumber = 0 } = {}) => {
    const names = await step({ stepNumber, steps: [], input: typeof input === 'string' ? input : '', activated })
    return tools.filter((t) => names.includes(t.name))
  }
}

module.exports = { toOpenAIAgentsTools, fromOpenAIAgentsTools, openAIAgentsToolFilter }
