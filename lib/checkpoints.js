'use strict'
// Checkpoint stores: `@arnilo/prism`'s `CheckpointStore` contract (saveCheckpoint with
// compare-and-swap on the version and fencing tokens, loadCheckpoint, listCheckpoints,
// deleteCheckpoint; ownership fields are part of the key's trust boundary). Durable agent runs
// (lib/approval.js) keep their run state in one. The memory store lives here; the SQLite store's
// storage and its checks are native (src/run/checkpoint_sqlite.rs), this file only awaits.
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

function jsonCopy(value, what) {
  let text
  try {
    text = JSON.stringify(value)
  } catch (err) {
    throw new CheckpointConflictError(`${what} must be JSON serializable: ${err && err.message}`)
  }
  if (text === undefined) throw new CheckpointConflictError(`${what} must be JSON serializable`)
  return { text, value: JSON.parse(text) }
}

const OWNER = ['tenantId', 'accountId', 'userId']

function sameOwner(a, b) {
  return OWNER.every((k) => a[k] === b[k])
}

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

function checkTexts(input) {
  for (const k of ['namespace', 'key', 'keyPrefix', 'category', ...OWNER]) checkText(input[k], k)
}

function requireKey(input) {
  if (input === null || typeof input !== 'object' || typeof input.namespace !== 'string' || typeof input.key !== 'string' || !input.namespace || !input.key) {
    throw new CheckpointConflictError('Checkpoint namespace and key are required')
  }
  checkTexts(input)
}

