'use strict'
// What dispatch writes about a call: redaction of what leaves it, ledger rows, events, the
// context and progress a tool is handed, and the error a blocked or failed call carries.
const { checkedArguments } = require('./validation.js')
const { isoNow } = require('./clock.js')
const native = require('../binding.js')
const C = require('./dispatch-codes.js')
const { swallow, thenOf } = require('./dispatch-host.js')
const { describeResultContent } = require('./tool-result-content.js')

// Ledger row ids, `tcr_<ms>_<pid>_<counter>` (time and pid in base 36, taken when a block is
// reserved; the counter in decimal), from blocks of the process-wide counter
// (crates/core/src/dispatch/clock.rs): no Node-API crossing per row, no id handed out twice, and no base-36
// conversion per row (V8's radix formatting was a tenth of a dispatch with a ledger).
const ROW_BLOCK = 1024
let rowNext = 0
let rowEnd = 0
let rowPrefix = ''
function rowId() {
  if (rowNext === rowEnd) {
    const [first, pid] = native.dispatchRowBlock(ROW_BLOCK)
    rowNext = first
    rowEnd = first + ROW_BLOCK
    rowPrefix = `tcr_${Date.now().toString(36)}_${pid.toString(36)}_`
  }
  return rowPrefix + rowNext++
}

// The `progress` a tool gets when nobody observes it: tagged, so a tool whose progress costs
// something (the MCP bridge asks its server for notifications) can skip it.
const noProgress = () => {}
noProgress[Symbol.for('prism-tools-native.noProgress')] = true

// ----- redaction ------------------------------------------------------------------------------
function redact(h, v) {
  let out = v
  if (h.nativeRedactor !== undefined) out = redactCopy(h, out)
  if (h.hostRedactor !== undefined) {
    try {
      out = h.hostRedactor.redact(out)
    } catch {
      // A redactor that fails must not let the unredacted value through.
      out = '[REDACTED]'
    }
  }
  return out
}
const anyRedaction = (h) => h.nativeRedactor !== undefined || h.hostRedactor !== undefined
const hostRedact = (h, v) => (h.hostRedactor !== undefined ? redact({ hostRedactor: h.hostRedactor }, v) : v)
const errorInfo = (h, thrown) => hostRedact(h, native.errorToErrorInfo(thrown, h.secrets))

// ----- rows, events, the tool's context ---------------------------------------------------------
function makeRow(h, st, status, finished) {
  const args = st.safeArgs !== undefined && st.safeArgs !== null && typeof st.safeArgs === 'object' ? st.safeArgs : {}
  const r = {
    id: rowId(),
    sessionId: st.ctx.sessionId,
    runId: st.ctx.runId,
    toolCallId: safeIds(h, st)[0],
    name: safeIds(h, st)[1],
    arguments: args,
    status,
    startedAt: st.startedAt,
    redacted: h.redactor !== undefined,
  }
  const o = h.ownership
  if (o !== undefined && typeof o === 'object') {
    if (o.tenantId != null) r.tenantId = o.tenantId
    if (o.accountId != null) r.accountId = o.accountId
    if (o.userId != null) r.userId = o.userId
  }
  if (finished) {
    r.finishedAt = isoNow()
    if (finished.reason !== undefined) r.reason = finished.reason
    // Media blocks are described (kind, type, size, hash), never stored with their bytes.
    r.result = describeResultContent(st.result)
  }
  return r
}

// Calls emit(event); a thenable to wait for, or undefined. Failures never matter.
function emit(h, event) {
  if (typeof h.emit !== 'function') return undefined
  try {
    const v = h.emit(event)
    return thenOf(v) ? v : undefined
  } catch {
    return undefined
  }
}

function append(h, row) {
  const ledger = h.ledger
  let f
  try {
    f = ledger.appendToolCall
  } catch {
    return undefined
  }
  if (typeof f !== 'function') return undefined
  try {
    if (h.hostRedactor !== undefined) row = h.hostRedactor.redact(row)
    const v = f.call(ledger, row)
    return thenOf(v) ? v : undefined
  } catch {
    return undefined
  }
}

