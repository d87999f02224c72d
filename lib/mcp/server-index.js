'use strict'
// The served side of `prism-tools-native/mcp`: a host's registry served to MCP clients (docs/mcp.md,
// "Serving a registry").
const { createPrismMcpServer } = require('./server.js')
const { createPrismMcpWebHandler } = require('./server-web.js')
const { createPrismMcpNodeHandler, relayStatelessBody } = require('./server-http.js')
const { SERVER_LIMITS } = require('./server-limits.js')

module.exports = {
  createPrismMcpServer,
  createPrismMcpWebHandler,
  createPrismMcpNodeHandler,
  relayStatelessBody,
  DEFAULT_MAX_SESSIONS: SERVER_LIMITS.DEFAULT_MAX_SESSIONS,
  HARD_MAX_SESSIONS: SERVER_LIMITS.HARD_MAX_SESSIONS,
}
