'use strict'
// `toolResultFold`, as `@arnilo/prism` has it: in the request of a later turn, a tool result at
// least `minAgeTurns` turns old whose text is at least `minBytes` bytes is replaced by
// `Tool result <name> [<id>]: <summary>`, the summary from the host's `summarize` capped at
// `maxSummaryBytes` (with `…`). Only the request is folded: the transcript keeps every result whole.
// A summarizer that throws leaves that result whole. Off unless `summarize` is given; the run's
// options replace the agent's.
//
// In the result pipeline's order (crates/core/src/run/machine.rs `RESULT_PIPELINE`): with a
// `redact` in the context (an agent run's redaction), the summarizer reads redacted text and its
// answer is redacted before it is bounded, so the cap never leaves part of a secret. The
// summarizer gets the run's `signal`, and its wait ends when the signal aborts (that result stays
// whole and the abort ends the run), so a summarizer that never settles cannot hold a run.
const { utf8Prefix } = require('./utf8.js')
const { rejectOnAbort } = require('./abort-watch.js')

const DEFAULT_TOOL_RESULT_FOLD_MIN_AGE_TURNS = 2
const DEFAULT_TOOL_RESULT_FOLD_MIN_BYTES = 4_096
const DEFAULT_TOOL_RESULT_FOLD_MAX_SUMMARY_BYTES = 512
const HARD_TOOL_RESULT_FOLD_MAX_SUMMARY_BYTES = 4_096
const TOOL_RESULT_FOLD_TURN_METADATA_KEY = 'prismToolResultTurn'

function assertPositiveInt(value, name, min, max) {
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    const err = new TypeError(`toolResultFold.${name} must be a safe integer from ${min} to ${max}`)
    err.code = 'invalid_tool_result_fold'
    throw err
  }
}

/** Run overrides agent; undefined (off) when neither gives `summarize`. */
function resolveToolResultFold(run, agent) {
  const options = run ?? agent
  if (!options?.summarize) return undefined
  if (typeof options.summarize !== 'function') {
    const err = new TypeError('toolResultFold.summarize must be a function')
    err.code = 'invalid_tool_result_fold'
    throw err
  }
  const minAgeTurns = options.minAgeTurns ?? DEFAULT_TOOL_RESULT_FOLD_MIN_AGE_TURNS
  const minBytes = options.minBytes ?? DEFAULT_TOOL_RESULT_FOLD_MIN_BYTES
  const maxSummaryBytes = options.maxSummaryBytes ?? DEFAULT_TOOL_RESULT_FOLD_MAX_SUMMARY_BYTES
  assertPositiveInt(minAgeTurns, 'minAgeTurns', 1, 1_024)
  assertPositiveInt(minBytes, 'minBytes', 1, 32 * 1024 * 1024)
  assertPositiveInt(maxSummaryBytes, 'maxSummaryBytes', 1, HARD_TOOL_RESULT_FOLD_MAX_SUMMARY_BYTES)
  return { minAgeTurns, minBytes, maxSummaryBytes, summarize: options.summarize }
}

const textBytes = (text) => Buffer.byteLength(text, 'utf8')

function formatFoldedToolResult(summary) {
  return summary
}

function foldedToolResultHeader(toolName, toolCallId, summary) {
  return `Tool result ${toolName} [${toolCallId}]: ${summary}`
}

function toolResultText(result, error, extra) {
  let first
  try {
    first = JSON.stringify(error ?? result ?? null)
  } catch {
    first = '"<not JSON>"'
  }
  const parts = [first]
  for (const block of extra ?? []) {
    if (block !== null && typeof block === 'object' && block.type === 'text' && typeof block.text === 'string') parts.push(block.text)
  }
  return parts.join('\n')
}

// At most `maxBytes` UTF-8 bytes, ending in `…`, never cutting a character.
function capSummaryBytes(summary, maxBytes) {
  if (textBytes(summary) <= maxBytes) return summary
  return `${utf8Prefix(summary, Math.max(0, maxBytes - 3))}…` // `…` is 3 bytes
}

