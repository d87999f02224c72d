'use strict'
// One provider turn of an agent run, read with `@arnilo/prism`'s protocol: `content_delta` blocks
// and `tool_call` calls in stream order; `tool_call_delta` fragments rebuild only the calls no
// `tool_call` event delivered (providers send both); `usage` is the turn's usage (the last one wins,
// `done.usage` over it), counted once per turn; `done` ends the turn; `error` fails it. Every
// `next()` races the run's signal. `r` is the run (lib/agent-run.js).
const { ProviderTransportError } = require('./errors.js')
const { RunEnd } = require('./agent-values.js')
const { createTurnRedaction } = require('./stream-redaction.js')
const { jsonBytes, requestJsonBytes } = require('./run-limits.js')
const { coalesceContent } = require('./providers/request-options.js')

const ABORTED = Symbol('aborted')

// Reads a provider stream step by step, each step settling with the iterator's result or with
// ABORTED as soon as the run aborts (`waker.wake`, called by the run's `abort`): a
// provider stream that waits without watching the signal cannot hold the run. A step costs one promise.
function abortableStep(iterator, signal, waker) {
  if (signal.aborted) return Promise.resolve(ABORTED)
  return new Promise((resolve, reject) => {
    waker.wake = resolve
    Promise.resolve(iterator.next()).then(resolve, reject)
  })
}

// Wakes the provider step in flight when the run aborts (the run's `abort` calls `handleEvent`):
// one object per run, so a run holds no closure for it.
class AbortWaker {
  constructor() {
    this.wake = undefined // the step in flight's resolve
  }

  handleEvent() {
    if (this.wake) this.wake(ABORTED)
  }
}

// The iterator of what `generate` returned, read as `for await` reads it (as `@arnilo/prism`'s loop
// does): an async iterable, else an iterable whose values are awaited one by one.
function eventsOf(stream, providerId) {
  if (stream !== null && stream !== undefined) {
    const asyncIterator = stream[Symbol.asyncIterator]
    if (typeof asyncIterator === 'function') return asyncIterator.call(stream)
    const iterator = stream[Symbol.iterator]
    if (typeof iterator === 'function') return new AwaitedIterator(iterator.call(stream))
  }
  throw new TypeError(`Provider ${providerId}: generate() must return an async iterable of provider events`)
}

class AwaitedIterator {
  constructor(iterator) {
    this.iterator = iterator
  }

  next() {
    const step = this.iterator.next()
    if (step.done) return step
    return Promise.resolve(step.value).then((value) => ({ value, done: false }))
  }

  return() {
    const close = this.iterator.return
    return close === undefined ? undefined : close.call(this.iterator)
  }
}

function readRequestId(request) {
  const fromMetadata = request.metadata?.requestId
  if (typeof fromMetadata === 'string' && fromMetadata.length > 0) return fromMetadata
  const fromOptions = request.options?.sessionId
  return typeof fromOptions === 'string' ? fromOptions : undefined
}

// A provider `error` event is redacted like a thrown provider error; a string becomes an ErrorInfo.
function providerErrorInfo(r, error) {
  if (error === undefined || error === null) return r.errorInfo(new Error('Provider error'))
  if (typeof error === 'string') return r.errorInfo(new Error(error))
  return r.errorInfo(error)
}

// Calls rebuilt from `tool_call_delta` fragments that no `tool_call` event delivered. A
// fragment group without an id or a name fails the turn (`incomplete_delta`) before any
// call of it runs.
function rebuildMissing(r, deltas, calls) {
  if (deltas.length === 0) return []
  const groups = new Map()
  for (const d of deltas) {
    const key = d.index
    const g = groups.get(key) ?? { id: undefined, name: undefined }
    if (d.id !== undefined) g.id = d.id
    if (d.name !== undefined) g.name = d.name
    groups.set(key, g)
  }
  const seen = new Set(calls.map((c) => c.id))
  const keys = [...groups.keys()].sort((a, b) => a - b)
  for (const key of keys) {
    const g = groups.get(key)
    if (seen.has(g.id)) continue
    if (!g.id || !g.name) throw new ProviderTransportError('incomplete_delta', `Incomplete tool call delta at index ${key}`)
  }
  const ordered = []
  for (const key of keys) {
    if (seen.has(groups.get(key).id)) continue
    for (const d of deltas) {
      if (d.index === key) ordered.push({ type: 'tool_call_delta', index: d.index, id: d.id, name: d.name, argumentsText: d.argumentsText, argumentsDelta: d.argumentsText ?? d.argumentsDelta })
    }
  }
  return ordered.length === 0 ? [] : r.api.reconstructToolCallDeltas(ordered)
}

