'use strict'
// Human approval before side effects: durable suspension and resume on `@arnilo/prism`'s
// `runState` contract (docs/agent.md § Approval and durable runs).
// The decisions are native (src/run/approval.rs): which calls of a round wait, the redacted
// pending records, the shape and bounds of a resume, how a batch applies to the recorded pending
// set, sticky decisions, what a checkpoint must match to be resumed, and the agent fingerprint.
// This file awaits what must be awaited (needsApproval predicates, the checkpoint store, the
// revalidation of modified arguments, the resumed dispatches) and follows those answers.
const { randomUUID } = require('node:crypto')
const native = require('../binding.js')
const { runGuardrails } = require('./guardrails.js')
const { createJsonSchemaToolArgumentValidator } = require('./validation.js')
const { createMemoryCheckpointStore, createSqliteCheckpointStore, CheckpointConflictError, CHECKPOINT_CONFLICT_CODE } = require('./checkpoints.js')
const { bindApprovalId, bindingMismatch, runOwnership, sameOwner } = require('./approval-integrity.js')
const { rejectOnAbort } = require('./abort-watch.js')

const LIMITS = JSON.parse(native.approvalLimits())
const NOT_JSON = LIMITS.NOT_JSON
/** The checkpoint namespace of durable agent runs (the key is the run id). */
const AGENT_RUN_STATE_NAMESPACE = 'prism.agent-run'
/** Run option key (internal) carrying a prepared resume into `session.run`. */
const RESUME = Symbol('prism.agentRunResume')

/** A refused resume input or decision batch; `code` is one of the `ERR_PRISM_DECISION_*` codes. */
class AgentDecisionError extends Error {
  constructor(code, message, options) {
    super(message, options)
    this.name = 'AgentDecisionError'
    this.code = code
  }
}

/** A durable run that cannot start or resume as asked (`ERR_PRISM_AGENT_RUN_STATE`). */
// `code`: ERR_PRISM_AGENT_RUN_STATE, or for a refused resume ERR_PRISM_AGENT_RUN_STALE (the run moved
// on: read it again) and ERR_PRISM_AGENT_RUN_RECONCILE (a claimed call has no known outcome).
class AgentRunStateError extends Error {
  constructor(message, code = 'ERR_PRISM_AGENT_RUN_STATE') {
    super(message)
    this.name = 'AgentRunStateError'
    this.code = code
  }
}

function answer(text) {
  const out = JSON.parse(text)
  if (out.error) {
    if (out.error.kind === 'decision') throw new AgentDecisionError(out.error.code, out.error.message)
    throw new AgentRunStateError(out.error.message, out.error.code)
  }
  return out
}

// JSON text of a host value. What JSON cannot carry (functions, symbols, bigints) becomes a marker
// the native checks refuse; a value that cannot be serialized at all (a cycle, a throwing getter)
// is `onThrow()`.
function hostJson(value, onThrow) {
  let text
  try {
    text = JSON.stringify(value, (_k, v) => (typeof v === 'function' || typeof v === 'symbol' || typeof v === 'bigint' ? NOT_JSON : v))
  } catch {
    throw onThrow()
  }
  return text === undefined ? JSON.stringify(NOT_JSON) : text
}

const invalidResume = () => new AgentDecisionError('ERR_PRISM_DECISION_INVALID', 'Resume must be plain JSON data')

function toolList(tools) {
  if (tools === undefined || tools === null) return []
  if (Array.isArray(tools)) return tools.filter((t) => t !== null && typeof t === 'object')
  if (typeof tools.list === 'function') return tools.list()
  return []
}

function agentIdOf(config) {
  const id = config.id ?? config.name
  return typeof id === 'string' && id.trim() !== '' ? id : undefined
}

