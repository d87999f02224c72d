'use strict'
// Flat limits of the MCP bridge: upstream's option names, defaults and hard caps. Every option must be a
// positive safe integer no greater than its hard cap, checked when the bridge is created.
const { McpBridgeError } = require('./errors.js')

const L = {
  DEFAULT_CALL_TIMEOUT_MS: 60_000,
  DEFAULT_MAX_RESULT_BYTES: 10_000_000,
  DEFAULT_LIST_CACHE_TTL_MS: 30_000,
  DEFAULT_MAX_LIST_PAGES: 20,
  HARD_MAX_LIST_PAGES: 100,
  DEFAULT_MAX_TOOLS: 500,
  HARD_MAX_TOOLS: 5_000,
  DEFAULT_MAX_CURSOR_BYTES: 4 * 1024,
  HARD_MAX_CURSOR_BYTES: 16 * 1024,
  DEFAULT_MAX_TOOL_NAME_BYTES: 256,
  HARD_MAX_TOOL_NAME_BYTES: 1024,
  DEFAULT_MAX_TOOL_DESCRIPTION_BYTES: 16 * 1024,
  HARD_MAX_TOOL_DESCRIPTION_BYTES: 64 * 1024,
  DEFAULT_MAX_TOOL_SCHEMA_BYTES: 256 * 1024,
  HARD_MAX_TOOL_SCHEMA_BYTES: 1024 * 1024,
  DEFAULT_MAX_TOTAL_TOOL_SCHEMA_BYTES: 4 * 1024 * 1024,
  HARD_MAX_TOTAL_TOOL_SCHEMA_BYTES: 16 * 1024 * 1024,
  DEFAULT_MAX_JSON_DEPTH: 64,
  HARD_MAX_JSON_DEPTH: 128,
  DEFAULT_MAX_JSON_PROPERTIES: 10_000,
  HARD_MAX_JSON_PROPERTIES: 100_000,
  HARD_MAX_RESULT_BYTES: 16 * 1024 * 1024,
  HARD_CALL_TIMEOUT_MS: 30 * 60_000,
  HARD_LIST_CACHE_TTL_MS: 24 * 60 * 60_000,
  DEFAULT_MAX_HTTP_RESPONSE_BYTES: 16 * 1024 * 1024,
  HARD_MAX_HTTP_RESPONSE_BYTES: 64 * 1024 * 1024,
  DEFAULT_MAX_CAPABILITY_BYTES: 1024 * 1024,
  HARD_MAX_CAPABILITY_BYTES: 8 * 1024 * 1024,
  DEFAULT_MAX_CAPABILITY_ITEMS: 500,
  HARD_MAX_CAPABILITY_ITEMS: 5_000,
  DEFAULT_MAX_CAPABILITY_PAGES: 20,
  HARD_MAX_CAPABILITY_PAGES: 100,
  // Not upstream's: progress notifications of one call reach dispatch (an event and a ledger row
  // each) at most once per interval and at most this many times.
  DEFAULT_PROGRESS_INTERVAL_MS: 100,
  HARD_PROGRESS_INTERVAL_MS: 60_000,
  DEFAULT_MAX_PROGRESS_UPDATES: 100,
  HARD_MAX_PROGRESS_UPDATES: 10_000,
}

function validateMcpLimit(name, value, hardCap) {
  if (!Number.isSafeInteger(value) || value < 1 || value > hardCap) {
    throw new McpBridgeError(`${name} must be a positive safe integer <= ${hardCap}`, { code: 'ERR_PRISM_MCP_LIMIT' })
  }
  return value
}

const CLIENT_LIMITS = [
  ['maxListPages', 'DEFAULT_MAX_LIST_PAGES', 'HARD_MAX_LIST_PAGES'],
  ['maxTools', 'DEFAULT_MAX_TOOLS', 'HARD_MAX_TOOLS'],
  ['maxCursorBytes', 'DEFAULT_MAX_CURSOR_BYTES', 'HARD_MAX_CURSOR_BYTES'],
  ['maxToolNameBytes', 'DEFAULT_MAX_TOOL_NAME_BYTES', 'HARD_MAX_TOOL_NAME_BYTES'],
  ['maxToolDescriptionBytes', 'DEFAULT_MAX_TOOL_DESCRIPTION_BYTES', 'HARD_MAX_TOOL_DESCRIPTION_BYTES'],
  ['maxToolSchemaBytes', 'DEFAULT_MAX_TOOL_SCHEMA_BYTES', 'HARD_MAX_TOOL_SCHEMA_BYTES'],
  ['maxTotalToolSchemaBytes', 'DEFAULT_MAX_TOTAL_TOOL_SCHEMA_BYTES', 'HARD_MAX_TOTAL_TOOL_SCHEMA_BYTES'],
  ['maxJsonDepth', 'DEFAULT_MAX_JSON_DEPTH', 'HARD_MAX_JSON_DEPTH'],
  ['maxJsonProperties', 'DEFAULT_MAX_JSON_PROPERTIES', 'HARD_MAX_JSON_PROPERTIES'],
  ['maxResultBytes', 'DEFAULT_MAX_RESULT_BYTES', 'HARD_MAX_RESULT_BYTES'],
  ['callTimeoutMs', 'DEFAULT_CALL_TIMEOUT_MS', 'HARD_CALL_TIMEOUT_MS'],
  ['listCacheTtlMs', 'DEFAULT_LIST_CACHE_TTL_MS', 'HARD_LIST_CACHE_TTL_MS'],
  // Not upstream's: connecting and listing get their own deadline, so a short callTimeoutMs for quick
  // tools does not race a server's start-up.
  ['connectTimeoutMs', 'DEFAULT_CALL_TIMEOUT_MS', 'HARD_CALL_TIMEOUT_MS'],
  ['progressIntervalMs', 'DEFAULT_PROGRESS_INTERVAL_MS', 'HARD_PROGRESS_INTERVAL_MS'],
  ['maxProgressUpdates', 'DEFAULT_MAX_PROGRESS_UPDATES', 'HARD_MAX_PROGRESS_UPDATES'],
]

/**
 * Every client limit resolved against its default and hard cap; throws on an invalid value.
 * @param {Record<string, any>} [input]
 * @returns {Readonly<Record<string, number>>}
 */
function resolveMcpClientLimits(input = {}) {
  const out = {}
  for (const [name, def, hard] of CLIENT_LIMITS) {
    out[name] = validateMcpLimit(name, input[name] ?? L[def], L[hard])
  }
  return Object.freeze(out)
}

module.exports = { ...L, validateMcpLimit, resolveMcpClientLimits }
