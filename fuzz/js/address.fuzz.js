'use strict'
// Fuzz target: the non-public address check of the MCP HTTP transport (lib/mcp/address.js), which
// judges a URL's host and every DNS answer with one function.
//
// Input: an IPv4 address, a form that embeds it in IPv6 (mapped, compatible, SIIT, NAT64, 6to4,
// Teredo client or server) with a second IPv4 and filler bits, or an arbitrary 128-bit address;
// and several spellings of that address (padded or not, upper case, a dotted tail, any zero run
// compressed, any part of it). Invariants:
// - the check never throws, and every spelling gets the same verdict, as the URL parser's form does;
// - an embedded form is non-public exactly when its IPv4 is (Teredo: when its server or its client
//   is), so `64:ff9b::a9fe:a9fe` is refused as 169.254.169.254 is;
// - a URL with the address as its host is allowed exactly when the address is public, with or
//   without the loopback opt-in (which admits loopback only).
const { FuzzedDataProvider } = require('@jazzer.js/core/dist/FuzzedDataProvider.js')
const { isAllowedHost, isLoopbackAddress, isNonPublicHostname } = require('../../lib/mcp/address.js')
const { FORMS, embedded, ipv4Text, spell } = require('./address-forms.js')

// IPv4 addresses near the edges of the ranges the check knows, so a mutation lands on both sides.
const EDGES = [
  0x00000000, 0x0a000000, 0x64400000, 0x7f000000, 0xa9fe0000, 0xac100000, 0xc0000000, 0xc0a80000, 0xc6120000,
  0xc6336400, 0xcb007100, 0xe0000000, 0xffffffff, 0x08080808, 0x5db8d822,
]

function ipv4Of(fdp) {
  const pick = fdp.consumeIntegralInRange(0, EDGES.length)
  const base = pick === EDGES.length ? 0 : EDGES[pick]
  // An edge with its low bits moved, or (past the list) any address.
  return (base + fdp.consumeIntegralInRange(0, pick === EDGES.length ? 0xffffffff : 0x3ffff) - (pick === EDGES.length ? 0 : 0x1ffff)) >>> 0
}

function fail(message, detail) {
  throw new Error(`${message}: ${JSON.stringify(detail)}`)
}

/** The verdict on `words` written every way `spellings` asks, checked equal; returns it. */
function verdict(words, spellings, detail) {
  let first
  for (const [style, pick] of spellings) {
    const text = spell(words, style, pick)
    const nonPublic = isNonPublicHostname(text)
    if (typeof nonPublic !== 'boolean') fail('the check did not answer a boolean', { ...detail, text })
    if (first === undefined) first = nonPublic
    else if (nonPublic !== first) fail(`spellings disagree: ${text}`, detail)
    const url = new URL(`https://[${text}]:8443/mcp`)
    if (isNonPublicHostname(url.hostname) !== nonPublic) fail(`the URL parser's form ${url.hostname} disagrees with ${text}`, detail)
    if (isAllowedHost(url, false) !== !nonPublic) fail(`isAllowedHost disagrees for ${text}`, detail)
    const loopback = isLoopbackAddress(text)
    if (isAllowedHost(url, true) !== (!nonPublic || loopback)) fail(`the loopback opt-in admits more than loopback: ${text}`, detail)
  }
  return first
}

module.exports.fuzz = function fuzz(data) {
  const fdp = new FuzzedDataProvider(data)
  const formIndex = fdp.consumeIntegralInRange(0, FORMS.length)
  const v4 = ipv4Of(fdp)
  const other = ipv4Of(fdp)
  const fill = [0, 0, 0, 0, 0].map(() => fdp.consumeIntegralInRange(0, 0xffff))
  const spellings = []
  const n = fdp.consumeIntegralInRange(1, 6)
  for (let i = 0; i < n; i++) spellings.push([fdp.consumeIntegralInRange(0, 15), fdp.consumeIntegralInRange(0, 63)])
  if (formIndex === FORMS.length) {
    // Any address: the spellings agree.
    const words = [v4 >>> 16, v4 & 0xffff, other >>> 16, other & 0xffff, ...fill.slice(0, 4)]
    verdict(words, spellings, { words })
    return
  }
  const form = FORMS[formIndex]
  const words = embedded(form, v4, other, fill)
  const detail = { form, v4: ipv4Text(v4), other: ipv4Text(other), words }
  const got = verdict(words, spellings, detail)
  let expected = isNonPublicHostname(ipv4Text(v4))
  if (form.startsWith('teredo')) expected = expected || isNonPublicHostname(ipv4Text(other))
  if (got !== expected) fail(`judged ${got ? 'non-public' : 'public'}, its IPv4 says otherwise`, detail)
}
