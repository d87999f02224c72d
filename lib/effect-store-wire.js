'use strict'
// The stores whose operations run on libuv's thread pool (SQLite, PostgreSQL): a host's key and
// transition objects become JSON text the native side reads with the same meaning it gives JS values
// (absent, a string, or invalid), and native failures get their error classes. The state machine and
// every check are the native ones every built-in store shares.

const { ToolEffectError, IdentityError } = require('./effect-errors.js')

const MAX_LIST_ITEMS = 4096
const INVALID = 0 // any non-string JSON value reads as "present but invalid"

const isObject = (v) => typeof v === 'object' && v !== null
const text = (v) => (typeof v === 'string' ? v : v === undefined ? undefined : INVALID)
// The JSON.stringify replacer every wire text is written with: a lone surrogate becomes U+FFFD, as
// Node-API's UTF-8 conversion makes it, so the text means the same on both sides and is always
// valid JSON. Applied when the text is written, not at each read: a read compared with the last one
// (identityChecker) needs no scan.
const wellFormedText = (_key, v) => (typeof v === 'string' && !v.isWellFormed() ? v.toWellFormed() : v)

// At most MAX_LIST_ITEMS items are read; a longer list holds one invalid item after them.
function list(v) {
  if (!Array.isArray(v)) return undefined
  const out = []
  const length = v.length
  const n = Math.min(length, MAX_LIST_ITEMS)
  for (let i = 0; i < n; i++) {
    const item = v[i]
    out.push(typeof item === 'string' ? item : INVALID)
  }
  if (length > MAX_LIST_ITEMS) out.push(INVALID)
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

// The timestamps of an identity's wire value as `Date.parse` reads them, for the forms only it knows.
function identityDates(dates, id) {
  if (id === undefined) return
  addDate(dates, id.issuedAt)
  addDate(dates, id.expiresAt)
  addDate(dates, id.revokedAt)
}

// The byte length of a value's JSON; 0 when it has none, null when it cannot be serialised.
function jsonBytes(value) {
  try {
    const json = JSON.stringify(value)
    return json === undefined ? 0 : Buffer.byteLength(json)
  } catch {
    return null
  }
}

/**
 * An identity as the JSON value the native side reads (crates/core/src/effects/wire.rs), each field
 * read once and in the binding's own order (IDENTITY_FIELDS in crates/node/src/effects/read.rs):
 * every top-level field first, then what they hold. A getter sees the same reads either way.
 */
function identityWire(id) {
  if (!isObject(id)) return undefined
  const sponsor = id.sponsor
  const owner = id.owner
  const delegatedFrom = id.delegatedFrom
  const credentialRefs = id.credentialRefs
  const metadata = id.metadata
  const tenantId = id.tenantId
  const accountId = id.accountId
  const userId = id.userId
  const p = id.principal
  const scopes = id.scopes
  const issuedAt = id.issuedAt
  const expiresAt = id.expiresAt
  const revokedAt = id.revokedAt
  const verified = id.verified
  const out = {}
  if (sponsor !== undefined) out.sponsor = principal(sponsor)
  if (owner !== undefined) out.owner = principal(owner)
  if (delegatedFrom !== undefined) out.delegatedFrom = principal(delegatedFrom)
  if (credentialRefs !== undefined) out.credentialRefs = list(credentialRefs) ?? INVALID
  if (metadata !== undefined) out.metadataBytes = jsonBytes(metadata)
  out.tenantId = text(tenantId)
  out.accountId = text(accountId)
  out.userId = text(userId)
  if (p !== undefined) out.principal = principal(p)
  out.scopes = list(scopes)
  out.issuedAt = text(issuedAt)
  out.expiresAt = text(expiresAt)
  out.revokedAt = text(revokedAt)
  out.verified = verified === true
  return out
}

function ownershipWire(o) {
  return isObject(o) ? { tenantId: text(o.tenantId), accountId: text(o.accountId), userId: text(o.userId) } : undefined
}

// Equality of the wire values identityWire and ownershipWire write, field by field (a field left out
// and one written as undefined are the same JSON). Every field identityWire writes is compared:
// __test__/effect-store-wire.test.ts changes each one and expects a new text.
const sameList = (a, b) => {
  if (a === b) return true
  if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false
  return true
}
const samePrincipal = (a, b) => a === b || (isObject(a) && isObject(b) && a.kind === b.kind && a.id === b.id && a.displayName === b.displayName)
const sameOwnership = (a, b) => a === b || (isObject(a) && isObject(b) && a.tenantId === b.tenantId && a.accountId === b.accountId && a.userId === b.userId)

function sameIdentity(a, b) {
  if (a === undefined || b === undefined) return a === b
  return (
    a.tenantId === b.tenantId &&
    a.accountId === b.accountId &&
    a.userId === b.userId &&
    a.issuedAt === b.issuedAt &&
    a.expiresAt === b.expiresAt &&
    a.revokedAt === b.revokedAt &&
    a.verified === b.verified &&
    a.metadataBytes === b.metadataBytes &&
    samePrincipal(a.principal, b.principal) &&
    sameList(a.scopes, b.scopes) &&
    samePrincipal(a.sponsor, b.sponsor) &&
    samePrincipal(a.owner, b.owner) &&
    samePrincipal(a.delegatedFrom, b.delegatedFrom) &&
    sameList(a.credentialRefs, b.credentialRefs)
  )
}

/**
 * Dispatch's identity check, read: `check(identity, ownership)` reads the identity (and the
 * ownership it must own: `undefined` asks for none, `null` or a non-object is an empty one) once,
 * and answers the binding's handle for what it read (`make(text)`, `identityCheck` in
 * crates/node/src/effects/identity.rs, over crates/core/src/effects/wire.rs `IdentityCheck`). The
 * handle is made again only when the values read differ from the last ones: a run's calls with one
 * identity cross it once, and a changed field is seen at the next call.
 */
function identityChecker(make) {
  let last
  return function check(identity, ownership) {
    const id = identityWire(identity)
    const own = ownership === undefined ? undefined : (ownershipWire(ownership) ?? {})
    if (last !== undefined && sameIdentity(last.id, id) && sameOwnership(last.own, own)) return last.handle
    const dates = []
    identityDates(dates, id)
    const handle = make(JSON.stringify({ identity: id, ownership: own, dates }, wellFormedText))
    last = { id, own, handle }
    return handle
  }
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
    identity: identityWire(input.identity),
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
  identityDates(dates, out.identity)
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
  return JSON.stringify(out, wellFormedText)
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

module.exports = { poolStoreFace, isObject, identityChecker }
