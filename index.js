'use strict'
// The package entry (CommonJS). It re-exports the napi-generated loader (`binding.js`) and the few
// small JS pieces the language requires (Error subclasses, the await driver). No decisions live here.
const native = require('./binding.js')

const validation = require('./lib/validation.js')
const argumentsText = require('./lib/arguments-text.js')

module.exports = {
  nativeVersion: native.nativeVersion,

  // Validation (SPEC.md section 6) and provider argument text — docs/validation.md
  createToolParameterValidator: validation.createToolParameterValidator,
  createJsonSchemaArgumentValidator: validation.createJsonSchemaArgumentValidator,
  createJsonSchemaToolArgumentValidator: validation.createJsonSchemaToolArgumentValidator,
  toolCallFromArgumentsText: argumentsText.toolCallFromArgumentsText,
  reconstructToolCallDeltas: argumentsText.reconstructToolCallDeltas,
}
