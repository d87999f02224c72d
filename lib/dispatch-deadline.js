'use strict'
// A tool's deadline: its own `timeoutMs`, else the dispatcher's `toolTimeoutMs`. When one applies, the
// tool runs with a signal that aborts at the deadline (joined with the caller's), and dispatch stops
// waiting then even if the tool never settles. The machine decides what that means
// (crates/core/src/dispatch/machine.rs: blocked with `tool_timeout`; a dispatched effect is left
// `unknown`); this module only keeps the clock.
const C = require('./dispatch-codes.js')
const { invalidOption, perform, raceAbort, PENDING, VALUE, THREW, ABORT, ABORTED } = require('./dispatch-host.js')
const { toolContext } = require('./dispatch-records.js')

const TIMED_OUT = Symbol('timed out')
const NO_EXECUTE = Symbol('no execute')
const INVALID = -1

const validMs = (v) => Number.isInteger(v) && v >= 1 && v <= C.MAX_TOOL_TIMEOUT_MS

/** The dispatcher's `toolTimeoutMs`, checked once when the options are read. */
function readToolTimeout(value, who) {
  if (value === undefined || value === null) return undefined
  if (!validMs(value)) {
    throw invalidOption(RangeError, `${who}: toolTimeoutMs must be an integer from 1 to ${C.MAX_TOOL_TIMEOUT_MS} (got ${String(value)})`)
  }
  return value
}

/** The deadline of this call's tool: its milliseconds, undefined for none, or INVALID. */
function deadlineOf(h, tool) {
  let own
  try {
    own = tool.timeoutMs
  } catch {
    return INVALID
  }
  if (own === undefined || own === null) return h.toolTimeoutMs
  return validMs(own) ? own : INVALID
}

/** The tool's signal: the caller's (if any) joined with the deadline's. */
function joinedSignal(caller, deadline) {
  if (caller === undefined || caller === null) return deadline
  try {
    return AbortSignal.any([caller, deadline])
  } catch {
    // A signal-like object AbortSignal.any refuses: the tool gets the deadline's, and the
    // caller's abort still ends the wait below.
    return deadline
  }
}

/**
 * `p`'s value, or TIMED_OUT once `ms` have passed. The timer is cleared when `p` settles first, and by
 * `clock.stop()` when the wait ends another way (the caller's abort): it never outlives the call.
 */
function withDeadline(p, ms, clock) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms, TIMED_OUT)
    clock.stop = () => clearTimeout(timer)
    Promise.resolve(p).then(
      (v) => {
        clearTimeout(timer)
        resolve(v)
      },
      (e) => {
        clearTimeout(timer)
        reject(e)
      },
    )
  })
}

/**
 * Runs the tool under its deadline and answers the machine: `[kind, value]` as `perform` gives it
 * (VALUE, THREW, ABORT), `[TIMED_OUT, undefined]` after aborting the tool's signal, or
 * `[NO_EXECUTE, undefined]` for a tool without `execute`.
 */
async function executeWithDeadline(h, st, ms) {
  const tool = st.tool
  const execute = tool.execute
  if (typeof execute !== 'function') return [NO_EXECUTE, undefined]
  const controller = new AbortController()
  const caller = st.ctx.signal
  const tctx = toolContext(h, st)
  tctx.signal = joinedSignal(caller, controller.signal)
  let [kind, v] = perform(() => execute.call(tool, st.call.arguments, tctx))
  // A synchronous tool has already returned (or thrown): the deadline no longer applies.
  if (kind !== PENDING) return [kind, v]
  const clock = { stop: () => {} }
  try {
    v = await raceAbort(withDeadline(v, ms, clock), caller)
  } catch (e) {
    return [THREW, e]
  }
  if (v === ABORTED) {
    clock.stop()
    return [ABORT, undefined]
  }
  if (v === TIMED_OUT) {
    // Named as AbortSignal.timeout's reason is, so a tool that checks `reason.name` sees a timeout.
    const reason = new Error('The operation was aborted due to timeout')
    reason.name = 'TimeoutError'
    controller.abort(reason)
    return [TIMED_OUT, undefined]
  }
  return [VALUE, v]
}

module.exports = { TIMED_OUT, NO_EXECUTE, INVALID, readToolTimeout, deadlineOf, executeWithDeadline }
