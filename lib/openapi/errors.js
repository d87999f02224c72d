'use strict'
// The error class of `prism-tools-native/openapi`, with `@arnilo/prism-openapi-tools`' name and codes, and
// two codes of this package's own (docs/openapi.md): arguments that do not match the operation's schema
// when `execute` is called directly, and a request to an address the secure fetch refuses.

const OPENAPI_ERROR_CODES = Object.freeze([
  'ERR_PRISM_OPENAPI_DOCUMENT_BOUNDS',
  'ERR_PRISM_OPENAPI_OPERATION_UNKNOWN',
  'ERR_PRISM_OPENAPI_SERVER_DRIFT',
  'ERR_PRISM_OPENAPI_SCHEMA_BOUNDS',
  'ERR_PRISM_OPENAPI_RESPONSE_BOUNDS',
  'ERR_PRISM_OPENAPI_RETRY_EXHAUSTED',
  'ERR_PRISM_OPENAPI_ARGUMENTS',
  'ERR_PRISM_OPENAPI_ADDRESS',
])

class OpenApiToolError extends Error {
  constructor(code, message, options) {
    super(message, options && typeof options === 'object' && 'cause' in options ? { cause: options.cause } : undefined)
    this.name = 'OpenApiToolError'
    this.code = code
  }
}

module.exports = { OpenApiToolError, OPENAPI_ERROR_CODES }
