'use strict'
// The agent tool loop: `createAgent(config).createSession().run(input, options)`.
// This file awaits what must be awaited (the provider's async iterable, narrowing callbacks, the
// dispatch promises) and asks the native run rules (src/run) for every decision: the grant, the
// narrowing clamp, the tools hash, limits, the next step and the plan of each batch.
// Provider events, transcript messages and agent events have `@arnilo/prism`'s shapes, so its
// providers (their request serializers) and its hosts (their subscribers) work unchanged.
const native = require('../binding.js')
const { AgentRunError, ProviderTransportError } = require('./errors.js')
const { unsupportedOption, refuseUnsupported, AGENT_CONFIG_REFUSED, RUN_OPTIONS_REFUSED, SESSION_CONFIG_REFUSED } = require('./agent-options.js')
const { resolveRetry, retryProviderTurn, AGENT_RETRIES } = require('./retry.js')
const { createEventSubscriber } = require('./agent-subscriber.js')
const approval = require('./approval.js')
const { createRunLedgerWriter } = require('./agent-ledger.js')

let sessionSeq = 0
let runSeq = 0

function fail(out) {
  const { kind, code, message } = out.error
  const E = kind === 'TypeError' ? TypeError : kind === 'RangeError' ? RangeError : Error
  const err = new E(message)
  err.code = code
  return err
}

function decode(text) {
  const out = JSON.parse(text)
  if (out.error) throw fail(out)
  return out
}

function json(value) {
  try {
    const text = JSON.stringify(value)
    return text === undefined ? '"<not JSON>"' : text
  } catch {
    return '"<not JSON>"'
  }
}

// Limits as JSON, keeping NaN and the infinities visible (JSON.stringify makes them `null`, which
// would read as "not given"): the native rules refuse NaN like any other non-integer.
function limitsJson(value) {
  let plain = true
  for (const k in value) {
    const v = value[k]
    if (typeof v === 'number' && !Number.isFinite(v)) plain = false
  }
  if (plain) return json(value)
  try {
    const text = JSON.stringify(value, (_key, v) => (typeof v === 'number' && !Number.isFinite(v) ? String(v) : v))
    return text === undefined ? '"<not JSON>"' : text
  } catch {
    return '"<not JSON>"'
  }
}

function toolList(tools) {
  if (tools === undefined || tools === null) return []
  if (Array.isArray(tools)) return tools.filter((t) => t !== null && typeof t === 'object')
  if (typeof tools.list === 'function') return tools.list()
  throw new TypeError('createAgent: tools must be a ToolRegistry or an array of ToolDefinitions')
}

function textOf(content) {
  let text = ''
  for (const block of content) if (block !== null && typeof block === 'object' && block.type === 'text') text += block.text
  return text
}

function inputMessages(input) {
  if (typeof input === 'string') return [{ role: 'user', content: [{ type: 'text', text: input }] }]
  if (Array.isArray(input)) {
    // Content blocks make one user message; a list of messages is taken as is.
    if (input.length > 0 && input.every((m) => m !== null && typeof m === 'object' && typeof m.role === 'string')) return input.slice()
    return [{ role: 'user', content: input }]
  }
  if (input !== null && typeof input === 'object' && typeof input.role === 'string') return [input]
  throw new TypeError('session.run: input must be a string, content blocks, a message or a list of messages')
}

// `@arnilo/prism`'s tool message: the result under `result`, then the result's own content blocks.
function toolMessage(result) {
  const message = {
    role: 'tool',
    content: [{ type: 'tool_result', toolCallId: result.toolCallId, name: result.name, result: result.value, error: result.error }],
  }
  if (Array.isArray(result.content)) for (const block of result.content) message.content.push(block)
  if (result.metadata !== undefined) message.metadata = result.metadata
  return message
}

// Usage over provider turns, as `@arnilo/prism` sums it: token counters add up, `totalTokens`
// defaults to input + output, and cost adds up only while every turn reports the same currency.
function createUsageTotal() {
  const sums = new Map()
  let currency
  let costOk = true
  return {
    add(usage) {
      if (usage === null || typeof usage !== 'object') return
      for (const key of ['inputTokens', 'outputTokens', 'cacheReadTokens', 'cacheWriteTokens']) {
        if (typeof usage[key] === 'number') sums.set(key, (sums.get(key) ?? 0) + usage[key])
      }
      const total = typeof usage.totalTokens === 'number'
        ? usage.totalTokens
        : typeof usage.inputTokens === 'number' || typeof usage.outputTokens === 'number'
          ? (usage.inputTokens ?? 0) + (usage.outputTokens ?? 0)
          : undefined
      if (total !== undefined) sums.set('totalTokens', (sums.get('totalTokens') ?? 0) + total)
      if (typeof usage.cost === 'number' && costOk) {
        if (!sums.has('cost')) currency = usage.currency
        else if (usage.currency !== currency) costOk = false
        if (costOk) sums.set('cost', (sums.get('cost') ?? 0) + usage.cost)
      }
    },
    value() {
      if (sums.size === 0) return undefined
      const usage = {}
      for (const [key, value] of sums) if (key !== 'cost' || costOk) usage[key] = value
      if (costOk && sums.has('cost') && currency !== undefined) usage.currency = currency
      return Object.keys(usage).length > 0 ? usage : undefined
    },
  }
}

const ABORTED = Symbol('aborted')

