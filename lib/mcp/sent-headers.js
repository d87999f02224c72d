'use strict'
// The header values a Streamable HTTP connection sent, as secrets of that connection. A server that
// repeats its request — headers echoed in a 500 body, a JSON-RPC error, a tool's text, a progress
// message — would otherwise hand the host's bearer token (from `requestInit`, or the OAuth provider's)
// back into the bridge's errors and results, and from there into events and ledger rows. The secure
// fetch notes every request's headers here; the bridge redacts the noted values, with the package's
// `redactSecrets`, from whatever it makes of the server's answers.
//
// What is noted: every header value except the protocol's own headers (below), which carry no
// credential and appear in ordinary messages. An `Authorization` (or `Proxy-Authorization`) value is
// noted whole and its credential alone (after the scheme), and a `Cookie` value whole and each
// cookie's value, since a server may echo just that part. A part under MIN_SECRET_CHARS characters is
// not a credential and would garble every message, so it is not noted; at most MAX_SENT_VALUES values
// are kept per connection (a refreshed token replaces the oldest).
const { redactSecrets } = require('../../index.js')

const PROTOCOL_HEADERS = new Set(['accept', 'content-type', 'content-length', 'mcp-protocol-version', 'mcp-session-id', 'last-event-id'])
const MIN_SECRET_CHARS = 4
const MAX_SENT_VALUES = 64
const MAX_CAUSE_DEPTH = 8

class SentHeaderValues {
  constructor() {
    this.values = new Set()
    this.secrets = undefined // the array redactSecrets takes, made again after a change
  }

  get size() {
    return this.values.size
  }

  /** Notes the values of `headers` (a `Headers`, or what `new Headers()` takes). */
  note(headers) {
    const all = headers instanceof Headers ? headers : new Headers(headers)
    for (const [name, value] of all) {
      if (PROTOCOL_HEADERS.has(name)) continue
      this.add(value)
      if (name === 'authorization' || name === 'proxy-authorization') this.add(value.replace(/^\S+\s+/, ''))
      else if (name === 'cookie') for (const pair of value.split(';')) this.add(pair.slice(pair.indexOf('=') + 1))
    }
  }

  add(raw) {
    const value = raw.trim()
    if (value.length < MIN_SECRET_CHARS || this.values.has(value)) return
    this.values.add(value)
    if (this.values.size > MAX_SENT_VALUES) this.values.delete(this.values.values().next().value)
    this.secrets = undefined
  }

  /**
   * `value` with every noted header value replaced by `[REDACTED]`: a copy when one occurs in it,
   * else `value` itself (so a result that echoes nothing is passed on untouched, past redactSecrets'
   * depth bound too).
   */
  redact(value) {
    if (this.values.size === 0 || !this.occursIn(value)) return value
    if (this.secrets === undefined) this.secrets = [...this.values]
    return redactSecrets(value, this.secrets)
  }

  // Whether a noted value occurs in `value`'s strings or keys: in its JSON text, where each value is
  // looked for as JSON writes it inside a string. A value JSON cannot write (a cycle, a BigInt) counts
  // as holding one, so redactSecrets judges it.
  occursIn(value) {
    let text
    try {
      text = typeof value === 'string' ? value : JSON.stringify(value)
    } catch {
      return true
    }
    if (typeof text !== 'string') return false // undefined, a function or a symbol: no strings
    for (const v of this.values) if (text.includes(typeof value === 'string' ? v : JSON.stringify(v).slice(1, -1))) return true
    return false
  }

  /**
   * `error` with the noted values redacted from its message, its stack and its causes' (in place: the
   * error is the SDK's or this package's, made for this request); a non-Error is redacted as a value.
   */
  redactError(error) {
    if (this.values.size === 0) return error
    if (!(error instanceof Error)) return this.redact(error)
    const seen = new Set()
    for (let e = /** @type {any} */ (error), depth = 0; e instanceof Error && !seen.has(e) && depth < MAX_CAUSE_DEPTH; e = e.cause, depth++) {
      seen.add(e)
      for (const key of ['message', 'stack']) {
        try {
          const text = e[key]
          const clean = typeof text === 'string' ? this.redact(text) : text
          if (clean !== text) Object.defineProperty(e, key, { value: clean, writable: true, configurable: true, enumerable: false })
        } catch {} // a getter that throws, or a frozen error: nothing of it is read into a message here
      }
    }
    return error
  }
}

// Each transport made by createMcpTransport with the values its fetch noted.
const byTransport = new WeakMap()

function rememberSentHeaders(transport, sent) {
  byTransport.set(transport, sent)
  return transport
}

/** The values a transport of this package sent, or undefined (stdio, a host's own transport). */
function sentHeadersOf(transport) {
  return transport !== null && typeof transport === 'object' ? byTransport.get(transport) : undefined
}

module.exports = { SentHeaderValues, rememberSentHeaders, sentHeadersOf, MIN_SECRET_CHARS, MAX_SENT_VALUES }
