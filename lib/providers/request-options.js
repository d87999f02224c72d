'use strict'
// What a provider request asks beyond its messages, in one vocabulary for every provider: the tool
// choice (`request.options.toolChoice`) and the sampling parameters (`model.parameters`), each
// mapped to its wire format here. Also the one place adjacent streamed text becomes one part.
const { codedError } = require('../errors.js')

const TOOL_CHOICE_MODES = ['auto', 'none', 'required']

/**
 * Checks a `toolChoice` option: `"auto" | "none" | "required" | { type: "tool", name }`. Answers it
 * (undefined when not set); throws TypeError `ERR_PRISM_INVALID_OPTION` naming `where` otherwise.
 */
function checkToolChoice(value, where) {
  if (value === undefined) return undefined
  if (typeof value === 'string' && TOOL_CHOICE_MODES.includes(value)) return value
  if (value !== null && typeof value === 'object' && !Array.isArray(value) && value.type === 'tool') {
    if (typeof value.name === 'string' && value.name !== '') return value
    throw codedError(TypeError, `${where}: toolChoice { type: "tool" } needs a non-empty name`, 'ERR_PRISM_INVALID_OPTION')
  }
  throw codedError(
    TypeError,
    `${where}: toolChoice must be "auto", "none", "required" or { type: "tool", name }`,
    'ERR_PRISM_INVALID_OPTION',
  )
}

/**
 * The tool choice a turn sends, checked against the tools it offers: a named tool that is not
 * among them (or `required` with no tool at all) throws before any request is made. A forcing
 * choice (`required`, a named tool) holds until the run's first tool round, then the turn sends none
 * (the provider's default, `auto`), so the model can answer after its forced call; `none` and
 * `auto` hold for the whole run. (The agent loop asks its run machine which choice a turn sends,
 * crates/core/src/run/machine.rs, and checks it with `checkTurnToolChoice`.)
 */
function toolChoiceForTurn(value, tools, { toolRounds = 0, where = 'toolChoice' } = {}) {
  const choice = checkToolChoice(value, where)
  if (choice === undefined) return undefined
  if (toolRounds > 0 && choice !== 'none' && choice !== 'auto') return undefined
  return checkTurnToolChoice(choice, tools, where)
}

/** A turn's (checked) tool choice against the tools the turn offers; answers the choice. */
function checkTurnToolChoice(choice, tools, where = 'toolChoice') {
  if (choice === undefined) return undefined
  const names = Array.isArray(tools) ? tools.map((t) => t && t.name).filter((n) => typeof n === 'string') : []
  if (typeof choice === 'object' && !names.includes(choice.name)) {
    const active = names.length === 0 ? 'none' : names.slice(0, 20).join(', ') + (names.length > 20 ? ', …' : '')
    throw codedError(TypeError, `${where}: toolChoice names tool "${choice.name}", which is not active this turn (active tools: ${active})`, 'ERR_PRISM_INVALID_OPTION')
  }
  if (choice === 'required' && names.length === 0) {
    throw codedError(TypeError, `${where}: toolChoice "required" but no tool is active this turn`, 'ERR_PRISM_INVALID_OPTION')
  }
  return choice
}

function requestToolChoice(request) {
  const options = request && request.options
  return options !== null && typeof options === 'object' ? options.toolChoice : undefined
}

/** Chat Completions `tool_choice`. */
function openAIToolChoice(choice) {
  if (choice === undefined) return undefined
  return typeof choice === 'string' ? choice : { type: 'function', function: { name: choice.name } }
}

/** Anthropic Messages `tool_choice` (`none` needs no tools sent; `required` is `any`). */
function anthropicToolChoice(choice) {
  if (choice === undefined) return undefined
  if (typeof choice === 'object') return { type: 'tool', name: choice.name }
  return { type: choice === 'required' ? 'any' : choice }
}

// The shared vocabulary -> each wire format's key. `undefined`: that API has no such setting, so it
// is not sent (docs/providers.md lists these).
const PARAMETERS = {
  maxTokens: { openai: 'max_tokens', anthropic: 'max_tokens' },
  temperature: { openai: 'temperature', anthropic: 'temperature' },
  topP: { openai: 'top_p', anthropic: 'top_p' },
  stopSequences: { openai: 'stop', anthropic: 'stop_sequences' },
  seed: { openai: 'seed', anthropic: undefined },
  presencePenalty: { openai: 'presence_penalty', anthropic: undefined },
  frequencyPenalty: { openai: 'frequency_penalty', anthropic: undefined },
}

/**
 * `model.parameters` as `wire` (`openai` | `anthropic`) body fields: the shared names mapped, any
 * other key passed through as written. A mapped name wins over the same wire key written by hand.
 */
function wireParameters(parameters, wire) {
  const out = {}
  if (parameters === null || typeof parameters !== 'object' || Array.isArray(parameters)) return out
  for (const [key, value] of Object.entries(parameters)) {
    if (value === undefined || Object.prototype.hasOwnProperty.call(PARAMETERS, key)) continue
    out[key] = value
  }
  for (const [key, value] of Object.entries(parameters)) {
    if (value === undefined || !Object.prototype.hasOwnProperty.call(PARAMETERS, key)) continue
    const name = PARAMETERS[key][wire]
    if (name !== undefined) out[name] = value
  }
  return out
}

const plainText = (b) => b !== null && typeof b === 'object' && b.type === 'text' && typeof b.text === 'string' && Object.keys(b).every((k) => k === 'type' || k === 'text')
const openThinking = (b) =>
  b !== null && typeof b === 'object' && b.type === 'thinking' && typeof b.text === 'string' && Object.keys(b).every((k) => k === 'type' || k === 'text' || (k === 'signature' && b.signature === undefined))

/**
 * A message's content with adjacent streamed pieces joined: plain text parts into one text part;
 * thinking parts into one until a part with a `signature` closes it (the signature kept). Other
 * blocks, and text parts with more than `type` and `text`, stay as they are. The same array when
 * nothing joins.
 */
function coalesceContent(content) {
  if (!Array.isArray(content) || content.length < 2) return content
  const out = []
  let joined = false
  for (const block of content) {
    const prev = out[out.length - 1]
    if (prev !== undefined && plainText(prev) && plainText(block)) {
      out[out.length - 1] = { type: 'text', text: prev.text + block.text }
      joined = true
    } else if (prev !== undefined && openThinking(prev) && block !== null && typeof block === 'object' && block.type === 'thinking' && typeof block.text === 'string') {
      const merged = { ...block, type: 'thinking', text: prev.text + block.text }
      if (merged.signature === undefined) delete merged.signature
      out[out.length - 1] = merged
      joined = true
    } else out.push(block)
  }
  return joined ? out : content
}

module.exports = { checkToolChoice, toolChoiceForTurn, checkTurnToolChoice, requestToolChoice, openAIToolChoice, anthropicToolChoice, wireParameters, coalesceContent, PARAMETERS }
