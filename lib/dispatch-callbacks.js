'use strict'
// The host code each command runs: the hooks (middleware, lookup, identity, policies, validation,
// beforeExecute), the effect store's claim and transitions, the tool itself, and the lifecycle
// events and ledger rows. A callback is made per command so that the loop performs each the same way.
const native = require('../binding.js')
const C = require('./dispatch-codes.js')
const { invalidOption, STEPPED } = require('./dispatch-host.js')
const { beginCallback, markDispatchedCallback, completeCallback } = require('./dispatch-effects.js')
const { emit, append, makeRow, safeArgs, safeCall, safeIds, toolContext } = require('./dispatch-records.js')
const { identityChecker } = require('./effect-store-wire.js')
const { describeResultContent } = require('./tool-result-content.js')

const { dispatchDetail } = native
const identityCheck = identityChecker(native.identityCheck)

function middlewareCallback(h, st, k) {
  const mw = h.middleware
  const run = typeof mw.runSync === 'function' ? mw.runSync : mw.run
  if (typeof run !== 'function') throw invalidOption(TypeError, 'middleware must be a MiddlewareRegistry with run(hook, value)')
  return k === C.K_CALL_MIDDLEWARE ? () => run.call(mw, 'tool_call', st.call) : () => run.call(mw, 'tool_result', st.result)
}

// The identity is read once, here, in JS (lib/effect-store-wire.js): the binding gets a handle.
// With an effect store its snapshot serves the key and the claim.
function identityCallback(h, st, s) {
  if (h.effectStore !== undefined) {
    return () => {
      st.next = native.dispatchIdentity(s, identityCheck(st.identity, h.ownership))
      st.effectRead = true
      return STEPPED
    }
  }
  return () => native.assertDispatchIdentity(identityCheck(st.identity, h.ownership))
}

/** A trust or permission check; null when the policy has no `check`. */
function policyCallback(h, st, k) {
  const trust = k === C.K_CHECK_TRUST
  const policy = trust ? h.trust : h.permission
  const check = policy.check
  if (typeof check !== 'function') return null
  const req = trust
    ? { kind: 'tool', target: st.name, capability: 'execute', metadata: st.ctx.metadata }
    : { kind: 'tool', action: 'execute', target: st.name, metadata: st.ctx.metadata }
  return () => check.call(policy, req)
}

/**
 * The host callback of command `k`; null when the host has none to run (a policy without `check`,
 * a tool without `execute`), undefined when the command is not a host callback.
 */
function callbackFor(h, st, s, k) {
  switch (k) {
    case C.K_CALL_MIDDLEWARE:
    case C.K_RESULT_MIDDLEWARE:
      return middlewareCallback(h, st, k)
    case C.K_LOOKUP: {
      const r = h.registry
      const get = r.get
      if (typeof get !== 'function') throw invalidOption(TypeError, 'dispatchToolCall: registry must have get(name)')
      return () => get.call(r, st.name)
    }
    case C.K_CHECK_IDENTITY:
      return identityCallback(h, st, s)
    case C.K_CHECK_TRUST:
    case C.K_CHECK_PERMISSION:
      return policyCallback(h, st, k)
    case C.K_VALIDATE:
      if (typeof h.validate !== 'function') throw invalidOption(TypeError, 'validate must be a function (tool, args, ctx)')
      return () => h.validate(st.tool, st.call.arguments, st.ctx)
    case C.K_BEFORE_EXECUTE:
      if (typeof h.beforeExecute !== 'function') throw invalidOption(TypeError, 'beforeExecute must be a function (call, tool, ctx)')
      return () => h.beforeExecute(st.call, st.tool, st.ctx)
    case C.K_EFFECT_BEGIN:
      return beginCallback(h, st, s)
    case C.K_MARK_DISPATCHED:
      return markDispatchedCallback(h, st, s)
    case C.K_EFFECT_COMPLETE:
      return completeCallback(h, st, s)
    case C.K_EXECUTE: {
      const tool = st.tool
      const execute = tool.execute
      if (typeof execute !== 'function') return null
      const tctx = toolContext(h, st)
      return () => execute.call(tool, st.call.arguments, tctx)
    }
    default:
      return undefined
  }
}

/** The lifecycle event (`emit`) or ledger row (`append`) of command `k`: the hook's thenable, or undefined. */
function report(h, st, s, k) {
  const emits = k === C.K_EMIT_STARTED || k === C.K_EMIT_FINISHED || k === C.K_EMIT_FINISHED + 1 || k === C.K_EMIT_FINISHED + 2
  if (emits && h.observed !== undefined && !h.observed()) return undefined
  if (k === C.K_EMIT_STARTED) {
    return emit(h, { type: 'tool_execution_started', sessionId: st.ctx.sessionId, runId: st.ctx.runId, toolName: safeIds(h, st)[1], call: safeCall(h, st) })
  }
  if (k === C.K_APPEND_STARTED) {
    safeArgs(h, st)
    return append(h, makeRow(h, st, 'started'))
  }
  if (k === C.K_APPEND_FINISHED || k === C.K_APPEND_FINISHED + 1 || k === C.K_APPEND_FINISHED + 2) {
    safeArgs(h, st)
    const status = k === C.K_APPEND_FINISHED ? 'finished' : k === C.K_APPEND_FINISHED + 1 ? 'error' : 'blocked'
    const reason = status === 'blocked' ? dispatchDetail(s).reason : undefined
    return append(h, makeRow(h, st, status, { reason }))
  }
  const ms = performance.now() - st.t0
  const r = st.result
  const [id, name] = safeIds(h, st)
  if (k === C.K_EMIT_FINISHED) return emit(h, { type: 'tool_execution_finished', sessionId: st.ctx.sessionId, runId: st.ctx.runId, toolName: name, result: describeResultContent(r), metadata: { durationMs: ms, status: 'finished' } })
  if (k === C.K_EMIT_FINISHED + 1) return emit(h, { type: 'tool_execution_error', sessionId: st.ctx.sessionId, runId: st.ctx.runId, toolName: name, call: safeCall(h, st), error: r.error, metadata: { durationMs: ms, status: 'error' } })
  return emit(h, { type: 'tool_execution_blocked', sessionId: st.ctx.sessionId, runId: st.ctx.runId, toolCallId: id, name, toolName: name, reason: dispatchDetail(s).reason, error: r.error, metadata: { durationMs: ms, status: 'blocked' } })
}

module.exports = { callbackFor, report }
