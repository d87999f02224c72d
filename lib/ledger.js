'use strict'
// The built-in run ledgers and the batched adapter. A row becomes JSON text here (where
// `JSON.stringify` is cheapest) and crosses once; the storage (memory, SQLite with a writer thread)
// is Rust. Every row dispatch gives is stored: one that cannot be serialised as it is (a BigInt, a
// cycle, very deep nesting, a throwing getter or toJSON) or is larger than the row bound is copied
// with markers in place of what could not be kept, never refused.

const native = require('../binding.js')
const { codedError } = require('./errors.js')

const MAX_ROW_BYTES = native.RUN_LEDGER_MAX_ROW_BYTES
const CODE_LEDGER = 'ERR_PRISM_LEDGER'
const CODE_INVALID_OPTION = 'ERR_PRISM_INVALID_OPTION'

// Markers for what a bounded row could not keep (the first three as redaction writes them).
const MAX_DEPTH = 32
const MAX_DEPTH_MARK = '[MaxDepth]'
const CIRCULAR_MARK = '[Circular]'
const UNREADABLE_MARK = '[Unreadable]'
const TRUNCATED_MARK = '[Truncated]'
// Room kept for the markers and punctuation the budget does not count exactly.
const SLACK_BYTES = 4096

const KIND_INDEX = { tool_call: 0, run: 1, event: 2, usage: 3 }

/** The index a record kind crosses as (default `tool_call`); any other kind is refused. */
function kindIndex(kind) {
  const index = kind === undefined ? 0 : KIND_INDEX[kind]
  if (typeof kind !== 'undefined' && (typeof kind !== 'string' || index === undefined || !Object.hasOwn(KIND_INDEX, kind))) {
    throw codedError(TypeError, 'kind must be "tool_call", "run", "event" or "usage"', CODE_INVALID_OPTION)
  }
  return index
}

// ----- bounded rows -------------------------------------------------------------------------------

const SKIP = Symbol('skip')

function utf8Length(text) {
  // Cheap upper bound first: a UTF-16 unit is at most 3 bytes of UTF-8.
  return text.length * 3 <= MAX_ROW_BYTES ? text.length : Buffer.byteLength(text)
}

/** A JSON-safe copy of `value` that serialises to at most about `budget` bytes. */
function boundedCopy(value, budget) {
  const state = { left: budget, ancestors: [] }
  const out = copy(value, '', 0, state)
  return out === SKIP ? {} : out
}

function charge(state, bytes) {
  state.left -= bytes
}

function copyString(text, state) {
  const bytes = Buffer.byteLength(text) + 2
  if (bytes <= state.left) {
    charge(state, bytes)
    return text
  }
  // Keep a prefix that fits (UTF-16 units ≤ bytes, so this never overshoots), then the marker.
  const room = Math.max(0, Math.floor((state.left - TRUNCATED_MARK.length - 8) / 3))
  const kept = text.slice(0, room) + TRUNCATED_MARK
  charge(state, Buffer.byteLength(kept) + 2)
  return kept
}

function copy(value, key, depth, state) {
  switch (typeof value) {
    case 'string':
      return copyString(value, state)
    case 'number':
      charge(state, 24)
      return Number.isFinite(value) ? value : null
    case 'boolean':
      charge(state, 5)
      return value
    case 'bigint':
      // JSON has no BigInt: its exact decimal digits, as a string.
      return copyString(value.toString(), state)
    case 'undefined':
    case 'function':
    case 'symbol':
      return SKIP
  }
  if (value === null) {
    charge(state, 4)
    return null
  }
  if (typeof value.toJSON === 'function') {
    try {
      value = value.toJSON(key)
    } catch {
      return copyString(UNREADABLE_MARK, state)
    }
    if (value === null || typeof value !== 'object') return copy(value, key, depth, state)
  }
  if (state.ancestors.includes(value)) return copyString(CIRCULAR_MARK, state)
  if (depth >= MAX_DEPTH) return copyString(MAX_DEPTH_MARK, state)
  state.ancestors.push(value)
  let out
  try {
    out = Array.isArray(value) ? copyArray(value, depth, state) : copyObject(value, depth, state)
  } catch {
    // A Proxy or an exotic object that throws on any read.
    out = UNREADABLE_MARK
  }
  state.ancestors.pop()
  return out
}

