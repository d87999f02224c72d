'use strict'
// Checkpoint stores: `@arnilo/prism`'s `CheckpointStore` contract (saveCheckpoint with
// compare-and-swap on the version and fencing tokens, loadCheckpoint, listCheckpoints,
// deleteCheckpoint; ownership fields are part of the key's trust boundary). Durable agent runs
// (lib/approval.js) keep their run state in one. Every store's rules and storage are native
// (crates/core/src/run/checkpoint*.rs); this file checks and copies inputs, and awaits.
const native = require('../binding.js')
const { codedError } = require('./errors.js')

const CHECKPOINT_CONFLICT_CODE = 'ERR_PRISM_CHECKPOINT_CONFLICT'

/** A save that lost its compare-and-swap, a stale version or fencing token, or another owner's key. */
class CheckpointConflictError extends Error {
  constructor(message) {
    super(message)
    this.name = 'CheckpointConflictError'
    this.code = CHECKPOINT_CONFLICT_CODE
  }
}

const DEFAULT_MAX_RECORDS = 10_000
const DEFAULT_MAX_VALUE_BYTES = 1024 * 1024
const DEFAULT_MAX_PAGE_SIZE = 500

function throwIfAborted(signal) {
  if (signal && signal.aborted) throw signal.reason ?? new Error('Aborted')
}

function positive(value, fallback, name) {
  if (value === undefined) return fallback
  if (!Number.isSafeInteger(value) || value < 1) throw codedError(RangeError, `${name} must be a positive integer`, 'ERR_PRISM_INVALID_OPTION')
  return value
}

/** A bound as the native side takes it: at most 2^32 - 1, which no store reaches. */
const u32 = (n) => Math.min(n, 0xffff_ffff)

/** The JSON text of a value a store keeps; a value JSON cannot hold is a conflict naming `what`. */
function jsonText(value, what) {
  let text
  try {
    text = JSON.stringify(value)
  } catch (err) {
    throw new CheckpointConflictError(`${what} must be JSON serializable: ${err && err.message}`)
  }
  if (text === undefined) throw new CheckpointConflictError(`${what} must be JSON serializable`)
  return text
}

const OWNER = ['tenantId', 'accountId', 'userId']

// Text every store keeps the same: a NUL (which PostgreSQL text cannot hold) or a lone UTF-16
// surrogate (no UTF-8 store can hold it) is refused by every store alike, saying which.
function checkText(value, what) {
  if (typeof value !== 'string') return
  const nul = value.indexOf('\0')
  if (nul !== -1) throw new CheckpointConflictError(`Checkpoint ${what} must not contain NUL (U+0000, at index ${nul})`)
  if (!value.isWellFormed()) {
    let i = 0
    for (; i < value.length; i++) {
      const c = value.charCodeAt(i)
      if (c >= 0xd800 && c <= 0xdbff && i + 1 < value.length && (value.charCodeAt(i + 1) & 0xfc00) === 0xdc00) i++
      else if (c >= 0xd800 && c <= 0xdfff) break
    }
    throw new CheckpointConflictError(`Checkpoint ${what} must be well-formed Unicode (lone surrogate at index ${i})`)
  }
}

// The key, ownership and category fields are strings or absent: a number or null there would
// otherwise be read as "absent", and ownership is part of the key's trust boundary. A list query's
// category may also be a list of names.
function checkTexts(input) {
  for (const k of ['namespace', 'key', 'keyPrefix', 'category', ...OWNER]) {
    const value = input[k]
    if (value === undefined) continue
    if (k === 'category' && Array.isArray(value)) {
      for (const name of value) checkText(name, k)
    } else if (typeof value !== 'string') {
      throw new CheckpointConflictError(`Checkpoint ${k} must be a string`)
    } else checkText(value, k)
  }
}

function requireKey(input) {
  if (input === null || typeof input !== 'object' || typeof input.namespace !== 'string' || typeof input.key !== 'string' || !input.namespace || !input.key) {
    throw new CheckpointConflictError('Checkpoint namespace and key are required')
  }
  checkTexts(input)
}

