'use strict'
// MCP result content → ToolResult content, within a byte budget. Text and image blocks are kept; audio,
// embedded resources and resource links become descriptive text (as upstream maps them), unless
// `richContent` is set (the bridge sets it): then audio is kept as an `audio` block and a resource
// link as a `resource_link` block (lib/tool-result-content.js), so both round-trip.
const { validateMcpLimit, HARD_MAX_RESULT_BYTES } = require('./limits.js')
const { truncateUtf8, utf8Bytes } = require('./json-bounds.js')
const { base64Bytes, resourceLinkBlock, resourceLinkText } = require('../tool-result-content.js')

function describe(block) {
  switch (block.type) {
    case 'audio':
      return `[audio content ${block.mimeType}, ${base64Bytes(block.data)} bytes]`
    case 'resource': {
      const r = block.resource || {}
      const body = typeof r.text === 'string' ? r.text : r.blob ? `[blob ${r.mimeType || 'application/octet-stream'}]` : ''
      return `Resource ${r.uri}${r.mimeType ? ` (${r.mimeType})` : ''}: ${body}`
    }
    case 'resource_link':
      return resourceLinkText(block)
    default:
      return undefined
  }
}

/**
 * @param {readonly any[] | undefined} content MCP content blocks
 * @param {{ maxResultBytes: number, richContent?: boolean }} options
 * @returns {{ content: any[], truncated: boolean, bytesUsed: number }}
 */
function mapMcpContentToBlocks(content, options) {
  const rich = options.richContent === true
  const max = validateMcpLimit('maxResultBytes', options.maxResultBytes, HARD_MAX_RESULT_BYTES)
  const blocks = []
  let used = 0
  let truncated = false
  if (!Array.isArray(content)) return { content: blocks, truncated, bytesUsed: 0 }
  for (const block of content) {
    if (block === null || typeof block !== 'object') continue
    const remaining = max - used
    if (remaining <= 0) {
      truncated = true
      break
    }
    if ((block.type === 'image' || (rich && block.type === 'audio')) && typeof block.data === 'string') {
      const size = base64Bytes(block.data)
      if (size > remaining) {
        truncated = true
        continue
      }
      used += size
      blocks.push(block.type === 'image' ? { type: 'image', mimeType: block.mimeType, data: block.data } : { type: 'audio', mediaType: block.mimeType, data: block.data })
      continue
    }
    if (rich && block.type === 'resource_link' && typeof block.uri === 'string') {
      const link = resourceLinkBlock(block)
      const size = utf8Bytes(JSON.stringify(link))
      if (size > remaining) {
        truncated = true
        continue
      }
      used += size
      blocks.push(link)
      continue
    }
    const source = block.type === 'text' ? (typeof block.text === 'string' ? block.text : '') : describe(block)
    if (source === undefined) continue
    const text = truncateUtf8(source, remaining)
    if (text.length < source.length) truncated = true
    if (!text) continue
    used += utf8Bytes(text)
    blocks.push({ type: 'text', text })
  }
  return { content: blocks, truncated, bytesUsed: used }
}

/** A short text of the content, for an `isError` result's message. */
function summarizeMcpContent(content, maxBytes = 8 * 1024) {
  const limit = validateMcpLimit('maxErrorBytes', maxBytes, HARD_MAX_RESULT_BYTES)
  if (!Array.isArray(content) || content.length === 0) return truncateUtf8('MCP tool returned no content', limit)
  const parts = []
  let size = 0
  for (const block of content) {
    if (block === null || typeof block !== 'object') continue
    const part =
      block.type === 'text' ? String(block.text ?? '') : block.type === 'resource' ? String(block.resource?.text ?? block.resource?.uri ?? '') : `[${block.type}]`
    const piece = truncateUtf8(part, limit - size - (parts.length ? 1 : 0))
    if (!piece) break
    parts.push(piece)
    size += utf8Bytes(piece) + (parts.length > 1 ? 1 : 0)
    if (piece.length < part.length) break
  }
  return parts.join('\n').trim() || truncateUtf8('MCP tool returned empty content', limit)
}

function boundedMcpErrorMessage(error, maxBytes) {
  const limit = validateMcpLimit('maxErrorBytes', maxBytes, HARD_MAX_RESULT_BYTES)
  const fallback = 'MCP tool call failed'
  let message
  try {
    message = error instanceof Error ? String(error.message) : fallback
  } catch {
    message = fallback
  }
  return truncateUtf8(message, limit) || fallback
}

function mcpCallError(message, code = 'ERR_PRISM_MCP_TOOL') {
  return { name: 'McpToolError', message, code }
}

module.exports = {
  mapMcpContentToBlocks,
  summarizeMcpContent,
  boundedMcpErrorMessage,
  mcpCallError,
  estimateUtf8Bytes: utf8Bytes,
}
