'use strict'
// Subpath `prism-tools-native/validation/json-schema`: the JSON Schema adapter on its own, as
// `@arnilo/prism-core/validation/json-schema` offers it. The same objects as the main entry.
const validation = require('../lib/validation.js')

module.exports = {
  createJsonSchemaArgumentValidator: validation.createJsonSchemaArgumentValidator,
  createJsonSchemaToolArgumentValidator: validation.createJsonSchemaToolArgumentValidator,
}
