'use strict'
// Limits and small shared pieces of the MCP server side (`createPrismMcpServer`,
// `createPrismMcpWebHandler`): upstream's defaults and hard caps, the optional SDK's server modules, and
// the checks every option goes through.
const { McpBridgeError } = require('./errors.js')
const CLIENT = require('./limits.js')

const SERVER_LIMITS = Object.freeze({
  // One tools/call, prompt or resource answer, in UTF-8 bytes of its text.
  DEFAULT_MAX_SERVER_RESULT_BYTES: 1024 * 1024,
  HARD_MAX_SERVER_RESULT_BYTES: 8 * 1024 * 1024,
  DEFAULT_MAX_SERVER_CONCURRENT_CALLS: 16,
  HARD_MAX_SERVER_CONCURRENT_CALLS: 256,
  DEFAULT_SERVER_CALL_TIMEOUT_MS: 60_000,
  HARD_SERVER_CALL_TIMEOUT_MS: 30 * 60_000,
  DEFAULT_MAX_HTTP_REQUEST_BYTES: 1024 * 1024,
  HARD_MAX_HTTP_REQUEST_BYTES: 8 * 1024 * 1024,
  // Named for the server so they do not shadow the client's DEFAULT_/HARD_MAX_HTTP_RESPONSE_BYTES.
  DEFAULT_MAX_SERVER_HTTP_RESPONSE_BYTES: 2 * 1024 * 1024,
  HARD_MAX_SERVER_HTTP_RESPONSE_BYTES: 16 * 1024 * 1024,
  DEFAULT_MAX_CONCURRENT_REQUESTS: 32,
  HARD_MAX_CONCURRENT_REQUESTS: 512,
  DEFAULT_MAX_SESSIONS: 32,
  HARD_MAX_SESSIONS: 512,
  // Not upstream's: a session idle this long may be evicted to make room for a new one.
  DEFAULT_SESSION_IDLE_MS: 15 * 60_000,
  HARD_SESSION_IDLE_MS: 24 * 60 * 60_000,
  MAX_SERVER_CAPABILITIES: 500,
  // Progress sent to an MCP client per call: the first at once, then at most one per interval.
  SERVER_PROGRESS_INTERVAL_MS: 100,
  MAX_SERVER_PROGRESS_UPDATES: 1000,
})

/**
 * Listing bounds: what the package's client accepts by default (lib/mcp/limits.js), so a served tool is
 * always bridgeable. Names stay within 128 bytes, under the client's default.
 */
const SCHEMA_BOUNDS = Object.freeze({
  maxToolNameBytes: 128,
  maxToolDescriptionBytes: CLIENT.DEFAULT_MAX_TOOL_DESCRIPTION_BYTES,
  maxToolSchemaBytes: CLIENT.DEFAULT_MAX_TOOL_SCHEMA_BYTES,
  maxTotalToolSchemaBytes: CLIENT.DEFAULT_MAX_TOTAL_TOOL_SCHEMA_BYTES,
  maxJsonDepth: CLIENT.DEFAULT_MAX_JSON_DEPTH,
  maxJsonProperties: CLIENT.DEFAULT_MAX_JSON_PROPERTIES,
})

function serverError(message, code, cause) {
  return new McpBridgeError(message, cause === undefined ? { code } : { code, cause })
}

/** `value ?? fallback`, checked as every MCP limit is (`validateMcpLimit`: a positive safe integer <= `cap`). */
function bounded(value, fallback, cap, name) {
  return CLIENT.validateMcpLimit(name, value ?? fallback, cap)
}

/** Upstream's capability id: agent ids, session ids and request identities. */
function validCapabilityId(value) {
  return typeof value === 'string' && value.length > 0 && value.length <= 128 && /^[A-Za-z0-9][A-Za-z0-9._:-]*$/.test(value)
}

function errorMessage(error) {
  return error instanceof Error ? error.message : String(error)
}

module.exports = { SERVER_LIMITS, SCHEMA_BOUNDS, serverError, bounded, validCapabilityId, errorMessage }
