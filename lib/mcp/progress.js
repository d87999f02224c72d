'use strict'
// Progress of one bridged call, coalesced. Dispatch turns every `ctx.progress(...)` into an event and a
// ledger row (each carrying the call), so a server that sends 100 000 `notifications/progress` must not
// reach it 100 000 times. The first notification is forwarded at once; later ones at most one per
// `progressIntervalMs`, the newest value replacing an older one still waiting; after
// `maxProgressUpdates - 1` forwards only the newest is held, and it is forwarded when the call returns.
// Per call: at most `maxProgressUpdates` forwards, one held value, one timer, messages cut to 1 KiB.
const { truncateUtf8 } = require('./json-bounds.js')

const MAX_PROGRESS_MESSAGE_BYTES = 1024

function progressValue(p) {
  const out = { progress: p.progress, total: p.total, message: p.message }
  if (typeof out.message === 'string') out.message = truncateUtf8(out.message, MAX_PROGRESS_MESSAGE_BYTES)
  else out.message = undefined
  return out
}

/**
 * @param {(progress: object, metadata: object) => void} deliver called with (value, metadata), `this` = ctx
 * @returns {{ onprogress(p: object): void, flush(): void, cancel(): void }}
 */
function createProgressRelay(deliver, ctx, metadata, limits) {
  const interval = limits.progressIntervalMs
  const max = limits.maxProgressUpdates
  let forwarded = 0
  let lastAt = 0
  let held
  let timer
  let done = false
  const send = (value) => {
    forwarded++
    lastAt = Date.now()
    try {
      deliver.call(ctx, value, metadata)
    } catch {
      // The host's progress observer never changes the call.
    }
  }
  const onTimer = () => {
    timer = undefined
    if (done || held === undefined) return
    if (forwarded >= max - 1) return // kept for the end of the call
    const value = held
    held = undefined
    send(value)
  }
  return {
    onprogress(p) {
      if (done) return
      const value = progressValue(p)
      if (forwarded >= max - 1) {
        held = value
        return
      }
      const elapsed = Date.now() - lastAt
      if (forwarded === 0 || (elapsed >= interval && timer === undefined)) {
        held = undefined
        send(value)
        return
      }
      held = value
      if (timer === undefined) {
        timer = setTimeout(onTimer, Math.max(0, interval - elapsed))
        if (typeof timer.unref === 'function') timer.unref()
      }
    },
    /** The call returned: the newest value still held is forwarded, then nothing more. */
    flush() {
      if (done) return
      done = true
      if (timer !== undefined) clearTimeout(timer)
      timer = undefined
      if (held !== undefined) {
        const value = held
        held = undefined
        send(value)
      }
    },
    /** The call failed, timed out or was aborted: nothing more is forwarded. */
    cancel() {
      done = true
      if (timer !== undefined) clearTimeout(timer)
      timer = undefined
      held = undefined
    },
  }
}

module.exports = { createProgressRelay, MAX_PROGRESS_MESSAGE_BYTES }
