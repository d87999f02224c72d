'use strict'
// Chat Completions streaming for any OpenAI-compatible endpoint, on `fetch` and an SSE parser.
// Emits the provider event protocol: content_delta (text / thinking), tool_call_delta per piece,
// usage, then the assembled tool_call per call, then done, or one error event.
const { providerTextDelta, providerToolCall, providerToolCallDelta, providerUsage, providerDone, providerError } = require('../provider.js')
const { toolCallFromArgumentsText } = require('../arguments-text.js')
const { ProviderTransportError } = require('../errors.js')
const { serializeOpenAITool, OPENAI_MAX_TOOLS, maxToolsOption, checkToolCap } = require('./tools.js')
const http = require('./http.js')
const { createChatToolCallAssembler } = require('./tool-call-assembly.js')
const { parseEventJson, checkEndpointUrl } = require('./wire-errors.js')
const { requestToolChoice, openAIToolChoice, wireParameters, coalesceContent } = require('./request-options.js')
const { MEDIA_TYPES, mediaTypeOf, resourceLinkText, omittedBlockText } = require('../tool-result-content.js')

function thinkingDelta(text) {
  return { type: 'content_delta', content: { type: 'thinking', text } }
}

function mapOpenAIChatUsage(usage) {
  if (!usage || typeof usage !== 'object' || Array.isArray(usage)) return undefined
  const details = usage.prompt_tokens_details && typeof usage.prompt_tokens_details === 'object' ? usage.prompt_tokens_details : {}
  if (usage.prompt_tokens === undefined && usage.completion_tokens === undefined && usage.total_tokens === undefined) return undefined
  const out = { inputTokens: usage.prompt_tokens, outputTokens: usage.completion_tokens, totalTokens: usage.total_tokens }
  const cacheRead = details.cached_tokens ?? usage.prompt_cache_hit_tokens
  if (cacheRead !== undefined) out.cacheReadTokens = cacheRead
  const cacheWrite = details.cache_write_tokens ?? details.cache_creation_input_tokens
  if (cacheWrite !== undefined) out.cacheWriteTokens = cacheWrite
  return out
}

function textOf(content) {
  return content.filter((p) => p && (p.type === 'text' || p.type === 'thinking')).map((p) => p.text).join('\n')
}

const isHostedPart = (p) => p !== null && typeof p === 'object' && (p.type === 'hosted_tool_result' || (p.type === 'tool_call' && p.authority === 'provider-hosted'))

/** One transcript message as a Chat Completions message. */
function serializeOpenAIChatMessage(message, index = 0) {
  if (!message || typeof message !== 'object' || typeof message.role !== 'string' || !Array.isArray(message.content)) {
    throw new Error(`Invalid provider message at messages[${index}]: expected { role, content: [] }`)
  }
  if (message.role === 'tool') {
    const result = message.content.find((p) => p && p.type === 'tool_result')
    const text = result ? JSON.stringify(result.result ?? result.error ?? null) : ''
    const extra = toolContentText(message.content)
    // With content blocks, a result without a value or error is its blocks alone (no `null` line).
    const bare = result && result.result === undefined && result.error === undefined
    return {
      role: 'tool',
      tool_call_id: result ? result.toolCallId ?? '' : '',
      content: extra.length > 0 ? (bare ? extra : [text, ...extra]).join('\n') : text,
    }
  }
  // Adjacent streamed text goes as one part.
  // A provider-hosted call and its result were another API's own: this one has nothing to replay them as.
  let content = coalesceContent(message.content)
  if (content.some(isHostedPart)) content = content.filter((p) => !isHostedPart(p))
  const calls = content.filter((p) => p && p.type === 'tool_call')
  if (message.role === 'assistant' && calls.length > 0) {
    return {
      role: 'assistant',
      // A string, empty when there is no text: some servers' schemas refuse `null` here.
      content: textOf(content),
      tool_calls: calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.arguments ?? {}) } })),
    }
  }
  const parts = []
  for (const part of content) {
    if (!part) continue
    if (part.type === 'text' || part.type === 'thinking') parts.push({ type: 'text', text: part.text })
    else if (part.type === 'image') {
      const url = part.url ?? (part.data ? `data:${part.mimeType ?? 'image/png'};base64,${part.data}` : undefined)
      if (!url) throw new Error('Provider image block missing url or data')
      parts.push({ type: 'image_url', image_url: { url } })
    } else if (part.type === 'tool_result') throw new Error('Provider tool_result blocks must appear in role=tool messages')
    else throw new Error(`OpenAI Chat Completions does not support ${part.type} content blocks`)
  }
  if (parts.length === 1 && parts[0].type === 'text') return { role: message.role, content: parts[0].text }
  return { role: message.role, content: parts }
}

