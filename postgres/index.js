'use strict'
// Subpath `prism-tools-native/postgres`: the PostgreSQL tool effect store, run ledger and checkpoint store (docs/postgres.md).
const postgres = require('../lib/postgres.js')

module.exports = {
  createPostgresToolEffectStore: postgres.createPostgresToolEffectStore,
  createPostgresRunLedger: postgres.createPostgresRunLedger,
  createPostgresCheckpointStore: postgres.createPostgresCheckpointStore,
}