// How the loop ends a run from any depth: thrown, caught once in runInternal.
class RunEnd {
  constructor(status, finishReason, error, extra) {
    this.status = status
    this.finishReason = finishReason
    this.error = error
    this.extra = extra
  }
}

// Reads a provider stream step by step, each step settling with the iterator's result or with
// ABORTED as soon as the run aborts (`abortWaker.wake`, called by the run's one abort listener): a
// provider stream that waits without watching the signal cannot hold the run. A step costs one promise.
function abortableStep(iterator, signal, waker) {
  if (signal.aborted) return Promise.resolve(ABORTED)
  return new Promise((resolve, reject) => {
    waker.wake = resolve
    Promise.resolve(iterator.next()).then(resolve, reject)
  })
}

function mergeGuardrails(agent, run) {
  if (!agent && !run) return undefined
  return {
    input: [...(agent?.input ?? []), ...(run?.input ?? [])],
    output: [...(agent?.output ?? []), ...(run?.output ?? [])],
    toolInput: [...(agent?.toolInput ?? []), ...(run?.toolInput ?? [])],
    toolOutput: [...(agent?.toolOutput ?? []), ...(run?.toolOutput ?? [])],
    maxConcurrency: run?.maxConcurrency ?? agent?.maxConcurrency,
  }
}