const safeArgs = (h, st) => {
  if (st.safeArgs !== undefined) return st.safeArgs
  const sc = st.safeCall
  // The redacted call already holds the redacted arguments (secrets alone redact both alike).
  if (sc !== undefined && h.hostRedactor === undefined && sc !== null && typeof sc === 'object' && sc.arguments !== undefined) {
    st.safeArgs = sc.arguments
  } else {
    // Without redaction, still a copy: a row must not hold the live arguments a tool may mutate.
    const a = st.call.arguments ?? {}
    st.safeArgs = anyRedaction(h) ? redact(h, a) : plainCopy(a)
  }
  return st.safeArgs
}
// The copy redactSecrets(v) makes without secrets, in JS for plain data (arrays, objects of this
// realm's Object.prototype, primitives); anything else — another prototype, a `__proto__` key,
// a cycle, the depth bound, a read that throws — goes to the native walk, which handles it.
const NOT_PLAIN = Symbol('not plain')
// Containers left to copy: a cycle or shared subtrees would otherwise copy (exponentially) down to
// the depth bound, and a large value is left to the native walk.
let copyBudget = 0
// While redacting: the secrets to look for, the native redactor, and string scans left.
let copyMatch
let copyRedactor
let copyScans = 0
function copyPlain(v, depth) {
  if (typeof v === 'string' && copyMatch !== undefined) {
    const held = holdsSecret(v)
    return held === false ? v : held ? copyRedactor.redact(v) : NOT_PLAIN
  }
  if (v === null || typeof v !== 'object') return v
  if (depth >= 32 || --copyBudget < 0) return NOT_PLAIN
  if (Array.isArray(v)) {
    const n = v.length
    const out = new Array(n)
    for (let i = 0; i < n; i++) {
      const c = copyPlain(v[i], depth + 1)
      if (c === NOT_PLAIN) return NOT_PLAIN
      out[i] = c
    }
    return out
  }
  if (Object.getPrototypeOf(v) !== Object.prototype) return NOT_PLAIN
  const out = {}
  for (const k of Object.keys(v)) {
    if (k === '__proto__' || (copyMatch !== undefined && holdsSecret(k) !== false)) return NOT_PLAIN
    const x = v[k]
    // As the native walk: a function is not data (and an own toJSON must not survive).
    if (typeof x === 'function') continue
    const c = copyPlain(x, depth + 1)
    if (c === NOT_PLAIN) return NOT_PLAIN
    out[k] = c
  }
  return out
}
function plainCopy(v) {
  let c = NOT_PLAIN
  try {
    copyBudget = 4096
    copyMatch = undefined
    c = copyPlain(v, 0)
  } catch {}
  return c === NOT_PLAIN ? native.redactSecrets(v, undefined) : c
}
// The secret-redacted copy the native redactor makes, with the walk in JS for plain data: only a
// string holding a secret crosses to the native matcher (one call, the same replacement). A key
// holding a secret, or too many strings × secrets to look through, takes the native walk.
function redactCopy(h, v) {
  if (typeof v === 'string') return h.nativeRedactor.redact(v)
  let c = NOT_PLAIN
  if (h.secretMatch !== undefined) {
    try {
      copyBudget = 4096
      copyScans = 65536
      copyMatch = h.secretMatch
      copyRedactor = h.nativeRedactor
      c = copyPlain(v, 0)
    } catch {}
    copyMatch = undefined
    copyRedactor = undefined
  }
  return c === NOT_PLAIN ? h.nativeRedactor.redact(v) : c
}
function holdsSecret(text) {
  copyScans -= copyMatch.length
  if (copyScans < 0) return undefined
  for (let i = 0; i < copyMatch.length; i++) if (text.includes(copyMatch[i])) return true
  return false
}
// The call's id and name as they may leave the dispatch (events, rows, a blocked result): a
// model-chosen id or name may hold a secret, so with redaction on they are redacted, once a call.
const safeIds = (h, st) => {
  if (st.safeIds === undefined) {
    const { id, name } = st.call
    st.safeIds = anyRedaction(h) ? [safeText(h, id), safeText(h, name)] : [id, name]
  }
  return st.safeIds
}
// A string as it may leave the dispatch. With only known secrets (no host redactor), one that
// holds none is returned as is without a crossing; anything else goes through `redact`.
function safeText(h, v) {
  if (typeof v !== 'string') return v
  const secrets = h.secretMatch
  if (h.hostRedactor === undefined && secrets !== undefined) {
    let held = false
    for (let i = 0; i < secrets.length && !held; i++) held = v.includes(secrets[i])
    if (!held) return v
  }
  return redact(h, v)
}
const safeCall = (h, st) => {
  if (st.safeCall === undefined) st.safeCall = anyRedaction(h) ? redact(h, st.call) : st.call
  return st.safeCall
}

