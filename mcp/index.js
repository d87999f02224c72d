'use strict'
// Subpath `prism-tools-native/mcp`: the MCP client bridge (see docs/mcp.md).
module.exports = require('../lib/mcp/index.js')
// The served side: createPrismMcpServer, createPrismMcpWebHandler, sessions (lib/mcp/server*.js).
Object.assign(module.exports, require('../lib/mcp/server-index.js'))