// What defines the agent for a resume: id/name, revision, model, instructions, tool definitions
// (name, parameters, exclusive, approval rule, effect), guardrails (stage, name, revision), loop
// and limits. Hashed canonically in Rust.
function fingerprintOf(config, definitionRevision) {
  const tools = toolList(config.tools).map((t) => ({
    name: String(t.name),
    parameters: t.parameters ?? null,
    exclusive: t.exclusive === true,
    needsApproval: typeof t.needsApproval === 'function' ? 'predicate' : t.needsApproval === true,
    effect: t.effect === undefined ? null : typeof t.effect === 'function' ? 'resolver' : t.effect,
  }))
  const guardrails = {}
  for (const stage of ['toolInput', 'toolOutput']) {
    const list = config.guardrails && Array.isArray(config.guardrails[stage]) ? config.guardrails[stage] : []
    guardrails[stage] = list.map((g) => ({ name: g && typeof g.name === 'string' ? g.name : null, revision: g && g.revision !== undefined ? String(g.revision) : null }))
  }
  const material = {
    agentId: agentIdOf(config) ?? null,
    definitionRevision,
    model: config.model ?? null,
    instructions: typeof config.instructions === 'string' ? config.instructions : null,
    tools,
    guardrails,
    loop: config.loop ?? null,
    limits: config.limits ?? null,
  }
  return answer(native.approvalFingerprint(hostJson(material, () => new AgentRunStateError('Agent definition is not fingerprintable JSON')))).fingerprint
}

function checkRunState(runState, where) {
  if (runState === null || typeof runState !== 'object') throw new AgentRunStateError(`${where}: runState must be an object { checkpoints, definitionRevision, interruptBeforeTool? }`)
  const c = runState.checkpoints
  if (c === null || typeof c !== 'object' || typeof c.saveCheckpoint !== 'function' || typeof c.loadCheckpoint !== 'function') {
    throw new AgentRunStateError('Durable agent runs require a CheckpointStore (saveCheckpoint, loadCheckpoint)')
  }
  if (typeof runState.definitionRevision !== 'string' || runState.definitionRevision.trim() === '') {
    throw new AgentRunStateError('Durable agent runs require definitionRevision')
  }
  if (runState.interruptBeforeTool !== undefined && typeof runState.interruptBeforeTool !== 'boolean') {
    throw new AgentRunStateError('runState.interruptBeforeTool must be a boolean')
  }
  const maxPending = runState.maxPendingDecisions ?? LIMITS.DEFAULT_MAX_PENDING_DECISIONS
  if (!Number.isSafeInteger(maxPending) || maxPending < 1 || maxPending > LIMITS.HARD_MAX_PENDING_DECISIONS) {
    throw new AgentRunStateError(`runState.maxPendingDecisions must be an integer from 1 to ${LIMITS.HARD_MAX_PENDING_DECISIONS}`)
  }
  const maxSticky = runState.maxStickyDecisions ?? LIMITS.DEFAULT_MAX_STICKY_DECISIONS
  if (!Number.isSafeInteger(maxSticky) || maxSticky < 1 || maxSticky > LIMITS.HARD_MAX_STICKY_DECISIONS) {
    throw new AgentRunStateError(`runState.maxStickyDecisions must be an integer from 1 to ${LIMITS.HARD_MAX_STICKY_DECISIONS}`)
  }
  return { checkpoints: c, definitionRevision: runState.definitionRevision, interruptBeforeTool: runState.interruptBeforeTool === true, maxPending, maxSticky }
}

function runStateOf(config, options) {
  const rs = options.runState !== undefined ? options.runState : config.runState
  return rs === undefined || rs === false || rs === null ? undefined : rs
}

// A redacted principal reference (tenant/kind/id), never a credential.
function identityRef(identity) {
  if (identity === null || typeof identity !== 'object') return undefined
  const p = identity.principal !== null && typeof identity.principal === 'object' ? identity.principal : identity
  const parts = [identity.tenantId, p.kind, p.id].map((v) => (typeof v === 'string' ? v : ''))
  return parts.some((v) => v !== '') ? parts.join('/') : undefined
}

function argumentsHash(args) {
  try {
    return native.toolEffectArgumentsHash(args ?? {})
  } catch {
    return native.toolEffectArgumentsHash(NOT_JSON)
  }
}

