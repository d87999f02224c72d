'use strict'
// Fuzz target: Anthropic stream assembly, `anthropicMessagesEvents` (lib/providers/anthropic.js: the
// function `generate()` hands the response body to), on an in-memory body, no network.
//
// Arbitrary Messages API event streams: message_start, content_block_start of text / thinking /
// tool_use blocks (at the same, another or no `index`, with or without `id`, `name` and a whole
// `input`), text / thinking / signature / input_json_delta deltas, content_block_stop at any index,
// message_delta, message_stop, ping, error events, malformed JSON and odd shapes, the bytes cut
// anywhere; small and default size bounds. The invariants are those of openai-stream.fuzz.js
// (stream-checks.js).
const { FuzzedDataProvider } = require('@jazzer.js/core/dist/FuzzedDataProvider.js')
const { anthropicMessagesEvents } = require('../../lib/providers/anthropic.js')
const { SECRET, pick, text, maybe, assign, streamOptions, streamPayloads, body, mentionsSecret } = require('./stream-input.js')
const { checkRun } = require('./stream-checks.js')

const NAMES = ['echo', 'get_weather', 'ec', '']
const IDS = ['toolu_a', 'toolu_b', '']
const JSON_PIECES = ['{"q":', '"x"}', '{}', '{"a":1}', '1}', '', 'not json', '{"n": 12345678901234567890}']
const TEXT = ['hello', ' ', 'é', '😀', '']
const INDEX = [0, 0, 1, 2, -1, 1.5, '0', null]

function block(fdp) {
  switch (fdp.consumeIntegralInRange(0, 3)) {
    case 0:
      return assign({ type: 'text' }, 'text', maybe(fdp, [(f) => text(f, TEXT)]))
    case 1:
      return { type: 'thinking', thinking: '' }
    default: {
      const b = { type: 'tool_use' }
      assign(b, 'id', maybe(fdp, [(f) => text(f, IDS), 7]))
      assign(b, 'name', maybe(fdp, [(f) => text(f, NAMES), null]))
      assign(b, 'input', maybe(fdp, [{}, {}, { q: 'x' }, { key: SECRET }, [], 'x', null]))
      return b
    }
  }
}

function event(fdp) {
  const withIndex = (e) => assign(e, 'index', maybe(fdp, INDEX))
  switch (fdp.consumeIntegralInRange(0, 14)) {
    case 0:
      return JSON.stringify({ type: 'message_start', message: { usage: { input_tokens: fdp.consumeIntegralInRange(0, 9) } } })
    case 1:
    case 2:
    case 3:
      return JSON.stringify(withIndex({ type: 'content_block_start', content_block: block(fdp) }))
    case 4:
    case 5:
    case 6:
      return JSON.stringify(withIndex({ type: 'content_block_delta', delta: assign({ type: 'input_json_delta' }, 'partial_json', maybe(fdp, [(f) => text(f, JSON_PIECES), 3])) }))
    case 7: {
      const type = pick(fdp, ['text_delta', 'thinking_delta', 'signature_delta', 'unknown'])
      return JSON.stringify(withIndex({ type: 'content_block_delta', delta: { type, text: text(fdp, TEXT), thinking: 'hm', signature: 'sig' } }))
    }
    case 8:
    case 9:
      return JSON.stringify(withIndex({ type: 'content_block_stop' }))
    case 10:
      return JSON.stringify({ type: 'message_delta', delta: { stop_reason: pick(fdp, ['tool_use', 'end_turn', null]) }, usage: { output_tokens: 5 } })
    case 11:
      return JSON.stringify({ type: pick(fdp, ['message_stop', 'ping', 'message_stop']) })
    case 12:
      return JSON.stringify({ type: 'error', error: assign({ message: text(fdp, ['overloaded', 'bad']) }, 'type', maybe(fdp, ['overloaded_error'])) })
    case 13:
      return pick(fdp, ['[DONE]', 'null', '1', '[]', '"x"', '{"type":"content_block_start"}', '{"type":"content_block_start","content_block":null}', '{"type":"content_block_delta","delta":null}'])
    default: // raw text: malformed JSON, the secret in it, anything
      return fdp.consumeString(fdp.consumeIntegralInRange(0, 48))
  }
}

module.exports.fuzz = async function fuzz(data) {
  const fdp = new FuzzedDataProvider(data)
  const options = streamOptions(fdp)
  const { payloads, parts } = streamPayloads(fdp, 16, event)
  await checkRun('anthropic', () => anthropicMessagesEvents(body(parts), options), { payloads, options, mentionsSecret })
}
