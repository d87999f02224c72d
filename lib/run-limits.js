'use strict'
// The run budget, with `@arnilo/prism`'s names, defaults, hard caps, breach and messages: every run
// of an agent is bounded (turns, provider attempts, tool rounds, tool calls, wall time, request and
// response bytes, input / output / total tokens, and `maxCost` when the host sets one). A limit from
// `createAgent({ limits })` is a ceiling a run's own `limits` can only lower; a run without an agent
// limit takes its own value. A value that is not a safe integer from 1 to the hard cap is refused
// before the run starts (TypeError, code `invalid_run_limits`, upstream's message).
//
// The rules — the tables, the resolution, every counter, the first breach and the deadline — are
// the run machine's (crates/core/src/run/budget.rs, machine.rs). This file measures (JSON bytes),
// keeps the wall-clock timer, reports the first breach to `onExceeded` (the loop emits
// `run_limit_exceeded` and aborts the run) and throws RunLimitError where a breach is raised.
const native = require('../binding.js')
const { limitsJson } = require('./agent-values.js')

const TABLES = JSON.parse(native.runBudgetTables())
const DEFAULT_RUN_LIMITS = Object.freeze(TABLES.defaults)
const HARD_RUN_LIMITS = Object.freeze(TABLES.hard)
const HARD_MAX_RUN_COST = TABLES.hardMaxCost
// A limit's code for the machine: its place in the table, `maxCost` last.
const LIMIT_CODE = Object.fromEntries([...Object.keys(DEFAULT_RUN_LIMITS), 'maxCost'].map((name, i) => [name, i]))
const FIRST = 1 // a charge's answer: a breach was recorded now
const RAISE = 2 // a charge's answer: throw RunLimitError

/** A run went over one of its limits; `breach` says which, its maximum and what was observed. */
class RunLimitError extends Error {
  constructor(breach) {
    super(`Run limit exceeded: ${breach.limit}`)
    this.name = 'RunLimitError'
    this.code = 'ERR_PRISM_RUN_LIMIT'
    this.breach = breach
  }
}

const layerJson = (value) => (value === undefined || value === null ? undefined : limitsJson(value))

// Runs that set no limits of their own get the same answer for the same agent layer: the last one
// per layer object (or for none) is kept, frozen, with a copy of the layer's own values, so a layer
// changed in place is resolved again. `maxCost` is an object; its values are compared too.
const NO_LAYER = {}
const resolvedMemo = new WeakMap() // agent layer (or NO_LAYER) -> { seen, resolved }

function layerValues(layer) {
  const out = []
  for (const key in layer) {
    const v = layer[key]
    out.push(key, v)
    if (v !== null && typeof v === 'object') for (const k in v) out.push(k, v[k])
  }
  return out
}

function sameValues(a, b) {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (!Object.is(a[i], b[i])) return false
  return true
}

/** The limits of a run: the agent's layer, narrowed by the run's; defaults for the rest. */
function resolveRunLimits(agent, run) {
  const memoKey = run === undefined || run === null ? (agent === undefined || agent === null ? NO_LAYER : agent) : undefined
  const plainLayer = memoKey !== undefined && (memoKey === NO_LAYER || (typeof agent === 'object' && Object.getPrototypeOf(agent) === Object.prototype))
  const seen = plainLayer ? layerValues(memoKey) : undefined
  if (plainLayer) {
    const kept = resolvedMemo.get(memoKey)
    if (kept !== undefined && sameValues(kept.seen, seen)) return kept.resolved
  }
  const text = native.runResolveBudget(layerJson(agent), layerJson(run))
  const resolved = JSON.parse(text)
  if (resolved.maxCost) Object.freeze(resolved.maxCost)
  Object.freeze(resolved)
  resolvedText.set(resolved, text)
  if (plainLayer) resolvedMemo.set(memoKey, { seen, resolved })
  return resolved
}

// The machine's JSON of resolved (frozen) limits, as `runResolveBudget` wrote it.
const resolvedText = new WeakMap()
const limitsText = (limits) => resolvedText.get(limits) ?? limitsJson(limits)

