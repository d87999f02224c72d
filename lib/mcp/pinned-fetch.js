'use strict'
// DNS-pinned requests for Streamable HTTP and OAuth discovery, as upstream's core `pinnedFetch`. Each
// request resolves its hostname once (`resolveHostname`, default `dns.lookup` with every answer), refuses
// the request when any answer is not public (or, for a loopback name with loopback enabled, not loopback),
// and connects through a `lookup` hook that returns exactly the checked address: the socket never asks DNS
// again, so an answer that changes between the check and the connect (DNS rebinding) cannot reach a
// private address. Sockets are kept alive in an agent of the fetch's own, so a connection another part of
// the process opened to the same name is never reused.
const dns = require('node:dns')
const http = require('node:http')
const https = require('node:https')
const { isIP } = require('node:net')
const { isLoopbackAddress, isLoopbackHostname, isNonPublicHostname, normalizeHostname } = require('./address.js')
const { rejectOnAbort } = require('../abort-watch.js')

const MAX_ADDRESSES = 32

/** `resolveHostname`'s default: every address `dns.lookup` knows, in the resolver's order. */
function defaultResolver(hostname) {
  return dns.promises.lookup(hostname, { all: true, verbatim: true })
}

/**
 * The one address a request to `url` connects to. `fail(message, cause)` makes the error to throw.
 * An IP literal is its own answer; a name is resolved once and every answer must be public (a loopback
 * name with `allowLoopback`: every answer loopback). The first answer is pinned.
 */
async function resolvePinnedAddress(url, resolver, signal, allowLoopback, fail) {
  if (signal && signal.aborted) throw signal.reason
  const hostname = normalizeHostname(url.hostname)
  const literal = isIP(hostname)
  let answers
  if (literal) answers = [{ address: hostname, family: literal }]
  else {
    let raw
    try {
      raw = await rejectOnAbort(Promise.resolve().then(() => resolver(hostname, signal ?? new AbortController().signal)), signal)
    } catch (error) {
      if (signal && signal.aborted) throw error
      throw fail(`MCP hostname ${hostname} could not be resolved`, error)
    }
    answers = raw
  }
  if (!Array.isArray(answers) || answers.length < 1 || answers.length > MAX_ADDRESSES) {
    throw fail('MCP hostname returned an invalid address count')
  }
  const loopbackName = allowLoopback && isLoopbackHostname(hostname)
  const checked = []
  for (const answer of answers) {
    const address = answer && typeof answer.address === 'string' ? normalizeHostname(answer.address) : ''
    const family = answer ? answer.family : undefined
    if (!address || isIP(address) !== family) throw fail('MCP hostname resolver returned an invalid address')
    if (loopbackName) {
      if (!isLoopbackAddress(address)) throw fail('MCP loopback hostname resolved outside loopback')
    } else if (isNonPublicHostname(address)) {
      throw fail('MCP hostname resolved to a private or non-public address')
    }
    checked.push({ address, family })
  }
  return checked[0]
}

/** The bytes of a request body, or undefined; `contentType` is the type fetch would have implied. */
async function requestBody(body, fail) {
  if (body === undefined || body === null) return { bytes: undefined }
  if (typeof body === 'string') return { bytes: Buffer.from(body, 'utf8'), contentType: 'text/plain;charset=UTF-8' }
  if (body instanceof URLSearchParams) return { bytes: Buffer.from(body.toString(), 'utf8'), contentType: 'application/x-www-form-urlencoded;charset=UTF-8' }
  if (body instanceof ArrayBuffer) return { bytes: Buffer.from(body) }
  if (ArrayBuffer.isView(body)) return { bytes: Buffer.from(body.buffer, body.byteOffset, body.byteLength) }
  if (typeof Blob === 'function' && body instanceof Blob) return { bytes: Buffer.from(await body.arrayBuffer()), contentType: body.type || undefined }
  throw fail('MCP HTTP request body type is not supported by the pinned transport')
}

function webHeaders(incoming) {
  const headers = new Headers()
  const raw = incoming.rawHeaders
  for (let i = 0; i + 1 < raw.length; i += 2) headers.append(raw[i], raw[i + 1])
  return headers
}

