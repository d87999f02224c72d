'use strict'
// Conformance kit for CheckpointStore implementations (durable agent runs keep their state in one):
// proves a store keeps the compare-and-swap, version, fencing, ownership, copy, list and delete rules
// of prism-tools-native (and @arnilo/prism). Framework-free: it throws an Error naming the first
// broken rule. Every key it uses is fresh, so it can run repeatedly against one durable store.
const { randomUUID } = require('node:crypto')
const { conformanceChecks } = require('./store-conformance.js')

const { fail, expectConflict } = conformanceChecks('CheckpointStore', 'ERR_PRISM_CHECKPOINT_CONFLICT')

/** Resolves when the store keeps the CheckpointStore contract; rejects naming the first broken rule. */
async function assertCheckpointStoreConforms(storeOrFactory, options = {}) {
  const store = await (typeof storeOrFactory === 'function' ? storeOrFactory() : storeOrFactory)
  const namespace = options.namespace ?? 'prism.conformance'
  const owner = { tenantId: `tenant-${randomUUID()}` }
  const key = `k-${randomUUID()}`
  const at = { namespace, key, ...owner }

  if ((await store.loadCheckpoint(at)) !== null) fail('an unsaved key must load as null')
  const value = { step: 1, nested: { list: [1, 'two', null] } }
  const first = await store.saveCheckpoint({ ...at, version: 1, expectedVersion: 0, value, category: 'conformance' })
  if (!first || first.version !== 1) fail('a first save must answer its record at version 1')
  value.step = 99
  const loaded = await store.loadCheckpoint(at)
  if (!loaded || loaded.version !== 1 || loaded.value.step !== 1 || loaded.value.nested.list[1] !== 'two') fail('a load must answer the saved value, not the caller\'s later mutation')
  loaded.value.step = 42
  if ((await store.loadCheckpoint(at)).value.step !== 1) fail('mutating a loaded record must not change the stored one')

  await expectConflict(() => store.saveCheckpoint({ ...at, version: 2, expectedVersion: 0, value: {} }), 'a save expecting the wrong version must conflict')
  await expectConflict(() => store.saveCheckpoint({ ...at, version: 1, value: {} }), 'a save not above the current version must conflict')
  await expectConflict(() => store.saveCheckpoint({ ...at, version: 0, value: {} }), 'a version below 1 must conflict')
  await expectConflict(() => store.saveCheckpoint({ namespace, key, tenantId: 'someone-else', version: 2, value: {} }), 'another owner saving the key must conflict')
  await expectConflict(() => store.loadCheckpoint({ namespace, key, tenantId: 'someone-else' }), 'another owner loading the key must conflict')

  const second = await store.saveCheckpoint({ ...at, version: 2, expectedVersion: 1, value: { step: 2 }, fencingToken: 5 })
  if (second.version !== 2 || second.fencingToken !== 5) fail('a compare-and-swap at the current version must succeed and keep its fencing token')
  if (second.createdAt !== first.createdAt) fail('createdAt must not change on update')
  await expectConflict(() => store.saveCheckpoint({ ...at, version: 3, expectedVersion: 2, value: {}, fencingToken: 4 }), 'a lower fencing token must conflict')
  await expectConflict(() => store.saveCheckpoint({ ...at, version: 3, expectedVersion: 2, value: {} }), 'a missing fencing token must conflict once one is held')
  await store.saveCheckpoint({ ...at, version: 3, expectedVersion: 2, value: { step: 3 }, fencingToken: 5 })

  // Exactly one of two racing compare-and-swaps wins.
  const race = await Promise.allSettled([
    store.saveCheckpoint({ ...at, version: 4, expectedVersion: 3, value: { by: 'a' }, fencingToken: 5 }),
    store.saveCheckpoint({ ...at, version: 4, expectedVersion: 3, value: { by: 'b' }, fencingToken: 5 }),
  ])
  if (race.filter((r) => r.status === 'fulfilled').length !== 1) fail('exactly one of two racing saves at one version must win')

  // List: namespace, prefix, category and ownership filters, pagination.
  const prefix = `p-${randomUUID()}-`
  for (let i = 0; i < 3; i++) await store.saveCheckpoint({ namespace, key: `${prefix}${i}`, ...owner, version: 1, value: { i }, category: i === 2 ? 'other' : 'conformance' })
  const page1 = await store.listCheckpoints({ namespace, keyPrefix: prefix, limit: 2, ...owner })
  if (!Array.isArray(page1.items) || page1.items.length !== 2 || typeof page1.nextCursor !== 'string') fail('list must page by limit with a nextCursor')
  const page2 = await store.listCheckpoints({ namespace, keyPrefix: prefix, limit: 2, cursor: page1.nextCursor, ...owner })
  if (page2.items.length !== 1 || page2.nextCursor !== undefined) fail('the last page must hold the rest and no nextCursor')
  const keys = new Set([...page1.items, ...page2.items].map((r) => r.key))
  if (keys.size !== 3) fail('pages must not repeat records')
  const other = await store.listCheckpoints({ namespace, keyPrefix: prefix, category: 'other', ...owner })
  if (other.items.length !== 1 || other.items[0].key !== `${prefix}2`) fail('list must filter by category')
  const foreign = await store.listCheckpoints({ namespace, keyPrefix: prefix, tenantId: 'someone-else' })
  if (foreign.items.length !== 0) fail('list must filter by ownership')

  await expectConflict(() => store.deleteCheckpoint({ namespace, key, tenantId: 'someone-else' }), 'another owner deleting the key must conflict')
  if ((await store.deleteCheckpoint(at)) !== true) fail('deleting a saved key must answer true')
  if ((await store.deleteCheckpoint(at)) !== false) fail('deleting an absent key must answer false')
  if ((await store.loadCheckpoint(at)) !== null) fail('a deleted key must load as null')
}

/** The kit under `@arnilo/prism`'s naming: runs `assertCheckpointStoreConforms`. */
async function runCheckpointStoreConformance(storeOrFactory, options) {
  await assertCheckpointStoreConforms(storeOrFactory, options)
}

module.exports = { assertCheckpointStoreConforms, runCheckpointStoreConformance }
