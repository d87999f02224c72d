'use strict'
// Errors about what came over the wire, worded so they carry none of it: a malformed JSON event is
// named by the position and the kind of its first fault (never a snippet: the bytes may hold a key
// the server echoed), a URL is shown without userinfo, and a failed `fetch` names the method, the
// URL and its cause (refused, DNS, TLS, timeout) in words a user can act on.
const { codedError } = require('../errors.js')

const WS = new Set([0x20, 0x09, 0x0a, 0x0d])
const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y
const ESCAPES = new Set(['"', '\\', '/', 'b', 'f', 'n', 'r', 't'])

/**
 * The first fault of `text` as JSON: `{ position, kind }` (position in UTF-16 code units), or
 * undefined when it parses. Iterative, so any nesting depth is safe.
 */
function locateJsonFault(text) {
  const n = text.length
  const stack = []
  let i = 0
  let state = 'value' // value | firstValue | key | firstKey | after
  const end = (kind = 'unexpected end of input') => ({ position: n, kind })
  const skip = () => {
    while (i < n && WS.has(text.charCodeAt(i))) i++
  }
  const string = () => {
    i++ // the opening quote
    while (i < n) {
      const c = text.charCodeAt(i)
      if (c === 0x22) {
        i++
        return undefined
      }
      if (c < 0x20) return { position: i, kind: 'control character in a string' }
      if (c === 0x5c) {
        const e = text[i + 1]
        if (e === undefined) return end('unterminated string')
        if (e === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) return i + 6 > n ? end('unterminated string') : { position: i, kind: 'invalid \\u escape' }
          i += 6
          continue
        }
        if (!ESCAPES.has(e)) return { position: i, kind: 'invalid escape' }
        i += 2
        continue
      }
      i++
    }
    return end('unterminated string')
  }
  for (;;) {
    skip()
    if (state === 'value' || state === 'firstValue') {
      if (i >= n) return end()
      const c = text[i]
      if (state === 'firstValue' && c === ']') {
        stack.pop()
        i++
        state = 'after'
        continue
      }
      if (c === '{' || c === '[') {
        stack.push(c === '{' ? '}' : ']')
        i++
        state = c === '{' ? 'firstKey' : 'firstValue'
        continue
      }
      if (c === '"') {
        const fault = string()
        if (fault) return fault
        state = 'after'
        continue
      }
      if (c === '-' || (c >= '0' && c <= '9')) {
        NUMBER.lastIndex = i
        const m = NUMBER.exec(text)
        if (m === null) return { position: i, kind: 'invalid number' }
        i += m[0].length
        state = 'after'
        continue
      }
      const literal = ['true', 'false', 'null'].find((w) => text.startsWith(w, i))
      if (literal !== undefined) {
        i += literal.length
        state = 'after'
        continue
      }
      return { position: i, kind: 'unexpected character where a value was expected' }
    }
    if (state === 'key' || state === 'firstKey') {
      if (i >= n) return end()
      if (state === 'firstKey' && text[i] === '}') {
        stack.pop()
        i++
        state = 'after'
        continue
      }
      if (text[i] !== '"') return { position: i, kind: 'expected a property name' }
      const fault = string()
      if (fault) return fault
      skip()
      if (i >= n) return end()
      if (text[i] !== ':') return { position: i, kind: "expected ':' after a property name" }
      i++
      state = 'value'
      continue
    }
    // after a value
    if (stack.length === 0) return i < n ? { position: i, kind: 'unexpected data after the JSON value' } : undefined
    if (i >= n) return end()
    const close = stack[stack.length - 1]
    if (text[i] === ',') {
      i++
      state = close === '}' ? 'key' : 'value'
    } else if (text[i] === close) {
      stack.pop()
      i++
    } else return { position: i, kind: `expected ',' or '${close}'` }
  }
}

/** Parses one SSE event's JSON; a malformed one throws an Error naming where and what, quoting none of it. */
function parseEventJson(text, what) {
  try {
    return JSON.parse(text)
  } catch {
    const fault = locateJsonFault(text) ?? { position: 0, kind: 'invalid JSON' }
    const error = new Error(`${what} sent malformed JSON in an event: ${fault.kind} at position ${fault.position} of ${text.length}`)
    error.code = 'malformed_json'
    error.position = fault.position
    error.fault = fault.kind
    throw error
  }
}

