'use strict'
// Subpath `prism-tools-native/openai-agents`: this package's dispatch under the OpenAI Agents SDK (docs/openai-agents.md).
module.exports = require('../lib/adapters/openai-agents.js')
Object.assign(module.exports, require('../lib/adapters/shared-exports.js'))
