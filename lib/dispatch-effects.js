'use strict'
// The effect store's side of dispatch: the declaration and key the machine asks for, the claim and
// transitions on the host's store (or, on a built-in store, through the binding, which hands its
// outcome to the machine itself), the stored result a completed record answers with, and the
// settle writes after a failure.
const native = require('../binding.js')
const C = require('./dispatch-codes.js')
const { invalidOption, thenOf, codeOf, text, str, STEPPED, VALUE, PENDING, perform, settle } = require('./dispatch-host.js')
const { callStoreMethod, nativeStoreOf } = require('./effects.js')
const { isPromise } = require('node:util').types

const { dispatchStep, dispatchAnswer, dispatchDetail } = native

const STATUS = { __proto__: null, claimed: C.S_CLAIMED, dispatched: C.S_DISPATCHED, completed: C.S_COMPLETED, unknown: C.S_UNKNOWN, failed_retryable: C.S_FAILED_RETRYABLE }
/** The machine's code of a record's status. */
const status = (r) => STATUS[r?.status] ?? C.S_OTHER

/** A transition's input: the key, then the claim the machine holds (`d`), then `extra`. */
function transition(st, d, extra) {
  const k = st.effectKey
  const t = {
    identity: k.identity,
    ownership: k.ownership,
    key: k.key,
    sessionId: k.sessionId,
    runId: k.runId,
    toolCallId: k.toolCallId,
    toolName: k.toolName,
    argumentsHash: k.argumentsHash,
    signal: k.signal,
    claimToken: d.claimToken,
    expectedVersion: d.expectedVersion,
  }
  return extra ? Object.assign(t, extra) : t
}

// A built-in store checks its input's signal first. On dispatch's own claim the signal crosses
// only when it is aborted (the binding then throws its reason): a live one costs no read there.
const abortedSignal = (sig) => (typeof sig === 'object' && sig !== null && sig.aborted === true ? sig : undefined)

/**
 * A completed record's stored result, when it is an object, is what the call answers with
 * (upstream's `record.result ?? result`): taken as the store answers, before the machine goes on.
 */
function useStored(st, stored) {
  if (stored !== null && typeof stored === 'object') st.result = stored
}

// `complete` on a built-in store: the result crosses as the JSON text the store keeps, and the
// stored result dispatch answers with is that text parsed — what the record would hold. On the
// dispatch's own claim the binding hands the new version to the machine itself.
function advanceComplete(ns, st, s) {
  const result = st.result
  let json
  let unserializable = false
  if (result !== undefined) {
    try {
      json = JSON.stringify(result)
    } catch {}
    if (json === undefined) unserializable = true
  }
  const stored = json === undefined ? undefined : JSON.parse(json)
  let answer = STEPPED
  if (st.effectClaim !== undefined) {
    st.next = native.advanceClaim(ns.handle, s, true, json, unserializable, abortedSignal(st.effectKey.signal))
  } else {
    answer = ns.store.advance(transition(st, dispatchDetail(s)), true, json, unserializable)
  }
  st.effectRecord = { result: stored }
  useStored(st, stored)
  return answer
}

function storeCall(h, method, arg, f = h.effectStore[method]) {
  if (typeof f !== 'function') {
    throw invalidOption(TypeError, `effectStore.${method} is not a function`, 'ERR_PRISM_TOOL_EFFECT_STORE')
  }
  return callStoreMethod(h.effectStore, f, arg)
}

/** A settle write: failures and a missing method are swallowed; a thenable is waited for. */
function settleCall(h, method, arg) {
  try {
    const f = h.effectStore[method]
    if (typeof f !== 'function') return undefined
    const v = callStoreMethod(h.effectStore, f, arg)
    return thenOf(v) ? v : undefined
  } catch {
    return undefined
  }
}

/** The host callback of `begin`: a built-in store claims through the binding (STEPPED). */
function beginCallback(h, st, s) {
  return () => {
    // A built-in store reads the key once and hands back the claim for the transitions below.
    const f = h.effectStore.begin
    const ns = nativeStoreOf(f)
    if (ns === undefined || st.effectRead === undefined) return storeCall(h, 'begin', st.effectKey, f)
    // The claim makes markDispatched too when the host's markDispatched is this store's own.
    const v = native.claimDispatch(ns.handle, s, abortedSignal(st.effectKey.signal), nativeStoreOf(h.effectStore.markDispatched) === ns)
    if (typeof v !== 'number') return v // another claimant's record, answered as the host's would be
    st.effectClaim = true
    st.next = v
    return STEPPED
  }
}

// On a built-in store's claim the binding reads the claim token and version from the machine
// (`advanceClaim(dispatch, …)`); other stores get them in the transition's input.
function markDispatchedCallback(h, st, s) {
  return () => {
    const f = h.effectStore.markDispatched
    const ns = nativeStoreOf(f)
    if (ns !== undefined && st.effectClaim !== undefined) {
      st.next = native.advanceClaim(ns.handle, s, false, undefined, false, abortedSignal(st.effectKey.signal))
      return STEPPED
    }
    const d = dispatchDetail(s)
    if (ns === undefined) return storeCall(h, 'markDispatched', transition(st, d), f)
    return ns.store.advance(transition(st, d), false, undefined, false)
  }
}

