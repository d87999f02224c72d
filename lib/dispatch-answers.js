'use strict'
// What the host answered, as the machine's answer: the call's facts, the tool found, a policy's
// decision, a validator's verdict, the store's records, the tool's result. Each answer is a code of
// the command table and a few scalars; host values stay in JS.
const native = require('../binding.js')
const C = require('./dispatch-codes.js')
const { invalidOption, codeOf, typeIndex, str, STEPPED, THREW, ABORT } = require('./dispatch-host.js')
const { beginAnswer, recordAnswer, storedAnswer } = require('./dispatch-effects.js')
const { isPlainObjectProto } = require('./json-object.js')
const { ownToolArgumentValidators } = require('./validation.js')
const { toToolResult } = require('./tool-result-shape.js')
const { resultOutputMismatch } = require('./output-schema.js')
const { forgetArgumentsText } = require('./arguments-text.js')

const { dispatchStep, dispatchAnswer } = native

/** A JSON object: a plain object of this realm or another (`node:vm`), not an array or instance. */
function isJsonObject(v) {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false
  try {
    return isPlainObjectProto(v)
  } catch {
    return false
  }
}

/**
 * The call's facts the machine decides on: `[name text, call flags]`.
 * @returns {[string, number]}
 */
function callFacts(call) {
  if (call === null || typeof call !== 'object') {
    throw invalidOption(TypeError, 'dispatchToolCall: call must be a tool_call object', 'ERR_PRISM_INVALID_CALL')
  }
  const name = call.name
  let flags = 0
  if (call.argumentsError !== undefined && call.argumentsError !== null) flags |= C.C_ARGS_PROVIDER_ERROR
  else if (!isJsonObject(call.arguments)) flags |= C.C_ARGS_NOT_OBJECT
  if (call.authority === 'provider-hosted') flags |= C.C_PROVIDER_HOSTED
  if (typeof name !== 'string') flags |= C.C_NAME_NOT_STRING
  return [typeof name === 'string' ? name : name === undefined || name === null ? '' : String(name), flags]
}

/** Whether the tool has an `effect` property: `in` runs no getter; a throwing `has` trap counts as yes. */
function hasEffect(tool) {
  try {
    return 'effect' in tool
  } catch {
    return true
  }
}

/** A trust or permission decision: a boolean, or an object's `trusted`/`allowed` and `reason`. */
function decisionAnswer(s, k, v) {
  const key = k === C.K_CHECK_TRUST ? 'trusted' : 'allowed'
  if (typeof v === 'boolean') return dispatchStep(s, C.A_DECISION, v ? 1 : 0)
  if (v === null || typeof v !== 'object') return dispatchStep(s, C.A_DECISION, 0)
  let g = v[key]
  if (g === undefined && key !== 'allowed') g = v.allowed
  return dispatchAnswer(s, C.A_DECISION, g === true ? 1 : 0, undefined, str(v.reason))
}

/** A validator's verdict: undefined is valid; a string or `{ message }` is invalid; anything else is of the wrong type. */
function validateAnswer(h, st, s, v) {
  if (v === undefined) {
    if (ownToolArgumentValidators.has(h.validate)) st.checked = [st.tool.parameters, st.call.arguments]
    // 1: the tool has no `effect` property (read after the hook ran), which also answers the
    // declaration when that comes next.
    return dispatchStep(s, C.A_VALID, hasEffect(st.tool) ? 0 : 1)
  }
  if (typeof v === 'string') return dispatchAnswer(s, C.A_INVALID_MESSAGE, undefined, undefined, v)
  if (v !== null && typeof v === 'object' && !Array.isArray(v) && typeof v.message === 'string') {
    st.thrown = v
    return dispatchStep(s, C.A_INVALID_INFO)
  }
  return dispatchStep(s, C.A_INVALID_OTHER, typeIndex(v))
}

/**
 * The tool's result. A bare value (a number, a domain object…) or a result missing its id or name
 * is made a ToolResult of this call (lib/tool-result-shape.js); a complete one is kept as is. A
 * successful result of a tool with an `outputSchema` has its `value` checked against it
 * (lib/output-schema.js); the machine words a mismatch as the call's error.
 */
function executeAnswer(st, s, v) {
  if (v === null || typeof v !== 'object' || typeof v.toolCallId !== 'string' || v.toolCallId === '' || typeof v.name !== 'string' || v.name === '') {
    v = toToolResult(v, st.call.id, st.name)
  }
  st.result = v
  const failed = v.error !== undefined && v.error !== null
  if (!failed) {
    const outputSchema = st.tool.outputSchema
    if (outputSchema !== undefined) {
      const mismatch = resultOutputMismatch(st.name, outputSchema, v)
      if (mismatch !== undefined) return dispatchAnswer(s, C.A_OUTPUT_MISMATCH, undefined, undefined, mismatch)
    }
  }
  return dispatchStep(s, C.A_RETURNED, failed ? 1 : 0)
}

/** The call a `tool_call` middleware answered: its facts, for the machine. */
function middlewareCallAnswer(st, s, v) {
  if (v !== undefined && v !== null) st.call = v
  forgetArgumentsText(st.call?.arguments)
  st.safeArgs = st.safeCall = st.safeIds = undefined
  const [name, flags] = callFacts(st.call)
  st.name = name
  return dispatchAnswer(s, C.A_CALL, flags, undefined, name)
}

/**
 * Answers command `k` with the outcome of its host callback (`kind`: VALUE, THREW, ABORT), and
 * returns the machine's next command. A value whose read throws (a Proxy, a throwing getter)
 * counts as the callback throwing.
 */
function answerFor(h, st, s, k, kind, v) {
  if (kind === ABORT) return dispatchStep(s, C.A_ABORTED)
  if (kind === THREW) {
    st.thrown = v
    return dispatchAnswer(s, C.A_THREW, undefined, undefined, codeOf(v))
  }
  if (v === STEPPED) return st.next
  try {
    switch (k) {
      case C.K_CALL_MIDDLEWARE:
        return middlewareCallAnswer(st, s, v)
      case C.K_LOOKUP:
        st.tool = v
        return dispatchStep(s, C.A_FOUND, v !== null && (typeof v === 'object' || typeof v === 'function') ? 1 : 0)
      case C.K_CHECK_TRUST:
      case C.K_CHECK_PERMISSION:
        return decisionAnswer(s, k, v)
      case C.K_VALIDATE:
        return validateAnswer(h, st, s, v)
      case C.K_EFFECT_BEGIN:
        return beginAnswer(st, s, v)
      case C.K_MARK_DISPATCHED:
      case C.K_EFFECT_COMPLETE:
        return recordAnswer(st, s, k, v)
      case C.K_EXECUTE:
        return executeAnswer(st, s, v)
      case C.K_RESULT_MIDDLEWARE:
        if (v !== undefined && v !== null) st.result = v
        return dispatchStep(s, C.A_DONE)
      case C.K_EFFECT_GET:
        return storedAnswer(s, v)
      default:
        return dispatchStep(s, C.A_DONE)
    }
  } catch (e) {
    st.thrown = e
    return dispatchAnswer(s, C.A_THREW, undefined, undefined, codeOf(e))
  }
}

module.exports = { answerFor, callFacts, hasEffect }
