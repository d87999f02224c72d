'use strict'
// One run of an agent session, from its options to its result: everything that can refuse the run
// does so before the first provider turn; then the run's state (`r`, read by the loop's other
// files) is built, the turns run (lib/agent-turn-loop.js), and the end — a RunEnd thrown from any
// depth — becomes the result, the terminal events and the ledger's terminal row.
const native = require('../binding.js')
const { AgentRunError } = require('./errors.js')
const { checkRunOptions, unsupportedOption } = require('./agent-options.js')
const { resolveRunLimits, RunLimitTracker, RunLimitError, buffersOutput } = require('./run-limits.js')
const { resolveRetry } = require('./retry.js')
const approval = require('./approval.js')
const { createRunLedgerWriter } = require('./agent-ledger.js')
const { registerRedactorSecrets } = require('./stream-redaction.js')
const { RunEnd, decode, json, limitsJson, toolList, textOf, inputMessages, createUsageTotal, mergeGuardrails } = require('./agent-values.js')
const { wakeOnAbort } = require('./agent-provider-turn.js')
const { turnLoop } = require('./agent-turn-loop.js')
const { isLoopStrategy, loopStrategyOf, refuseDurableStrategy, runLoopStrategy } = require('./agent-loop.js')

// A run's grant and loop limits are native decisions over the agent's tool names and loop options.
// Runs of one agent that ask for no tool names, resume nothing and lay no loop options of their own
// get the same answers, so the last answer per agent config is kept (frozen: runs share it) while
// the names, and the budget's maxToolRounds, are the same.
const grantMemo = new WeakMap() // config -> { joined, grant }
const limitsMemo = new WeakMap() // config -> { loop (a copy of its own values), maxToolRounds, limits }

