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
// ABORTED as soon as the run aborts (`waker.wake`, called by the run's one abort listener): a
// provider stream that waits without watching the signal cannot hold the run. A step costs one promise.
function abortableStep(iterator, signal, waker) {
  if (signal.aborted) return Promise.resolve(ABORTED)
  return new Promise((resolve, reject) => {
    waker.wake = resolve
    Promise.resolve(iterator.next()).then(resolve, reject)
  })
}

/** Wakes the provider step in flight when the run aborts. */
function wakeOnAbort(signal, waker) {
  signal.addEventListener('abort', () => {
    if (waker.wake) waker.wake(ABORTED)
  }, { once: true })
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
 * Runs one provider attempt. Answers `{ calls }` (with a custom loop strategy, the whole
 * `{ content, calls, messageId?, started, usage? }`), or `{ failure, observable }` when `retrying` and
 * the attempt failed (the retry loop decides); anything else ends the run.
 */
async function providerTurn(r, provider, request, tools, attempt, retrying) {
  const { sessionId, runId, signal, waker } = r
  const emit = r.emit
  // Each attempt is charged, and its request's JSON bytes, before the provider sees it.
  r.tracker.charge('maxProviderAttempts')
  r.tracker.charge('maxRequestBytes', requestJsonBytes(request))
  const providerId = typeof provider.id === 'string' ? provider.id : r.model?.provider
  // `@arnilo/prism`'s provider-turn metadata: `requestId` (the run metadata's `requestId`, else the
  // request options' `sessionId`) when there is one; the finished event adds `latencyMs` and, for a
  // failure with a numeric code, `httpStatus`.
  const startedAt = performance.now()
  // Built once, when an event first needs it (a run nobody observes builds none).
  let metadata
  const turnMetadata = () => {
    if (metadata !== undefined) return metadata
    const requestId = readRequestId(request)
    metadata = requestId === undefined ? { providerId, model: request.model, attempt, tools } : { providerId, model: request.model, requestId, attempt, tools }
    return metadata
  }
  if (r.observed()) emit({ type: 'provider_turn_started', sessionId, runId, turn: r.turns, metadata: turnMetadata() })
  const content = []
  const calls = []
  const deltas = []
  // With a redactor, streamed text goes out as a stream (no delta holds a secret or a piece of
  // one) and model-chosen call ids and names are redacted before anything carries them.
  const redaction = r.redactor ? createTurnRedaction(r.redactor, r.api.redactWith) : undefined
  let started = false
  let messageId
  let usage
  let failure
  let iterator
  // With a token or cost budget, output events wait until the turn's usage is counted; a turn
  // over budget never shows them.
  const held = r.bufferOutput ? [] : undefined
  const emitOutput = held === undefined ? emit : (event) => held.push(event)
  const start = () => {
    if (!started) {
      started = true
      if (r.observed()) emitOutput({ type: 'message_started', sessionId, runId, message: { role: 'assistant', content: [] } })
    }
  }
  try {
    if (signal.aborted) r.finish('aborted', 'aborted', r.abortError())
    iterator = provider.generate(request)[Symbol.asyncIterator]()
    for (;;) {
      const step = await abortableStep(iterator, signal, waker)
      if (step === ABORTED) {
        Promise.resolve().then(() => iterator.return?.()).catch(() => {})
        iterator = undefined
        r.finish('aborted', 'aborted', r.abortError())
      }
      if (step.done) {
        iterator = undefined
        break
      }
      const event = step.value
      r.tracker.charge('maxResponseBytes', jsonBytes(event))
      if (event === null || typeof event !== 'object') continue
      if (event.type === 'error') {
        failure = providerErrorInfo(r, event.error)
        break
      }
      if (event.type === 'usage') usage = event.usage
      else if (event.type === 'done') {
        usage = event.usage ?? usage
        break
      } else if (event.type === 'message_start') {
        started = true
        messageId = event.messageId
        if (r.observed()) emitOutput({ type: 'message_started', sessionId, runId, message: { id: messageId, role: 'assistant', content: [] } })
      } else if (event.type === 'tool_call_delta') {
        start()
        deltas.push(event)
        if (r.observed()) emitOutput({ type: 'message_delta', sessionId, runId, content: { ...event, type: 'tool_call_delta' } })
      } else if (event.type === 'content_delta' || event.type === 'tool_call') {
        let block = event.type === 'content_delta' ? event.content : event.call
        if (block === null || typeof block !== 'object') continue
        start()
        if (redaction !== undefined && block.type === 'tool_call') block = redaction.call(block)
        content.push(block)
        if (block.type === 'tool_call') calls.push(block)
        const shown = redaction !== undefined ? redaction.block(block) : block
        if (shown !== undefined && r.observed()) emitOutput({ type: 'message_delta', sessionId, runId, content: shown })
      }
    }
    if (iterator !== undefined) {
      // Stopped early (done or error): let the provider release its stream.
      const it = iterator
      iterator = undefined
      Promise.resolve().then(() => it.return?.()).catch(() => {})
    }
    if (failure === undefined) {
      for (let call of rebuildMissing(r, deltas, calls)) {
        if (redaction !== undefined) call = redaction.block(redaction.call(call))
        content.push(call)
        calls.push(call)
        emitOutput({ type: 'message_delta', sessionId, runId, content: call })
      }
      // The held end of the streamed text.
      if (redaction !== undefined) for (const block of redaction.finish()) if (r.observed()) emitOutput({ type: 'message_delta', sessionId, runId, content: block })
    }
  } catch (err) {
    if (iterator !== undefined) {
      const it = iterator
      iterator = undefined
      Promise.resolve().then(() => it.return?.()).catch(() => {})
    }
    if (err instanceof RunEnd) throw err
    if (signal.aborted) r.finish('aborted', 'aborted', r.abortError())
    failure = r.errorInfo(err)
  } finally {
    waker.wake = undefined
  }
  // The turn's usage is counted against the budget first; a breach fails the turn.
  let counted = true
  try {
    r.tracker.recordUsage(usage)
  } catch (err) {
    counted = false
    if (failure === undefined) failure = r.errorInfo(err)
  }
  if (held !== undefined && failure === undefined) for (const event of held) emit(event)
  if (counted) {
    r.usageTotal.add(usage)
    if (r.ledger !== undefined && usage !== undefined && usage !== null) await r.ledger.turnUsage(usage, r.turns, attempt)
  }
  if (r.observed()) {
    const finishedMetadata = { ...turnMetadata(), latencyMs: Math.round(performance.now() - startedAt) }
    if (failure !== undefined && typeof failure.code === 'number') finishedMetadata.httpStatus = failure.code
    const finished = { type: 'provider_turn_finished', sessionId, runId, turn: r.turns, metadata: finishedMetadata, usage }
    if (failure !== undefined) finished.error = failure
    emit(finished)
  }
  if (failure !== undefined && retrying && !signal.aborted) return { failure, observable: started }
  if (failure !== undefined) r.finish('failed', 'error', failure)
  if (signal.aborted) r.finish('aborted', 'aborted', r.abortError())
  if (r.loopOwnsTurns) {
    // A custom loop strategy keeps the assistant message and emits message_finished and
    // turn_finished itself (lib/agent-loop.js): the turn answers upstream's ProviderTurnResult.
    const kept = coalesceContent(redaction !== undefined ? redaction.content : content)
    const result = { content: kept, calls, started, usage }
    if (messageId !== undefined) result.messageId = messageId
    return result
  }
  if (started) {
    // Adjacent streamed text (and a streamed thinking block) is kept as one part.
    const joined = coalesceContent(content)
    r.lastAssistant = messageId === undefined ? { role: 'assistant', content: joined } : { id: messageId, role: 'assistant', content: joined }
    // What is kept and shown: the text as it was let out (joined, the whole text redacted at once).
    const kept = redaction !== undefined ? { ...r.lastAssistant, content: coalesceContent(redaction.content) } : r.lastAssistant
    r.transcript.push(r.redactor ? r.api.redactWith(kept, r.redactor) : kept)
    if (r.observed()) emit({ type: 'message_finished', sessionId, runId, message: kept })
  }
  if (r.observed()) emit({ type: 'turn_finished', sessionId, runId, turn: r.turns })
  return { calls }
}

module.exports = { providerTurn, wakeOnAbort }
