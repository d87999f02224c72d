'use strict'
// One run of an agent session, from its options to its result: `openRun` refuses what must be
// refused before the first provider turn and builds the run's state (a `Run`, `r` in the loop's
// other files); the turns run (lib/agent-turn-loop.js); and the end — a RunEnd thrown from any
// depth — becomes the result, the terminal events and the ledger's terminal row. A run parked on
// a provider or a tool is ten thousand times over in a busy host, so its state is one object with
// methods and its async frames are kept small (setup and ending are plain functions).
const native = require('../binding.js')
const { sameItems } = require('./registry.js')
const { AgentRunError } = require('./errors.js')
const { checkRunOptions, unsupportedOption } = require('./agent-options.js')
const { resolveRunLimits, RunLimitTracker, RunLimitError, buffersOutput } = require('./run-limits.js')
const { resolveRetry } = require('./retry.js')
const { RESULT_REDACTOR } = require('./output-budget.js')
const approval = require('./approval.js')
const { createRunLedgerWriter } = require('./agent-ledger.js')
const { registerRedactorSecrets } = require('./stream-redaction.js')
const { RunEnd, decode, json, limitsJson, toolList, textOf, inputMessages, UsageTotal, mergeGuardrails } = require('./agent-values.js')
const { AbortWaker } = require('./agent-provider-turn.js')
const { turnLoop } = require('./agent-turn-loop.js')
const { isLoopStrategy, loopStrategyOf, refuseDurableStrategy, runLoopStrategy } = require('./agent-loop.js')

// A run's grant and loop limits are native decisions over the agent's tool names and loop options.
// Runs of one agent that ask for no tool names, resume nothing and lay no loop options of their own
// get the same answers, so the last answer per agent config is kept (frozen: runs share it) while
// the names, and the budget's maxToolRounds, are the same.
const NO_OPTIONS = Object.freeze({})
const grantMemo = new WeakMap() // config -> { names (a copy), grant }
const limitsMemo = new WeakMap() // config -> { loop (a copy of its own values), maxToolRounds, limits }

// The agent's tool list and their names, kept per config while `config.tools` is an array holding
// the same tool objects under the same names (read again item by item at every run, so a list or
// a tool changed in place is seen): a run made a copy of both.
const toolsMemo = new WeakMap() // config -> { registered, names }

function toolsOf(config) {
  const tools = config.tools
  if (!Array.isArray(tools)) {
    const registered = toolList(tools)
    return { registered, names: registered.map((t) => String(t.name)) }
  }
  const kept = toolsMemo.get(config)
  if (kept !== undefined && sameTools(tools, kept)) return kept
  const registered = toolList(tools)
  const fresh = { registered, names: registered.map((t) => String(t.name)) }
  toolsMemo.set(config, fresh)
  return fresh
}

function sameTools(tools, { registered, names }) {
  let j = 0
  for (let i = 0; i < tools.length; i++) {
    const t = tools[i]
    if (t === null || typeof t !== 'object') continue
    if (j >= registered.length || registered[j] !== t || String(t.name) !== names[j]) return false
    j++
  }
  return j === registered.length
}

function resolveGrant(config, names, requested, resumeGrant) {
  const plain = requested === undefined && resumeGrant === undefined
  if (plain) {
    const seen = grantMemo.get(config)
    if (seen !== undefined && sameItems(seen.names, names)) return seen.grant
  }
  const grant = decode(native.runResolveGrant(names, requested, resumeGrant === undefined ? undefined : JSON.stringify(resumeGrant)))
  if (plain) {
    deepFreeze(grant)
    grantMemo.set(config, { names: names.slice(), grant })
  }
  return grant
}

function resolveLoopLimits(config, options, budget, loop) {
  const plain = options.loop === undefined
  if (plain) {
    const seen = limitsMemo.get(config)
    if (seen !== undefined && seen.maxToolRounds === budget.maxToolRounds && sameOwnValues(seen.loop, loop)) return seen.limits
  }
  const limits = decode(
    native.runResolveLimits(limitsJson({ maxToolRounds: budget.maxToolRounds }), limitsJson({ ...loop, parser: typeof loop.parser, validator: typeof loop.validator, repairer: typeof loop.repairer })),
  )
  if (plain) {
    deepFreeze(limits)
    limitsMemo.set(config, { loop: { ...loop }, maxToolRounds: budget.maxToolRounds, limits })
  }
  return limits
}

