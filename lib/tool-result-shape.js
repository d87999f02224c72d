'use strict'
// Bare tool results: what a tool's `execute` returns, made a ToolResult the model can be answered
// with. An object with any own key among `toolCallId`, `name`, `value`, `error`, `content` is a
// ToolResult; a missing or empty `toolCallId` / `name` is filled from the call (a copy: the tool's
// object is not changed). Anything else — a number, a string, an array, null, undefined, a domain
// object — becomes `{ toolCallId, name, value }`. So no result goes out with an empty
// `tool_call_id` (an OpenAI endpoint answers 400 to that).

const { resolveOutputBudget, applyOutputBudget, RESULT_REDACTOR } = require('./output-budget.js')

const RESULT_KEYS = ['toolCallId', 'name', 'value', 'error', 'content']
const own = Object.prototype.hasOwnProperty

function isToolResultShape(value) {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false
  for (const key of RESULT_KEYS) if (own.call(value, key)) return true
  return false
}

const filled = (v) => typeof v === 'string' && v !== ''

/** `value` as a ToolResult of the call `toolCallId` to `name`. */
function toToolResult(value, toolCallId, name) {
  if (isToolResultShape(value)) {
    if (filled(value.toolCallId) && filled(value.name)) return value
    const out = { ...value }
    if (!filled(out.toolCallId)) out.toolCallId = toolCallId
    if (!filled(out.name)) out.name = name
    return out
  }
  return { toolCallId, name, value }
}

/**
 * The tool as the agent loop's registry holds it: the same object underneath (its prototype), with
 * an `execute` whose answer is a ToolResult within its output budget (lib/output-budget.js: the
 * tool's `outputBudget`, else `budget`). A synchronous `execute` stays synchronous.
 */
function withBareResults(tool, budget) {
  if (tool === null || typeof tool !== 'object' || typeof tool.execute !== 'function') return tool
  const execute = tool.execute
  const own = resolveOutputBudget(tool.outputBudget, `tool ${String(tool.name)}: outputBudget`)
  const limit = own ?? budget
  // The run's result redaction (lib/output-budget.js) comes before the cut.
  const toToolResultWithin = limit === undefined ? toToolResult : (v, id, name, redact) => applyOutputBudget(toToolResult(v, id, name), limit, redact)
  const wrapped = Object.create(tool)
  Object.defineProperty(wrapped, 'execute', {
    enumerable: true,
    value: function executeBare(args, ctx) {
      const context = ctx !== null && typeof ctx === 'object' ? ctx : undefined
      const toolCallId = context?.toolCallId
      const redact = context?.[RESULT_REDACTOR]
      const name = tool.name
      const out = execute.call(tool, args, ctx)
      if (out !== null && typeof out === 'object' && typeof out.then === 'function') return Promise.resolve(out).then((v) => toToolResultWithin(v, toolCallId, name, redact))
      return toToolResultWithin(out, toolCallId, name, redact)
    },
  })
  return wrapped
}

module.exports = { toToolResult, isToolResultShape, withBareResults }
