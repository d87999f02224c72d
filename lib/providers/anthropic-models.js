'use strict'
// Anthropic model helpers as `@arnilo/prism-provider-anthropic` names them: `defineAnthropicModel`
// (a model config with Claude's capabilities, `cache_control` caching and thinking replay),
// `mapAnthropicModel` (one `GET /v1/models` entry as a model config) and `listAnthropicModels`
// (model discovery, on the caller's request only). No catalogue of model names is shipped.
const http = require('./http.js')
const { checkEndpointUrl, transportFailure } = require('./wire-errors.js')

const ANTHROPIC_API_VERSION = '2023-06-01'
const ANTHROPIC_DEFAULT_BASE_URL = 'https://api.anthropic.com/v1'
const MAX_MODELS_BYTES = 4 * 1024 * 1024
const MAX_PAGES = 50

/** A model config for a Claude model: given fields win over the defaults. */
function defineAnthropicModel(config) {
  if (config === null || typeof config !== 'object') throw new TypeError('defineAnthropicModel: config must be an object')
  return {
    ...config,
    provider: config.provider ?? 'anthropic',
    capabilities: { input: ['text', 'image', 'document', 'file'], output: ['text'], reasoning: true, tools: true, streaming: true, ...config.capabilities },
    cache: config.cache ?? { kind: 'cache_control', longRetention: true },
    compat: { preserveThinking: true, ...config.compat },
  }
}

function thinkingDefaults(id) {
  const name = id.toLowerCase()
  if (name.includes('haiku-4-5') || name.includes('haiku-4.5')) return { thinking: { type: 'enabled', budget_tokens: 10_000 } }
  if (['opus-4-8', 'opus-4-7', 'sonnet-5', 'fable-5', 'mythos'].some((n) => name.includes(n))) return { thinking: { type: 'adaptive' }, effort: 'high' }
  return {}
}

/** One `GET /v1/models` entry as a model config; an entry without an `id` throws. */
function mapAnthropicModel(entry, options = {}) {
  if (entry === null || typeof entry !== 'object' || typeof entry.id !== 'string' || entry.id.length === 0) {
    throw new Error('Anthropic model entry missing id')
  }
  const limits = {}
  if (typeof entry.max_input_tokens === 'number') limits.contextWindow = entry.max_input_tokens
  if (typeof entry.max_tokens === 'number') limits.maxOutputTokens = entry.max_tokens
  const anthropic = {}
  if (entry.created_at !== undefined) anthropic.created_at = entry.created_at
  if (entry.type !== undefined) anthropic.type = entry.type
  const config = {
    provider: options.provider ?? 'anthropic',
    model: entry.id,
    displayName: typeof entry.display_name === 'string' ? entry.display_name : entry.id,
    compat: { preserveThinking: true, anthropic, ...thinkingDefaults(entry.id) },
  }
  if (Object.keys(limits).length > 0) config.limits = limits
  return defineAnthropicModel(config)
}

async function readBoundedJson(response, what) {
  const text = await readBounded(response, MAX_MODELS_BYTES, what)
  try {
    return JSON.parse(text)
  } catch {
    throw new Error(`${what}: the response is not JSON`)
  }
}

async function readBounded(response, maxBytes, what) {
  if (!response.body) return ''
  const reader = response.body.getReader()
  const chunks = []
  let size = 0
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      size += value.byteLength
      if (size > maxBytes) throw new Error(`${what}: the response exceeds ${maxBytes} bytes`)
      chunks.push(Buffer.from(value.buffer, value.byteOffset, value.byteLength))
    }
  } finally {
    reader.cancel().catch(() => {})
  }
  return Buffer.concat(chunks).toString('utf8')
}

/**
 * Model discovery: `GET ${baseUrl}/models` (each page, following `has_more`), answered as model
 * configs. Never called by the provider. Errors are redacted of the key and name the URL without
 * userinfo; the answer is bounded (4 MiB a page, 50 pages).
 * @param {Record<string, any>} [options]
 */
async function listAnthropicModels(options = {}) {
  if (options === null || typeof options !== 'object') throw new TypeError('listAnthropicModels: options must be an object')
  const what = 'Anthropic model discovery failed'
  const baseUrl = checkEndpointUrl('listAnthropicModels', 'baseUrl', options.baseUrl ?? ANTHROPIC_DEFAULT_BASE_URL).replace(/\/+$/, '')
  const apiKey = await http.resolveApiKey(options.apiKey, options.signal)
  const secrets = apiKey ? [apiKey] : []
  const headers = { ...(options.headers ?? {}), 'anthropic-version': ANTHROPIC_API_VERSION }
  if (apiKey) headers['x-api-key'] = apiKey
  const fetchImpl = options.fetch ?? fetch
  const models = []
  let after
  for (let page = 0; page < MAX_PAGES; page++) {
    const url = after === undefined ? `${baseUrl}/models` : `${baseUrl}/models?after_id=${encodeURIComponent(after)}`
    let response
    try {
      response = await fetchImpl(url, { method: 'GET', headers, signal: options.signal })
    } catch (err) {
      if (options.signal && options.signal.aborted) throw err
      throw transportFailure(err, { prefix: what, method: 'GET', url })
    }
    if (!response.ok) {
      const body = await readBounded(response, 65_536, what).catch(() => '')
      throw new Error(`${what}: ${response.status} ${http.redact(body, secrets)}`)
    }
    const payload = await readBoundedJson(response, what)
    if (payload === null || typeof payload !== 'object' || !Array.isArray(payload.data)) throw new Error(`${what}: the response has no data array`)
    for (const entry of payload.data) models.push(mapAnthropicModel(entry, { provider: options.provider }))
    if (payload.has_more !== true || typeof payload.last_id !== 'string' || payload.last_id === '' || payload.last_id === after) break
    after = payload.last_id
  }
  return models
}

module.exports = { defineAnthropicModel, mapAnthropicModel, listAnthropicModels }
