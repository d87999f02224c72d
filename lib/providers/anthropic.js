'use strict'
// Anthropic Messages API streaming on `fetch` and an SSE parser. Same provider event protocol as the
// Chat Completions provider; usage joins message_start's input tokens with message_delta's output tokens.
const { providerTextDelta, providerToolCall, providerToolCallDelta, providerUsage, providerDone, providerError } = require('../provider.js')
const { toolCallFromArgumentsText } = require('../arguments-text.js')
const { toAnthropicTools, anthropicToolSearch } = require('./tools.js')
const { ProviderTransportError } = require('../errors.js')
const http = require('./http.js')
const { createAnthropicToolBlockAssembler, anthropicArgumentsText } = require('./tool-call-assembly.js')
const { parseEventJson, checkEndpointUrl } = require('./wire-errors.js')
const { requestToolChoice, anthropicToolChoice, wireParameters, coalesceContent } = require('./request-options.js')
const { anthropicThinking, anthropicEffort, passThroughCompat, cacheMarkers, anthropicDocument } = require('./anthropic-request.js')
const { MEDIA_TYPES, resourceLinkText, omittedBlockText } = require('../tool-result-content.js')

const ANTHROPIC_API_VERSION = '2023-06-01'
const ANTHROPIC_DEFAULT_BASE_URL = 'https://api.anthropic.com/v1'

function blockText(message) {
  return (message.content ?? []).filter((p) => p && (p.type === 'text' || p.type === 'thinking')).map((p) => p.text).join('')
}

const HOSTED = Object.freeze({ authority: 'provider-hosted' })

/**
 * A `tool_search_tool_result` as a transcript block: the provider's answer to its own search call,
 * kept so the next request replays it after that call (the tools it loaded stay loaded).
 */
function hostedToolResult(block) {
  return { type: 'hosted_tool_result', provider: 'anthropic', toolCallId: typeof block.tool_use_id === 'string' ? block.tool_use_id : '', block }
}

function anthropicImage(part) {
  const source = part.url ? { type: 'url', url: part.url } : { type: 'base64', media_type: part.mimeType ?? 'image/png', data: part.data }
  return { type: 'image', source }
}

/**
 * A tool result with content blocks: its JSON first (when it has a value or an error), then the
 * blocks as `tool_result` content takes them — text, images, and PDF or plain-text documents.
 * Audio, other files and resource links go as a line of text naming them.
 */
function toolResultBlocks(r, extra) {
  /** @type {Array<Record<string, unknown>>} */
  const blocks = r.result !== undefined || r.error !== undefined ? [{ type: 'text', text: JSON.stringify(r.result ?? r.error) }] : []
  for (const part of extra) {
    if (part.type === 'text' && typeof part.text === 'string') blocks.push({ type: 'text', text: part.text })
    else if (part.type === 'image' && (typeof part.data === 'string' || typeof part.url === 'string')) blocks.push(anthropicImage(part))
    else if (part.type === 'resource_link') blocks.push({ type: 'text', text: resourceLinkText(part) })
    else if (part.type === 'file' || part.type === 'document') {
      try {
        blocks.push(anthropicDocument(part))
      } catch {
        blocks.push({ type: 'text', text: omittedBlockText(part, 'Anthropic Messages') })
      }
    } else if (MEDIA_TYPES.has(part.type)) blocks.push({ type: 'text', text: omittedBlockText(part, 'Anthropic Messages') })
  }
  return blocks.length > 0 ? blocks : [{ type: 'text', text: 'null' }]
}

