'use strict'
// What `session.stream()` returns: the run's events as an async generator (as `@arnilo/prism` has
// it), plus `textStream`, the text of the run's assistant messages as it arrives (the `text` of each
// `message_delta` whose content is a text block, across every turn of the run).
//
// Both read one source, the run's event stream. A reader starts when its first `next()` is called
// and from then on sees every event the source yields; whichever reader needs an event pulls the next
// one and every started reader gets it. The run is cancelled (the source returned) only when every
// started reader has stopped early; a failed or aborted run throws its AgentRunError to each reader
// once, after the last event. A reader started but not read keeps what it has not read yet, so read
// what you start.

const NONE = Symbol('none')
const DONE = Object.freeze({ value: undefined, done: true })

function textOf(event) {
  if (event === null || typeof event !== 'object' || event.type !== 'message_delta') return NONE
  const content = event.content
  if (content === null || typeof content !== 'object' || content.type !== 'text') return NONE
  return typeof content.text === 'string' && content.text !== '' ? content.text : NONE
}

function sameEvent(event) {
  return event
}

function createHub(source) {
  const readers = new Set()
  let pulling = null
  let finished = false
  let failure = null

  function pull() {
    if (pulling !== null) return pulling
    pulling = source.next().then(
      (step) => {
        pulling = null
        if (step.done) finished = true
        else for (const r of readers) r.offer(step.value)
      },
      (error) => {
        pulling = null
        finished = true
        failure = { error }
      },
    )
    return pulling
  }

  // One reader: `pick` maps an event to what this reader yields, or NONE to skip it.
  function reader(pick) {
    let queue = []
    let head = 0
    let stopped = false
    let thrown = false
    const r = {
      offer(event) {
        const value = pick(event)
        if (value !== NONE) queue.push(value)
      },
    }
    readers.add(r)
    return {
      async next() {
        for (;;) {
          if (stopped) return DONE
          if (head < queue.length) {
            const value = queue[head]
            queue[head++] = undefined
            if (head === queue.length) {
              queue = []
              head = 0
            }
            return { value, done: false }
          }
          if (finished) {
            stopped = true
            readers.delete(r)
            if (failure !== null && !thrown) {
              thrown = true
              throw failure.error
            }
            return DONE
          }
          await pull()
        }
      },
      async return() {
        if (stopped) return DONE
        stopped = true
        readers.delete(r)
        queue = []
        head = 0
        if (readers.size === 0 && !finished) {
          finished = true
          await source.return()
        }
        return DONE
      },
    }
  }

  return { reader }
}

async function* readAll(hub, pick) {
  const r = hub.reader(pick)
  try {
    for (;;) {
      const step = await r.next()
      if (step.done) return
      yield step.value
    }
  } finally {
    await r.return()
  }
}

/** `session.stream()`'s result over `source` (the run's event generator): events, and `textStream`. */
function createStreamResult(source) {
  const hub = createHub(source)
  const events = readAll(hub, sameEvent)
  Object.defineProperty(events, 'textStream', { value: readAll(hub, textOf), enumerable: true })
  return events
}

module.exports = { createStreamResult }