function publicState(state, version) {
  const { schemaVersion, agentId, definitionRevision, fingerprint, runId, sessionId, model, status, interruption } = state
  const out = { schemaVersion, agentId, definitionRevision, fingerprint, runId, sessionId, model, status, version }
  if (interruption !== undefined) out.interruption = interruption
  return out
}

function jsonSafe(value) {
  try {
    const text = JSON.stringify(value)
    return text === undefined ? null : JSON.parse(text)
  } catch {
    return null
  }
}

async function save(store, state, version, ownership, fencingToken, signal) {
  const input = { namespace: AGENT_RUN_STATE_NAMESPACE, key: state.runId, version: version + 1, expectedVersion: version, value: state, category: 'agent-run', ...ownership }
  if (fencingToken !== undefined) input.fencingToken = fencingToken
  if (signal !== undefined) input.signal = signal
  // With a signal, the run's end ends the wait (the store may still write: a resume reads what it kept).
  const record = await rejectOnAbort(store.saveCheckpoint(input), signal)
  return record && Number.isSafeInteger(record.version) ? record.version : version + 1
}

/**
 * A unique run id for a durable run (its checkpoint key): a resumed run keeps its own; a new one
 * gets a random id, so runs of different processes never share a key. Undefined otherwise.
 */
function durableRunId(config, options) {
  if (options && options[RESUME]) return options[RESUME].runId
  if (config && options && runStateOf(config, options) !== undefined) return `run_${randomUUID()}`
  return undefined
}

/**
 * The approval side of one run, or undefined when the run is not durable. Refuses, before any
 * provider turn, a durable run without an agent id or with a malformed `runState`, and a run that
 * grants a tool with `needsApproval` without `runState` (the pause could not be kept).
 */
