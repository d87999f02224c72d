// Subpath `prism-tools-native/postgres` (ES modules).
import cjs from './index.js'

export const { createPostgresToolEffectStore, createPostgresRunLedger, createPostgresCheckpointStore } = cjs
export default cjs
