'use strict'
// Durable human approval outside createAgent (docs/approval.md): a gate a framework's own approval
// flow asks (the AI SDK's `toolApproval`, the Agents SDK's `needsApproval` and interruptions) and that
// every dispatch passes (`beforeExecute`). The decisions are the agent's (crates/core/src/run/approval.rs
// through `approvalGateRound` / `approvalResolve`): which calls wait, sticky `*_for_run` decisions,
// the shape and bounds of a decision batch. Each approval id commits to its call's id, tool name and
// arguments hash (lib/approval-integrity.js), and the state lives in a checkpoint store, so a decision
// made after a restart covers exactly the call that was shown and nothing else.

const native = require('../../binding.js')
const { AgentDecisionError, AgentRunStateError, CheckpointConflictError, CHECKPOINT_CONFLICT_CODE } = require('../approval.js')
const { bindApprovalId, bindingMismatch, runOwnership, sameOwner } = require('../approval-integrity.js')
const { adapterError } = require('./harness.js')

const LIMITS = JSON.parse(native.approvalLimits())
/** The checkpoint namespace of approval gates (the key is the gate's run id). */
const APPROVAL_GATE_NAMESPACE = 'prism.approval-gate'
const SAVE_ATTEMPTS = 4

function answer(text) {
  const out = JSON.parse(text)
  if (out.error) {
    if (out.error.kind === 'decision') throw new AgentDecisionError(out.error.code, out.error.message)
    throw new AgentRunStateError(out.error.message)
  }
  return out
}

function argumentsHash(args) {
  try {
    return native.toolEffectArgumentsHash(args ?? {})
  } catch {
    return native.toolEffectArgumentsHash(LIMITS.NOT_JSON)
  }
}

function jsonCopy(value) {
  try {
    const text = JSON.stringify(value)
    return text === undefined ? null : JSON.parse(text)
  } catch {
    return null
  }
}

function checkOptions(options) {
  const bad = (message) => adapterError(TypeError, `createApprovalGate: ${message}`, 'ERR_PRISM_INVALID_OPTION')
  if (options === null || typeof options !== 'object') throw bad('options must be { checkpoints, runId, needsApproval? }')
  const c = options.checkpoints
  if (c === null || typeof c !== 'object' || typeof c.saveCheckpoint !== 'function' || typeof c.loadCheckpoint !== 'function') {
    throw bad('options.checkpoints must be a checkpoint store (createSqliteCheckpointStore(path) keeps decisions across a restart)')
  }
  if (typeof options.runId !== 'string' || options.runId === '' || options.runId.length > 256) throw bad('options.runId must be a string of 1 to 256 characters (the conversation or run the decisions belong to)')
  const rule = options.needsApproval ?? true
  if (typeof rule !== 'boolean' && typeof rule !== 'function' && (rule === null || typeof rule !== 'object' || Array.isArray(rule))) {
    throw bad('options.needsApproval must be a boolean, a function (call) => boolean, or { [toolName]: boolean | (call) => boolean }')
  }
  const maxPending = options.maxPendingDecisions ?? LIMITS.DEFAULT_MAX_PENDING_DECISIONS
  if (!Number.isSafeInteger(maxPending) || maxPending < 1 || maxPending > LIMITS.HARD_MAX_PENDING_DECISIONS) {
    throw bad(`options.maxPendingDecisions must be an integer from 1 to ${LIMITS.HARD_MAX_PENDING_DECISIONS}`)
  }
  const maxSticky = options.maxStickyDecisions ?? LIMITS.DEFAULT_MAX_STICKY_DECISIONS
  if (!Number.isSafeInteger(maxSticky) || maxSticky < 1 || maxSticky > LIMITS.HARD_MAX_STICKY_DECISIONS) {
    throw bad(`options.maxStickyDecisions must be an integer from 1 to ${LIMITS.HARD_MAX_STICKY_DECISIONS}`)
  }
  return { checkpoints: c, runId: options.runId, rule, maxPending, maxSticky }
}