function copyArray(array, depth, state) {
  const out = []
  charge(state, 2)
  for (let i = 0; i < array.length; i++) {
    if (state.left <= 0) {
      out.push(TRUNCATED_MARK)
      break
    }
    let item
    try {
      item = copy(array[i], String(i), depth + 1, state)
    } catch {
      item = UNREADABLE_MARK
    }
    out.push(item === SKIP ? null : item)
    charge(state, 1)
  }
  return out
}

function copyObject(object, depth, state) {
  const out = {}
  charge(state, 2)
  const keys = Object.keys(object)
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]
    if (state.left <= 0) {
      out[TRUNCATED_MARK] = `${keys.length - i} more keys`
      break
    }
    let item
    try {
      item = copy(object[key], key, depth + 1, state)
    } catch {
      item = UNREADABLE_MARK
    }
    if (item === SKIP) continue
    out[key] = item
    charge(state, Buffer.byteLength(key) + 4)
  }
  return out
}

/**
 * The JSON text of a ledger row, at most `MAX_ROW_BYTES` bytes. Plain JSON values take
 * `JSON.stringify` as they are; anything else gets a bounded copy with markers.
 */
function rowText(record) {
  if (record === null || typeof record !== 'object' || Array.isArray(record)) {
    throw codedError(TypeError, 'run ledger record must be an object', CODE_LEDGER)
  }
  let text
  try {
    text = JSON.stringify(record)
  } catch {
    text = undefined
  }
  if (typeof text === 'string' && text.charCodeAt(0) === 123 && utf8Length(text) <= MAX_ROW_BYTES) return text
  let budget = MAX_ROW_BYTES - SLACK_BYTES
  for (;;) {
    const bounded = JSON.stringify(boundedCopy(record, budget))
    if (utf8Length(bounded) <= MAX_ROW_BYTES) return bounded
    budget = Math.floor(budget / 2)
  }
}

// ----- built-in ledgers ---------------------------------------------------------------------------

function ledgerOver(store) {
  const append = (kind) => (record) => store.append(kind, rowText(record))
  return {
    appendToolCall: append(KIND_INDEX.tool_call),
    appendRun: append(KIND_INDEX.run),
    appendEvent: append(KIND_INDEX.event),
    appendUsage: append(KIND_INDEX.usage),
    list(kind) {
      return JSON.parse(store.listText(kindIndex(kind)))
    },
    flush() {
      store.flush()
    },
    close() {
      store.close()
    },
  }
}

/** Rows in memory, in order: for tests and examples. */
function createMemoryRunLedger() {
  return ledgerOver(native.createMemoryRunLedgerStore())
}

function integerOption(options, name, min, max, fallback) {
  const value = options[name]
  if (value === undefined || value === null) return fallback
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw codedError(RangeError, `${name} must be an integer from ${min} to ${max}`, CODE_INVALID_OPTION)
  }
  return value
}

// `process.exit()` skips the environment's cleanup hooks, so open SQLite ledgers also commit on `exit`.
const openLedgers = new Set()
let exitListener = false
function closeOnExit(store) {
  for (const ref of openLedgers) if (ref.deref() === undefined) openLedgers.delete(ref)
  openLedgers.add(new WeakRef(store))
  if (exitListener) return
  exitListener = true
  process.on('exit', () => {
    for (const ref of openLedgers) {
      try {
        ref.deref()?.close()
      } catch {
        // Exiting: nothing is left to report to.
      }
    }
  })
}