function beginDurableRun({ config, options, sessionId, runId, tools }) {
  const rs = runStateOf(config, options)
  if (rs === undefined) {
    for (const t of tools) {
      if (t.needsApproval !== undefined && t.needsApproval !== false) {
        throw Object.assign(new AgentRunStateError(`Tool ${t.name} needs approval: the run requires runState { checkpoints, definitionRevision }`), { toolName: t.name })
      }
    }
    return undefined
  }
  const loop = { ...config.loop, ...options.loop }
  if (loop.strategy !== undefined && loop.strategy !== 'single-shot') {
    throw new AgentRunStateError('Durable runs support the single-shot loop only')
  }
  const settings = checkRunState(rs, 'session.run')
  const agentId = agentIdOf(config)
  if (agentId === undefined) throw new AgentRunStateError('Durable agent runs require AgentConfig.id or name')
  const resumed = options[RESUME]
  const fingerprint = resumed ? resumed.fingerprint : fingerprintOf(config, settings.definitionRevision)
  // The checkpoint's owner: the run's ownership, else its identity's tenant/account/user.
  const ownership = runOwnership(options.ownership ?? config.ownership, options.identity, config.identity)
  const identity = identityRef(options.identity ?? config.identity)
  let version = resumed ? resumed.version : 0
  let stickies = resumed ? resumed.stickies : []
  let status = 'running'
  const base = { schemaVersion: 1, agentId, definitionRevision: settings.definitionRevision, fingerprint, runId, sessionId, model: jsonSafe(options.model ?? config.model), owner: ownership }

  async function needsApproval(tool, call, ctx) {
    if (settings.interruptBeforeTool) return true
    const rule = tool.needsApproval
    if (rule === undefined || rule === false) return false
    if (rule === true) return true
    if (typeof rule !== 'function') return true
    const input = { toolCallId: call.id, toolName: call.name, sessionId, runId, metadata: ctx.metadata, signal: ctx.signal }
    try {
      // The run's signal ends the wait: a predicate that never answers cannot hold the run.
      return (await rejectOnAbort(Promise.resolve().then(() => rule(call.arguments ?? {}, input)), ctx.signal)) !== false
    } catch (error) {
      if (ctx.signal !== undefined && ctx.signal.aborted) throw error
      return true // a predicate that throws keeps the pause
    }
  }

  return {
    runId,
    /**
     * The gate of one round. Answers `hosted` (the calls runBatch must skip: gated and
     * sticky-rejected ones, plus the provider-hosted), the blocked rows of sticky rejections,
     * and the pending decisions with their calls.
     */
    async gate(calls, hosted, registry, ctx) {
      const gateCalls = []
      const at = []
      for (let i = 0; i < calls.length; i++) {
        if (hosted[i]) continue
        const call = calls[i]
        const tool = registry.get(call.name)
        // Unknown tools and unreadable arguments are blocked at dispatch, and the generated
        // search_tools only reads the run's own index: no side effect to gate.
        if (tool === undefined || call.argumentsError !== undefined || (call.name === native.SEARCH_TOOLS_NAME && tool.needsApproval === undefined)) continue
        const gated = await needsApproval(tool, call, ctx)
        const scope = { toolName: String(call.name), argumentsHash: argumentsHash(call.arguments) }
        if (gated && tool.effect !== undefined) {
          try {
            const d = native.resolveToolEffectDeclaration(tool, call.arguments, { sessionId, runId, toolCallId: call.id, signal: ctx.signal, metadata: ctx.metadata })
            if (d && typeof d.kind === 'string' && d.kind !== 'none') scope.effectKind = d.kind
          } catch {
            // The dispatch refuses a bad declaration; the scope just lacks the kind.
          }
        }
        if (identity !== undefined) scope.identity = identity
        gateCalls.push({ gated, toolCallId: String(call.id), scope })
        at.push(i)
      }
      // Each id commits to its call's tool name, arguments hash and call id (lib/approval-integrity.js).
      const ids = gateCalls.map((g) => bindApprovalId(runId, g.toolCallId, g.scope))
      const { actions } = answer(native.approvalGateRound(JSON.stringify(gateCalls), JSON.stringify(stickies), JSON.stringify(ids), settings.maxPending))
      const skip = hosted.slice()
      const rows = []
      const pending = []
      actions.forEach((a, j) => {
        const i = at[j]
        if (a.action === 'run') return
        skip[i] = true
        if (a.action === 'reject') rows.push({ toolCallId: calls[i].id, name: calls[i].name, error: { name: 'ToolApprovalRejected', code: 'approval_rejected', message: a.reason } })
        else pending.push({ record: a.pending, call: calls[i] })
      })
      return { hosted: skip, rows, pending }
    },
    /** Persists the suspension; answers what the suspended result adds. */
    async suspend(pending, snapshot, signal) {
      const records = pending.map((p) => p.record)
      const interruption = JSON.parse(native.approvalInterruption(JSON.stringify(records), false))
      const state = {
        ...base,
        status: 'suspended',
        interruption,
        interruptBeforeTool: settings.interruptBeforeTool,
        pendingCalls: pending.map((p) => ({ approvalId: p.record.approvalId, status: 'ready', call: jsonSafe(p.call) })),
        stickyDecisions: stickies,
        transcript: jsonSafe(snapshot.transcript),
        // The run machine's budget: every counter and the wall-time deadline, as upstream saves them.
        counters: snapshot.budget.counters,
        deadlineAt: snapshot.budget.deadlineAt,
        toolNames: snapshot.toolNames ?? null,
        activatedToolNames: snapshot.activatedToolNames ?? [],
        usage: snapshot.usage ?? null,
      }
      version = await save(settings.checkpoints, state, version, ownership, rs.fencingToken, signal)
      status = 'suspended'
      return { interruption, runState: publicState(state, version) }
    },
    /** Records a terminal status once a resumed run ends (sticky decisions end with it). */
    async finish(end) {
      if (status !== 'running' || version === 0) return
      status = end
      const state = { ...base, status: end, stickyDecisions: undefined, pendingCalls: [] }
      try {
        version = await save(settings.checkpoints, state, version, ownership, rs.fencingToken)
      } catch {
        // The run's own outcome stands; a lost terminal write leaves a non-resumable `running` state.
      }
    },
    get stickies() {
      return stickies
    },
    set stickies(v) {
      stickies = v
    },
  }
}

