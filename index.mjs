// The package entry (ES modules): the same objects as the CommonJS entry, as named exports.
import cjs from './index.js'

export const {
  nativeVersion,

  // Recoverable tool effects and run ledgers.
  ToolEffectError,
  IdentityError,
  canonicalToolEffectJson,
  toolEffectArgumentsHash,
  deriveToolEffectKey,
  resolveToolEffectDeclaration,
  isAgentIdentityActive,
  identityMatchesOwnership,
  assertIdentityActive,
  assertIdentityMatchesOwnership,
  createMemoryToolEffectStore,
  createSqliteToolEffectStore,
  createMemoryRunLedger,
  createSqliteRunLedger,
  // end of recoverable tool effects and run ledgers
} = cjs
export default cjs