/** Rows in a SQLite file, committed in batches by a writer thread (types/ledger.d.ts). */
function createSqliteRunLedger(path, options) {
  if (typeof path !== 'string') {
    throw codedError(TypeError, 'createSqliteRunLedger: path must be a string', CODE_INVALID_OPTION)
  }
  if (options !== undefined && options !== null && typeof options !== 'object') {
    throw codedError(TypeError, 'createSqliteRunLedger: options must be an object', CODE_INVALID_OPTION)
  }
  const o = options ?? {}
  const batchSize = integerOption(o, 'batchSize', 1, 100_000, 512)
  const flushIntervalMs = integerOption(o, 'flushIntervalMs', 1, 60_000, 10)
  const maxPendingRows = integerOption(o, 'maxPendingRows', 1, 1_000_000, 8192)
  const busyTimeoutMs = integerOption(o, 'busyTimeoutMs', 0, 600_000, 5000)
  if (maxPendingRows < batchSize) {
    throw codedError(RangeError, 'maxPendingRows must be at least batchSize', CODE_INVALID_OPTION)
  }
  const synchronous = o.synchronous ?? 'normal'
  if (synchronous !== 'full' && synchronous !== 'normal') {
    throw codedError(TypeError, 'synchronous must be "full" or "normal"', CODE_INVALID_OPTION)
  }
  const store = native.createSqliteRunLedgerStore(
    path, batchSize, flushIntervalMs, maxPendingRows, busyTimeoutMs, synchronous === 'full',
  )
  closeOnExit(store)
  return ledgerOver(store)
}

// ----- the batched adapter ------------------------------------------------------------------------

const DEFAULT_LEDGER_BATCH_ENTRIES = 128
const HARD_LEDGER_BATCH_ENTRIES = 4096
const DEFAULT_LEDGER_BATCH_BYTES = 512 * 1024
const HARD_LEDGER_BATCH_BYTES = 8 * 1024 * 1024
const DEFAULT_LEDGER_BATCH_DELAY_MS = 25
const HARD_LEDGER_BATCH_DELAY_MS = 60_000

function bound(value, fallback, hard, name) {
  const selected = value ?? fallback
  if (!Number.isInteger(selected) || selected < 1 || selected > hard) {
    throw codedError(RangeError, `${name} must be an integer in [1, ${hard}]`, CODE_INVALID_OPTION)
  }
  return selected
}

const isTerminalRun = (record) => record.status !== undefined && record.status !== 'queued' && record.status !== 'running'

/**
 * Wraps any `RunLedger` with one bounded FIFO: appends are acknowledged once queued and written to
 * `target` one at a time, in order, when a bound or the delay is reached, on a terminal run row
 * (`durability: "flush_on_terminal"`, the default), on every append (`"write_through"`), or on
 * `flush()`. A failed write stays queued for the next flush. Records must already be redacted.
 */