function readToolResultTurn(metadata) {
  const value = metadata?.[TOOL_RESULT_FOLD_TURN_METADATA_KEY]
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0 ? value : undefined
}

// The provider turn each tool message answers: its stamp, else the count of assistant messages so far.
function inferToolResultTurns(history) {
  const turns = new Array(history.length).fill(1)
  let providerTurn = 0
  let toolTurn = 1
  for (let i = 0; i < history.length; i++) {
    const message = history[i]
    if (message?.role === 'assistant') {
      providerTurn += 1
      toolTurn = providerTurn
    }
    if (message?.role === 'tool') turns[i] = readToolResultTurn(message.metadata) ?? toolTurn
  }
  return turns
}

function throwIfAborted(signal) {
  if (signal?.aborted) throw signal.reason instanceof Error ? signal.reason : new Error('Tool result fold aborted')
}

async function maybeFold(options, context, toolResultTurn, toolCallId, toolName, text, apply) {
  if (context.turn - toolResultTurn < options.minAgeTurns) return undefined
  if (textBytes(text) < options.minBytes) return undefined
  throwIfAborted(context.signal)
  const redact = typeof context.redact === 'function' ? context.redact : undefined
  const signal = context.signal
  try {
    const input = { sessionId: context.sessionId, runId: context.runId, turn: toolResultTurn, toolCallId, toolName, text: redact ? redact(text) : text }
    if (signal) input.signal = signal
    const pending = options.summarize(input)
    const summary = signal ? await rejectOnAbort(pending, signal) : await pending
    const said = String(summary)
    return apply(capSummaryBytes(redact ? String(redact(said)) : said, options.maxSummaryBytes))
  } catch {
    throwIfAborted(signal)
    return undefined
  }
}

/** The history as the provider sees it, old large tool results folded; `history` is not changed. */
async function foldToolResultHistory(history, options, context) {
  if (history.length === 0) return history
  const turns = inferToolResultTurns(history)
  const out = []
  for (let i = 0; i < history.length; i++) {
    const message = history[i]
    const block = message?.role === 'tool' && Array.isArray(message.content) ? message.content.find((part) => part?.type === 'tool_result') : undefined
    if (block === undefined) {
      out.push(message)
      continue
    }
    const folded = await maybeFold(options, context, turns[i] ?? context.turn, block.toolCallId, block.name, toolResultText(block.result, block.error, message.content), (summary) => ({
      ...message,
      content: message.content.map((part) => (part?.type === 'tool_result' ? { ...part, result: foldedToolResultHeader(block.name, block.toolCallId, summary), error: undefined } : part)),
      metadata: { ...message.metadata, prismFolded: true },
    }))
    out.push(folded ?? message)
  }
  return out
}

/** In-flight results folded the same way (their turn is the context's: never old enough at once). */
async function foldToolResults(results, options, context) {
  if (results.length === 0) return results
  const out = []
  for (const result of results) {
    const folded = await maybeFold(options, context, context.turn, result.toolCallId, result.name, toolResultText(result.value, result.error, result.content), (summary) => ({
      ...result,
      value: foldedToolResultHeader(result.name, result.toolCallId, summary),
      error: undefined,
      metadata: { ...result.metadata, prismFolded: true },
    }))
    out.push(folded ?? result)
  }
  return out
}

// The package entry publishes this whole object (index.js): every name here is public API.
module.exports = {
  DEFAULT_TOOL_RESULT_FOLD_MIN_AGE_TURNS,
  DEFAULT_TOOL_RESULT_FOLD_MIN_BYTES,
  DEFAULT_TOOL_RESULT_FOLD_MAX_SUMMARY_BYTES,
  HARD_TOOL_RESULT_FOLD_MAX_SUMMARY_BYTES,
  TOOL_RESULT_FOLD_TURN_METADATA_KEY,
  resolveToolResultFold,
  foldToolResultHistory,
  foldToolResults,
  foldedToolResultHeader,
  formatFoldedToolResult,
}
