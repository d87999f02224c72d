'use strict'
// The stores whose operations run on libuv's thread pool (SQLite, PostgreSQL): a host's key and
// transition objects become JSON text the native side reads with the same meaning it gives JS values
// (absent, a string, or invalid), and native failures get their error classes. The state machine and
// every check are the native ones every built-in store shares.

const { ToolEffectError, IdentityError } = require('./effect-errors.js')

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

const closedError = () => Object.assign(new Error('tool effect store is closed'), { code: 'ERR_PRISM_TOOL_EFFECT_STORE' })

/**
 * A ToolEffectStore over a native handle whose `call(method, inputJson, now)` runs on the thread pool:
 * `opening` is the handle, or a promise of it (a store that connects first). `now` is the host's clock
 * (`options.now`), read on the JS thread at each call. Every method returns a promise.
 */
function poolStoreFace(opening, now) {
  let handle = typeof opening?.then === 'function' ? undefined : opening
  let closed = false
  const ready =
    handle !== undefined
      ? Promise.resolve(handle)
      : opening.then(
          (h) => (handle = h),
          (e) => Promise.reject(classify(e)),
        )
  ready.catch(() => {}) // surfaced by the first call (or `ready()`), never as an unhandled rejection

  function clock() {
    if (now === undefined) return undefined
    const t = Number(now())
    if (!Number.isFinite(t)) throw new TypeError('options.now must return finite epoch milliseconds')
    return t
  }

  async function call(method, input) {
    throwIfAborted(input)
    if (closed) throw closedError()
    const h = handle ?? (await ready)
    const body = wire(input)
    let out
    try {
      out = await h.call(method, body, clock())
    } catch (e) {
      throw classify(e)
    }
    return JSON.parse(out)
  }

  return {
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
    /** Resolves once the store is open (connected and migrated); rejects with why it is not. */
    ready: () => ready.then(() => undefined),
    /** Closes the store's file or connections. Later calls fail with `ERR_PRISM_TOOL_EFFECT_STORE`. */
    async close() {
      closed = true
      const h = await ready.catch(() => undefined)
      h?.close()
    },
  }
}

module.exports = { poolStoreFace, isObject }
