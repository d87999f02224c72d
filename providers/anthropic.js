'use strict'
// Subpath `prism-tools-native/providers/anthropic`.
const m = require('../lib/providers/anthropic.js')
const tools = require('../lib/providers/tools.js')
const models = require('../lib/providers/anthropic-models.js')
module.exports = {
  createAnthropicMessagesProvider: m.createAnthropicMessagesProvider,
  anthropicMessagesEvents: m.anthropicMessagesEvents,
  anthropicMessagesBody: m.anthropicMessagesBody,
  toAnthropicTools: tools.toAnthropicTools,
  ANTHROPIC_API_VERSION: m.ANTHROPIC_API_VERSION,
  ANTHROPIC_DEFAULT_BASE_URL: m.ANTHROPIC_DEFAULT_BASE_URL,
  defineAnthropicModel: models.defineAnthropicModel,
  mapAnthropicModel: models.mapAnthropicModel,
  listAnthropicModels: models.listAnthropicModels,
}
