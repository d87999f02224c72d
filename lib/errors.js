'use strict'
// Error classes of the public API. Handwritten JS because an Error subclass must be one.

class GuardrailError extends Error {
  constructor(message, options = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.name = 'GuardrailError'
    this.code = 'ERR_PRISM_GUARDRAIL_BLOCKED'
    this.record = options.record
  }
}

module.exports = { GuardrailError }
