'use strict'
// UTF-8 text bounds: the one way the JS modules cut text to a byte budget. Sizes are counted as
// `Buffer.byteLength` counts them (a lone surrogate is U+FFFD's 3 bytes) without encoding the text;
// the prefix keeps the string's own code units (a lone surrogate stays as it was, a pair stays whole).

/** The longest prefix of `text` of at most `maxBytes` UTF-8 bytes that splits no character. */
function utf8Prefix(text, maxBytes) {
  if (!(maxBytes > 0)) return '' // zero, negative or NaN: nothing fits
  if (text.length * 3 <= maxBytes) return text
  let bytes = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    let n = 3
    let pair = false
    if (c < 0x80) n = 1
    else if (c < 0x800) n = 2
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n = 4
      pair = true
    }
    if (bytes + n > maxBytes) return text.slice(0, i)
    bytes += n
    if (pair) i++
  }
  return text
}

module.exports = { utf8Prefix }
