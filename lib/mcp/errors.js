'use strict'
// Error classes of the MCP bridge, with upstream's names and messages. Each carries a stable `code`.

class McpBridgeError extends Error {
  constructor(message, options) {
    super(message, options && typeof options === 'object' && 'cause' in options ? { cause: options.cause } : undefined)
    this.name = 'McpBridgeError'
    this.code = (options && options.code) || 'ERR_PRISM_MCP_BRIDGE'
  }
}

class McpToolNameCollisionError extends McpBridgeError {
  constructor(prefixedName, remoteName) {
    super(`MCP tool name collision: ${prefixedName} (remote tool ${remoteName})`, { code: 'ERR_PRISM_MCP_NAME_COLLISION' })
    this.name = 'McpToolNameCollisionError'
    this.prefixedName = prefixedName
    this.remoteName = remoteName
  }
}

class McpBridgeClosedError extends McpBridgeError {
  constructor() {
    super('MCP bridge is closed', { code: 'ERR_PRISM_MCP_CLOSED' })
    this.name = 'McpBridgeClosedError'
  }
}

class McpUnsupportedCapabilityError extends Error {
  constructor(capability) {
    super(`Unsupported MCP capability: ${capability}`)
    this.name = 'McpUnsupportedCapabilityError'
    this.code = 'ERR_PRISM_MCP_UNSUPPORTED_CAPABILITY'
    this.capability = capability
  }
}

module.exports = { McpBridgeError, McpToolNameCollisionError, McpBridgeClosedError, McpUnsupportedCapabilityError }
