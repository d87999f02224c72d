'use strict'
// Transports from plain configuration: stdio (a spawned server, killed on close) and Streamable HTTP
// (exact allow-listed origins, public hosts unless loopback is enabled, DNS answers checked and pinned,
// plaintext only for loopback, no redirects, every response bounded).
const sdk = require('./sdk.js')
const { McpBridgeError } = require('./errors.js')
const L = require('./limits.js')

const { isAllowedHost, isLoopbackHostname } = require('./address.js')
const { SentHeaderValues, rememberSentHeaders } = require('./sent-headers.js')

function transportError(message, cause) {
  return new McpBridgeError(message, { cause, code: 'ERR_PRISM_MCP_TRANSPORT' })
}

function allowedOriginSet(config) {
  const values = config.allowedOrigins
  if (!Array.isArray(values) || values.length < 1 || values.length > 64) {
    throw transportError('allowedOrigins must contain 1..64 exact origins')
  }
  const out = new Set()
  for (const value of values) {
    let parsed
    try {
      parsed = new URL(value)
    } catch {
      throw transportError(`Invalid MCP allowed origin: ${value}`)
    }
    if (value !== parsed.origin) throw transportError(`MCP allowed origin must be exact (scheme, host, optional port): ${value}`)
    if (parsed.protocol !== 'https:' && !(config.allowLoopbackHttp === true && parsed.protocol === 'http:' && isLoopbackHostname(parsed.hostname))) {
      throw transportError(`MCP allowed origin must use HTTPS: ${value}`)
    }
    out.add(parsed.origin)
  }
  return out
}

function checkUrl(url, origins, config) {
  if (url.username || url.password) throw transportError('MCP HTTP URL must not embed credentials')
  if (url.hash) throw transportError('MCP HTTP URL must not contain a fragment')
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw transportError(`MCP HTTP URL must use https: (got ${url.protocol})`)
  if (!origins.has(url.origin)) throw transportError(`MCP HTTP origin ${url.origin} is not allow-listed`)
  if (url.protocol === 'http:' && !(config.allowLoopbackHttp === true && isLoopbackHostname(url.hostname))) {
    throw transportError('Plaintext MCP HTTP is allowed only for an explicitly enabled loopback endpoint')
  }
  // Loopback, private, link-local (cloud metadata) and other non-public hosts: loopback only with the opt-in.
  if (!isAllowedHost(url, config.allowLoopbackHttp === true)) throw transportError('MCP HTTP URL is not public')
}

/**
 * A response whose body errors, with `overflow()`, once it passes `maxBytes` (default: the
 * transport's `MCP HTTP response exceeds …` error). A declared `content-length` over the bound is
 * refused at once (the body is cancelled and `overflow()` thrown).
 */
function boundResponse(response, maxBytes, overflow = () => transportError(`MCP HTTP response exceeds ${maxBytes} bytes`)) {
  const declared = Number(response.headers.get('content-length') ?? Number.NaN)
  if (Number.isFinite(declared) && declared > maxBytes) {
    void Promise.resolve(response.body?.cancel()).catch(() => undefined)
    throw overflow()
  }
  if (!response.body) return response
  let seen = 0
  const bounded = response.body.pipeThrough(
    new TransformStream({
      transform(chunk, controller) {
        seen += chunk.byteLength
        if (seen > maxBytes) {
          controller.error(overflow())
          return
        }
        controller.enqueue(chunk)
      },
    }),
  )
  return new Response(bounded, { status: response.status, statusText: response.statusText, headers: response.headers })
}

function checkedResolver(config) {
  const resolver = config.resolveHostname
  if (resolver !== undefined && typeof resolver !== 'function') throw transportError('resolveHostname must be a function')
  return resolver
}

/**
 * The fetch every Streamable HTTP request goes through, as upstream's `createSecureMcpFetch`: the URL
 * checked as the endpoint is (allow-listed origin, public host, loopback-only plaintext), the endpoint's
 * origin only, no `Host` override, the hostname resolved once per request and every answer checked before
 * the connect, which goes to the checked address only (lib/mcp/pinned-fetch.js); no redirects; the body
 * bounded by `maxResponseBytes`. With a host `fetch` (this package's option) that fetch connects: the URL
 * checks, redirects and bound still apply, DNS answers are the host fetch's to check. `sent` (a
 * transport's own, lib/mcp/sent-headers.js) notes the header values of every request, so the bridge can
 * keep them out of what it makes of the answers.
 * @param {import('../../types/mcp').McpStreamableHttpTransport} config
 */
