'use strict'
// The run budget, with `@arnilo/prism`'s names, defaults, hard caps, breach and messages: every run
// of an agent is bounded (turns, provider attempts, tool rounds, tool calls, wall time, request and
// response bytes, input / output / total tokens, and `maxCost` when the host sets one). A limit from
// `createAgent({ limits })` is a ceiling a run's own `limits` can only lower; a run without an agent
// limit takes its own value. A value that is not a safe integer from 1 to the hard cap is refused
// before the run starts (TypeError, code `invalid_run_limits`, upstream's message).
//
// The tracker counts what the loop charges. The first breach is recorded once (`breach`), reported
// to `onExceeded` (the loop emits `run_limit_exceeded` and aborts the run), and every breach but
// the wall clock's throws RunLimitError where it was charged. The wall clock is a timer.

const DEFAULT_RUN_LIMITS = Object.freeze({
  maxTurns: 16,
  maxProviderAttempts: 24,
  maxToolRounds: 8,
  maxToolCalls: 32,
  maxWallTimeMs: 120_000,
  maxRequestBytes: 8 * 1024 * 1024,
  maxResponseBytes: 8 * 1024 * 1024,
  maxInputTokens: 40_000,
  maxOutputTokens: 10_000,
  maxTotalTokens: 50_000,
})

const HARD_MAX_RUN_COST = 10_000

const HARD_RUN_LIMITS = Object.freeze({
  maxTurns: 64,
  maxProviderAttempts: 256,
  maxToolRounds: 64,
  maxToolCalls: 256,
  maxWallTimeMs: 30 * 60_000,
  maxRequestBytes: 64 * 1024 * 1024,
  maxResponseBytes: 64 * 1024 * 1024,
  maxInputTokens: 1_000_000,
  maxOutputTokens: 250_000,
  maxTotalTokens: 1_000_000,
})

const LIMIT_NAMES = Object.keys(DEFAULT_RUN_LIMITS)
const COUNTER_FOR = {
  maxTurns: 'turns',
  maxProviderAttempts: 'providerAttempts',
  maxToolRounds: 'toolRounds',
  maxToolCalls: 'toolCalls',
  maxWallTimeMs: 'wallTimeMs',
  maxRequestBytes: 'requestBytes',
  maxResponseBytes: 'responseBytes',
  maxInputTokens: 'inputTokens',
  maxOutputTokens: 'outputTokens',
  maxTotalTokens: 'totalTokens',
  maxCost: 'cost',
}

/** A run went over one of its limits; `breach` says which, its maximum and what was observed. */
class RunLimitError extends Error {
  constructor(breach) {
    super(`Run limit exceeded: ${breach.limit}`)
    this.name = 'RunLimitError'
    this.code = 'ERR_PRISM_RUN_LIMIT'
    this.breach = breach
  }
}

function refused(message) {
  const err = new TypeError(message)
  err.code = 'invalid_run_limits'
  return err
}

function validateLimits(input) {
  if (input === null || typeof input !== 'object') throw refused('Run limits must be an object')
  for (const name of LIMIT_NAMES) {
    const value = input[name]
    if (value === undefined) continue
    if (!Number.isSafeInteger(value) || value < 1 || value > HARD_RUN_LIMITS[name]) {
      throw refused(`${name} must be a positive safe integer at most ${HARD_RUN_LIMITS[name]}`)
    }
  }
  if (input.maxCost) {
    const { amount, currency } = input.maxCost
    if (typeof amount !== 'number' || !Number.isFinite(amount) || amount < 0 || amount > HARD_MAX_RUN_COST || typeof currency !== 'string' || !currency.trim()) {
      throw refused(`maxCost requires a finite amount from 0 through ${HARD_MAX_RUN_COST} and currency`)
    }
  }
  return input
}

/** The limits of a run: the agent's layer, narrowed by the run's; defaults for the rest. */
function resolveRunLimits(agent, run) {
  const base = agent ? validateLimits(agent) : undefined
  const override = run ? validateLimits(run) : undefined
  /** @type {Record<string, any>} */
  const resolved = { ...DEFAULT_RUN_LIMITS }
  for (const name of LIMIT_NAMES) {
    if (base?.[name] !== undefined) resolved[name] = base[name]
    if (override?.[name] !== undefined) resolved[name] = base ? Math.min(resolved[name], override[name]) : override[name]
  }
  const maxCost = override?.maxCost ?? base?.maxCost
  if (maxCost) {
    if (base?.maxCost && override?.maxCost) {
      if (base.maxCost.currency !== override.maxCost.currency) throw refused('Run limit currencies must match when narrowed')
      resolved.maxCost = { amount: Math.min(base.maxCost.amount, override.maxCost.amount), currency: base.maxCost.currency }
    } else resolved.maxCost = maxCost
  }
  return Object.freeze(resolved)
}

