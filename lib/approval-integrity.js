'use strict'
// What keeps a suspended run's checkpoint from being turned into a different run by whoever can
// write to the checkpoint store (docs/agent.md § "Approval integrity").
//
// An approval id commits to the call it was issued for: `approval_<nonce>.<digest>`, the digest a
// SHA-256 over the nonce, the run id, the tool call id, the tool name and the arguments hash the
// approver is shown. The approver holds the id (it is the handle of every decision), so an edit of
// the checkpoint's pending call (its tool, its arguments, its id) no longer matches the id the
// approver decides on; and an id rewritten in the checkpoint is one no approver holds. A resume
// recomputes every pending call's digest before anything is written or run, and fails closed.
//
// A run's checkpoint is owned: the run's `ownership`, else its identity's tenant, account and user
// (as the run ledger derives them). A resume presents its owner the same way; a store keys
// ownership into every load, and the loaded record's owner fields are compared again here.
const { createHash, randomBytes } = require('node:crypto')
const { ownershipFromIdentity, resolveRunIdentity } = require('./identity.js')

const ID = /^approval_([0-9a-f]{32})\.([A-Za-z0-9_-]{43})$/
const OWNER = ['tenantId', 'accountId', 'userId']

function digest(nonce, runId, toolCallId, toolName, argumentsHash) {
  return createHash('sha256').update(JSON.stringify(['prism.approval.v1', nonce, runId, toolCallId, toolName, argumentsHash])).digest('base64url')
}

/** A fresh approval id bound to one call of `runId` (`scope` carries its tool name and arguments hash). */
function bindApprovalId(runId, toolCallId, scope) {
  const nonce = randomBytes(16).toString('hex')
  return `approval_${nonce}.${digest(nonce, runId, toolCallId, scope.toolName, scope.argumentsHash)}`
}

/**
 * Why the checkpoint `state` (loaded for run `runId`) does not match the approvals it records, or
 * undefined when every pending call is the one its approval id was issued for. `hashOf(args)` is
 * the arguments hash the gate showed.
 */
function bindingMismatch(state, runId, hashOf) {
  if (state.runId !== runId) return 'the checkpoint records another run id'
  const records = new Map()
  const pending = state.interruption && Array.isArray(state.interruption.pendingDecisions) ? state.interruption.pendingDecisions : []
  for (const p of pending) if (p !== null && typeof p === 'object') records.set(p.approvalId, p)
  for (const entry of state.pendingCalls) {
    const id = entry !== null && typeof entry === 'object' ? entry.approvalId : undefined
    const m = typeof id === 'string' ? ID.exec(id) : null
    if (m === null) return 'a pending call has no bound approval id'
    const call = entry.call
    if (call === null || typeof call !== 'object' || typeof call.name !== 'string' || (typeof call.id !== 'string' && typeof call.id !== 'number')) {
      return `pending call of approval ${id} is malformed`
    }
    const toolCallId = String(call.id)
    const argumentsHash = hashOf(call.arguments)
    if (digest(m[1], runId, toolCallId, call.name, argumentsHash) !== m[2]) {
      return `pending call of approval ${id} is not the call it was issued for (tool, arguments or call id changed)`
    }
    const record = records.get(id)
    if (record !== undefined) {
      const scope = record.scope !== null && typeof record.scope === 'object' ? record.scope : {}
      if (record.toolCallId !== toolCallId || scope.toolName !== call.name || scope.argumentsHash !== argumentsHash) {
        return `pending decision ${id} does not describe its call`
      }
    }
  }
  return undefined
}

function ownerFields(value) {
  const out = {}
  if (value !== null && typeof value === 'object') for (const k of OWNER) if (typeof value[k] === 'string') out[k] = value[k]
  return out
}

/**
 * The owner of a durable run or of its resume: `ownership` when given, else the identity's
 * tenant/account/user. An identity is checked against an explicit ownership (a conflict throws
 * the identity's IdentityError).
 */
function runOwnership(ownership, identity, agentIdentity) {
  const id = identity ?? agentIdentity
  if (id !== undefined && id !== null) {
    resolveRunIdentity(identity, agentIdentity, ownership ?? undefined)
    if (ownership === undefined || ownership === null) return ownerFields(ownershipFromIdentity(id))
  }
  return ownerFields(ownership)
}

/**
 * Whether a loaded checkpoint record belongs to `owner`: the owner the run state records (every
 * save writes it), and the record's owner fields when the store returns them.
 */
function sameOwner(record, owner) {
  const state = record.value
  const recorded = state !== null && typeof state === 'object' && state.owner !== undefined ? ownerFields(state.owner) : ownerFields(record)
  const echoed = OWNER.some((k) => record[k] !== undefined && record[k] !== null) ? ownerFields(record) : recorded
  return OWNER.every((k) => recorded[k] === owner[k] && echoed[k] === owner[k])
}

module.exports = { bindApprovalId, bindingMismatch, runOwnership, sameOwner, ownerFields }
