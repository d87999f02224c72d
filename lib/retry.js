'use strict'
// Retrying a provider turn that failed before it produced any output, and the classification both the
// agent and the HTTP providers use to call a failure transient.
//
// The agent's `retry` option (`createAgent({ retry })`, `session.run(input, { retry })`, `false` turns
// a configured one off for the run) names `@arnilo/prism`'s fields: `policy`, `maxAttempts` (3),
// `baseDelayMs` (100), `maxDelayMs` (1000), `jitter` (0.25), `random`, `transientCodes`, `secrets`,
// `metadata`. A turn is retried only while it is unobservable: no `message_start`, content or tool call
// was yielded before the failure. Aborts are never retried, and an abort during the wait ends the run.

/** Codes and statuses a retry may follow: network failures, rate limits, overload, 5xx. */
const TRANSIENT_CODES = new Set([
  'ETIMEDOUT',
  'ECONNRESET',
  'ECONNREFUSED',
  'EAI_AGAIN',
  'ENOTFOUND',
  'timeout',
  'rate_limit',
  'overloaded',
  'temporarily_unavailable',
  408,
  409,
  425,
  429,
  500,
  502,
  503,
  504,
])

/** Whether an HTTP status is worth asking again: 408, 409, 425, 429 and every 5xx. */
function isRetryableHttpStatus(status) {
  return status >= 500 || TRANSIENT_CODES.has(status)
}

/** `Retry-After` (delay-seconds or HTTP-date) in milliseconds, or undefined. */
function parseRetryAfterMs(value, now = Date.now()) {
  if (!value) return undefined
  const seconds = Number(value)
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000
  const date = Date.parse(value)
  return Number.isNaN(date) ? undefined : Math.max(0, date - now)
}

/** Whether an ErrorInfo describes a transient failure (never an abort). */
function isTransientErrorInfo(error, transientCodes = TRANSIENT_CODES) {
  if (error === null || typeof error !== 'object') return false
  const message = typeof error.message === 'string' ? error.message : ''
  if (error.name === 'AbortError' || /abort/i.test(message)) return false
  if (error.code !== undefined && transientCodes.has(error.code)) return true
  // A status that travelled as a string ("503") counts like the number.
  if (typeof error.code === 'string' && /^\d{3}$/.test(error.code) && isRetryableHttpStatus(Number(error.code))) return true
  return /timeout|temporar|rate.?limit|overload|unavailable/i.test(message)
}

const finiteAtLeast = (value, fallback, min) => (typeof value === 'number' && Number.isFinite(value) && value >= min ? value : fallback)

/**
 * The default policy: at most `maxAttempts` attempts in all, transient failures only, delays
 * `baseDelayMs * 2^(attempt-1)` or the server's `retryAfterMs` (which wins), capped at `maxDelayMs`,
 * then spread by ±`jitter` so clients sharing an outage do not retry in lockstep.
 */
function createDefaultRetryPolicy(options = {}) {
  const maxAttempts = Math.floor(finiteAtLeast(options.maxAttempts, 3, 1))
  const baseDelayMs = finiteAtLeast(options.baseDelayMs, 100, 0)
  const maxDelayMs = Math.max(baseDelayMs, finiteAtLeast(options.maxDelayMs, 1000, 0))
  const jitter = Math.min(1, finiteAtLeast(options.jitter, 0.25, 0))
  const random = typeof options.random === 'function' ? options.random : Math.random
  const transientCodes = new Set([...TRANSIENT_CODES, ...(Array.isArray(options.transientCodes) ? options.transientCodes : [])])
  return {
    name: typeof options.name === 'string' ? options.name : 'default-retry',
    decide(context) {
      if ((context.signal && context.signal.aborted) || context.attempt >= maxAttempts || !isTransientErrorInfo(context.error, transientCodes)) {
        return { retry: false }
      }
      const hint = context.error.retryAfterMs
      const computed = baseDelayMs * 2 ** Math.max(0, context.attempt - 1)
      const base = Math.min(typeof hint === 'number' && Number.isFinite(hint) && hint >= 0 ? hint : computed, maxDelayMs)
      const delayMs = jitter > 0 ? Math.round(base * (1 - jitter + random() * 2 * jitter)) : base
      return { retry: true, delayMs }
    },
  }
}