function createBatchedRunLedger(target, options) {
  if (target === null || typeof target !== 'object' || typeof target.appendToolCall !== 'function') {
    throw codedError(TypeError, 'createBatchedRunLedger: target must be a RunLedger', CODE_INVALID_OPTION)
  }
  const o = options ?? {}
  const maxBatchEntries = bound(o.maxBatchEntries, DEFAULT_LEDGER_BATCH_ENTRIES, HARD_LEDGER_BATCH_ENTRIES, 'maxBatchEntries')
  const maxBatchBytes = bound(o.maxBatchBytes, DEFAULT_LEDGER_BATCH_BYTES, HARD_LEDGER_BATCH_BYTES, 'maxBatchBytes')
  const maxBufferedEntries = bound(
    o.maxBufferedEntries, Math.min(HARD_LEDGER_BATCH_ENTRIES, maxBatchEntries * 2), HARD_LEDGER_BATCH_ENTRIES, 'maxBufferedEntries',
  )
  const maxBufferedBytes = bound(
    o.maxBufferedBytes, Math.min(HARD_LEDGER_BATCH_BYTES, maxBatchBytes * 2), HARD_LEDGER_BATCH_BYTES, 'maxBufferedBytes',
  )
  const maxDelayMs = bound(o.maxDelayMs, DEFAULT_LEDGER_BATCH_DELAY_MS, HARD_LEDGER_BATCH_DELAY_MS, 'maxDelayMs')
  const durability = o.durability ?? 'flush_on_terminal'
  if (durability !== 'flush_on_terminal' && durability !== 'write_through' && durability !== 'buffered') {
    throw codedError(TypeError, 'durability must be "write_through", "flush_on_terminal" or "buffered"', CODE_INVALID_OPTION)
  }
  const queue = []
  let bufferedBytes = 0
  let accepted = 0
  let flushed = 0
  let timer
  let chain = Promise.resolve()
  let disposed = false

  const status = () => ({ accepted, flushed, buffered: queue.length })
  const cancelTimer = () => {
    if (timer !== undefined) clearTimeout(timer)
    timer = undefined
  }
  const schedule = () => {
    if (timer !== undefined || disposed || queue.length === 0) return
    timer = setTimeout(() => {
      timer = undefined
      flush().catch(() => undefined)
    }, maxDelayMs)
    timer.unref?.()
  }
  const write = (item) => {
    switch (item.kind) {
      case 'run':
        return target.appendRun?.(item.record)
      case 'event':
        return target.appendEvent?.(item.record)
      case 'usage':
        return target.appendUsage?.(item.record)
      default:
        return target.appendToolCall(item.record)
    }
  }
  function flush() {
    cancelTimer()
    const operation = chain.then(async () => {
      while (queue.length > 0) {
        const item = queue[0]
        await write(item) // removed only once written: a failed write is retried by the next flush
        queue.shift()
        bufferedBytes -= item.bytes
        flushed += 1
      }
      return status()
    })
    chain = operation.then(
      () => undefined,
      () => undefined,
    )
    return operation
  }
  async function enqueue(kind, record) {
    if (disposed) throw codedError(Error, 'batched run ledger is disposed', CODE_LEDGER)
    const bytes = Buffer.byteLength(JSON.stringify(record))
    if (bytes > maxBatchBytes || bytes > maxBufferedBytes) {
      throw codedError(RangeError, 'run ledger record exceeds byte limit', CODE_LEDGER)
    }
    if (queue.length >= maxBufferedEntries || bufferedBytes + bytes > maxBufferedBytes) await flush()
    queue.push({ kind, record, bytes })
    bufferedBytes += bytes
    accepted += 1
    if (
      durability === 'write_through' ||
      queue.length >= maxBatchEntries ||
      bufferedBytes >= maxBatchBytes ||
      (kind === 'run' && durability === 'flush_on_terminal' && isTerminalRun(record))
    ) {
      await flush()
    } else {
      schedule()
    }
  }
  return {
    durability,
    appendRun: (record) => enqueue('run', record),
    appendEvent: (record) => enqueue('event', record),
    appendToolCall: (record) => enqueue('tool', record),
    appendUsage: (record) => enqueue('usage', record),
    flush,
    status,
    async dispose(disposeOptions) {
      disposed = true
      cancelTimer()
      if (disposeOptions?.flush !== false) {
        await flush()
      } else {
        await chain
        queue.length = 0
        bufferedBytes = 0
      }
    },
  }
}

const RUN_LEDGER_BATCH_LIMITS = Object.freeze({
  DEFAULT_LEDGER_BATCH_ENTRIES,
  HARD_LEDGER_BATCH_ENTRIES,
  DEFAULT_LEDGER_BATCH_BYTES,
  HARD_LEDGER_BATCH_BYTES,
  DEFAULT_LEDGER_BATCH_DELAY_MS,
  HARD_LEDGER_BATCH_DELAY_MS,
})

module.exports = {
  createMemoryRunLedger,
  createSqliteRunLedger,
  createBatchedRunLedger,
  isFlushableRunLedger: (ledger) => ledger !== null && typeof ledger === 'object' && typeof ledger.flush === 'function',
  rowText,
  kindIndex,
  KIND_INDEX,
  MAX_ROW_BYTES,
  ...RUN_LEDGER_BATCH_LIMITS,
}
