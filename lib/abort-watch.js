'use strict'

// Waiting on a caller's AbortSignal without an event listener per wait.
//
// An agent hands the same run signal to every tool call; dispatch waits on it around the tool and the
// MCP bridge relays it to the SDK. Adding and removing an 'abort' listener per call walks Node's
// EventTarget machinery twice (its validation, listener map and the AbortSignal GC hooks), which on a
// call that then waits on a pipe costs several microseconds of cold code. Here a signal gets one
// listener, shared by every wait on it; a wait is an entry in a Set.
//
// A signal's listener is detached again by a sweep about a second after its last wait ended, so a
// timeout or `AbortSignal.any` signal (which Node keeps alive while it has a listener) is not held
// for the life of the process.

const SWEEP_MS = 1000

/** signal → its watch */
const watches = new WeakMap()
/** The watches with a listener attached: the sweep's work list. */
const attached = new Set()
let sweepTimer

class Watch {
  constructor(signal) {
    this.signal = signal
    this.waiters = new Set()
    this.onAbort = () => this.fire()
  }

  fire() {
    watches.delete(this.signal)
    attached.delete(this)
    const waiters = [...this.waiters]
    this.waiters.clear()
    for (const waiter of waiters) {
      try {
        waiter()
      } catch {
        // A waiter's own failure is its own: the others are still told.
      }
    }
  }

  detach() {
    watches.delete(this.signal)
    attached.delete(this)
    try {
      this.signal.removeEventListener('abort', this.onAbort)
    } catch {
      // A signal-like object without removeEventListener keeps a listener that finds no waiter.
    }
  }
}

function sweep() {
  sweepTimer = undefined
  for (const watch of attached) if (watch.waiters.size === 0) watch.detach()
  if (attached.size > 0) armSweep()
}

function armSweep() {
  if (sweepTimer !== undefined) return
  sweepTimer = setTimeout(sweep, SWEEP_MS)
  // The sweep never keeps a process alive.
  if (typeof sweepTimer === 'object' && typeof sweepTimer.unref === 'function') sweepTimer.unref()
}

/**
 * Calls `waiter()` once when `signal` fires 'abort', unless `unwatchAbort(signal, waiter)` came first.
 * The caller checks `signal.aborted` before: a signal that already fired never calls the waiter.
 * Throws what the signal's `addEventListener` throws (a signal-like object without one: a TypeError).
 */
function watchAbort(signal, waiter) {
  let watch = watches.get(signal)
  if (watch === undefined) {
    watch = new Watch(signal)
    signal.addEventListener('abort', watch.onAbort, { once: true })
    watches.set(signal, watch)
    attached.add(watch)
    armSweep()
  }
  watch.waiters.add(waiter)
}

/** Ends a wait: `waiter` is not called. */
function unwatchAbort(signal, waiter) {
  const watch = watches.get(signal)
  if (watch !== undefined) watch.waiters.delete(waiter)
}

/**
 * `p`'s outcome, or `aborted()`'s as soon as `signal` aborts: its value, or what it throws as the
 * rejection. Without a signal, `p` itself. On an already-aborted signal the answer is `aborted()`'s at
 * once, and `p` is no longer awaited: its later rejection never surfaces as an unhandled rejection.
 * The wait is an entry on the signal's one shared listener, not a listener of its own.
 */
function raceAbort(p, signal, aborted) {
  if (!signal) return p
  if (signal.aborted) {
    try {
      Promise.resolve(p).catch(() => {})
    } catch {}
    return new Promise((resolve) => resolve(aborted()))
  }
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      try {
        resolve(aborted())
      } catch (e) {
        reject(e)
      }
    }
    watchAbort(signal, onAbort)
    Promise.resolve(p).then(
      (v) => {
        unwatchAbort(signal, onAbort)
        resolve(v)
      },
      (e) => {
        unwatchAbort(signal, onAbort)
        reject(e)
      },
    )
  })
}

/** `p`'s outcome, or a rejection with the signal's reason as soon as `signal` aborts (`raceAbort`). */
function rejectOnAbort(p, signal) {
  return raceAbort(p, signal, () => {
    throw signal.reason
  })
}

/** How many signals hold a shared listener (for tests). */
function watchedSignalCount() {
  return attached.size
}

module.exports = { watchAbort, unwatchAbort, raceAbort, rejectOnAbort, watchedSignalCount }
