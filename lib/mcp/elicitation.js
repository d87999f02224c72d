'use strict'
// MCP elicitation (`elicitation/create`, a server asking the user for input) mapped onto the package's
// decisions, with `@arnilo/prism-mcp`'s names and byte limits: `mcpElicitationDecision` turns the
// untrusted request into a pending decision of kind `elicitation` (message ≤ 2 KiB, schema ≤ 16 KiB and
// one the package's JSON Schema validator compiles); `mcpElicitationResultFromDecision` turns the host's
// decision back into the protocol result: a rejection declines, an acceptance needs the user's answer
// (≤ 16 KiB, valid against the requested schema when it is given) and proof of human interaction.
const native = require('../../index.js')
const { McpBridgeError } = require('./errors.js')
const { measureBoundedJson, boundedJson, truncateUtf8, utf8Bytes } = require('./json-bounds.js')
const { isPlainObject } = require('./shape.js')

const MAX_MCP_ELICITATION_MESSAGE_BYTES = 2_048
const MAX_MCP_ELICITATION_SCHEMA_BYTES = 16 * 1024
const MAX_DEPTH = 32
const MAX_PROPERTIES = 1_000

function elicitationError(message, code = 'ERR_PRISM_MCP_ELICITATION') {
  return new McpBridgeError(message, { code })
}

let validator
function schemaValidator() {
  if (!validator) validator = native.createJsonSchemaArgumentValidator({ maxErrors: 1 })
  return validator
}

function boundedText(value, maxBytes, label) {
  if (typeof value !== 'string') throw elicitationError(`${label} must be a string`)
  if (utf8Bytes(value) > maxBytes) throw elicitationError(`${label} exceeds ${maxBytes} bytes`, 'ERR_PRISM_MCP_LIMIT')
  return value
}

function bounded(value, label) {
  try {
    measureBoundedJson(value, { maxBytes: MAX_MCP_ELICITATION_SCHEMA_BYTES, maxDepth: MAX_DEPTH, maxProperties: MAX_PROPERTIES, label })
  } catch (error) {
    throw elicitationError(error.message, 'ERR_PRISM_MCP_LIMIT')
  }
}

/** The requested schema: an object (anything else means "an object"), bounded, and one the validator takes. */
function requestedSchema(value) {
  if (!isPlainObject(value)) return { type: 'object' }
  bounded(value, 'MCP elicitation schema')
  const checked = schemaValidator().validate(value, {})
  const refusal = !checked.ok && checked.errors && checked.errors.find((issue) => !issue.path && /^schema\b/.test(issue.message))
  if (refusal) throw elicitationError(`MCP elicitation schema refused: ${truncateUtf8(refusal.message, 256)}`)
  return value
}

/**
 * An untrusted `ElicitRequest` params object as a pending decision (kind `elicitation`).
 * @returns {{ approvalId: string, kind: 'elicitation', scope: { toolName?: string }, reason: string, elicitationSchema: object }}
 */
function mcpElicitationDecision(approvalId, params, options = {}) {
  if (typeof approvalId !== 'string' || approvalId.length === 0) throw elicitationError('MCP elicitation needs an approvalId')
  if (!isPlainObject(params)) throw elicitationError('MCP elicitation params must be an object')
  const toolName = options && typeof options.toolName === 'string' && options.toolName ? options.toolName : undefined
  return {
    approvalId,
    kind: 'elicitation',
    scope: toolName ? { toolName } : {},
    reason: boundedText(params.message, MAX_MCP_ELICITATION_MESSAGE_BYTES, 'MCP elicitation message'),
    elicitationSchema: requestedSchema(params.requestedSchema),
  }
}

/**
 * The protocol result of a decision. `reject_*` declines. `allow_*` accepts with `decision.elicitation`,
 * which must be an object within 16 KiB and, when `options.requestedSchema` (or `options.pending`, the
 * pending decision) is given, valid against that schema; and it fails closed unless
 * `options.humanInteraction === true`.
 */
function mcpElicitationResultFromDecision(decision, options = {}) {
  if (!isPlainObject(decision)) throw elicitationError('MCP elicitation decision must be an object')
  const outcome = decision.outcome
  if (outcome === 'reject_once' || outcome === 'reject_for_run') return { action: 'decline' }
  if (outcome !== 'allow_once' && outcome !== 'allow_for_run') throw elicitationError('MCP elicitation decision has an unknown outcome')
  if (!decision.elicitation) throw elicitationError('Accepted MCP elicitation requires an elicitation payload')
  if (!isPlainObject(decision.elicitation)) throw elicitationError('MCP elicitation payload must be an object')
  bounded(decision.elicitation, 'MCP elicitation payload')
  const pending = options && isPlainObject(options.pending) ? options.pending : undefined
  if (pending && pending.approvalId !== undefined && decision.approvalId !== pending.approvalId) {
    throw elicitationError('MCP elicitation decision is for another approvalId')
  }
  const schema = options && options.requestedSchema !== undefined ? requestedSchema(options.requestedSchema) : pending ? pending.elicitationSchema : undefined
  if (schema !== undefined) {
    const checked = schemaValidator().validate(schema, decision.elicitation)
    if (!checked.ok) {
      const issue = (checked.errors && checked.errors[0]) || { message: 'invalid' }
      throw elicitationError(truncateUtf8(`MCP elicitation payload does not match the requested schema${issue.path ? ` at ${issue.path}` : ''}: ${issue.message}`, 512), 'ERR_PRISM_MCP_ELICITATION_INVALID')
    }
  }
  if (!options || options.humanInteraction !== true) throw elicitationError('Accepted MCP elicitation requires explicit human interaction')
  return { action: 'accept', content: decision.elicitation, humanInteraction: true }
}

/**
 * The SDK request handler for `elicitation/create` around the host's `elicitation({ params, signal })`:
 * the request is bounded (its message and schema as above) before the host sees it; the host's answer
 * must be `{ action }`, an `accept` must carry `humanInteraction: true` and content valid against the
 * requested schema, and the marker never reaches the server.
 */
function elicitationRequestHandler(callback, maxBytes) {
  return async (request, extra) => {
    const params = request && request.params
    boundedJson(params, maxBytes, 'MCP elicitation request')
    if (isPlainObject(params) && params.mode !== 'url') mcpElicitationDecision('request', params)
    const result = await callback({ params, signal: extra && extra.signal })
    boundedJson(result, maxBytes, 'MCP elicitation result')
    if (!isPlainObject(result) || !('action' in result)) throw elicitationError('Invalid MCP elicitation result')
    if (result.action === 'accept' && result.humanInteraction !== true) throw elicitationError('Accepted MCP elicitation requires explicit human interaction')
    const { humanInteraction: _marker, ...protocolResult } = result
    if (protocolResult.action === 'accept' && protocolResult.content !== undefined && isPlainObject(params) && params.mode !== 'url') {
      const checked = schemaValidator().validate(requestedSchema(params.requestedSchema), protocolResult.content)
      if (!checked.ok) throw elicitationError('MCP elicitation content does not match the requested schema', 'ERR_PRISM_MCP_ELICITATION_INVALID')
    }
    return protocolResult
  }
}

module.exports = {
  MAX_MCP_ELICITATION_MESSAGE_BYTES,
  MAX_MCP_ELICITATION_SCHEMA_BYTES,
  mcpElicitationDecision,
  mcpElicitationResultFromDecision,
  elicitationRequestHandler,
}