// The `progress(progress?, metadata?)` a tool receives.
function progressSink(h, st) {
  const ctx = st.ctx
  const observers = h.emit !== undefined || h.ledger !== undefined
  if (!observers && typeof ctx.progress !== 'function') return noProgress
  return (progress, metadata) => {
    if (typeof ctx.progress === 'function') {
      try {
        ctx.progress(progress, metadata)
      } catch {}
    }
    if (!observers) return
    const p = anyRedaction(h) ? redact(h, progress) : progress
    const m = anyRedaction(h) ? redact(h, metadata) : metadata
    if (typeof h.emit === 'function') {
      try {
        const [id, name] = safeIds(h, st)
        swallow(h.emit({ type: 'tool_execution_progress', sessionId: ctx.sessionId, runId: ctx.runId, toolCallId: id, name, toolName: name, progress: p, metadata: m }))
      } catch {}
    }
    if (h.ledger !== undefined && h.ledger !== null && typeof h.ledger === 'object' && typeof h.ledger.appendToolCall === 'function') {
      try {
        const row = makeRow(h, { ...st, safeArgs: safeArgs(h, st) }, 'started')
        row.progress = p
        row.progressMetadata = m
        row.progressAt = isoNow()
        swallow(h.ledger.appendToolCall(row))
      } catch {}
    }
  }
}

function toolContext(h, st) {
  const ctx = st.ctx
  const toolCallId = st.call.id
  const progress = progressSink(h, st)
  // Properties first, then the caller's, then ours again: V8 keeps this shape on its fast path.
  const out = { toolCallId, progress, ...ctx }
  out.toolCallId = toolCallId
  out.progress = progress
  if (st.identity !== undefined && st.identity !== null) out.identity = st.identity
  if (st.idempotencyKey !== undefined) out.idempotencyKey = st.idempotencyKey
  else if (out.idempotencyKey !== undefined) delete out.idempotencyKey
  if (st.checked !== undefined) checkedArguments.set(out, st.checked)
  return out
}

// ----- the error a blocked or failed call carries ------------------------------------------------

function buildError(h, st, d) {
  switch (d.kind) {
    case C.E_PLAIN:
      return hostRedact(h, { message: d.message })
    case C.E_NAMED: {
      const e = { name: d.name, message: d.message, code: d.code }
      if (d.cause !== undefined) e.cause = d.cause
      else if (d.causeThrown) e.cause = native.errorToErrorInfo(st.thrown, h.secrets).message
      return hostRedact(h, e)
    }
    case C.E_THROWN:
      return errorInfo(h, st.thrown)
    case C.E_PROVIDER_ARGUMENTS: {
      const a = st.call.argumentsError
      return typeof a === 'object' ? redact(h, a) : native.errorToErrorInfo(a, h.secrets)
    }
    default:
      return hostRedact(h, native.redactSecrets(st.thrown, h.secrets))
  }
}

module.exports = { redact, anyRedaction, hostRedact, errorInfo, makeRow, emit, append, safeArgs, safeCall, safeIds, plainCopy, redactCopy, progressSink, toolContext, buildError }
