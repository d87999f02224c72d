// Subpath `prism-tools-native/postgres` (ES modules).
import cjs from './index.js'

export const { createPostgresToolEffectStore } = cjs
export default cjs
