'use strict'
// Conformance kit for ToolEffectStore implementations: proves a store keeps the claim / compare-and-swap
// contract of prism-tools-native (and @arnilo/prism). Framework-free: it throws an Error naming the first
// broken rule. Every key it uses is fresh, so it can run repeatedly against one durable store.
const { randomUUID } = require('node:crypto')
const { conformanceChecks } = require('./store-conformance.js')

function testIdentity() {
  return {
    tenantId: 'tenant-conformance',
    principal: { kind: 'service', id: 'conformance' },
    scopes: ['tools:execute'],
    issuedAt: '2026-01-01T00:00:00.000Z',
    verified: true,
  }
}

const { fail, expectConflict } = conformanceChecks('ToolEffectStore', 'ERR_PRISM_TOOL_EFFECT_CONFLICT')

async function expectRefused(run, message) {
  try {
    await run()
  } catch {
    return
  }
  fail(message)
}

/**
 * Asserts that `store` (a store, or a function returning one or a Promise of one) keeps the contract.
 * Options: `identity` (default: a fixed verified service identity), `ownership` (default: the identity's
 * tenant / account / user), `keyPrefix`.
 */
async function assertToolEffectStoreConforms(storeOrFactory, options = {}) {
  const store = typeof storeOrFactory === 'function' ? await storeOrFactory() : await storeOrFactory
  if (!store || typeof store !== 'object') fail('the factory must return a store object')
  for (const m of ['get', 'begin', 'markDispatched', 'complete', 'fail', 'markUnknown', 'resolveUnknown', 'cleanup']) {
    if (typeof store[m] !== 'function') fail(`store.${m} must be a function`)
  }
  const identity = options.identity ?? testIdentity()
  const ownership = options.ownership ?? {
    tenantId: identity.tenantId,
    ...(identity.accountId === undefined ? {} : { accountId: identity.accountId }),
    ...(identity.userId === undefined ? {} : { userId: identity.userId }),
  }
  const run = randomUUID()
  const prefix = options.keyPrefix ?? 'prism:tool-effect:v1:'
  const key = (name) => ({
    identity,
    ownership,
    key: `${prefix}${run.slice(0, 8)}-${name}`.slice(0, 96),
    sessionId: 'session-conformance',
    runId: `run-${run}`,
    toolCallId: `call-${name}`,
    toolName: 'effect.tool',
    argumentsHash: 'a'.repeat(64),
  })
  const claim = (base, record) => {
    if (!record || typeof record.claimToken !== 'string' || !record.claimToken) fail('a claimed record must carry a claimToken')
    return { ...base, claimToken: record.claimToken, expectedVersion: record.version }
  }
  const result = (base) => ({ toolCallId: base.toolCallId, name: base.toolName, value: { ok: true } })

  // The life of one effect, checked first and in the words of `@arnilo/prism`'s kit, so a store that
  // breaks one of its rules fails with the message hosts know; the finer checks follow.
  const life = key('life')
  const claimed = await store.begin(life)
  if (claimed?.outcome !== 'acquired' || claimed.record?.status !== 'pending' || !claimed.record.claimToken) {
    fail('store must acquire an absent tool effect as pending with a claim token')
  }
  const again = await store.begin(life)
  if (again?.outcome !== 'existing' || again.record?.status !== 'pending') {
    fail('store must return existing pending effects without a second claim')
  }
  const lifeDispatched = await store.markDispatched(claim(life, claimed.record))
  if (lifeDispatched?.status !== 'dispatched') fail('store must transition a claimed pending effect to dispatched')
  const lifeCompleted = await store.complete({ ...claim(life, lifeDispatched), result: result(life) })
  if (lifeCompleted?.status !== 'completed' || lifeCompleted.result?.value?.ok !== true) fail('store must retain a completed bounded result')
  const lifeReplay = await store.begin(life)
  if (lifeReplay?.outcome !== 'existing' || lifeReplay.record?.status !== 'completed') fail('store must preserve completed duplicate state')
  await expectRefused(() => store.markDispatched(claim(life, claimed.record)), 'store must reject stale claim/version transitions')

  // Absent → pending, duplicates see the existing claim.
  const a = key('a')
  if ((await store.get(a)) !== undefined) fail('get must return undefined for an absent effect')
  const first = await store.begin(a)
  if (first.outcome !== 'acquired' || first.record.status !== 'pending' || !first.record.claimToken) {
    fail('begin must acquire an absent effect as pending with a claim token')
  }
  if (!Number.isSafeInteger(first.record.version) || first.record.attempt !== 1) fail('a first claim must have attempt 1 and an integer version')
  const duplicate = await store.begin(a)
  if (duplicate.outcome !== 'existing' || duplicate.record.status !== 'pending') fail('begin must return an existing pending effect without a second claim')
  const seen = await store.get(a)
  if (!seen || seen.status !== 'pending' || seen.version !== first.record.version) fail('get must return the stored record')

  // Claimed transitions refuse a wrong token, a stale version and a wrong state.
  await expectConflict(() => store.markDispatched({ ...claim(a, first.record), claimToken: `${first.record.claimToken}-x` }), 'markDispatched must refuse a wrong claim token')
  await expectConflict(() => store.markDispatched({ ...claim(a, first.record), expectedVersion: first.record.version - 1 }), 'markDispatched must refuse a stale version')
  await expectConflict(() => store.markDispatched({ ...claim(a, first.record), expectedVersion: first.record.version + 1 }), 'markDispatched must refuse a future version')
  await expectConflict(() => store.complete({ ...claim(a, first.record), result: result(a) }), 'complete must refuse a pending effect')
  await expectConflict(() => store.markUnknown(claim(a, first.record)), 'markUnknown must refuse a pending effect')
  await expectConflict(() => store.markDispatched({ ...claim(a, first.record), toolName: 'other.tool' }), 'a transition must refuse a changed tool name')
  await expectConflict(() => store.markDispatched({ ...claim(a, first.record), argumentsHash: 'b'.repeat(64) }), 'a transition must refuse changed arguments')

  const dispatched = await store.markDispatched(claim(a, first.record))
  if (dispatched.status !== 'dispatched' || dispatched.version !== first.record.version + 1) fail('markDispatched must move pending to dispatched and bump the version')
  await expectConflict(() => store.markDispatched(claim(a, first.record)), 'a replayed markDispatched must be refused')
  await expectConflict(() => store.complete({ ...claim(a, first.record), result: result(a) }), 'complete must refuse the pre-dispatch version')
  await expectConflict(() => store.complete({ ...claim(a, dispatched), claimToken: 'wrong', result: result(a) }), 'complete must refuse a wrong claim token')
  const afterDispatch = await store.begin(a)
  if (afterDispatch.outcome !== 'existing' || afterDispatch.record.status !== 'dispatched') fail('begin must never re-claim a dispatched effect')
  await expectRefused(() => store.complete({ ...claim(a, dispatched), result: { ...result(a), toolCallId: 'another-call' } }), 'complete must refuse a result of another call')
  // A result larger than the store keeps is refused (ERR_PRISM_TOOL_EFFECT_LIMIT, as @arnilo/prism's stores
  // do) or completes the record without the value (this package's stores: `resultOmitted`, its size and
  // SHA-256); either way the record is never left half-made, and a completed one is never claimed again.
  const big = key('big')
  const bigBegun = await store.begin(big)
  const bigDispatched = await store.markDispatched(claim(big, bigBegun.record))
  let bigDone
  try {
    bigDone = await store.complete({ ...claim(big, bigDispatched), result: { ...result(big), value: 'x'.repeat(2 * 1024 * 1024) } })
  } catch (e) {
    if (e?.code !== 'ERR_PRISM_TOOL_EFFECT_LIMIT') fail('complete of a result larger than the store keeps must refuse it with ERR_PRISM_TOOL_EFFECT_LIMIT or complete without it')
    const after = await store.get(big)
    if (after?.status !== 'dispatched' || after.version !== bigDispatched.version) fail('a refused complete must leave the record as it was')
  }
  if (bigDone !== undefined) {
    if (bigDone.status !== 'completed' || bigDone.result !== undefined || !(bigDone.resultOmitted?.bytes > 2 * 1024 * 1024) || typeof bigDone.resultOmitted?.sha256 !== 'string') {
      fail('a store that completes a result larger than it keeps must leave the value out and record resultOmitted { bytes, sha256 }')
    }
    const again = await store.begin(big)
    if (again.outcome !== 'existing' || again.record.status !== 'completed') fail('begin must never re-claim an effect completed without its value')
  }
  const completed = await store.complete({ ...claim(a, dispatched), result: result(a) })
  if (completed.status !== 'completed' || completed.version !== dispatched.version + 1) fail('complete must move dispatched to completed and bump the version')
  if (!completed.result || completed.result.toolCallId !== a.toolCallId || completed.result.value?.ok !== true) fail('complete must keep the bounded result')
  const replay = await store.begin(a)
  if (replay.outcome !== 'existing' || replay.record.status !== 'completed' || replay.record.result?.value?.ok !== true) fail('begin must return a completed effect with its result')
  await expectConflict(() => store.complete({ ...claim(a, dispatched), result: result(a) }), 'a second complete must be refused')
  await expectConflict(() => store.fail({ ...claim(a, dispatched), status: 'failed_terminal', failure: { code: 'x' } }), 'fail must refuse a completed effect')

  // Another identity's principal or ownership never reaches the record.
  await expectRefused(() => store.begin({ ...a, ownership: { tenantId: `${identity.tenantId}-other` } }), 'begin must refuse an ownership that is not the identity\'s')
  await expectRefused(() => store.begin({ ...a, identity: { ...identity, verified: false } }), 'begin must refuse an unverified identity')

  // dispatched → unknown → resolved, CAS on version only.
  const u = key('unknown')
  const uPending = await store.begin(u)
  const uDispatched = await store.markDispatched(claim(u, uPending.record))
  const unknown = await store.markUnknown({ ...claim(u, uDispatched), failure: { code: 'conformance' } })
  if (unknown.status !== 'unknown' || unknown.version !== uDispatched.version + 1) fail('markUnknown must move dispatched to unknown')
  const uAgain = await store.begin(u)
  if (uAgain.outcome !== 'existing' || uAgain.record.status !== 'unknown') fail('begin must never re-claim an unknown effect')
  await expectConflict(() => store.markUnknown(claim(u, uDispatched)), 'a replayed markUnknown must be refused')
  await expectConflict(
    () => store.resolveUnknown({ ...u, expectedVersion: unknown.version - 1, status: 'failed_terminal', failure: { code: 'x' } }),
    'resolveUnknown must refuse a stale version',
  )
  const resolved = await store.resolveUnknown({ ...u, expectedVersion: unknown.version, status: 'completed', result: result(u) })
  if (resolved.status !== 'completed' || resolved.version !== unknown.version + 1) fail('resolveUnknown must CAS-resolve an unknown effect')
  await expectConflict(
    () => store.resolveUnknown({ ...u, expectedVersion: resolved.version, status: 'failed_terminal', failure: { code: 'x' } }),
    'resolveUnknown must refuse an effect that is not unknown',
  )

  // pending → failed_retryable → claimed again with attempt 2; the old claim is dead.
  const r = key('retry')
  const rPending = await store.begin(r)
  const rFailed = await store.fail({ ...claim(r, rPending.record), status: 'failed_retryable', failure: { code: 'conformance' } })
  if (rFailed.status !== 'failed_retryable') fail('fail must move pending to failed_retryable')
  const rRetry = await store.begin(r)
  if (rRetry.outcome !== 'acquired' || rRetry.record.attempt !== 2 || rRetry.record.status !== 'pending') fail('begin must re-claim a failed_retryable effect with attempt + 1')
  if (rRetry.record.claimToken === rPending.record.claimToken) fail('a new claim must have a new claim token')
  await expectConflict(() => store.markDispatched(claim(r, rPending.record)), 'the previous claim must be dead after a re-claim')
  const rTerminal = await store.fail({ ...claim(r, rRetry.record), status: 'failed_terminal', failure: { code: 'conformance' } })
  if (rTerminal.status !== 'failed_terminal') fail('fail must move pending to failed_terminal')
  const rAfter = await store.begin(r)
  if (rAfter.outcome !== 'existing') fail('begin must not re-claim a failed_terminal effect')

  // maxAttempts bounds re-claims.
  const m = key('attempts')
  const mPending = await store.begin({ ...m, maxAttempts: 1 })
  await store.fail({ ...claim(m, mPending.record), status: 'failed_retryable', failure: { code: 'x' } })
  if ((await store.begin({ ...m, maxAttempts: 1 })).outcome !== 'existing') fail('begin must not exceed maxAttempts')
  await expectRefused(() => store.begin({ ...key('limits'), claimTtlMs: 0 }), 'begin must refuse a claimTtlMs of 0')
  await expectRefused(() => store.begin({ ...key('limits'), maxAttempts: 1000 }), 'begin must refuse unbounded maxAttempts')

  // Cleanup deletes terminal records (completed a, completed u, failed_terminal r) of this ownership.
  const cleanup = await store.cleanup({ ownership, before: new Date(Date.now() + 60_000).toISOString(), limit: 500 })
  if (!cleanup || !Number.isSafeInteger(cleanup.deleted) || cleanup.deleted < 3) fail('store cleanup must remove terminal effects')
  if ((await store.get(a)) !== undefined) fail('cleanup must remove a completed effect')
  const m2 = await store.get(m)
  if (!m2 || m2.status !== 'failed_retryable') fail('cleanup must keep non-terminal effects')
}

/** The kit under `@arnilo/prism`'s other name: runs `assertToolEffectStoreConforms`. */
async function runToolEffectStoreConformance(factory, options) {
  await assertToolEffectStoreConforms(factory, options)
}

module.exports = { assertToolEffectStoreConforms, runToolEffectStoreConformance }