// ----- rich tool results -------------------------------------------------------------------------
// A Chat Completions `tool` message holds text only. A tool result's own text blocks and resource
// links join that text; its images, files and audio go in one `user` message after the run of tool
// messages (one between two tool messages would orphan the second), each introduced by the call's id.

/** The text lines a tool message's content blocks add to its JSON result. */
function toolContentText(content) {
  const lines = []
  for (const part of content) {
    if (!part || typeof part !== 'object' || part.type === 'tool_result') continue
    if (part.type === 'text' && typeof part.text === 'string') lines.push(part.text)
    else if (part.type === 'resource_link') lines.push(resourceLinkText(part))
    else if (openAIAttachmentPart(part) !== undefined) lines.push(`[${part.type} ${mediaTypeOf(part) ?? ''} attached in the next user message]`.replace(' ]', ']'))
    else if (MEDIA_TYPES.has(part.type)) lines.push(omittedBlockText(part, 'OpenAI Chat Completions'))
  }
  return lines
}

const OPENAI_AUDIO_FORMATS = { 'audio/wav': 'wav', 'audio/x-wav': 'wav', 'audio/wave': 'wav', 'audio/mpeg': 'mp3', 'audio/mp3': 'mp3' }

/** A media block as a user-message content part Chat Completions accepts, or undefined. */
function openAIAttachmentPart(part) {
  const mediaType = mediaTypeOf(part)
  if (part.type === 'image') {
    const url = typeof part.url === 'string' ? part.url : typeof part.data === 'string' ? `data:${mediaType ?? 'image/png'};base64,${part.data}` : undefined
    return url === undefined ? undefined : { type: 'image_url', image_url: { url } }
  }
  if ((part.type === 'file' || part.type === 'document') && typeof part.data === 'string' && mediaType !== undefined) {
    return { type: 'file', file: { filename: typeof part.name === 'string' && part.name !== '' ? part.name : 'attachment', file_data: `data:${mediaType};base64,${part.data}` } }
  }
  const format = mediaType !== undefined ? OPENAI_AUDIO_FORMATS[mediaType.toLowerCase()] : undefined
  if (part.type === 'audio' && typeof part.data === 'string' && format !== undefined) return { type: 'input_audio', input_audio: { data: part.data, format } }
  return undefined
}

/** The attachment parts of one tool message (with a line naming its call), or an empty list. */
function toolAttachmentParts(message) {
  if (!message || message.role !== 'tool' || !Array.isArray(message.content)) return []
  const parts = []
  for (const part of message.content) {
    const p = part && typeof part === 'object' && part.type !== 'tool_result' ? openAIAttachmentPart(part) : undefined
    if (p !== undefined) parts.push(p)
  }
  if (parts.length === 0) return parts
  const result = message.content.find((p) => p && p.type === 'tool_result')
  const id = result ? result.toolCallId ?? '' : ''
  return [{ type: 'text', text: `Attachments of tool call ${id}${result && result.name ? ` (${result.name})` : ''}:` }, ...parts]
}

/** Wire messages with each run of tool messages followed by one user message of their attachments. */
function withToolAttachments(source, wire) {
  const out = []
  let pending = []
  source.forEach((m, i) => {
    if (pending.length > 0 && !(m && m.role === 'tool')) {
      out.push({ role: 'user', content: pending })
      pending = []
    }
    out.push(wire[i])
    pending = pending.concat(toolAttachmentParts(m))
  })
  if (pending.length > 0) out.push({ role: 'user', content: pending })
  return out
}

