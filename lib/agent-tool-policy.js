'use strict'
// What a run's provider takes of its tools (docs/agent.md § Deferred tools and tool caps):
//
// - A provider with its own tool search (`provider.nativeToolSearch`, the Anthropic provider) gets
//   every tool; the deferred ones go marked `defer_loading` with the provider's search.
// - Elsewhere a tool marked `deferLoading` is withheld until this package's `search_tools` finds it
//   (it is then activated, as under `toolsDisclosure: "search"`).
// - A provider's `maxTools` (the OpenAI-compatible provider's 128) is never exceeded: a turn over it
//   falls back to search disclosure (top-K for the turn's text, the activated tools, `search_tools`),
//   and a turn still over it fails with `ERR_PRISM_TOOL_CAP` naming the cap.

const { codedError } = require('./errors.js')

/**
 * The run's policy under `provider` for its grant (`registered[i]` for each `i` of `indices`):
 * `{ native, cap, deferred, needsSearch }`.
 */
function runToolPolicy(provider, registered, indices) {
  const native = provider !== null && typeof provider === 'object' && provider.nativeToolSearch === true
  const max = provider !== null && typeof provider === 'object' ? provider.maxTools : undefined
  const cap = Number.isSafeInteger(max) && max > 0 ? max : undefined
  let deferred = false
  if (!native) {
    for (let i = 0; i < indices.length; i++) {
      if (registered[indices[i]].deferLoading === true) {
        deferred = true
        break
      }
    }
  }
  return { native, cap, deferred, needsSearch: deferred || (cap !== undefined && indices.length > cap) }
}

/**
 * The tools of a turn under `policy`: `chosen` (what the disclosure chose), from `visible` (the
 * grant after narrowing). `search` is `{ tool, select(tools, topK) }` when the run has a search
 * index, else undefined; `activated` the session's activated names. Under `toolsDisclosure: "all"`
 * (`all`), a deferred tool waits until activated; under "search" the disclosure already chose.
 */
function turnTools(policy, chosen, visible, search, activated, all) {
  let tools = chosen
  if (all && policy.deferred && search !== undefined) {
    const shown = new Set(activated)
    tools = visible.filter((tool) => tool.deferLoading !== true || shown.has(tool.name))
    tools.push(search.tool)
  }
  if (policy.cap === undefined || tools.length <= policy.cap) return tools
  if (search !== undefined) tools = search.select(visible.concat([search.tool]), policy.cap - 1)
  return checkCap(tools, policy.cap)
}

function checkCap(tools, cap) {
  if (tools.length <= cap) return tools
  throw Object.assign(
    codedError(
      RangeError,
      `The turn has ${tools.length} tools and the provider takes at most ${cap} (maxTools), even after search disclosure; narrow the grant (toolNames, toolNarrowing) or lower toolsSearch.topK`,
      'ERR_PRISM_TOOL_CAP',
    ),
    { limit: cap, count: tools.length },
  )
}

module.exports = { runToolPolicy, turnTools, checkCap }
