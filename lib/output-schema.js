'use strict'
// A tool's `outputSchema` against the structured content of its result: the `value` of a local tool's
// result (dispatch, lib/dispatch-answers.js), a bridged remote tool's `structuredContent`
// (lib/mcp/bridge.js) and a served tool's `value` (lib/mcp/server-tools.js). One check for all three,
// by the package's own bounded JSON Schema validator, as arguments are, so a mismatch names the path
// (`/count: expected integer, …`).
const { createJsonSchemaToolArgumentValidator } = require('./validation.js')

let sharedValidator
function validator() {
  if (!sharedValidator) sharedValidator = createJsonSchemaToolArgumentValidator()
  return sharedValidator
}

// Per output schema object, a stand-in tool whose `parameters` is that schema: the validator caches
// its compiled schema (and acceptance plan) per tool object, so a warm call compiles nothing.
const standIns = new WeakMap()

function standInFor(name, outputSchema) {
  let tool = standIns.get(outputSchema)
  if (tool === undefined) {
    tool = { name, parameters: outputSchema }
    standIns.set(outputSchema, tool)
  }
  return tool
}

/**
 * Why `structured` does not match `outputSchema`, as `<path>: <message>` issues joined by `; `, or
 * undefined when it matches. A schema the validator refuses (an unknown `$schema`, a remote `$ref`)
 * is a mismatch that says why.
 */
function outputSchemaMismatch(name, outputSchema, structured) {
  const refusal = validator()(standInFor(name, outputSchema), structured, undefined)
  if (refusal === undefined) return undefined
  return typeof refusal === 'string' ? refusal : String(refusal && refusal.message)
}

/**
 * Why a successful result of a tool with `outputSchema` does not carry matching structured content:
 * its `value` is that content (MCP's `structuredContent`), so a result without one does not match.
 * `outputSchema` must not be a non-object (the caller reads it from the tool).
 */
function resultOutputMismatch(name, outputSchema, result) {
  const value = result.value
  if (value === undefined) return 'the result has no value (its structured content)'
  if (outputSchema === null || typeof outputSchema !== 'object') return 'the outputSchema is not a JSON Schema object'
  return outputSchemaMismatch(name, outputSchema, value)
}

module.exports = { outputSchemaMismatch, resultOutputMismatch }
