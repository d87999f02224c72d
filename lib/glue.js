'use strict'
// Object shapes the native dispatch asks for. A JS literal builds an object cheaper than setting its
// properties one by one from Rust (see bench/RESULTS.md); these functions assemble, never decide.

const noop = () => {}

// The context a tool receives: the caller's context with this call's id and a wrapped progress.
// A caller-supplied idempotencyKey never reaches the tool; a derived one does.
// `observers`: the dispatch has emit or a ledger; without them and without a caller progress, the
// tool's progress goes nowhere and costs nothing.
function toolContext(ctx, toolCallId, idempotencyKey, sink, hooks, args, name, startedAt, identity, observers) {
  const progress =
    !observers && typeof ctx.progress !== 'function'
      ? noop
      : (value, metadata) => sink(hooks, ctx, toolCallId, name, args, startedAt, value, metadata)
  // Properties first, then the caller's, then ours again: V8 keeps this shape on its fast path,
  // where `{ ...ctx, toolCallId }` falls to a slow one (≈ 13× slower, bench/RESULTS.md).
  const out = { toolCallId, progress, ...ctx }
  out.toolCallId = toolCallId
  out.progress = progress
  if (identity !== undefined && identity !== null) out.identity = identity
  if (idempotencyKey !== undefined) out.idempotencyKey = idempotencyKey
  else if (out.idempotencyKey !== undefined) delete out.idempotencyKey
  return out
}

// One AbortController per guardrail stage, following the caller's signal when there is one.
function guardrailSignal(callerSignal) {
  const controller = new AbortController()
  const signal = callerSignal ? AbortSignal.any([callerSignal, controller.signal]) : controller.signal
  return [controller, signal]
}

// JSON text of a value made only of plain objects, arrays and primitives, for the native secret
// scan: a value whose text holds no secret needs no redacted copy. Anything else (class instances,
// Map, Set, Date, toJSON, cycles, BigInt, very deep nesting) gives undefined, and the native side
// walks it in full. This only serialises; the native side decides.
const NOT_PLAIN = new Error('not plain JSON')
function plainOnly(key, value) {
  const raw = this[key]
  if (raw !== null && typeof raw === 'object') {
    const proto = Object.getPrototypeOf(raw)
    if ((proto !== Object.prototype && proto !== null && !Array.isArray(raw)) || typeof raw.toJSON === 'function') throw NOT_PLAIN
  }
  return value
}
function jsonForScan(value) {
  try {
    return JSON.stringify(value, plainOnly)
  } catch {
    return undefined
  }
}

// Ledger rows and lifecycle events, from fields the native dispatch computed.
function row(id, sessionId, runId, toolCallId, name, args, status, startedAt, redacted, ownership, finishedAt, reason, result) {
  const r = { id, sessionId, runId, toolCallId, name, arguments: args, status, startedAt, redacted }
  if (ownership !== undefined) {
    if (ownership.tenantId != null) r.tenantId = ownership.tenantId
    if (ownership.accountId != null) r.accountId = ownership.accountId
    if (ownership.userId != null) r.userId = ownership.userId
  }
  if (finishedAt !== undefined) r.finishedAt = finishedAt
  if (reason !== undefined) r.reason = reason
  if (result !== undefined) r.result = result
  return r
}

const startedEvent = (sessionId, runId, call) => ({ type: 'tool_execution_started', sessionId, runId, call })
const finishedEvent = (sessionId, runId, result, durationMs) => ({
  type: 'tool_execution_finished',
  sessionId,
  runId,
  result,
  metadata: { durationMs, status: 'finished' },
})
const errorEvent = (sessionId, runId, call, error, durationMs) => ({
  type: 'tool_execution_error',
  sessionId,
  runId,
  call,
  error,
  metadata: { durationMs, status: 'error' },
})
const blockedEvent = (sessionId, runId, toolCallId, name, reason, error, durationMs) => ({
  type: 'tool_execution_blocked',
  sessionId,
  runId,
  toolCallId,
  name,
  reason,
  error,
  metadata: { durationMs, status: 'blocked' },
})
const errorResult = (toolCallId, name, error) => ({ toolCallId, name, error })

module.exports = {
  noop,
  toolContext,
  guardrailSignal,
  row,
  startedEvent,
  finishedEvent,
  errorEvent,
  blockedEvent,
  errorResult,
  jsonForScan,
}
