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

class PermissionDeniedError extends Error {
  /**
   * @param {string | object} message the message, or a `PermissionRequest` (then `options` is the decision)
   * @param {{ cause?: unknown, record?: unknown, reason?: string } | undefined} options
   */
  constructor(message, options) {
    if (isRequest(message)) {
      const request = message
      const decision = options !== null && typeof options === 'object' ? options : {}
      super(
        typeof decision.reason === 'string'
          ? decision.reason
          : `Permission denied for ${request.kind}:${request.target}:${request.action}`,
      )
      this.request = request
      this.decision = decision
    } else {
      super(message === undefined ? 'Permission denied' : String(message), errorOptions(options))
    }
    this.name = 'PermissionDeniedError'
    this.code = 'ERR_PRISM_PERMISSION_DENIED'
  }
}

class TrustDeniedError extends Error {
  /**
   * @param {string | object} message the message, or a `TrustRequest` (then `options` is the decision)
   * @param {{ cause?: unknown, record?: unknown, reason?: string } | undefined} options
   */
  constructor(message, options) {
    if (isRequest(message)) {
      const request = message
      const decision = options !== null && typeof options === 'object' ? options : {}
      super(typeof decision.reason === 'string' ? decision.reason : `Untrusted ${request.kind}: ${request.target}`)
      this.request = request
      this.decision = decision
    } else {
      super(message === undefined ? 'Untrusted' : String(message), errorOptions(options))
    }
    this.name = 'TrustDeniedError'
    this.code = 'ERR_PRISM_UNTRUSTED'
  }
}

function isGuardrailRecord(value) {
  return value !== null && typeof value === 'object' && typeof value.action === 'string' && typeof value.stage === 'string'
}

class GuardrailError extends Error {
  /**
   * @param {string | object} message the message, or a guardrail decision record (`@arnilo/prism`'s form)
   * @param {{ cause?: unknown, record?: unknown } | undefined} options `record` is the guardrail decision record
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
   * @param {number | undefined} limitBytes the bound that was hit, for the overflow codes
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
