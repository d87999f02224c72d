'use strict'
// The two Error subclasses of the effects module. The language requires these in JS; the native addon
// receives the classes once so that errors raised in Rust are instances of them.
const native = require('../binding.js')

/** A refusal of the tool-effect contract. `code` is one of the six `ERR_PRISM_TOOL_EFFECT_*` codes (upstream's five and `…_EXHAUSTED`). */
class ToolEffectError extends Error {
  constructor(code, message) {
    super(message)
    this.code = code
    this.name = 'ToolEffectError'
  }
}

/** An identity that is not active or does not own what it claims. `code` is `ERR_PRISM_IDENTITY`. */
class IdentityError extends Error {
  constructor(message, reason) {
    super(message)
    this.code = 'ERR_PRISM_IDENTITY'
    this.reason = reason
    this.name = 'IdentityError'
  }
}

native.__registerToolEffectErrors(ToolEffectError, IdentityError)

module.exports = { ToolEffectError, IdentityError }
