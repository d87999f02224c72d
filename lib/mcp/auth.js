'use strict'
// OAuth for remote MCP servers, with `@arnilo/prism-mcp`'s API: `createMcpClientAuth` builds the SDK's
// `OAuthClientProvider` over a host's persistence seam (`state`) and registration strategy (static
// client or dynamic registration). The SDK's `auth()` runs discovery (protected-resource and
// authorization-server metadata), the authorization code flow with PKCE (S256) and `state`, and token
// refresh; this module adds the policy: a protected resource must be the MCP server's own origin
// (`ERR_PRISM_MCP_OAUTH_AUDIENCE`), the metadata's issuer the discovered server's origin
// (`ERR_PRISM_MCP_OAUTH_ORIGIN`), every record bounded, and no token, verifier or secret in any error
// message this package writes.
const { randomUUID } = require('node:crypto')
const sdk = require('./sdk.js')

class McpOAuthError extends Error {
  constructor(code, message, options) {
    super(message, options && typeof options === 'object' && 'cause' in options ? { cause: options.cause } : undefined)
    this.name = 'McpOAuthError'
    this.code = code
  }
}

const DEFAULT_LIMITS = Object.freeze({
  discoveryBytes: 64 * 1024,
  discoveryCacheEntries: 16,
  discoveryCacheTtlMs: 600_000,
  tokenRecordBytes: 16 * 1024,
  stateBytes: 4 * 1024,
  handshakeTimeoutMs: 60_000,
})
const HARD_LIMITS = Object.freeze({
  discoveryBytes: 256 * 1024,
  discoveryCacheEntries: 64,
  discoveryCacheTtlMs: 3_600_000,
  tokenRecordBytes: 64 * 1024,
  stateBytes: 16 * 1024,
  handshakeTimeoutMs: 300_000,
})

function resolveMcpOAuthLimits(input = {}) {
  const out = {}
  for (const key of Object.keys(DEFAULT_LIMITS)) {
    const value = (input && input[key]) ?? DEFAULT_LIMITS[key]
    if (!Number.isSafeInteger(value) || value < 1 || value > HARD_LIMITS[key]) {
      throw new McpOAuthError('ERR_PRISM_MCP_OAUTH_STATE', `${key} must be a positive safe integer <= ${HARD_LIMITS[key]}`)
    }
    out[key] = value
  }
  return Object.freeze(out)
}

function jsonBytes(value) {
  return Buffer.byteLength(typeof value === 'string' ? value : JSON.stringify(value) ?? '', 'utf8')
}

const SCOPES = new Set(['all', 'client', 'tokens', 'verifier', 'discovery'])

function checkOptions(options) {
  if (options === null || typeof options !== 'object') throw new McpOAuthError('ERR_PRISM_MCP_OAUTH_STATE', 'MCP OAuth needs an options object')
  const state = options.state
  for (const method of ['loadTokens', 'saveTokens', 'loadDiscovery', 'saveDiscovery', 'loadClientInformation', 'saveClientInformation', 'loadCodeVerifier', 'saveCodeVerifier', 'clear']) {
    if (!state || typeof state[method] !== 'function') throw new McpOAuthError('ERR_PRISM_MCP_OAUTH_STATE', `MCP OAuth state must implement ${method}()`)
  }
  const strategy = options.strategy
  if (!strategy || (strategy.kind !== 'static' && strategy.kind !== 'dcr')) {
    throw new McpOAuthError('ERR_PRISM_MCP_OAUTH_STATE', 'MCP OAuth strategy must be { kind: "static", clientId } or { kind: "dcr", clientMetadata }')
  }
  if (strategy.kind === 'static' && (typeof strategy.clientId !== 'string' || strategy.clientId.length === 0)) {
    throw new McpOAuthError('ERR_PRISM_MCP_OAUTH_STATE', 'a static MCP OAuth client needs a clientId')
  }
  if (strategy.kind === 'dcr' && (strategy.clientMetadata === null || typeof strategy.clientMetadata !== 'object')) {
    throw new McpOAuthError('ERR_PRISM_MCP_OAUTH_STATE', 'dynamic MCP OAuth registration needs clientMetadata')
  }
}