const USERINFO = /^([a-zA-Z][a-zA-Z0-9+.-]*:\/\/)[^@/?#]*@/

/** `url` without `user:password@` (parsed where it parses, else by pattern). */
function urlWithoutUserinfo(url) {
  const text = String(url)
  try {
    const parsed = new URL(text)
    if (parsed.username === '' && parsed.password === '') return text
    parsed.username = ''
    parsed.password = ''
    return parsed.href
  } catch {
    return text.replace(USERINFO, '$1')
  }
}

/** Every URL-looking run in `text` without its userinfo. */
function stripUserinfo(text) {
  return typeof text === 'string' ? text.replace(/\b([a-zA-Z][a-zA-Z0-9+.-]*:\/\/)[^@/?#\s"'<>]*@/g, '$1') : text
}

/**
 * Checks a provider's endpoint URL (at creation for `baseUrl`, per request for a computed one):
 * an absolute http(s) URL without userinfo. Throws TypeError `ERR_PRISM_INVALID_OPTION` naming the
 * option and the fault; the message never repeats a password.
 */
function checkEndpointUrl(where, option, value) {
  if (typeof value !== 'string' || value === '') throw codedError(TypeError, `${where}: ${option} must be a non-empty string`, 'ERR_PRISM_INVALID_OPTION')
  const shown = urlWithoutUserinfo(value)
  let parsed
  try {
    parsed = new URL(value)
  } catch {
    throw codedError(TypeError, `${where}: ${option} "${shown}" is not an absolute URL (expected e.g. "http://127.0.0.1:8080/v1")`, 'ERR_PRISM_INVALID_OPTION')
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw codedError(TypeError, `${where}: ${option} "${shown}" must use http: or https: (got ${parsed.protocol})`, 'ERR_PRISM_INVALID_OPTION')
  }
  if (parsed.username !== '' || parsed.password !== '') {
    throw codedError(
      TypeError,
      `${where}: ${option} "${shown}" must not embed credentials (user:password@); pass apiKey, or extraHeaders for other schemes`,
      'ERR_PRISM_INVALID_OPTION',
    )
  }
  return value
}

const TLS_CODES = /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|EPROTO$|ERR_OSSL_)/
const CAUSES = {
  ECONNREFUSED: 'connection refused (nothing listens there)',
  ECONNRESET: 'connection reset',
  EPIPE: 'connection closed while sending',
  ECONNABORTED: 'connection aborted',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ENOTFOUND: 'DNS lookup failed: host not found',
  EAI_AGAIN: 'DNS lookup failed: temporary failure',
  ETIMEDOUT: 'timeout connecting',
  UND_ERR_CONNECT_TIMEOUT: 'timeout connecting',
  UND_ERR_HEADERS_TIMEOUT: 'timeout waiting for the response headers',
  UND_ERR_BODY_TIMEOUT: 'timeout reading the response body',
  UND_ERR_SOCKET: 'socket closed by the other side',
}

/** Network failures a second attempt can get past; refused connections, DNS "not found" and TLS faults are not among them. */
const RETRYABLE_NETWORK_CODES = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED', 'ETIMEDOUT', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_SOCKET'])

function causeCode(err) {
  for (let e = err, depth = 0; e !== null && typeof e === 'object' && depth < 4; e = e.cause, depth++) {
    if (typeof e.code === 'string' && e.code !== '') return { code: e.code, cause: e }
    if (Array.isArray(e.errors)) {
      const inner = e.errors.find((x) => x && typeof x.code === 'string')
      if (inner) return { code: inner.code, cause: inner }
    }
  }
  return { code: undefined, cause: err && err.cause !== undefined ? err.cause : err }
}

/**
 * A failed `fetch` as an Error naming the method, the URL (without userinfo) and the cause:
 * `code` is the cause's code (`ECONNREFUSED`, `ENOTFOUND`, `CERT_HAS_EXPIRED`, …, else `network_error`),
 * `kind` one of `refused`, `dns`, `tls`, `timeout`, `network`; `retryable` says whether asking again can help.
 */
function transportFailure(err, { prefix, method, url }) {
  const { code, cause } = causeCode(err)
  const shown = urlWithoutUserinfo(url)
  let words = code !== undefined ? CAUSES[code] : undefined
  let kind = 'network'
  if (code === 'ECONNREFUSED') kind = 'refused'
  else if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') kind = 'dns'
  else if (code !== undefined && TLS_CODES.test(code)) {
    kind = 'tls'
    words = 'TLS failure'
  } else if (code !== undefined && /TIMEOUT|ETIMEDOUT/.test(code)) kind = 'timeout'
  const detail = cause && typeof cause.message === 'string' && cause.message !== '' && cause !== err ? cause.message : err && err.message
  const reason = words ?? (typeof detail === 'string' && detail !== '' ? detail : 'network failure')
  const extra = words !== undefined && typeof detail === 'string' && detail !== '' ? ` (${code}: ${stripUserinfo(detail)})` : code !== undefined ? ` (${code})` : ''
  const error = new Error(`${prefix}: ${method} ${shown}: ${stripUserinfo(reason)}${extra}`)
  error.code = code ?? 'network_error'
  error.kind = kind
  error.method = method
  error.url = shown
  error.retryable = code !== undefined && RETRYABLE_NETWORK_CODES.has(code)
  return error
}

module.exports = { locateJsonFault, parseEventJson, urlWithoutUserinfo, stripUserinfo, checkEndpointUrl, transportFailure, RETRYABLE_NETWORK_CODES }