function createSecureMcpFetch(config, sent) {
  if (config === null || typeof config !== 'object') throw transportError('MCP transport config must be an object')
  const endpoint = checkedEndpoint(config)
  const origins = allowedOriginSet(config)
  const maxBytes = L.validateMcpLimit('maxResponseBytes', config.maxResponseBytes ?? L.DEFAULT_MAX_HTTP_RESPONSE_BYTES, L.HARD_MAX_HTTP_RESPONSE_BYTES)
  const resolver = checkedResolver(config)
  const allowLoopback = config.allowLoopbackHttp === true
  const base =
    typeof config.fetch === 'function'
      ? config.fetch
      : require('./pinned-fetch.js').createPinnedFetch({ resolver, allowLoopback, fail: transportError })
  return async (input, init) => {
    const url = new URL(input instanceof URL ? input.href : typeof input === 'string' ? input : input.url)
    checkUrl(url, origins, config)
    if (url.origin !== endpoint.origin) throw transportError(`MCP HTTP request origin ${url.origin} does not match configured endpoint`)
    const headers = new Headers(init && init.headers)
    if (headers.has('host')) throw transportError('MCP HTTP requests must not override Host')
    if (sent instanceof SentHeaderValues) sent.note(headers)
    const response = await base(url, { ...init, headers, redirect: 'manual' })
    if (response.status >= 300 && response.status < 400) {
      try {
        await response.body?.cancel()
      } catch {}
      throw transportError(`MCP HTTP redirects are not allowed (status ${response.status})`)
    }
    return boundResponse(response, maxBytes)
  }
}

/** The endpoint URL of a Streamable HTTP config, checked as every request is. */
function checkedEndpoint(config) {
  let url
  try {
    url = new URL(config.url)
  } catch (error) {
    throw transportError(`Invalid MCP HTTP URL: ${config.url}`, error)
  }
  checkUrl(url, allowedOriginSet(config), config)
  return url
}

/**
 * @param {import('../../types/mcp').McpTransportConfig} config
 */
function createMcpTransport(config) {
  if (config === null || typeof config !== 'object') throw transportError('MCP transport config must be an object')
  switch (config.type) {
    case 'stdio': {
      if (typeof config.command !== 'string' || config.command.length === 0) throw transportError('MCP stdio transport needs a command')
      const maxBufferSize = L.validateMcpLimit('maxMessageBytes', config.maxMessageBytes ?? L.DEFAULT_MAX_HTTP_RESPONSE_BYTES, L.HARD_MAX_HTTP_RESPONSE_BYTES)
      const { StdioClientTransport } = sdk.stdio()
      return new StdioClientTransport({
        command: config.command,
        args: config.args ? [...config.args] : undefined,
        env: config.env ? { ...config.env } : undefined,
        cwd: config.cwd,
        stderr: config.stderr,
        maxBufferSize,
      })
    }
    case 'streamable-http': {
      const url = checkedEndpoint(config)
      // With `auth`: the OAuth transport (lib/mcp/oauth-transport.js, loaded here to keep the cycle lazy).
      if (config.auth) return require('./oauth-transport.js').createMcpOAuthTransport(config).transport
      const { StreamableHTTPClientTransport } = sdk.streamableHttp()
      const sent = new SentHeaderValues()
      return rememberSentHeaders(new StreamableHTTPClientTransport(url, {
        requestInit: config.requestInit,
        sessionId: config.sessionId,
        fetch: createSecureMcpFetch(config, sent),
        // A broken stream is reported at once instead of being retried behind a pending call.
        reconnectionOptions: { initialReconnectionDelay: 100, maxReconnectionDelay: 1000, reconnectionDelayGrowFactor: 2, maxRetries: 0 },
      }), sent)
    }
    default:
      throw transportError(`Unsupported MCP transport: ${String(/** @type {{ type?: unknown }} */ (config).type)}`)
  }
}

module.exports = { createMcpTransport, createSecureMcpFetch, boundResponse, checkedEndpoint, allowedOriginSet, checkedResolver, transportError, isLoopbackHostname }