function completeCallback(h, st, s) {
  return () => {
    const f = h.effectStore.complete
    const ns = nativeStoreOf(f)
    if (ns !== undefined) return advanceComplete(ns, st, s)
    return storeCall(h, 'complete', transition(st, dispatchDetail(s), { result: st.result }), f)
  }
}

/** The answer to `begin`: an existing record, an acquired claim, or a malformed answer. */
function beginAnswer(st, s, v) {
  st.effectRecord = v?.record
  const outcome = v?.outcome
  const r = st.effectRecord
  if (outcome === 'existing') {
    return dispatchAnswer(s, C.A_EXISTING, status(r), r?.result !== null && typeof r?.result === 'object' ? 1 : 0)
  }
  if (outcome === 'acquired' && typeof r?.claimToken === 'string' && typeof r?.version === 'number') {
    return dispatchAnswer(s, C.A_ACQUIRED, r.version, undefined, r.claimToken)
  }
  return dispatchStep(s, C.A_MALFORMED)
}

/** The answer to `markDispatched` or `complete` (`k`): the record's new version. */
function recordAnswer(st, s, k, v) {
  // A built-in store's lean answer: the new version (`st.effectRecord` and the stored result
  // are taken by advanceComplete).
  if (typeof v === 'number') return dispatchAnswer(s, C.A_RECORD, v)
  const version = typeof v?.version === 'number' ? v.version : NaN
  st.effectRecord = v
  if (k === C.K_EFFECT_COMPLETE) useStored(st, v?.result)
  return dispatchAnswer(s, C.A_RECORD, version)
}

/** The answer to `get`: the stored record's status, version and claim token. */
const storedAnswer = (s, v) => dispatchAnswer(s, C.A_STORED, status(v), typeof v?.version === 'number' ? v.version : NaN, str(v?.claimToken))

/**
 * The tool's effect declaration, answered to the machine: none, a classifier's answer (validated by
 * the binding in one crossing), or a declaration object read here once, in the binding's order
 * (`resolve_declaration` in crates/node/src/effects/identity.rs): a value that is no object, a
 * promise or a thenable is invalid and nothing more of it is read; then `kind`, then `idempotency`.
 */
function effectDeclaration(st, s) {
  try {
    const tool = st.tool
    const effect = tool.effect
    if (effect === undefined || effect === null) return dispatchStep(s, C.A_DECLARATION)
    if (typeof effect === 'function') return native.dispatchDeclaration(s, tool, effect, st.call.arguments, st.ctx)
    let kind
    let idempotency
    if (typeof effect === 'object' && !isPromise(effect) && typeof effect.then !== 'function') {
      kind = effect.kind
      idempotency = effect.idempotency
    }
    return native.dispatchDeclared(s, typeof kind === 'string' ? kind : undefined, typeof idempotency === 'string' ? idempotency : undefined)
  } catch (e) {
    st.thrown = e
    return dispatchAnswer(s, C.A_THREW, undefined, undefined, codeOf(e))
  }
}

/** The effect key of the call: from the identity snapshot the binding holds, or derived here. */
function effectKey(st, s) {
  try {
    const id = st.identity
    const ownership = {}
    if (id.tenantId != null) ownership.tenantId = id.tenantId
    if (id.accountId != null) ownership.accountId = id.accountId
    if (id.userId != null) ownership.userId = id.userId
    const key = { identity: id, ownership, sessionId: text(st.ctx.sessionId), runId: text(st.ctx.runId), toolCallId: text(st.call.id), toolName: st.name, argumentsHash: '', key: '', signal: undefined }
    if (st.effectRead !== undefined) {
      const derived = native.dispatchEffectKey(s, key.sessionId, key.runId, key.toolCallId, st.call.arguments)
      key.argumentsHash = derived.argumentsHash
      key.key = derived.key
    } else {
      key.argumentsHash = native.toolEffectArgumentsHash(st.call.arguments)
      key.key = native.deriveToolEffectKey(key)
    }
    key.signal = st.ctx.signal
    st.effectKey = key
    st.idempotencyKey = key.key
    return dispatchStep(s, C.A_DONE)
  } catch (e) {
    st.thrown = e
    return dispatchAnswer(s, C.A_THREW, undefined, undefined, codeOf(e))
  }
}

/** `markUnknown` or `fail` after a failure (command `k`): a thenable to wait for, or undefined. */
function settleWrite(h, st, s, k) {
  const d = dispatchDetail(s)
  if (k === C.K_MARK_UNKNOWN) return settleCall(h, 'markUnknown', transition(st, d, { failure: { code: 'ERR_PRISM_TOOL_EFFECT_UNKNOWN' } }))
  const status = k === C.K_RELEASE_RETRYABLE ? 'failed_retryable' : 'failed_terminal'
  return settleCall(h, 'fail', transition(st, d, { status, failure: { code: 'ERR_PRISM_TOOL_EFFECT_PRE_DISPATCH' } }))
}

/** `get` after an unknown outcome: `[VALUE, record]`, or another kind when it failed or is missing. */
async function storedRecord(h, st) {
  let r = [VALUE, undefined]
  try {
    const f = h.effectStore.get
    if (typeof f === 'function') {
      r = perform(() => callStoreMethod(h.effectStore, f, st.effectKey))
      if (r[0] === PENDING) r = await settle(r[1], undefined)
    }
  } catch {}
  return r
}

module.exports = { beginCallback, markDispatchedCallback, completeCallback, beginAnswer, recordAnswer, storedAnswer, effectDeclaration, effectKey, settleWrite, storedRecord }
