'use strict'
// How the dispatch loop calls host code and reads what it answered: a callback's outcome as
// `[kind, value]`, thenables (a `then` that throws on read counts as the callback throwing), an
// abort race, thrown codes, and the small readings of a host value the machine decides on.
const C = require('./dispatch-codes.js')
const { raceAbort: raceAbortWith } = require('./abort-watch.js')

/** An option error with a stable code. */
function invalidOption(Kind, message, code = 'ERR_PRISM_INVALID_OPTION') {
  const e = new Kind(message)
  e.code = code
  return e
}

const noop = () => {}
/** Leaves a thenable to itself: its rejection is handled, nothing waits for it. */
function swallow(v) {
  try {
    if (v !== null && typeof v === 'object' && typeof v.then === 'function') v.then(undefined, noop)
  } catch {}
}

/** A thenable's `then`, or undefined; a `then` that throws on read is thrown. */
function thenOf(v) {
  if (v === null || (typeof v !== 'object' && typeof v !== 'function')) return undefined
  const t = v.then
  return typeof t === 'function' ? t : undefined
}

/** What a wait answers once the signal aborts. */
const ABORTED = Symbol('aborted')
/**
 * What a callback returns when the binding has already handed its outcome to the machine (the
 * identity check and a built-in store's claim and transitions): the next command is `st.next`.
 */
const STEPPED = Symbol('stepped')
const toAborted = () => ABORTED
/** ABORTED once the signal aborts; the wait is on the signal's one shared listener (lib/abort-watch.js). */
const raceAbort = (p, signal) => raceAbortWith(p, signal, toAborted)

/** Outcome kinds of a host callback: a value, a throw, a pending thenable, an abort. */
const VALUE = 0
const THREW = 1
const PENDING = 2
const ABORT = 3

/** Performs a host callback: `[VALUE, v]`, `[THREW, e]` or `[PENDING, thenable]`. */
function perform(fn) {
  try {
    const v = fn()
    return thenOf(v) ? [PENDING, v] : [VALUE, v]
  } catch (e) {
    return [THREW, e]
  }
}

/** Waits for a thenable or the signal's abort: `[VALUE, v]`, `[THREW, e]` or `[ABORT, undefined]`. */
async function settle(p, signal) {
  try {
    const v = await raceAbort(p, signal)
    return v === ABORTED ? [ABORT, undefined] : [VALUE, v]
  } catch (e) {
    return [THREW, e]
  }
}

/** A thrown value's string `code`, or undefined (a throwing read counts as none). */
function codeOf(e) {
  try {
    const c = e !== null && (typeof e === 'object' || typeof e === 'function') ? e.code : undefined
    return typeof c === 'string' ? c : undefined
  } catch {
    return undefined
  }
}

const TYPE_INDEX = { undefined: C.T_UNDEFINED, boolean: C.T_BOOLEAN, number: C.T_NUMBER, string: C.T_STRING, symbol: C.T_SYMBOL, bigint: C.T_BIGINT, function: C.T_FUNCTION }
/** The machine's index of a value's JSON-ish type (for a validator's answer of the wrong type). */
const typeIndex = (v) => (v === null ? C.T_NULL : Array.isArray(v) ? C.T_ARRAY : typeof v === 'object' ? C.T_OBJECT : TYPE_INDEX[typeof v])
const text = (v) => (v === undefined || v === null ? '' : String(v))
const str = (v) => (typeof v === 'string' ? v : undefined)

module.exports = { invalidOption, swallow, thenOf, ABORTED, STEPPED, raceAbort, VALUE, THREW, PENDING, ABORT, perform, settle, codeOf, typeIndex, text, str }
