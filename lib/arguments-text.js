'use strict'
// Provider argument text. A call made here keeps its raw JSON text privately (a WeakMap from the
// very arguments object to the text), so the validator can check the text in Rust in one pass
// instead of serializing the object again. Refusal messages and option bounds come from Rust.
const native = require('../binding.js')

const textOf = new WeakMap()

/** The raw text `args` was parsed from, when `args` is still that very object; else undefined. */
function argumentsTextOf(args) {
  return typeof args === 'object' && args !== null ? textOf.get(args) : undefined
}

function argumentsError(message) {
  return { name: 'ToolArgumentsError', message, code: 'invalid_json_arguments' }
}

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
      : `Tool ${name} arguments must be JSON text, found ${text === null ? 'null' : typeof text}`
  return { args: {}, error: argumentsError(message ?? `Tool ${name} arguments must be a JSON object`) }
}

function toolCallFromArgumentsText(id, name, text, options) {
  const maxBytes = native.argumentsMaxBytes(options === undefined ? undefined : options.maxBytes)
  const { args, error } = parseArgumentsText(name, text, maxBytes)
  const call = { type: 'tool_call', id, name, arguments: args }
  if (error !== undefined) call.argumentsError = error
  return call
}

function reconstructToolCallDeltas(events, options) {
  const maxBytes = native.argumentsMaxBytes(options === undefined ? undefined : options.maxBytes)
  const groups = []
  const byIndex = new Map()
  const byId = new Map()
  let last
  for (const event of events) {
    if (event === null || typeof event !== 'object') continue
    if (event.type !== undefined && event.type !== 'tool_call_delta') continue
    const id = typeof event.id === 'string' && event.id !== '' ? event.id : undefined
    const index = typeof event.index === 'number' ? event.index : undefined
    let group =
      (index !== undefined ? byIndex.get(index) : undefined) ?? (id !== undefined ? byId.get(id) : undefined)
    if (group === undefined && index === undefined && id === undefined) group = last
    if (group === undefined) {
      group = { id, name: undefined, parts: [], bytes: 0, index }
      groups.push(group)
    }
    if (index !== undefined && !byIndex.has(index)) byIndex.set(index, group)
    if (id !== undefined) {
      if (group.id === undefined) group.id = id
      if (!byId.has(id)) byId.set(id, group)
    }
    if (group.name === undefined && typeof event.name === 'string' && event.name !== '') group.name = event.name
    const delta = event.argumentsDelta
    // Past the bound the text is refused anyway: stop growing it (one byte over is enough).
    if (typeof delta === 'string' && delta !== '' && group.bytes <= maxBytes) {
      group.parts.push(delta)
      group.bytes += delta.length
    }
    last = group
  }
  return groups.map((group, i) => {
    const id = group.id ?? `call_${group.index ?? i}`
    const name = group.name ?? ''
    const { args, error } = parseArgumentsText(name, group.parts.join(''), maxBytes)
    const call = { type: 'tool_call', id, name, arguments: args }
    if (error !== undefined) call.argumentsError = error
    return call
  })
}

module.exports = { argumentsTextOf, toolCallFromArgumentsText, reconstructToolCallDeltas }
