'use strict'
// The agent tool loop: `createAgent(config).createSession().run(input, options)`.
// This file awaits what must be awaited (the provider's async iterable, narrowing callbacks, the
// dispatch promises) and asks the native run rules (src/run) for every decision: the grant, the
// narrowing clamp, the tools hash, limits, the next step and the plan of each batch.
const native = require('../binding.js')

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

function toolList(tools) {
  if (tools === undefined || tools === null) return []
  if (Array.isArray(tools)) return tools.filter((t) => t !== null && typeof t === 'object')
  if (typeof tools.list === 'function') return tools.list()
  throw new TypeError('createAgent: tools must be a ToolRegistry or an array of ToolDefinitions')
}

function textOf(content) {
  let text = ''
  for (const block of content) if (block.type === 'text') text += block.text
  return text
}

function userMessage(input) {
  if (typeof input === 'string') return { role: 'user', content: [{ type: 'text', text: input }] }
  if (Array.isArray(input)) return { role: 'user', content: input }
  if (input !== null && typeof input === 'object' && input.role === 'user') return input
  throw new TypeError('session.run: input must be a string, content blocks or a user message')
}

function toolMessage(result) {
  return { role: 'tool', toolCallId: result.toolCallId, name: result.name, content: [{ type: 'tool_result', ...result }] }
}

function addUsage(total, usage) {
  if (usage === null || typeof usage !== 'object') return
  for (const [k, v] of Object.entries(usage)) if (typeof v === 'number') total[k] = (total[k] ?? 0) + v
}

