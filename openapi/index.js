'use strict'
// Subpath `prism-tools-native/openapi`: OpenAPI 3.1 operations as tool definitions (see docs/openapi.md).
module.exports = require('../lib/openapi/index.js')