function toAnthropicMessage(message, index) {
  if (!message || typeof message !== 'object' || typeof message.role !== 'string' || !Array.isArray(message.content)) {
    throw new Error(`Invalid provider message at messages[${index}]: expected { role, content: [] }`)
  }
  if (message.role === 'tool') {
    const extra = message.content.filter((p) => p && typeof p === 'object' && p.type !== 'tool_result')
    return {
      role: 'user',
      content: message.content
        .filter((p) => p && p.type === 'tool_result')
        .map((r) => ({
          type: 'tool_result',
          tool_use_id: r.toolCallId ?? '',
          content: extra.length > 0 ? toolResultBlocks(r, extra) : JSON.stringify(r.result ?? r.error ?? null),
          ...(r.error !== undefined && r.result === undefined ? { is_error: true } : {}),
        })),
    }
  }
  const content = []
  // A provider-hosted call (the server's tool search) goes back as `server_tool_use`, followed by
  // its result block.
  const hostedResults = new Map()
  for (const part of message.content) if (part && part.type === 'hosted_tool_result' && part.provider === 'anthropic') hostedResults.set(part.toolCallId, part.block)
  // Adjacent streamed text goes as one part; a streamed thinking block as one, with its signature.
  for (const part of coalesceContent(message.content)) {
    if (!part) continue
    if (part.type === 'text') content.push({ type: 'text', text: part.text })
    else if (part.type === 'hosted_tool_result') continue // placed after its call
    else if (part.type === 'tool_call' && part.authority === 'provider-hosted') {
      // Only a hosted call this API made and answered can be replayed.
      if (!hostedResults.has(part.id)) continue
      content.push({ type: 'server_tool_use', id: part.id, name: part.name, input: part.arguments ?? {} }, hostedResults.get(part.id))
    }
    else if (part.type === 'thinking') {
      // A thinking block replays only with its signature; without one it goes back as text.
      content.push(part.signature ? { type: 'thinking', thinking: part.text, signature: part.signature } : { type: 'text', text: part.text })
    } else if (part.type === 'tool_call') content.push({ type: 'tool_use', id: part.id, name: part.name, input: part.arguments ?? {} })
    else if (part.type === 'image') content.push(anthropicImage(part))
    else if (part.type === 'document' || part.type === 'file') content.push(anthropicDocument(part))
    else if (part.type === 'tool_result') throw new Error('Anthropic tool_result blocks must appear in role=tool messages')
    else throw new Error(`Anthropic Messages provider does not map ${part.type} content blocks`)
  }
  return { role: message.role === 'assistant' ? 'assistant' : 'user', content: content.length > 0 ? content : [{ type: 'text', text: '' }] }
}

/**
 * A provider request as a Messages API body. Consecutive tool results share one user message.
 * `defaults` are the provider's `cache` and `cacheRetention`, under the request's options.
 */
function anthropicMessagesBody(request, defaults = {}) {
  const model = request.model ?? {}
  const { max_tokens: maxTokens, ...parameters } = wireParameters(model.parameters, 'anthropic')
  const all = request.messages ?? []
  // Prompt-cache breakpoints: the selected messages' last block gets `cache_control`.
  const markers = cacheMarkers(request, defaults)
  const messages = []
  let systemMarker
  all.forEach((m, i) => {
    if (m && m.role === 'system') {
      if (markers.has(i)) systemMarker = markers.get(i)
      return
    }
    const wire = toAnthropicMessage(m, i)
    if (markers.has(i)) wire.content[wire.content.length - 1] = { ...wire.content[wire.content.length - 1], cache_control: markers.get(i) }
    const last = messages[messages.length - 1]
    if (m.role === 'tool' && last && last.role === 'user' && last.content.every((b) => b.type === 'tool_result')) {
      last.content.push(...wire.content)
    } else messages.push(wire)
  })
  const system = all.filter((m) => m && m.role === 'system').map(blockText).join('\n\n')
  const options = request.options !== null && typeof request.options === 'object' ? request.options : {}
  const body = {
    model: model.model,
    messages,
    stream: true,
    ...parameters,
    max_tokens: maxTokens ?? (model.limits && model.limits.maxOutputTokens) ?? 4096,
    // `compat` and `extra` go into the body as written; the fields mapped here win over them.
    ...passThroughCompat(request),
    ...(options.extra !== null && typeof options.extra === 'object' ? options.extra : {}),
  }
  const thinking = anthropicThinking(request)
  if (thinking !== undefined) body.thinking = thinking
  const effort = anthropicEffort(request)
  if (effort !== undefined) body.effort = effort
  // A marked system prompt goes as a text block carrying the marker.
  if (system) body.system = systemMarker ? [{ type: 'text', text: system, cache_control: systemMarker }] : system
  if (Array.isArray(request.tools) && request.tools.length > 0) body.tools = toAnthropicTools(request.tools, { toolSearch: defaults.toolSearch })
  const toolChoice = anthropicToolChoice(requestToolChoice(request))
  if (toolChoice !== undefined) body.tool_choice = toolChoice
  return body
}