/**
 * In-process checkpoint store: bounded record count (the least recently saved evicted) and value size.
 * Its rules and rows are native (crates/core/src/run/checkpoint_memory.rs), as the SQLite store's are.
 */
function createMemoryCheckpointStore(options = {}) {
  const handle = native.openMemoryCheckpointStore(
    u32(positive(options.maxRecords, DEFAULT_MAX_RECORDS, 'maxRecords')),
    u32(positive(options.maxValueBytes, DEFAULT_MAX_VALUE_BYTES, 'maxValueBytes')),
    u32(positive(options.maxPageSize, DEFAULT_MAX_PAGE_SIZE, 'maxPageSize')),
  )
  return nativeStore((c) => handle.call(c))
}

function unwrap(text) {
  const out = JSON.parse(text)
  if (!out.error) return out.ok
  const { kind, message } = out.error
  if (kind === 'conflict') throw new CheckpointConflictError(message)
  if (kind === 'range') throw new RangeError(message)
  throw new Error(message)
}

// What crosses to the native store as the input's JSON text: the key, ownership and query fields
// (the signal, the value and the metadata stay out).
function wire(input) {
  const out = {}
  for (const k of ['namespace', 'key', 'version', 'expectedVersion', 'fencingToken', 'category', 'tenantId', 'accountId', 'userId', 'cursor', 'keyPrefix']) {
    if (input[k] !== undefined) out[k] = input[k]
  }
  if (input.limit !== undefined && input.limit !== null) out.limit = limitNumber(input.limit)
  return JSON.stringify(out)
}

// A list limit as upstream's `Math.max(1, query.limit ?? 100)` reads it: JavaScript's ToNumber
// (`"2"` is 2; a Symbol or BigInt throws, as there). JSON has no NaN or Infinity, so those cross as
// text; the native store applies the bounds (crates/core/src/run/checkpoint.rs, `page_limit`).
function limitNumber(limit) {
  const n = +limit
  return Number.isFinite(n) ? n : String(n)
}

// The four methods over a native handle whose `call({ method, input, now, value?, metadata? })`
// answers (or resolves to) `{"ok":…}` / `{"error":…}` text; `input` is JSON text. Inputs are checked and
// serialized here, once, so a host's getters and non-JSON values never reach the native side; the
// value and metadata cross as their own JSON text, which the store keeps and answers as it is.
function nativeStore(call) {
  return {
    async saveCheckpoint(input) {
      throwIfAborted(input && input.signal)
      requireKey(input)
      const value = jsonText(input.value, 'Checkpoint value')
      const metadata = input.metadata === undefined ? undefined : jsonText(input.metadata, 'Checkpoint metadata')
      return unwrap(await call({ method: 'save', input: wire(input), now: new Date().toISOString(), value, metadata }))
    },
    async loadCheckpoint(input) {
      throwIfAborted(input && input.signal)
      requireKey(input)
      return unwrap(await call({ method: 'load', input: wire(input), now: '' }))
    },
    async listCheckpoints(query = {}) {
      throwIfAborted(query.signal)
      checkTexts(query)
      return unwrap(await call({ method: 'list', input: wire(query.cursor === undefined ? query : { ...query, cursor: String(query.cursor) }), now: '' }))
    },
    async deleteCheckpoint(input) {
      throwIfAborted(input && input.signal)
      requireKey(input)
      return unwrap(await call({ method: 'delete', input: wire(input), now: '' }))
    },
  }
}

const CODE_INVALID_OPTION = 'ERR_PRISM_INVALID_OPTION'
const invalid = (Ctor, message) => codedError(Ctor, `createSqliteCheckpointStore: ${message}`, CODE_INVALID_OPTION)

