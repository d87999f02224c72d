'use strict'
// The calls of one turn: the native plan says which run and how many at once. Rows go to the
// transcript in call order, with the blocked results of calls the turn's `toolChoice` refused
// (`refused`: call index -> result); a run-level failure or an abort finishes the run. `r` is the
// run (lib/agent-run.js).
const native = require('../binding.js')
const { toolMessage, notDispatched } = require('./agent-values.js')

const TOOL_CHOICE_DENIED = JSON.parse(native.runBudgetTables()).toolChoiceDenied

async function runBatch(r, calls, hosted, dispatcher, concurrency, registry, refused) {
  const { signal } = r
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
  const context = r.dispatchContext()
  const worker = async () => {
    while (failure === undefined && !signal.aborted && next < order.length) {
      const i = order[next++]
      const call = calls[i]
      try {
        r.tracker.toolCall()
        results[i] = await dispatcher.dispatch(call, context)
      } catch (err) {
        if (failure === undefined) failure = err
        results[i] = { toolCallId: call.id, name: call.name, error: r.errorInfo(err) }
      }
    }
  }
  if (width === 1) await worker()
  else {
    const workers = []
    for (let w = 0; w < width; w++) workers.push(worker())
    await Promise.all(workers)
  }
  const why = failure !== undefined ? 'failed' : 'aborted'
  const { SEARCH_TOOLS_NAME, activateToolNames } = r.api.search
  const rows = refused === undefined ? order : [...order, ...refused.keys()].sort((a, b) => a - b)
  for (const i of rows) {
    const result = refused?.get(i) ?? results[i] ?? notDispatched(calls[i], why)
    r.transcript.push(toolMessage(result))
    if (calls[i].name === SEARCH_TOOLS_NAME && r.searchTool !== undefined && !result.error && result.value && Array.isArray(result.value.names)) {
      r.session.activated = activateToolNames(r.session.activated, result.value.names)
    }
  }
  // An abort wins: a dispatch the abort itself ended (a guardrail or tool cut off by the run's
  // signal) rejects with a failure of its own, but the run ended because it was aborted.
  if (signal.aborted) r.finish('aborted', 'aborted', r.abortError())
  else if (failure !== undefined) r.finish('failed', 'error', r.errorInfo(failure))
}

/**
 * The round's calls the turn's `toolChoice` refuses (`refusals`: the machine's `{ refused,
 * messages }`, undefined for none): `skip` (hosted plus refused) and `refused` (call index -> its
 * blocked result, with its `tool_execution_blocked` event; the dispatcher never sees the call).
 */
function refusedByChoice(r, calls, hosted, refusals) {
  if (refusals === undefined || refusals.refused.length === 0) return { skip: hosted, refused: undefined }
  const skip = hosted.slice()
  const refused = new Map()
  refusals.refused.forEach((i, j) => {
    skip[i] = true
    refused.set(i, blockedByChoice(r, calls[i], refusals.messages[j]))
  })
  return { skip, refused }
}

function blockedByChoice(r, call, message) {
  const result = { toolCallId: call.id, name: call.name, error: { name: 'ToolChoiceError', code: TOOL_CHOICE_DENIED, message } }
  if (r.observed()) {
    r.emit({ type: 'tool_execution_blocked', sessionId: r.sessionId, runId: r.runId, toolCallId: call.id, name: call.name, toolName: call.name, reason: TOOL_CHOICE_DENIED, error: result.error, metadata: { durationMs: 0, status: 'blocked' } })
  }
  return result
}

module.exports = { runBatch, refusedByChoice, blockedByChoice }
