'use strict'
// Custom loop strategies, as `@arnilo/prism` has them: `loop: { name, run(ctx) }` on
// `createAgent` or `session.run` (the run's wins) replaces the built-in turn loop. The strategy
// orchestrates turns; the run keeps everything else: `ctx.assemble` builds the request (the run's
// tools, narrowing and disclosure, the folded history, the redactor) and charges a turn,
// `ctx.generate` runs one provider turn (retries, run limits, held output, usage, ledger rows),
// `ctx.dispatchToolCall` dispatches through the run's dispatcher (validation, guardrails, policy,
// effects, output budgets) and charges a tool call, `ctx.chargeToolRound` charges a round,
// `ctx.appendMessage` keeps a message in the session (redacted), `ctx.emit` sends an event.
//
// What ends the run reaches the strategy as an Error thrown from the ctx method: a breach
// (RunLimitError), an abort (its reason), a provider failure (its message and code). A breach or an
// abort ends the run even when the strategy catches it; a provider failure it catches is its own to
// handle (it may generate again). A strategy's own throw fails the run with that error.
// Durable runs (`runState`) do not take a custom strategy: without snapshot/restore hooks that is
// upstream's `AgentLoopStateError` (`ERR_PRISM_LOOP_NOT_DURABLE`), with them it is refused as
// unsupported.
const { RunEnd, inputMessages, toolMessage } = require('./agent-values.js')
const { RunLimitError } = require('./run-limits.js')
const { retryProviderTurn } = require('./retry.js')
const { providerTurn } = require('./agent-provider-turn.js')
const { prepareTurns, selectTools, buildRequest, redactRequest } = require('./agent-assemble.js')
const { foldToolResults } = require('./tool-result-fold.js')
const { blockedByChoice } = require('./agent-tool-batch.js')

/** A durable run and its loop strategy do not fit (upstream's codes). */
class AgentLoopStateError extends Error {
  constructor(code, message, options) {
    super(message, options)
    this.name = 'AgentLoopStateError'
    this.code = code
  }
}

/** Whether `loop` is a strategy object (`{ name, run }`), not `{ strategy: ... }` options. */
function isLoopStrategy(loop) {
  return loop !== null && typeof loop === 'object' && !('strategy' in loop) && ('run' in loop || 'name' in loop)
}

function invalid(where, message) {
  const err = new TypeError(`${where}: ${message}`)
  err.code = 'invalid_agent_loop'
  return err
}

/** Refuses a strategy object that is not `{ name: string, run: function, revision?, snapshot?, restore? }`. */
function checkLoopStrategy(loop, where) {
  if (typeof loop.name !== 'string' || loop.name.trim() === '') throw invalid(where, 'loop.name must be a non-empty string')
  if (typeof loop.run !== 'function') throw invalid(where, `loop.run must be a function (ctx) => Promise<Usage | undefined> (loop "${loop.name}")`)
  if (loop.revision !== undefined && (typeof loop.revision !== 'string' || loop.revision === '')) {
    throw invalid(where, `loop.revision must be a non-empty string (loop "${loop.name}")`)
  }
  for (const hook of ['snapshot', 'restore']) {
    if (loop[hook] !== undefined && typeof loop[hook] !== 'function') throw invalid(where, `loop.${hook} must be a function (loop "${loop.name}")`)
  }
}

/** The run's strategy object, when it has one: the run's `loop`, else the agent's. */
function loopStrategyOf(config, options) {
  const loop = options.loop ?? config.loop
  return isLoopStrategy(loop) ? loop : undefined
}

/**
 * Durable runs keep a fingerprint of the agent's loop and resume it from a checkpoint: a strategy
 * given per run cannot be fingerprinted, one without hooks cannot resume, and this package does not
 * keep loop snapshots in its checkpoints.
 */
function refuseDurableStrategy(strategy, options, durable, errors) {
  if (!durable) return
  if (isLoopStrategy(options.loop)) {
    throw new errors.AgentRunStateError('Durable runs require model, guardrails, loop, and effect store on AgentConfig for fingerprinting')
  }
  if (typeof strategy.snapshot !== 'function' || typeof strategy.restore !== 'function') {
    throw new AgentLoopStateError('ERR_PRISM_LOOP_NOT_DURABLE', 'Custom AgentLoopStrategy on a durable run requires snapshot and restore hooks')
  }
  throw errors.unsupportedOption('session.run', 'loop', 'custom loop strategies on durable runs (loop snapshots in checkpoints)')
}

// The Error a strategy sees for an end of the run: the breach, the abort's reason, the failure.
function endError(r, end) {
  if (r.tracker.breach !== undefined) return new RunLimitError(r.tracker.breach)
  if (end.status === 'aborted') {
    const reason = r.signal.reason
    return reason instanceof Error ? reason : Object.assign(new Error(reason === undefined ? 'Agent run aborted' : String(reason)), { name: 'AbortError' })
  }
  const info = end.error ?? {}
  const err = new Error(typeof info.message === 'string' ? info.message : 'Agent run failed')
  if (typeof info.name === 'string') err.name = info.name
  if (info.code !== undefined) err.code = info.code
  return err
}