// The call as the gate keeps it: its id, tool name and arguments (the approval id binds all three).
function callOf(call, who) {
  if (call === null || typeof call !== 'object' || typeof call.name !== 'string' || (typeof call.id !== 'string' && typeof call.id !== 'number')) {
    throw adapterError(TypeError, `${who}: call must be { id, name, arguments }`, 'ERR_PRISM_INVALID_CALL')
  }
  return { id: String(call.id), name: call.name, arguments: call.arguments ?? {} }
}

const emptyState = (runId, owner) => ({ schemaVersion: 1, kind: 'approval-gate', runId, owner, interruption: { pendingDecisions: [] }, pendingCalls: [], decidedCalls: [], stickyDecisions: [] })

/**
 * A durable approval gate for the calls of one run (`runId`: a conversation, a job). `options`:
 * `checkpoints` (a CheckpointStore), `runId`, `needsApproval` (which calls wait: true, a function of
 * the call, or a map by tool name; default true), `ownership` / `identity` (the owner of the
 * checkpoint, as for durable agent runs), `maxPendingDecisions`, `maxStickyDecisions`.
 */
function createApprovalGate(options) {
  const s = checkOptions(options)
  const owner = runOwnership(options.ownership ?? undefined, options.identity ?? undefined, undefined)
  const key = { namespace: APPROVAL_GATE_NAMESPACE, key: s.runId, ...owner }
  // One mutation at a time in this process; other processes are kept out by the store's versions.
  let queue = Promise.resolve()
  const serial = (f) => {
    const p = queue.then(f, f)
    queue = p.then(
      () => {},
      () => {},
    )
    return p
  }

  async function load() {
    let record
    try {
      record = await s.checkpoints.loadCheckpoint(key)
    } catch (err) {
      if (err && err.code === CHECKPOINT_CONFLICT_CODE && /owner/i.test(String(err.message))) throw new AgentRunStateError(`Approval gate ${s.runId} belongs to another owner`)
      throw err
    }
    if (!record) return { state: emptyState(s.runId, owner), version: 0 }
    if (!sameOwner(record, owner)) throw new AgentRunStateError(`Approval gate ${s.runId} belongs to another owner`)
    const state = record.value
    if (state === null || typeof state !== 'object' || state.kind !== 'approval-gate' || !Array.isArray(state.pendingCalls) || !Array.isArray(state.decidedCalls)) {
      throw new AgentRunStateError(`Checkpoint ${APPROVAL_GATE_NAMESPACE}/${s.runId} is not an approval gate's state`)
    }
    // Every pending and decided call must be the call its approval id was issued for.
    const mismatch = bindingMismatch(state, s.runId, argumentsHash) ?? bindingMismatch({ runId: state.runId, pendingCalls: state.decidedCalls }, s.runId, argumentsHash)
    if (mismatch !== undefined) throw new AgentDecisionError('ERR_PRISM_DECISION_BINDING', `Approval binding mismatch: ${mismatch}; nothing was run`)
    return { state, version: record.version }
  }

  async function save(state, version) {
    const record = await s.checkpoints.saveCheckpoint({ ...key, version: version + 1, expectedVersion: version, value: state, category: 'approval-gate' })
    return record && Number.isSafeInteger(record.version) ? record.version : version + 1
  }

  // Load, change, save; a save that loses to another process's reloads and tries again.
  /**
   * Loads the state, applies `change`, saves what it returns as `next` (again on a lost
   * compare-and-swap) and answers its `result`.
   * @param {(state: any, version: any) => Promise<{ next?: any, result: any }> | { next?: any, result: any }} change
   * @returns {Promise<any>}
   */
  function mutate(change) {
    return serial(async () => {
      for (let attempt = 1; ; attempt++) {
        const { state, version } = await load()
        const { next, result } = await change(state, version)
        if (next === undefined) return result
        try {
          await save(next, version)
          return result
        } catch (err) {
          if (!(err instanceof CheckpointConflictError || err?.code === CHECKPOINT_CONFLICT_CODE) || attempt >= SAVE_ATTEMPTS) throw err
        }
      }
    })
  }

  async function gated(call) {
    let rule = s.rule
    if (typeof rule === 'object') rule = Object.prototype.hasOwnProperty.call(rule, call.name) ? rule[call.name] : false
    if (typeof rule === 'boolean') return rule
    if (rule === undefined || rule === null) return false
    try {
      return (await rule({ id: call.id, name: call.name, arguments: call.arguments })) !== false
    } catch {
      return true // a predicate that throws keeps the pause
    }
  }

  const scopeOf = (c) => ({ toolName: c.name, argumentsHash: argumentsHash(c.arguments) })
  const sameCall = (entry, c, hash) => entry.call.id === c.id && entry.call.name === c.name && argumentsHash(entry.call.arguments) === hash

  // What the recorded state says of `c`: a decision, a pending approval, a sticky answer, or nothing.
  function lookup(state, c) {
    const hash = argumentsHash(c.arguments)
    const decided = state.decidedCalls.find((e) => sameCall(e, c, hash))
    if (decided) return { kind: decided.allow ? 'allow' : 'reject', reason: decided.reason, approvalId: decided.approvalId }
    const other = state.decidedCalls.find((e) => e.call.id === c.id)
    if (other) return { kind: 'rebound', approvalId: other.approvalId }
    const pending = state.pendingCalls.find((e) => sameCall(e, c, hash))
    if (pending) return { kind: 'pending', approvalId: pending.approvalId }
    const id = bindApprovalId(s.runId, c.id, scopeOf(c))
    const [a] = answer(native.approvalGateRound(JSON.stringify([{ gated: true, toolCallId: c.id, scope: scopeOf(c) }]), JSON.stringify(state.stickyDecisions ?? []), JSON.stringify([id]), s.maxPending)).actions
    if (a.action === 'run') return { kind: 'allow' }
    if (a.action === 'reject') return { kind: 'reject', reason: a.reason }
    return { kind: 'new', record: a.pending }
  }

  // Records `c` as waiting (once); answers the lookup.
  function ask(call, who) {
    const c = callOf(call, who)
    return mutate(async (state) => {
      const found = lookup(state, c)
      if (found.kind !== 'new') return { result: found }
      if (state.pendingCalls.length >= s.maxPending) {
        throw new AgentDecisionError('ERR_PRISM_DECISION_LIMIT', `Approval gate ${s.runId} already holds ${state.pendingCalls.length} pending approvals (maxPendingDecisions); decide them first`)
      }
      const next = {
        ...state,
        interruption: { pendingDecisions: [...(state.interruption?.pendingDecisions ?? []), found.record] },
        pendingCalls: [...state.pendingCalls, { approvalId: found.record.approvalId, call: jsonCopy(c) }],
      }
      return { next, result: { kind: 'pending', approvalId: found.record.approvalId } }
    })
  }

  const gate = {
    runId: s.runId,
    /** Whether `call` must wait for a person: true records it as pending (durably). */
    async requires(call) {
      const c = callOf(call, 'gate.requires')
      if (!(await gated(c))) return false
      return (await ask(c, 'gate.requires')).kind === 'pending'
    },
    /** The AI SDK's approval status of `call`: "not-applicable", "approved", { type: "denied", reason } or "user-approval". */
    async status(call) {
      const c = callOf(call, 'gate.status')
      if (!(await gated(c))) return 'not-applicable'
      const found = await ask(c, 'gate.status')
      if (found.kind === 'allow') return 'approved'
      if (found.kind === 'reject') return { type: 'denied', reason: found.reason ?? 'Approval rejected' }
      return 'user-approval'
    },
    /** The approvals waiting for a decision: `{ approvalId, toolCallId, toolName, argumentsHash, arguments }`. */
    async pending() {
      const { state } = await load()
      return state.pendingCalls.map((e) => ({ approvalId: e.approvalId, toolCallId: e.call.id, toolName: e.call.name, argumentsHash: argumentsHash(e.call.arguments), arguments: e.call.arguments }))
    },
    /**
     * Records decisions: `[{ approvalId | toolCallId, outcome, reason? }]`, `outcome` one of
     * `allow_once`, `allow_for_run`, `reject_once`, `reject_for_run` (docs/agent.md § Resume).
     */
    decide(decisions) {
      // A promise either way: a refusal is a rejection, as every other answer of the gate.
      if (!Array.isArray(decisions)) return Promise.reject(new AgentDecisionError('ERR_PRISM_DECISION_INVALID', 'gate.decide: decisions must be an array of { approvalId | toolCallId, outcome, reason? }'))
      return mutate(async (state, version) => {
        const byCall = new Map(state.pendingCalls.map((e) => [e.call.id, e.approvalId]))
        const list = decisions.map((d) => {
          if (d === null || typeof d !== 'object') return d
          if (d.modifiedArguments !== undefined) {
            throw new AgentDecisionError('ERR_PRISM_DECISION_INVALID', 'gate.decide: modifiedArguments cannot change a call the framework makes; reject it with a reason and let the model call again')
          }
          if (d.approvalId === undefined && d.toolCallId !== undefined) {
            const id = byCall.get(String(d.toolCallId))
            if (id === undefined) throw new AgentDecisionError('ERR_PRISM_DECISION_UNKNOWN', `No pending approval for tool call ${String(d.toolCallId)} in ${s.runId}`)
            const { toolCallId: _t, ...rest } = d
            return { ...rest, approvalId: id }
          }
          return d
        })
        const resume = { expectedVersion: Math.max(version, 1), decisions: list }
        const pending = state.interruption?.pendingDecisions ?? []
        const resolved = answer(native.approvalResolve(JSON.stringify(pending), JSON.stringify(state.stickyDecisions ?? []), JSON.stringify(resume), new Date().toISOString(), s.maxSticky))
        const decidedIds = new Map(resolved.decided.map((d) => [d.approvalId, d]))
        const decided = state.pendingCalls.filter((e) => decidedIds.has(e.approvalId)).map((e) => {
          const d = decidedIds.get(e.approvalId)
          const entry = { approvalId: e.approvalId, call: e.call, allow: d.outcome.startsWith('allow'), outcome: d.outcome }
          if (typeof d.reason === 'string') entry.reason = d.reason
          return entry
        })
        const next = {
          ...state,
          interruption: { pendingDecisions: resolved.remaining },
          pendingCalls: state.pendingCalls.filter((e) => !decidedIds.has(e.approvalId)),
          decidedCalls: [...state.decidedCalls, ...decided],
          stickyDecisions: resolved.stickies,
        }
        return { next, result: decided.map((e) => ({ approvalId: e.approvalId, toolCallId: e.call.id, toolName: e.call.name, outcome: e.outcome })) }
      })
    },
    /**
     * The check before a call runs (adapters pass it as `beforeExecute`): returns when the call
     * may run; throws `approval_rejected` when it was rejected, `ERR_PRISM_DECISION_BINDING` when its
     * decision was made for other arguments, and `ERR_PRISM_AGENT_RUN_SUSPENDED` (the call is recorded
     * as pending, its effect claim stays retryable) when no one has decided yet.
     */
    async admit(call) {
      const c = callOf(call, 'gate.admit')
      if (!(await gated(c))) return
      const found = await ask(c, 'gate.admit')
      if (found.kind === 'allow') return
      if (found.kind === 'reject') throw adapterError(Error, found.reason ?? 'Approval rejected', 'approval_rejected')
      if (found.kind === 'rebound') {
        throw new AgentDecisionError('ERR_PRISM_DECISION_BINDING', `Tool ${c.name} call ${c.id}: its approval ${found.approvalId} was decided for other arguments; nothing was run`)
      }
      const e = adapterError(Error, `Tool ${c.name} call ${c.id} is waiting for approval ${found.approvalId}: decide it with gate.decide([{ approvalId, outcome: "allow_once" }]) and run again`, 'ERR_PRISM_AGENT_RUN_SUSPENDED')
      e.approvalId = found.approvalId
      throw e
    },
  }
  return gate
}

module.exports = { createApprovalGate, APPROVAL_GATE_NAMESPACE }