function buildOpenAIChatBody(request, options = {}) {
  const model = request.model ?? {}
  const source = options.mapMessages ? options.mapMessages(request) : request.messages ?? []
  const serialized = source.map((m, i) => (options.serializeMessage ? options.serializeMessage(m, request) : serializeOpenAIChatMessage(m, i)))
  // A host's own serializer decides for itself what a tool message carries.
  const messages = options.serializeMessage ? serialized : withToolAttachments(source, serialized)
  /** @type {Record<string, any>} */
  const body = {
    model: model.model,
    messages,
    stream: true,
    stream_options: { include_usage: true },
    ...wireParameters(model.parameters, 'openai'),
  }
  if (Array.isArray(request.tools) && request.tools.length > 0) {
    // A request never carries more tools than the endpoint takes (`maxTools`, OpenAI's 128 by default).
    checkToolCap(request.tools.length, maxToolsOption(options.maxTools, OPENAI_MAX_TOOLS, 'createOpenAICompatibleProvider'), 'OpenAI-compatible request')
    body.tools = request.tools.map(serializeOpenAITool)
  }
  const toolChoice = openAIToolChoice(requestToolChoice(request))
  if (toolChoice !== undefined) body.tool_choice = toolChoice
  const structured = request.options && request.options.structuredOutput
  if (structured) {
    body.response_format = {
      type: 'json_schema',
      json_schema: { name: structured.name, schema: structured.schema, ...(structured.strict === undefined ? {} : { strict: structured.strict }) },
    }
  }
  const merged = { ...body, ...(options.buildBodyExtra ? options.buildBodyExtra(request) : undefined) }
  return options.transformBody ? options.transformBody(merged, request) : merged
}

/**
 * Chat Completions SSE `body` → provider events.
 * @param {ReadableStream<Uint8Array>} body
 * @param {Parameters<typeof import('../../types/providers').openAIChatEvents>[1]} [options]
 */
async function* openAIChatEvents(body, options = {}) {
  const calls = createChatToolCallAssembler()
  let usage
  let sawDone = false
  let finishReason
  const mapUsage = options.mapUsage ?? mapOpenAIChatUsage
  for await (const sse of http.readSse(body, { signal: options.signal, maxResponseBytes: options.maxResponseBytes, maxEventBytes: options.maxEventBytes })) {
    const data = sse.data.trim()
    if (!data) continue
    if (data === '[DONE]') {
      sawDone = true
      break
    }
    let chunk
    try {
      chunk = parseEventJson(data, 'Chat stream')
    } catch (err) {
      yield providerError(err)
      return
    }
    if (chunk && chunk.error) {
      yield providerError(Object.assign(new Error(`Chat stream error: ${chunk.error.message ?? JSON.stringify(chunk.error)}`), { code: chunk.error.code ?? 'stream_error' }), options.secrets)
      return
    }
    const mapped = chunk && chunk.usage ? mapUsage(chunk.usage) : undefined
    if (mapped) {
      // Some servers repeat usage on several chunks; the last one is the total, reported once at the end.
      usage = mapped
    }
    for (const choice of Array.isArray(chunk && chunk.choices) ? chunk.choices.filter((c) => c !== null && typeof c === 'object') : []) {
      if (choice.finish_reason) finishReason = choice.finish_reason
      const delta = choice.delta ?? {}
      if (typeof delta.content === 'string' && delta.content) yield providerTextDelta(delta.content)
      const thinking = delta.reasoning ?? delta.reasoning_content
      if (typeof thinking === 'string' && thinking) yield thinkingDelta(thinking)
      for (const piece of Array.isArray(delta.tool_calls) ? delta.tool_calls : []) {
        // Keyed by index, else by id (tool-call-assembly.js); the event's index is the call's
        // position and its name the name assembled so far.
        const call = calls.add(piece)
        if (call === undefined) continue
        const fn = piece.function !== null && typeof piece.function === 'object' ? piece.function : {}
        const event = { index: call.position }
        if (typeof piece.id === 'string' && piece.id !== '') event.id = piece.id
        if (typeof fn.name === 'string' && call.name !== undefined) event.name = call.name
        if (typeof fn.arguments === 'string') event.argumentsText = fn.arguments
        yield providerToolCallDelta(event)
      }
    }
  }
  const strict = options.strictCompletion ?? true
  if (strict && (!sawDone || !finishReason)) {
    yield providerError(
      new Error(`Chat stream ended without completion evidence ([DONE]: ${sawDone ? 'received' : 'missing'}, finish_reason: ${finishReason ? 'received' : 'missing'})`),
    )
    return
  }
  for (const call of calls.calls) {
    if (!call.id || !call.name) {
      yield providerError(new ProviderTransportError('incomplete_delta', `Incomplete tool call delta at index ${call.position}`))
      return
    }
  }
  if (usage) yield providerUsage(usage)
  for (const call of calls.calls) {
    yield providerToolCall(toolCallFromArgumentsText(call.id, call.name, call.argumentsText, { maxBytes: options.maxArgumentBytes }))
  }
  yield providerDone(usage, finishReason)
}

