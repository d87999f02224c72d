'use strict'
// PostgreSQL tool effect store, run ledger and checkpoint store (`prism-tools-native/postgres`). The
// state machine and every check are the native ones every built-in store shares; the database work runs
// on libuv's thread pool. The effect store's face is effect-store-wire.js's, shared with SQLite's.

const native = require('../binding.js')
const { poolStoreFace, isObject } = require('./effect-store-wire.js')
const { openPostgresCheckpoints } = require('./checkpoints.js')
const { rowText, kindIndex, KIND_INDEX } = require('./ledger.js')

function connectionFromPool(pool, who) {
  const o = isObject(pool.options) ? pool.options : {}
  if (o.ssl) {
    throw new TypeError(
      `${who}: the pool uses TLS (ssl), which the native client does not support yet; ` +
        'pass { connectionString } to a server reachable without TLS (e.g. through a local proxy)',
    )
  }
  if (typeof o.password === 'function') {
    throw new TypeError(`${who}: a password function is not supported; pass { connectionString }`)
  }
  if (typeof o.connectionString === 'string') return o.connectionString
  const enc = encodeURIComponent
  const user = o.user ?? process.env.PGUSER ?? 'postgres'
  const password = o.password ?? process.env.PGPASSWORD
  const host = o.host ?? process.env.PGHOST ?? '127.0.0.1'
  const port = o.port ?? process.env.PGPORT ?? 5432
  const database = o.database ?? process.env.PGDATABASE ?? user
  const auth = password === undefined ? enc(user) : `${enc(user)}:${enc(String(password))}`
  const hostPart = String(host).startsWith('/') ? `?host=${enc(host)}` : ''
  return hostPart
    ? `postgres://${auth}@localhost:${port}/${enc(database)}${hostPart}`
    : `postgres://${auth}@${host}:${port}/${enc(database)}`
}

function checkSchema(schema, who) {
  if (typeof schema !== 'string' || !/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) {
    throw new TypeError(`${who}: schema must match ^[a-z_][a-z0-9_]{0,62}$`)
  }
  return schema
}

function readOptions(target, schema, who) {
  if (typeof target === 'string') return { connectionString: target, schema }
  if (!isObject(target)) {
    throw new TypeError(
      `${who}: pass a pg Pool and a schema, a connection string, or { connectionString, schema }`,
    )
  }
  if (typeof target.query === 'function' && typeof target.connect === 'function') {
    return { connectionString: connectionFromPool(target, who), schema }
  }
  if (typeof target.connectionString !== 'string') {
    throw new TypeError(`${who}: options.connectionString must be a string`)
  }
  const ms = (name) => {
    const v = target[name]
    if (v === undefined) return undefined
    if (!Number.isInteger(v) || v < 1 || v > 3_600_000) {
      throw new RangeError(`${who}: ${name} must be an integer from 1 to 3600000`)
    }
    return v
  }
  const maxConnections = target.maxConnections
  if (maxConnections !== undefined && (!Number.isInteger(maxConnections) || maxConnections < 1 || maxConnections > 64)) {
    throw new RangeError(`${who}: maxConnections must be an integer from 1 to 64`)
  }
  return {
    connectionString: target.connectionString,
    schema: target.schema ?? schema,
    maxConnections,
    connectTimeoutMs: ms('connectTimeoutMs'),
    statementTimeoutMs: ms('statementTimeoutMs'),
  }
}

// The most any store may keep of one result (`maxResultBytes`), as in the built-in stores.
const MAX_RESULT_BYTES_CEILING = 16 * 1024 * 1024

/**
 * A `ToolEffectStore` on PostgreSQL: `createPostgresToolEffectStore(pool, schema)` (upstream's shape: the
 * store connects with the pool's settings), `createPostgresToolEffectStore(connectionString, schema?)` or
 * `createPostgresToolEffectStore({ connectionString, schema?, maxConnections?, connectTimeoutMs?,
 * statementTimeoutMs?, maxResultBytes?, claimTtlMs?, now? })`. Every method returns a promise. A result larger than
 * `maxResultBytes` (default 64 KiB, at most 16 MiB) completes its record with `resultOmitted`.
 */
function createPostgresToolEffectStore(target, schemaArg, extra) {
  const options = readOptions(target, schemaArg, 'createPostgresToolEffectStore')
  const schema = checkSchema(options.schema ?? 'prism', 'createPostgresToolEffectStore')
  const now = isObject(target) && typeof target.now === 'function' ? target.now : isObject(extra) ? extra.now : undefined
  const maxResultBytes = isObject(target) ? target.maxResultBytes : isObject(extra) ? extra.maxResultBytes : undefined
  if (maxResultBytes !== undefined && (!Number.isInteger(maxResultBytes) || maxResultBytes < 1 || maxResultBytes > MAX_RESULT_BYTES_CEILING)) {
    throw new RangeError(`createPostgresToolEffectStore: maxResultBytes must be an integer from 1 to ${MAX_RESULT_BYTES_CEILING}`)
  }
  // The lease of a claim whose `begin` names none: how long a claim left `pending` (its worker died,
  // the server restarted before it was dispatched) blocks its key.
  const claimTtlMs = isObject(target) ? target.claimTtlMs : isObject(extra) ? extra.claimTtlMs : undefined
  if (claimTtlMs !== undefined && (!Number.isInteger(claimTtlMs) || claimTtlMs < 1 || claimTtlMs > 3_600_000)) {
    throw new RangeError('createPostgresToolEffectStore: claimTtlMs must be an integer from 1 to 3600000')
  }
  const opening = native.openPostgresToolEffectStore({ ...options, schema, maxResultBytes, claimTtlMs })
  return poolStoreFace(opening, now)
}

