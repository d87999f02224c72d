'use strict'
// Fuzz target: stream redaction (lib/stream-redaction.js), with the agent's native secret redactor.
//
// Arbitrary secrets (overlapping, prefixes of each other, multi-byte, lone surrogates, empty and
// repeated ones) and an arbitrary text built from them, cut into arbitrary deltas (a cut may split
// a surrogate pair). Invariants, for a redactor whose secrets are known and for an opaque one:
// - push/flush never throw;
// - after each push at most (longest secret - 1) characters are held (an opaque redactor holds all);
// - the pieces let out, joined, are exactly the whole text redacted at once, code unit for code unit
//   (lone surrogates and split pairs included: the native matcher works on UTF-16 code units);
// - no secret occurs in the output outside a `[REDACTED]` marker, so neither a piece nor any run of
//   consecutive pieces holds a secret, whole or completed across pieces.
const { FuzzedDataProvider } = require('@jazzer.js/core/dist/FuzzedDataProvider.js')
// Pieces are redacted with `redactSecrets`, the same Rust matcher as the agent's `createSecretRedactor`
// redactor: a redactor object per input would pile up, since its native memory is freed by a finalizer
// that runs only when the event loop turns, which a synchronous fuzz loop never lets it do.
const { redactSecrets } = require('../../index.js')
const { createStreamRedactor } = require('../../lib/stream-redaction.js')

const MARKER = '[REDACTED]'
// Few distinct units, so secrets collide, overlap and recur: ASCII, marker characters, a
// two-unit emoji's halves (whole or alone), a BMP letter and a three-byte one, and U+FFFD (which a
// lone surrogate must never be taken for).
const UNITS = ['a', 'b', 'c', ' ', '[', 'R', ']', '\ud83d', '\ude00', '\ud83d\ude00', 'é', '€', '\u0000', '\ufffd']

function unit(fdp) {
  return UNITS[fdp.consumeIntegralInRange(0, UNITS.length - 1)]
}

function word(fdp, max) {
  let s = ''
  const n = fdp.consumeIntegralInRange(0, max)
  for (let i = 0; i < n; i++) s += unit(fdp)
  return s
}

function secretsOf(fdp) {
  const secrets = []
  const n = fdp.consumeIntegralInRange(0, 4)
  for (let i = 0; i < n; i++) {
    const prev = secrets.length > 0 ? secrets[fdp.consumeIntegralInRange(0, secrets.length - 1)] : ''
    switch (fdp.consumeIntegralInRange(0, 4)) {
      case 0: // a prefix of another secret
        secrets.push(prev.slice(0, fdp.consumeIntegralInRange(0, prev.length)))
        break
      case 1: // another secret extended
        secrets.push(prev + word(fdp, 4))
        break
      case 2: // overlapping another secret's end
        secrets.push(prev.slice(fdp.consumeIntegralInRange(0, prev.length)) + word(fdp, 4))
        break
      case 3: // the same secret again
        secrets.push(prev)
        break
      default:
        secrets.push(word(fdp, 10))
    }
  }
  // Secrets hold lone surrogates and halves of pairs too: JS finds them by code units, and so must
  // the matcher.
  return secrets
}

function textOf(fdp, secrets) {
  let text = ''
  const n = fdp.consumeIntegralInRange(0, 16)
  for (let i = 0; i < n; i++) {
    const s = secrets.length > 0 ? secrets[fdp.consumeIntegralInRange(0, secrets.length - 1)] : ''
    switch (fdp.consumeIntegralInRange(0, 3)) {
      case 0:
        text += s
        break
      case 1: // a piece of a secret
        text += s.slice(fdp.consumeIntegralInRange(0, s.length), fdp.consumeIntegralInRange(0, s.length))
        break
      default:
        text += word(fdp, 6)
    }
  }
  return text
}

function deltasOf(fdp, text) {
  const deltas = []
  let at = 0
  while (at < text.length && fdp.remainingBytes > 0) {
    const len = fdp.consumeIntegralInRange(0, Math.min(12, text.length - at))
    deltas.push(text.slice(at, at + len))
    at += len
  }
  if (at < text.length) deltas.push(text.slice(at))
  return deltas
}

function fail(what, detail) {
  throw new Error(`stream redaction: ${what}\n${JSON.stringify(detail)}`)
}

/** Every occurrence of a secret in `out` overlaps a marker. */
function checkNoSecret(out, secrets, detail) {
  const markers = []
  for (let m = out.indexOf(MARKER); m !== -1; m = out.indexOf(MARKER, m + 1)) markers.push(m)
  for (const s of secrets) {
    if (s === '') continue
    for (let p = out.indexOf(s); p !== -1; p = out.indexOf(s, p + 1)) {
      if (!markers.some((m) => p < m + MARKER.length && m < p + s.length)) fail(`secret ${JSON.stringify(s)} at ${p} of the output`, detail)
    }
  }
}

function run(secrets, deltas, known) {
  const text = deltas.join('')
  const whole = redactSecrets(text, secrets)
  const stream = createStreamRedactor({ secrets: known ? secrets : undefined, redact: (t) => redactSecrets(t, secrets) })
  const longest = Math.max(0, ...secrets.map((s) => s.length))
  const pieces = []
  let pushed = 0
  for (const d of deltas) {
    pieces.push(stream.push(d))
    pushed += d.length
    const bound = known ? Math.max(0, longest - 1) : pushed
    if (stream.held > bound) fail(`held ${stream.held} characters, bound ${bound}`, { secrets, deltas, known })
  }
  pieces.push(stream.flush())
  if (stream.held !== 0) fail(`held ${stream.held} characters after flush`, { secrets, deltas, known })
  const joined = pieces.join('')
  if (joined !== whole) fail('the joined pieces differ from the whole text redacted at once', { secrets, deltas, known, pieces, whole })
  // What goes out is the pieces: no secret there, nor in the whole text redacted at once.
  checkNoSecret(joined, secrets, { secrets, deltas, known, pieces })
  checkNoSecret(whole, secrets, { secrets, deltas, known, whole })
}

module.exports.fuzz = function fuzz(data) {
  const fdp = new FuzzedDataProvider(data)
  const secrets = secretsOf(fdp)
  const known = fdp.consumeIntegralInRange(0, 7) !== 0
  const text = textOf(fdp, secrets)
  const deltas = deltasOf(fdp, text)
  run(secrets, deltas, known)
}
