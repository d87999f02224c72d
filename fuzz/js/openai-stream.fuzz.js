'use strict'
// Fuzz target: OpenAI-compatible stream assembly, `openAIChatEvents` (lib/providers/openai-compatible.js:
// the function `generate()` hands the response body to), on an in-memory body, no network.
//
// Arbitrary SSE: valid and malformed JSON chunks, `tool_calls` pieces with and without `index` and
// `id`, names split, repeated or missing, arguments in pieces, usage, finish reasons, `[DONE]`, error
// chunks, odd shapes, the bytes cut anywhere; small and default size bounds. Invariants:
// - the events end with exactly one `done` or `error`, nothing after it; the only throw is a
//   ProviderTransportError with a documented `code` (a size bound);
// - every assembled `tool_call` has a non-empty string `id` and `name`;
// - an error event's message is one of the provider's own (a server's `error` chunk excepted, which
//   is its message, redacted) and quotes no response bytes: the API key never appears in an error;
// - never hangs (Jazzer.js's per-input timeout).
const { FuzzedDataProvider } = require('@jazzer.js/core/dist/FuzzedDataProvider.js')
const { openAIChatEvents } = require('../../lib/providers/openai-compatible.js')
const { pick, text, maybe, assign, streamOptions, streamPayloads, body, mentionsSecret } = require('./stream-input.js')
const { checkRun } = require('./stream-checks.js')

const NAMES = ['echo', 'ec', 'ho', 'get_weather', 'echoecho', '']
const IDS = ['call_a', 'call_b', 'call_c', '']
const ARGS = ['{"q":', '"x"}', '{}', '{"a":1}', '1}', '', '{"n": 12345678901234567890}', 'not json', '{"é":"\\ud83d"}']
const CONTENT = ['hello', ' ', 'é', '😀', '']

function piece(fdp) {
  const p = {}
  assign(p, 'index', maybe(fdp, [0, 0, 1, 2, -1, 1.5, '0', null]))
  assign(p, 'id', maybe(fdp, [(f) => text(f, IDS), 7, null]))
  assign(p, 'type', maybe(fdp, ['function']))
  const fn = {}
  assign(fn, 'name', maybe(fdp, [(f) => text(f, NAMES), null, 3]))
  assign(fn, 'arguments', maybe(fdp, [(f) => text(f, ARGS), null, 3, {}]))
  assign(p, 'function', maybe(fdp, [fn, fn, fn, null, 'echo']))
  return p
}

function chunk(fdp) {
  switch (fdp.consumeIntegralInRange(0, 11)) {
    case 0:
      return '[DONE]'
    case 1: // raw text: malformed JSON, the secret in it, anything
      return fdp.consumeString(fdp.consumeIntegralInRange(0, 48))
    case 2:
      return JSON.stringify({ error: assign({ message: text(fdp, ['rate limited', 'bad']) }, 'code', maybe(fdp, ['server_error', 429])) })
    case 3:
      return JSON.stringify({ choices: [], usage: { prompt_tokens: 3, completion_tokens: fdp.consumeIntegralInRange(0, 9), total_tokens: 12 } })
    case 4:
      return JSON.stringify(pick(fdp, [null, 1, [], 'x', { choices: null }, { choices: [null] }, { choices: [{ delta: null }] }, { choices: [{ delta: { tool_calls: {} } }] }]))
    case 5:
      return JSON.stringify({ choices: [{ delta: {}, finish_reason: pick(fdp, ['stop', 'tool_calls', 'length']) }] })
    case 6: // a valid chunk cut short
    {
      const whole = JSON.stringify({ choices: [{ delta: { tool_calls: [piece(fdp)] } }] })
      return whole.slice(0, fdp.consumeIntegralInRange(0, whole.length))
    }
    case 7: {
      const delta = {}
      assign(delta, 'content', maybe(fdp, [(f) => text(f, CONTENT)]))
      assign(delta, 'reasoning_content', maybe(fdp, [(f) => text(f, CONTENT)]))
      return JSON.stringify({ choices: [{ delta }] })
    }
    default: {
      const pieces = []
      const n = fdp.consumeIntegralInRange(1, 3)
      for (let i = 0; i < n; i++) pieces.push(piece(fdp))
      const choice = { delta: { tool_calls: pieces } }
      assign(choice, 'finish_reason', maybe(fdp, ['tool_calls', null]))
      return JSON.stringify({ choices: [choice] })
    }
  }
}

module.exports.fuzz = async function fuzz(data) {
  const fdp = new FuzzedDataProvider(data)
  const options = streamOptions(fdp)
  assign(options, 'strictCompletion', maybe(fdp, [false, true]))
  const { payloads, parts } = streamPayloads(fdp, 14, chunk)
  await checkRun('openai', () => openAIChatEvents(body(parts), options), { payloads, options, mentionsSecret })
}