class RunLimitTracker {
  /**
   * @param limits resolved limits (`resolveRunLimits`)
   * @param options `{ onExceeded?(breach), snapshot?: counters, deadlineAt?: ISO time }`
   * @param listener whose `onExceeded` is told of the breach instead of `options`' (an agent run)
   */
  constructor(limits, options = {}, listener = options) {
    this.limits = limits
    this.listener = listener
    this.startedAt = performance.now()
    this.exceeded = undefined
    this.counters = {
      turns: 0,
      providerAttempts: 0,
      toolRounds: 0,
      toolCalls: 0,
      wallTimeMs: 0,
      requestBytes: 0,
      responseBytes: 0,
      inputTokens: 0,
      outputTokens: 0,
      totalTokens: 0,
      cost: 0,
      ...options.snapshot,
    }
    if (options.snapshot !== undefined) {
      for (const key of Object.keys(this.counters)) {
        const value = this.counters[key]
        if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || (key !== 'cost' && !Number.isSafeInteger(value))) {
          throw new TypeError('Run limit snapshot must contain finite non-negative counters')
        }
      }
    }
    const deadline = options.deadlineAt ? Date.parse(options.deadlineAt) : Date.now() + limits.maxWallTimeMs
    if (!Number.isFinite(deadline)) throw new TypeError('Run limit deadlineAt is invalid')
    this.deadline = deadline
    const remaining = Math.max(0, deadline - Date.now())
    this.timer = setTimeout(() => this.exceed('maxWallTimeMs', limits.maxWallTimeMs), remaining)
    this.timer.unref?.()
    if (remaining === 0) this.exceed('maxWallTimeMs', limits.maxWallTimeMs)
  }

  /** The wall-time deadline as an ISO time (made when asked: most runs never ask). */
  get deadlineAt() {
    return new Date(this.deadline).toISOString()
  }

  /** The first breach, once there is one. */
  get breach() {
    return this.exceeded
  }

  snapshot() {
    return { ...this.counters, wallTimeMs: Math.min(this.limits.maxWallTimeMs, Math.ceil(performance.now() - this.startedAt)) }
  }

  dispose() {
    if (this.timer) clearTimeout(this.timer)
    this.timer = undefined
  }

  /** Adds `delta` to the counter of `limit`; throws RunLimitError past the limit. */
  charge(limit, delta = 1) {
    if (!Number.isSafeInteger(delta) || delta < 0) throw new TypeError('Run limit delta must be a non-negative safe integer')
    const counter = COUNTER_FOR[limit]
    const observed = this.counters[counter] + delta
    if (!Number.isSafeInteger(observed)) this.exceed(limit, Number.MAX_SAFE_INTEGER + 1)
    this.counters[counter] = observed
    if (observed > this.limits[limit]) this.exceed(limit, observed)
  }

  /** One provider turn's usage: tokens always, cost when `maxCost` is set (missing cost breaches it). */
  recordUsage(usage) {
    if (!usage) {
      if (this.limits.maxCost) this.exceed('maxCost', Number.POSITIVE_INFINITY)
      return
    }
    for (const key of ['inputTokens', 'outputTokens', 'totalTokens', 'cacheReadTokens', 'cacheWriteTokens']) {
      const value = usage[key]
      if (value !== undefined && (!Number.isSafeInteger(value) || value < 0)) throw new TypeError(`Provider usage ${key} must be a non-negative safe integer`)
    }
    const total = usage.totalTokens ?? (usage.inputTokens ?? 0) + (usage.outputTokens ?? 0)
    if (!Number.isSafeInteger(total)) throw new TypeError('Provider usage totalTokens is invalid')
    this.charge('maxInputTokens', usage.inputTokens ?? 0)
    this.charge('maxOutputTokens', usage.outputTokens ?? 0)
    this.charge('maxTotalTokens', total)
    if (usage.cost !== undefined && (typeof usage.cost !== 'number' || !Number.isFinite(usage.cost) || usage.cost < 0)) {
      throw new TypeError('Provider usage cost must be finite and non-negative')
    }
    if (!this.limits.maxCost) return
    if (usage.cost === undefined || usage.currency !== this.limits.maxCost.currency) this.exceed('maxCost', Number.POSITIVE_INFINITY)
    const observed = this.counters.cost + usage.cost
    this.counters.cost = observed
    if (observed > this.limits.maxCost.amount) this.exceed('maxCost', observed)
  }

  exceed(limit, observed) {
    if (!this.exceeded) {
      const maximum = limit === 'maxCost' ? (this.limits.maxCost?.amount ?? 0) : this.limits[limit]
      this.exceeded = { limit, maximum, observed }
      if (limit === 'maxCost' && this.limits.maxCost) this.exceeded.currency = this.limits.maxCost.currency
      this.listener.onExceeded?.(this.exceeded)
    }
    if (limit !== 'maxWallTimeMs') throw new RunLimitError(this.exceeded)
    return undefined
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