/** The `OAuthClientProvider` the SDK's transport and `auth()` call. */
function createProvider(options, limits) {
  const now = typeof options.now === 'function' ? options.now : Date.now
  const store = options.state
  const strategy = options.strategy
  let cache // { state, savedAt }
  let loaded = false
  const bounded = (value, max, code, label) => {
    if (jsonBytes(value) > max) throw new McpOAuthError(code, `${label} exceeds ${max} bytes`)
  }
  return {
    get redirectUrl() {
      return options.redirectUri
    },
    get clientMetadata() {
      if (strategy.kind === 'dcr') return strategy.clientMetadata
      return {
        client_name: 'prism-tools-native-mcp',
        redirect_uris: options.redirectUri !== undefined ? [String(options.redirectUri)] : [],
        ...(options.scopes && options.scopes.length ? { scope: options.scopes.join(' ') } : {}),
      }
    },
    async clientInformation() {
      if (strategy.kind === 'static') return { client_id: strategy.clientId, ...(strategy.clientSecret !== undefined ? { client_secret: strategy.clientSecret } : {}) }
      return store.loadClientInformation()
    },
    async saveClientInformation(info) {
      if (strategy.kind !== 'dcr') return
      bounded(info, limits.tokenRecordBytes, 'ERR_PRISM_MCP_OAUTH_TOKEN_STORE', 'client registration record')
      await store.saveClientInformation(info)
    },
    tokens: () => store.loadTokens(),
    async saveTokens(tokens) {
      bounded(tokens, limits.tokenRecordBytes, 'ERR_PRISM_MCP_OAUTH_TOKEN_STORE', 'token record')
      await store.saveTokens(tokens)
    },
    async redirectToAuthorization(url) {
      if (typeof options.onRedirectRequired !== 'function') {
        throw new McpOAuthError('ERR_PRISM_MCP_OAUTH_STATE', 'interactive authorization required; provide onRedirectRequired and complete finishAuth(authorizationCode)')
      }
      await options.onRedirectRequired(url)
    },
    state: () => randomUUID(),
    async saveCodeVerifier(verifier) {
      bounded(verifier, limits.stateBytes, 'ERR_PRISM_MCP_OAUTH_STATE', 'PKCE verifier')
      await store.saveCodeVerifier(verifier)
    },
    async codeVerifier() {
      const verifier = await store.loadCodeVerifier()
      if (!verifier) throw new McpOAuthError('ERR_PRISM_MCP_OAUTH_STATE', 'PKCE code verifier is missing from the auth round trip')
      return verifier
    },
    // RFC 8707: the resource a token is for must be the MCP server's own origin.
    async validateResourceURL(serverUrl, resource) {
      if (resource === undefined) return undefined
      let parsed
      try {
        parsed = new URL(resource)
      } catch {
        throw new McpOAuthError('ERR_PRISM_MCP_OAUTH_AUDIENCE', 'protected resource metadata declared an invalid resource URL')
      }
      if (parsed.origin !== new URL(serverUrl).origin) {
        throw new McpOAuthError('ERR_PRISM_MCP_OAUTH_AUDIENCE', `protected resource ${parsed.origin} does not match the MCP server origin (confused-deputy denial)`)
      }
      return parsed
    },
    async saveDiscoveryState(state) {
      const issuer = state && state.authorizationServerMetadata && state.authorizationServerMetadata.issuer
      if (issuer !== undefined) {
        let url
        try {
          url = new URL(issuer)
        } catch {
          throw new McpOAuthError('ERR_PRISM_MCP_OAUTH_ORIGIN', 'authorization server metadata declared an invalid issuer')
        }
        if (url.origin !== new URL(state.authorizationServerUrl).origin) {
          throw new McpOAuthError('ERR_PRISM_MCP_OAUTH_ORIGIN', `authorization server issuer ${url.origin} does not match the discovered AS origin`)
        }
      }
      bounded(state, limits.stateBytes, 'ERR_PRISM_MCP_OAUTH_STATE', 'discovery state')
      await store.saveDiscovery(state)
      cache = { state, savedAt: now() }
    },
    async discoveryState() {
      if (!loaded) {
        loaded = true
        const persisted = await store.loadDiscovery()
        if (persisted) cache = { state: persisted, savedAt: now() }
      }
      return cache && now() - cache.savedAt < limits.discoveryCacheTtlMs ? cache.state : undefined
    },
    async invalidateCredentials(scope) {
      cache = undefined
      await store.clear(SCOPES.has(scope) ? scope : 'all')
    },
  }
}

