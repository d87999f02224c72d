'use strict'
// Subpath `prism-tools-native/providers/openai`: Chat Completions wire helpers.
const tools = require('../lib/providers/tools.js')
const m = require('../lib/providers/openai-compatible.js')
module.exports = {
  serializeOpenAITool: tools.serializeOpenAITool,
  toOpenAITools: tools.toOpenAITools,
  serializeOpenAIChatMessage: m.serializeOpenAIChatMessage,
  mapOpenAIChatUsage: m.mapOpenAIChatUsage,
}