// Whether two loop-option objects hold the same own enumerable keys with the same values, so
// loop options changed in place between runs are read again.
function sameOwnValues(a, b) {
  const keys = Object.keys(b)
  if (Object.keys(a).length !== keys.length) return false
  for (const key of keys) if (!Object.hasOwn(a, key) || a[key] !== b[key]) return false
  return true
}

function deepFreeze(value) {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const key of Object.keys(value)) deepFreeze(value[key])
  }
  return value
}

/**
 * The redaction a tool result passes before anything cuts it (its output budget), as dispatch
 * applies it: the run's secrets, then its redactor. Tools see it under `RESULT_REDACTOR` in their
 * context (lib/output-budget.js); undefined when the run redacts nothing.
 */
function resultRedact(api, secretRedactor, redactor) {
  const host = redactor !== secretRedactor ? redactor : undefined
  if (secretRedactor === undefined && host === undefined) return undefined
  const redact = (value) => {
    let out = value
    if (secretRedactor !== undefined) out = api.redactWith(out, secretRedactor)
    if (host !== undefined) out = api.redactWith(out, host)
    return out
  }
  return redact
}

/**
 * One run's state: what the loop's files read and update (`r` there). Its helpers are methods, so
 * a run parked on a provider or a tool holds one object, not a closure per helper.
 */
class Run {
  constructor(api, session, options, runId) {
    this.api = api
    this.session = session
    this.config = session.config
    this.options = options
    this.sessionId = session.id
    this.runId = runId
    this.transcript = session.transcript
    this.snapshotOf = session.snapshotOf
    this.signal = undefined
    this.waker = new AbortWaker() // the provider step in flight, woken by `abort`
    this.grant = undefined
    this.registered = undefined
    this.disclosure = undefined
    this.limits = undefined
    this.tracker = undefined
    this.bufferOutput = false
    this.artifactLoop = false
    this.loop = undefined
    this.retry = undefined
    this.durable = undefined
    this.resumed = undefined
    this.secrets = undefined
    this.redactor = undefined
    this.resultRedact = undefined // the result redaction of lib/output-budget.js, when the run redacts
    this.model = undefined
    this.ledger = undefined
    this.guardrails = undefined
    this.metadata = undefined
    this.usageTotal = new UsageTotal()
    this.registry = undefined
    this.searchTool = undefined
    this.provider = undefined // what the run's turns go to: its tool cap and tool search shape them
    this.lastAssistant = undefined
    this.loopOwnsTurns = false // a custom loop strategy keeps messages and turn events itself (lib/agent-loop.js)
    this.loopUsage = undefined // what a custom strategy's run answered, when no provider turn counted usage
    this.revisions = 0
    this.attempts = 0
    this.turns = 0
    // Kept for the run's driver (runAgent), not read by the loop's files.
    this.controller = undefined
    this.input = undefined
    this.messagesIn = undefined
    this.strategy = undefined
    this.onAbort = undefined // the listener on the caller's signal, when there is one
    this.ended = undefined // { status, error } of the run, for its terminal ledger row
  }

  /** An event to the session's subscribers and the run's ledger (lib/agent.js). */
  emit(event) {
    this.session.emit(event)
  }

  /** An event the dispatcher already redacted. */
  emitRedacted(event) {
    this.session.emitRedacted(event)
  }

  /** Whether an event would go anywhere: an event nobody observes is never built. */
  observed() {
    return this.session.observed()
  }

  /** Tool rounds the run has used: the run machine's count (lib/run-limits.js). */
  get rounds() {
    return this.tracker.rounds
  }

  /** The context the run's calls are dispatched with (their tools' `ctx`). */
  dispatchContext() {
    const context = { sessionId: this.sessionId, runId: this.runId, signal: this.signal, metadata: this.metadata }
    if (this.resultRedact !== undefined) context[RESULT_REDACTOR] = this.resultRedact
    return context
  }

  /** The run's option `key`, else the agent's. */
  pick(key) {
    const value = this.options[key]
    return value !== undefined ? value : this.config[key]
  }

