'use strict'
// Plain values of the agent loop: option JSON for the native run rules, the tool list of a config,
// input and transcript messages in `@arnilo/prism`'s shapes, and the run's usage sum. Nothing here
// awaits or keeps state beyond the value it returns.
const native = require('../binding.js')

function fail(out) {
  const { kind, code, message } = out.error
  const E = kind === 'TypeError' ? TypeError : kind === 'RangeError' ? RangeError : Error
  const err = new E(message)
  err.code = code
  return err
}

/** A native run rule's JSON answer, or its `{ error }` thrown as the error it names. */
function decode(text) {
  const out = JSON.parse(text)
  if (out.error) throw fail(out)
  return out
}

function json(value) {
  try {
    const text = JSON.stringify(value)
    return text === undefined ? '"<not JSON>"' : text
  } catch {
    return '"<not JSON>"'
  }
}

// Limits as JSON, keeping NaN and the infinities visible (JSON.stringify makes them `null`, which
// would read as "not given"): the native rules refuse NaN like any other non-integer.
function limitsJson(value) {
  let plain = true
  for (const k in value) {
    const v = value[k]
    if (typeof v === 'number' && !Number.isFinite(v)) plain = false
  }
  if (plain) return json(value)
  try {
    const text = JSON.stringify(value, (_key, v) => (typeof v === 'number' && !Number.isFinite(v) ? String(v) : v))
    return text === undefined ? '"<not JSON>"' : text
  } catch {
    return '"<not JSON>"'
  }
}

function toolList(tools) {
  if (tools === undefined || tools === null) return []
  if (Array.isArray(tools)) return tools.filter((t) => t !== null && typeof t === 'object')
  if (typeof tools.list === 'function') return tools.list()
  throw new TypeError('createAgent: tools must be a ToolRegistry or an array of ToolDefinitions')
}

function textOf(content) {
  let text = ''
  for (const block of content) if (block !== null && typeof block === 'object' && block.type === 'text') text += block.text
  return text
}

function inputMessages(input) {
  if (typeof input === 'string') return [{ role: 'user', content: [{ type: 'text', text: input }] }]
  if (Array.isArray(input)) {
    // Content blocks make one user message; a list of messages is taken as is.
    if (input.length > 0 && input.every((m) => m !== null && typeof m === 'object' && typeof m.role === 'string')) return input.slice()
    return [{ role: 'user', content: input }]
  }
  if (input !== null && typeof input === 'object' && typeof input.role === 'string') return [input]
  throw new TypeError('session.run: input must be a string, content blocks, a message or a list of messages')
}

// `@arnilo/prism`'s tool message: the result under `result`, then the result's own content blocks.
function toolMessage(result) {
  const message = {
    role: 'tool',
    content: [{ type: 'tool_result', toolCallId: result.toolCallId, name: result.name, result: result.value, error: result.error }],
  }
  if (Array.isArray(result.content)) for (const block of result.content) message.content.push(block)
  if (result.metadata !== undefined) message.metadata = result.metadata
  return message
}

/** The result of a call the loop did not dispatch (`why`: failed, aborted, turn_limit, inert). */
function notDispatched(call, why) {
  return {
    toolCallId: call.id,
    name: call.name,
    error: { name: 'ToolCallNotDispatchedError', message: native.runNotDispatchedMessage(String(call.name), why), code: 'tool_call_not_dispatched' },
  }
}

// Usage over provider turns, as `@arnilo/prism` sums it: token counters add up, `totalTokens`
// defaults to input + output, and cost adds up only while every turn reports the same currency.
// The sums are one plain object made at the first counted usage: its keys keep the order in which
// the counters first appeared, which is the order of the total's keys.
const USAGE_COUNTERS = ['inputTokens', 'outputTokens', 'cacheReadTokens', 'cacheWriteTokens']

class UsageTotal {
  constructor() {
    this.sums = undefined
    this.currency = undefined
    this.costOk = true
  }

  add(usage) {
    if (usage === null || typeof usage !== 'object') return
    for (const key of USAGE_COUNTERS) {
      if (typeof usage[key] === 'number') this.addTo(key, usage[key])
    }
    const total = typeof usage.totalTokens === 'number'
      ? usage.totalTokens
      : typeof usage.inputTokens === 'number' || typeof usage.outputTokens === 'number'
        ? (usage.inputTokens ?? 0) + (usage.outputTokens ?? 0)
        : undefined
    if (total !== undefined) this.addTo('totalTokens', total)
    if (typeof usage.cost === 'number' && this.costOk) {
      if (this.sums === undefined || !Object.hasOwn(this.sums, 'cost')) this.currency = usage.currency
      else if (usage.currency !== this.currency) this.costOk = false
      if (this.costOk) this.addTo('cost', usage.cost)
    }
  }

  addTo(key, value) {
    if (this.sums === undefined) this.sums = {}
    this.sums[key] = (this.sums[key] ?? 0) + value
  }

  value() {
    const sums = this.sums
    if (sums === undefined) return undefined
    const usage = {}
    for (const key in sums) if (key !== 'cost' || this.costOk) usage[key] = sums[key]
    if (this.costOk && Object.hasOwn(sums, 'cost') && this.currency !== undefined) usage.currency = this.currency
    return Object.keys(usage).length > 0 ? usage : undefined
  }
}

// How the loop ends a run from any depth: thrown, caught once where the run builds its result.
class RunEnd {
  constructor(status, finishReason, error, extra) {
    this.status = status
    this.finishReason = finishReason
    this.error = error
    this.extra = extra
  }
}

function mergeGuardrails(agent, run) {
  if (!agent && !run) return undefined
  return {
    input: [...(agent?.input ?? []), ...(run?.input ?? [])],
    output: [...(agent?.output ?? []), ...(run?.output ?? [])],
    toolInput: [...(agent?.toolInput ?? []), ...(run?.toolInput ?? [])],
    toolOutput: [...(agent?.toolOutput ?? []), ...(run?.toolOutput ?? [])],
    maxConcurrency: run?.maxConcurrency ?? agent?.maxConcurrency,
  }
}

module.exports = { RunEnd, decode, json, limitsJson, toolList, textOf, inputMessages, toolMessage, notDispatched, UsageTotal, mergeGuardrails }
