// Subpath `prism-tools-native/validation/json-schema` (ES modules).
import cjs from './json-schema.js'

export const { createJsonSchemaArgumentValidator, createJsonSchemaToolArgumentValidator } = cjs
export default cjs