/**
 * One request to `url` connected to `pinned` (`{ address, family }`) through `agent`, as a web
 * `Response` whose body streams from the socket. The caller's `signal` aborts the request and, once the
 * answer has come, its body.
 */
async function requestPinned(url, pinned, init, agent, fail) {
  const signal = init && init.signal ? init.signal : undefined
  if (signal && signal.aborted) throw signal.reason
  const { bytes, contentType } = await requestBody(init ? init.body : undefined, fail)
  const headers = new Headers(init && init.headers)
  if (contentType && !headers.has('content-type')) headers.set('content-type', contentType)
  const method = ((init && init.method) || 'GET').toUpperCase()
  const request = url.protocol === 'https:' ? https.request : http.request
  const options = {
    method,
    headers: Object.fromEntries(headers.entries()),
    agent,
    lookup(_hostname, lookupOptions, callback) {
      if (lookupOptions && lookupOptions.all) callback(null, [{ address: pinned.address, family: pinned.family }])
      else callback(null, pinned.address, pinned.family)
    },
  }
  return new Promise((resolve, reject) => {
    let settled = false
    let incoming
    const abort = () => {
      const reason = signal.reason
      if (incoming) incoming.destroy(reason)
      req.destroy(reason)
      if (!settled) {
        settled = true
        reject(reason)
      }
    }
    const done = () => signal && signal.removeEventListener('abort', abort)
    const req = request(url, options, (res) => {
      incoming = res
      settled = true
      const noBody = method === 'HEAD' || res.statusCode === 204 || res.statusCode === 304
      let body = null
      if (noBody) {
        res.resume()
        res.once('end', done)
        res.once('close', done)
      } else {
        res.once('close', done)
        body = new ReadableStream({
          start(controller) {
            res.on('data', (chunk) => {
              controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength))
              if (controller.desiredSize !== null && controller.desiredSize <= 0) res.pause()
            })
            res.once('end', () => {
              try {
                controller.close()
              } catch {}
            })
            res.once('error', (error) => {
              try {
                controller.error(error)
              } catch {}
            })
            res.once('close', () => {
              // Closed before its end (the socket broke or the request was aborted).
              if (!res.complete) {
                try {
                  controller.error(signal && signal.aborted ? signal.reason : fail('MCP HTTP response ended early'))
                } catch {}
              }
            })
          },
          pull() {
            res.resume()
          },
          cancel(reason) {
            res.destroy(reason instanceof Error ? reason : undefined)
          },
        }, { highWaterMark: 64 * 1024, size: (chunk) => chunk.byteLength })
      }
      let response
      try {
        response = new Response(body, { status: res.statusCode, statusText: res.statusMessage, headers: webHeaders(res) })
      } catch (error) {
        res.destroy()
        reject(fail(`MCP HTTP response has an invalid status ${res.statusCode}`, error))
        return
      }
      resolve(response)
    })
    req.once('error', (error) => {
      done()
      if (!settled) {
        settled = true
        reject(signal && signal.aborted ? signal.reason : error)
      }
    })
    if (signal) signal.addEventListener('abort', abort, { once: true })
    if (bytes) req.end(bytes)
    else req.end()
  })
}

/**
 * A fetch of pinned requests: resolve and check (`resolvePinnedAddress`), then connect to the checked
 * address. `fail(message, cause)` makes each error. One keep-alive agent per fetch.
 */
function createPinnedFetch({ resolver = defaultResolver, allowLoopback = false, fail }) {
  const agents = {
    'http:': new http.Agent({ keepAlive: true, scheduling: 'lifo', timeout: 5000 }),
    'https:': new https.Agent({ keepAlive: true, scheduling: 'lifo', timeout: 5000 }),
  }
  return async (url, init) => {
    const signal = init && init.signal ? init.signal : undefined
    const pinned = await resolvePinnedAddress(url, resolver, signal, allowLoopback, fail)
    return requestPinned(url, pinned, init, agents[url.protocol], fail)
  }
}

module.exports = { createPinnedFetch, resolvePinnedAddress, requestPinned, defaultResolver, MAX_ADDRESSES }
