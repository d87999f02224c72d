'use strict'
// `session.subscribe({ maxQueuedEvents, overflow })`: an async iterator over the session's events
// with a bounded queue, as `@arnilo/prism` has it. A slow consumer never grows memory without bound:
// past `maxQueuedEvents` (default 1024) the `overflow` policy drops the oldest event, drops the new
// one, or (`"close"`, the default) replaces the queue with one `event_subscriber_overflow` event and
// ends the iterator. The iterator also ends when the run it observes ends.

const DEFAULT_MAX_QUEUED_EVENTS = 1024
const OVERFLOW = ['close', 'drop_oldest', 'drop_newest']

function createEventSubscriber(sessionId, options, onClose, caller = 'subscribe') {
  const requested = options.maxQueuedEvents ?? DEFAULT_MAX_QUEUED_EVENTS
  if (typeof requested !== 'number') throw new TypeError(`${caller}: maxQueuedEvents must be a number`)
  const maxQueuedEvents = Number.isFinite(requested) ? Math.max(1, Math.floor(requested)) : DEFAULT_MAX_QUEUED_EVENTS
  const overflow = options.overflow ?? 'close'
  if (!OVERFLOW.includes(overflow)) throw new TypeError(`${caller}: overflow must be one of ${OVERFLOW.map((o) => `"${o}"`).join(', ')}`)
  let queue = []
  let head = 0
  const waiters = []
  let closed = false

  const size = () => queue.length - head
  const shift = () => {
    const event = queue[head]
    queue[head++] = undefined
    if (head > 1024 && head * 2 > queue.length) {
      queue = queue.slice(head)
      head = 0
    }
    return event
  }
  const close = () => {
    closed = true
    for (const waiter of waiters.splice(0)) waiter({ value: undefined, done: true })
  }

  const subscriber = {
    [Symbol.asyncIterator]() {
      return subscriber
    },
    next() {
      if (size() > 0) return Promise.resolve({ value: shift(), done: false })
      if (closed) return Promise.resolve({ value: undefined, done: true })
      return new Promise((resolve) => waiters.push(resolve))
    },
    return() {
      close()
      onClose()
      return Promise.resolve({ value: undefined, done: true })
    },
    push(event) {
      const waiter = waiters.shift()
      if (waiter) {
        waiter({ value: event, done: false })
        return
      }
      if (closed) return
      if (size() < maxQueuedEvents) {
        queue.push(event)
        return
      }
      if (overflow === 'drop_oldest') {
        shift()
        queue.push(event)
        return
      }
      if (overflow === 'drop_newest') return
      const droppedEvents = size() + 1
      queue = [{ type: 'event_subscriber_overflow', sessionId, droppedEvents, maxQueuedEvents, overflow }]
      head = 0
      close()
      onClose()
    },
    close,
  }
  return subscriber
}

module.exports = { createEventSubscriber, DEFAULT_MAX_QUEUED_EVENTS }
