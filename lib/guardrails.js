'use strict'
// `runGuardrails`: evaluates the guardrails of one stage outside dispatch (hosts run the `input` and
// `output` stages themselves), with `@arnilo/prism`'s records, bounds and events. Dispatch runs its
// `tool_input` / `tool_output` stages natively; this is the same contract for a host's own stages.

const { GuardrailError, codedError } = require('./errors.js')
const { utf8Prefix: boundText } = require('./utf8.js')

const MAX_GUARDRAIL_CONCURRENCY = 16
const MAX_NAME_BYTES = 128
const MAX_REASON_BYTES = 4 * 1024
const MAX_METADATA_BYTES = 16 * 1024
const ACTIONS = new Set(['allow', 'block', 'tripwire', 'interrupt'])
const STAGE_KEYS = { input: 'input', output: 'output', tool_input: 'toolInput', tool_output: 'toolOutput' }

function redactText(redactor, text) {
  if (!redactor) return text
  const out = redactor.redact(text)
  return typeof out === 'string' ? out : text
}

// Metadata as JSON: redacted, at most 16 KiB (else `{ truncated: true }`), `{ invalid: true }` when it
// cannot be serialised.
function boundedMetadata(value, redactor) {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined
  try {
    const json = JSON.stringify(redactor ? redactor.redact(value) : value)
    if (!json || Buffer.byteLength(json) > MAX_METADATA_BYTES) return { truncated: true }
    const parsed = JSON.parse(json)
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? parsed : undefined
  } catch {
    return { invalid: true }
  }
}

function decisionRecord(name, stage, action, reason, metadata, redactor) {
  return {
    guardrail: boundText(typeof name === 'string' ? name : '', MAX_NAME_BYTES) || 'invalid',
    stage,
    action,
    reason: typeof reason === 'string' ? boundText(redactText(redactor, reason), MAX_REASON_BYTES) : undefined,
    metadata: boundedMetadata(metadata, redactor),
  }
}

// The metadata of a guardrail that threw or rejected: the cause's message only (so it stays
// diagnosable without leaking internals), redacted and bounded, as `{ error }`.
function failedMetadata(error, redactor) {
  let message
  try {
    message = error instanceof Error ? error.message : String(error)
  } catch {
    message = 'unreadable error'
  }
  return { error: boundText(redactText(redactor, typeof message === 'string' ? message : 'unreadable error'), MAX_REASON_BYTES) }
}

async function evaluate(guardrail, options, signal) {
  const { stage, redactor } = options
  if (
    !guardrail ||
    typeof guardrail.name !== 'string' ||
    guardrail.name === '' ||
    guardrail.name.length > MAX_NAME_BYTES ||
    guardrail.stage !== stage ||
    typeof guardrail.evaluate !== 'function'
  ) {
    return decisionRecord(guardrail?.name ?? 'invalid', stage, 'tripwire', 'guardrail_invalid', undefined, redactor)
  }
  try {
    const decision = await guardrail.evaluate({ ...options.context, stage, value: options.value, signal })
    if (!decision || !ACTIONS.has(decision.action)) {
      return decisionRecord(guardrail.name, stage, 'tripwire', 'guardrail_invalid_decision', undefined, redactor)
    }
    return decisionRecord(guardrail.name, stage, decision.action, decision.reason, decision.metadata, redactor)
  } catch (error) {
    return decisionRecord(guardrail.name, stage, 'tripwire', 'guardrail_failed', failedMetadata(error, redactor), redactor)
  }
}

function concurrencyOf(value) {
  if (value === undefined) return 1
  if (!Number.isSafeInteger(value) || value < 1 || value > MAX_GUARDRAIL_CONCURRENCY) {
    throw codedError(
      RangeError,
      `Guardrail maxConcurrency must be a safe integer from 1 to ${MAX_GUARDRAIL_CONCURRENCY}`,
      'ERR_PRISM_INVALID_OPTION',
    )
  }
  return value
}

/**
 * Evaluates the guardrails of `options.stage` in declaration order (or up to `maxConcurrency` at once,
 * still reported in declaration order); the first decision other than `allow` stops the rest and aborts
 * their signal. Emits one `guardrail_decision` per record; resolves to `{ records, terminal? }`.
 */
async function runGuardrails(options) {
  const key = STAGE_KEYS[options?.stage]
  if (key === undefined) {
    throw codedError(TypeError, 'runGuardrails: stage must be "input", "output", "tool_input" or "tool_output"', 'ERR_PRISM_INVALID_OPTION')
  }
  const guards = options.guardrails?.[key] ?? []
  if (guards.length === 0) return { records: [] }
  const maxConcurrency = concurrencyOf(options.guardrails.maxConcurrency)
  const context = options.context ?? {}
  const controller = new AbortController()
  const signal = context.signal ? AbortSignal.any([context.signal, controller.signal]) : controller.signal
  const records = new Array(guards.length)
  let next = 0
  let stopped = false
  const worker = async () => {
    while (!stopped) {
      const index = next++
      if (index >= guards.length) return
      const record = await evaluate(guards[index], options, signal)
      // A sibling may have reached a terminal decision while this one settled.
      if (stopped) return
      records[index] = record
      if (record.action !== 'allow') {
        stopped = true
        controller.abort(new GuardrailError(record))
      }
    }
  }
  await Promise.all(Array.from({ length: Math.min(maxConcurrency, guards.length) }, worker))
  const done = records.filter((record) => record !== undefined)
  for (const record of done) {
    await options.emit?.({
      type: 'guardrail_decision',
      sessionId: context.sessionId,
      runId: context.runId,
      toolCallId: context.toolCallId,
      toolName: context.toolName,
      record,
    })
  }
  return { records: done, terminal: done.find((record) => record.action !== 'allow') }
}

/** Throws the `GuardrailError` of `result.terminal`, when there is one. */
function assertGuardrailsAllowed(result) {
  if (result.terminal) throw new GuardrailError(result.terminal)
}

// `boundedMetadata` and `failedMetadata` also shape the records of dispatch's own guardrail stages
// (lib/dispatch-guardrails.js), so both runners write the same records.
module.exports = { runGuardrails, assertGuardrailsAllowed, MAX_GUARDRAIL_CONCURRENCY, boundedMetadata, failedMetadata }
