// The package entry (ES modules): the same objects as the CommonJS entry, as named exports.
import cjs from './index.js'

export const {
  nativeVersion,

  // Validation and provider argument text
  createToolParameterValidator,
  createJsonSchemaArgumentValidator,
  createJsonSchemaToolArgumentValidator,
  toolCallFromArgumentsText,
  reconstructToolCallDeltas,
} = cjs
export default cjs