// ----- run ledger --------------------------------------------------------------------------------

// Rows are bounded by ledger.js's rowText and cross with its kind numbers, as every built-in ledger's do.
const KINDS = { appendToolCall: KIND_INDEX.tool_call, appendRun: KIND_INDEX.run, appendEvent: KIND_INDEX.event, appendUsage: KIND_INDEX.usage }

function ledgerOptions(target, schema) {
  const o = readOptions(target, schema, 'createPostgresRunLedger')
  const int = (name, min, max) => {
    const v = isObject(target) ? target[name] : undefined
    if (v === undefined) return undefined
    if (!Number.isInteger(v) || v < min || v > max) {
      throw new RangeError(`createPostgresRunLedger: ${name} must be an integer from ${min} to ${max}`)
    }
    return v
  }
  return {
    connectionString: o.connectionString,
    schema: o.schema ?? 'prism',
    connectTimeoutMs: o.connectTimeoutMs,
    statementTimeoutMs: o.statementTimeoutMs,
    batchSize: int('batchSize', 1, 10_000),
    flushIntervalMs: int('flushIntervalMs', 0, 60_000),
    maxPendingRows: int('maxPendingRows', 1, 10_000_000),
  }
}

/**
 * A `RunLedger` (and upstream's `FlushableRunLedger`) on PostgreSQL, shared by many workers:
 * `createPostgresRunLedger(pool | connectionString | { connectionString, schema?, batchSize?,
 * flushIntervalMs?, maxPendingRows?, … }, schema?)`. Appends return at once; a writer thread inserts
 * them in batches, in append order. `flush()` resolves once everything appended is committed.
 */
function createPostgresRunLedger(target, schemaArg) {
  const options = ledgerOptions(target, schemaArg)
  checkSchema(options.schema, 'createPostgresRunLedger')
  let handle
  let closed = false
  // Rows appended before the connection is open wait here, in order.
  const early = []
  const opening = native.openPostgresRunLedger(options).then((h) => {
    handle = h
    for (const [kind, json] of early.splice(0)) h.append(kind, json)
    return h
  })
  opening.catch(() => {})
  const onExit = () => {
    try {
      handle?.closeBlocking(5000)
    } catch {
      // the process is ending; the rows not written are lost, as documented
    }
  }
  process.once('exit', onExit)

  const ledger = { durability: 'buffered' }
  for (const [method, kind] of Object.entries(KINDS)) {
    ledger[method] = (record) => {
      if (closed) throw Object.assign(new Error('run ledger is closed'), { code: 'ERR_PRISM_LEDGER' })
      const json = rowText(record)
      if (handle) handle.append(kind, json)
      else early.push([kind, json])
    }
  }
  Object.assign(ledger, {
    /** `{ accepted, flushed, buffered }` right now. */
    status() {
      const s = handle ? handle.status() : { accepted: 0, flushed: 0, buffered: 0 }
      return { ...s, accepted: s.accepted + early.length, buffered: s.buffered + early.length }
    },
    /** Resolves once every row appended so far is committed (rejects after `timeoutMs`, default 30 s). */
    async flush(timeoutMs = 30_000) {
      const h = await opening
      return h.flush(timeoutMs)
    },
    /** The records of one kind (default `tool_call`) in append order. */
    async list(kind = 'tool_call', limit = Infinity) {
      const index = kindIndex(kind)
      const h = await opening
      return (await h.list(index, limit)).map((text) => JSON.parse(text))
    },
    ready: () => opening.then(() => undefined),
    /** Flushes (within `timeoutMs`), then stops the writer. */
    async close(timeoutMs = 30_000) {
      closed = true
      process.removeListener('exit', onExit)
      const h = await opening
      await h.close(timeoutMs)
    },
    /** `dispose({ flush: false })` stops without waiting for unwritten rows (they are dropped). */
    async dispose(o) {
      if (o?.flush !== false) return ledger.close()
      await ledger.close(0).catch(() => {})
    },
  })
  return ledger
}

// ----- checkpoint store --------------------------------------------------------------------------

/**
 * A `CheckpointStore` on PostgreSQL, for durable agent runs resumed by any worker:
 * `createPostgresCheckpointStore(pool, schema?)`, `(connectionString, schema?)` or
 * `({ connectionString, schema?, maxConnections?, connectTimeoutMs?, statementTimeoutMs?,
 * maxValueBytes?, maxPageSize? })`. Every method returns a promise; `ready()` and `close()` as the
 * effect store's.
 */
function createPostgresCheckpointStore(target, schemaArg) {
  const who = 'createPostgresCheckpointStore'
  const o = readOptions(target, schemaArg, who)
  const schema = checkSchema(o.schema ?? 'prism', who)
  const bounds = isObject(target) && typeof target.query !== 'function' ? target : {}
  return openPostgresCheckpoints({ ...o, schema }, bounds)
}

module.exports = { createPostgresToolEffectStore, createPostgresRunLedger, createPostgresCheckpointStore }