// Schema and tool-input guardrails over modified arguments, before anything is written.
let defaultValidator
async function revalidate(config, tool, call, modified, ctx) {
  const invalid = (message) => new AgentDecisionError('ERR_PRISM_DECISION_INVALID', message)
  if (tool === undefined) throw invalid('Modified arguments name a tool the agent no longer has')
  let verdict
  try {
    if (typeof config.validator === 'function') verdict = await config.validator(tool, modified, ctx)
    else if (tool.parameters !== undefined && tool.parameters !== null) {
      defaultValidator ??= createJsonSchemaToolArgumentValidator()
      verdict = defaultValidator(tool, modified, ctx)
    }
  } catch {
    throw invalid('Modified arguments failed schema validation')
  }
  if (verdict !== undefined && verdict !== null && verdict !== true) throw invalid('Modified arguments failed schema validation')
  const guarded = await runGuardrails({
    stage: 'tool_input',
    guardrails: config.guardrails,
    value: { ...call, arguments: modified },
    context: { ...ctx, toolCallId: call.id, toolName: call.name },
  })
  if (guarded.terminal) throw invalid('Modified arguments blocked by guardrail')
}

function requireAgent(agent, where) {
  if (agent === null || typeof agent !== 'object' || agent.config === null || typeof agent.config !== 'object' || typeof agent.createSession !== 'function') {
    throw new TypeError(`${where}: agent must be an agent from createAgent`)
  }
}

/**
 * Everything a resume checks and writes before the resumed run starts. Invalid input of any kind
 * throws before the first write; a partial batch or a `deny` answers the final result; otherwise
 * the claim (status `running`, the decided calls marked `dispatched`) is written with
 * compare-and-swap, and the prepared resume goes to `session.run`.
 */
