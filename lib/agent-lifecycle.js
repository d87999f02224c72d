'use strict'
// `createAgentRunLifecycle({ checkpoints, resolveAgent, fencingToken? })`: `@arnilo/prism`'s host
// capability for durable agent status and resume, over this package's run checkpoints
// (lib/approval.js). An adapter (the MCP server's `agent.<id>.status` / `agent.<id>.resume` tools)
// supplies the authorized `ownership` and the `agentId` it exposes; a run of another owner or another
// agent is refused with `AgentRunStateError` like a missing one (docs/agent.md "The run lifecycle").
const { codedError } = require('./errors.js')
const { unsupportedOption } = require('./agent-options.js')
const { ownerFields, sameOwner } = require('./approval-integrity.js')
const {
  AGENT_RUN_STATE_NAMESPACE,
  AgentRunStateError,
  CHECKPOINT_CONFLICT_CODE,
  publicState,
  resumeAgentRun,
  resumeAgentRunStream,
} = require('./approval.js')

const WHERE = 'createAgentRunLifecycle'
const INVALID_OPTION = 'ERR_PRISM_INVALID_OPTION'
const REQUIRED_TEXT = ['agentId', 'definitionRevision', 'fingerprint', 'runId', 'sessionId', 'status']

const invalidOption = (message) => codedError(TypeError, `${WHERE}: ${message}`, INVALID_OPTION)

function throwIfAborted(signal) {
  if (signal !== undefined && signal !== null && signal.aborted) throw signal.reason ?? new Error('Aborted')
}

function checkOptions(options) {
  if (options === null || typeof options !== 'object') throw invalidOption('options must be { checkpoints, resolveAgent, fencingToken? }')
  const c = options.checkpoints
  if (c === null || typeof c !== 'object' || typeof c.saveCheckpoint !== 'function' || typeof c.loadCheckpoint !== 'function') {
    throw invalidOption('checkpoints must be a CheckpointStore (saveCheckpoint, loadCheckpoint)')
  }
  if (typeof options.resolveAgent !== 'function') throw invalidOption('resolveAgent must be a function ({ agentId, ownership, signal }) => { agent, definitionRevision }')
  const f = options.fencingToken
  if (f !== undefined && (!Number.isSafeInteger(f) || f < 0)) throw invalidOption('fencingToken must be a non-negative safe integer')
  return { checkpoints: c, resolveAgent: options.resolveAgent, fencingToken: f }
}

// The request of one call: `{ ownership?, signal?, agentId?, ... }`. Skill session state is refused
// (this package has no skills), never silently dropped.
function checkRequest(request, method) {
  const where = `agentRunLifecycle.${method}`
  if (request === undefined) return {}
  if (request === null || typeof request !== 'object') throw new AgentRunStateError(`${where}: options must be an object { ownership?, signal?, agentId? }`)
  for (const option of ['persistSessionState', 'includeSkillBodies']) {
    if (request[option] !== undefined && request[option] !== false) throw unsupportedOption(where, option, 'skills')
  }
  if (request.agentId !== undefined && typeof request.agentId !== 'string') throw new AgentRunStateError(`${where}: agentId must be a string`)
  if (request.ownership !== undefined && request.ownership !== null && typeof request.ownership !== 'object') {
    throw new AgentRunStateError(`${where}: ownership must be an object { tenantId?, accountId?, userId? }`)
  }
  return request
}

function checkRef(ref, method) {
  if (ref === null || typeof ref !== 'object' || typeof ref.runId !== 'string' || ref.runId === '' || (ref.sessionId !== undefined && typeof ref.sessionId !== 'string')) {
    throw new AgentRunStateError(`agentRunLifecycle.${method}: ref must be { runId, sessionId? }`)
  }
}

/**
 * The stored run `ref` names, for the request's owner: its checkpoint record and state. Refuses a
 * missing run, another owner's run (the store's key and the recorded owner), another session, a
 * state that is not a durable run of this package, and a run of another agent than `agentId`.
 */