/** `createOpenAICompatibleProvider(options)`: an AIProvider for a Chat Completions endpoint. */
function createOpenAICompatibleProvider(options) {
  if (!options || typeof options !== 'object') throw new TypeError('createOpenAICompatibleProvider: options must be an object')
  const authStyle = options.authStyle ?? 'bearer'
  if (!['bearer', 'api-key', 'none'].includes(authStyle)) throw new TypeError(`createOpenAICompatibleProvider: unknown authStyle ${authStyle}`)
  // The endpoint is checked now, not at the first request: an absolute http(s) URL, no userinfo.
  if (options.chatCompletionsUrl === undefined || options.baseUrl !== undefined) checkEndpointUrl('createOpenAICompatibleProvider', 'baseUrl', options.baseUrl)
  if (typeof options.chatCompletionsUrl === 'string') checkEndpointUrl('createOpenAICompatibleProvider', 'chatCompletionsUrl', options.chatCompletionsUrl)
  else if (options.chatCompletionsUrl !== undefined && typeof options.chatCompletionsUrl !== 'function') {
    throw new TypeError('createOpenAICompatibleProvider: chatCompletionsUrl must be a string or a function')
  }
  const id = options.id ?? 'openai-compatible'
  const timeoutMs = http.checkTimeoutMs('createOpenAICompatibleProvider', options.timeoutMs)
  const maxTools = maxToolsOption(options.maxTools, OPENAI_MAX_TOOLS, 'createOpenAICompatibleProvider')
  const provider = http.createStreamingProvider(id, options, timeoutMs, {
    body: (request) => buildOpenAIChatBody(request, options),
    url(request) {
      if (typeof options.chatCompletionsUrl !== 'function') return options.chatCompletionsUrl ?? `${options.baseUrl.replace(/\/+$/, '')}/chat/completions`
      const url = options.chatCompletionsUrl(request)
      checkEndpointUrl('createOpenAICompatibleProvider', 'chatCompletionsUrl(request)', url)
      return url
    },
    headers(request, apiKey) {
      if (apiKey && authStyle === 'bearer') return { authorization: `Bearer ${apiKey}` }
      if (apiKey && authStyle === 'api-key') return { 'api-key': apiKey }
      return undefined
    },
    prefix: options.requestFailedPrefix ?? 'OpenAI-compatible request failed',
    noBodyMessage: 'OpenAI-compatible response had no body',
    events: (body, read) => openAIChatEvents(body, { ...read, strictCompletion: options.strictCompletion, mapUsage: options.mapUsage }),
  })
  // What the agent reads to keep a turn within the endpoint's cap (lib/agent-tool-policy.js).
  provider.maxTools = maxTools
  return provider
}

module.exports = { createOpenAICompatibleProvider, openAIChatEvents, buildOpenAIChatBody, serializeOpenAIChatMessage, mapOpenAIChatUsage }
