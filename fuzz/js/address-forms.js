'use strict'
// IPv6 address forms that carry an IPv4 address, and the many ways to write one IPv6 address, for the
// address-check fuzz target (fuzz/js/address.fuzz.js) and property test
// (__test__/properties/address.test.ts). Built from words and written out here, independently of
// lib/mcp/address.js's parser, so the two meet only at the text.
const { isIP } = require('node:net')

const hi = (v4) => (v4 >>> 16) & 0xffff
const lo = (v4) => v4 & 0xffff

/** `a.b.c.d` of a 32-bit number. */
function ipv4Text(v4) {
  return [v4 >>> 24, (v4 >>> 16) & 0xff, (v4 >>> 8) & 0xff, v4 & 0xff].join('.')
}

/**
 * The forms of RFC 4291, 6052, 6145, 3056 and 4380 that carry `v4`, as eight 16-bit words; `other` is
 * a second IPv4 (Teredo's server, or the client when `v4` is the server) and `fill` 16-bit filler
 * for the free bits (6to4's subnet and interface, Teredo's flags and port).
 */
function embedded(form, v4, other, fill) {
  switch (form) {
    case 'mapped': // ::ffff:0:0/96
      return [0, 0, 0, 0, 0, 0xffff, hi(v4), lo(v4)]
    case 'compatible': // ::/96, deprecated
      return [0, 0, 0, 0, 0, 0, hi(v4), lo(v4)]
    case 'siit': // ::ffff:0:0:0/96
      return [0, 0, 0, 0, 0xffff, 0, hi(v4), lo(v4)]
    case 'nat64': // 64:ff9b::/96
      return [0x64, 0xff9b, 0, 0, 0, 0, hi(v4), lo(v4)]
    case '6to4': // 2002::/16, the IPv4 in bits 16-47
      return [0x2002, hi(v4), lo(v4), fill[0], fill[1], fill[2], fill[3], fill[4]]
    case 'teredo-client': // 2001::/32, the client's IPv4 inverted in the last 32 bits
      return [0x2001, 0, hi(other), lo(other), fill[0], fill[1], hi(~v4), lo(~v4)]
    case 'teredo-server': // the server's IPv4 in bits 32-63
      return [0x2001, 0, hi(v4), lo(v4), fill[0], fill[1], hi(~other), lo(~other)]
    default:
      throw new Error(`unknown form ${form}`)
  }
}

const FORMS = ['mapped', 'compatible', 'siit', 'nat64', '6to4', 'teredo-client', 'teredo-server']

/** The zero runs of `words` as `[start, length]`. */
function zeroRuns(words) {
  const runs = []
  for (let i = 0; i < 8; i++) {
    if (words[i] !== 0) continue
    let j = i
    while (j < 8 && words[j] === 0) j++
    runs.push([i, j - i])
    i = j
  }
  return runs
}

/**
 * `words` written one way. `style` bits: 1 pad each group to four digits, 2 upper case, 4 write the
 * last 32 bits as a dotted quad, 8 compress a zero run (`pick` chooses which, and how much of it).
 */
function spell(words, style, pick = 0) {
  const pad = (style & 1) !== 0
  const upper = (style & 2) !== 0
  const dottedTail = (style & 4) !== 0
  const hex = (w) => {
    const t = w.toString(16)
    return pad ? t.padStart(4, '0') : t
  }
  const groups = dottedTail ? words.slice(0, 6).map(hex) : words.map(hex)
  const tail = dottedTail ? ipv4Text(((words[6] << 16) | words[7]) >>> 0) : undefined
  let text
  const runs = (style & 8) !== 0 ? zeroRuns(dottedTail ? words.slice(0, 6) : words) : []
  if (runs.length > 0) {
    const [start, length] = runs[pick % runs.length]
    const take = 1 + (Math.floor(pick / runs.length) % length)
    const left = groups.slice(0, start).join(':')
    const right = groups.slice(start + take)
    const all = tail === undefined ? right : [...right, tail]
    text = `${left}::${all.join(':')}`
  } else {
    text = tail === undefined ? groups.join(':') : [...groups, tail].join(':')
  }
  if (upper) text = text.toUpperCase()
  if (isIP(text) !== 6) throw new Error(`spelled an invalid IPv6 address: ${text}`)
  return text
}

module.exports = { FORMS, embedded, ipv4Text, spell }
