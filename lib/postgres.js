'use strict'
// PostgreSQL tool effect store (`prism-tools-native/postgres`). The state machine and every check are the
// native ones every built-in store shares; the database work runs on libuv's thread pool. This file only
// turns a host's key and transition objects into JSON text the native side reads with the same meaning
// it gives JS values (absent, a string, or invalid), and gives native failures their error classes.

const native = require('../binding.js')
const { ToolEffectError, IdentityError } = require('./effects.js')

const PRINCIPALS = ['sponsor', 'owner', 'delegatedFrom']
const MAX_LIST_ITEMS = 4096
const INVALID = 0 // any non-string JSON value reads as "present but invalid"

const isObject = (v) => typeof v === 'object' && v !== null
const text = (v) => (typeof v === 'string' ? v : v === undefined ? undefined : INVALID)

function list(v) {
  if (!Array.isArray(v)) return undefined
  const out = []
  const n = Math.min(v.length, MAX_LIST_ITEMS + 1)
  for (let i = 0; i < n; i++) out.push(typeof v[i] === 'string' ? v[i] : INVALID)
  return out
}

function principal(p) {
  return isObject(p) ? { kind: text(p.kind), id: text(p.id), displayName: text(p.displayName) } : INVALID
}

function addDate(dates, value) {
  if (typeof value !== 'string') return
  const ms = Date.parse(value)
  if (!Number.isNaN(ms)) dates.push([value, ms])
}

function identityWire(id, dates) {
  if (!isObject(id)) return undefined
  const out = {
    tenantId: text(id.tenantId),
    accountId: text(id.accountId),
    userId: text(id.userId),
    principal: id.principal === undefined ? undefined : principal(id.principal),
    scopes: list(id.scopes),
    issuedAt: text(id.issuedAt),
    expiresAt: text(id.expiresAt),
    revokedAt: text(id.revokedAt),
    verified: id.verified === true,
  }
  for (const name of PRINCIPALS) {
    const p = id[name]
    if (p !== undefined) out[name] = principal(p)
  }
  if (id.credentialRefs !== undefined) out.credentialRefs = list(id.credentialRefs) ?? INVALID
  if (id.metadata !== undefined) {
    let bytes = null
    try {
      const json = JSON.stringify(id.metadata)
      bytes = json === undefined ? 0 : Buffer.byteLength(json)
    } catch {
      bytes = null
    }
    out.metadataBytes = bytes
  }
  addDate(dates, id.issuedAt)
  addDate(dates, id.expiresAt)
  addDate(dates, id.revokedAt)
  return out
}

function ownershipWire(o) {
  return isObject(o) ? { tenantId: text(o.tenantId), accountId: text(o.accountId), userId: text(o.userId) } : undefined
}

function failureWire(f) {
  if (f === undefined) return undefined
  return isObject(f) ? { code: text(f.code), reference: text(f.reference) } : INVALID
}

function throwIfAborted(input) {
  const signal = isObject(input) ? input.signal : undefined
  if (!isObject(signal) || signal.aborted !== true) return
  if (signal.reason !== undefined) throw signal.reason
  const e = new Error('This operation was aborted')
  e.name = 'AbortError'
  e.code = 'ABORT_ERR'
  throw e
}

// The JSON text of one store call's input.
function wire(input) {
  if (!isObject(input)) input = {}
  const dates = []
  const out = {
    identity: identityWire(input.identity, dates),
    ownership: ownershipWire(input.ownership),
    key: text(input.key),
    sessionId: text(input.sessionId),
    runId: text(input.runId),
    toolCallId: text(input.toolCallId),
    toolName: text(input.toolName),
    argumentsHash: text(input.argumentsHash),
    claimToken: text(input.claimToken),
    expectedVersion: typeof input.expectedVersion === 'number' ? input.expectedVersion : undefined,
    claimTtlMs: typeof input.claimTtlMs === 'number' ? input.claimTtlMs : undefined,
    maxAttempts: typeof input.maxAttempts === 'number' ? input.maxAttempts : undefined,
    limit: typeof input.limit === 'number' ? input.limit : undefined,
    status: text(input.status),
    resultRef: text(input.resultRef),
    failure: failureWire(input.failure),
    before: text(input.before),
    dates,
  }
  if (input.result !== undefined) {
    try {
      const json = JSON.stringify(input.result)
      if (json === undefined) out.resultUnserializable = true
      else out.resultJson = json
    } catch {
      out.resultUnserializable = true
    }
  }
  addDate(dates, input.before)
  // Non-finite numbers become null in JSON, which the native side reads as "not a number" — as it
  // reads them from JS values.
  return JSON.stringify(out)
}

