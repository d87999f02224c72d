'use strict'
// A tool's `outputSchema` against the structured content of its result, for the bridge (a remote tool's
// `structuredContent`) and the server (a served tool's `value`): checked by the package's own bounded JSON
// Schema validator, as arguments are, so a mismatch names the path (`/count: expected integer, …`).
const native = require('../../index.js')

let sharedValidator
function validator() {
  if (!sharedValidator) sharedValidator = native.createJsonSchemaToolArgumentValidator()
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
 * undefined when it matches. `structured` must be a JSON object (MCP's `structuredContent`).
 */
function outputSchemaMismatch(name, outputSchema, structured) {
  const refusal = validator()(standInFor(name, outputSchema), structured, undefined)
  if (refusal === undefined) return undefined
  return typeof refusal === 'string' ? refusal : String(refusal && refusal.message)
}

module.exports = { outputSchemaMismatch }
