'use strict'
// The await half of the native state machines. `start(...)` runs synchronously as far as host
// callbacks answer with plain values and returns either the outcome or a parked frame
// `[state, thenable, signal, ...]`; this driver awaits the thenable (racing the caller's abort
// signal) and resumes the machine with the settled value. No decisions are taken here.

const VALUE = 0
const THREW = 1
const ABORTED = 2

function raceAbort(thenable, signal) {
  if (signal.aborted) return Promise.resolve(ABORTED_MARK)
  return new Promise((resolve, reject) => {
    const onAbort = () => resolve(ABORTED_MARK)
    signal.addEventListener('abort', onAbort, { once: true })
    Promise.resolve(thenable).then(
      (v) => {
        signal.removeEventListener('abort', onAbort)
        resolve(v)
      },
      (e) => {
        signal.removeEventListener('abort', onAbort)
        reject(e)
      },
    )
  })
}

const ABORTED_MARK = Symbol('aborted')

async function wait(frame, resume) {
  for (;;) {
    let value
    let mode = VALUE
    try {
      value = await (frame[2] ? raceAbort(frame[1], frame[2]) : frame[1])
      if (value === ABORTED_MARK) mode = ABORTED
    } catch (e) {
      value = e
      mode = THREW
    }
    const out = resume(frame, value, mode)
    if (!Array.isArray(out)) return out
    frame = out
  }
}

// Turns a native start function into one that always returns a promise (a synchronous throw
// becomes a rejection, as the contract says).
function drive(out, resume) {
  return Array.isArray(out) ? wait(out, resume) : Promise.resolve(out)
}

module.exports = { drive, VALUE, THREW, ABORTED }