  errorInfo(err) {
    const info = this.api.errorToErrorInfo(err, this.secrets)
    return this.redactor ? this.api.redactWith(info, this.redactor) : info
  }

  abortError() {
    const reason = this.signal.reason
    return this.api.errorToErrorInfo(reason instanceof Error ? reason : Object.assign(new Error(reason === undefined ? 'Agent run aborted' : String(reason)), { name: 'AbortError' }))
  }

  // Success: `agent_finished`, then the result. Failure or abort: an `error` event, and the run
  // rejects with AgentRunError carrying the result.
  finish(status, finishReason, error, extra) {
    throw new RunEnd(status, finishReason, error, extra)
  }

  /** How a throw ends the run: aborted when the run's signal is, else failed with its ErrorInfo. */
  endFor(err) {
    return this.signal.aborted ? new RunEnd('aborted', 'aborted', this.abortError()) : new RunEnd('failed', 'error', this.errorInfo(err))
  }

  /** Takes back the run's wall-time timer and its listener on the caller's signal. */
  detach() {
    if (this.tracker !== undefined) this.tracker.dispose()
    if (this.onAbort !== undefined) this.options.signal.removeEventListener('abort', this.onAbort)
  }

  /** The run's first limit breach: reported once, then the run aborts with RunLimitError. */
  onExceeded(breach) {
    this.emit({ type: 'run_limit_exceeded', sessionId: this.sessionId, runId: this.runId, breach })
    this.abort(new RunLimitError(breach))
  }

  /**
   * Aborts the run (`session.abort()`, the caller's signal, a breach): its signal, then the provider
   * step in flight. Every abort of the run's controller comes through here, so the run needs no
   * listener of its own on its signal.
   */
  abort(reason) {
    this.controller.abort(reason)
    this.waker.handleEvent()
  }

  result(status, finishReason, error, extra) {
    const content = this.lastAssistant ? this.lastAssistant.content : []
    const result = { sessionId: this.sessionId, runId: this.runId, status, text: textOf(content), content, message: this.lastAssistant, usage: this.usageTotal.value() ?? this.loopUsage, finishReason, error }
    if (status === 'failed' && this.tracker.breach !== undefined) result.limit = this.tracker.breach
    if (status === 'aborted') result.abortReason = String(this.signal.reason)
    if (this.artifactLoop) Object.assign(result, { revisions: this.revisions, toolRounds: this.rounds }, extra)
    return result
  }
}

/**
 * Opens a run of `input` on `session` (the session's internals, lib/agent.js): everything that can
 * refuse the run does so here, before the first provider turn. `api` is the package's functions
 * the loop calls (dispatcher, registry, redaction, search).
 */
