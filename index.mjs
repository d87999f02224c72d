// The package entry (ES modules): the same objects as the CommonJS entry, as named exports.
import cjs from './index.js'

export const {
  nativeVersion,
  // registry and filters
  createToolRegistry,
  filterTools,
  // dispatch
  dispatchToolCall,
  createToolDispatcher,
  GuardrailError,
  // redaction
  redactSecrets,
  createSecretRedactor,
  errorToErrorInfo,
  redactRunLedgerRecord,
} = cjs
export default cjs