async function prepareResume(agent, ref, resume, options, where) {
  // Shape first, before any read: plain-JavaScript callers included.
  answer(native.approvalCheckResume(hostJson(resume, invalidResume)))
  requireAgent(agent, where)
  if (ref === null || typeof ref !== 'object' || typeof ref.runId !== 'string' || ref.runId === '') {
    throw new AgentRunStateError(`${where}: ref must be { runId, sessionId? }`)
  }
  if (options === null || typeof options !== 'object') throw new AgentRunStateError(`${where}: options must be { checkpoints, definitionRevision }`)
  const settings = checkRunState(options, where)
  const config = agent.config
  const agentId = agentIdOf(config)
  if (agentId === undefined) throw new AgentRunStateError('Durable agent runs require AgentConfig.id or name')
  // The run's checkpoint carries its owner; only that owner resumes it: the resume's `ownership`,
  // else the agent's, else the identity's tenant/account/user.
  const ownership = runOwnership(options.ownership ?? config.ownership, options.identity, config.identity)
  const notOwner = () => new AgentRunStateError(`Agent run ${ref.runId} belongs to another owner: resume refused`)
  let record
  try {
    record = await settings.checkpoints.loadCheckpoint({ namespace: AGENT_RUN_STATE_NAMESPACE, key: ref.runId, ...ownership })
  } catch (err) {
    if (err && err.code === CHECKPOINT_CONFLICT_CODE && /owner/i.test(String(err.message))) throw notOwner()
    throw err
  }
  if (!record) throw new AgentRunStateError(`No durable agent run ${ref.runId}`)
  if (!sameOwner(record, ownership)) throw notOwner()
  const state = record.value
  if (state === null || typeof state !== 'object') throw new AgentRunStateError('Agent run state must be an object')
  const fingerprint = fingerprintOf(config, settings.definitionRevision)
  answer(native.approvalCheckResumable(JSON.stringify(state), record.version, resume.expectedVersion, agentId, settings.definitionRevision, fingerprint, typeof ref.sessionId === 'string' ? ref.sessionId : undefined))
  // Every pending call must be the one its approval id was issued for: a checkpoint edited after
  // the suspension (tool, arguments, call id) fails closed before anything is written or run.
  const mismatch = bindingMismatch(state, ref.runId, argumentsHash)
  if (mismatch !== undefined) throw new AgentDecisionError('ERR_PRISM_DECISION_BINDING', `Approval binding mismatch: ${mismatch}; nothing was run`)
  const pending = state.interruption && Array.isArray(state.interruption.pendingDecisions) ? state.interruption.pendingDecisions : []
  const resolved = answer(native.approvalResolve(JSON.stringify(pending), JSON.stringify(state.stickyDecisions ?? []), hostJson(resume, invalidResume), new Date().toISOString(), settings.maxSticky))
  // Modified arguments are revalidated against the current tool before anything is written.
  const tools = toolList(config.tools)
  const calls = new Map((state.pendingCalls ?? []).map((e) => [e.approvalId, e]))
  for (const d of resolved.decided) {
    if (d.modifiedArguments === undefined) continue
    const entry = calls.get(d.approvalId)
    if (!entry || !entry.call) throw new AgentRunStateError('Malformed agent run pending calls')
    const tool = tools.find((t) => t.name === entry.call.name)
    await revalidate(config, tool, entry.call, d.modifiedArguments, { sessionId: state.sessionId, runId: state.runId, toolCallId: entry.call.id, metadata: {} })
  }
  const fencing = options.fencingToken
  // A resume that loses the compare-and-swap to another resume of the same version is stale.
  const store = {
    async saveCheckpoint(input) {
      try {
        return await settings.checkpoints.saveCheckpoint(input)
      } catch (err) {
        if (err && err.code === CHECKPOINT_CONFLICT_CODE) throw new AgentRunStateError('Stale or non-suspended agent run resume', 'ERR_PRISM_AGENT_RUN_STALE')
        throw err
      }
    },
  }
  // Decisions of earlier partial batches ride their entries.
  const decidedById = new Map(resolved.decided.map((d) => [d.approvalId, d]))
  const entries = (state.pendingCalls ?? []).map((e) => (decidedById.has(e.approvalId) ? { ...e, decision: decidedById.get(e.approvalId) } : e))
  const result = (s, version) => ({ sessionId: s.sessionId, runId: s.runId, status: s.status, text: '', content: [], runState: publicState(s, version), interruption: s.interruption })
  if (resolved.deny) {
    const denied = { ...state, status: 'denied', pendingCalls: [], stickyDecisions: undefined, transcript: undefined }
    const version = await save(store, denied, record.version, ownership, fencing)
    return { done: { ...result(denied, version), interruption: state.interruption } }
  }
  if (resolved.remaining.length > 0) {
    const interruption = JSON.parse(native.approvalInterruption(JSON.stringify(resolved.remaining), true))
    const next = { ...state, status: 'suspended', interruption, pendingCalls: entries, stickyDecisions: resolved.stickies }
    const version = await save(store, next, record.version, ownership, fencing)
    return { done: result(next, version) }
  }
  // The claim: one compare-and-swap marks every decided call dispatched before any side effect.
  // A crash from here on leaves them `dispatched`: ambiguous, refused, never replayed.
  const claimed = {
    ...state,
    status: 'running',
    interruption: undefined,
    pendingCalls: entries.map((e) => ({ ...e, status: 'dispatched' })),
    stickyDecisions: resolved.stickies,
  }
  const version = await save(store, claimed, record.version, ownership, fencing)
  return {
    state,
    resumed: {
      runId: state.runId,
      fingerprint,
      version,
      stickies: resolved.stickies,
      counters: state.counters,
      deadlineAt: state.deadlineAt,
      usage: state.usage ?? undefined,
      entries,
      runState: { checkpoints: settings.checkpoints, definitionRevision: settings.definitionRevision, interruptBeforeTool: state.interruptBeforeTool === true, fencingToken: fencing, maxPendingDecisions: settings.maxPending, maxStickyDecisions: settings.maxSticky },
      ownership: options.ownership,
    },
  }
}

// The resumed run's session: the checkpoint's transcript, grant and activated tools.
function resumedSession(agent, state) {
  return agent.createSession({
    id: state.sessionId,
    state: {
      messages: Array.isArray(state.transcript) ? state.transcript : [],
      toolNames: Array.isArray(state.toolNames) ? state.toolNames : undefined,
      activatedToolNames: Array.isArray(state.activatedToolNames) ? state.activatedToolNames : [],
    },
  })
}

