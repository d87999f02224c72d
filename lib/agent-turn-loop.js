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
  const t = prepareTurns(r)
  if (r.resumed) await resume(r, t)
  const { signal, limits } = r
  for (;;) {
    if (signal.aborted) r.finish('aborted', 'aborted', r.abortError())
    r.turns += 1

    // Assemble: narrowing, then disclosure; one provider turn over the folded history.
    const selection = await selectTools(r, t, inputText)
    if (r.observed()) r.emit({ type: 'turn_started', sessionId: r.sessionId, runId: r.runId, turn: r.turns, metadata: { tools: selection.tools } })
    r.tracker.charge('maxTurns')
    const request = await buildRequest(r, t, r.transcript, selection)
    const { calls } = r.retry ? await retriedTurn(r, provider, request, selection.tools) : await providerTurn(r, provider, request, selection.tools, 1, false)

    const hosted = calls.map((c) => c.authority === 'provider-hosted')
    const hostCalls = hosted.filter((h) => !h).length
    if (r.artifactLoop) {
      await artifactStep(r, calls, hosted, hostCalls, selection.dispatcher)
      continue
    }
    // The round limit ends the run cleanly (`turn_limit`); the turn limit is a breach (the charge above).
    const step = native.runNextStep(limits.maxToolRounds, r.turns + 1, r.rounds, r.turns, hostCalls)
    if (step === 'done') return new RunEnd('succeeded', 'stop')
    if (step === 'turn_limit') {
      for (let i = 0; i < calls.length; i++) if (!hosted[i]) r.transcript.push(toolMessage(notDispatched(calls[i], 'turn_limit')))
      return new RunEnd('succeeded', 'turn_limit')
    }
    const suspended = await toolRound(r, t, calls, hosted, selection.dispatcher)
    if (suspended !== undefined) return suspended
  }
}

// A resumed run: the decided calls of the suspension go to the transcript before the next provider turn.
async function resume(r, t) {
  const { resumed, sessionId, runId, signal } = r
  r.rounds = resumed.counters.rounds
  r.turns = resumed.counters.turns
  r.usageTotal.add(resumed.usage) // the run's usage before it suspended
  r.emit({ type: 'agent_resumed', sessionId, runId, version: resumed.version })
  await approval.replayDecided(resumed, { dispatcher: t.unfiltered, transcript: r.transcript, toolMessage, errorInfo: (err) => r.errorInfo(err), context: { sessionId, runId, signal, metadata: r.metadata } })
  if (signal.aborted) r.finish('aborted', 'aborted', r.abortError())
}

function retriedTurn(r, provider, request, tools) {
  return retryProviderTurn(r.retry, (attempt) => providerTurn(r, provider, request, tools, attempt, true), {
    signal: r.signal,
    sessionId: r.sessionId,
    runId: r.runId,
    middleware: r.config.middleware,
    emit: r.emit,
    giveUp: (error) => r.finish('failed', 'error', error),
  })
}

// One round of tool calls. Durable runs: gated calls wait for a decision; the others of the round
// still run. Answers the RunEnd of a run that suspended on them, else undefined.
async function toolRound(r, t, calls, hosted, dispatcher) {
  const { signal, durable } = r
  r.rounds += 1
  r.tracker.charge('maxToolRounds')
  const registry = t.snap.registry
  let gate
  try {
    if (durable) gate = await durable.gate(calls, hosted, registry, { signal, metadata: r.metadata })
  } catch (err) {
    for (let i = 0; i < calls.length; i++) if (!hosted[i]) r.transcript.push(toolMessage(notDispatched(calls[i], 'failed')))
    throw err
  }
  try {
    await runBatch(r, calls, gate ? gate.hosted : hosted, dispatcher, r.limits.toolConcurrency, registry)
  } catch (end) {
    // The round failed or aborted: the waiting calls get rows too, so no call is left open.
    if (gate) for (const p of gate.pending) r.transcript.push(toolMessage(notDispatched(p.call, signal.aborted ? 'aborted' : 'failed')))
    throw end
  }
  if (gate === undefined) return undefined
  for (const row of gate.rows) r.transcript.push(toolMessage(row))
  if (gate.pending.length === 0) return undefined
  const session = r.session
  const toolNames = session.lastGrant === null ? null : session.lastGrant
  return new RunEnd('suspended', undefined, undefined, await durable.suspend(gate.pending, { transcript: r.transcript, rounds: r.rounds, turns: r.turns, toolNames, activatedToolNames: session.activated, usage: r.usageTotal.value() }))
}

module.exports = { turnLoop }