function lastAssistant(history) {
  for (let i = history.length - 1; i >= 0; i--) {
    const m = history[i]
    if (m !== null && typeof m === 'object' && m.role === 'assistant' && Array.isArray(m.content)) return m
  }
  return undefined
}

// Input for `ctx.assemble`: an empty list is no input (upstream's `[]`).
function loopInput(nextInput) {
  if (nextInput === undefined || (Array.isArray(nextInput) && nextInput.length === 0)) return []
  return inputMessages(nextInput)
}

const STOPPED = Symbol('stopped')

function usageOf(value) {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? value : undefined
}

/**
 * What a strategy's context and the driver that runs it share: the run's ends by the errors the
 * strategy was given, what the context did so far, and whether the run has ended.
 */
function loopState() {
  return {
    ends: new WeakMap(), // Error given to the strategy -> the run's end
    assembled: new WeakSet(), // requests built by ctx.assemble (redacted already)
    charged: false, // ctx.assemble charged the turn ctx.generate runs
    current: undefined, // the tools of the last assembled turn: { requestTools, tools, dispatcher }
    artifactFinished: false,
    /** @type {any} */
    artifactFailure: undefined,
    ended: false, // the run has ended: ctx methods refuse to act
  }
}

/**
 * The context a strategy is given (`@arnilo/prism`'s AgentLoopContext): each method performs one
 * step of the run `r` (assemble, generate, dispatch, append, emit) and refuses once the run has
 * ended. Its methods are closures, so a strategy may call them detached from `ctx`.
 */
function strategyContext(r, provider, t, run, s) {
  const { sessionId, runId, signal, config } = r
  const fail = (err) => {
    if (!(err instanceof RunEnd)) throw err
    const shown = endError(r, err)
    s.ends.set(shown, err)
    throw shown
  }
  const live = (where) => {
    if (s.ended) throw Object.assign(new Error(`${where}: the run ${runId} has ended`), { code: 'agent_run_ended' })
  }
  const turnTools = async () => s.current ?? (s.current = await selectTools(r, t, run.inputText))
  const history = run.history

  return {
    sessionId,
    runId,
    metadata: r.metadata,
    signal,
    history,
    input: run.input,
    inputMessages: run.inputMessages,
    maxToolRounds: r.tracker.limits.maxToolRounds,
    toolConcurrency: 1,
    finishReason: undefined,
    restoredLoopState: undefined,
    async assemble(nextInput, toolResults, turn) {
      live('ctx.assemble')
      try {
        if (signal.aborted) r.finish('aborted', 'aborted', r.abortError())
        if (turn !== undefined) {
          if (!Number.isSafeInteger(turn) || turn < 1) throw invalid('ctx.assemble', 'turn must be a positive integer')
          r.turns = turn
        }
        const messages = loopInput(nextInput)
        if (toolResults !== undefined && !Array.isArray(toolResults)) throw invalid('ctx.assemble', 'toolResults must be an array of ToolResults')
        r.tracker.beginTurn()
        s.charged = true
        s.current = await selectTools(r, t, run.inputText)
        let results = toolResults ?? []
        if (t.fold !== undefined && results.length > 0) results = await foldToolResults(results, t.fold, { sessionId, runId, turn: r.turns, signal, redact: r.resultRedact })
        // As upstream's default layout: history, then tool results, then the new input.
        const after = results.map((result) => toolMessage(result)).concat(messages)
        const request = await buildRequest(r, t, history, s.current, after)
        s.assembled.add(request)
        return request
      } catch (err) {
        return fail(err)
      }
    },
    chargeToolRound(calls) {
      live('ctx.chargeToolRound')
      if (!Array.isArray(calls)) throw invalid('ctx.chargeToolRound', 'calls must be an array of tool calls')
      if (calls.length === 0) return
      try {
        r.tracker.beginRound()
      } catch (err) {
        fail(err)
      }
    },
    async generate(request) {
      live('ctx.generate')
      try {
        if (request === null || typeof request !== 'object' || !Array.isArray(request.messages)) {
          throw invalid('ctx.generate', 'request must be a ProviderRequest from ctx.assemble (an object with messages)')
        }
        if (signal.aborted) r.finish('aborted', 'aborted', r.abortError())
        if (!s.charged) r.tracker.beginTurn()
        s.charged = false
        const { tools } = await turnTools()
        // A request the strategy built or changed is redacted here, and always carries the run's signal.
        let sent = s.assembled.has(request) ? request : redactRequest(r, request, request.tools)
        if (sent.signal !== signal) sent = Object.assign(sent === request ? { ...request } : sent, { signal })
        return r.retry
          ? await retryProviderTurn(r.retry, (attempt) => providerTurn(r, provider, sent, tools, attempt, true), { signal, sessionId, runId, middleware: config.middleware, emit: (event) => r.emit(event), giveUp: (error) => r.finish('failed', 'error', error) })
          : await providerTurn(r, provider, sent, tools, 1, false)
      } catch (err) {
        return fail(err)
      }
    },
    async dispatchToolCall(call) {
      live('ctx.dispatchToolCall')
      try {
        if (call === null || typeof call !== 'object') throw invalid('ctx.dispatchToolCall', 'call must be a tool call ({ id, name, arguments })')
        if (signal.aborted) r.finish('aborted', 'aborted', r.abortError())
        // The turn's `toolChoice` holds in a host's loop too: a refused call is blocked, not run.
        const refusal = r.tracker.refusals([call])
        if (refusal.refused.length > 0) return blockedByChoice(r, call, refusal.messages[0])
        r.tracker.toolCall()
        const { dispatcher } = await turnTools()
        const result = await dispatcher.dispatch(call, r.dispatchContext())
        const { SEARCH_TOOLS_NAME, activateToolNames } = r.api.search
        if (call.name === SEARCH_TOOLS_NAME && r.searchTool !== undefined && result && !result.error && result.value && Array.isArray(result.value.names)) {
          r.session.activated = activateToolNames(r.session.activated, result.value.names)
        }
        return result
      } catch (err) {
        return fail(err)
      }
    },
    isToolCallExclusive(call) {
      const tool = call !== null && typeof call === 'object' ? t.snap.registry.get(call.name) : undefined
      return tool !== undefined && tool.exclusive === true
    },
    async appendMessage(message) {
      live('ctx.appendMessage')
      if (message === null || typeof message !== 'object' || typeof message.role !== 'string') {
        throw invalid('ctx.appendMessage', 'message must be a Message ({ role, content })')
      }
      r.transcript.push(r.redactor ? r.api.redactWith(message, r.redactor) : message)
    },
    emit(event) {
      live('ctx.emit')
      if (event === null || typeof event !== 'object' || typeof event.type !== 'string') throw invalid('ctx.emit', 'event must be an AgentEvent ({ type, ... })')
      if (event.type === 'turn_started' && Number.isSafeInteger(event.turn) && event.turn > 0) r.turns = event.turn
      if (event.type === 'artifact_finished') s.artifactFinished = true
      if (event.type === 'artifact_failed') s.artifactFailure = event.result
      r.emit(event)
    },
  }
}

