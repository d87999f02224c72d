'use strict'
// The SDK client the bridge connects with, and what it offers a server, with `@arnilo/prism-mcp`'s
// options: `roots` (file: URIs the host approves, at most 500), `sampling` and `elicitation` callbacks
// (requests and answers bounded by `maxCapabilityBytes`; an accepted elicitation needs explicit human
// interaction and content valid against the requested schema), and `mcpApps`.
const sdk = require('./sdk.js')
const L = require('./limits.js')
const { McpBridgeError } = require('./errors.js')
const { boundedJson } = require('./json-bounds.js')
const { appsClientCapabilities } = require('./apps.js')
const { elicitationRequestHandler } = require('./elicitation.js')

const CLIENT_INFO = { name: 'prism-tools-native-mcp', version: '0.1.0' }
const MAX_ROOTS = 500

function checkCallback(options, name) {
  if (options[name] !== undefined && typeof options[name] !== 'function') throw new TypeError(`${name} must be a function`)
  return typeof options[name] === 'function'
}

/**
 * An SDK `Client` offering exactly the capabilities the options ask for, with their request handlers.
 * @param {Partial<import('../../types/mcp').ConnectMcpCapabilitiesOptions>} [options]
 */
function createMcpCapabilityClient(options = {}) {
  const maxBytes = L.validateMcpLimit('maxCapabilityBytes', options.maxCapabilityBytes ?? L.DEFAULT_MAX_CAPABILITY_BYTES, L.HARD_MAX_CAPABILITY_BYTES)
  const roots = checkCallback(options, 'roots')
  const sampling = checkCallback(options, 'sampling')
  const elicitation = checkCallback(options, 'elicitation')
  const capabilities = {
    ...(options.mcpApps === true ? appsClientCapabilities() : {}),
    ...(roots ? { roots: { listChanged: true } } : {}),
    ...(sampling ? { sampling: {} } : {}),
    ...(elicitation ? { elicitation: { form: {}, url: {} } } : {}),
  }
  const { Client } = sdk.client()
  const client = new Client(CLIENT_INFO, { capabilities })
  const types = sdk.types()
  if (roots) {
    client.setRequestHandler(types.ListRootsRequestSchema, async () => {
      const list = boundedJson(await options.roots(), maxBytes, 'MCP roots')
      if (!Array.isArray(list)) throw new McpBridgeError('MCP roots must be an array', { code: 'ERR_PRISM_MCP_PROTOCOL' })
      if (list.length > MAX_ROOTS) throw new McpBridgeError(`MCP roots exceed ${MAX_ROOTS} items`, { code: 'ERR_PRISM_MCP_LIMIT' })
      for (const root of list) {
        let uri
        try {
          uri = new URL(root && root.uri)
        } catch {
          throw new McpBridgeError(`Invalid MCP root URI: ${String(root && root.uri).slice(0, 256)}`, { code: 'ERR_PRISM_MCP_PROTOCOL' })
        }
        if (uri.protocol !== 'file:') throw new McpBridgeError('MCP roots must use file: URIs approved by the host', { code: 'ERR_PRISM_MCP_PROTOCOL' })
      }
      return { roots: list }
    })
  }
  if (sampling) {
    client.setRequestHandler(types.CreateMessageRequestSchema, async (request, extra) =>
      boundedJson(await options.sampling({ params: boundedJson(request.params, maxBytes, 'MCP sampling request'), signal: extra.signal }), maxBytes, 'MCP sampling result'),
    )
  }
  if (elicitation) client.setRequestHandler(types.ElicitRequestSchema, elicitationRequestHandler(options.elicitation, maxBytes))
  return client
}

module.exports = { createMcpCapabilityClient, CLIENT_INFO }
