'use strict'
// A framework tool's input schema (zod 4, a Standard Schema, the AI SDK's `jsonSchema(…)`) as this
// package's JSON Schema `parameters`, and the framework's own parse of the validated arguments, so
// `.default()` and `.transform()` still apply before the framework tool's `execute`.

const { zodParameters } = require('../providers/zod.js')
const { adapterError } = require('./harness.js')

const isZod = (s) => s !== null && typeof s === 'object' && s._zod !== undefined && typeof s.safeParseAsync === 'function'
const isThenable = (v) => v !== null && (typeof v === 'object' || typeof v === 'function') && typeof v.then === 'function'

/**
 * `{ parameters, parse }` of a framework tool `toolName`'s schema. `asSchema` is the AI SDK's (it
 * reads Standard Schema and `jsonSchema(…)` objects); `parse(args)` answers the parsed value or
 * throws a coded error naming the tool and the fields.
 */
function foreignSchema(toolName, schema, asSchema) {
  if (isZod(schema)) {
    const parameters = zodParameters(schema, { toolName })
    return { parameters, parse: async (args) => zodParse(toolName, schema, args) }
  }
  let s
  try {
    s = asSchema(schema)
  } catch (e) {
    throw adapterError(TypeError, `Tool ${toolName}: inputSchema is not a zod, Standard Schema or jsonSchema(…) schema (${e?.message ?? e})`, 'ERR_PRISM_INVALID_OPTION')
  }
  const json = s.jsonSchema
  if (isThenable(json)) {
    throw adapterError(TypeError, `Tool ${toolName}: inputSchema converts to JSON Schema asynchronously; pass jsonSchema(<the JSON Schema object>) so the tool can be validated before it runs`, 'ERR_PRISM_INVALID_OPTION')
  }
  if (json === null || typeof json !== 'object' || (json.type !== undefined && json.type !== 'object')) {
    throw adapterError(TypeError, `Tool ${toolName}: inputSchema must describe an object (found type ${JSON.stringify(json?.type)})`, 'ERR_PRISM_INVALID_OPTION')
  }
  const { $schema: _drop, ...parameters } = json
  if (parameters.type === undefined) parameters.type = 'object'
  const validate = typeof s.validate === 'function' ? s.validate.bind(s) : undefined
  return {
    parameters,
    async parse(args) {
      if (validate === undefined) return args
      const r = await validate(args)
      if (r && r.success) return r.value
      throw invalidArguments(toolName, issuesOf(r?.error))
    },
  }
}

async function zodParse(toolName, schema, args) {
  const r = await schema.safeParseAsync(args)
  if (r.success) return r.data
  throw invalidArguments(toolName, issuesOf(r.error))
}

// "path: message" for each issue of a zod or Standard Schema failure, else the error's message.
function issuesOf(error) {
  const issues = error?.issues ?? error?.cause?.issues
  if (Array.isArray(issues) && issues.length > 0) {
    return issues
      .slice(0, 8)
      .map((i) => `${Array.isArray(i.path) && i.path.length ? `/${i.path.map((p) => (typeof p === 'object' && p !== null ? p.key : p)).join('/')}` : '(root)'}: ${i.message}`)
      .join('; ')
  }
  return typeof error?.message === 'string' ? error.message : 'the arguments do not match the schema'
}

function invalidArguments(toolName, detail) {
  return adapterError(TypeError, `Tool ${toolName} arguments do not match its schema: ${detail}`, 'invalid_arguments')
}

module.exports = { foreignSchema, isZod }
