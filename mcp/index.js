'use strict'
// Subpath `prism-tools-native/mcp`: the MCP client bridge (see docs/mcp.md).
module.exports = require('../lib/mcp/index.js')
