'use strict'
// Resources and prompts as host-facing facades beside the tool bridge. They never become
// `ToolDefinition`s: a model reaches a server only through bridged tools and dispatch.
const sdk = require('./sdk.js')
const L = require('./limits.js')
const { McpBridgeError, McpUnsupportedCapabilityError, McpBridgeClosedError } = require('./errors.js')
const { boundedJson } = require('./json-bounds.js')
const { connectClient, createState, startBridge, closeState, connectionFacade } = require('./bridge.js')
const { checkedSchema } = require('./shape.js')

function capabilityLimits(options) {
  return {
    maxBytes: L.validateMcpLimit('maxCapabilityBytes', options.maxCapabilityBytes ?? L.DEFAULT_MAX_CAPABILITY_BYTES, L.HARD_MAX_CAPABILITY_BYTES),
    maxItems: L.validateMcpLimit('maxCapabilityItems', options.maxCapabilityItems ?? L.DEFAULT_MAX_CAPABILITY_ITEMS, L.HARD_MAX_CAPABILITY_ITEMS),
    maxPages: L.validateMcpLimit('maxCapabilityPages', options.maxCapabilityPages ?? L.DEFAULT_MAX_CAPABILITY_PAGES, L.HARD_MAX_CAPABILITY_PAGES),
    timeout: L.validateMcpLimit('callTimeoutMs', options.callTimeoutMs ?? L.DEFAULT_CALL_TIMEOUT_MS, L.HARD_CALL_TIMEOUT_MS),
  }
}

/** Facades over an already connected client; `tools` is the tool bridge when the server offers tools. */
async function attachMcpCapabilities(client, transport, options) {
  const limits = capabilityLimits(options)
  const capabilities = client.getServerCapabilities() || {}
  const state = createState(client, transport, options, false)
  let bridge
  if (capabilities.tools) bridge = await startBridge(state, options.signal)
  const types = sdk.types()
  const assertOpen = () => {
    if (state.status === 'closed') throw new McpBridgeClosedError()
    if (state.status === 'disconnected') throw new McpBridgeError(`MCP server ${state.serverId} disconnected: ${state.error}`, { code: 'ERR_PRISM_MCP_DISCONNECTED' })
  }
  const require = (name) => {
    assertOpen()
    if (!(name in capabilities)) throw new McpUnsupportedCapabilityError(name)
  }
  const requestOptions = (signal) => ({ signal, timeout: limits.timeout, maxTotalTimeout: limits.timeout })
  const collect = async (name, method, schema, key, signal) => {
    require(name)
    const out = []
    const seen = new Set()
    let cursor
    for (let page = 0; page < limits.maxPages; page++) {
      const result = await client.request({ method, params: cursor ? { cursor } : undefined }, checkedSchema(schema, `MCP ${method} result`), requestOptions(signal))
      boundedJson(result, limits.maxBytes, `MCP ${method}`)
      if (out.length + result[key].length > limits.maxItems) {
        throw new McpBridgeError(`MCP ${method} exceeds ${limits.maxItems} items`, { code: 'ERR_PRISM_MCP_LIMIT' })
      }
      out.push(...result[key])
      cursor = result.nextCursor || undefined
      if (!cursor) return out
      if (seen.has(cursor)) throw new McpBridgeError(`MCP ${method} repeated a pagination cursor`, { code: 'ERR_PRISM_MCP_PROTOCOL' })
      seen.add(cursor)
    }
    throw new McpBridgeError(`MCP ${method} exceeds ${limits.maxPages} pages`, { code: 'ERR_PRISM_MCP_LIMIT' })
  }
  if (!bridge) hookOnlyClose(state)
  return connectionFacade(state, {
    get tools() {
      return bridge ? bridge.tools : []
    },
    serverVersion: client.getServerVersion(),
    serverCapabilities: capabilities,
    refresh: (o) => (bridge ? bridge.refresh(o) : Promise.resolve()),
    close: () => closeState(state),
    listResources: (o) => collect('resources', 'resources/list', types.ListResourcesResultSchema, 'resources', o?.signal),
    listResourceTemplates: (o) => collect('resources', 'resources/templates/list', types.ListResourceTemplatesResultSchema, 'resourceTemplates', o?.signal),
    async readResource(uri, o) {
      require('resources')
      if (typeof uri !== 'string' || uri.length === 0) throw new TypeError('readResource needs a resource URI')
      return boundedJson(await client.request({ method: 'resources/read', params: { uri } }, checkedSchema(types.ReadResourceResultSchema, 'MCP resources/read result'), requestOptions(o?.signal)), limits.maxBytes, 'MCP resource result')
    },
    listPrompts: (o) => collect('prompts', 'prompts/list', types.ListPromptsResultSchema, 'prompts', o?.signal),
    async getPrompt(name, args, o) {
      require('prompts')
      if (typeof name !== 'string' || name.length === 0) throw new TypeError('getPrompt needs a prompt name')
      const params = args === undefined ? { name } : { name, arguments: args }
      return boundedJson(await client.request({ method: 'prompts/get', params }, checkedSchema(types.GetPromptResultSchema, 'MCP prompts/get result'), requestOptions(o?.signal)), limits.maxBytes, 'MCP prompt result')
    },
  })
}

function hookOnlyClose(state) {
  const previous = state.client.onclose
  state.client.onclose = () => {
    try {
      previous?.()
    } catch {}
    if (state.status === 'connected') {
      state.status = 'disconnected'
      state.error = 'connection closed'
    }
  }
}

/** Connects and returns the tool bridge plus bounded resource and prompt facades. */
async function connectMcpCapabilities(options) {
  const { client, transport } = await connectClient(options)
  try {
    return await attachMcpCapabilities(client, transport, options)
  } catch (error) {
    await client.close().catch(() => {})
    await transport.close().catch(() => {})
    throw error
  }
}

module.exports = { connectMcpCapabilities, attachMcpCapabilities }