function toUsage(wire, previous) {
  if (!wire || typeof wire !== 'object') return previous
  const out = { ...previous }
  // message_delta reports cumulative output tokens and, on some servers, no input tokens: keep what
  // message_start said instead of overwriting it.
  if (typeof wire.input_tokens === 'number') out.inputTokens = wire.input_tokens
  if (typeof wire.output_tokens === 'number') out.outputTokens = wire.output_tokens
  if (typeof wire.cache_read_input_tokens === 'number') out.cacheReadTokens = wire.cache_read_input_tokens
  if (typeof wire.cache_creation_input_tokens === 'number') out.cacheWriteTokens = wire.cache_creation_input_tokens
  if (out.inputTokens !== undefined || out.outputTokens !== undefined) {
    out.totalTokens = (out.inputTokens ?? 0) + (out.cacheReadTokens ?? 0) + (out.cacheWriteTokens ?? 0) + (out.outputTokens ?? 0)
  }
  return out
}

/**
 * Messages API SSE `body` → provider events.
 * @param {ReadableStream<Uint8Array>} body
 * @param {Parameters<typeof import('../../types/providers').anthropicMessagesEvents>[1]} [options]
 */
async function* anthropicMessagesEvents(body, options = {}) {
  const blocks = createAnthropicToolBlockAssembler()
  let usage
  let stopReason
  let sawStop = false
  for await (const sse of http.readSse(body, { signal: options.signal, maxResponseBytes: options.maxResponseBytes, maxEventBytes: options.maxEventBytes })) {
    if (!sse.data || sse.data === '[DONE]') continue
    let event
    try {
      event = parseEventJson(sse.data, 'Anthropic stream')
    } catch (err) {
      yield providerError(err)
      return
    }
    if (!event || typeof event !== 'object') continue
    switch (event.type) {
      case 'message_start':
        usage = toUsage(event.message && event.message.usage, usage)
        break
      case 'content_block_start': {
        const block = event.content_block !== null && typeof event.content_block === 'object' ? event.content_block : {}
        // Every block is kept in the order it starts, whatever its index (tool-call-assembly.js).
        const entry = blocks.start(Number.isInteger(event.index) ? event.index : undefined, block)
        if (entry.tool) yield providerToolCallDelta({ index: entry.position, id: block.id, name: block.name, ...(entry.hosted ? HOSTED : undefined) })
        else if (block.type === 'text' && block.text) yield providerTextDelta(block.text)
        else if (block.type === 'tool_search_tool_result') yield { type: 'content_delta', content: hostedToolResult(block) }
        break
      }
      case 'content_block_delta': {
        const delta = event.delta ?? {}
        if (delta.type === 'text_delta' && delta.text) yield providerTextDelta(delta.text)
        else if (delta.type === 'thinking_delta' && delta.thinking) yield { type: 'content_delta', content: { type: 'thinking', text: delta.thinking } }
        else if (delta.type === 'signature_delta' && delta.signature) {
          yield { type: 'content_delta', content: { type: 'thinking', text: '', signature: delta.signature } }
        } else if (delta.type === 'input_json_delta') {
          const entry = blocks.delta(Number.isInteger(event.index) ? event.index : undefined, delta.partial_json)
          if (entry === undefined) {
            yield providerError(new ProviderTransportError('incomplete_delta', 'Anthropic stream sent input_json_delta outside a tool_use block'))
            return
          }
          if (delta.partial_json) yield providerToolCallDelta({ index: entry.position, argumentsText: delta.partial_json })
        }
        break
      }
      case 'content_block_stop':
        blocks.stop(Number.isInteger(event.index) ? event.index : undefined)
        break
      case 'message_delta':
        usage = toUsage(event.usage, usage)
        if (event.delta && event.delta.stop_reason) stopReason = event.delta.stop_reason
        break
      case 'message_stop':
        sawStop = true
        break
      case 'error': {
        const e = event.error ?? {}
        yield providerError(Object.assign(new Error(`Anthropic stream error: ${e.message ?? 'unknown'}`), { code: e.type ?? 'stream_error' }), options.secrets)
        return
      }
      default:
        break // ping and future event types
    }
    if (sawStop) break
  }
  const dangling = blocks.blocks.some((b) => !b.id || !b.name || !b.complete)
  if (!sawStop || dangling) {
    yield providerError(
      new Error(
        `Anthropic messages stream ended without completion evidence (message_stop: ${sawStop ? 'received' : 'missing'}, content blocks complete: ${dangling ? 'no' : 'yes'})`,
      ),
    )
    return
  }
  if (usage) yield providerUsage(usage)
  for (const b of blocks.blocks) {
    const call = toolCallFromArgumentsText(b.id, b.name, anthropicArgumentsText(b), { maxBytes: options.maxArgumentBytes })
    yield providerToolCall(b.hosted ? { ...call, ...HOSTED } : call)
  }
  yield providerDone(usage, stopReason)
}

