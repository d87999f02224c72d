'use strict'
// `prism-tools-native/ai-sdk`: this package's dispatch under the Vercel AI SDK (`ai`, version 7).
// `toAiSdkTools` gives a ToolSet whose every `execute` is a dispatch; the input schemas it hands the
// AI SDK are `jsonSchema(…)` without a validator, so a bad call reaches the dispatch (and comes back
// to the model as a tool error naming the field) instead of being refused before it. `aiSdkPrepareStep`
// applies the grant, narrowing and `search_tools` disclosure per step through `activeTools`.

const prism = require('../../index.js')
const { harnessTools, createAdapterDispatch, checkDurableEffects, adapterError, isRegistry } = require('./harness.js')
const { foreignSchema } = require('./foreign-schema.js')
const { toolsOfSet, searchSetup, disclosureStep } = require('./disclosure.js')

function loadAi() {
  try {
    return require('ai')
  } catch {
    throw adapterError(Error, 'prism-tools-native/ai-sdk: the optional peer dependency "ai" (version 7) is not installed: npm install ai', 'ERR_PRISM_INVALID_OPTION')
  }
}

const isAiSdkTool = (t) => t !== null && typeof t === 'object' && 'inputSchema' in t && typeof t.name !== 'string'

/**
 * AI SDK tools (a ToolSet: `{ [name]: tool({ inputSchema, execute }) }`) as this package's tool
 * definitions: `parameters` is the input schema as JSON Schema, and `execute` parses the validated
 * arguments with the tool's own schema (defaults, transforms) before calling the AI SDK tool's
 * `execute` with its usual options (`toolCallId`, `messages`, `abortSignal`, `context`).
 */
function fromAiSdkTools(toolSet) {
  if (toolSet === null || typeof toolSet !== 'object' || Array.isArray(toolSet)) {
    throw adapterError(TypeError, 'fromAiSdkTools: toolSet must be an object of AI SDK tools { [name]: tool({ … }) }', 'ERR_PRISM_INVALID_OPTION')
  }
  const { asSchema } = loadAi()
  return Object.keys(toolSet).map((name) => {
    const t = toolSet[name]
    if (t === null || typeof t !== 'object') throw adapterError(TypeError, `fromAiSdkTools: tool ${name} is not an AI SDK tool object`, 'ERR_PRISM_INVALID_OPTION')
    const { parameters, parse } = foreignSchema(name, t.inputSchema, asSchema)
    const def = { name, parameters }
    if (typeof t.description === 'string') def.description = t.description
    if (t.effect !== undefined) def.effect = t.effect
    if (typeof t.execute === 'function') {
      def.execute = async (args, ctx) => {
        const input = await parse(args)
        const o = ctx.aiSdk ?? {}
        return t.execute(input, { toolCallId: o.toolCallId ?? ctx.toolCallId, messages: o.messages ?? [], abortSignal: ctx.signal, context: o.context, idempotencyKey: ctx.idempotencyKey })
      }
    }
    return def
  })
}

// An AI SDK ToolSet given to toAiSdkTools: every value is an AI SDK tool (not one of ours).
function foreignSet(tools) {
  if (Array.isArray(tools) || isRegistry(tools)) return undefined
  const values = Object.values(tools)
  return values.length > 0 && values.every(isAiSdkTool) ? fromAiSdkTools(tools) : undefined
}

/**
 * An AI SDK ToolSet over `tools` (this package's definitions, a registry, or an AI SDK ToolSet)
 * whose every call goes through `createToolDispatcher(options)`. `options` are the dispatcher's
 * options plus `context` (the call context: `sessionId`, `runId`, `identity`, `metadata`, … — or a
 * function of the AI SDK's execution options answering it), `callIds` ("framework" | "content"),
 * `approval` (an approval gate) and `search` (add `search_tools`; see `aiSdkPrepareStep`).
 */
