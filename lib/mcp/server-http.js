'use strict'
// HTTP pieces of the served side: a request body read up to a bound, a response body bounded (JSON
// buffered and checked; an event stream relayed and cut at the bound), RFC 9728 protected-resource
// metadata and its 401 challenge, and an adapter from the web-standard handler to `node:http`.
const { Readable } = require('node:stream')
const { serverError } = require('./server-limits.js')
const { isLoopbackAddress } = require('./address.js')

const WELL_KNOWN_OAUTH_PROTECTED_RESOURCE = '/.well-known/oauth-protected-resource'

class McpHttpError extends Error {
  constructor(status, message) {
    super(message)
    this.status = status
  }
}

function httpError(status, message, code) {
  const error = code === undefined ? { message } : { message, code }
  return Response.json({ error }, { status, headers: { 'cache-control': 'no-store' } })
}

/** All of `reader` as one buffer, or undefined (the reader cancelled) once it passes `maxBytes`. */
async function readAtMost(reader, maxBytes) {
  const chunks = []
  let size = 0
  for (;;) {
    const next = await reader.read()
    if (next.done) return Buffer.concat(chunks, size)
    size += next.value.byteLength
    if (size > maxBytes) {
      await reader.cancel().catch(() => undefined)
      return undefined
    }
    chunks.push(next.value)
  }
}

/** The POST body as JSON: `application/json`, at most `maxBytes`, valid UTF-8. */
async function readBoundedJson(request, maxBytes, signal) {
  const type = request.headers.get('content-type')?.split(';', 1)[0]?.trim().toLowerCase()
  if (type !== 'application/json') throw new McpHttpError(415, 'Content-Type must be application/json')
  const declared = Number(request.headers.get('content-length'))
  if (Number.isFinite(declared) && declared > maxBytes) throw new McpHttpError(413, 'MCP request body too large')
  const reader = request.body?.getReader()
  if (!reader) throw new McpHttpError(400, 'MCP request body is required')
  const abort = () => void reader.cancel(signal.reason).catch(() => undefined)
  if (signal.aborted) abort()
  else signal.addEventListener('abort', abort, { once: true })
  let body
  try {
    body = await readAtMost(reader, maxBytes)
  } finally {
    signal.removeEventListener('abort', abort)
    reader.releaseLock()
  }
  if (body === undefined) throw new McpHttpError(413, 'MCP request body too large')
  if (signal.aborted) throw new McpHttpError(408, 'MCP request timed out')
  try {
    return JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(body))
  } catch {
    throw new McpHttpError(400, 'Invalid MCP JSON body')
  }
}

/**
 * The response with a bounded body. A JSON body over `maxBytes` becomes a 507; an event stream is
 * relayed chunk by chunk and cut (the stream errors) once it has carried `maxBytes`. `onClose` runs
 * once, when the body has been consumed, cut or cancelled (or at once without a body).
 */
async function boundResponse(response, maxBytes, onClose = () => undefined) {
  const close = once(onClose)
  if (!response.body) {
    close()
    return response
  }
  const reader = response.body.getReader()
  const init = { status: response.status, statusText: response.statusText, headers: response.headers }
  if (!(response.headers.get('content-type') ?? '').includes('text/event-stream')) {
    let body
    try {
      body = await readAtMost(reader, maxBytes)
    } finally {
      close()
    }
    if (body === undefined) return httpError(507, 'MCP response too large', 'ERR_PRISM_MCP_RESPONSE_LIMIT')
    return new Response(body, init)
  }
  return new Response(relayReader(reader, close, maxBytes), init)
}

/**
 * A stateless answer's body relayed chunk by chunk, as upstream's `relayStatelessBody`: `onClose` runs
 * exactly once, when the body ends, fails or the reader cancels (the source is cancelled too). A null body
 * closes at once and gives null.
 * @param {ReadableStream<Uint8Array> | null} body
 * @param {() => void} onClose
 * @returns {Response | null}
 */
function relayStatelessBody(body, onClose) {
  if (typeof onClose !== 'function') throw serverError('relayStatelessBody needs an onClose function', 'ERR_PRISM_MCP_OPTIONS')
  const close = once(onClose)
  if (body === null || body === undefined) {
    close()
    return null
  }
  if (typeof body.getReader !== 'function') {
    close()
    throw serverError('relayStatelessBody needs a ReadableStream body or null', 'ERR_PRISM_MCP_OPTIONS')
  }
  return new Response(relayReader(body.getReader(), close))
}

