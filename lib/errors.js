'use strict'
// Error subclasses of the public API. JS classes because `instanceof` and `Error.captureStackTrace` need
// them; they hold no decisions. Every constructor takes `(message, options?)` with `{ cause?, record? }`.
// The permission and trust errors also accept `@arnilo/prism`'s `(request, decision)` form, so code that
// builds them the old way keeps working.

// A built-in error (`Error`, `TypeError`, `RangeError`) with a stable `code`, as the native side throws
// them (crates/core/src/error.rs holds the list of codes).
function codedError(Ctor, message, code) {
  const e = new Ctor(message)
  e.code = code
  return e
}

function isRequest(value) {
  return value !== null && typeof value === 'object' && typeof value.target === 'string'
}

function errorOptions(options) {
  return options !== null && typeof options === 'object' && 'cause' in options ? { cause: options.cause } : undefined
}

/**
 * What a policy denial (`PermissionDeniedError`, `TrustDeniedError`) is built from: `(message, options)`,
 * or upstream's `(request, decision)` — then the message is the decision's `reason`, else `describe(request)`.
 */
function denial(message, options, fallback, describe) {
  if (isRequest(message)) {
    const decision = options !== null && typeof options === 'object' ? options : {}
    return { message: typeof decision.reason === 'string' ? decision.reason : describe(message), options: undefined, request: message, decision }
  }
  return { message: message === undefined ? fallback : String(message), options: errorOptions(options), request: undefined, decision: undefined }
}

/** The constructed denial's own fields: upstream's `request` and `decision` when given, then `name` and `code`. */
function setDenial(error, d, name, code) {
  if (d.request) {
    error.request = d.request
    error.decision = d.decision
  }
  error.name = name
  error.code = code
}

class PermissionDeniedError extends Error {
  /**
   * @param {string | object} message the message, or a `PermissionRequest` (then `options` is the decision)
   * @param {{ cause?: unknown, record?: unknown, reason?: string } | undefined} options
   */
  constructor(message, options) {
    const d = denial(message, options, 'Permission denied', (request) => `Permission denied for ${request.kind}:${request.target}:${request.action}`)
    super(d.message, d.options)
    setDenial(this, d, 'PermissionDeniedError', 'ERR_PRISM_PERMISSION_DENIED')
  }
}

class TrustDeniedError extends Error {
  /**
   * @param {string | object} message the message, or a `TrustRequest` (then `options` is the decision)
   * @param {{ cause?: unknown, record?: unknown, reason?: string } | undefined} options
   */
  constructor(message, options) {
    const d = denial(message, options, 'Untrusted', (request) => `Untrusted ${request.kind}: ${request.target}`)
    super(d.message, d.options)
    setDenial(this, d, 'TrustDeniedError', 'ERR_PRISM_UNTRUSTED')
  }
}

function isGuardrailRecord(value) {
  return value !== null && typeof value === 'object' && typeof value.action === 'string' && typeof value.stage === 'string'
}

class GuardrailError extends Error {
  /**
   * @param {string | object} message the message, or a guardrail decision record (`@arnilo/prism`'s form)
   * @param {{ cause?: unknown, record?: unknown }} [options] `record` is the guardrail decision record
   */
  constructor(message, options) {
    if (isGuardrailRecord(message)) {
      const record = message
      const interrupt = record.action === 'interrupt'
      super(
        interrupt
          ? `Guardrail interruption is unavailable at stage "${record.stage}"; interrupt suspends only at the input stage of durable runs`
          : 'Guardrail blocked run',
      )
      this.name = 'GuardrailError'
      this.code = interrupt ? 'ERR_PRISM_GUARDRAIL_INTERRUPT_UNAVAILABLE' : 'ERR_PRISM_GUARDRAIL_BLOCKED'
      this.record = record
      return
    }
    super(message === undefined ? 'Blocked by guardrail' : String(message), errorOptions(options))
    this.name = 'GuardrailError'
    this.code = 'ERR_PRISM_GUARDRAIL_BLOCKED'
    this.record = options !== null && typeof options === 'object' ? options.record : undefined
  }
}

// A provider stream that could not be read: a bounded buffer overflowed, the stream was aborted, or
// tool-call deltas were incomplete or carried invalid JSON. `code` is one of upstream's codes.
class ProviderTransportError extends Error {
  /**
   * @param {'sse_buffer_overflow'|'sse_event_overflow'|'response_body_overflow'|'aborted'|'invalid_json_arguments'|'incomplete_delta'|'response_body_shape'} code
   * @param {string} message
   * @param {number} [limitBytes] the bound that was hit, for the overflow codes
   */
  constructor(code, message, limitBytes) {
    super(message)
    this.name = 'ProviderTransportError'
    this.code = code
    this.limitBytes = limitBytes
  }
}

// A run that ended `failed` or `aborted`: `session.run` rejects with it, and `result` is the run's result.
class AgentRunError extends Error {
  /**
   * @param {{ status: string, error?: { message?: string } }} result
   * @param {{ cause?: unknown } | undefined} options
   */
  constructor(result, options) {
    const message = result?.error?.message ?? (result?.status === 'aborted' ? 'Agent run aborted' : 'Agent run failed')
    super(message, errorOptions(options))
    this.name = 'AgentRunError'
    this.result = result
  }
}

module.exports = { codedError, PermissionDeniedError, TrustDeniedError, GuardrailError, ProviderTransportError, AgentRunError }
