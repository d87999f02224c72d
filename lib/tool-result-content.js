'use strict'
// Rich tool results: the content blocks a tool may return beside its `value`, as `@arnilo/prism`'s
// ContentBlock types name them — `image` ({ mimeType, data | url }), `audio`, `file` and `document`
// ({ mediaType, data | url, name? }), and `resource_link` (MCP's { uri, name, mimeType?, … }) — and the
// one descriptor events and ledger rows hold instead of their bytes: kind, media type, byte length
// and SHA-256. Providers (lib/providers/) and MCP (lib/mcp/) map the blocks themselves; what a block
// is, how big it is and how it is described in text is written here once.
const { createHash } = require('node:crypto')
const { utf8Prefix } = require('./utf8.js')

/** Block types that carry bytes (inline base64 `data`, or a `data:` URL). */
const MEDIA_TYPES = new Set(['image', 'audio', 'file', 'document'])
/** At most this many blocks are described in an event or row; the rest are counted. */
const MAX_DESCRIBED_BLOCKS = 64
/** Bytes kept of a descriptor's name, URL or URI. */
const MAX_DESCRIPTOR_TEXT = 512

const isObject = (v) => v !== null && typeof v === 'object'

/** Decoded byte length of base64 text (padding aware, no decoding). */
function base64Bytes(data) {
  if (typeof data !== 'string') return 0
  const pad = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0
  return Math.max(0, Math.floor((data.length * 3) / 4) - pad)
}

/** The block's media type: `mimeType` on images (and MCP blocks), `mediaType` on the others. */
function mediaTypeOf(block) {
  const t = block.type === 'image' ? (block.mimeType ?? block.mediaType) : (block.mediaType ?? block.mimeType)
  return typeof t === 'string' ? t : undefined
}

/** `data:<type>;base64,<payload>` split, or undefined. */
function dataUrl(url) {
  if (typeof url !== 'string' || !url.startsWith('data:')) return undefined
  const comma = url.indexOf(',')
  if (comma < 0) return undefined
  const head = url.slice(5, comma)
  return { mediaType: head.split(';')[0] || undefined, base64: head.endsWith(';base64'), payload: url.slice(comma + 1) }
}

/** Whether a content block carries bytes an event or row must not hold. */
function carriesBytes(block) {
  if (!isObject(block) || !MEDIA_TYPES.has(block.type)) return false
  return typeof block.data === 'string' || dataUrl(block.url) !== undefined
}

/** The bytes of a media block (inline base64 or a base64 `data:` URL), or undefined. */
function mediaBytes(block) {
  if (typeof block.data === 'string') return Buffer.from(block.data, 'base64')
  const d = dataUrl(block.url)
  if (d === undefined) return undefined
  return d.base64 ? Buffer.from(d.payload, 'base64') : Buffer.from(decodeURIComponent(d.payload), 'utf8')
}

const bounded = (s) => utf8Prefix(s, MAX_DESCRIPTOR_TEXT)

/** A media block's descriptor: its kind, media type, name, byte length and SHA-256; never its bytes. */
function describeMediaBlock(block) {
  const d = { type: block.type }
  const mediaType = mediaTypeOf(block) ?? dataUrl(block.url)?.mediaType
  if (mediaType !== undefined) d[block.type === 'image' ? 'mimeType' : 'mediaType'] = bounded(mediaType)
  if (typeof block.name === 'string') d.name = bounded(block.name)
  if (typeof block.url === 'string' && dataUrl(block.url) === undefined) d.url = bounded(block.url)
  if (typeof block.resourceUri === 'string') d.resourceUri = bounded(block.resourceUri)
  let bytes
  try {
    bytes = mediaBytes(block)
  } catch {
    bytes = undefined
  }
  if (bytes !== undefined) {
    d.bytes = bytes.length
    d.sha256 = createHash('sha256').update(bytes).digest('hex')
  }
  d.omitted = true
  return d
}

/**
 * The result as events and ledger rows hold it: each media block's bytes replaced by its descriptor,
 * at most MAX_DESCRIBED_BLOCKS blocks (then a count). The same object when no block carries bytes.
 */
function describeResultContent(result) {
  if (!isObject(result)) return result
  let content
  try {
    content = result.content
  } catch {
    return result
  }
  if (!Array.isArray(content) || !content.some(carriesBytes)) return result
  const kept = content.slice(0, MAX_DESCRIBED_BLOCKS).map((b) => (carriesBytes(b) ? describeMediaBlock(b) : b))
  if (content.length > MAX_DESCRIBED_BLOCKS) kept.push({ type: 'text', text: `[${content.length - MAX_DESCRIBED_BLOCKS} more content blocks omitted]` })
  return { ...result, content: kept }
}

const LINK_FIELDS = ['title', 'description', 'mimeType']

/** A resource link (MCP's shape) with its known fields only: `uri`, `name`, and any of title, description, mimeType, size. */
function resourceLinkBlock(block) {
  const link = { type: 'resource_link', uri: block.uri, name: typeof block.name === 'string' ? block.name : block.uri }
  for (const k of LINK_FIELDS) if (typeof block[k] === 'string') link[k] = block[k]
  if (Number.isSafeInteger(block.size) && block.size >= 0) link.size = block.size
  return link
}

/** A resource link as one line of text, for a peer that takes no links. */
function resourceLinkText(block) {
  return [
    `Resource link ${block.name}: ${block.uri}`,
    block.description,
    block.mimeType ? `mime=${block.mimeType}` : undefined,
    block.size !== undefined ? `size=${block.size}` : undefined,
  ]
    .filter(Boolean)
    .join(' — ')
}

/** A block a peer cannot take, named in text (its bytes are not sent). */
function omittedBlockText(block, peer) {
  const mediaType = mediaTypeOf(block)
  const size = typeof block.data === 'string' ? `, ${base64Bytes(block.data)} bytes` : ''
  return `[${block.type}${mediaType ? ` ${mediaType}` : ''}${size} omitted: ${peer} does not accept it in a tool result]`
}

module.exports = {
  MEDIA_TYPES,
  MAX_DESCRIBED_BLOCKS,
  base64Bytes,
  mediaTypeOf,
  dataUrl,
  carriesBytes,
  describeMediaBlock,
  describeResultContent,
  resourceLinkBlock,
  resourceLinkText,
  omittedBlockText,
}