/**
 * One provider attempt's state: what the stream has delivered so far and how its events go out.
 * Its helpers are methods, so a turn parked on the provider holds one object, not a closure each.
 */
class Turn {
  constructor(r, provider, request, tools, attempt) {
    this.r = r
    this.request = request
    this.tools = tools
    this.attempt = attempt
    this.providerId = typeof provider.id === 'string' ? provider.id : r.model?.provider
    this.startedAt = performance.now()
    this.metadata = undefined // built once, when an event first needs it (a run nobody observes builds none)
    this.content = []
    this.calls = []
    this.deltas = []
    // With a redactor, streamed text goes out as a stream (no delta holds a secret or a piece of
    // one) and model-chosen call ids and names are redacted before anything carries them.
    this.redaction = r.redactor ? createTurnRedaction(r.redactor, r.api.redactWith) : undefined
    // With a token or cost budget, output events wait until the turn's usage is counted; a turn
    // over budget never shows them.
    this.held = r.bufferOutput ? [] : undefined
    this.started = false
    this.messageId = undefined
    this.usage = undefined
    this.failure = undefined
    this.iterator = undefined
  }

  // `@arnilo/prism`'s provider-turn metadata: `requestId` (the run metadata's `requestId`, else the
  // request options' `sessionId`) when there is one; the finished event adds `latencyMs` and, for a
  // failure with a numeric code, `httpStatus`.
  turnMetadata() {
    if (this.metadata !== undefined) return this.metadata
    const { request, providerId, attempt, tools } = this
    const requestId = readRequestId(request)
    this.metadata = requestId === undefined ? { providerId, model: request.model, attempt, tools } : { providerId, model: request.model, requestId, attempt, tools }
    return this.metadata
  }

  emitOutput(event) {
    if (this.held === undefined) this.r.emit(event)
    else this.held.push(event)
  }

  start() {
    if (!this.started) {
      this.started = true
      const r = this.r
      if (r.observed()) this.emitOutput({ type: 'message_started', sessionId: r.sessionId, runId: r.runId, message: { role: 'assistant', content: [] } })
    }
  }

  /** Takes one stream event; answers true when the stream is over (`done` or `error`). */
  take(event) {
    const r = this.r
    r.tracker.charge('maxResponseBytes', jsonBytes(event))
    if (event === null || typeof event !== 'object') return false
    const { sessionId, runId } = r
    switch (event.type) {
      case 'error':
        this.failure = providerErrorInfo(r, event.error)
        return true
      case 'usage':
        this.usage = event.usage
        return false
      case 'done':
        this.usage = event.usage ?? this.usage
        return true
      case 'message_start':
        this.started = true
        this.messageId = event.messageId
        if (r.observed()) this.emitOutput({ type: 'message_started', sessionId, runId, message: { id: this.messageId, role: 'assistant', content: [] } })
        return false
      case 'tool_call_delta':
        this.start()
        this.deltas.push(event)
        if (r.observed()) this.emitOutput({ type: 'message_delta', sessionId, runId, content: { ...event, type: 'tool_call_delta' } })
        return false
      case 'content_delta':
      case 'tool_call': {
        let block = event.type === 'content_delta' ? event.content : event.call
        if (block === null || typeof block !== 'object') return false
        this.start()
        const redaction = this.redaction
        if (redaction !== undefined && block.type === 'tool_call') block = redaction.call(block)
        this.content.push(block)
        if (block.type === 'tool_call') this.calls.push(block)
        const shown = redaction !== undefined ? redaction.block(block) : block
        if (shown !== undefined && r.observed()) this.emitOutput({ type: 'message_delta', sessionId, runId, content: shown })
        return false
      }
      default:
        return false
    }
  }

  // Stopped early (done, error, abort or a throw): let the provider release its stream.
  release() {
    const it = this.iterator
    if (it === undefined) return
    this.iterator = undefined
    Promise.resolve().then(() => it.return?.()).catch(() => {})
  }

  // After the stream: the calls rebuilt from deltas, and the held end of the streamed text.
  complete() {
    const { r, redaction } = this
    for (let call of rebuildMissing(r, this.deltas, this.calls)) {
      if (redaction !== undefined) call = redaction.block(redaction.call(call))
      this.content.push(call)
      this.calls.push(call)
      this.emitOutput({ type: 'message_delta', sessionId: r.sessionId, runId: r.runId, content: call })
    }
    if (redaction !== undefined) for (const block of redaction.finish()) if (r.observed()) this.emitOutput({ type: 'message_delta', sessionId: r.sessionId, runId: r.runId, content: block })
  }