// A usage field as the machine reads it: a number as is, anything else given as NaN (refused).
const num = (v) => (v === undefined ? undefined : typeof v === 'number' ? v : Number.NaN)

class RunLimitTracker {
  /**
   * @param limits resolved limits (`resolveRunLimits`)
   * @param options `{ onExceeded?(breach), snapshot?: counters, deadlineAt?: ISO time, toolChoice? }`
   * @param listener whose `onExceeded` is told of the breach instead of `options`' (an agent run)
   */
  constructor(limits, options = {}, listener = options) {
    this.listener = listener
    this.startedAt = performance.now()
    this.exceeded = undefined
    let deadline
    if (options.deadlineAt) {
      deadline = Date.parse(options.deadlineAt)
      if (!Number.isFinite(deadline)) deadline = Number.NaN // refused by the machine, with upstream's message
    }
    const choice = options.toolChoice === undefined ? undefined : JSON.stringify(options.toolChoice)
    this.machine = native.runMachineOpen(limitsText(limits), choice, options.snapshot === undefined ? undefined : limitsJson(options.snapshot), deadline, Date.now(), this.startedAt)
    this.limits = limits
    this.deadline = this.machine.deadlineMs
    this.timer = undefined
    // At or past the deadline already (a resumed run), the machine breached on opening.
    if (this.machine.breach() != null) this.answer(FIRST)
    else {
      this.timer = setTimeout(() => this.tick(), this.machine.remainingMs(Date.now()))
      this.timer.unref?.()
    }
  }

  /** The wall-time deadline as an ISO time (made when asked: most runs never ask). */
  get deadlineAt() {
    return new Date(this.deadline).toISOString()
  }

  /** The first breach, once there is one. */
  get breach() {
    return this.exceeded
  }

  /** Provider turns and tool rounds the run has used (a resumed run's include its earlier ones). */
  get turns() {
    return this.machine.turns
  }

  get rounds() {
    return this.machine.rounds
  }

  snapshot() {
    return JSON.parse(this.machine.snapshot(performance.now()))
  }

  /** What a suspended run's checkpoint carries: every counter, and the deadline. */
  checkpoint() {
    return { counters: this.snapshot(), deadlineAt: this.deadlineAt }
  }

  dispose() {
    if (this.timer) clearTimeout(this.timer)
    this.timer = undefined
  }

  // The timer fired: the machine reads the clock (a timer may fire a little early).
  tick() {
    this.timer = undefined
    const answer = this.machine.clock(Date.now())
    if (answer !== 0) return this.answer(answer)
    this.timer = setTimeout(() => this.tick(), Math.max(1, this.machine.remainingMs(Date.now())))
    this.timer.unref?.()
    return undefined
  }

  // The machine's answer to a charge: report a new breach once, throw where one is raised.
  answer(code) {
    if (code & FIRST) {
      const b = this.machine.breach()
      const breach = { limit: b.limit, maximum: b.maximum, observed: b.observed }
      if (b.currency !== undefined && b.currency !== null) breach.currency = b.currency
      this.exceeded = breach
      this.listener.onExceeded?.(breach)
    }
    if (code & RAISE) throw new RunLimitError(this.exceeded)
  }

  /** Adds `delta` to the counter of `limit`; throws RunLimitError past the limit. */
  charge(limit, delta = 1) {
    const code = LIMIT_CODE[limit]
    const answer = this.machine.charge(code === undefined ? -1 : code, typeof delta === 'number' ? delta : Number.NaN)
    if (answer !== 0) this.answer(answer)
  }

  /** One provider turn's usage: tokens always, cost when `maxCost` is set (missing cost breaches it). */
  recordUsage(usage) {
    const answer = usage
      ? this.machine.recordUsage(true, num(usage.inputTokens), num(usage.outputTokens), num(usage.totalTokens), num(usage.cacheReadTokens), num(usage.cacheWriteTokens), num(usage.cost), typeof usage.currency === 'string' ? usage.currency : undefined)
      : this.machine.recordUsage(false)
    if (answer !== 0) this.answer(answer)
  }

