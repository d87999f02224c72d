'use strict'
// Streamable HTTP with OAuth (`transport.auth`), as upstream's `createMcpOAuthTransport` and
// `createMcpOAuthFetch`. Requests to an allow-listed MCP origin go through the bridge's bounded fetch
// (the SDK adds the bearer token to those only). Every other request of the OAuth flow — metadata
// discovery, token, registration and revocation endpoints — is a discovery request: https (http only
// for loopback with `allowLoopbackHttp`), a public host unless loopback is enabled, no credentials or
// fragment in the URL, no redirects, a GET never carries an `Authorization` header, the body bounded by
// `discoveryBytes` and the whole request by `handshakeTimeoutMs`; its hostname resolved once and pinned as
// the MCP requests' are (lib/mcp/pinned-fetch.js) unless the host gave its own `fetch`.
const sdk = require('./sdk.js')
const { McpBridgeError } = require('./errors.js')
const { createMcpClientAuth, McpOAuthError, resolveMcpOAuthLimits } = require('./auth.js')
const { createSecureMcpFetch, checkedEndpoint, allowedOriginSet, checkedResolver, boundResponse } = require('./transport.js')
const { createPinnedFetch } = require('./pinned-fetch.js')
const { isAllowedHost, isLoopbackHostname } = require('./address.js')
const { SentHeaderValues, rememberSentHeaders } = require('./sent-headers.js')

function oauthError(code, message, cause) {
  return new McpOAuthError(code, message, cause === undefined ? undefined : { cause })
}

async function discoveryFetch(url, init, context) {
  if (url.username || url.password) throw oauthError('ERR_PRISM_MCP_OAUTH_SSRF', 'OAuth discovery URL must not embed credentials')
  if (url.hash) throw oauthError('ERR_PRISM_MCP_OAUTH_SSRF', 'OAuth discovery URL must not contain a fragment')
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw oauthError('ERR_PRISM_MCP_OAUTH_SSRF', `OAuth discovery URL must use https: (got ${url.protocol})`)
  if (url.protocol === 'http:' && !(context.allowLoopback && isLoopbackHostname(url.hostname))) {
    throw oauthError('ERR_PRISM_MCP_OAUTH_SSRF', 'Plaintext OAuth discovery is allowed only for an explicitly enabled loopback endpoint')
  }
  if (!isAllowedHost(url, context.allowLoopback)) throw oauthError('ERR_PRISM_MCP_OAUTH_SSRF', 'OAuth discovery URL is not public')
  const headers = new Headers(init && init.headers)
  const method = (init && init.method) || 'GET'
  if (method === 'GET') {
    headers.delete('authorization')
    headers.delete('proxy-authorization')
  }
  const timeout = AbortSignal.timeout(context.limits.handshakeTimeoutMs)
  const signal = init && init.signal ? AbortSignal.any([init.signal, timeout]) : timeout
  const response = await context.fetch(url, { ...init, method, headers, signal, redirect: 'manual' })
  if (response.status >= 300 && response.status < 400) {
    try {
      await response.body?.cancel()
    } catch {}
    throw oauthError('ERR_PRISM_MCP_OAUTH_DISCOVERY', `OAuth discovery redirects are not allowed (status ${response.status})`)
  }
  const maxBytes = context.limits.discoveryBytes
  return boundResponse(response, maxBytes, () => oauthError('ERR_PRISM_MCP_OAUTH_DISCOVERY', `OAuth discovery response exceeds ${maxBytes} bytes`))
}

/**
 * The fetch of an OAuth-enabled transport.
 * @param {import('../../types/mcp').McpStreamableHttpTransport} config
 */
function createMcpOAuthFetch(config, limits = resolveMcpOAuthLimits(config && config.auth && config.auth.limits), sent = undefined) {
  const origins = allowedOriginSet(config)
  const secure = createSecureMcpFetch(config, sent)
  const allowLoopback = config.allowLoopbackHttp === true
  // A host fetch connects itself; otherwise discovery requests are DNS-pinned like the MCP requests.
  const custom = typeof config.fetch === 'function' ? config.fetch : typeof config.auth?.fetch === 'function' ? config.auth.fetch : undefined
  const base =
    custom ??
    createPinnedFetch({
      resolver: checkedResolver(config),
      allowLoopback,
      fail: (message, cause) => new McpBridgeError(message, { cause, code: 'ERR_PRISM_MCP_TRANSPORT' }),
    })
  const context = { allowLoopback, limits, fetch: base }
  return async (input, init) => {
    const url = new URL(input instanceof URL ? input.href : typeof input === 'string' ? input : input.url)
    if (origins.has(url.origin)) return secure(url, init)
    return discoveryFetch(url, init, context)
  }
}

/**
 * Streamable HTTP with `config.auth`: `{ transport, auth }`, `auth` being `createMcpClientAuth`'s handle
 * (`finishAuth`, `revoke`, `getTokens`, `ensureAuthorized`).
 */
function createMcpOAuthTransport(config) {
  if (!config || !config.auth) throw new McpBridgeError('createMcpOAuthTransport requires an auth option', { code: 'ERR_PRISM_MCP_TRANSPORT' })
  const url = checkedEndpoint(config)
  const limits = resolveMcpOAuthLimits(config.auth.limits)
  // The bearer token the provider adds is noted with the other header values of MCP requests.
  const sent = new SentHeaderValues()
  const fetch = createMcpOAuthFetch(config, limits, sent)
  const auth = createMcpClientAuth(config.auth, { serverUrl: url, fetch, limits })
  const { StreamableHTTPClientTransport } = sdk.streamableHttp()
  const transport = new StreamableHTTPClientTransport(url, {
    requestInit: config.requestInit,
    sessionId: config.sessionId,
    authProvider: auth.provider,
    fetch,
    reconnectionOptions: { initialReconnectionDelay: 100, maxReconnectionDelay: 1000, reconnectionDelayGrowFactor: 2, maxRetries: 0 },
  })
  return { transport: rememberSentHeaders(transport, sent), auth }
}

module.exports = { createMcpOAuthFetch, createMcpOAuthTransport }