  // The turn's usage is counted against the budget first; a breach fails the turn. Answers whether
  // it was counted.
  count() {
    const r = this.r
    try {
      r.tracker.recordUsage(this.usage)
    } catch (err) {
      if (this.failure === undefined) this.failure = r.errorInfo(err)
      return false
    }
    if (this.held !== undefined && this.failure === undefined) for (const event of this.held) r.emit(event)
    r.usageTotal.add(this.usage)
    return true
  }

  finished() {
    const { r, failure } = this
    /** @type {Record<string, any>} */
    const metadata = { ...this.turnMetadata(), latencyMs: Math.round(performance.now() - this.startedAt) }
    if (failure !== undefined && typeof failure.code === 'number') metadata.httpStatus = failure.code
    const event = { type: 'provider_turn_finished', sessionId: r.sessionId, runId: r.runId, turn: r.turns, metadata, usage: this.usage }
    if (failure !== undefined) event.error = failure
    r.emit(event)
  }

  /** What a turn that ended without failure answers, and, unless a custom loop keeps it, the assistant message. */
  answer() {
    const { r, redaction, content, calls, started, messageId } = this
    if (r.loopOwnsTurns) {
      // A custom loop strategy keeps the assistant message and emits message_finished and
      // turn_finished itself (lib/agent-loop.js): the turn answers upstream's ProviderTurnResult.
      const kept = coalesceContent(redaction !== undefined ? redaction.content : content)
      const result = { content: kept, calls, started, usage: this.usage }
      if (messageId !== undefined) result.messageId = messageId
      return result
    }
    const { sessionId, runId } = r
    if (started) {
      // Adjacent streamed text (and a streamed thinking block) is kept as one part.
      const joined = coalesceContent(content)
      r.lastAssistant = messageId === undefined ? { role: 'assistant', content: joined } : { id: messageId, role: 'assistant', content: joined }
      // What is kept and shown: the text as it was let out (joined, the whole text redacted at once).
      const kept = redaction !== undefined ? { ...r.lastAssistant, content: coalesceContent(redaction.content) } : r.lastAssistant
      r.transcript.push(r.redactor ? r.api.redactWith(kept, r.redactor) : kept)
      if (r.observed()) r.emit({ type: 'message_finished', sessionId, runId, message: kept })
    }
    if (r.observed()) r.emit({ type: 'turn_finished', sessionId, runId, turn: r.turns })
    return { calls }
  }
}

/**
 * Runs one provider attempt. Answers `{ calls }` (with a custom loop strategy, the whole
 * `{ content, calls, messageId?, started, usage? }`), or `{ failure, observable }` when `retrying` and
 * the attempt failed (the retry loop decides); anything else ends the run.
 */
async function providerTurn(r, provider, request, tools, attempt, retrying) {
  const { signal, waker } = r
  // Each attempt is charged, and its request's JSON bytes, before the provider sees it.
  r.tracker.charge('maxProviderAttempts')
  r.tracker.charge('maxRequestBytes', requestJsonBytes(request))
  const turn = new Turn(r, provider, request, tools, attempt)
  if (r.observed()) r.emit({ type: 'provider_turn_started', sessionId: r.sessionId, runId: r.runId, turn: r.turns, metadata: turn.turnMetadata() })
  try {
    if (signal.aborted) r.finish('aborted', 'aborted', r.abortError())
    turn.iterator = eventsOf(provider.generate(request), turn.providerId)
    for (;;) {
      const step = await abortableStep(turn.iterator, signal, waker)
      if (step === ABORTED) {
        turn.release()
        r.finish('aborted', 'aborted', r.abortError())
      }
      if (step.done) {
        turn.iterator = undefined
        break
      }
      if (turn.take(step.value)) break
    }
    turn.release()
    if (turn.failure === undefined) turn.complete()
  } catch (err) {
    turn.release()
    if (err instanceof RunEnd) throw err
    if (signal.aborted) r.finish('aborted', 'aborted', r.abortError())
    turn.failure = r.errorInfo(err)
  } finally {
    waker.wake = undefined
  }
  const usage = turn.usage
  if (turn.count() && r.ledger !== undefined && usage !== undefined && usage !== null) await r.ledger.turnUsage(usage, r.turns, attempt)
  if (r.observed()) turn.finished()
  const failure = turn.failure
  if (failure !== undefined && retrying && !signal.aborted) return { failure, observable: turn.started }
  if (failure !== undefined) r.finish('failed', 'error', failure)
  if (signal.aborted) r.finish('aborted', 'aborted', r.abortError())
  return turn.answer()
}

module.exports = { providerTurn, AbortWaker }