module.exports = function agentApi({ createToolDispatcher, createToolRegistry, errorToErrorInfo, createSecretRedactor, redactWith, reconstructToolCallDeltas, search }) {
  const { createToolSearchIndex, createSearchToolsTool, selectDisclosedTools, activateToolNames, SEARCH_TOOLS_NAME } = search
  // Per agent config: the last run's snapshot (tools, registry, search index), reused while a
  // run's grant resolves to the very same tool objects (a registry or index over 1 000 tools costs ms).
  const shared = new WeakMap()

  function notDispatched(call, why) {
    return {
      toolCallId: call.id,
      name: call.name,
      error: { name: 'ToolCallNotDispatchedError', message: native.runNotDispatchedMessage(String(call.name), why), code: 'tool_call_not_dispatched' },
    }
  }

  const checked = new WeakSet() // configs already accepted (sessions of one agent skip the checks)
  function checkConfig(config) {
    if (config !== null && typeof config === 'object' && checked.has(config)) return
    if (config === null || typeof config !== 'object') throw new TypeError('createAgent: config must be an object')
    refuseUnsupported(config, AGENT_CONFIG_REFUSED, 'createAgent')
    if (config.provider !== undefined && (config.provider === null || typeof config.provider.generate !== 'function')) {
      throw new TypeError('createAgent: provider must have a generate(request) method')
    }
    if (config.providerSource !== undefined && typeof config.providerSource !== 'function') {
      throw new TypeError('createAgent: providerSource must be a function (model) => AIProvider | undefined')
    }
    if (config.instructions !== undefined && typeof config.instructions !== 'string') {
      throw unsupportedOption('createAgent', 'instructions', 'instructions other than one string (layered instructions, instruction injectors)')
    }
    refuseGuardrailStages(config.guardrails, 'createAgent')
    refuseLoop(config.loop, 'createAgent')
    refuseLimits(config.limits, 'createAgent')
    toolList(config.tools) // refuses a bad `tools` at construction
    checked.add(config)
  }

  function refuseGuardrailStages(guardrails, where) {
    if (guardrails === null || typeof guardrails !== 'object') return
    for (const stage of ['input', 'output']) {
      if (Array.isArray(guardrails[stage]) && guardrails[stage].length > 0) {
        throw unsupportedOption(where, `guardrails.${stage}`, `${stage} guardrails (this package runs the toolInput and toolOutput stages)`)
      }
    }
  }

  // `@arnilo/prism`'s other run limits (tool calls, bytes, tokens, cost, wall time) are not enforced
  // here: a host that sets one must not believe it is.
  function refuseLimits(limits, where) {
    if (limits === null || typeof limits !== 'object') return
    for (const key of Object.keys(limits)) {
      if (key !== 'maxToolRounds' && key !== 'maxTurns' && limits[key] !== undefined) {
        throw unsupportedOption(where, `limits.${key}`, 'run limits other than maxToolRounds and maxTurns')
      }
    }
  }

  function refuseLoop(loop, where) {
    if (loop === undefined || loop === null || typeof loop !== 'object') return
    if (!('strategy' in loop) && (typeof loop.run === 'function' || 'name' in loop)) {
      throw unsupportedOption(where, 'loop', 'custom AgentLoopStrategy objects (use { strategy: "single-shot" | "generate-validate-revise" })')
    }
    if (loop.structuredOutputTiming !== undefined) {
      throw unsupportedOption(where, 'loop.structuredOutputTiming', 'structured output')
    }
  }

  function createAgent(config) {
    checkConfig(config)
    const agent = {
      config,
      createSession(sessionConfig = {}) {
        return createAgentSession({ ...(sessionConfig ?? {}), agent: this ?? agent })
      },
    }
    return agent
  }

  function snapshotOf(key0, registered, indices, searchOptions) {
    const key = indices.join(',')
    const c = shared.get(key0)
    if (c !== undefined && c.key === key && c.registered.length === registered.length && c.searchKey === searchOptions.key) {
      let same = true
      for (let i = 0; i < registered.length; i++) {
        if (c.registered[i] !== registered[i]) {
          same = false
          break
        }
      }
      if (same) return c
    }
    const tools = indices.map((i) => registered[i])
    let index
    let searchTool
    if (searchOptions.enabled) {
      try {
        index = createToolSearchIndex(tools, { queryBytes: searchOptions.queryBytes })
        searchTool = createSearchToolsTool(index, { defaultK: searchOptions.defaultK })
      } catch {
        index = undefined // fail closed: over the index cap or unreadable tools disclose the full grant
        searchTool = undefined
      }
    }
    const names = tools.map((t) => t.name)
    const dispatchTools = searchTool && !names.includes(SEARCH_TOOLS_NAME) ? tools.concat([searchTool]) : tools
    const snap = { key, searchKey: searchOptions.key, registered: registered.slice(), tools, names, joined: names.join('\0'), index, searchTool, registry: createToolRegistry(dispatchTools) }
    shared.set(key0, snap)
    return snap
  }

  // `createAgentSession({ agent, id?, metadata?, state? })`: what `agent.createSession()` returns.
  function createAgentSession(sessionConfig) {
    if (sessionConfig === null || typeof sessionConfig !== 'object') throw new TypeError('createAgentSession: config must be an object')
    const agent = sessionConfig.agent
    if (agent === null || typeof agent !== 'object' || agent.config === null || typeof agent.config !== 'object') {
      throw new TypeError('createAgentSession: agent must be an agent from createAgent')
    }
    const config = agent.config
    checkConfig(config)
    refuseUnsupported(sessionConfig, SESSION_CONFIG_REFUSED, 'createSession')
    const { id, state, metadata: sessionMetadata } = sessionConfig
    const sessionId = typeof id === 'string' && id !== '' ? id : `session_${++sessionSeq}`
    const resumeGrant = state && Array.isArray(state.toolNames) ? state.toolNames.slice() : undefined
    let lastGrant = resumeGrant ?? null
    let activated = state && Array.isArray(state.activatedToolNames) ? activateToolNames([], state.activatedToolNames) : []
    const transcript = state && Array.isArray(state.messages) ? state.messages.slice() : []
    const subscribers = new Set()
    let active // the AbortController of the run in flight
    let activeRedactor
    let activeLedger // the run's ledger writer (lib/agent-ledger.js), when it has a runLedger

    // Whether an event has anyone to go to: a subscriber, or the run's ledger (event rows).
    const observed = () => subscribers.size > 0 || activeLedger !== undefined
    function emit(event) {
      if (subscribers.size > 0) {
        const redacted = activeRedactor ? redactWith(event, activeRedactor) : event
        for (const s of subscribers) s.push(redacted)
      }
      if (activeLedger !== undefined) activeLedger.event(event) // redacted with its row
    }
    // Dispatch events are redacted by the dispatcher itself.
    function emitRedacted(event) {
      for (const s of subscribers) s.push(event)
      if (activeLedger !== undefined) activeLedger.event(event)
    }
    function closeSubscribers() {
      for (const s of subscribers) s.close()
      subscribers.clear()
    }
    function subscribe(options = {}) {
      const subscriber = createEventSubscriber(sessionId, options ?? {}, () => subscribers.delete(subscriber))
      subscribers.add(subscriber)
      return subscriber
    }

    const session = {
      id: sessionId,
      run(input, options) {
        return runInternal(input, options ?? {}, approval.durableRunId(config, options ?? {}) ?? `run_${++runSeq}`)
      },
      stream(input, options) {
        return stream(input, options ?? {})
      },
      subscribe,
      abort(reason) {
        if (active) active.abort(reason)
      },
      messages() {
        return transcript.slice()
      },
      state() {
        return { toolNames: lastGrant === null ? undefined : lastGrant.slice(), activatedToolNames: activated.slice() }
      },
      clearActivatedTools() {
        activated = []
      },
    }

    // `@arnilo/prism`'s stream: a subscription that sees only this run's events, ending when the
    // run ends; a failed or aborted run throws its AgentRunError after the last event.
    async function* stream(input, options) {
      const { maxQueuedEvents, overflow, ...runOptions } = options
      const runId = approval.durableRunId(config, runOptions) ?? `run_${++runSeq}`
      const subscription = subscribe({ maxQueuedEvents, overflow })
      let settled = false
      const runPromise = runInternal(input, runOptions, runId).finally(() => {
        settled = true
        subscription.close() // a run refused before it started closes no subscriber itself
      })
      runPromise.catch(() => {})
      try {
        for await (const event of subscription) {
          if (typeof event.runId === 'string' && event.runId !== runId) continue
          yield event
        }
        await runPromise
      } finally {
        if (!settled) {
          if (active && currentRunId === runId) active.abort(new Error('stream consumer closed'))
          await runPromise.catch(() => undefined)
        }
      }
    }

    let currentRunId

    async function runInternal(input, options, runId) {
      if (options === null || typeof options !== 'object') throw new TypeError('session.run: options must be an object')
      // Removed from `@arnilo/prism` in 0.1.5: honouring it would mis-apply the round cap.
      if (options.maxToolRounds !== undefined) {
        throw new TypeError('RunOptions.maxToolRounds was removed in 0.1.5; use RunOptions.limits.maxToolRounds instead')
      }
      refuseUnsupported(options, RUN_OPTIONS_REFUSED, 'session.run')
      refuseGuardrailStages(options.guardrails, 'session.run')
      refuseLoop(options.loop, 'session.run')
      const pick = (key) => (options[key] !== undefined ? options[key] : config[key])

      // Everything that can refuse the run does so before the first provider turn.
      const registered = toolList(config.tools)
      const names = registered.map((t) => String(t.name))
      const requested = options.toolNames === undefined ? undefined : json(options.toolNames)
      const grant = decode(
        native.runResolveGrant(names.join('\0'), names.length, requested, resumeGrant === undefined ? undefined : JSON.stringify(resumeGrant)),
      )
      const loop = { ...config.loop, ...options.loop }
      refuseLimits(config.limits, 'createAgent')
      refuseLimits(options.limits, 'session.run')
      const limits = decode(
        native.runResolveLimits(limitsJson({ ...config.limits, ...options.limits }), limitsJson({ ...loop, parser: typeof loop.parser, validator: typeof loop.validator, repairer: typeof loop.repairer })),
      )
      const artifactLoop = limits.strategy === 'generate-validate-revise'
      const narrowing = pick('toolNarrowing')
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
      const durable = approval.beginDurableRun({ config, options, sessionId, runId, tools: grant.indices.map((i) => registered[i]) })

      if (active) {
        const error = new Error('Agent session already has an active run')
        emit({ type: 'error', sessionId, runId, error: errorToErrorInfo(error) })
        throw error
      }
      const controller = new AbortController()
      active = controller
      currentRunId = runId
      const secrets = Array.isArray(config.secrets) ? config.secrets : undefined
      const redactor = options.redactor ?? config.redactor ?? (secrets && secrets.some(Boolean) ? createSecretRedactor(secrets) : undefined)
      activeRedactor = redactor
      const model = options.model ?? config.model
      // Run-level ledger rows (lib/agent-ledger.js): only a run with a ledger builds the writer.
      const ledgerTarget = options.runLedger ?? config.runLedger
      const ledger = ledgerTarget !== null && typeof ledgerTarget === 'object'
        ? createRunLedgerWriter(ledgerTarget, { sessionId, runId, model, redactor, redactWith, ownership: options.ownership ?? config.ownership, identity: options.identity ?? config.identity, signal: controller.signal })
        : undefined
      activeLedger = ledger
      let ended // { status, error } of the run, for its terminal ledger row
      const onAbort = () => controller.abort(options.signal.reason)
      if (options.signal) {
        if (options.signal.aborted) controller.abort(options.signal.reason)
        else options.signal.addEventListener('abort', onAbort, { once: true })
      }
      const signal = controller.signal
      const waker = { wake: undefined } // the provider step in flight, woken by an abort
      signal.addEventListener('abort', () => {
        if (waker.wake) waker.wake(ABORTED)
      }, { once: true })
      const metadata = { ...config.metadata, ...sessionMetadata, ...options.metadata }
      const usageTotal = createUsageTotal()
      let lastAssistant
      let rounds = 0
      let revisions = 0
      let attempts = 0
      let turns = 0
      let runSearchTool
      const errorInfo = (err) => {
        const info = errorToErrorInfo(err, secrets)
        return redactor ? redactWith(info, redactor) : info
      }
      const abortError = () => errorToErrorInfo(signal.reason instanceof Error ? signal.reason : Object.assign(new Error(signal.reason === undefined ? 'Agent run aborted' : String(signal.reason)), { name: 'AbortError' }))
      const buildResult = (status, finishReason, error, extra) => {
        const content = lastAssistant ? lastAssistant.content : []
        const result = { sessionId, runId, status, text: textOf(content), content, message: lastAssistant, usage: usageTotal.value(), finishReason, error }
        if (status === 'aborted') result.abortReason = String(signal.reason)
        if (artifactLoop) Object.assign(result, { revisions, toolRounds: rounds }, extra)
        return result
      }
      // Success: `agent_finished`, then the result. Failure or abort: an `error` event, and the run
      // rejects with AgentRunError carrying the result.
      const finish = (status, finishReason, error, extra) => {
        throw new RunEnd(status, finishReason, error, extra)
      }

      try {
        try {
          const provider = config.provider ?? (options.providerSource ? options.providerSource(model) : undefined) ?? (config.providerSource ? config.providerSource(model) : undefined)
          if (!provider || typeof provider.generate !== 'function') throw new Error(`Unknown provider: ${model?.provider}`)
          if (signal.aborted) finish('aborted', 'aborted', abortError())
          const startRow = ledger !== undefined ? ledger.start() : undefined // queued before agent_started's row
          emit({ type: 'agent_started', sessionId, runId })
          if (startRow !== undefined) await startRow
          const redactMessage = (m) => (redactor ? redactWith(m, redactor) : m)
          for (const m of messagesIn) transcript.push(redactMessage(m))
          const inputText = textOf(messagesIn.flatMap((m) => (Array.isArray(m.content) ? m.content : [])))
          // The loop answers how a succeeded run ended (thrown ends are failures and artifact results).
          throw await loopBody(provider, inputText)
        } catch (err) {
          if (err instanceof RunEnd) throw err
          if (signal.aborted) finish('aborted', 'aborted', abortError())
          finish('failed', 'error', errorInfo(err))
        }
      } catch (caught) {
        if (!(caught instanceof RunEnd)) throw caught
        let end = caught
        if (ledger !== undefined && end.status === 'succeeded') {
          // The aggregate usage row, then every queued row: a failed append fails the run.
          try {
            await ledger.total(usageTotal.value())
          } catch (err) {
            end = signal.aborted ? new RunEnd('aborted', 'aborted', abortError()) : new RunEnd('failed', 'error', errorInfo(err))
          }
        }
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
          if (options.signal) options.signal.removeEventListener('abort', onAbort)
          if (active === controller) {
            active = undefined
            currentRunId = undefined
            activeRedactor = undefined
            activeLedger = undefined
          }
          closeSubscribers()
        }
      }

      async function loopBody(provider, inputText) {
        const allowHidden = pick('allowHiddenToolCalls') === true
        lastGrant = grant.stored
        const searchConfig = pick('toolsSearch') ?? {}
        const searchOptions = {
          enabled: disclosure === 'search',
          queryBytes: searchConfig.queryBytes,
          defaultK: searchConfig.defaultK,
          key: disclosure === 'search' ? `${searchConfig.queryBytes}/${searchConfig.defaultK}` : '',
        }
        const snap = snapshotOf(config, registered, grant.indices, searchOptions)
        const { tools: snapshot, names: runNames, registry, index, searchTool } = snap
        runSearchTool = searchTool
        const dispatcherOptions = {
          registry,
          middleware: config.middleware,
          validate: options.validate ?? config.validator,
          emit: emitRedacted,
          secrets,
          redactor,
          ledger: ledger !== undefined ? ledger.tools : options.runLedger ?? config.runLedger, // tool rows join the run's queue
          ownership: options.ownership ?? config.ownership,
          identity: options.identity ?? config.identity,
          trust: config.trust,
          permission: config.permission,
          guardrails: mergeGuardrails(config.guardrails, options.guardrails),
          effectStore: options.effectStore ?? config.effectStore,
        }
        const unfiltered = createToolDispatcher(dispatcherOptions)
        const system = typeof config.instructions === 'string' && config.instructions !== ''
          ? [{ role: 'system', content: [{ type: 'text', text: `System instruction:\n${config.instructions}` }] }]
          : []
        if (resumed) {
          // The decided calls of the suspension go to the transcript before the next provider turn.
          rounds = resumed.counters.rounds
          turns = resumed.counters.turns
          usageTotal.add(resumed.usage) // the run's usage before it suspended
          emit({ type: 'agent_resumed', sessionId, runId, version: resumed.version })
          await approval.replayDecided(resumed, { dispatcher: unfiltered, transcript, toolMessage, errorInfo, context: { sessionId, runId, signal, metadata } })
          if (signal.aborted) finish('aborted', 'aborted', abortError())
        }
        let hashCache // [tools array, metadata] for the unchanged request list
        let narrowCache // [kept key, tools, dispatcher] for an unchanged narrowed set
        const parser = typeof loop.parser === 'function' ? loop.parser : undefined
        const artifactValidator = typeof loop.validator === 'function' ? loop.validator : undefined
        const repairer = typeof loop.repairer === 'function' ? loop.repairer : undefined

        for (;;) {
          if (signal.aborted) finish('aborted', 'aborted', abortError())
          turns += 1

          // Assemble: narrowing, then disclosure.
          let visible = snapshot
          let dispatcher = unfiltered
          if (typeof narrowing === 'function') {
            const answer = await narrowing({ turn: turns, lastAssistantText: lastAssistant ? textOf(lastAssistant.content) : undefined, toolIds: runNames.slice() })
            const clamped = decode(native.runClampNarrowing(snap.joined, runNames.length, json(answer)))
            if (clamped.dropped.length > 0) emit({ type: 'tool_narrowing_clamped', sessionId, runId, turn: turns, dropped: clamped.dropped })
            if (clamped.kept.length !== snapshot.length) {
              const key = clamped.kept.join(',')
              if (narrowCache === undefined || narrowCache[0] !== key) {
                const kept = clamped.kept.map((i) => snapshot[i])
                let filtered = unfiltered
                if (!allowHidden) {
                  const allow = kept.map((t) => t.name)
                  if (searchTool) allow.push(SEARCH_TOOLS_NAME)
                  filtered = createToolDispatcher({ ...dispatcherOptions, filter: allow.length > 0 ? { allow } : { deny: runNames } })
                }
                narrowCache = [key, kept, filtered]
              }
              visible = narrowCache[1]
              dispatcher = narrowCache[2]
            }
          }
          let requestTools = visible
          if (searchTool && index) {
            requestTools = selectDisclosedTools({
              tools: visible.concat([searchTool]),
              input: inputText,
              topK: searchConfig.topK,
              activated,
              index,
            })
          }
          let tools
          if (hashCache && hashCache[0] === requestTools) tools = hashCache[1]
          else {
            const ids = requestTools.map((t) => t.name)
            tools = { count: ids.length, idsHash: native.runToolIdsHash(ids.join('\0'), ids.length) }
            hashCache = [requestTools, tools]
          }
          if (observed()) emit({ type: 'turn_started', sessionId, runId, turn: turns, metadata: { tools } })

          // One provider turn. The redactor sees the whole request (messages, tools, metadata)
          // before the provider does; the signal is the run's own object.
          let request = { model, messages: system.concat(transcript), tools: requestTools, metadata: { ...metadata, tools } }
          if (redactor) {
            request = redactWith(request, redactor)
            // Redaction copies drop functions (so an own toJSON cannot carry a secret past them); the
            // redacted tool definitions keep their `execute`, which is code, not data.
            if (Array.isArray(request.tools)) {
              request.tools = request.tools.map((t, i) =>
                t !== null && typeof t === 'object' && typeof requestTools[i]?.execute === 'function' ? { ...t, execute: requestTools[i].execute } : t,
              )
            }
          }
          request.signal = signal
          if (retry) request[AGENT_RETRIES] = true
          const { calls } = retry
            ? await retryProviderTurn(retry, (attempt) => providerTurn(provider, request, tools, attempt, true), { signal, sessionId, runId, middleware: config.middleware, emit, giveUp: (error) => finish('failed', 'error', error) })
            : await providerTurn(provider, request, tools, 1, false)

          const hosted = calls.map((c) => c.authority === 'provider-hosted')
          const hostCalls = hosted.filter((h) => !h).length
          if (artifactLoop) {
            const done = await artifactStep(calls, hosted, hostCalls, dispatcher)
            if (done !== undefined) return done
            continue
          }
          const step = native.runNextStep(limits.maxToolRounds, limits.maxTurns, rounds, turns, hostCalls)
          if (step === 'done') return new RunEnd('succeeded', 'stop')
          if (step === 'turn_limit') {
            for (let i = 0; i < calls.length; i++) if (!hosted[i]) transcript.push(toolMessage(notDispatched(calls[i], 'turn_limit')))
            return new RunEnd('succeeded', 'turn_limit')
          }
          rounds += 1
          // Durable runs: gated calls wait for a decision; the others of the round still run.
          let gate
          try {
            if (durable) gate = await durable.gate(calls, hosted, registry, { signal, metadata })
          } catch (err) {
            for (let i = 0; i < calls.length; i++) if (!hosted[i]) transcript.push(toolMessage(notDispatched(calls[i], 'failed')))
            throw err
          }
          try {
            await runBatch(calls, gate ? gate.hosted : hosted, dispatcher, limits.toolConcurrency, registry)
          } catch (end) {
            // The round failed or aborted: the waiting calls get rows too, so no call is left open.
            if (gate) for (const p of gate.pending) transcript.push(toolMessage(notDispatched(p.call, signal.aborted ? 'aborted' : 'failed')))
            throw end
          }
          if (gate) {
            for (const row of gate.rows) transcript.push(toolMessage(row))
            if (gate.pending.length > 0) {
              const toolNames = lastGrant === null ? null : lastGrant
              return new RunEnd('suspended', undefined, undefined, await durable.suspend(gate.pending, { transcript, rounds, turns, toolNames, activatedToolNames: activated, usage: usageTotal.value() }))
            }
          }
        }

        // generate-validate-revise: one response. Finishes the run, or answers undefined to ask
        // the provider again (after a tool round or a revision request).
        async function artifactStep(calls, hosted, hostCalls, dispatcher) {
          const artifactCtx = { sessionId, runId, turn: turns, signal, metadata }
          // The run's error when the loop gives up, as `@arnilo/prism` words it: the first error of
          // the last validation, its `metadata.reason` as the code.
          const failWith = (validation) => {
            if (observed()) emit({ type: 'artifact_failed', sessionId, runId, turn: turns, attempt: attempts, result: validation })
            const reason = validation.metadata && validation.metadata.reason
            const error = {
              name: 'ArtifactFailed',
              code: typeof reason === 'string' || typeof reason === 'number' ? reason : 'artifact_failed',
              message: (validation.errors && validation.errors[0] && validation.errors[0].message) || 'artifact failed',
            }
            finish('failed', 'artifact_failed', error)
          }
          const step = native.runArtifactStep(limits.toolCalls === 'bounded', limits.maxToolRounds, rounds, hostCalls)
          if (step === 'tool_round_limit') {
            for (let i = 0; i < calls.length; i++) if (!hosted[i]) transcript.push(toolMessage(notDispatched(calls[i], 'turn_limit')))
            const v = JSON.parse(native.runArtifactToolRoundLimit(limits.maxToolRounds))
            failWith({ ok: false, errors: [{ message: 'maximum tool rounds exceeded' }], metadata: { reason: v.reason, detail: v.message, revisions, toolRounds: rounds } })
          }
          if (step === 'tools') {
            rounds += 1
            await runBatch(calls, hosted, dispatcher, 1, registry)
            return undefined
          }
          // A candidate. Inert calls are answered with not-dispatched rows, so no call is left open.
          for (let i = 0; i < calls.length; i++) if (!hosted[i]) transcript.push(toolMessage(notDispatched(calls[i], 'inert')))
          const text = lastAssistant ? textOf(lastAssistant.content) : ''
          attempts += 1
          let verdict
          let artifact
          let parseFailure
          if (text.trim() === '') parseFailure = 'no artifact text in model output'
          else if (parser) {
            try {
              const parsed = await parser(text, artifactCtx)
              // `@arnilo/prism`'s ParseResult ({ ok, value } / { ok: false, error }), or the artifact itself.
              if (parsed !== null && typeof parsed === 'object' && typeof parsed.ok === 'boolean' && ('value' in parsed || 'error' in parsed || Object.keys(parsed).length === 1)) {
                if (parsed.ok && parsed.value !== undefined) artifact = parsed.value
                else parseFailure = typeof parsed.error === 'string' && parsed.error !== '' ? parsed.error : 'artifact parse failed'
              } else artifact = parsed
            } catch (err) {
              parseFailure = errorInfo(err).message
            }
          } else artifact = text
          if (observed()) emit({ type: 'artifact_validation_started', sessionId, runId, turn: turns, attempt: attempts })
          let answer
          let safe
          if (parseFailure !== undefined) {
            verdict = JSON.parse(native.runArtifactVerdict(limits.maxRevisions, revisions, 'parse_error', redactor ? redactWith(parseFailure, redactor) : parseFailure))
          } else {
            let threw
            try {
              if (artifactValidator) answer = await artifactValidator(artifact, artifactCtx)
            } catch (err) {
              threw = err
            }
            if (threw !== undefined) {
              if (signal.aborted) finish('aborted', 'aborted', abortError())
              const error = errorInfo(threw)
              if (observed()) emit({ type: 'artifact_failed', sessionId, runId, turn: turns, attempt: attempts, result: { ok: false, errors: [{ message: error.message }], metadata: { reason: 'validator_error' } } })
              finish('failed', 'error', error)
            }
            safe = answer === undefined ? undefined : secrets ? native.redactSecrets(answer, secrets) : answer
            verdict = JSON.parse(native.runArtifactVerdict(limits.maxRevisions, revisions, 'validated', safe === undefined ? undefined : json(safe)))
          }
          if (signal.aborted) finish('aborted', 'aborted', abortError())
          // The ArtifactValidation of this candidate: the validator's own `{ ok, errors, metadata }`
          // answer (redacted), or one built from the verdict for the package's other answer forms.
          let validation
          const upstreamForm = safe !== null && typeof safe === 'object' && typeof safe.ok === 'boolean'
          if (verdict.action === 'accept') {
            validation = upstreamForm ? safe : { ok: true }
          } else if (upstreamForm && parseFailure === undefined) {
            validation = { ...safe, errors: Array.isArray(safe.errors) && safe.errors.length > 0 ? safe.errors : [{ message: 'invalid artifact' }] }
          } else {
            const rejection = verdict.action === 'fail' && verdict.rejection ? verdict.rejection : verdict
            validation = { ok: false, errors: [{ ...(parseFailure !== undefined ? { path: '$' } : {}), message: rejection.message }], metadata: { reason: rejection.reason } }
          }
          if (observed()) emit({ type: 'artifact_validation_finished', sessionId, runId, turn: turns, attempt: attempts, result: validation })
          if (verdict.action === 'accept') {
            if (observed()) emit({ type: 'artifact_finished', sessionId, runId, turn: turns, attempt: attempts, result: validation })
            finish('succeeded', 'stop', undefined, { artifact })
          }
          if (verdict.action === 'fail') failWith(validation)
          revisions = verdict.revision
          if (observed()) emit({ type: 'artifact_revision_started', sessionId, runId, turn: turns, attempt: attempts, failure: validation })
          let repair = [{ role: 'user', content: [{ type: 'text', text: verdict.request }] }]
          if (repairer) repair = inputMessages(await repairer(parseFailure !== undefined ? undefined : artifact, validation, artifactCtx))
          for (const m of repair) transcript.push(redactor ? redactWith(m, redactor) : m)
          return undefined
        }
      }

      // One provider turn, read with `@arnilo/prism`'s protocol: `content_delta` blocks and
      // `tool_call` calls in stream order; `tool_call_delta` fragments rebuild only the calls no
      // `tool_call` event delivered (providers send both); `usage` is the turn's usage (the last
      // one wins, `done.usage` over it), counted once per turn; `done` ends the turn; `error`
      // fails it. Every `next()` races the run's signal.
      async function providerTurn(provider, request, tools, attempt, retrying) {
        const providerId = typeof provider.id === 'string' ? provider.id : model?.provider
        const turnMetadata = { providerId, model: request.model, attempt, tools }
        if (observed()) emit({ type: 'provider_turn_started', sessionId, runId, turn: turns, metadata: turnMetadata })
        const content = []
        const calls = []
        const deltas = []
        let started = false
        let messageId
        let usage
        let failure
        let iterator
        const start = () => {
          if (!started) {
            started = true
            if (observed()) emit({ type: 'message_started', sessionId, runId, message: { role: 'assistant', content: [] } })
          }
        }
        try {
          if (signal.aborted) finish('aborted', 'aborted', abortError())
          iterator = provider.generate(request)[Symbol.asyncIterator]()
          for (;;) {
            const step = await abortableStep(iterator, signal, waker)
            if (step === ABORTED) {
              Promise.resolve().then(() => iterator.return?.()).catch(() => {})
              iterator = undefined
              finish('aborted', 'aborted', abortError())
            }
            if (step.done) {
              iterator = undefined
              break
            }
            const event = step.value
            if (event === null || typeof event !== 'object') continue
            if (event.type === 'error') {
              failure = providerErrorInfo(event.error)
              break
            }
            if (event.type === 'usage') usage = event.usage
            else if (event.type === 'done') {
              usage = event.usage ?? usage
              break
            } else if (event.type === 'message_start') {
              started = true
              messageId = event.messageId
              if (observed()) emit({ type: 'message_started', sessionId, runId, message: { id: messageId, role: 'assistant', content: [] } })
            } else if (event.type === 'tool_call_delta') {
              start()
              deltas.push(event)
              if (observed()) emit({ type: 'message_delta', sessionId, runId, content: { ...event, type: 'tool_call_delta' } })
            } else if (event.type === 'content_delta' || event.type === 'tool_call') {
              const block = event.type === 'content_delta' ? event.content : event.call
              if (block === null || typeof block !== 'object') continue
              start()
              content.push(block)
              if (block.type === 'tool_call') calls.push(block)
              if (observed()) emit({ type: 'message_delta', sessionId, runId, content: block })
            }
          }
          if (iterator !== undefined) {
            // Stopped early (done or error): let the provider release its stream.
            const it = iterator
            iterator = undefined
            Promise.resolve().then(() => it.return?.()).catch(() => {})
          }
          if (failure === undefined) {
            for (const call of rebuildMissing(deltas, calls)) {
              content.push(call)
              calls.push(call)
              emit({ type: 'message_delta', sessionId, runId, content: call })
            }
          }
        } catch (err) {
          if (err instanceof RunEnd) throw err
          if (signal.aborted) finish('aborted', 'aborted', abortError())
          failure = errorInfo(err)
        } finally {
          waker.wake = undefined
        }
        usageTotal.add(usage)
        if (ledger !== undefined && usage !== undefined && usage !== null) await ledger.turnUsage(usage, turns, attempt)
        const finished = { type: 'provider_turn_finished', sessionId, runId, turn: turns, metadata: turnMetadata, usage }
        if (failure !== undefined) finished.error = failure
        emit(finished)
        if (failure !== undefined && retrying && !signal.aborted) return { failure, observable: started }
        if (failure !== undefined) finish('failed', 'error', failure)
        if (signal.aborted) finish('aborted', 'aborted', abortError())
        if (started) {
          lastAssistant = messageId === undefined ? { role: 'assistant', content } : { id: messageId, role: 'assistant', content }
          transcript.push(redactor ? redactWith(lastAssistant, redactor) : lastAssistant)
          if (observed()) emit({ type: 'message_finished', sessionId, runId, message: lastAssistant })
        }
        if (observed()) emit({ type: 'turn_finished', sessionId, runId, turn: turns })
        return { calls }
      }

      // A provider `error` event is redacted like a thrown provider error; a string becomes an ErrorInfo.
      function providerErrorInfo(error) {
        if (error === undefined || error === null) return errorInfo(new Error('Provider error'))
        if (typeof error === 'string') return errorInfo(new Error(error))
        return errorInfo(error)
      }

      // Calls rebuilt from `tool_call_delta` fragments that no `tool_call` event delivered. A
      // fragment group without an id or a name fails the turn (`incomplete_delta`) before any
      // call of it runs.
      function rebuildMissing(deltas, calls) {
        if (deltas.length === 0) return []
        const groups = new Map()
        for (const d of deltas) {
          const key = d.index
          const g = groups.get(key) ?? { id: undefined, name: undefined }
          if (d.id !== undefined) g.id = d.id
          if (d.name !== undefined) g.name = d.name
          groups.set(key, g)
        }
        const seen = new Set(calls.map((c) => c.id))
        const keys = [...groups.keys()].sort((a, b) => a - b)
        for (const key of keys) {
          const g = groups.get(key)
          if (seen.has(g.id)) continue
          if (!g.id || !g.name) throw new ProviderTransportError('incomplete_delta', `Incomplete tool call delta at index ${key}`)
        }
        const ordered = []
        for (const key of keys) {
          if (seen.has(groups.get(key).id)) continue
          for (const d of deltas) {
            if (d.index === key) ordered.push({ type: 'tool_call_delta', index: d.index, id: d.id, name: d.name, argumentsText: d.argumentsText, argumentsDelta: d.argumentsText ?? d.argumentsDelta })
          }
        }
        return ordered.length === 0 ? [] : reconstructToolCallDeltas(ordered)
      }

      // The calls of one turn: the plan says which run and how many at once. Rows go to the
      // transcript in call order; a run-level failure or an abort finishes the run.
      async function runBatch(calls, hosted, dispatcher, concurrency, registry) {
        const exclusive = calls.map((c) => {
          const t = registry.get(c.name)
          return t !== undefined && t.exclusive === true
        })
        const plan = native.runPlanBatch(concurrency, hosted, exclusive)
        const width = plan[0]
        const order = plan.slice(1)
        const results = new Array(calls.length)
        let next = 0
        let failure
        const context = { sessionId, runId, signal, metadata }
        const worker = async () => {
          while (failure === undefined && !signal.aborted && next < order.length) {
            const i = order[next++]
            const call = calls[i]
            try {
              results[i] = await dispatcher.dispatch(call, context)
            } catch (err) {
              if (failure === undefined) failure = err
              results[i] = { toolCallId: call.id, name: call.name, error: errorInfo(err) }
            }
          }
        }
        const workers = []
        for (let w = 0; w < width; w++) workers.push(worker())
        await Promise.all(workers)
        const why = failure !== undefined ? 'failed' : 'aborted'
        for (const i of order) {
          const result = results[i] ?? notDispatched(calls[i], why)
          transcript.push(toolMessage(result))
          if (calls[i].name === SEARCH_TOOLS_NAME && runSearchTool !== undefined && !result.error && result.value && Array.isArray(result.value.names)) {
            activated = activateToolNames(activated, result.value.names)
          }
        }
        if (failure !== undefined) finish('failed', 'error', errorInfo(failure))
        if (signal.aborted) finish('aborted', 'aborted', abortError())
      }
    }

    return session
  }

  return { createAgent, createAgentSession }
}