/** In-process checkpoint store: bounded record count (oldest saves evicted) and value size. */
function createMemoryCheckpointStore(options = {}) {
  const maxRecords = positive(options.maxRecords, DEFAULT_MAX_RECORDS, 'maxRecords')
  const maxValueBytes = positive(options.maxValueBytes, DEFAULT_MAX_VALUE_BYTES, 'maxValueBytes')
  const maxPageSize = positive(options.maxPageSize, DEFAULT_MAX_PAGE_SIZE, 'maxPageSize')
  const records = new Map() // namespace \0 key -> record; Map order = least recently saved first
  const id = (input) => `${input.namespace}\0${input.key}`
  const copy = (record) => JSON.parse(JSON.stringify(record))
  // The record at the input's key, when there is one and the input's ownership matches it.
  const stored = (input) => {
    const record = records.get(id(input))
    if (record && !sameOwner(input, record)) throw new CheckpointConflictError('Checkpoint ownership mismatch')
    return record
  }
  const lookup = (input) => {
    throwIfAborted(input && input.signal)
    requireKey(input)
    return stored(input)
  }
  return {
    async saveCheckpoint(input) {
      throwIfAborted(input && input.signal)
      requireKey(input)
      if (!Number.isSafeInteger(input.version) || input.version < 1) throw new CheckpointConflictError('Checkpoint version must be a positive safe integer')
      const existing = stored(input)
      const current = existing ? existing.version : 0
      if (input.expectedVersion !== undefined && input.expectedVersion !== current) {
        throw new CheckpointConflictError(`Checkpoint compare-and-swap failed (expected ${input.expectedVersion}, current ${current})`)
      }
      if (existing && input.version <= current) throw new CheckpointConflictError(`Stale checkpoint version ${input.version} (current ${current})`)
      if (existing && existing.fencingToken !== undefined && (input.fencingToken === undefined || input.fencingToken < existing.fencingToken)) {
        throw new CheckpointConflictError(`Stale checkpoint fencing token ${input.fencingToken ?? 'missing'} (current ${existing.fencingToken})`)
      }
      const value = jsonCopy(input.value, 'Checkpoint value')
      if (Buffer.byteLength(value.text, 'utf8') > maxValueBytes) throw new RangeError(`Checkpoint value exceeds maxValueBytes (${maxValueBytes})`)
      const now = new Date().toISOString()
      const record = { namespace: input.namespace, key: input.key, version: input.version }
      if (input.fencingToken !== undefined) record.fencingToken = input.fencingToken
      record.value = value.value
      if (input.category !== undefined) record.category = input.category
      for (const k of OWNER) if (input[k] !== undefined) record[k] = input[k]
      record.createdAt = existing ? existing.createdAt : now
      record.updatedAt = now
      if (input.metadata !== undefined) record.metadata = jsonCopy(input.metadata, 'Checkpoint metadata').value
      records.delete(id(input))
      records.set(id(input), record)
      while (records.size > maxRecords) records.delete(records.keys().next().value)
      return copy(record)
    },
    async loadCheckpoint(input) {
      const record = lookup(input)
      return record ? copy(record) : null
    },
    async listCheckpoints(query = {}) {
      throwIfAborted(query.signal)
      checkTexts(query)
      let offset = 0
      if (query.cursor !== undefined) {
        offset = Number(query.cursor)
        if (!Number.isSafeInteger(offset) || offset < 0) throw new CheckpointConflictError('Invalid checkpoint cursor')
      }
      const limit = Math.min(Math.max(1, query.limit ?? 100), maxPageSize)
      const categories = query.category === undefined ? undefined : new Set([].concat(query.category))
      const items = [...records.values()]
        .filter((r) => query.namespace === undefined || r.namespace === query.namespace)
        .filter((r) => query.keyPrefix === undefined || r.key.startsWith(query.keyPrefix))
        .filter((r) => categories === undefined || (r.category !== undefined && categories.has(r.category)))
        .filter((r) => OWNER.every((k) => query[k] === undefined || query[k] === r[k]))
        .sort((a, b) => (a.updatedAt < b.updatedAt ? 1 : a.updatedAt > b.updatedAt ? -1 : a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
      const page = items.slice(offset, offset + limit).map(copy)
      const next = offset + page.length
      return next < items.length ? { items: page, nextCursor: String(next) } : { items: page }
    },
    async deleteCheckpoint(input) {
      return lookup(input) ? records.delete(id(input)) : false
    },
  }
}

function unwrap(text) {
  const out = JSON.parse(text)
  if (!out.error) return out.ok
  const { kind, message } = out.error
  if (kind === 'conflict') throw new CheckpointConflictError(message)
  if (kind === 'range') throw new RangeError(message)
  throw new Error(message)
}

// What crosses to the native store: the key, ownership, and the JSON fields (signal dropped).
function wire(input, what) {
  const out = {}
  for (const k of ['namespace', 'key', 'version', 'expectedVersion', 'fencingToken', 'category', 'tenantId', 'accountId', 'userId', 'cursor', 'limit', 'keyPrefix']) {
    if (input[k] !== undefined) out[k] = input[k]
  }
  if (what) {
    out.value = jsonCopy(input.value, 'Checkpoint value').value
    if (input.metadata !== undefined) out.metadata = jsonCopy(input.metadata, 'Checkpoint metadata').value
  }
  if (input.category !== undefined) out.category = input.category
  return JSON.stringify(out)
}

// The four methods over a native handle whose `call(method, inputJson, now)` answers (or resolves
// to) `{"ok":…}` / `{"error":…}` text. Inputs are checked and copied here, so a host's getters and
// non-JSON values never reach the native side.
function nativeStore(call) {
  return {
    async saveCheckpoint(input) {
      throwIfAborted(input && input.signal)
      requireKey(input)
      return unwrap(await call('save', wire(input, true), new Date().toISOString()))
    },
    async loadCheckpoint(input) {
      throwIfAborted(input && input.signal)
      requireKey(input)
      return unwrap(await call('load', wire(input, false), ''))
    },
    async listCheckpoints(query = {}) {
      throwIfAborted(query.signal)
      checkTexts(query)
      const q = JSON.parse(wire(query, false))
      if (query.cursor !== undefined) q.cursor = String(query.cursor)
      return unwrap(await call('list', JSON.stringify(q), ''))
    },
    async deleteCheckpoint(input) {
      throwIfAborted(input && input.signal)
      requireKey(input)
      return unwrap(await call('delete', wire(input, false), ''))
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
  if (typeof path !== 'string' || path === '') {
    throw invalid(TypeError, 'path must be a file path (an empty path would be a private in-memory database; use createMemoryCheckpointStore() for one process)')
  }
  const synchronous = options.synchronous ?? 'full'
  if (synchronous !== 'full' && synchronous !== 'normal') throw invalid(TypeError, 'synchronous must be "full" or "normal"')
  const handle = native.openSqliteCheckpointStore(
    path,
    positive(options.busyTimeoutMs, 5000, 'busyTimeoutMs'),
    synchronous === 'full',
    positive(options.maxValueBytes, DEFAULT_MAX_VALUE_BYTES, 'maxValueBytes'),
    positive(options.maxPageSize, DEFAULT_MAX_PAGE_SIZE, 'maxPageSize'),
  )
  return {
    ...nativeStore((method, input, now) => handle.call(method, input, now)),
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
  const store = nativeStore(async (method, input, now) => {
    if (closed) throw new Error('checkpoint store is closed')
    const h = handle ?? (await opening)
    return h.call(method, input, now)
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