function abortReason(signal) {
  if (signal.reason instanceof Error) return signal.reason
  return Object.assign(new Error(signal.reason === undefined ? 'Agent run aborted' : String(signal.reason)), { name: 'AbortError' })
}

/** Waits `decision.delayMs`; rejects with the signal's reason as soon as it aborts. */
function waitForRetry(decision, signal) {
  const delayMs = Math.max(0, Number(decision && decision.delayMs) || 0)
  return new Promise((resolve, reject) => {
    if (signal && signal.aborted) return reject(abortReason(signal))
    if (delayMs === 0) return resolve()
    const onAbort = () => {
      clearTimeout(timer)
      reject(abortReason(signal))
    }
    const timer = setTimeout(() => {
      if (signal) signal.removeEventListener('abort', onAbort)
      resolve()
    }, delayMs)
    if (signal) signal.addEventListener('abort', onAbort, { once: true })
  })
}

/**
 * The run's retry settings from the agent's and the run's `retry` (the run's fields win; the run's
 * `false` turns retry off), or undefined when there is none. Throws a TypeError for a bad shape.
 */
function resolveRetry(agentRetry, runRetry) {
  for (const [where, value] of [['createAgent', agentRetry], ['session.run', runRetry]]) {
    if (value === undefined || value === false) continue
    if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new TypeError(`${where}: retry must be an object or false`)
    if (value.policy !== undefined && (value.policy === null || typeof value.policy.decide !== 'function')) {
      throw new TypeError(`${where}: retry.policy must have a decide(context) method`)
    }
  }
  if (runRetry === false) return undefined
  const merged = runRetry ? { ...(agentRetry || {}), ...runRetry } : agentRetry || undefined
  if (!merged) return undefined
  const secrets = Array.isArray(merged.secrets) ? merged.secrets.filter((s) => typeof s === 'string' && s.length > 0) : []
  return { policy: merged.policy ?? createDefaultRetryPolicy(merged), secrets, metadata: merged.metadata }
}

/** Set on the request the agent hands a provider while the agent retries: the provider then sends once. */
const AGENT_RETRIES = Symbol.for('prism-tools-native.agentRetries')

function redactInfo(info, secrets) {
  if (secrets.length === 0 || typeof info.message !== 'string') return info
  let message = info.message
  for (const secret of secrets) message = message.split(secret).join('[REDACTED]')
  return message === info.message ? info : { ...info, message }
}

/**
 * Runs `attemptTurn(attempt)` until it answers without `failure`, or the policy declines. A failure
 * the caller may retry comes back as `{ failure, observable }`; an observable one, or one the policy
 * (or `retry` middleware) declines, goes to `giveUp(info)`, which throws. Each retry emits
 * `retry_scheduled` and waits, abortably, for its delay.
 */
async function retryProviderTurn(retry, attemptTurn, { signal, sessionId, runId, middleware, emit, giveUp }) {
  for (let attempt = 1; ; attempt++) {
    const out = await attemptTurn(attempt)
    if (out.failure === undefined) return out
    const error = redactInfo(out.failure, retry.secrets)
    if (out.observable || signal.aborted) return giveUp(error)
    const context = { sessionId, runId, attempt, error, metadata: retry.metadata, signal }
    let decision = await retry.policy.decide(context)
    if (middleware && typeof middleware.run === 'function') {
      const payload = await middleware.run('retry', { context, decision })
      if (payload && payload.decision) decision = payload.decision
    }
    if (!decision || decision.retry !== true) return giveUp(error)
    const delayMs = Math.max(0, Number(decision.delayMs) || 0)
    emit({ type: 'retry_scheduled', sessionId, runId, attempt, delayMs, error })
    await waitForRetry({ delayMs }, signal)
  }
}

module.exports = {
  TRANSIENT_CODES,
  AGENT_RETRIES,
  isRetryableHttpStatus,
  parseRetryAfterMs,
  isTransientErrorInfo,
  createDefaultRetryPolicy,
  waitForRetry,
  resolveRetry,
  retryProviderTurn,
}