function openRun(api, session, input, options, runId) {
  const { errorToErrorInfo, createSecretRedactor } = api
  const config = session.config
  const sessionId = session.id
  checkRunOptions(options)
  const r = new Run(api, session, options, runId)
  // The run budget (lib/run-limits.js): the agent's limits, narrowed by the run's, defaults for the rest.
  const budget = resolveRunLimits(config.limits, options.limits)

  const { registered, names } = toolsOf(config)
  const requested = options.toolNames === undefined ? undefined : json(options.toolNames)
  const grant = resolveGrant(config, names, requested, session.resumeGrant)
  // A custom strategy (`loop: { name, run }`, the run's over the agent's) replaces the built-in
  // loop (lib/agent-loop.js); otherwise the run's loop options are laid over the agent's.
  const strategy = loopStrategyOf(config, options)
  const loop = strategy !== undefined ? {} : { ...(isLoopStrategy(config.loop) ? undefined : config.loop), ...options.loop }
  const limits = resolveLoopLimits(config, options, budget, loop)
  const disclosure = r.pick('toolsDisclosure') ?? 'all'
  if (disclosure !== 'all' && disclosure !== 'search') {
    throw Object.assign(new TypeError('toolsDisclosure must be "all" or "search"'), { code: 'invalid_tools_disclosure' })
  }
  if (options.providerSource !== undefined && typeof options.providerSource !== 'function') {
    throw new TypeError('session.run: providerSource must be a function (model) => AIProvider | undefined')
  }
  const resumed = options[approval.RESUME] // a resumed durable run (lib/approval.js)
  r.input = input
  r.messagesIn = resumed ? [] : inputMessages(input)
  r.retry = resolveRetry(config.retry, options.retry) // lib/retry.js: turns that failed unobserved
  if (strategy !== undefined) {
    const runState = options.runState !== undefined ? options.runState : config.runState
    const durableRun = (runState !== undefined && runState !== null && runState !== false) || options[approval.RESUME] !== undefined
    refuseDurableStrategy(strategy, options, durableRun, { AgentRunStateError: approval.AgentRunStateError, unsupportedOption })
  }
  r.strategy = strategy
  r.durable = approval.beginDurableRun({ config, options, sessionId, runId, tools: grant.indices.map((i) => registered[i]) })

  r.grant = grant
  r.registered = registered
  r.disclosure = disclosure
  r.limits = limits
  // A token or cost budget set by the host holds a turn's output events until its usage is counted.
  r.bufferOutput = buffersOutput(config.limits, options.limits)
  r.artifactLoop = limits.strategy === 'generate-validate-revise'
  r.loop = {
    parser: typeof loop.parser === 'function' ? loop.parser : undefined,
    validator: typeof loop.validator === 'function' ? loop.validator : undefined,
    repairer: typeof loop.repairer === 'function' ? loop.repairer : undefined,
  }
  r.resumed = resumed

  if (session.active) {
    const error = new Error('Agent session already has an active run')
    session.emit({ type: 'error', sessionId, runId, error: errorToErrorInfo(error) })
    throw error
  }
  // What follows may still refuse the run (a redactor, a ledger or guardrails that cannot be used, a
  // getter that throws): the run takes the session only once nothing is left to refuse it, and a
  // refusal undoes what was set up, so a refused run never leaves its session busy.
  const controller = new AbortController()
  r.controller = controller
  const signal = controller.signal
  r.signal = signal
  try {
    const secrets = Array.isArray(config.secrets) ? config.secrets : undefined
    r.secrets = secrets
    const secretRedactor = secrets && secrets.some(Boolean) ? registerRedactorSecrets(createSecretRedactor(secrets), secrets) : undefined
    r.redactor = options.redactor ?? config.redactor ?? secretRedactor
    r.resultRedact = resultRedact(api, secretRedactor, r.redactor)
    r.model = options.model ?? config.model
    // Run-level ledger rows (lib/agent-ledger.js): only a run with a ledger builds the writer.
    const ledgerTarget = options.runLedger ?? config.runLedger
    r.ledger = ledgerTarget !== null && typeof ledgerTarget === 'object'
      ? createRunLedgerWriter(ledgerTarget, { sessionId, runId, model: r.model, redactor: r.redactor, redactWith: api.redactWith, ownership: options.ownership ?? config.ownership, identity: options.identity ?? config.identity, signal })
      : undefined
    r.guardrails = mergeGuardrails(config.guardrails, options.guardrails)
    r.metadata = { ...config.metadata, ...session.metadata, ...options.metadata }
    // A breach is reported once (`run_limit_exceeded`) and aborts the run with RunLimitError; the run
    // then fails with `result.limit`. A resumed run goes on with the budget its checkpoint saved:
    // every counter and the wall-time deadline.
    const toolChoice = r.pick('toolChoice')
    r.tracker = new RunLimitTracker(budget, resumed ? { snapshot: resumed.counters, deadlineAt: resumed.deadlineAt, toolChoice } : toolChoice === undefined ? NO_OPTIONS : { toolChoice }, r)
    if (options.signal) {
      if (options.signal.aborted) controller.abort(options.signal.reason)
      else {
        r.onAbort = () => r.abort(options.signal.reason)
        options.signal.addEventListener('abort', r.onAbort, { once: true })
      }
    }
  } catch (err) {
    r.detach()
    throw err
  }
  session.active = r
  session.currentRunId = runId
  session.activeRedactor = r.redactor
  session.activeLedger = r.ledger
  return r
}

/** The run's provider: the agent's, else the run's or the agent's `providerSource` for its model. */
function providerOf(r) {
  const { config, options, model } = r
  const provider = config.provider ?? (options.providerSource ? options.providerSource(model) : undefined) ?? (config.providerSource ? config.providerSource(model) : undefined)
  if (!provider || typeof provider.generate !== 'function') throw new Error(`Unknown provider: ${model?.provider}`)
  return provider
}

