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

module.exports = { noop, toolContext, guardrailSignal }