// `(path, options?)` as the other SQLite factories take it, or the older `({ path, ...options })`.
function sqliteArguments(pathOrOptions, maybeOptions) {
  if (typeof pathOrOptions === 'string') {
    if (maybeOptions !== undefined && maybeOptions !== null && (typeof maybeOptions !== 'object' || Array.isArray(maybeOptions))) {
      throw invalid(TypeError, 'options must be an object')
    }
    const options = maybeOptions ?? {}
    if (options.path !== undefined && options.path !== pathOrOptions) {
      throw invalid(TypeError, 'the path is given twice (the first argument and options.path) and they differ')
    }
    return { path: pathOrOptions, options }
  }
  if (pathOrOptions === null || typeof pathOrOptions !== 'object' || Array.isArray(pathOrOptions)) {
    throw invalid(TypeError, 'the first argument must be the SQLite file path (or an options object with path)')
  }
  if (maybeOptions !== undefined) throw invalid(TypeError, 'options come once: (path, options) or ({ path, ...options })')
  return { path: pathOrOptions.path, options: pathOrOptions }
}

/**
 * A checkpoint store in a SQLite file (created when absent; WAL; `synchronous: "full"` by default so
 * a saved checkpoint survives power loss): `createSqliteCheckpointStore(path, options?)`, like the other
 * SQLite factories (`({ path, ...options })` is still accepted). Several processes may share the file:
 * each save is one immediate transaction, so concurrent compare-and-swaps have exactly one winner.
 */
function createSqliteCheckpointStore(pathOrOptions, maybeOptions) {
  const { path, options } = sqliteArguments(pathOrOptions, maybeOptions)
  // The native open refuses a private in-memory path ("", ":memory:") or one SQLite cannot open,
  // with the same code, as the other SQLite factories do.
  if (typeof path !== 'string') throw invalid(TypeError, 'path must be a file path (a string)')
  const synchronous = options.synchronous ?? 'full'
  if (synchronous !== 'full' && synchronous !== 'normal') throw invalid(TypeError, 'synchronous must be "full" or "normal"')
  const handle = native.openSqliteCheckpointStore(
    path,
    u32(positive(options.busyTimeoutMs, 5000, 'busyTimeoutMs')),
    synchronous === 'full',
    u32(positive(options.maxValueBytes, DEFAULT_MAX_VALUE_BYTES, 'maxValueBytes')),
    u32(positive(options.maxPageSize, DEFAULT_MAX_PAGE_SIZE, 'maxPageSize')),
  )
  return {
    ...nativeStore((c) => handle.call(c)),
    /** Closes the file; later calls reject. */
    close() {
      handle.close()
    },
  }
}

/**
 * A checkpoint store on PostgreSQL (`prism-tools-native/postgres`), for runs suspended by one worker
 * and resumed by another: `options` carries the connection (`{ connectionString, schema?,
 * maxConnections?, connectTimeoutMs?, statementTimeoutMs? }`, read by `lib/postgres.js`) and the
 * bounds (`maxValueBytes?`, `maxPageSize?`). Each save is one transaction under an advisory lock on
 * the key, so concurrent compare-and-swaps have exactly one winner across machines.
 */
function openPostgresCheckpoints(connection, options) {
  let handle
  let closed = false
  const opening = native
    .openPostgresCheckpointStore({
      ...connection,
      maxValueBytes: positive(options.maxValueBytes, DEFAULT_MAX_VALUE_BYTES, 'maxValueBytes'),
      maxPageSize: positive(options.maxPageSize, DEFAULT_MAX_PAGE_SIZE, 'maxPageSize'),
    })
    .then((h) => (handle = h))
  opening.catch(() => {}) // surfaced by the first call (or `ready()`), never as an unhandled rejection
  const store = nativeStore(async (c) => {
    if (closed) throw new Error('checkpoint store is closed')
    const h = handle ?? (await opening)
    return h.call(c)
  })
  return Object.assign(store, {
    /** Resolves once connected and migrated; rejects with the connection or migration failure. */
    ready: () => opening.then(() => undefined),
    /** Closes the store's connections; later calls reject. */
    async close() {
      closed = true
      const h = await opening.catch(() => undefined)
      h?.close()
    },
  })
}

module.exports = { CheckpointConflictError, CHECKPOINT_CONFLICT_CODE, createMemoryCheckpointStore, createSqliteCheckpointStore, openPostgresCheckpoints }