/**
 * Runs `strategy` as the run `r`'s loop. `run`: `{ input, inputMessages, history, inputText }`
 * (the run's input as given, its messages as kept, the history before it, its text for disclosure).
 * Answers the RunEnd of a run that succeeded; every other end is thrown.
 */
async function runLoopStrategy(r, provider, strategy, run) {
  const { signal } = r
  r.loopOwnsTurns = true
  r.turns = 1 // the turn of the provider events until the strategy says otherwise (turn_started)
  const t = prepareTurns(r)
  const s = loopState()
  const ctx = strategyContext(r, provider, t, run, s)

  // The run ends when the strategy does, or at once when the run's signal aborts (a breach such as
  // the wall clock, or the host): a strategy stuck in its own code cannot hold the run. Its ctx
  // methods refuse to act after that.
  let usage
  let stop
  const stopped = new Promise((resolve) => {
    stop = () => resolve(STOPPED)
    if (signal.aborted) resolve(STOPPED)
    else signal.addEventListener('abort', stop, { once: true })
  })
  const running = Promise.resolve().then(() => strategy.run(ctx))
  try {
    usage = await Promise.race([running, stopped])
  } catch (err) {
    const end = s.ends.get(err)
    throw end !== undefined ? end : err
  } finally {
    s.ended = true
    signal.removeEventListener('abort', stop)
    running.catch(() => {}) // a strategy still running after the end settles unobserved
    r.lastAssistant = lastAssistant(run.history) ?? r.lastAssistant
  }
  if (usage === STOPPED || signal.aborted) r.finish('aborted', 'aborted', r.abortError())
  if (strategy.name === 'generate-validate-revise' && !s.artifactFinished) {
    const first = s.artifactFailure?.errors?.[0]
    const reason = s.artifactFailure?.metadata?.reason
    throw Object.assign(new Error(first?.message ?? 'artifact loop ended without a validated artifact'), {
      name: 'ArtifactFailed',
      code: typeof reason === 'string' || typeof reason === 'number' ? reason : 'artifact_failed',
    })
  }
  r.loopUsage = usageOf(usage)
  return new RunEnd('succeeded', typeof ctx.finishReason === 'string' && ctx.finishReason !== '' ? ctx.finishReason : 'stop')
}

module.exports = { AgentLoopStateError, isLoopStrategy, checkLoopStrategy, loopStrategyOf, refuseDurableStrategy, runLoopStrategy }