  // The agent loop's steps (lib/agent-turn-loop.js): each charges what the machine says it costs.
  beginTurn() {
    const answer = this.machine.beginTurn()
    if (answer !== 0) this.answer(answer)
  }

  beginRound() {
    const answer = this.machine.beginRound()
    if (answer !== 0) this.answer(answer)
  }

  toolCall() {
    const answer = this.machine.toolCall()
    if (answer !== 0) this.answer(answer)
  }

  /** A provider attempt whose request is `bytes` JSON bytes. */
  attempt(bytes) {
    const answer = this.machine.attempt(bytes)
    if (answer !== 0) this.answer(answer)
  }

  /** The `toolChoice` the current turn sends (undefined: none). */
  turnChoice() {
    const text = this.machine.turnChoice()
    return text === undefined || text === null ? undefined : JSON.parse(text)
  }

  /** After a provider turn: `{ finish }` or `{ refused, messages }` (lib/agent-turn-loop.js). */
  afterTurn(calls, hosted) {
    return this.machine.afterTurn(calls.map((c, i) => (hosted[i] ? null : String(c.name))))
  }

  /** The calls the turn's `toolChoice` refuses (`{ refused: indices, messages }`), outside `afterTurn`. */
  refusals(calls, hosted) {
    return this.machine.refusals(calls.map((c, i) => (hosted !== undefined && hosted[i] ? null : String(c.name))))
  }

  /** The run's terminal status from how it ended (a run a limit stopped fails). */
  endStatus(status) {
    return this.machine.endStatus(status)
  }
}

function createRunLimitTracker(limits, options) {
  return new RunLimitTracker(resolveRunLimits(undefined, limits), options)
}

/** UTF-8 bytes of `value` as JSON, as the request and response limits count them. */
function jsonBytes(value) {
  let text
  try {
    text = JSON.stringify(value)
  } catch {
    throw new TypeError('Provider request or event must be JSON-serializable for run limits')
  }
  return text === undefined ? 0 : Buffer.byteLength(text, 'utf8')
}

// A tool definition's JSON bytes, kept per tool object with the own enumerable values they were
// measured from: a request's tool list is the same objects every turn (and, for one agent, every
// run), and stringifying a thousand definitions per turn was most of a turn's cost. A definition is
// measured again when an own property is added, removed or given another value (a new `parameters`
// object, a new description); a change deep inside the same `parameters` object is not seen (the
// validator's compiled-schema cache has the same rule).
const toolBytesCache = new WeakMap()

function toolJsonBytes(tool) {
  // A function, undefined or symbol element is `null` in JSON; other primitives, arrays (a longer
  // `length` adds holes no key shows) and values with a `toJSON` are measured whole.
  if (tool === null || typeof tool !== 'object' || Array.isArray(tool) || typeof tool.toJSON === 'function') {
    return tool === undefined || typeof tool === 'function' || typeof tool === 'symbol' ? 4 : jsonBytes(tool)
  }
  const seen = toolBytesCache.get(tool)
  if (seen !== undefined) {
    // `for…in` walks own enumerable keys first, in JSON's order, without allocating; an inherited
    // enumerable key counts as a change (measured whole again, never wrongly kept).
    const { keys, values } = seen
    let i = 0
    let same = true
    for (const key in tool) {
      if (i >= keys.length || key !== keys[i] || tool[key] !== values[i]) {
        same = false
        break
      }
      i++
    }
    if (same && i === keys.length) return seen.bytes
  }
  const keys = Object.keys(tool)
  const bytes = jsonBytes(tool)
  toolBytesCache.set(tool, { keys, values: keys.map((k) => tool[k]), bytes })
  return bytes
}

// The JSON bytes of a system text message the loop built (its `Available tools:` list, one long
// string measured once per tool listing), kept per message object with the parts it was made of.
const textMessageBytes = new WeakMap()

/** Keeps `bytes` as the JSON size of `message`, `{ role: 'system', content: [{ type: 'text', text }] }`. */
function rememberTextMessageBytes(message, bytes) {
  const content = message.content
  const block = content[0]
  textMessageBytes.set(message, { content, block, text: block.text, bytes })
}

