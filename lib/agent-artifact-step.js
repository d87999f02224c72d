'use strict'
// generate-validate-revise: what the loop does with one response. Finishes the run (a RunEnd is
// thrown), or answers undefined to ask the provider again (after a tool round or a revision
// request). The native rules (src/run/artifact) decide every step. `r` is the run (lib/agent-run.js).
const native = require('../binding.js')
const { json, textOf, inputMessages, toolMessage, notDispatched } = require('./agent-values.js')
const { runBatch, refusedByChoice } = require('./agent-tool-batch.js')

async function artifactStep(r, calls, hosted, hostCalls, dispatcher) {
  const { sessionId, runId, signal, limits, redactor, secrets } = r
  const { redactWith } = r.api
  const emit = (event) => r.emit(event)
  const loop = r.loop
  const artifactCtx = { sessionId, runId, turn: r.turns, signal, metadata: r.metadata }
  // The run's error when the loop gives up, as `@arnilo/prism` words it: the first error of
  // the last validation, its `metadata.reason` as the code.
  const failWith = (validation) => {
    if (r.observed()) emit({ type: 'artifact_failed', sessionId, runId, turn: r.turns, attempt: r.attempts, result: validation })
    const reason = validation.metadata && validation.metadata.reason
    const error = {
      name: 'ArtifactFailed',
      code: typeof reason === 'string' || typeof reason === 'number' ? reason : 'artifact_failed',
      message: (validation.errors && validation.errors[0] && validation.errors[0].message) || 'artifact failed',
    }
    r.finish('failed', 'artifact_failed', error)
  }
  const step = native.runArtifactStep(limits.toolCalls === 'bounded', limits.maxToolRounds, r.rounds, hostCalls)
  if (step === 'tool_round_limit') {
    for (let i = 0; i < calls.length; i++) if (!hosted[i]) r.transcript.push(toolMessage(notDispatched(calls[i], 'turn_limit')))
    const v = JSON.parse(native.runArtifactToolRoundLimit(limits.maxToolRounds))
    failWith({ ok: false, errors: [{ message: 'maximum tool rounds exceeded' }], metadata: { reason: v.reason, detail: v.message, revisions: r.revisions, toolRounds: r.rounds } })
  }
  if (step === 'tools') {
    r.tracker.beginRound()
    // The turn's `toolChoice` holds here too: a refused call gets its blocked result and never runs.
    const { skip, refused } = refusedByChoice(r, calls, hosted, r.tracker.refusals(calls, hosted))
    await runBatch(r, calls, skip, dispatcher, 1, r.registry, refused)
    return undefined
  }
  // A candidate. Inert calls are answered with not-dispatched rows, so no call is left open.
  for (let i = 0; i < calls.length; i++) if (!hosted[i]) r.transcript.push(toolMessage(notDispatched(calls[i], 'inert')))
  const text = r.lastAssistant ? textOf(r.lastAssistant.content) : ''
  r.attempts += 1
  let verdict
  let artifact
  let parseFailure
  if (text.trim() === '') parseFailure = 'no artifact text in model output'
  else if (loop.parser) {
    try {
      const parsed = await loop.parser(text, artifactCtx)
      // `@arnilo/prism`'s ParseResult ({ ok, value } / { ok: false, error }), or the artifact itself.
      if (parsed !== null && typeof parsed === 'object' && typeof parsed.ok === 'boolean' && ('value' in parsed || 'error' in parsed || Object.keys(parsed).length === 1)) {
        if (parsed.ok && parsed.value !== undefined) artifact = parsed.value
        else parseFailure = typeof parsed.error === 'string' && parsed.error !== '' ? parsed.error : 'artifact parse failed'
      } else artifact = parsed
    } catch (err) {
      parseFailure = r.errorInfo(err).message
    }
  } else artifact = text
  if (r.observed()) emit({ type: 'artifact_validation_started', sessionId, runId, turn: r.turns, attempt: r.attempts })
  let answer
  let safe
  if (parseFailure !== undefined) {
    verdict = JSON.parse(native.runArtifactVerdict(limits.maxRevisions, r.revisions, 'parse_error', redactor ? redactWith(parseFailure, redactor) : parseFailure))
  } else {
    let threw
    try {
      if (loop.validator) answer = await loop.validator(artifact, artifactCtx)
    } catch (err) {
      threw = err
    }
    if (threw !== undefined) {
      if (signal.aborted) r.finish('aborted', 'aborted', r.abortError())
      const error = r.errorInfo(threw)
      if (r.observed()) emit({ type: 'artifact_failed', sessionId, runId, turn: r.turns, attempt: r.attempts, result: { ok: false, errors: [{ message: error.message }], metadata: { reason: 'validator_error' } } })
      r.finish('failed', 'error', error)
    }
    safe = answer === undefined ? undefined : secrets ? native.redactSecrets(answer, secrets) : answer
    verdict = JSON.parse(native.runArtifactVerdict(limits.maxRevisions, r.revisions, 'validated', safe === undefined ? undefined : json(safe)))
  }
  if (signal.aborted) r.finish('aborted', 'aborted', r.abortError())
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
  if (r.observed()) emit({ type: 'artifact_validation_finished', sessionId, runId, turn: r.turns, attempt: r.attempts, result: validation })
  if (verdict.action === 'accept') {
    if (r.observed()) emit({ type: 'artifact_finished', sessionId, runId, turn: r.turns, attempt: r.attempts, result: validation })
    r.finish('succeeded', 'stop', undefined, { artifact })
  }
  if (verdict.action === 'fail') failWith(validation)
  r.revisions = verdict.revision
  if (r.observed()) emit({ type: 'artifact_revision_started', sessionId, runId, turn: r.turns, attempt: r.attempts, failure: validation })
  let repair = [{ role: 'user', content: [{ type: 'text', text: verdict.request }] }]
  if (loop.repairer) repair = inputMessages(await loop.repairer(parseFailure !== undefined ? undefined : artifact, validation, artifactCtx))
  for (const m of repair) r.transcript.push(redactor ? redactWith(m, redactor) : m)
  return undefined
}

module.exports = { artifactStep }
