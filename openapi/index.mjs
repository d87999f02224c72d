// Subpath `prism-tools-native/openapi` (ES modules): the very objects of the CommonJS entry.
import cjs from './index.js'

export const {
  createOpenApiTools,
  OpenApiToolError,
  OPENAPI_ERROR_CODES,
  DEFAULT_OPENAPI_LIMITS,
  HARD_OPENAPI_LIMITS,
  resolveOpenApiLimits,
  packageName,
} = cjs
export default cjs