const PASSED_RUN_OPTIONS = ['signal', 'effectStore', 'identity', 'runLedger', 'metadata', 'redactor', 'validate', 'providerSource']

function resumedRunOptions(prepared, options) {
  const out = {}
  for (const k of PASSED_RUN_OPTIONS) if (options[k] !== undefined) out[k] = options[k]
  if (prepared.resumed.ownership !== undefined) out.ownership = prepared.resumed.ownership
  out.runState = prepared.resumed.runState
  out[RESUME] = prepared.resumed
  return out
}

/** `resumeAgentRun(agent, { runId, sessionId }, { decision | decisions, expectedVersion }, options)`. */
async function resumeAgentRun(agent, ref, resume, options) {
  const prepared = await prepareResume(agent, ref, resume, options, 'resumeAgentRun')
  if (prepared.done) return prepared.done
  return resumedSession(agent, prepared.state).run(undefined, resumedRunOptions(prepared, options))
}

/** The same resume as an event stream (`session.stream`'s events; a partial batch or a deny yields one event). */
async function* resumeAgentRunStream(agent, ref, resume, options) {
  const prepared = await prepareResume(agent, ref, resume, options, 'resumeAgentRunStream')
  if (prepared.done) {
    const d = prepared.done
    yield d.status === 'denied'
      ? { type: 'agent_denied', sessionId: d.sessionId, runId: d.runId, interruption: d.interruption, version: d.runState.version }
      : { type: 'agent_suspended', sessionId: d.sessionId, runId: d.runId, interruption: d.interruption, version: d.runState.version }
    return
  }
  const runOptions = resumedRunOptions(prepared, options)
  if (options.maxQueuedEvents !== undefined) runOptions.maxQueuedEvents = options.maxQueuedEvents
  if (options.overflow !== undefined) runOptions.overflow = options.overflow
  yield* resumedSession(agent, prepared.state).stream(undefined, runOptions)
}

/**
 * Replays the decided calls of a resumed run into its transcript, in recorded order: an approved
 * call is dispatched (with its modified arguments), a rejected one gets the blocked result with
 * the decision's reason. The next provider request carries them.
 */
async function replayDecided(resumed, { dispatcher, transcript, toolMessage, context, errorInfo }) {
  let failure
  for (const entry of resumed.entries) {
    const call = entry.call
    const d = entry.decision
    if (!call || !d) continue
    if (d.outcome === 'reject_once' || d.outcome === 'reject_for_run') {
      transcript.push(toolMessage({ toolCallId: call.id, name: call.name, error: { name: 'ToolApprovalRejected', code: 'approval_rejected', message: d.reason ?? 'Approval rejected' } }))
      continue
    }
    const approved = d.modifiedArguments !== undefined ? { ...call, arguments: d.modifiedArguments } : call
    let result
    if (failure === undefined && !context.signal.aborted) {
      try {
        result = await dispatcher.dispatch(approved, context)
      } catch (err) {
        failure = err
        result = { toolCallId: call.id, name: call.name, error: errorInfo(err) }
      }
    } else {
      result = { toolCallId: call.id, name: call.name, error: { name: 'ToolCallNotDispatchedError', code: 'tool_call_not_dispatched', message: `Tool call ${call.name} was not dispatched` } }
    }
    transcript.push(toolMessage(result))
  }
  if (failure !== undefined) throw failure
}

module.exports = {
  RESUME,
  AGENT_RUN_STATE_NAMESPACE,
  APPROVAL_LIMITS: Object.freeze(Object.fromEntries(Object.entries(LIMITS).filter(([k]) => k !== 'NOT_JSON'))),
  AgentDecisionError,
  AgentRunStateError,
  CheckpointConflictError,
  CHECKPOINT_CONFLICT_CODE,
  createMemoryCheckpointStore,
  createSqliteCheckpointStore,
  durableRunId,
  beginDurableRun,
  replayDecided,
  resumeAgentRun,
  resumeAgentRunStream,
  agentFingerprint: (agent, definitionRevision) => fingerprintOf(agent.config, definitionRevision),
  publicState,
}