async function loadRun(checkpoints, ref, request, method) {
  throwIfAborted(request.signal)
  checkRef(ref, method)
  const owner = ownerFields(request.ownership)
  const notOwner = () => new AgentRunStateError(`Agent run ${ref.runId} belongs to another owner: ${method === 'status' ? 'status' : 'resume'} refused`)
  let record
  try {
    record = await checkpoints.loadCheckpoint({ namespace: AGENT_RUN_STATE_NAMESPACE, key: ref.runId, ...owner })
  } catch (err) {
    if (err && err.code === CHECKPOINT_CONFLICT_CODE && /owner/i.test(String(err.message))) throw notOwner()
    throw err
  }
  if (record === null || record === undefined) throw new AgentRunStateError(`No durable agent run ${ref.runId}`)
  if (typeof record !== 'object' || !Number.isSafeInteger(record.version)) throw new AgentRunStateError('Malformed agent run state')
  if (!sameOwner(record, owner)) throw notOwner()
  const state = record.value
  if (ref.sessionId && state !== null && typeof state === 'object' && state.sessionId !== ref.sessionId) throw new AgentRunStateError('Agent run session mismatch')
  if (state === null || typeof state !== 'object' || Array.isArray(state)) throw new AgentRunStateError('Agent run state must be an object')
  if (state.schemaVersion !== 1) throw new AgentRunStateError(`Unsupported agent run state schemaVersion ${String(state.schemaVersion)}`)
  if (REQUIRED_TEXT.some((k) => typeof state[k] !== 'string' || state[k] === '') || state.runId !== ref.runId) {
    throw new AgentRunStateError('Malformed agent run state')
  }
  if (request.agentId !== undefined && state.agentId !== request.agentId) throw new AgentRunStateError('Agent run capability mismatch')
  return { record, state }
}

async function resolve(options, state, request) {
  const resolved = await options.resolveAgent({ agentId: state.agentId, ownership: request.ownership, signal: request.signal })
  if (resolved === null || typeof resolved !== 'object' || resolved.agent === null || typeof resolved.agent !== 'object' || typeof resolved.definitionRevision !== 'string') {
    throw invalidOption(`resolveAgent must answer { agent, definitionRevision } (agent ${state.agentId})`)
  }
  throwIfAborted(request.signal)
  return resolved
}

/** Host capability for durable agent status and resume. Adapters supply authorized ownership only. */
function createAgentRunLifecycle(options) {
  const settings = checkOptions(options)
  const resumeOptions = (resolved, request) => {
    const out = { checkpoints: settings.checkpoints, definitionRevision: resolved.definitionRevision }
    if (request.ownership !== undefined && request.ownership !== null) out.ownership = request.ownership
    if (settings.fencingToken !== undefined) out.fencingToken = settings.fencingToken
    return out
  }
  return {
    /** `{ state, version }`: the run's public state for its owner. */
    async status(ref, request) {
      const r = checkRequest(request, 'status')
      const { record, state } = await loadRun(settings.checkpoints, ref, r, 'status')
      throwIfAborted(r.signal)
      return { state: publicState(state, record.version), version: record.version }
    },
    /** `resumeAgentRun` with the agent `resolveAgent` answers for the stored run's agent id. */
    async resume(ref, resume, request) {
      const r = checkRequest(request, 'resume')
      const { state } = await loadRun(settings.checkpoints, ref, r, 'resume')
      const resolved = await resolve(settings, state, r)
      return resumeAgentRun(resolved.agent, ref, resume, resumeOptions(resolved, r))
    },
    /** The same resume as events (`resumeAgentRunStream`), bounded by `maxQueuedEvents` / `overflow`. */
    async *resumeStream(ref, resume, request) {
      const r = checkRequest(request, 'resumeStream')
      const { state } = await loadRun(settings.checkpoints, ref, r, 'resumeStream')
      const resolved = await resolve(settings, state, r)
      const out = resumeOptions(resolved, r)
      if (r.signal !== undefined) out.signal = r.signal
      if (r.maxQueuedEvents !== undefined) out.maxQueuedEvents = r.maxQueuedEvents
      if (r.overflow !== undefined) out.overflow = r.overflow
      yield* resumeAgentRunStream(resolved.agent, ref, resume, out)
    },
  }
}

module.exports = { createAgentRunLifecycle }
