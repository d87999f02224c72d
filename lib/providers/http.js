'use strict'
// The HTTP side every streaming provider shares: the POST with bounded retries on 429/5xx (honouring
// `Retry-After`), error bodies read to a bound and redacted, and an SSE reader (eventsource-parser) that
// bounds the response size and ends when the caller's signal aborts, even on a stream that stalls.
const { createParser } = require('eventsource-parser')
const { ProviderTransportError } = require('../errors.js')
const { providerError } = require('../provider.js')
const { raceAbort } = require('../abort-watch.js')
// One classification for the agent's retry and the providers' own: lib/retry.js.
const { isRetryableHttpStatus, parseRetryAfterMs, AGENT_RETRIES } = require('../retry.js')
const { transportFailure, urlWithoutUserinfo } = require('./wire-errors.js')

const DEFAULT_MAX_RESPONSE_BYTES = 16 * 1024 * 1024
const DEFAULT_MAX_EVENT_BYTES = 262_144
const DEFAULT_MAX_ERROR_BODY_BYTES = 65_536
const DEFAULT_RETRY = { maxAttempts: 3, initialDelayMs: 500, maxDelayMs: 30_000 }

/**
 * The API key: a string, or a function or promise giving one. A key source that never settles
 * cannot hold a request past its signal: the wait ends with the abort.
 */
async function resolveApiKey(source, signal) {
  if (source === undefined || source === null) return undefined
  const value = await untilAborted(typeof source === 'function' ? source() : source, signal)
  if (value === undefined || value === null || value === '') return undefined
  if (typeof value !== 'string') throw new TypeError('apiKey must be a string or a function returning one')
  return value
}

/** Replace every secret (and its URL-encoded form) in `text` with `[REDACTED]`. */
function redact(text, secrets) {
  let out = text
  for (const secret of secrets) {
    if (typeof secret !== 'string' || secret.length < 4) continue
    for (const form of new Set([secret, encodeURIComponent(secret)])) out = out.split(form).join('[REDACTED]')
  }
  return out
}

/** `p`, or a rejection with the `aborted` transport error as soon as `signal` aborts. */
function untilAborted(p, signal) {
  return raceAbort(p, signal, () => {
    throw abortError(signal)
  })
}

function abortError(signal) {
  const reason = signal && signal.reason
  const error = new ProviderTransportError('aborted', reason instanceof Error ? `Transport operation aborted: ${reason.message}` : 'Transport operation aborted')
  return error
}

async function readBoundedText(response, maxBytes, secrets) {
  if (!response.body) return ''
  const reader = response.body.getReader()
  const chunks = []
  let size = 0
  let truncated = false
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      const room = maxBytes - size
      if (value.byteLength > room) {
        chunks.push(value.subarray(0, room))
        size = maxBytes
        truncated = true
        break
      }
      chunks.push(value)
      size += value.byteLength
    }
  } catch {
    // A body cut short still says why the request failed; keep what arrived.
  } finally {
    if (truncated) reader.cancel().catch(() => {})
    else reader.releaseLock()
  }
  const text = Buffer.concat(chunks.map((c) => Buffer.from(c.buffer, c.byteOffset, c.byteLength))).toString('utf8')
  return redact(truncated ? `${text}…[truncated]` : text, secrets)
}

/** `timeoutMs`: undefined, or a positive finite number of milliseconds (else a TypeError naming `where`). */
function checkTimeoutMs(where, value) {
  if (value === undefined) return undefined
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    const error = new TypeError(`${where}: timeoutMs must be a positive number of milliseconds`)
    error.code = 'ERR_PRISM_INVALID_OPTION'
    throw error
  }
  return value
}

function normalizeRetry(retry) {
  if (retry === false) return { maxAttempts: 1, initialDelayMs: 0, maxDelayMs: 0 }
  const r = retry && typeof retry === 'object' ? retry : {}
  const int = (v, d, min) => (Number.isFinite(v) && v >= min ? Math.floor(v) : d)
  return {
    maxAttempts: Math.min(int(r.maxAttempts, DEFAULT_RETRY.maxAttempts, 1), 10),
    initialDelayMs: int(r.initialDelayMs, DEFAULT_RETRY.initialDelayMs, 0),
    maxDelayMs: int(r.maxDelayMs, DEFAULT_RETRY.maxDelayMs, 0),
  }
}

