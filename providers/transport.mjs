// Subpath `prism-tools-native/providers/transport` (ES modules).
import cjs from './transport.js'

export const { ProviderTransportError, httpStatusError, parseRetryAfterMs } = cjs
export default cjs