// Native failures are real Errors with a code; give contract refusals their public classes.
function classify(e) {
  const code = isObject(e) ? e.code : undefined
  if (typeof code === 'string' && code.startsWith('ERR_PRISM_TOOL_EFFECT_') && code !== 'ERR_PRISM_TOOL_EFFECT_STORE') {
    return new ToolEffectError(code, e.message)
  }
  if (code === 'ERR_PRISM_IDENTITY') return new IdentityError(e.message, e.reason)
  return e
}

function connectionFromPool(pool) {
  const o = isObject(pool.options) ? pool.options : {}
  if (o.ssl) {
    throw new TypeError(
      'createPostgresToolEffectStore: the pool uses TLS (ssl), which the native client does not support yet; ' +
        'pass { connectionString } to a server reachable without TLS (e.g. through a local proxy)',
    )
  }
  if (typeof o.password === 'function') {
    throw new TypeError('createPostgresToolEffectStore: a password function is not supported; pass { connectionString }')
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

function readOptions(target, schema) {
  if (typeof target === 'string') return { connectionString: target, schema }
  if (!isObject(target)) {
    throw new TypeError(
      'createPostgresToolEffectStore: pass a pg Pool and a schema, a connection string, or { connectionString, schema }',
    )
  }
  if (typeof target.query === 'function' && typeof target.connect === 'function') {
    return { connectionString: connectionFromPool(target), schema }
  }
  if (typeof target.connectionString !== 'string') {
    throw new TypeError('createPostgresToolEffectStore: options.connectionString must be a string')
  }
  const ms = (name) => {
    const v = target[name]
    if (v === undefined) return undefined
    if (!Number.isInteger(v) || v < 1 || v > 3_600_000) {
      throw new RangeError(`createPostgresToolEffectStore: ${name} must be an integer from 1 to 3600000`)
    }
    return v
  }
  const maxConnections = target.maxConnections
  if (maxConnections !== undefined && (!Number.isInteger(maxConnections) || maxConnections < 1 || maxConnections > 64)) {
    throw new RangeError('createPostgresToolEffectStore: maxConnections must be an integer from 1 to 64')
  }
  return {
    connectionString: target.connectionString,
    schema: target.schema ?? schema,
    maxConnections,
    connectTimeoutMs: ms('connectTimeoutMs'),
    statementTimeoutMs: ms('statementTimeoutMs'),
  }
}

/**
 * A `ToolEffectStore` on PostgreSQL: `createPostgresToolEffectStore(pool, schema)` (upstream's shape: the
 * store connects with the pool's settings), `createPostgresToolEffectStore(connectionString, schema?)` or
 * `createPostgresToolEffectStore({ connectionString, schema?, maxConnections?, connectTimeoutMs?,
 * statementTimeoutMs?, now? })`. Every method returns a promise.
 */
function createPostgresToolEffectStore(target, schemaArg, extra) {
  const options = readOptions(target, schemaArg)
  const schema = options.schema ?? 'prism'
  if (typeof schema !== 'string' || !/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) {
    throw new TypeError(`createPostgresToolEffectStore: schema must match ^[a-z_][a-z0-9_]{0,62}$`)
  }
  const now = isObject(target) && typeof target.now === 'function' ? target.now : isObject(extra) ? extra.now : undefined
  let handle
  let closed = false
  const opening = native.openPostgresToolEffectStore({ ...options, schema }).then(
    (h) => (handle = h),
    (e) => Promise.reject(classify(e)),
  )
  opening.catch(() => {}) // surfaced by the first call (or `ready()`), never as an unhandled rejection

  async function call(method, input) {
    throwIfAborted(input)
    if (closed) throw Object.assign(new Error('tool effect store is closed'), { code: 'ERR_PRISM_TOOL_EFFECT_STORE' })
    const h = handle ?? (await opening)
    const body = wire(input)
    let out
    try {
      out = await h.call(method, body, now === undefined ? undefined : Number(now()))
    } catch (e) {
      throw classify(e)
    }
    return JSON.parse(out)
  }

  const store = {
    async get(key) {
      return (await call('get', key)) ?? undefined
    },
    begin: (input) => call('begin', input),
    markDispatched: (t) => call('markDispatched', t),
    complete: (t) => call('complete', t),
    fail: (t) => call('fail', t),
    markUnknown: (t) => call('markUnknown', t),
    resolveUnknown: (t) => call('resolveUnknown', t),
    cleanup: (input) => call('cleanup', input),
    /** Resolves once connected and migrated; rejects with the connection or migration failure. */
    ready: () => opening.then(() => undefined),
    /** Closes the store's connections. Later calls fail with `ERR_PRISM_TOOL_EFFECT_STORE`. */
    async close() {
      closed = true
      const h = await opening.catch(() => undefined)
      h?.close()
    },
  }
  return store
}

module.exports = { createPostgresToolEffectStore }
