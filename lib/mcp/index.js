'use strict'
// `prism-tools-native/mcp`: the MCP client bridge. Needs the optional peer `@modelcontextprotocol/sdk`.
const bridge = require('./bridge.js')
const capabilities = require('./capabilities.js')
const names = require('./names.js')
const content = require('./content.js')
const errors = require('./errors.js')
const limits = require('./limits.js')
const { createMcpTransport, createSecureMcpFetch } = require('./transport.js')
const { measureBoundedJson } = require('./json-bounds.js')
const elicitation = require('./elicitation.js')
const { createMcpCapabilityClient } = require('./client-capabilities.js')
const auth = require('./auth.js')
const oauthTransport = require('./oauth-transport.js')

const { validateMcpLimit, resolveMcpClientLimits, ...constants } = limits

module.exports = {
  connectMcpTools: bridge.connectMcpTools,
  attachMcpToolBridge: bridge.attachMcpToolBridge,
  listAllMcpTools: bridge.listAllMcpTools,
  mapMcpToolsToDefinitions: bridge.mapMcpToolsToDefinitions,
  mcpToolEffect: (tool, options = {}) => bridge.remoteToolEffect(tool, options.serverId ?? '', options.effect, options.annotations !== false),
  connectMcpCapabilities: capabilities.connectMcpCapabilities,
  attachMcpCapabilities: capabilities.attachMcpCapabilities,
  createMcpCapabilityClient,
  mcpElicitationDecision: elicitation.mcpElicitationDecision,
  mcpElicitationResultFromDecision: elicitation.mcpElicitationResultFromDecision,
  MAX_MCP_ELICITATION_MESSAGE_BYTES: elicitation.MAX_MCP_ELICITATION_MESSAGE_BYTES,
  MAX_MCP_ELICITATION_SCHEMA_BYTES: elicitation.MAX_MCP_ELICITATION_SCHEMA_BYTES,
  packageName: 'prism-tools-native/mcp',
  createMcpTransport,
  createSecureMcpFetch,
  createMcpOAuthTransport: oauthTransport.createMcpOAuthTransport,
  createMcpOAuthFetch: oauthTransport.createMcpOAuthFetch,
  createMcpClientAuth: auth.createMcpClientAuth,
  McpOAuthError: auth.McpOAuthError,
  formatMcpToolName: names.formatMcpToolName,
  formatProviderSafeMcpToolName: names.formatProviderSafeMcpToolName,
  isProviderSafeToolName: names.isProviderSafeToolName,
  defaultMcpNamePrefix: names.defaultMcpNamePrefix,
  assertValidServerId: names.assertValidServerId,
  mapMcpContentToBlocks: content.mapMcpContentToBlocks,
  summarizeMcpContent: content.summarizeMcpContent,
  boundedMcpErrorMessage: content.boundedMcpErrorMessage,
  mcpCallError: content.mcpCallError,
  estimateUtf8Bytes: content.estimateUtf8Bytes,
  measureBoundedJson,
  validateMcpLimit,
  resolveMcpClientLimits,
  ...constants,
  McpBridgeError: errors.McpBridgeError,
  McpBridgeClosedError: errors.McpBridgeClosedError,
  McpToolNameCollisionError: errors.McpToolNameCollisionError,
  McpUnsupportedCapabilityError: errors.McpUnsupportedCapabilityError,
}
