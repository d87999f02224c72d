'use strict'
// Measures a JSON value's serialized size, depth and property count without building the text, and
// stops at the first bound crossed: an oversized, deep or cyclic value from a server costs at most
// the bound, never a full copy.
const { McpBridgeError } = require('./errors.js')
const { isObjectPrototype } = require('../json-object.js')
const { utf8Prefix } = require('../utf8.js')
const { DEFAULT_MAX_JSON_DEPTH, DEFAULT_MAX_JSON_PROPERTIES } = require('./limits.js')

/** Bytes `JSON.stringify` writes for the string `s` (quotes included), without building the text. */
function jsonStringBytes(s) {
  let n = 2
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c === 0x22 || c === 0x5c || c === 0x08 || c === 0x09 || c === 0x0a || c === 0x0c || c === 0x0d) n += 2
    else if (c < 0x20) n += 6
    else if (c < 0x80) n += 1
    else if (c < 0x800) n += 2
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 4
      i++
    } else if (c >= 0xd800 && c <= 0xdfff) n += 6 // a lone surrogate is written as \uXXXX
    else n += 3
  }
  return n
}

/**
 * @param {unknown} value
 * @param {{ maxBytes: number, maxDepth: number, maxProperties: number, label?: string }} bounds
 * @returns {{ bytes: number, properties: number }}
 */
function measureBoundedJson(value, bounds) {
  const label = bounds.label || 'MCP JSON'
  let bytes = 0
  let properties = 0
  const onPath = new Set()
  const add = (count) => {
    bytes += count
    if (bytes > bounds.maxBytes) throw new McpBridgeError(`${label} exceeds ${bounds.maxBytes} bytes`, { code: 'ERR_PRISM_MCP_LIMIT' })
  }
  const prop = () => {
    if (++properties > bounds.maxProperties) {
      throw new McpBridgeError(`${label} exceeds ${bounds.maxProperties} properties`, { code: 'ERR_PRISM_MCP_LIMIT' })
    }
  }
  const walk = (item, depth) => {
    if (depth > bounds.maxDepth) throw new McpBridgeError(`${label} exceeds depth ${bounds.maxDepth}`, { code: 'ERR_PRISM_MCP_LIMIT' })
    if (item === null) return add(4)
    switch (typeof item) {
      case 'string':
        return add(jsonStringBytes(item))
      case 'boolean':
        return add(item ? 4 : 5)
      case 'number':
        if (!Number.isFinite(item)) throw new McpBridgeError(`${label} contains a non-finite number`, { code: 'ERR_PRISM_MCP_LIMIT' })
        return add(String(item).length)
      case 'undefined':
        return add(0) // dropped by JSON, as the SDK's optional keys are
      case 'object':
        break
      default:
        throw new McpBridgeError(`${label} contains a non-JSON value`, { code: 'ERR_PRISM_MCP_LIMIT' })
    }
    if (onPath.has(item)) throw new McpBridgeError(`${label} contains a cycle`, { code: 'ERR_PRISM_MCP_LIMIT' })
    onPath.add(item)
    try {
      add(2)
      if (Array.isArray(item)) {
        for (let i = 0; i < item.length; i++) {
          prop()
          if (i > 0) add(1)
          walk(item[i], depth + 1)
        }
        return
      }
      const proto = Object.getPrototypeOf(item)
      if (proto !== null && !isObjectPrototype(proto)) {
        throw new McpBridgeError(`${label} contains a non-plain object`, { code: 'ERR_PRISM_MCP_LIMIT' })
      }
      let first = true
      for (const key of Object.keys(item)) {
        prop()
        add(jsonStringBytes(key) + (first ? 1 : 2))
        first = false
        walk(item[key], depth + 1)
      }
    } finally {
      onPath.delete(item)
    }
  }
  walk(value, 1)
  return { bytes, properties }
}

/** `value`, once it is within `maxBytes` of JSON and the default depth and property bounds; throws otherwise. */
function boundedJson(value, maxBytes, label) {
  measureBoundedJson(value, { maxBytes, maxDepth: DEFAULT_MAX_JSON_DEPTH, maxProperties: DEFAULT_MAX_JSON_PROPERTIES, label })
  return value
}

function utf8Bytes(s) {
  return Buffer.byteLength(s, 'utf8')
}

// `truncateUtf8` is the package's one UTF-8 prefix (lib/utf8.js), under the name the MCP modules use.
module.exports = { measureBoundedJson, boundedJson, jsonStringBytes, truncateUtf8: utf8Prefix, utf8Bytes }
