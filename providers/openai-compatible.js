'use strict'
// Subpath `prism-tools-native/providers/openai-compatible`.
const m = require('../lib/providers/openai-compatible.js')
module.exports = {
  createOpenAICompatibleProvider: m.createOpenAICompatibleProvider,
  openAIChatEvents: m.openAIChatEvents,
  buildOpenAIChatBody: m.buildOpenAIChatBody,
}