// The run's input messages join the transcript (redacted when the run has a redactor). A custom
// strategy also gets the history before them.
function admitInput(r) {
  const { redactor, messagesIn } = r
  const history = r.strategy !== undefined ? r.transcript.slice() : undefined
  const kept = messagesIn.map((m) => (redactor ? r.api.redactWith(m, redactor) : m))
  for (const m of kept) r.transcript.push(m)
  const inputText = textOf(messagesIn.flatMap((m) => (Array.isArray(m.content) ? m.content : [])))
  return { input: r.input, inputMessages: kept, history, inputText }
}

// How a run that did not suspend ends: `agent_finished` and the result, or an `error` event and
// AgentRunError carrying the result.
function settle(r, end, result) {
  const { sessionId, runId } = r
  if (end.status === 'succeeded') {
    if (r.observed()) {
      const finished = { type: 'agent_finished', sessionId, runId, usage: result.usage }
      if (end.finishReason !== 'stop') finished.finishReason = end.finishReason
      r.emit(finished)
    }
    r.ended = { status: 'succeeded' }
    return result
  }
  r.emit({ type: 'error', sessionId, runId, error: result.error })
  r.ended = { status: end.status, error: result.error }
  throw new AgentRunError(result, { cause: end.error })
}

// The session is free for its next run once this run's listeners, timer and subscribers are gone.
function closeRun(r) {
  const session = r.session
  r.detach()
  if (session.active === r) {
    session.active = undefined
    session.currentRunId = undefined
    session.activeRedactor = undefined
    session.activeLedger = undefined
  }
  session.closeSubscribers()
}

/**
 * Runs `input` on `session`: opens the run, runs its turns, and turns its end (a RunEnd answered by
 * the loop or thrown from any depth) into the result, the terminal events and the ledger's rows.
 */
async function runAgent(api, session, input, options, runId) {
  const r = openRun(api, session, input, options, runId)
  const { ledger, signal } = r
  try {
    let end
    try {
      const provider = providerOf(r)
      r.provider = provider
      if (signal.aborted) r.finish('aborted', 'aborted', r.abortError())
      const startRow = ledger !== undefined ? ledger.start() : undefined // queued before agent_started's row
      if (r.observed()) r.emit({ type: 'agent_started', sessionId: r.sessionId, runId: r.runId })
      if (startRow !== undefined) await startRow
      const admitted = admitInput(r)
      // The loop answers how a succeeded run ended (thrown ends are failures and artifact results).
      end = r.strategy !== undefined ? await runLoopStrategy(r, provider, r.strategy, admitted) : await turnLoop(r, provider, admitted.inputText)
    } catch (err) {
      end = err instanceof RunEnd ? err : r.endFor(err)
    }
    if (ledger !== undefined && end.status === 'succeeded') {
      // The aggregate usage row, then every queued row: a failed append fails the run.
      try {
        await ledger.total(r.usageTotal.value())
      } catch (err) {
        end = r.endFor(err)
      }
    }
    // A run a limit stopped fails (its abort was the breach's), as upstream's does.
    if (end.status === 'aborted' && r.tracker.endStatus(end.status) === 'failed') end = new RunEnd('failed', 'error', end.error, end.extra)
    const result = r.result(end.status, end.finishReason, end.error, end.extra)
    if (end.status === 'suspended') {
      Object.assign(result, end.extra)
      r.emit({ type: 'agent_suspended', sessionId: r.sessionId, runId: r.runId, interruption: result.interruption, version: result.runState.version })
      r.ended = { status: 'suspended' }
      return result
    }
    if (r.durable) await r.durable.finish(end.status)
    return settle(r, end, result)
  } finally {
    try {
      // The terminal row after the run's queued rows. A failed append here rejects the run
      // with the ledger's error, as upstream's does; the caller's signal still ends the wait.
      if (ledger !== undefined) {
        const ended = r.ended
        await ledger.finish(ended === undefined ? 'failed' : ended.status, {
          abortReason: signal.aborted ? String(signal.reason) : undefined,
          error: ended?.error,
        })
      }
    } finally {
      closeRun(r)
    }
  }
}

module.exports = { runAgent }