module.exports = function agentApi({ createToolDispatcher, createToolRegistry, errorToErrorInfo, reconstructToolCallDeltas, search }) {
  const { createToolSearchIndex, createSearchToolsTool, selectDisclosedTools, activateToolNames, SEARCH_TOOLS_NAME } = search

  function notDispatched(call, why) {
    return {
      toolCallId: call.id,
      name: call.name,
      error: { name: 'ToolCallNotDispatchedError', message: native.runNotDispatchedMessage(String(call.name), why), code: 'tool_call_not_dispatched' },
    }
  }

  function createAgent(config) {
    if (config === null || typeof config !== 'object') throw new TypeError('createAgent: config must be an object')
    if (!config.provider || typeof config.provider.generate !== 'function') {
      throw new TypeError('createAgent: provider must have a generate(request) method')
    }
    toolList(config.tools) // refuses a bad `tools` at construction
    // The last run's snapshot (tools, registry, search index), reused while a run's grant resolves
    // to the very same tool objects: building a registry or an index over 1 000 tools costs ms.
    const shared = { snapshot: undefined }
    return {
      config,
      createSession(options = {}) {
        return createSession(config, shared, options ?? {})
      },
    }
  }

  function snapshotOf(shared, registered, indices, searchOptions) {
    const key = indices.join(',')
    const c = shared.snapshot
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
    shared.snapshot = snap
    return snap
  }

  function createSession(config, shared, { id, state } = {}) {
    const sessionId = typeof id === 'string' && id !== '' ? id : `session_${++sessionSeq}`
    const resumeGrant = state && Array.isArray(state.toolNames) ? state.toolNames.slice() : undefined
    let lastGrant = resumeGrant ?? null
    let activated = state && Array.isArray(state.activatedToolNames) ? activateToolNames([], state.activatedToolNames) : []
    const transcript = state && Array.isArray(state.messages) ? state.messages.slice() : []
    let current // the AbortController of the run in flight

    const session = {
      id: sessionId,
      run(input, options) {
        return run(input, options ?? {}, undefined)
      },
      stream(input, options) {
        return stream(input, options ?? {})
      },
      abort(reason) {
        if (current) current.abort(reason)
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

    function stream(input, options) {
      const queue = []
      let wake
      let finished = false
      const promise = run(input, options, (event) => {
        queue.push(event)
        if (wake) wake()
      }).then(
        () => {},
        (err) => {
          queue.push({ type: 'run_error', sessionId, error: errorToErrorInfo(err) })
        },
      ).finally(() => {
        finished = true
        if (wake) wake()
      })
      return {
        result: promise,
        async *[Symbol.asyncIterator]() {
          for (;;) {
            while (queue.length > 0) yield queue.shift()
            if (finished) return
            await new Promise((resolve) => (wake = resolve))
            wake = undefined
          }
        },
      }
    }

    async function run(input, options, listener) {
      const pick = (key) => (options[key] !== undefined ? options[key] : config[key])
      const runId = `run_${++runSeq}`
      const emit = listener ?? (() => {})

      // Everything that can refuse the run does so before the first provider turn.
      const registered = toolList(config.tools)
      const names = registered.map((t) => String(t.name))
      const requested = options.toolNames === undefined ? undefined : json(options.toolNames)
      const grant = decode(
        native.runResolveGrant(names.join('\0'), names.length, requested, resumeGrant === undefined ? undefined : JSON.stringify(resumeGrant)),
      )
      const loop = { ...config.loop, ...options.loop }
      const limits = decode(
        native.runResolveLimits(json({ ...config.limits, ...options.limits }), json({ ...loop, parser: typeof loop.parser, validator: typeof loop.validator })),
      )
      const artifactLoop = limits.strategy === 'generate-validate-revise'
      const parser = typeof loop.parser === 'function' ? loop.parser : (text) => text
      const artifactValidator = typeof loop.validator === 'function' ? loop.validator : undefined
      const narrowing = pick('toolNarrowing')
      const disclosure = pick('toolsDisclosure') ?? 'all'
      if (disclosure !== 'all' && disclosure !== 'search') {
        throw Object.assign(new TypeError('toolsDisclosure must be "all" or "search"'), { code: 'invalid_tools_disclosure' })
      }
      const allowHidden = pick('allowHiddenToolCalls') === true
      lastGrant = grant.stored

      const searchConfig = pick('toolsSearch') ?? {}
      const searchOptions = {
        enabled: disclosure === 'search',
        queryBytes: searchConfig.queryBytes,
        defaultK: searchConfig.defaultK,
        key: disclosure === 'search' ? `${searchConfig.queryBytes}/${searchConfig.defaultK}` : '',
      }
      const snap = snapshotOf(shared, registered, grant.indices, searchOptions)
      const { tools: snapshot, names: runNames, registry, index, searchTool } = snap
      const controller = new AbortController()
      current = controller
      const onAbort = () => controller.abort(options.signal.reason)
      if (options.signal) {
        if (options.signal.aborted) controller.abort(options.signal.reason)
        else options.signal.addEventListener('abort', onAbort, { once: true })
      }
      const signal = controller.signal
      const dispatcherOptions = {
        registry,
        middleware: config.middleware,
        validate: options.validate ?? config.validator,
        emit,
        secrets: config.secrets,
        redactor: config.redactor,
        ledger: config.runLedger,
        ownership: config.ownership,
        identity: config.identity,
        trust: config.trust,
        permission: config.permission,
        guardrails: config.guardrails,
        effectStore: config.effectStore,
      }
      const unfiltered = createToolDispatcher(dispatcherOptions)
      const inputText = textOf(userMessage(input).content)
      const system = typeof config.instructions === 'string' && config.instructions !== ''
        ? [{ role: 'system', content: [{ type: 'text', text: config.instructions }] }]
        : []

      transcript.push(userMessage(input))
      emit({ type: 'run_started', sessionId, runId })
      const usage = {}
      let rounds = 0
      let turns = 0
      let revisions = 0
      let lastAssistant
      let hashCache // [tools array, metadata] for the unchanged request list
      let narrowCache // [kept key, tools, dispatcher] for an unchanged narrowed set
      const finish = (status, finishReason, error, extra) => {
        if (options.signal) options.signal.removeEventListener('abort', onAbort)
        if (current === controller) current = undefined
        const content = lastAssistant ? lastAssistant.content : []
        const result = { sessionId, runId, status, text: textOf(content), content, message: lastAssistant, usage, finishReason, error }
        if (artifactLoop) Object.assign(result, { revisions, toolRounds: rounds }, extra)
        emit({ type: status === 'succeeded' ? 'run_finished' : status === 'aborted' ? 'run_aborted' : 'run_failed', sessionId, runId, result })
        return result
      }
      const abortError = () => errorToErrorInfo(signal.reason instanceof Error ? signal.reason : Object.assign(new Error(signal.reason === undefined ? 'The run was aborted' : String(signal.reason)), { name: 'AbortError' }))

      for (;;) {
        if (signal.aborted) return finish('aborted', 'aborted', abortError())
        turns += 1

        // Assemble: narrowing, then disclosure.
        let visible = snapshot
        let dispatcher = unfiltered
        if (typeof narrowing === 'function') {
          let answer
          try {
            answer = await narrowing({ turn: turns, lastAssistantText: lastAssistant ? textOf(lastAssistant.content) : undefined, toolIds: runNames.slice() })
          } catch (err) {
            return finish('failed', 'error', errorToErrorInfo(err, config.secrets))
          }
          let clamped
          try {
            clamped = decode(native.runClampNarrowing(snap.joined, runNames.length, json(answer)))
          } catch (err) {
            return finish('failed', 'error', errorToErrorInfo(err))
          }
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
            topK: (pick('toolsSearch') ?? {}).topK,
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
        emit({ type: 'turn_started', sessionId, runId, turn: turns, metadata: { tools } })

        // One provider turn.
        const request = {
          model: config.model,
          messages: system.concat(transcript),
          tools: requestTools,
          signal,
          metadata: { ...config.metadata, ...options.metadata, tools },
        }
        let text = ''
        const slots = []
        const deltas = []
        const deltaSlots = new Set()
        let providerFailure
        try {
          for await (const event of config.provider.generate(request)) {
            if (signal.aborted) break
            if (event === null || typeof event !== 'object') continue
            if (event.type === 'content_delta') {
              if (event.content && event.content.type === 'text' && typeof event.content.text === 'string') {
                text += event.content.text
                emit({ type: 'message_delta', sessionId, runId, turn: turns, delta: event.content.text })
              }
            } else if (event.type === 'tool_call') {
              if (event.call && typeof event.call === 'object') slots.push(event.call)
            } else if (event.type === 'tool_call_delta') {
              const key = event.index ?? event.id
              if (!deltaSlots.has(key)) {
                deltaSlots.add(key)
                slots.push(undefined)
              }
              deltas.push({ type: 'tool_call_delta', index: event.index, id: event.id, name: event.name, argumentsDelta: event.argumentsText ?? event.argumentsDelta })
            } else if (event.type === 'usage' || event.type === 'done') {
              addUsage(usage, event.usage)
            } else if (event.type === 'error') {
              providerFailure = event.error ?? { message: 'Provider error' }
              break
            }
          }
        } catch (err) {
          providerFailure = errorToErrorInfo(err, config.secrets)
        }
        if (signal.aborted) return finish('aborted', 'aborted', abortError())
        if (providerFailure) return finish('failed', 'error', providerFailure)
        if (deltas.length > 0) {
          const rebuilt = reconstructToolCallDeltas(deltas)
          let k = 0
          for (let i = 0; i < slots.length; i++) if (slots[i] === undefined) slots[i] = rebuilt[k++]
        }
        const calls = slots.filter(Boolean)
        const content = text === '' ? [] : [{ type: 'text', text }]
        for (const call of calls) content.push(call)
        lastAssistant = { role: 'assistant', content }
        transcript.push(lastAssistant)
        emit({ type: 'turn_finished', sessionId, runId, turn: turns, message: lastAssistant, metadata: { tools } })

        const hosted = calls.map((c) => c.authority === 'provider-hosted')
        const hostCalls = hosted.filter((h) => !h).length
        if (artifactLoop) {
          const next = await artifactStep(calls, hosted, hostCalls, dispatcher)
          if (next !== undefined) return next
          continue
        }
        const step = native.runNextStep(limits.maxToolRounds, limits.maxTurns, rounds, turns, hostCalls)
        if (step === 'done') return finish('succeeded', 'stop')
        if (step === 'turn_limit') {
          for (let i = 0; i < calls.length; i++) if (!hosted[i]) transcript.push(toolMessage(notDispatched(calls[i], 'turn_limit')))
          return finish('succeeded', 'turn_limit')
        }
        rounds += 1
        const stopped = await runBatch(calls, hosted, dispatcher, limits.toolConcurrency)
        if (stopped !== undefined) return stopped
      }

      // The calls of one turn: the plan says which run and how many at once. Rows go to the
      // transcript in call order; answers the finished result when the batch stopped the run.
      async function runBatch(calls, hosted, dispatcher, concurrency) {
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
        const context = { sessionId, runId, signal, metadata: options.metadata }
        const worker = async () => {
          while (failure === undefined && !signal.aborted && next < order.length) {
            const i = order[next++]
            const call = calls[i]
            try {
              results[i] = await dispatcher.dispatch(call, context)
            } catch (err) {
              if (failure === undefined) failure = err
              results[i] = { toolCallId: call.id, name: call.name, error: errorToErrorInfo(err, config.secrets) }
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
          if (calls[i].name === SEARCH_TOOLS_NAME && searchTool && !result.error && result.value && Array.isArray(result.value.names)) {
            activated = activateToolNames(activated, result.value.names)
          }
        }
        if (failure !== undefined) return finish('failed', 'error', errorToErrorInfo(failure, config.secrets))
        if (signal.aborted) return finish('aborted', 'aborted', abortError())
        return undefined
      }

      // generate-validate-revise: one response. Answers the finished result, or undefined to ask
      // the provider again (after a tool round or a revision request).
      async function artifactStep(calls, hosted, hostCalls, dispatcher) {
        const failWith = (verdict) => {
          const error = { name: 'ArtifactFailedError', code: verdict.reason, message: verdict.message }
          const metadata = { reason: verdict.reason, revisions, toolRounds: rounds }
          if (verdict.rejection) metadata.rejection = verdict.rejection
          emit({ type: 'artifact_failed', sessionId, runId, turn: turns, error, metadata })
          return finish('failed', 'artifact_failed', error)
        }
        const step = native.runArtifactStep(limits.toolCalls === 'bounded', limits.maxToolRounds, rounds, hostCalls)
        if (step === 'tool_round_limit') {
          for (let i = 0; i < calls.length; i++) if (!hosted[i]) transcript.push(toolMessage(notDispatched(calls[i], 'turn_limit')))
          return failWith(JSON.parse(native.runArtifactToolRoundLimit(limits.maxToolRounds)))
        }
        if (step === 'tools') {
          rounds += 1
          return runBatch(calls, hosted, dispatcher, 1)
        }
        // A candidate. Inert calls are answered with not-dispatched rows, so no call is left open.
        for (let i = 0; i < calls.length; i++) if (!hosted[i]) transcript.push(toolMessage(notDispatched(calls[i], 'inert')))
        const text = textOf(lastAssistant.content)
        let verdict
        let artifact
        try {
          artifact = await parser(text)
        } catch (err) {
          verdict = native.runArtifactVerdict(limits.maxRevisions, revisions, 'parse_error', errorToErrorInfo(err, config.secrets).message)
        }
        if (verdict === undefined) {
          let answer
          let threw
          try {
            if (artifactValidator) answer = await artifactValidator(artifact)
          } catch (err) {
            threw = err
          }
          if (threw !== undefined) {
            if (signal.aborted) return finish('aborted', 'aborted', abortError())
            const error = errorToErrorInfo(threw, config.secrets)
            const v = JSON.parse(native.runArtifactVerdict(limits.maxRevisions, revisions, 'validator_error'))
            emit({ type: 'artifact_failed', sessionId, runId, turn: turns, error, metadata: { reason: v.reason, revisions, toolRounds: rounds } })
            return finish('failed', 'error', error)
          }
          const detail = answer === undefined ? undefined : json(Array.isArray(config.secrets) ? native.redactSecrets(answer, config.secrets) : answer)
          verdict = native.runArtifactVerdict(limits.maxRevisions, revisions, 'validated', detail)
        }
        if (signal.aborted) return finish('aborted', 'aborted', abortError())
        const v = JSON.parse(verdict)
        if (v.action === 'accept') {
          emit({ type: 'artifact_accepted', sessionId, runId, turn: turns, artifact, metadata: { revisions, toolRounds: rounds } })
          return finish('succeeded', 'stop', undefined, { artifact })
        }
        if (v.action === 'fail') return failWith(v)
        revisions = v.revision
        emit({ type: 'artifact_rejected', sessionId, runId, turn: turns, metadata: { reason: v.reason, message: v.message, revision: v.revision } })
        transcript.push({ role: 'user', content: [{ type: 'text', text: v.request }] })
        return undefined
      }
    }

    return session
  }

  return { createAgent }
}