/** `fn`, to be run at most once however often it is called. */
function once(fn) {
  let done = false
  return () => {
    if (done) return
    done = true
    fn()
  }
}

/**
 * `reader`'s chunks as a new stream. `close` runs when the source ends or fails, when the stream is cut
 * (past `maxBytes` it errors, `ERR_PRISM_MCP_RESPONSE_LIMIT`, and the source is cancelled) and when the
 * consumer cancels (the source is cancelled too).
 */
function relayReader(reader, close, maxBytes = Infinity) {
  let size = 0
  return new ReadableStream({
    async pull(controller) {
      let next
      try {
        next = await reader.read()
      } catch (error) {
        close()
        controller.error(error)
        return
      }
      if (next.done) {
        controller.close()
        close()
        return
      }
      size += next.value.byteLength
      if (size > maxBytes) {
        void reader.cancel().catch(() => undefined)
        close()
        controller.error(serverError(`MCP event stream exceeds ${maxBytes} bytes`, 'ERR_PRISM_MCP_RESPONSE_LIMIT'))
        return
      }
      controller.enqueue(next.value)
    },
    cancel(reason) {
      void reader.cancel(reason).catch(() => undefined)
      close()
    },
  })
}

function isLoopbackHostname(hostname) {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase()
  return host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host)
}

function validateProtectedResourceUrl(value, label) {
  let url
  try {
    url = new URL(value)
  } catch {
    throw serverError(`${label} URL is invalid`, 'ERR_PRISM_MCP_OPTIONS')
  }
  if (url.username || url.password || url.hash) throw serverError(`${label} URL must not embed credentials or fragments`, 'ERR_PRISM_MCP_OPTIONS')
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackHostname(url.hostname))) {
    throw serverError(`${label} URL must use https: (plaintext loopback is allowed)`, 'ERR_PRISM_MCP_OPTIONS')
  }
  return url.href
}

/** Upstream's checks of `protectedResource` (RFC 9728), with its messages. */
function normalizeProtectedResource(input) {
  if (!input || !Array.isArray(input.authorizationServers) || input.authorizationServers.length < 1 || input.authorizationServers.length > 8) {
    throw serverError('protectedResource.authorizationServers must contain 1..8 URLs', 'ERR_PRISM_MCP_OPTIONS')
  }
  const authorizationServers = input.authorizationServers.map((value) => validateProtectedResourceUrl(value, 'authorization server'))
  if (typeof input.resource !== 'string') throw serverError('protectedResource.resource is required (RFC 9728)', 'ERR_PRISM_MCP_OPTIONS')
  const resource = validateProtectedResourceUrl(input.resource, 'protected resource')
  const out = { authorizationServers, resource }
  if (input.scopesSupported !== undefined) {
    const scopes = input.scopesSupported
    if (!Array.isArray(scopes) || scopes.length < 1 || scopes.length > 64) {
      throw serverError('protectedResource.scopesSupported must contain 1..64 scopes', 'ERR_PRISM_MCP_OPTIONS')
    }
    for (const scope of scopes) {
      if (typeof scope !== 'string' || !scope.trim() || Buffer.byteLength(scope, 'utf8') > 128) {
        throw serverError('protectedResource.scopesSupported contains an invalid scope', 'ERR_PRISM_MCP_OPTIONS')
      }
    }
    if (Buffer.byteLength(JSON.stringify(scopes), 'utf8') > 8 * 1024) throw serverError('protectedResource.scopesSupported exceeds 8 KiB', 'ERR_PRISM_MCP_OPTIONS')
    out.scopesSupported = [...scopes]
  }
  return out
}

function protectedResourceMetadata(protectedResource) {
  const body = { authorization_servers: protectedResource.authorizationServers, resource: protectedResource.resource }
  if (protectedResource.scopesSupported !== undefined) body.scopes_supported = protectedResource.scopesSupported
  return Response.json(body, { headers: { 'cache-control': 'no-store' } })
}

/** 401: with `protectedResource`, a Bearer challenge pointing at the metadata (RFC 9728). */
function unauthorized(protectedResource, request) {
  if (!protectedResource) return httpError(401, 'Unauthorized')
  const origin = new URL(request.url).origin
  return Response.json(
    { error: { message: 'Unauthorized' } },
    { status: 401, headers: { 'cache-control': 'no-store', 'www-authenticate': `Bearer resource_metadata="${origin}${WELL_KNOWN_OAUTH_PROTECTED_RESOURCE}"` } },
  )
}

