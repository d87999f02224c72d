'use strict'
// Output budgets (this package's own; `@arnilo/prism` has none): `createAgent({ toolOutputBudget:
// { maxBytes } })` and a tool's own `outputBudget: { maxBytes }` (the tool's wins) bound what one
// tool result puts into the next request. A result whose model-facing text — its `value`, a string
// as is, anything else as JSON — is over `maxBytes` UTF-8 bytes becomes a string of at most
// `maxBytes` bytes: its head, a marker `\n…[N bytes omitted]…\n`, its tail, cut only between
// characters. The result's `metadata.outputBudget` says `{ cut: true, originalBytes, omittedBytes,
// maxBytes }`, and the ledger row holds that result. Error results and content blocks are not cut.
// `dispatchToolCall` used directly is not budgeted: only the agent loop applies it.
//
// Redaction comes first (crates/core/src/run/machine.rs `RESULT_PIPELINE`): in an agent run the
// tool's context carries the run's result redaction under `RESULT_REDACTOR`, and the value passes
// it before it is measured and cut, so no cut leaves part of a secret the redactor would no longer
// match. Dispatch redacts the result again afterwards, which leaves redacted text as it is.

/** The key of a tool context's result redaction (`(value) => value`), set by the agent run. */
const RESULT_REDACTOR = Symbol('prism-tools-native.resultRedactor')

const MIN_OUTPUT_BUDGET_BYTES = 64
const MAX_OUTPUT_BUDGET_BYTES = 64 * 1024 * 1024

function refused(where, message) {
  const err = new TypeError(`${where}: ${message}`)
  err.code = 'invalid_output_budget'
  return err
}

/** `{ maxBytes }` checked, or undefined when not given (`false` and null too). */
function resolveOutputBudget(budget, where) {
  if (budget === undefined || budget === null || budget === false) return undefined
  if (typeof budget !== 'object') throw refused(where, 'must be an object { maxBytes }')
  const { maxBytes } = budget
  if (!Number.isSafeInteger(maxBytes) || maxBytes < MIN_OUTPUT_BUDGET_BYTES || maxBytes > MAX_OUTPUT_BUDGET_BYTES) {
    throw refused(where, `maxBytes must be a safe integer from ${MIN_OUTPUT_BUDGET_BYTES} to ${MAX_OUTPUT_BUDGET_BYTES}`)
  }
  return { maxBytes }
}

const marker = (omitted) => `\n…[${omitted} bytes omitted]…\n`

// The largest end ≤ `at` that does not split a character of `bytes`.
function backToBoundary(bytes, at) {
  let i = at
  while (i > 0 && i < bytes.length && (bytes[i] & 0xc0) === 0x80) i--
  return i
}

/** `text` within `maxBytes`: unchanged when it fits, else head + marker + tail. */
function cutText(text, maxBytes) {
  const bytes = Buffer.from(text, 'utf8')
  const originalBytes = bytes.length
  if (originalBytes <= maxBytes) return undefined
  let markerBytes = Buffer.byteLength(marker(originalBytes), 'utf8') // the longest the count can be
  for (;;) {
    const room = maxBytes - markerBytes
    const head = backToBoundary(bytes, Math.ceil(room / 2))
    // The tail starts on a character's first byte, at most `room - head` bytes from the end.
    let tailStart = originalBytes - (room - head)
    while (tailStart < originalBytes && (bytes[tailStart] & 0xc0) === 0x80) tailStart++
    const omittedBytes = tailStart - head
    const m = marker(omittedBytes)
    const mBytes = Buffer.byteLength(m, 'utf8')
    if (mBytes <= markerBytes) {
      return {
        text: bytes.subarray(0, head).toString('utf8') + m + bytes.subarray(tailStart).toString('utf8'),
        originalBytes,
        omittedBytes,
      }
    }
    markerBytes = mBytes
  }
}

function modelText(value) {
  if (typeof value === 'string') return value
  try {
    return JSON.stringify(value)
  } catch {
    return undefined
  }
}

/** The result within `budget` (a copy when cut), redacted by `redact` first when given. */
function applyOutputBudget(result, budget, redact) {
  if (budget === undefined || result === null || typeof result !== 'object') return result
  if (result.error !== undefined && result.error !== null) return result
  if (result.value === undefined) return result
  const value = typeof redact === 'function' ? redact(result.value) : result.value
  const text = modelText(value)
  const cut = typeof text === 'string' ? cutText(text, budget.maxBytes) : undefined
  if (cut === undefined) return value === result.value ? result : { ...result, value }
  return {
    ...result,
    value: cut.text,
    metadata: { ...result.metadata, outputBudget: { cut: true, originalBytes: cut.originalBytes, omittedBytes: cut.omittedBytes, maxBytes: budget.maxBytes } },
  }
}

module.exports = { RESULT_REDACTOR, MIN_OUTPUT_BUDGET_BYTES, MAX_OUTPUT_BUDGET_BYTES, resolveOutputBudget, applyOutputBudget, cutText }
