'use strict'
// What `@arnilo/prism-provider-anthropic` adds to a Messages request, with its option names:
// extended thinking and effort (`compat.thinking`, `compat.effort`), prompt-cache breakpoints
// (`cache_control`, `cacheRetention: "long"` -> a 1 h ttl), PDF and text `document` / `file` blocks,
// and the other `compat` / `extra` fields passed into the body.

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v)
const requestOptions = (request) => (isObject(request && request.options) ? request.options : {})
const modelOf = (request) => (isObject(request && request.model) ? request.model : {})

/** The Messages `thinking` object: the request's `compat.thinking`, else the model's. `false` disables, `true` enables. */
function anthropicThinking(request) {
  const compat = requestOptions(request).compat
  const modelCompat = modelOf(request).compat
  const value = isObject(compat) && compat.thinking !== undefined ? compat.thinking : isObject(modelCompat) ? modelCompat.thinking : undefined
  if (value === false) return { type: 'disabled' }
  if (value === true) return { type: 'enabled' }
  return isObject(value) ? value : undefined
}

/** The Messages `effort`: the request's `compat.effort` (or `reasoning_effort`, `reasoningEffort`), else the model's. */
function anthropicEffort(request) {
  const compat = isObject(requestOptions(request).compat) ? requestOptions(request).compat : {}
  const modelCompat = isObject(modelOf(request).compat) ? modelOf(request).compat : {}
  const value = compat.effort ?? compat.reasoning_effort ?? compat.reasoningEffort ?? modelCompat.effort ?? modelCompat.reasoning_effort
  return typeof value === 'string' ? value : undefined
}

const OWNED_COMPAT = new Set(['thinking', 'effort', 'reasoning_effort', 'reasoningEffort', 'preserveThinking', 'preserve_thinking', 'route'])

/** The request's `compat` without the keys this provider maps itself. */
function passThroughCompat(request) {
  const compat = requestOptions(request).compat
  const out = {}
  if (!isObject(compat)) return out
  for (const [key, value] of Object.entries(compat)) if (!OWNED_COMPAT.has(key)) out[key] = value
  return out
}

/**
 * The cache settings of a request: the request's `options` over the provider's defaults
 * (`createAnthropicMessagesProvider({ cache, cacheRetention })`).
 */
function cacheSettings(request, defaults = {}) {
  const options = requestOptions(request)
  const cache = { ...(isObject(defaults.cache) ? defaults.cache : {}), ...(isObject(options.cache) ? options.cache : {}) }
  const retention = options.cacheRetention ?? defaults.cacheRetention
  return { cache, retention }
}

/** Whether `cache_control` markers may be sent: the model's `cache.kind` is `cache_control`, or `cache.mode` is `on`. */
function anthropicCacheEnabled(request, defaults) {
  const { cache, retention } = cacheSettings(request, defaults)
  const modelCache = isObject(modelOf(request).cache) ? modelOf(request).cache : {}
  if (retention === 'none' || cache.mode === 'off' || modelCache.kind === 'none') return false
  return modelCache.kind === 'cache_control' || cache.mode === 'on'
}

function breakpointIndex(messages, breakpoint) {
  const content = (m) => (Array.isArray(m && m.content) ? m.content : [])
  switch (breakpoint && breakpoint.location) {
    case 'system_prompt':
      return messages.findIndex((m) => m && m.role === 'system')
    case 'tools':
      return messages.findIndex((m) => m && (m.role === 'tool' || content(m).some((b) => b && (b.type === 'tool_call' || b.type === 'tool_result'))))
    case 'stable_context':
      return messages.findIndex((m) => m && m.role !== 'system')
    case 'last_stable_message':
      return messages.length > 1 ? messages.length - 2 : messages.length - 1
    case 'last_user_message':
      return messages.findLastIndex((m) => m && m.role === 'user')
    case 'message_id':
      return messages.findIndex((m) => m && m.id !== undefined && m.id === breakpoint.messageId)
    default:
      return -1
  }
}

/**
 * The marker each selected message's last block gets: `Map<messageIndex, cache_control>`, empty when
 * caching is off or no breakpoint is asked for. At most `model.cache.maxBreakpoints` (default 4, the
 * API's limit). Retention `long` (the request's `cacheRetention` or `cache.retention`) gives a 1 h
 * ttl unless the model says `cache.longRetention: false`; a breakpoint's own `ttl` wins.
 */
function cacheMarkers(request, defaults) {
  const markers = new Map()
  if (!anthropicCacheEnabled(request, defaults)) return markers
  const { cache, retention } = cacheSettings(request, defaults)
  const breakpoints = Array.isArray(cache.breakpoints) ? cache.breakpoints : []
  if (breakpoints.length === 0) return markers
  const messages = Array.isArray(request.messages) ? request.messages : []
  const modelCache = isObject(modelOf(request).cache) ? modelOf(request).cache : {}
  const max = Number.isInteger(modelCache.maxBreakpoints) && modelCache.maxBreakpoints > 0 ? modelCache.maxBreakpoints : 4
  const long = (retention === 'long' || cache.retention === 'long') && modelCache.longRetention !== false
  for (const breakpoint of breakpoints) {
    if (markers.size >= max) break
    const index = breakpointIndex(messages, breakpoint)
    if (index < 0 || markers.has(index)) continue
    const ttl = breakpoint.ttl === 'long' ? modelCache.longRetention !== false : breakpoint.ttl === 'short' ? false : long
    markers.set(index, ttl ? { type: 'ephemeral', ttl: '1h' } : { type: 'ephemeral' })
  }
  return markers
}

const isPdf = (mediaType) => typeof mediaType === 'string' && (mediaType.toLowerCase() === 'application/pdf' || mediaType.toLowerCase().endsWith('+pdf'))

/**
 * A `document` or `file` block as a Messages `document`: PDF from base64 `data` or a `url`, plain
 * text (`text/plain`) from base64 `data`. Anything else throws, naming the block and its media type.
 */
function anthropicDocument(part) {
  const mediaType = typeof part.mediaType === 'string' ? part.mediaType : undefined
  const title = typeof part.name === 'string' && part.name !== '' ? { title: part.name } : {}
  if (isPdf(mediaType)) {
    if (typeof part.data === 'string' && part.data !== '') return { type: 'document', source: { type: 'base64', media_type: mediaType, data: part.data }, ...title }
    if (typeof part.url === 'string' && part.url !== '') return { type: 'document', source: { type: 'url', url: part.url }, ...title }
    throw new Error(`Anthropic ${part.type} block (${mediaType}) needs base64 data or a url`)
  }
  if (mediaType !== undefined && mediaType.toLowerCase().split(';')[0].trim() === 'text/plain' && typeof part.data === 'string') {
    return { type: 'document', source: { type: 'text', media_type: 'text/plain', data: Buffer.from(part.data, 'base64').toString('utf8') }, ...title }
  }
  throw new Error(`Anthropic Messages maps ${part.type} blocks of application/pdf or text/plain only; got ${mediaType ?? 'no mediaType'}`)
}

module.exports = { anthropicThinking, anthropicEffort, passThroughCompat, anthropicCacheEnabled, cacheMarkers, anthropicDocument }