/**
 * `createAnthropicMessagesProvider(options)`: an AIProvider for the Anthropic Messages API.
 * @param {Record<string, any>} [options]
 */
function createAnthropicMessagesProvider(options = {}) {
  if (options === null || typeof options !== 'object') throw new TypeError('createAnthropicMessagesProvider: options must be an object')
  const id = options.id ?? 'anthropic'
  // The endpoint is checked now, not at the first request: an absolute http(s) URL, no userinfo.
  if (options.baseUrl !== undefined) checkEndpointUrl('createAnthropicMessagesProvider', 'baseUrl', options.baseUrl)
  const baseUrl = (options.baseUrl ?? ANTHROPIC_DEFAULT_BASE_URL).replace(/\/+$/, '')
  const timeoutMs = http.checkTimeoutMs('createAnthropicMessagesProvider', options.timeoutMs)
  // `toolSearch`: the server-side search sent with deferred tools ("bm25", the default, or "regex");
  // `false` sends no search and leaves deferred tools to the agent's `search_tools`.
  const toolSearch = options.toolSearch ?? 'bm25'
  if (toolSearch !== false) anthropicToolSearch(toolSearch, 'createAnthropicMessagesProvider')
  const provider = http.createStreamingProvider(id, options, timeoutMs, {
    body: (request) => anthropicMessagesBody(request, { cache: options.cache, cacheRetention: options.cacheRetention, toolSearch }),
    url: () => `${baseUrl}/messages`,
    headers(request, apiKey) {
      const headers = { 'anthropic-version': ANTHROPIC_API_VERSION }
      if (options.userAgent) headers['user-agent'] = options.userAgent
      if (apiKey) headers['x-api-key'] = apiKey
      // The session id, as upstream's provider sends it, so the API's logs can be joined with ours.
      const sessionId = request.options && request.options.sessionId
      if (typeof sessionId === 'string' && sessionId !== '') headers['x-client-request-id'] = sessionId
      return headers
    },
    prefix: 'Anthropic request failed',
    noBodyMessage: 'Anthropic response had no body',
    events: anthropicMessagesEvents,
  })
  // What the agent reads: deferred tools go to this provider marked, with its own search.
  provider.nativeToolSearch = toolSearch !== false
  return provider
}

module.exports = { createAnthropicMessagesProvider, anthropicMessagesEvents, anthropicMessagesBody, ANTHROPIC_API_VERSION, ANTHROPIC_DEFAULT_BASE_URL }
