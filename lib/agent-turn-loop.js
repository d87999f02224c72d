'use strict'
// The turns of a run: assemble (narrowing, then disclosure), one provider turn (with retries), then
// the next step the native rules answer: done, the round limit, a tool round (behind the durable
// approval gate) or, for generate-validate-revise, the artifact step. Answers the RunEnd of a run
// that succeeded; every other end is thrown. `r` is the run (lib/agent-run.js).
const native = require('../binding.js')
const { RunEnd, decode, json, textOf, toolMessage, notDispatched } = require('./agent-values.js')
const { retryProviderTurn, AGENT_RETRIES } = require('./retry.js')
const { providerTurn } = require('./agent-provider-turn.js')
const { runBatch } = require('./agent-tool-batch.js')
const { artifactStep } = require('./agent-artifact-step.js')
const approval = require('./approval.js')
const { createJsonSchemaToolArgumentValidator } = require('./validation.js')
const { resolveToolResultFold, foldToolResultHistory } = require('./tool-result-fold.js')
const { toolChoiceForTurn } = require('./providers/request-options.js')

// Arguments are checked against each tool's `parameters` unless the host turns it off: the run's
// `validate`, else the agent's `validator`, else the package's JSON Schema validator (one, shared by
// every agent, so its compiled schemas are too). `false` at either level turns validation off.
let defaultValidator
function validatorOf(options, config) {
  const chosen = options.validate !== undefined ? options.validate : config.validator
  if (chosen === false || chosen === null) return undefined
  if (chosen !== undefined) return chosen
  if (defaultValidator === undefined) defaultValidator = createJsonSchemaToolArgumentValidator()
  return defaultValidator
}

