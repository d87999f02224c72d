'use strict'
// Per-step tool disclosure for a framework's own loop: the grant, the host's narrowing and the
// `search_tools` disclosure of the agent loop (docs/agent.md § Grant, Narrowing, Disclosure), with
// the same native pieces (the search index, `selectDisclosedTools`, `activateToolNames`).

const prism = require('../../index.js')
const { adapterError } = require('./harness.js')

/** The tool definitions behind a set made by an adapter: `{ list, search }`. */
const toolsOfSet = new WeakMap()

/** `{ index, tool, topK }` when `search` asks for `search_tools` over `tools`, else undefined. */
function searchSetup(tools, search, who) {
  if (search === undefined || search === false) return undefined
  if (search !== true && (search === null || typeof search !== 'object')) {
    throw adapterError(TypeError, `${who}: options.search must be true or { topK?, defaultK? }`, 'ERR_PRISM_INVALID_OPTION')
  }
  const o = search === true ? {} : search
  if (tools.some((t) => t.name === prism.SEARCH_TOOLS_NAME)) {
    throw adapterError(TypeError, `${who}: a tool is already named ${prism.SEARCH_TOOLS_NAME}; drop it or options.search`, 'ERR_PRISM_INVALID_OPTION')
  }
  const index = prism.createToolSearchIndex(tools)
  const tool = prism.createSearchToolsTool(index, o.defaultK !== undefined ? { defaultK: o.defaultK } : undefined)
  return { index, tool, topK: o.topK }
}

function nameList(value, what, who) {
  if (!Array.isArray(value) || value.some((n) => typeof n !== 'string')) {
    throw adapterError(TypeError, `${who}: ${what} must be an array of tool names`, 'ERR_PRISM_INVALID_OPTION')
  }
  return value
}

/**
 * The step function of a set made by an adapter: `({ stepNumber, steps, input, activated })` →
 * the names to send this step, in the set's order. `options`: `toolNames` (the grant), `narrowing`
 * (a function of the step answering names; clamped to the grant), `topK`, `activated` (names found
 * before this run).
 */
function disclosureStep(toolSet, options, who) {
  const known = toolsOfSet.get(toolSet)
  if (known === undefined) throw adapterError(TypeError, `${who}: toolSet must be a tool set made by this package's adapter`, 'ERR_PRISM_INVALID_OPTION')
  if (options === null || typeof options !== 'object') throw adapterError(TypeError, `${who}: options must be an object`, 'ERR_PRISM_INVALID_OPTION')
  const { list, search } = known
  const grant = options.toolNames === undefined ? list : list.filter((t) => nameList(options.toolNames, 'options.toolNames', who).includes(t.name))
  if (options.narrowing !== undefined && typeof options.narrowing !== 'function') {
    throw adapterError(TypeError, `${who}: options.narrowing must be a function of the step answering tool names`, 'ERR_PRISM_INVALID_OPTION')
  }
  const before = options.activated === undefined ? [] : nameList(options.activated, 'options.activated', who)
  const topK = options.topK ?? search?.topK
  return async function step(s) {
    let tools = grant
    if (options.narrowing !== undefined) {
      const names = nameList(await options.narrowing({ stepNumber: s.stepNumber, steps: s.steps, toolNames: grant.map((t) => t.name) }), 'narrowing(step)', who)
      tools = grant.filter((t) => names.includes(t.name))
    }
    if (search === undefined) return tools.map((t) => t.name)
    const activated = prism.activateToolNames(before, s.activated)
    const chosen = prism.selectDisclosedTools({ tools: [...tools, search.tool], input: s.input, topK, activated, index: search.index })
    return chosen.map((t) => t.name)
  }
}

module.exports = { toolsOfSet, searchSetup, disclosureStep }