/**
 * The kept size of `message` while it is still exactly what was measured: the same two keys (role
 * `system` and the same content list), one element (the same block), the block's two keys (type
 * `text` and the same text), and no `toJSON` on any of the three. Anything else is measured whole.
 */
function keptTextMessageBytes(message) {
  const seen = textMessageBytes.get(message)
  if (seen === undefined) return undefined
  const { content, block } = seen
  if (typeof message.toJSON === 'function' || typeof content.toJSON === 'function' || typeof block.toJSON === 'function') return undefined
  if (content.length !== 1 || content[0] !== block) return undefined
  let keys = 0
  for (const key in message) {
    if (key === 'role' ? message.role !== 'system' : key !== 'content' || message.content !== content) return undefined
    keys++
  }
  if (keys !== 2) return undefined
  keys = 0
  for (const key in block) {
    if (key === 'type' ? block.type !== 'text' : key !== 'text' || block.text !== seen.text) return undefined
    keys++
  }
  return keys === 2 ? seen.bytes : undefined
}

/**
 * UTF-8 bytes of a provider request as JSON: exactly `jsonBytes(request)`, with the tool list's
 * definitions measured once per definition (see `toolJsonBytes`) and a leading message whose size
 * the loop kept (`rememberTextMessageBytes`) not measured again. A request that is not a plain object with
 * a plain `tools` array, or where a global `toJSON` could change the text, is measured whole.
 */
function requestJsonBytes(request) {
  if (
    request === null ||
    typeof request !== 'object' ||
    Object.getPrototypeOf(request) !== Object.prototype ||
    /** @type {any} */ (Object.prototype).toJSON !== undefined ||
    /** @type {any} */ (Array.prototype).toJSON !== undefined ||
    Object.hasOwn(request, 'toJSON')
  ) return jsonBytes(request)
  let counted
  try {
    counted = splitRequestBytes(request)
  } catch {
    counted = undefined // a getter threw, a value is cyclic or a BigInt: measured whole, which names the failure
  }
  return counted ?? jsonBytes(request)
}

function splitRequestBytes(request) {
  const { tools, ...rest } = request
  if (!Array.isArray(tools) || Object.getPrototypeOf(tools) !== Array.prototype || Object.hasOwn(tools, 'toJSON')) return undefined
  // `[m,…]` less `m` and the comma after it, when `m`'s size is kept.
  let leading = 0
  const { messages } = rest
  if (Array.isArray(messages) && messages.length > 0 && Object.getPrototypeOf(messages) === Array.prototype && !Object.hasOwn(messages, 'toJSON')) {
    const kept = keptTextMessageBytes(messages[0])
    if (kept !== undefined) {
      rest.messages = messages.slice(1)
      leading = kept + (messages.length > 1 ? 1 : 0)
    }
  }
  const restBytes = jsonBytes(rest) + leading
  // `{"tools":[a,b]}`: brackets, commas between elements, and a comma before it when `rest` has members.
  let listBytes = tools.length === 0 ? 2 : 1 + tools.length
  for (let i = 0; i < tools.length; i++) listBytes += toolJsonBytes(tools[i])
  return restBytes + (restBytes > 2 ? 1 : 0) + TOOLS_MEMBER_BYTES + listBytes
}
const TOOLS_MEMBER_BYTES = Buffer.byteLength('"tools":')

/** Whether the host configured a token or cost budget: then a turn's output waits for its usage. */
function buffersOutput(...layers) {
  return layers.some((value) => value?.maxOutputTokens !== undefined || value?.maxTotalTokens !== undefined || value?.maxCost !== undefined)
}

module.exports = {
  DEFAULT_RUN_LIMITS,
  HARD_RUN_LIMITS,
  HARD_MAX_RUN_COST,
  RunLimitError,
  RunLimitTracker,
  resolveRunLimits,
  createRunLimitTracker,
  jsonBytes,
  requestJsonBytes,
  rememberTextMessageBytes,
  buffersOutput,
}
