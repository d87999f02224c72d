'use strict'
// Subpath `prism-tools-native/ai-sdk`: this package's dispatch under the Vercel AI SDK (docs/ai-sdk.md).
module.exports = require('../lib/adapters/ai-sdk.js')
Object.assign(module.exports, require('../lib/adapters/shared-exports.js'))
