'use strict'
// The package entry (CommonJS). It re-exports the napi-generated loader (`binding.js`) and the few
// small JS pieces the language requires (Error subclasses, the await driver). No decisions live here.
const native = require('./binding.js')
const effects = require('./lib/effects.js')

module.exports = {
  nativeVersion: native.nativeVersion,

  // Recoverable tool effects and run ledgers (types/effects.d.ts, types/ledger.d.ts).
  ToolEffectError: effects.ToolEffectError,
  IdentityError: effects.IdentityError,
  canonicalToolEffectJson: native.canonicalToolEffectJson,
  toolEffectArgumentsHash: native.toolEffectArgumentsHash,
  deriveToolEffectKey: native.deriveToolEffectKey,
  resolveToolEffectDeclaration: native.resolveToolEffectDeclaration,
  isAgentIdentityActive: native.isAgentIdentityActive,
  identityMatchesOwnership: native.identityMatchesOwnership,
  assertIdentityActive: native.assertIdentityActive,
  assertIdentityMatchesOwnership: native.assertIdentityMatchesOwnership,
  createMemoryToolEffectStore: native.createMemoryToolEffectStore,
  createSqliteToolEffectStore: native.createSqliteToolEffectStore,
  createMemoryRunLedger: native.createMemoryRunLedger,
  createSqliteRunLedger: native.createSqliteRunLedger,
  // end of recoverable tool effects and run ledgers
}