function applyClientAuth(headers, params, method, clientId, clientSecret) {
  if (method === 'none') {
    params.set('client_id', clientId)
    return
  }
  if (!clientSecret) throw new McpOAuthError('ERR_PRISM_MCP_OAUTH_TOKEN_STORE', 'client authentication requires a client secret')
  if (method === 'client_secret_post') {
    params.set('client_id', clientId)
    params.set('client_secret', clientSecret)
    return
  }
  headers.set('authorization', `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`).toString('base64')}`)
}

/**
 * @param {import('../../types/mcp').McpClientAuthOptions} options
 * @param {{ serverUrl: string | URL, fetch: typeof fetch, limits?: object }} context
 */
function createMcpClientAuth(options, context) {
  checkOptions(options)
  if (!context || context.serverUrl === undefined || typeof context.fetch !== 'function') {
    throw new McpOAuthError('ERR_PRISM_MCP_OAUTH_STATE', 'createMcpClientAuth needs { serverUrl, fetch }')
  }
  const limits = context.limits ?? resolveMcpOAuthLimits(options.limits)
  const provider = createProvider(options, limits)
  const { auth, selectClientAuthMethod } = sdk.auth()
  let inflight
  const run = (input) => {
    if (inflight) return inflight
    inflight = auth(provider, {
      serverUrl: context.serverUrl,
      scope: input.scope,
      resourceMetadataUrl: input.resourceMetadataUrl,
      authorizationCode: input.authorizationCode,
      fetchFn: context.fetch,
    }).finally(() => {
      inflight = undefined
    })
    return inflight
  }
  return {
    provider,
    ensureAuthorized: (input) => run({ scope: input && input.scope, resourceMetadataUrl: input && input.resourceMetadataUrl }),
    async finishAuth(authorizationCode) {
      if (!options.redirectUri) throw new McpOAuthError('ERR_PRISM_MCP_OAUTH_STATE', 'authorization code flow requires redirectUri')
      if (typeof authorizationCode !== 'string' || authorizationCode.length === 0 || Buffer.byteLength(authorizationCode) > limits.stateBytes) {
        throw new McpOAuthError('ERR_PRISM_MCP_OAUTH_STATE', 'authorization code is missing or too long')
      }
      const result = await run({ authorizationCode })
      if (result !== 'AUTHORIZED') throw new McpOAuthError('ERR_PRISM_MCP_OAUTH_STATE', 'authorization code exchange did not complete')
    },
    async revoke() {
      const tokens = await options.state.loadTokens()
      const discovery = await options.state.loadDiscovery()
      /** @type {any} */
      const metadata = discovery && discovery.authorizationServerMetadata
      const endpoint = metadata && metadata.revocation_endpoint
      if (tokens && endpoint) {
        const params = new URLSearchParams({ token: tokens.refresh_token ?? tokens.access_token, token_type_hint: tokens.refresh_token ? 'refresh_token' : 'access_token' })
        const headers = new Headers({ 'content-type': 'application/x-www-form-urlencoded' })
        const client = await provider.clientInformation()
        if (client) {
          const method = selectClientAuthMethod(client, (metadata && metadata.token_endpoint_auth_methods_supported) || [])
          applyClientAuth(headers, params, method, client.client_id, client.client_secret)
        }
        const response = await context.fetch(endpoint, { method: 'POST', headers, body: params.toString(), redirect: 'manual' })
        try {
          await response.body?.cancel()
        } catch {}
        // The answer's body is never quoted: it may echo the token.
        if (response.status >= 300) throw new McpOAuthError('ERR_PRISM_MCP_OAUTH_TOKEN_STORE', `token revocation failed with HTTP ${response.status}`)
      }
      await options.state.clear('tokens')
    },
    getTokens: () => options.state.loadTokens(),
  }
}

module.exports = { createMcpClientAuth, McpOAuthError, resolveMcpOAuthLimits, DEFAULT_MCP_OAUTH_LIMITS: DEFAULT_LIMITS, HARD_MCP_OAUTH_LIMITS: HARD_LIMITS }