function sleep(ms, signal) {
  return new Promise((resolve, reject) => {
    if (signal && signal.aborted) return reject(abortError(signal))
    const timer = setTimeout(() => {
      if (signal) signal.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    function onAbort() {
      clearTimeout(timer)
      reject(abortError(signal))
    }
    if (signal) signal.addEventListener('abort', onAbort, { once: true })
  })
}

/** The default HTTP error: numeric `code` = status, `retryAfterMs` from the header, redacted body. */
function httpStatusError(prefix, response, bodyText) {
  const error = new Error(`${prefix}: ${response.status} ${bodyText}`)
  error.code = response.status
  const hint = parseRetryAfterMs(response.headers.get('retry-after'))
  if (hint !== undefined) error.retryAfterMs = hint
  return error
}

/**
 * POST `body` to `url`, retrying 429/5xx and the network failures a second attempt can get past
 * (reset, timeout, temporary DNS failure; never a refused connection, an unknown host or a TLS fault)
 * up to `retry.maxAttempts` times with exponential backoff (the server's `Retry-After` wins, capped
 * at `maxDelayMs`). Answers `{ response }` on a 2xx, or `{ error }` with the mapped, redacted HTTP
 * error; throws a failed `fetch` as an Error naming the method, the URL and the cause.
 */
async function postWithRetry({ fetchImpl, url, headers, body, signal, retry, secrets, prefix, mapHttpError, maxErrorBodyBytes, timeoutMs }) {
  const policy = normalizeRetry(retry)
  for (let attempt = 1; ; attempt++) {
    if (signal && signal.aborted) throw abortError(signal)
    let response
    // `timeoutMs` bounds each attempt until the response headers arrive; the body is the run's signal's.
    const deadline = timeoutMs === undefined ? undefined : new AbortController()
    const timer = deadline === undefined ? undefined : setTimeout(() => deadline.abort(), timeoutMs)
    try {
      const attemptSignal = deadline === undefined ? signal : signal ? AbortSignal.any([signal, deadline.signal]) : deadline.signal
      response = await fetchImpl(url, { method: 'POST', headers, body, signal: attemptSignal })
    } catch (err) {
      if (signal && signal.aborted) throw abortError(signal)
      if (deadline !== undefined && deadline.signal.aborted) {
        const timedOut = new Error(`${prefix}: POST ${urlWithoutUserinfo(url)}: timeout: no response headers within ${timeoutMs} ms`)
        timedOut.code = 'timeout'
        timedOut.kind = 'timeout'
        if (attempt >= policy.maxAttempts) throw timedOut
        await sleep(backoff(policy, attempt, undefined), signal)
        continue
      }
      // undici's `fetch failed` keeps the reason (ECONNREFUSED, ECONNRESET, …) on its cause: the
      // error says it, with the method and the URL, and carries it as `code` for retry policies.
      const failure = transportFailure(err, { prefix, method: 'POST', url })
      if (!failure.retryable || attempt >= policy.maxAttempts) throw failure
      await sleep(backoff(policy, attempt, undefined), signal)
      continue
    } finally {
      if (timer !== undefined) clearTimeout(timer)
    }
    if (response.ok) return { response }
    const bodyText = await readBoundedText(response, maxErrorBodyBytes ?? DEFAULT_MAX_ERROR_BODY_BYTES, secrets)
    if (isRetryableHttpStatus(response.status) && attempt < policy.maxAttempts) {
      await sleep(backoff(policy, attempt, parseRetryAfterMs(response.headers.get('retry-after'))), signal)
      continue
    }
    const error = mapHttpError ? mapHttpError(response, bodyText, secrets) : httpStatusError(prefix, response, bodyText)
    return { error }
  }
}

function backoff(policy, attempt, retryAfterMs) {
  if (retryAfterMs !== undefined) return Math.min(retryAfterMs, policy.maxDelayMs)
  const base = policy.initialDelayMs * 2 ** (attempt - 1)
  // Full jitter keeps many clients hitting one rate limit from retrying in lockstep.
  return Math.min(policy.maxDelayMs, Math.round(base / 2 + Math.random() * (base / 2)))
}

/**
 * Yields each SSE event (`{ event, data, id }`) of `body`. Throws ProviderTransportError `aborted` when
 * `signal` aborts (the pending read is cancelled, so a stalled stream ends too),
 * `response_body_overflow` past `maxResponseBytes`, `sse_event_overflow` for an event past `maxEventBytes`.
 * @param {ReadableStream<Uint8Array>} body
 * @param {{ signal?: AbortSignal, maxResponseBytes?: number, maxEventBytes?: number }} [options]
 */
async function* readSse(body, { signal, maxResponseBytes = DEFAULT_MAX_RESPONSE_BYTES, maxEventBytes = DEFAULT_MAX_EVENT_BYTES } = {}) {
  const reader = body.getReader()
  const queue = []
  let overflow
  const parser = createParser({
    onEvent(event) {
      if (event.data.length > maxEventBytes && Buffer.byteLength(event.data) > maxEventBytes) {
        overflow = overflow ?? new ProviderTransportError('sse_event_overflow', `SSE event exceeds ${maxEventBytes} bytes`, maxEventBytes)
        return
      }
      queue.push(event)
    },
  })
  const decoder = new TextDecoder()
  const onAbort = () => reader.cancel(signal.reason).catch(() => {})
  if (signal) {
    if (signal.aborted) throw abortError(signal)
    signal.addEventListener('abort', onAbort, { once: true })
  }
  let size = 0
  try {
    for (;;) {
      let chunk
      try {
        chunk = await reader.read()
      } catch (err) {
        if (signal && signal.aborted) throw abortError(signal)
        throw err
      }
      if (signal && signal.aborted) throw abortError(signal)
      if (chunk.done) {
        parser.feed(decoder.decode())
        break
      }
      size += chunk.value.byteLength
      if (size > maxResponseBytes) {
        throw new ProviderTransportError('response_body_overflow', `Streamed response exceeds ${maxResponseBytes} bytes`, maxResponseBytes)
      }
      parser.feed(decoder.decode(chunk.value, { stream: true }))
      if (overflow) throw overflow
      while (queue.length > 0) yield queue.shift()
    }
    // An event without its terminating blank line was cut off: it is not delivered (SSE rules).
    while (queue.length > 0) yield queue.shift()
  } finally {
    if (signal) signal.removeEventListener('abort', onAbort)
    reader.cancel().catch(() => {})
  }
}

function requestHeaders(request) {
  const out = {}
  const given = request && request.options && request.options.headers
  if (given && typeof given === 'object') {
    for (const [k, v] of Object.entries(given)) if (typeof v === 'string') out[k] = v
  }
  return out
}

/**
 * An AIProvider over one streaming HTTP endpoint: the part every wire shares. An already-aborted signal
 * rejects the stream (as upstream does); an abort mid-stream ends it with an `aborted` error event. Per
 * request the body is built, then the API key resolved (a secret every error text is redacted of); the
 * POST retries on its own unless an agent retries the turn; a failed post, a response without a body
 * or any throw is one provider error event.
 * `wire`: `body(request)` the JSON body; `url(request)` the endpoint; `headers(request, apiKey)` the
 * wire's own headers, after the common ones; `events(body, readOptions)` the answer's events; `prefix`
 * and `noBodyMessage` for its errors. `timeoutMs` was checked when the provider was created.
 */
function createStreamingProvider(id, options, timeoutMs, wire) {
  return {
    id,
    async *generate(request) {
      const signal = request.signal
      if (signal && signal.aborted) throw signal.reason ?? abortError(signal)
      const secrets = []
      try {
        const body = wire.body(request)
        const apiKey = await resolveApiKey(options.apiKey, signal)
        if (apiKey) secrets.push(apiKey)
        const url = wire.url(request)
        const headers = {
          ...requestHeaders(request),
          ...(options.extraHeaders ? options.extraHeaders(request) : undefined),
          'content-type': 'application/json',
          accept: 'text/event-stream',
          ...wire.headers(request, apiKey),
        }
        const { response, error } = await postWithRetry({
          fetchImpl: options.fetch ?? fetch,
          url,
          headers,
          body: JSON.stringify(body),
          signal,
          // Under an agent with `retry`, the agent retries the turn: one attempt here.
          retry: request[AGENT_RETRIES] ? false : options.retry,
          secrets,
          prefix: wire.prefix,
          mapHttpError: options.mapHttpError,
          maxErrorBodyBytes: options.maxErrorBodyBytes,
          timeoutMs,
        })
        if (error) {
          yield providerError(error, secrets)
          return
        }
        if (!response.body) {
          yield providerError(new Error(wire.noBodyMessage), secrets)
          return
        }
        yield* wire.events(response.body, {
          signal,
          secrets,
          maxResponseBytes: options.maxResponseBytes,
          maxEventBytes: options.maxEventBytes,
          maxArgumentBytes: options.maxArgumentBytes,
        })
      } catch (err) {
        yield providerError(err, secrets)
      }
    },
  }
}

module.exports = {
  DEFAULT_MAX_RESPONSE_BYTES,
  createStreamingProvider,
  DEFAULT_MAX_EVENT_BYTES,
  resolveApiKey,
  redact,
  parseRetryAfterMs,
  httpStatusError,
  postWithRetry,
  checkTimeoutMs,
  readSse,
  requestHeaders,
  abortError,
}
