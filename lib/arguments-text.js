'use strict'
// Provider argument text. A call made here keeps its raw JSON text privately (a WeakMap from the
// very arguments object to the text), so the validator can check the text in Rust in one pass
// instead of serializing the object again. Refusal messages and option bounds come from Rust.
const native = require('../binding.js')
const { ProviderTransportError } = require('./errors.js')
const { createToolCallAssembler } = require('./providers/tool-call-assembly.js')

const textOf = new WeakMap()

/** The raw text `args` was parsed from, when `args` is still that very object; else undefined. */
function argumentsTextOf(args) {
  return typeof args === 'object' && args !== null ? textOf.get(args) : undefined
}

/**
 * Forgets the text of `args`: host code (a `tool_call` middleware, a `tool_input` guardrail) was
 * handed the live object and may have changed it in place, so the text no longer says what the tool
 * will receive; validation then reads the object itself.
 */
function forgetArgumentsText(args) {
  if (typeof args === 'object' && args !== null) textOf.delete(args)
}

function argumentsError(message) {
  // The fields of upstream's ProviderTransportError `invalid_json_arguments`, as plain data.
  return { name: 'ProviderTransportError', message, code: 'invalid_json_arguments' }
}

const forTool = (name) => (name === '' || name === undefined ? '' : ` for tool ${name}`)

function parseArgumentsText(name, text, maxBytes) {
  if (typeof text === 'string') {
    // A string never has more UTF-8 bytes than 3 per UTF-16 unit, nor fewer than 1.
    const fits = text.length * 3 <= maxBytes || (text.length <= maxBytes && Buffer.byteLength(text) <= maxBytes)
    if (fits) {
      let args
      try {
        args = text.trim() === '' ? {} : JSON.parse(text)
      } catch {
        args = undefined
      }
      if (typeof args === 'object' && args !== null && !Array.isArray(args)) {
        if (text.trim() !== '') textOf.set(args, text)
        return { args, error: undefined }
      }
    }
  }
  const message =
    typeof text === 'string'
      ? native.argumentsTextProblem(String(name), text.length > maxBytes ? text.slice(0, maxBytes + 1) : text, maxBytes)
      : `Tool arguments${forTool(name)} must be JSON text, found ${text === null ? 'null' : typeof text}`
  return { args: {}, error: argumentsError(message ?? `Tool arguments${forTool(name)} must be a JSON object`) }
}

function toolCallFromArgumentsText(id, name, text, options) {
  const maxBytes = native.argumentsMaxBytes(options === undefined ? undefined : options.maxBytes)
  const { args, error } = parseArgumentsText(name, text, maxBytes)
  const call = { type: 'tool_call', id, name, arguments: args }
  if (error !== undefined) call.argumentsError = error
  return call
}

/**
 * Tool calls from streamed `tool_call_delta` fragments, grouped by the one assembler the providers'
 * streams use (providers/tool-call-assembly.js), ordered by index. A call that never got an `id` or
 * a `name` throws ProviderTransportError `incomplete_delta`: a call cannot run without either.
 */
function reconstructToolCallDeltas(events, options) {
  const maxBytes = native.argumentsMaxBytes(options === undefined ? undefined : options.maxBytes)
  const assembler = createToolCallAssembler(maxBytes)
  for (const event of events) {
    if (event === null || typeof event !== 'object') continue
    if (event.type !== undefined && event.type !== 'tool_call_delta') continue
    const id = typeof event.id === 'string' ? event.id : undefined
    const index = typeof event.index === 'number' ? event.index : undefined
    // `argumentsText` is the field's name in the provider protocol; `argumentsDelta` is accepted too.
    const text = typeof event.argumentsText === 'string' ? event.argumentsText : event.argumentsDelta
    assembler.add(id, index, event.name, text)
  }
  // By index, as the provider numbered the calls; calls without one keep the order they came in.
  const order = (call) => call.index ?? call.position
  const calls = [...assembler.calls].sort((a, b) => order(a) - order(b) || a.position - b.position)
  for (const call of calls) {
    if (call.id === undefined || call.name === undefined) {
      throw new ProviderTransportError('incomplete_delta', `Incomplete tool call delta at index ${order(call)}`)
    }
  }
  return calls.map((call) => {
    const { args, error } = parseArgumentsText(call.name, call.argumentsText, maxBytes)
    const result = { type: 'tool_call', id: call.id, name: call.name, arguments: args }
    if (error !== undefined) result.argumentsError = error
    return result
  })
}

module.exports = { forgetArgumentsText, argumentsTextOf, toolCallFromArgumentsText, reconstructToolCallDeltas }
