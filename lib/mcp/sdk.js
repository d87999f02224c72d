'use strict'
// `@modelcontextprotocol/sdk` is an optional peer dependency: it is loaded on first use, so the main
// entry never needs it, and a missing install is one clear error.
const { McpBridgeError } = require('./errors.js')

const cache = new Map()

function loadSdk(subpath) {
  let mod = cache.get(subpath)
  if (mod) return mod
  try {
    mod = require(`@modelcontextprotocol/sdk/${subpath}`)
  } catch (error) {
    if (error && error.code === 'MODULE_NOT_FOUND' && String(error.message).includes('@modelcontextprotocol/sdk')) {
      throw new McpBridgeError(
        'prism-tools-native/mcp needs the optional peer dependency @modelcontextprotocol/sdk: npm install @modelcontextprotocol/sdk',
        { cause: error, code: 'ERR_PRISM_MCP_SDK_MISSING' },
      )
    }
    throw error
  }
  cache.set(subpath, mod)
  return mod
}

module.exports = {
  client: () => loadSdk('client/index.js'),
  server: () => loadSdk('server/mcp.js'),
  webStandardStreamableHttp: () => loadSdk('server/webStandardStreamableHttp.js'),
  stdio: () => loadSdk('client/stdio.js'),
  streamableHttp: () => loadSdk('client/streamableHttp.js'),
  types: () => loadSdk('types.js'),
  auth: () => loadSdk('client/auth.js'),
}