/**
 * A `node:http` request listener over a web-standard handler. `baseUrl` (e.g. `http://127.0.0.1:3000`)
 * fixes the scheme and authority of the `Request`; by default they come from the `Host` header. The
 * request's signal aborts when the client goes away.
 */
// The local address each Request made by createPrismMcpNodeHandler arrived on (its socket's), read by
// the web handler's default Host check (`loopbackHostRefusal`).
const arrivedOn = new WeakMap()

// The host names a loopback server answers to by default, as the MCP SDK's `localhostHostValidation`.
const LOOPBACK_HOST_NAMES = new Set(['localhost', '127.0.0.1', '[::1]'])

/**
 * The default DNS-rebinding protection of a server without `allowedHosts`: a request that arrived on a
 * loopback address (a server bound to 127.0.0.1, localhost or ::1) must name a loopback host —
 * `localhost`, `127.0.0.1` or `[::1]`, any port — in its `Host` header, or a web page whose name was
 * rebound to 127.0.0.1 could call the server. A 403 in the SDK's words, or undefined. A request the
 * handler cannot place (no node socket) is not judged: the host gives `allowedHosts`.
 */
function loopbackHostRefusal(request) {
  const local = arrivedOn.get(request)
  if (local === undefined || !isLoopbackAddress(local)) return undefined
  const header = request.headers.get('host')
  let hostname
  try {
    hostname = header ? new URL(`http://${header}`).hostname : undefined
  } catch {}
  if (hostname !== undefined && LOOPBACK_HOST_NAMES.has(hostname)) return undefined
  const message = `Invalid Host header: ${header}`
  return Response.json({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }, { status: 403 })
}

function createPrismMcpNodeHandler(handler, options = {}) {
  if (typeof handler !== 'function') throw serverError('createPrismMcpNodeHandler needs a web handler (request) => Promise<Response>', 'ERR_PRISM_MCP_OPTIONS')
  const base = options.baseUrl === undefined ? undefined : new URL(options.baseUrl)
  return async (req, res) => {
    const controller = new AbortController()
    res.on('close', () => {
      if (!res.writableFinished) controller.abort(serverError('MCP HTTP client disconnected', 'ERR_PRISM_MCP_DISCONNECTED'))
    })
    try {
      const url = new URL(req.url ?? '/', base ?? `http://${req.headers.host ?? 'localhost'}`)
      const headers = new Headers()
      for (const [name, value] of Object.entries(req.headers)) {
        if (Array.isArray(value)) for (const v of value) headers.append(name, v)
        else if (value !== undefined) headers.set(name, value)
      }
      const hasBody = req.method !== 'GET' && req.method !== 'HEAD'
      const request = new Request(url, {
        method: req.method,
        headers,
        signal: controller.signal,
        ...(hasBody ? { body: Readable.toWeb(req), duplex: 'half' } : {}),
      })
      if (req.socket && typeof req.socket.localAddress === 'string') arrivedOn.set(request, req.socket.localAddress)
      const response = await handler(request)
      res.statusCode = response.status
      for (const [name, value] of response.headers) res.setHeader(name, value)
      if (!response.body) {
        res.end()
        return
      }
      res.flushHeaders()
      const reader = response.body.getReader()
      controller.signal.addEventListener('abort', () => void reader.cancel().catch(() => undefined), { once: true })
      for (;;) {
        const next = await reader.read()
        if (next.done) break
        if (!res.write(next.value)) await new Promise((resolve) => res.once('drain', resolve).once('close', resolve))
      }
      res.end()
    } catch {
      if (!res.headersSent) {
        res.statusCode = 500
        res.setHeader('content-type', 'application/json')
        res.end(JSON.stringify({ error: { message: 'MCP request failed' } }))
      } else res.destroy()
    }
  }
}

module.exports = {
  WELL_KNOWN_OAUTH_PROTECTED_RESOURCE,
  McpHttpError,
  httpError,
  readBoundedJson,
  boundResponse,
  relayStatelessBody,
  normalizeProtectedResource,
  protectedResourceMetadata,
  unauthorized,
  createPrismMcpNodeHandler,
  loopbackHostRefusal,
}
