// The package entry (ES modules): the same objects as the CommonJS entry, as named exports.
import cjs from './index.js'

export const {
  nativeVersion,
} = cjs
export default cjs
