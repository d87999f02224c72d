'use strict'
// The `tools/call` result schema the bridge hands to the SDK's `client.request`. The SDK parses every
// result with the schema it is given; Zod's parse of `CompatibilityCallToolResultSchema` copies the
// result block by block and costs more than the rest of the bridge's result work. Nearly every result
// is the simple shape — `{ content: [{ type: 'text', text }…], isError? }` — which that schema accepts
// unchanged (its output has the same keys and values). This schema recognises exactly that shape within
// the bridge's bounds, counts its serialized bytes on the way, and passes it through as it came; any
// other result (images, resources, structured content, `_meta`, extra keys, a bound crossed, a value
// JSON cannot carry) goes to the SDK's own Zod schema, and then through the bridge's full bound walk,
// exactly as before.
//
// The SDK (≥ 1.18) parses a non-Zod-4 schema through its `safeParse`; older releases call `parse`.
const { checkedSchema } = require('./shape.js')
const { jsonStringBytes } = require('./json-bounds.js')

// `"content":` is 10 bytes, `"isError":` 10, `"type":"text"` 13, `,"text":` 8.
const CONTENT_KEY = 10
const IS_ERROR_KEY = 10
const TEXT_BLOCK_FIXED = 2 + 13 + 8 // braces, "type":"text", ,"text":

/**
 * When `result` is the simple shape and within `limits` (the same count, depth and property rules as
 * `measureBoundedJson`): its serialized size and what it holds, each value read once — `texts` in block
 * order and `isError` — so nothing read later can differ from what was measured. Else undefined. Never
 * throws; only plain objects and arrays are looked into.
 */
function simpleResult(result, limits) {
  if (result === null || typeof result !== 'object' || Object.getPrototypeOf(result) !== Object.prototype) return undefined
  let keys = 0
  let content
  let isError
  for (const key in result) {
    keys++
    if (key === 'content') content = result.content
    else if (key === 'isError') isError = result.isError
    else return undefined
  }
  if (!Array.isArray(content) || Object.getPrototypeOf(content) !== Array.prototype) return undefined
  if (isError !== undefined && typeof isError !== 'boolean') return undefined
  if (keys !== (isError === undefined ? 1 : 2)) return undefined
  const max = limits.maxResultBytes
  const count = content.length
  // Depth: the result 1, the array 2, a block 3, its strings 4.
  if (limits.maxJsonDepth < (count > 0 ? 4 : 2)) return undefined
  // Properties: each key of the result and of a block, each array element.
  if (keys + count * 3 > limits.maxJsonProperties) return undefined
  let bytes = 2 + CONTENT_KEY + 2 + (count > 0 ? count - 1 : 0)
  if (isError !== undefined) bytes += 1 + IS_ERROR_KEY + (isError ? 4 : 5)
  const texts = new Array(count)
  for (let i = 0; i < count; i++) {
    const block = content[i]
    if (block === null || typeof block !== 'object' || Object.getPrototypeOf(block) !== Object.prototype) return undefined
    let blockKeys = 0
    for (const key in block) {
      blockKeys++
      if (key !== 'type' && key !== 'text') return undefined
    }
    if (blockKeys !== 2 || block.type !== 'text') return undefined
    const text = block.text
    if (typeof text !== 'string') return undefined
    // Cheap estimate first: a string has at least one byte per UTF-16 unit, so an oversized text is
    // known without counting it (the full walk then words the refusal).
    if (bytes + TEXT_BLOCK_FIXED + text.length + 2 > max) return undefined
    bytes += TEXT_BLOCK_FIXED + jsonStringBytes(text)
    if (bytes > max) return undefined
    texts[i] = text
  }
  return { bytes, texts, isError: isError === true }
}

/**
 * A result schema for `client.request(…, schema)` bound to one bridge's limits. `seen` receives what
 * `simpleResult` found for every result that took the fast path (a WeakMap keyed by the result object).
 */
function createCallToolResultSchema(sdkSchema, limits, seen) {
  // A result that matches neither fails with a short McpBridgeError (code ERR_PRISM_MCP_PROTOCOL), never Zod's dump.
  const fallback = checkedSchema(sdkSchema, 'MCP tools/call result')
  return {
    safeParse(data) {
      const simple = simpleResult(data, limits)
      if (simple === undefined) return fallback.safeParse(data)
      seen.set(data, simple)
      return { success: true, data }
    },
    parse(data) {
      const simple = simpleResult(data, limits)
      if (simple === undefined) return fallback.parse(data)
      seen.set(data, simple)
      return data
    },
  }
}

module.exports = { createCallToolResultSchema, simpleResult, jsonStringBytes }