function toAiSdkTools(tools, options = {}) {
  const ai = loadAi()
  let { registry, list } = harnessTools(tools, foreignSet, 'toAiSdkTools')
  checkDurableEffects(list, options, 'toAiSdkTools')
  const granted = options.filter !== undefined ? prism.filterTools(list, options.filter) : list
  const search = searchSetup(granted, options.search, 'toAiSdkTools')
  if (search !== undefined) {
    list = [...list, search.tool]
    registry = prism.createToolRegistry(list)
  }
  const d = createAdapterDispatch(registry, { ...options, context: undefined }, 'toAiSdkTools')
  const contextOf = typeof options.context === 'function' ? options.context : () => options.context
  const set = {}
  for (const t of search ? [...granted, search.tool] : granted) {
    const name = t.name
    set[name] = ai.tool({
      description: typeof t.description === 'string' ? t.description : undefined,
      inputSchema: ai.jsonSchema(t.parameters ?? { type: 'object', properties: {} }),
      async execute(input, o) {
        const base = contextOf(o) ?? {}
        const extra = { ...base, aiSdk: { toolCallId: o.toolCallId, messages: o.messages, context: o.context } }
        if (o.abortSignal !== undefined) extra.signal = o.abortSignal
        return d.call(name, input, o.toolCallId, extra)
      },
    })
  }
  // The definitions behind the set, for aiSdkPrepareStep (not enumerable: the AI SDK never sees it).
  toolsOfSet.set(set, { list: granted, search, gate: d.gate, idOf: d.idOf })
  return set
}

/**
 * A `prepareStep` for generateText/streamText over a set made by toAiSdkTools: each step's
 * `activeTools` is the grant (`toolNames`), narrowed by `narrowing(step)`, then — with `search` —
 * the top `topK` tools for the step's input text, the tools earlier `search_tools` calls found, and
 * `search_tools`. `prepare(options)` may add more of the step's settings.
 */
function aiSdkPrepareStep(toolSet, options = {}) {
  const step = disclosureStep(toolSet, options, 'aiSdkPrepareStep')
  return async (o) => {
    const activated = []
    for (const s of o.steps ?? []) {
      for (const r of s.toolResults ?? []) {
        if (r.toolName === prism.SEARCH_TOOLS_NAME && Array.isArray(r.output?.names)) activated.push(...r.output.names)
      }
    }
    const activeTools = await step({ stepNumber: o.stepNumber, steps: o.steps, input: lastUserText(o.messages), activated })
    const more = typeof options.prepare === 'function' ? await options.prepare(o) : undefined
    return { ...more, activeTools }
  }
}

/**
 * The AI SDK's `toolApproval` over the approval gate of a set made by toAiSdkTools (its
 * `options.approval`): a call the gate has a decision for is "approved" or "denied"; one that waits
 * is recorded as pending (durably) and answered "user-approval".
 */
function aiSdkToolApproval(toolSet) {
  const known = toolsOfSet.get(toolSet)
  if (known === undefined || known.gate === undefined) {
    throw adapterError(TypeError, 'aiSdkToolApproval: toolSet must be made by toAiSdkTools with options.approval (createApprovalGate)', 'ERR_PRISM_INVALID_OPTION')
  }
  return ({ toolCall }) => known.gate.status({ id: known.idOf(toolCall.toolName, toolCall.input, toolCall.toolCallId), name: toolCall.toolName, arguments: toolCall.input })
}

// The text of the conversation's last user message: what the step's tools are scored against.
function lastUserText(messages) {
  if (!Array.isArray(messages)) return ''
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]
    if (m?.role !== 'user') continue
    if (typeof m.content === 'string') return m.content
    if (Array.isArray(m.content)) return m.content.filter((p) => p?.type === 'text').map((p) => p.text).join('\n')
  }
  return ''
}

module.exports = { toAiSdkTools, fromAiSdkTools, aiSdkPrepareStep, aiSdkToolApproval }
