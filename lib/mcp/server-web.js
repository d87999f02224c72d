'use strict'
// `createPrismMcpWebHandler`: a served MCP server over Streamable HTTP as a web-standard
// `(Request) => Promise<Response>` handler, with upstream's options, limits and messages. Request and
// response bodies are bounded, requests are counted and timed, and a stateful session belongs to the
// principal that opened it (`resolveIdentity`). With a server factory each session gets its own server
// and transport, at most `maxSessions` at once; an idle session may be evicted to make room.
const { randomUUID } = require('node:crypto')
const { SERVER_LIMITS: L, serverError, bounded, validCapabilityId } = require('./server-limits.js')
const sdk = require('./sdk.js')
const { linkedController } = require('./server-call.js')
const http = require('./server-http.js')
const { rejectOnAbort } = require('../abort-watch.js')

function isInitialize(body) {
  const one = (message) => message && typeof message === 'object' && message.method === 'initialize'
  return Array.isArray(body) ? body.some(one) : one(body)
}

async function createPrismMcpWebHandler(server, options = {}) {
  const { WebStandardStreamableHTTPServerTransport } = sdk.webStandardStreamableHttp()
  const isFactory = typeof server === 'function'
  const createServer = isFactory ? server : () => server
  const maxRequestBytes = bounded(options.maxRequestBytes, L.DEFAULT_MAX_HTTP_REQUEST_BYTES, L.HARD_MAX_HTTP_REQUEST_BYTES, 'maxRequestBytes')
  const maxResponseBytes = bounded(options.maxResponseBytes, L.DEFAULT_MAX_SERVER_HTTP_RESPONSE_BYTES, L.HARD_MAX_SERVER_HTTP_RESPONSE_BYTES, 'maxResponseBytes')
  const maxConcurrentRequests = bounded(options.maxConcurrentRequests, L.DEFAULT_MAX_CONCURRENT_REQUESTS, L.HARD_MAX_CONCURRENT_REQUESTS, 'maxConcurrentRequests')
  const requestTimeoutMs = bounded(options.requestTimeoutMs, L.DEFAULT_SERVER_CALL_TIMEOUT_MS, L.HARD_SERVER_CALL_TIMEOUT_MS, 'requestTimeoutMs')
  const maxSessions = bounded(options.maxSessions, L.DEFAULT_MAX_SESSIONS, L.HARD_MAX_SESSIONS, 'maxSessions')
  const sessionIdleMs = bounded(options.sessionIdleMs, L.DEFAULT_SESSION_IDLE_MS, L.HARD_SESSION_IDLE_MS, 'sessionIdleMs')
  const stateful = options.sessionIdGenerator !== undefined
  if (stateful && typeof options.sessionIdGenerator !== 'function') {
    throw serverError('sessionIdGenerator must be a function', 'ERR_PRISM_MCP_OPTIONS')
  }
  if (stateful && (!options.resolveIdentity || !options.allowedOrigins?.length)) {
    throw serverError('Stateful MCP sessions require resolveIdentity and exact allowedOrigins', 'ERR_PRISM_MCP_OPTIONS')
  }
  if (!stateful && !isFactory) {
    throw serverError(
      'Stateless MCP web handlers require a server factory (() => McpServer): SDK stateless transports cannot be reused across requests',
      'ERR_PRISM_MCP_OPTIONS',
    )
  }
  const protectedResource = options.protectedResource === undefined ? undefined : http.normalizeProtectedResource(options.protectedResource)

  /** @type {Map<string, { identityId: string | undefined, transport: any, server: any, lastSeen: number, own: boolean }>} */
  const sessions = new Map()
  let openingSessions = 0
  const transportOptions = () => ({
    sessionIdGenerator: stateful
      ? () => {
          const id = options.sessionIdGenerator() ?? randomUUID()
          if (!validCapabilityId(id) || sessions.has(id)) throw serverError('Invalid or duplicate MCP session id', 'ERR_PRISM_MCP_SESSION')
          return id
        }
      : undefined,
    enableJsonResponse: options.enableJsonResponse ?? true,
    allowedHosts: options.allowedHosts ? [...options.allowedHosts] : undefined,
    allowedOrigins: options.allowedOrigins ? [...options.allowedOrigins] : undefined,
    enableDnsRebindingProtection: Boolean(options.allowedHosts?.length || options.allowedOrigins?.length),
  })
  const closeSession = (id) => {
    const entry = sessions.get(id)
    if (!entry) return
    sessions.delete(id)
    if (entry.own) {
      void Promise.resolve(entry.transport.close()).catch(() => undefined)
      void Promise.resolve(entry.server.close()).catch(() => undefined)
    }
  }
  /** Room for one more session: evicts the longest-idle sessions past `sessionIdleMs` when full. */
  const roomForSession = () => {
    if (sessions.size + openingSessions < maxSessions) return true
    const cutoff = Date.now() - sessionIdleMs
    const idle = [...sessions].filter(([, entry]) => entry.own && entry.lastSeen <= cutoff).sort((a, b) => a[1].lastSeen - b[1].lastSeen)
    for (const [id] of idle) {
      closeSession(id)
      if (sessions.size + openingSessions < maxSessions) return true
    }
    return false
  }

  // A server instance (not a factory) serves one stateful transport, as upstream.
  let sharedTransport
  let sharedServer
  if (stateful && !isFactory) {
    sharedTransport = new WebStandardStreamableHTTPServerTransport(transportOptions())
    sharedServer = server
    await sharedServer.connect(sharedTransport)
  }
  let activeRequests = 0

  const handle = async (request, controller) => {
    if (protectedResource && new URL(request.url).pathname === http.WELL_KNOWN_OAUTH_PROTECTED_RESOURCE) {
      if (request.method !== 'GET') return http.httpError(405, 'Method not allowed')
      return http.protectedResourceMetadata(protectedResource)
    }
    const authInfo = options.resolveAuthInfo ? await rejectOnAbort(options.resolveAuthInfo(request), controller.signal) : undefined
    const identity = options.resolveIdentity ? await rejectOnAbort(options.resolveIdentity(request, authInfo), controller.signal) : undefined
    if (options.resolveIdentity && !identity) return http.unauthorized(protectedResource, request)
    const identityId = identity ? identity.id : undefined
    if (identityId !== undefined && (!validCapabilityId(identityId) || Buffer.byteLength(identityId, 'utf8') > 256)) {
      return http.unauthorized(protectedResource, request)
    }
    const requestedSession = request.headers.get('mcp-session-id') ?? undefined
    const existing = requestedSession === undefined ? undefined : sessions.get(requestedSession)
    if (requestedSession !== undefined && (!existing || existing.identityId !== identityId)) return http.httpError(404, 'MCP session not found')
    const parsedBody = request.method === 'POST' ? await http.readBoundedJson(request, maxRequestBytes, controller.signal) : undefined
    const transportRequest = new Request(request.url, { method: request.method, headers: request.headers, signal: controller.signal })

    let transport
    let mcpServer
    let opening = false
    if (existing) {
      existing.lastSeen = Date.now()
      transport = existing.transport
      mcpServer = existing.server
    } else if (sharedTransport) {
      if (isInitialize(parsedBody) && sessions.size >= maxSessions) return http.httpError(503, 'MCP session limit reached', 'ERR_PRISM_MCP_SESSION_LIMIT')
      transport = sharedTransport
      mcpServer = sharedServer
    } else if (stateful) {
      if (!isInitialize(parsedBody)) return http.httpError(400, 'Bad Request: Mcp-Session-Id header is required', 'ERR_PRISM_MCP_SESSION_REQUIRED')
      if (!roomForSession()) return http.httpError(503, 'MCP session limit reached', 'ERR_PRISM_MCP_SESSION_LIMIT')
      opening = true
      openingSessions += 1
    }
    try {
      if (!transport) {
        transport = new WebStandardStreamableHTTPServerTransport(transportOptions())
        mcpServer = await createServer()
        await mcpServer.connect(transport)
      }
      let response
      try {
        response = await rejectOnAbort(transport.handleRequest(transportRequest, { parsedBody, authInfo }), controller.signal)
      } catch (error) {
        if (!existing && transport !== sharedTransport) {
          void Promise.resolve(transport.close()).catch(() => undefined)
          void Promise.resolve(mcpServer.close()).catch(() => undefined)
        }
        throw error
      }
      const createdSession = response.headers.get('mcp-session-id') ?? undefined
      if (createdSession !== undefined && !existing) {
        const prior = sessions.get(createdSession)
        if (prior && prior.identityId !== identityId) return http.httpError(404, 'MCP session not found')
        const own = transport !== sharedTransport
        sessions.set(createdSession, { identityId, transport, server: mcpServer, lastSeen: Date.now(), own })
        if (own) transport.onclose = chain(transport.onclose, () => sessions.get(createdSession)?.transport === transport && sessions.delete(createdSession))
      }
      if (request.method === 'DELETE' && requestedSession !== undefined && response.status < 400) closeSession(requestedSession)
      if (!stateful) {
        // A per-request server and transport close once the body is consumed or cancelled.
        return http.boundResponse(response, maxResponseBytes, () => {
          void Promise.resolve(transport.close()).catch(() => undefined)
          void Promise.resolve(mcpServer.close()).catch(() => undefined)
        })
      }
      if (opening && createdSession === undefined) {
        void Promise.resolve(transport.close()).catch(() => undefined)
        void Promise.resolve(mcpServer.close()).catch(() => undefined)
      }
      return http.boundResponse(response, maxResponseBytes)
    } finally {
      if (opening) openingSessions -= 1
    }
  }

  const defaultHosts = !options.allowedHosts?.length
  const handler = async (request) => {
    // Without allowedHosts, a loopback server answers only to loopback host names (DNS rebinding).
    const refusal = defaultHosts ? http.loopbackHostRefusal(request) : undefined
    if (refusal !== undefined) return refusal
    if (activeRequests >= maxConcurrentRequests) return http.httpError(429, 'MCP server is busy', 'ERR_PRISM_MCP_BUSY')
    activeRequests += 1
    const linked = linkedController(request.signal)
    const timeout = setTimeout(() => linked.controller.abort(serverError('MCP HTTP request timed out', 'ERR_PRISM_MCP_TIMEOUT')), requestTimeoutMs)
    try {
      return await handle(request, linked)
    } catch (error) {
      if (error instanceof http.McpHttpError) return http.httpError(error.status, error.message)
      return linked.signal.aborted ? http.httpError(408, 'MCP request timed out') : http.httpError(500, 'MCP request failed')
    } finally {
      clearTimeout(timeout)
      linked.dispose()
      activeRequests -= 1
    }
  }
  // Not upstream's: the live session count, and closing every session the handler opened.
  Object.defineProperty(handler, 'sessionCount', { get: () => sessions.size })
  handler.close = async () => {
    for (const id of [...sessions.keys()]) closeSession(id)
    if (sharedTransport) await Promise.resolve(sharedTransport.close()).catch(() => undefined)
  }
  return handler
}

function chain(first, second) {
  return () => {
    try {
      if (typeof first === 'function') first()
    } finally {
      second()
    }
  }
}

module.exports = { createPrismMcpWebHandler }