async function turnLoop(r, provider, inputText) {
  const { config, options, sessionId, runId, signal, redactor, limits, session } = r
  const { createToolDispatcher, redactWith, search } = r.api
  const { selectDisclosedTools, SEARCH_TOOLS_NAME } = search
  const emit = r.emit
  const allowHidden = r.pick('allowHiddenToolCalls') === true
  session.lastGrant = r.grant.stored
  const searchConfig = r.pick('toolsSearch') ?? {}
  const searchOptions = {
    enabled: r.disclosure === 'search',
    queryBytes: searchConfig.queryBytes,
    defaultK: searchConfig.defaultK,
    key: r.disclosure === 'search' ? `${searchConfig.queryBytes}/${searchConfig.defaultK}` : '',
  }
  const snap = r.snapshotOf(config, r.registered, r.grant.indices, searchOptions)
  const { tools: snapshot, names: runNames, registry, index, searchTool } = snap
  r.searchTool = searchTool
  r.registry = registry
  const dispatcherOptions = {
    registry,
    middleware: config.middleware,
    validate: validatorOf(options, config),
    emit: r.emitRedacted,
    secrets: r.secrets,
    redactor,
    ledger: r.ledger !== undefined ? r.ledger.tools : options.runLedger ?? config.runLedger, // tool rows join the run's queue
    ownership: options.ownership ?? config.ownership,
    identity: options.identity ?? config.identity,
    trust: config.trust,
    permission: config.permission,
    guardrails: r.guardrails,
    effectStore: options.effectStore ?? config.effectStore,
  }
  const unfiltered = createToolDispatcher(dispatcherOptions)
  const system = typeof config.instructions === 'string' && config.instructions !== ''
    ? [{ role: 'system', content: [{ type: 'text', text: `System instruction:\n${config.instructions}` }] }]
    : []
  const resumed = r.resumed
  if (resumed) {
    // The decided calls of the suspension go to the transcript before the next provider turn.
    r.rounds = resumed.counters.rounds
    r.turns = resumed.counters.turns
    r.usageTotal.add(resumed.usage) // the run's usage before it suspended
    emit({ type: 'agent_resumed', sessionId, runId, version: resumed.version })
    await approval.replayDecided(resumed, { dispatcher: unfiltered, transcript: r.transcript, toolMessage, errorInfo: r.errorInfo, context: { sessionId, runId, signal, metadata: r.metadata } })
    if (signal.aborted) r.finish('aborted', 'aborted', r.abortError())
  }
  let hashCache // [tools array, metadata] for the unchanged request list
  let narrowCache // [kept key, tools, dispatcher] for an unchanged narrowed set
  const narrowing = r.pick('toolNarrowing')
  const fold = resolveToolResultFold(options.toolResultFold, config.toolResultFold)

  for (;;) {
    if (signal.aborted) r.finish('aborted', 'aborted', r.abortError())
    r.turns += 1

    // Assemble: narrowing, then disclosure.
    let visible = snapshot
    let dispatcher = unfiltered
    if (typeof narrowing === 'function') {
      const answer = await narrowing({ turn: r.turns, lastAssistantText: r.lastAssistant ? textOf(r.lastAssistant.content) : undefined, toolIds: runNames.slice() })
      const clamped = decode(native.runClampNarrowing(snap.joined, runNames.length, json(answer)))
      if (clamped.dropped.length > 0) emit({ type: 'tool_narrowing_clamped', sessionId, runId, turn: r.turns, dropped: clamped.dropped })
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
        activated: session.activated,
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
    if (r.observed()) emit({ type: 'turn_started', sessionId, runId, turn: r.turns, metadata: { tools } })
    r.tracker.charge('maxTurns')

    // One provider turn. The redactor sees the whole request (messages, tools, metadata)
    // before the provider does; the signal is the run's own object.
    // With `toolResultFold`, old large tool results are folded in the request only.
    const history = fold === undefined ? r.transcript : await foldToolResultHistory(r.transcript, fold, { sessionId, runId, turn: r.turns, signal })
    let request = { model: r.model, messages: system.concat(history), tools: requestTools, metadata: { ...r.metadata, tools } }
    // `toolChoice` (the run's, else the agent's) goes on the request's options, checked against this turn's tools.
    const toolChoice = toolChoiceForTurn(r.pick('toolChoice'), requestTools, { toolRounds: r.rounds })
    if (toolChoice !== undefined) request.options = { toolChoice }
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
    const retry = r.retry
    if (retry) request[AGENT_RETRIES] = true
    const { calls } = retry
      ? await retryProviderTurn(retry, (attempt) => providerTurn(r, provider, request, tools, attempt, true), { signal, sessionId, runId, middleware: config.middleware, emit, giveUp: (error) => r.finish('failed', 'error', error) })
      : await providerTurn(r, provider, request, tools, 1, false)

    const hosted = calls.map((c) => c.authority === 'provider-hosted')
    const hostCalls = hosted.filter((h) => !h).length
    if (r.artifactLoop) {
      await artifactStep(r, calls, hosted, hostCalls, dispatcher)
      continue
    }
    // The round limit ends the run cleanly (`turn_limit`); the turn limit is a breach (the charge above).
    const step = native.runNextStep(limits.maxToolRounds, r.turns + 1, r.rounds, r.turns, hostCalls)
    if (step === 'done') return new RunEnd('succeeded', 'stop')
    if (step === 'turn_limit') {
      for (let i = 0; i < calls.length; i++) if (!hosted[i]) r.transcript.push(toolMessage(notDispatched(calls[i], 'turn_limit')))
      return new RunEnd('succeeded', 'turn_limit')
    }
    r.rounds += 1
    r.tracker.charge('maxToolRounds')
    // Durable runs: gated calls wait for a decision; the others of the round still run.
    const durable = r.durable
    let gate
    try {
      if (durable) gate = await durable.gate(calls, hosted, registry, { signal, metadata: r.metadata })
    } catch (err) {
      for (let i = 0; i < calls.length; i++) if (!hosted[i]) r.transcript.push(toolMessage(notDispatched(calls[i], 'failed')))
      throw err
    }
    try {
      await runBatch(r, calls, gate ? gate.hosted : hosted, dispatcher, limits.toolConcurrency, registry)
    } catch (end) {
      // The round failed or aborted: the waiting calls get rows too, so no call is left open.
      if (gate) for (const p of gate.pending) r.transcript.push(toolMessage(notDispatched(p.call, signal.aborted ? 'aborted' : 'failed')))
      throw end
    }
    if (gate) {
      for (const row of gate.rows) r.transcript.push(toolMessage(row))
      if (gate.pending.length > 0) {
        const toolNames = session.lastGrant === null ? null : session.lastGrant
        return new RunEnd('suspended', undefined, undefined, await durable.suspend(gate.pending, { transcript: r.transcript, rounds: r.rounds, turns: r.turns, toolNames, activatedToolNames: session.activated, usage: r.usageTotal.value() }))
      }
    }
  }
}

module.exports = { turnLoop }