function resolveGrant(config, names, requested, resumeGrant) {
  const joined = names.join('\0')
  const plain = requested === undefined && resumeGrant === undefined
  if (plain) {
    const seen = grantMemo.get(config)
    if (seen !== undefined && seen.joined === joined) return seen.grant
  }
  const grant = decode(native.runResolveGrant(joined, names.length, requested, resumeGrant === undefined ? undefined : JSON.stringify(resumeGrant)))
  if (plain) {
    deepFreeze(grant)
    grantMemo.set(config, { joined, grant })
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
 * Runs `input` on `session` (the session's internals, lib/agent.js). `api` is the package's
 * functions the loop calls (dispatcher, registry, redaction, search).
 */
async function runAgent(api, session, input, options, runId) {
  const { errorToErrorInfo, createSecretRedactor, redactWith } = api
  const config = session.config
  const sessionId = session.id
  checkRunOptions(options)
  // The run budget (lib/run-limits.js): the agent's limits, narrowed by the run's, defaults for the rest.
  const budget = resolveRunLimits(config.limits, options.limits)
  const pick = (key) => (options[key] !== undefined ? options[key] : config[key])

  // Everything that can refuse the run does so before the first provider turn.
  const registered = toolList(config.tools)
  const names = registered.map((t) => String(t.name))
  const requested = options.toolNames === undefined ? undefined : json(options.toolNames)
  const resumeGrant = session.resumeGrant
  const grant = resolveGrant(config, names, requested, resumeGrant)
  // A custom strategy (`loop: { name, run }`, the run's over the agent's) replaces the built-in
  // loop (lib/agent-loop.js); otherwise the run's loop options are laid over the agent's.
  const strategy = loopStrategyOf(config, options)
  const loop = strategy !== undefined ? {} : { ...(isLoopStrategy(config.loop) ? undefined : config.loop), ...options.loop }
  const limits = resolveLoopLimits(config, options, budget, loop)
  const disclosure = pick('toolsDisclosure') ?? 'all'
  if (disclosure !== 'all' && disclosure !== 'search') {
    throw Object.assign(new TypeError('toolsDisclosure must be "all" or "search"'), { code: 'invalid_tools_disclosure' })
  }
  if (options.providerSource !== undefined && typeof options.providerSource !== 'function') {
    throw new TypeError('session.run: providerSource must be a function (model) => AIProvider | undefined')
  }
  const resumed = options[approval.RESUME] // a resumed durable run (lib/approval.js)
  const messagesIn = resumed ? [] : inputMessages(input)
  const retry = resolveRetry(config.retry, options.retry) // lib/retry.js: turns that failed unobserved
  if (strategy !== undefined) {
    const runState = options.runState !== undefined ? options.runState : config.runState
    const durableRun = (runState !== undefined && runState !== null && runState !== false) || options[approval.RESUME] !== undefined
    refuseDurableStrategy(strategy, options, durableRun, { AgentRunStateError: approval.AgentRunStateError, unsupportedOption })
  }
  const durable = approval.beginDurableRun({ config, options, sessionId, runId, tools: grant.indices.map((i) => registered[i]) })

  if (session.active) {
    const error = new Error('Agent session already has an active run')
    session.emit({ type: 'error', sessionId, runId, error: errorToErrorInfo(error) })
    throw error
  }
  const controller = new AbortController()
  session.active = controller
  session.currentRunId = runId
  const secrets = Array.isArray(config.secrets) ? config.secrets : undefined
  const redactor = options.redactor ?? config.redactor ?? (secrets && secrets.some(Boolean) ? registerRedactorSecrets(createSecretRedactor(secrets), secrets) : undefined)
  session.activeRedactor = redactor
  const model = options.model ?? config.model
  // Run-level ledger rows (lib/agent-ledger.js): only a run with a ledger builds the writer.
  const ledgerTarget = options.runLedger ?? config.runLedger
  const ledger = ledgerTarget !== null && typeof ledgerTarget === 'object'
    ? createRunLedgerWriter(ledgerTarget, { sessionId, runId, model, redactor, redactWith, ownership: options.ownership ?? config.ownership, identity: options.identity ?? config.identity, signal: controller.signal })
    : undefined
  session.activeLedger = ledger
  let ended // { status, error } of the run, for its terminal ledger row
  const onAbort = () => controller.abort(options.signal.reason)
  if (options.signal) {
    if (options.signal.aborted) controller.abort(options.signal.reason)
    else options.signal.addEventListener('abort', onAbort, { once: true })
  }
  const signal = controller.signal
  const waker = { wake: undefined } // the provider step in flight, woken by an abort
  wakeOnAbort(signal, waker)
  // A breach is reported once (`run_limit_exceeded`) and aborts the run with RunLimitError; the run
  // then fails with `result.limit`. A resumed run goes on from the turns and rounds it had used.
  const tracker = new RunLimitTracker(budget, {
    onExceeded(breach) {
      session.emit({ type: 'run_limit_exceeded', sessionId, runId, breach })
      controller.abort(new RunLimitError(breach))
    },
    snapshot: resumed ? { turns: resumed.counters.turns, toolRounds: resumed.counters.rounds } : undefined,
  })

  // The run: what the loop's files read and update.
  const r = {
    api,
    session,
    config,
    options,
    pick,
    sessionId,
    runId,
    signal,
    waker,
    emit: session.emit,
    emitRedacted: session.emitRedacted,
    observed: session.observed,
    transcript: session.transcript,
    grant,
    registered,
    disclosure,
    limits,
    tracker,
    // A token or cost budget set by the host holds a turn's output events until its usage is counted.
    bufferOutput: buffersOutput(config.limits, options.limits),
    artifactLoop: limits.strategy === 'generate-validate-revise',
    loop: {
      parser: typeof loop.parser === 'function' ? loop.parser : undefined,
      validator: typeof loop.validator === 'function' ? loop.validator : undefined,
      repairer: typeof loop.repairer === 'function' ? loop.repairer : undefined,
    },
    retry,
    durable,
    resumed,
    secrets,
    redactor,
    model,
    ledger,
    guardrails: mergeGuardrails(config.guardrails, options.guardrails),
    metadata: { ...config.metadata, ...session.metadata, ...options.metadata },
    usageTotal: createUsageTotal(),
    snapshotOf: session.snapshotOf,
    registry: undefined,
    searchTool: undefined,
    lastAssistant: undefined,
    loopOwnsTurns: false, // a custom loop strategy keeps messages and turn events itself (lib/agent-loop.js)
    loopUsage: undefined, // what a custom strategy's run answered, when no provider turn counted usage
    rounds: 0,
    revisions: 0,
    attempts: 0,
    turns: 0,
    errorInfo(err) {
      const info = errorToErrorInfo(err, secrets)
      return redactor ? redactWith(info, redactor) : info
    },
    abortError: () => errorToErrorInfo(signal.reason instanceof Error ? signal.reason : Object.assign(new Error(signal.reason === undefined ? 'Agent run aborted' : String(signal.reason)), { name: 'AbortError' })),
    // Success: `agent_finished`, then the result. Failure or abort: an `error` event, and the run
    // rejects with AgentRunError carrying the result.
    finish(status, finishReason, error, extra) {
      throw new RunEnd(status, finishReason, error, extra)
    },
  }
  const buildResult = (status, finishReason, error, extra) => {
    const content = r.lastAssistant ? r.lastAssistant.content : []
    const result = { sessionId, runId, status, text: textOf(content), content, message: r.lastAssistant, usage: r.usageTotal.value() ?? r.loopUsage, finishReason, error }
    if (status === 'failed' && tracker.breach !== undefined) result.limit = tracker.breach
    if (status === 'aborted') result.abortReason = String(signal.reason)
    if (r.artifactLoop) Object.assign(result, { revisions: r.revisions, toolRounds: r.rounds }, extra)
    return result
  }
  const emit = session.emit

  try {
    try {
      const provider = config.provider ?? (options.providerSource ? options.providerSource(model) : undefined) ?? (config.providerSource ? config.providerSource(model) : undefined)
      if (!provider || typeof provider.generate !== 'function') throw new Error(`Unknown provider: ${model?.provider}`)
      if (signal.aborted) r.finish('aborted', 'aborted', r.abortError())
      const startRow = ledger !== undefined ? ledger.start() : undefined // queued before agent_started's row
      emit({ type: 'agent_started', sessionId, runId })
      if (startRow !== undefined) await startRow
      const history = strategy !== undefined ? r.transcript.slice() : undefined // before this run's input
      const kept = messagesIn.map((m) => (redactor ? redactWith(m, redactor) : m))
      for (const m of kept) r.transcript.push(m)
      const inputText = textOf(messagesIn.flatMap((m) => (Array.isArray(m.content) ? m.content : [])))
      // The loop answers how a succeeded run ended (thrown ends are failures and artifact results).
      if (strategy !== undefined) throw await runLoopStrategy(r, provider, strategy, { input, inputMessages: kept, history, inputText })
      throw await turnLoop(r, provider, inputText)
    } catch (err) {
      if (err instanceof RunEnd) throw err
      if (signal.aborted) r.finish('aborted', 'aborted', r.abortError())
      r.finish('failed', 'error', r.errorInfo(err))
    }
  } catch (caught) {
    if (!(caught instanceof RunEnd)) throw caught
    let end = caught
    if (ledger !== undefined && end.status === 'succeeded') {
      // The aggregate usage row, then every queued row: a failed append fails the run.
      try {
        await ledger.total(r.usageTotal.value())
      } catch (err) {
        end = signal.aborted ? new RunEnd('aborted', 'aborted', r.abortError()) : new RunEnd('failed', 'error', r.errorInfo(err))
      }
    }
    // A run a limit stopped fails (its abort was the breach's), as upstream's does.
    if (end.status === 'aborted' && tracker.breach !== undefined) end = new RunEnd('failed', 'error', end.error, end.extra)
    const result = buildResult(end.status, end.finishReason, end.error, end.extra)
    if (end.status === 'suspended') {
      Object.assign(result, end.extra)
      emit({ type: 'agent_suspended', sessionId, runId, interruption: result.interruption, version: result.runState.version })
      ended = { status: 'suspended' }
      return result
    }
    if (durable) await durable.finish(end.status)
    if (end.status === 'succeeded') {
      const finished = { type: 'agent_finished', sessionId, runId, usage: result.usage }
      if (end.finishReason !== 'stop') finished.finishReason = end.finishReason
      emit(finished)
      ended = { status: 'succeeded' }
      return result
    }
    emit({ type: 'error', sessionId, runId, error: result.error })
    ended = { status: end.status, error: result.error }
    throw new AgentRunError(result, { cause: end.error })
  } finally {
    try {
      // The terminal row after the run's queued rows. A failed append here rejects the run
      // with the ledger's error, as upstream's does; the caller's signal still ends the wait.
      if (ledger !== undefined) {
        await ledger.finish(ended === undefined ? 'failed' : ended.status, {
          abortReason: signal.aborted ? String(signal.reason) : undefined,
          error: ended?.error,
        })
      }
    } finally {
      tracker.dispose()
      if (options.signal) options.signal.removeEventListener('abort', onAbort)
      if (session.active === controller) {
        session.active = undefined
        session.currentRunId = undefined
        session.activeRedactor = undefined
        session.activeLedger = undefined
      }
      session.closeSubscribers()
    }
  }
}

module.exports = { runAgent }
