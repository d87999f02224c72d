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
const { runBatch, refusedByChoice } = require('./agent-tool-batch.js')
const { artifactStep } = require('./agent-artifact-step.js')
const approval = require('./approval.js')
const { prepareTurns, selectTools, buildRequest } = require('./agent-assemble.js')

async function turnLoop(r, provider, inputText) {
  const t = prepareTurns(r)
  if (r.resumed) await resume(r, t)
  const { signal, tracker } = r
  for (;;) {
    if (signal.aborted) r.finish('aborted', 'aborted', r.abortError())
    r.turns = tracker.turns + 1 // the turn about to start, as narrowing and events number it

    // Assemble: narrowing, then disclosure; one provider turn over the folded history.
    const selection = await selectTools(r, t, inputText)
    if (r.observed()) r.emit({ type: 'turn_started', sessionId: r.sessionId, runId: r.runId, turn: r.turns, metadata: { tools: selection.tools } })
    tracker.beginTurn()
    const request = await buildRequest(r, t, r.transcript, selection)
    const { calls } = r.retry ? await retriedTurn(r, provider, request, selection.tools) : await providerTurn(r, provider, request, selection.tools, 1, false)

    const hosted = calls.map((c) => c.authority === 'provider-hosted')
    if (r.artifactLoop) {
      await artifactStep(r, calls, hosted, hosted.filter((h) => !h).length, selection.dispatcher)
      continue
    }
    // The run machine answers what follows: done, the round limit (a clean end, `turn_limit`), or a
    // round in which the calls the turn's `toolChoice` refuses are blocked.
    const next = tracker.afterTurn(calls, hosted)
    if (next.finish === 'stop') return new RunEnd('succeeded', 'stop')
    if (next.finish === 'turn_limit') {
      for (let i = 0; i < calls.length; i++) if (!hosted[i]) r.transcript.push(toolMessage(notDispatched(calls[i], 'turn_limit')))
      return new RunEnd('succeeded', 'turn_limit')
    }
    const suspended = await toolRound(r, t, calls, hosted, selection.dispatcher, next.refused.length > 0 ? next : undefined)
    if (suspended !== undefined) return suspended
  }
}

// A resumed run: the decided calls of the suspension go to the transcript before the next provider turn.
async function resume(r, t) {
  const { resumed, sessionId, runId, signal } = r
  r.usageTotal.add(resumed.usage) // the run's usage before it suspended
  r.emit({ type: 'agent_resumed', sessionId, runId, version: resumed.version })
  await approval.replayDecided(resumed, { dispatcher: t.unfiltered, transcript: r.transcript, toolMessage, errorInfo: (err) => r.errorInfo(err), context: r.dispatchContext() })
  if (signal.aborted) r.finish('aborted', 'aborted', r.abortError())
}

function retriedTurn(r, provider, request, tools) {
  return retryProviderTurn(r.retry, (attempt) => providerTurn(r, provider, request, tools, attempt, true), {
    signal: r.signal,
    sessionId: r.sessionId,
    runId: r.runId,
    middleware: r.config.middleware,
    emit: (event) => r.emit(event),
    giveUp: (error) => r.finish('failed', 'error', error),
  })
}

// One round of tool calls. Calls the turn's `toolChoice` refuses (`refusals`: the machine's
// `{ refused, messages }`) get a blocked result and never run. Durable runs: gated calls wait for a
// decision; the others of the round still run. Answers the RunEnd of a run that suspended on them,
// else undefined.
async function toolRound(r, t, calls, hosted, dispatcher, refusals) {
  const { signal, durable } = r
  r.tracker.beginRound()
  const registry = t.snap.registry
  const { skip, refused } = refusedByChoice(r, calls, hosted, refusals)
  let gate
  try {
    if (durable) gate = await durable.gate(calls, skip, registry, { signal, metadata: r.metadata })
  } catch (err) {
    for (let i = 0; i < calls.length; i++) if (!hosted[i]) r.transcript.push(toolMessage(refused?.get(i) ?? notDispatched(calls[i], 'failed')))
    throw err
  }
  try {
    await runBatch(r, calls, gate ? gate.hosted : skip, dispatcher, r.limits.toolConcurrency, registry, refused)
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
  return new RunEnd('suspended', undefined, undefined, await durable.suspend(gate.pending, { transcript: r.transcript, budget: r.tracker.checkpoint(), toolNames, activatedToolNames: session.activated, usage: r.usageTotal.value() }, r.signal))
}

module.exports = { turnLoop }
