'use strict'
// Which hosts an MCP HTTP request (or an OAuth discovery request) may go to. A URL whose host is a
// loopback, private, link-local (cloud metadata at 169.254.169.254), shared, documentation, multicast or
// reserved address, or a local name (`localhost`, `*.local`, `metadata.google.internal`, …) is "not
// public" and refused unless loopback is explicitly enabled (`allowLoopbackHttp: true`), which admits
// loopback only. Checked on the URL here; the answers a name resolves to are checked (and the connection
// pinned to them) by lib/mcp/pinned-fetch.js.
const { isIP } = require('node:net')

function normalizeHostname(value) {
  const hostname = String(value).toLowerCase().replace(/^\[|\]$/g, '')
  return hostname.endsWith('.') ? hostname.slice(0, -1) : hostname
}

function isLoopbackAddress(value) {
  const address = normalizeHostname(value)
  const family = isIP(address)
  if (family === 4) return Number(address.split('.', 1)[0]) === 127
  const words = family === 6 ? ipv6Words(address) : undefined
  if (!words || !words.slice(0, 5).every((w) => w === 0)) return false
  // ::1 however it is written (`0:0:0:0:0:0:0:1`, `::0.0.0.1`), or IPv4-mapped 127.0.0.0/8.
  if (words[5] === 0 && words[6] === 0 && words[7] === 1) return true
  return words[5] === 0xffff && words[6] >> 8 === 127
}

function isLoopbackHostname(value) {
  const hostname = normalizeHostname(value)
  return hostname === 'localhost' || hostname.endsWith('.localhost') || isLoopbackAddress(hostname)
}

function blockedIpv4(address) {
  const [a, b] = address.split('.').map(Number)
  return (
    a === 0 ||
    a === 10 ||
    a === 127 ||
    (a === 100 && b >= 64 && b <= 127) ||
    (a === 169 && b === 254) ||
    (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && (b === 0 || b === 168)) ||
    (a === 198 && (b === 18 || b === 19 || b === 51)) ||
    (a === 203 && b === 0) ||
    a >= 224
  )
}

function ipv6Words(address) {
  let text = address
  // A trailing dotted IPv4 part (`::ffff:1.2.3.4`) becomes two words.
  const dotted = /^(.*:)(\d+\.\d+\.\d+\.\d+)$/.exec(text)
  if (dotted) {
    const [a, b, c, d] = dotted[2].split('.').map(Number)
    text = `${dotted[1]}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`
  }
  const halves = text.split('::')
  if (halves.length > 2) return undefined
  const left = halves[0] ? halves[0].split(':') : []
  const right = halves.length === 2 && halves[1] ? halves[1].split(':') : []
  const missing = 8 - left.length - right.length
  if (missing < 0 || (halves.length === 1 && missing !== 0)) return undefined
  const words = [...left, ...new Array(missing).fill('0'), ...right].map((part) => Number.parseInt(part, 16))
  return words.length === 8 && words.every((w) => Number.isInteger(w) && w >= 0 && w <= 0xffff) ? words : undefined
}

const dotted = (high, low) => `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`
const zeros = (words, from, to) => words.slice(from, to).every((w) => w === 0)

/**
 * The IPv4 addresses an IPv6 address carries, for the forms whose traffic reaches that IPv4 host:
 * IPv4-mapped `::ffff:0:0/96` and -compatible `::/96`, SIIT `::ffff:0:0:0/96`, NAT64 `64:ff9b::/96`
 * (RFC 6052), 6to4 `2002::/16` (bits 16–47), Teredo `2001::/32` (the server in bits 32–63, the
 * client in the last 32 bits XOR 0xffffffff). Empty for every other address.
 */
function embeddedIpv4(words) {
  if (zeros(words, 0, 5) && (words[5] === 0 || words[5] === 0xffff)) return [dotted(words[6], words[7])]
  if (zeros(words, 0, 4) && words[4] === 0xffff && words[5] === 0) return [dotted(words[6], words[7])]
  if (words[0] === 0x64 && words[1] === 0xff9b && zeros(words, 2, 6)) return [dotted(words[6], words[7])]
  if (words[0] === 0x2002) return [dotted(words[1], words[2])]
  if (words[0] === 0x2001 && words[1] === 0) return [dotted(words[2], words[3]), dotted(words[6] ^ 0xffff, words[7] ^ 0xffff)]
  return []
}

function blockedIpv6(address) {
  const words = ipv6Words(address)
  if (!words) return true
  if (words.every((w) => w === 0)) return true // ::
  if (zeros(words, 0, 7) && words[7] === 1) return true // ::1
  if ((words[0] & 0xfe00) === 0xfc00) return true // unique local
  if ((words[0] & 0xffc0) === 0xfe80 || (words[0] & 0xffc0) === 0xfec0) return true // link and site local
  if ((words[0] & 0xff00) === 0xff00) return true // multicast
  if (words[0] === 0x2001 && words[1] === 0x0db8) return true // documentation
  if ((words[0] & 0xfff0) === 0x3ff0) return true // documentation, 3fff::/20
  if (words[0] === 0x0100 && zeros(words, 1, 4)) return true // discard-only, 100::/64
  if (words[0] === 0x2001 && words[1] === 0x0002 && words[2] === 0) return true // benchmarking, 2001:2::/48
  // NAT64 local use (RFC 8215): its translator and the IPv4 behind it are the network's own.
  if (words[0] === 0x64 && words[1] === 0xff9b && words[2] === 1) return true
  return embeddedIpv4(words).some(blockedIpv4)
}

const LOCAL_NAMES = new Set(['localhost', 'metadata', 'metadata.google.internal', 'instance-data'])

/** True when `hostname` names a host that is not on the public internet. */
function isNonPublicHostname(value) {
  const hostname = normalizeHostname(value)
  if (LOCAL_NAMES.has(hostname) || hostname.endsWith('.localhost') || hostname.endsWith('.local')) return true
  const family = isIP(hostname)
  if (family === 4) return blockedIpv4(hostname)
  if (family === 6) return blockedIpv6(hostname)
  return false
}

/**
 * Whether a request may go to `url`'s host: public, or loopback with `allowLoopback`. Never true for
 * another non-public address, loopback opt-in or not.
 */
function isAllowedHost(url, allowLoopback) {
  if (allowLoopback === true && isLoopbackHostname(url.hostname)) return true
  return !isNonPublicHostname(url.hostname)
}

module.exports = { embeddedIpv4, ipv6Words, isAllowedHost, isLoopbackHostname, isLoopbackAddress, isNonPublicHostname, normalizeHostname }
