'use strict'
// The command loop of one dispatch: asks the machine (crates/core/src/dispatch/machine.rs) for its
// next command, performs it — a host callback (lib/dispatch-callbacks.js), a store write
// (lib/dispatch-effects.js), a guardrail (lib/dispatch-guardrails.js), an event or row
// (lib/dispatch-records.js) — and hands the answer back (lib/dispatch-answers.js) until the machine
// resolves or rejects the call.
const native = require('../binding.js')
const C = require('./dispatch-codes.js')
const { ABORTED, THREW, VALUE, PENDING, ABORT, perform, settle, raceAbort } = require('./dispatch-host.js')
const { answerFor } = require('./dispatch-answers.js')
const { callbackFor, report } = require('./dispatch-callbacks.js')
const { effectDeclaration, effectKey, settleWrite, storedRecord } = require('./dispatch-effects.js')
const { guardStart, guardAnswer, guardRecord } = require('./dispatch-guardrails.js')
const { redact, safeIds, buildError } = require('./dispatch-records.js')
const { GuardrailError } = require('./errors.js')
const { TIMED_OUT, NO_EXECUTE, INVALID, deadlineOf, executeWithDeadline } = require('./dispatch-deadline.js')

const { dispatchStep, dispatchDetail, dispatchEnd } = native

/** The error a guardrail's interrupt rejects the call with. */
function guardrailRejection(st, s) {
  const d = dispatchDetail(s)
  const e = new GuardrailError(d.message, { record: st.guard?.record ?? st.lastRecord })
  e.code = d.code
  return e
}

/**
 * Runs dispatch `s` from command `k` to its end: the call's result, or the rejection the machine
 * decided. The machine forgets the dispatch itself when it resolves or rethrows (no detail is read
 * after them); any other way out of the loop ends it here.
 */
async function runCommands(h, st, s, k) {
  let over = false
  try {
    for (;;) {
      if (k >= C.K_GATED) {
        // The pre-execute signal check, on the command it gates: an aborted signal answers for it.
        k -= C.K_GATED
        const sig = st.ctx.signal
        if (sig !== null && typeof sig === 'object' && sig.aborted === true) {
          k = dispatchStep(s, C.A_SIGNAL_ABORTED)
          continue
        }
      }
      switch (k) {
        case C.K_RESOLVE:
          over = true
          return st.result
        case C.K_REJECT_THROWN:
          over = true
          throw st.thrown
        case C.K_REJECT_GUARDRAIL:
          throw guardrailRejection(st, s)
        case C.K_SET_ERROR:
          st.result = { toolCallId: safeIds(h, st)[0], name: safeIds(h, st)[1], error: buildError(h, st, dispatchDetail(s)) }
          k = dispatchStep(s, C.A_DONE)
          continue
        case C.K_EFFECT_DECLARATION:
          k = effectDeclaration(st, s)
          continue
        case C.K_EFFECT_KEY:
          k = effectKey(st, s)
          continue
        case C.K_REPLAY:
          st.result = st.effectRecord.result
          k = dispatchStep(s, C.A_DONE)
          continue
        case C.K_REDACT_RESULT:
          st.result = redact(h, st.result)
          k = dispatchStep(s, C.A_DONE)
          continue
        case C.K_START_GUARDRAIL:
          guardStart(h, st, dispatchDetail(s))
          k = dispatchStep(s, C.A_GUARD_STARTED)
          continue
        case C.K_AWAIT_GUARDRAIL: {
          const d = dispatchDetail(s)
          const slot = st.guard.slots[d.index]
          st.guardIndex = d.index
          if (slot.state === 'pending') {
            const [kind, v] = await settle(slot.value, st.ctx.signal)
            slot.state = kind === VALUE ? 'value' : 'threw'
            slot.value = v
          }
          k = guardAnswer(s, slot)
          continue
        }
        case C.K_GUARDRAIL_RECORD:
          guardRecord(h, st, dispatchDetail(s))
          k = dispatchStep(s, C.A_DONE)
          continue
        case C.K_ABORT_GUARDRAILS:
          try {
            st.guard.controller.abort()
          } catch {}
          st.lastRecord = st.guard.record
          k = dispatchStep(s, C.A_DONE)
          continue
        // An emit or a ledger append that never settles holds its call only until the call is
        // aborted: then the call goes on to its terminal row (the hook's promise is left to itself).
        case C.K_EMIT_STARTED:
        case C.K_APPEND_STARTED:
        case C.K_EMIT_FINISHED:
        case C.K_EMIT_FINISHED + 1:
        case C.K_EMIT_FINISHED + 2:
        case C.K_APPEND_FINISHED:
        case C.K_APPEND_FINISHED + 1:
        case C.K_APPEND_FINISHED + 2: {
          const p = report(h, st, s, k)
          if (p) await settle(p, st.ctx.signal)
          k = dispatchStep(s, C.A_DONE)
          continue
        }
        case C.K_MARK_UNKNOWN:
        case C.K_RELEASE_CLAIM:
        case C.K_RELEASE_RETRYABLE: {
          const p = settleWrite(h, st, s, k)
          if (p) await settle(p, undefined)
          k = dispatchStep(s, C.A_DONE)
          continue
        }
        case C.K_EFFECT_GET: {
          const r = await storedRecord(h, st)
          k = r[0] === VALUE ? answerFor(h, st, s, k, VALUE, r[1]) : dispatchStep(s, C.A_DONE)
          continue
        }
      }
      if (k === C.K_EXECUTE) {
        // A tool with a deadline runs under its own clock (lib/dispatch-deadline.js).
        const ms = deadlineOf(h, st.tool)
        if (ms === INVALID) {
          k = dispatchStep(s, C.A_INVALID_TIMEOUT)
          continue
        }
        if (ms !== undefined) {
          const [kind, v] = await executeWithDeadline(h, st, ms)
          if (kind === TIMED_OUT) k = dispatchStep(s, C.A_TIMED_OUT, ms)
          else if (kind === NO_EXECUTE) k = dispatchStep(s, C.A_NO_EXECUTE)
          else k = answerFor(h, st, s, k, kind, v)
          continue
        }
      }
      // A host callback.
      const cb = callbackFor(h, st, s, k)
      if (cb === null) {
        k = dispatchStep(s, k === C.K_EXECUTE ? C.A_NO_EXECUTE : C.A_MISSING)
        continue
      }
      let [kind, v] = perform(cb)
      if (kind === PENDING) {
        // settle() inlined: one async frame and one promise hop fewer on every call whose tool or
        // hook returns a promise.
        try {
          v = await raceAbort(v, st.ctx.signal)
          kind = v === ABORTED ? ABORT : VALUE
        } catch (e) {
          kind = THREW
          v = e
        }
      }
      k = answerFor(h, st, s, k, kind, v)
    }
  } finally {
    if (!over) dispatchEnd(s)
  }
}

module.exports = { runCommands }
