'use strict'
// The turns of a run: assemble (narrowing, then disclosure), one provider turn (with retries), then
// the next step the native rules answer: done, the round limit, a tool round (behind the durable
// approval gate) or, for generate-validate-revise, the artifact step. Answers the RunEnd of a run
// that succeeded; every other end is thrown. `r` is the run (lib/agent-run.js). A host's own loop
// strategy runs in lib/agent-loop.js instead; both build their requests with lib/agent-assemble.js.
const native = require('../binding.js')
const { RunEnd, toolMessage, notDispatched } = require('./agent-values.js')
const { retryProviderTurn } = require('./retry.js')
const { providerTurn } = require('./agent-provider-turn.js')
const { runBatch } = require('./agent-tool-batch.js')
const { artifactStep } = require('./agent-artifact-step.js')
const approval = require('./approval.js')
const { prepareTurns, selectTools, buildRequest } = require('./agent-assemble.js')

async function turnLoop(r, provider, inputText) {
  const { config, sessionId, runId, signal, limits, session } = r
  const emit = r.emit
  const t = prepareTurns(r)
  const registry = t.snap.registry
  const unfiltered = t.unfiltered
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

  for (;;) {
    if (signal.aborted) r.finish('aborted', 'aborted', r.abortError())
    r.turns += 1

    // Assemble: narrowing, then disclosure; one provider turn over the folded history.
    const selection = await selectTools(r, t, inputText)
    const { tools, dispatcher } = selection
    if (r.observed()) emit({ type: 'turn_started', sessionId, runId, turn: r.turns, metadata: { tools } })
    r.tracker.charge('maxTurns')
    const request = await buildRequest(r, t, r.transcript, selection)
    const retry = r.retry
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
