'use strict'
// Shared by the provider stream targets: an SSE response body built from fuzz bytes. Events are drawn
// as structured JSON (so the fuzzer reaches deep into the assembly) or as raw text, framed in the ways
// servers frame SSE (CRLF, `data:` without a space, comments, multi-line data, a last event cut off),
// and the bytes are cut into chunks anywhere, through a UTF-8 sequence too.

// The API key: the fuzzer puts it in arguments, text, error messages and raw (malformed) data; no
// error may carry it.
const SECRET = 'sk-fuzz-Qz9xWv7tRp5nLm3k'

function pick(fdp, list) {
  return list[fdp.consumeIntegralInRange(0, list.length - 1)]
}

/** A short string: from the vocabulary, the secret, or arbitrary. */
function text(fdp, vocabulary) {
  switch (fdp.consumeIntegralInRange(0, 5)) {
    case 0:
      return SECRET
    case 1:
      return fdp.consumeString(fdp.consumeIntegralInRange(0, 24))
    default:
      return pick(fdp, vocabulary)
  }
}

/** Maybe leaves the field out; else one of `values` (a function is called with fdp). */
function maybe(fdp, values) {
  if (fdp.consumeIntegralInRange(0, 3) === 0) return undefined
  const v = pick(fdp, values)
  return typeof v === 'function' ? v(fdp) : v
}

function assign(object, key, value) {
  if (value !== undefined) object[key] = value
  return object
}

/** Frames event payloads as SSE text. */
function frame(fdp, payloads) {
  let out = ''
  for (const payload of payloads) {
    const eol = fdp.consumeIntegralInRange(0, 7) === 0 ? '\r\n' : '\n'
    switch (fdp.consumeIntegralInRange(0, 9)) {
      case 0:
        out += `: ping${eol}`
        break
      case 1:
        out += `event: ${pick(fdp, ['message', 'x', ''])}${eol}`
        break
      case 2: {
        // multi-line data: the lines join with \n
        const at = fdp.consumeIntegralInRange(0, payload.length)
        out += `data: ${payload.slice(0, at)}${eol}data: ${payload.slice(at)}${eol}${eol}`
        continue
      }
      default:
        break
    }
    out += `data:${fdp.consumeIntegralInRange(0, 5) === 0 ? '' : ' '}${payload}${eol}${eol}`
  }
  // The last event sometimes cut off, or arbitrary text after the events.
  if (fdp.consumeIntegralInRange(0, 7) === 0) out = out.slice(0, out.length - fdp.consumeIntegralInRange(0, Math.min(out.length, 40)))
  if (fdp.consumeIntegralInRange(0, 7) === 0) out += fdp.consumeString(32)
  return out
}

/** The SSE text's UTF-8 bytes (sometimes with raw, possibly invalid, bytes spliced in) cut into chunks. */
function chunks(fdp, sse) {
  let bytes = Buffer.from(sse, 'utf8')
  if (fdp.consumeIntegralInRange(0, 7) === 0) {
    const at = fdp.consumeIntegralInRange(0, bytes.length)
    bytes = Buffer.concat([bytes.subarray(0, at), Buffer.from(fdp.consumeBytes(8)), bytes.subarray(at)])
  }
  const out = []
  let at = 0
  while (at < bytes.length) {
    const len = fdp.remainingBytes > 0 ? fdp.consumeIntegralInRange(1, Math.max(1, Math.min(64, bytes.length - at))) : bytes.length - at
    out.push(new Uint8Array(bytes.subarray(at, at + len)))
    at += len
  }
  return out
}

/** The options every provider stream target starts from: the secret, and small or default size bounds. */
function streamOptions(fdp) {
  const options = { secrets: [SECRET] }
  assign(options, 'maxEventBytes', maybe(fdp, [64, 4096]))
  assign(options, 'maxResponseBytes', maybe(fdp, [256, 1 << 20]))
  assign(options, 'maxArgumentBytes', maybe(fdp, [16, 1024]))
  return options
}

/** Up to `most` payloads from `draw(fdp)`, and the response body's chunks that frame them. */
function streamPayloads(fdp, most, draw) {
  const payloads = []
  const n = fdp.consumeIntegralInRange(0, most)
  for (let i = 0; i < n && fdp.remainingBytes > 0; i++) payloads.push(draw(fdp))
  return { payloads, parts: chunks(fdp, frame(fdp, payloads)) }
}

/** A ReadableStream of the chunks, one per pull (as a socket delivers them). */
function body(parts) {
  let i = 0
  return new ReadableStream({
    pull(controller) {
      if (i < parts.length) controller.enqueue(parts[i++])
      else controller.close()
    },
  })
}

/** Any yielded value, messages of errors included, as one string to search for the secret. */
function mentionsSecret(value) {
  return JSON.stringify(value).includes(SECRET)
}

module.exports = { SECRET, pick, text, maybe, assign, streamOptions, streamPayloads, body, mentionsSecret }
