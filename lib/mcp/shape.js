'use strict'
// What a server sends is checked against the MCP shapes here, and a mismatch becomes one short
// `McpBridgeError` with a stable code that names the place and the fault (never a validator's dump,
// never the offending value). A listed tool the bridge cannot take is described by `toolRefusal`, so
// the listing leaves that tool out and bridges the rest.
const { McpBridgeError } = require('./errors.js')
const { truncateUtf8, utf8Bytes } = require('./json-bounds.js')
const { isObjectPrototype } = require('../json-object.js')

const MAX_DETAIL_BYTES = 256

function isPlainObject(value) {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false
  const proto = Object.getPrototypeOf(value)
  return proto === null || isObjectPrototype(proto)
}

function describeType(value) {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  if (typeof value === 'object') return 'an object'
  return `a ${typeof value}`
}

/** The first issue of a Zod error (descending into the first branch of a union) as `at <path>: <message>`. */
function describeIssues(error) {
  let issue = error && Array.isArray(error.issues) ? error.issues[0] : undefined
  for (let i = 0; i < 8 && issue && issue.code === 'invalid_union' && Array.isArray(issue.errors) && Array.isArray(issue.errors[0]) && issue.errors[0][0]; i++) {
    const inner = issue.errors[0][0]
    issue = { ...inner, path: [...(issue.path || []), ...(inner.path || [])] }
  }
  if (!issue) return 'not a valid value'
  const path = Array.isArray(issue.path) && issue.path.length > 0 ? issue.path.map(String).join('.') : '(root)'
  const message = typeof issue.message === 'string' ? issue.message.replace(/^Invalid input: /, '') : 'invalid'
  return truncateUtf8(`at ${path}: ${message}`, MAX_DETAIL_BYTES)
}

function shapeError(message, code = 'ERR_PRISM_MCP_PROTOCOL') {
  return new McpBridgeError(message, { code })
}

/**
 * Wraps an SDK result schema so a value that does not match fails with
 * `McpBridgeError("<label> is invalid at <path>: <fault>")`, code `ERR_PRISM_MCP_PROTOCOL`, in place of
 * the SDK's Zod error. The SDK calls `safeParse` on a schema that is not one of its own Zod ones.
 */
function checkedSchema(schema, label) {
  return {
    safeParse(data) {
      const result = schema.safeParse(data)
      if (result.success) return result
      const detail = describeIssues(result.error)
      const error = shapeError(`${label} is invalid ${detail}`)
      error.detail = detail
      return { success: false, error }
    },
    parse(data) {
      const result = this.safeParse(data)
      if (!result.success) throw result.error
      return result.data
    },
  }
}

/** `tools/list` pages: an object with a `tools` array and an optional string `nextCursor`; tools are checked one by one. */
const listPageSchema = {
  safeParse(data) {
    if (!isPlainObject(data)) return { success: false, error: shapeError(`MCP tools/list result is ${describeType(data)}, not an object`) }
    if (!Array.isArray(data.tools)) return { success: false, error: shapeError('MCP tools/list result has no tools array') }
    if (data.nextCursor !== undefined && data.nextCursor !== null && typeof data.nextCursor !== 'string') {
      return { success: false, error: shapeError('MCP tools/list nextCursor is not a string') }
    }
    return { success: true, data }
  },
  parse(data) {
    const result = this.safeParse(data)
    if (!result.success) throw result.error
    return result.data
  },
}

/** A printable, bounded name for a listed entry whose `name` may be anything. */
function entryName(tool, index) {
  const name = isPlainObject(tool) ? tool.name : undefined
  if (typeof name === 'string') return truncateUtf8(name, MAX_DETAIL_BYTES)
  if (typeof name === 'number' || typeof name === 'boolean') return String(name)
  return `#${index}`
}

/**
 * Why a listed tool cannot be bridged, or undefined. `toolSchema` is the SDK's `ToolSchema`; the
 * parsed tool (the SDK's normalised copy) is returned through `out.tool`.
 */
function toolRefusal(tool, index, toolSchema, out) {
  if (!isPlainObject(tool)) return `MCP tools/list entry ${index} is ${describeType(tool)}, not an object`
  if (typeof tool.name !== 'string') return `MCP tools/list entry ${index} has a name that is ${describeType(tool.name)}, not a string`
  if (tool.name.length === 0) return `MCP tools/list entry ${index} has an empty name`
  const label = `MCP tool ${truncateUtf8(tool.name, MAX_DETAIL_BYTES)}`
  if (tool.inputSchema === undefined) return `${label} has no inputSchema`
  if (!isPlainObject(tool.inputSchema)) return `${label} inputSchema is ${describeType(tool.inputSchema)}, not an object`
  if (tool.inputSchema.type !== 'object') return `${label} inputSchema must have type "object"`
  if (tool.outputSchema !== undefined) {
    if (!isPlainObject(tool.outputSchema)) return `${label} outputSchema is ${describeType(tool.outputSchema)}, not an object`
    if (tool.outputSchema.type !== 'object') return `${label} outputSchema must have type "object"`
  }
  if (tool.description !== undefined && typeof tool.description !== 'string') return `${label} description is ${describeType(tool.description)}, not a string`
  const parsed = toolSchema.safeParse(tool)
  if (!parsed.success) return `${label} does not match the MCP tool shape ${describeIssues(parsed.error)}`
  out.tool = parsed.data
  return undefined
}

/** A Zod error from the SDK's own parsing (as `client.connect` throws for a bad initialize result). */
function isValidatorError(error) {
  return error !== null && typeof error === 'object' && Array.isArray(error.issues) && (error.name === 'ZodError' || error.name === '$ZodError')
}

module.exports = { checkedSchema, listPageSchema, toolRefusal, entryName, describeIssues, isValidatorError, isPlainObject, utf8Bytes }
