'use strict'
// The invariants both provider stream targets check on one run of a provider's event generator.

// Codes a provider stream may throw with (lib/errors.js ProviderTransportError; lib/providers/http.js readSse).
const THROWN_CODES = new Set(['sse_event_overflow', 'response_body_overflow', 'sse_buffer_overflow', 'aborted'])

// The provider's own error messages, digits as #. A server's `error` event is quoted as the server
// wrote it (redacted): that is its message, not response bytes taken out of context.
const OWN = {
  openai: [
    /^Chat stream sent malformed JSON in an event: [A-Za-z ',:\\{}[\]]+ at position # of #$/,
    /^Chat stream ended without completion evidence \(\[DONE\]: (received|missing), finish_reason: (received|missing)\)$/,
    /^Incomplete tool call delta at index #$/,
  ],
  anthropic: [
    /^Anthropic stream sent malformed JSON in an event: [A-Za-z ',:\\{}[\]]+ at position # of #$/,
    /^Anthropic messages stream ended without completion evidence \(message_stop: (received|missing), content blocks complete: (yes|no)\)$/,
    /^Anthropic stream sent input_json_delta outside a tool_use block$/,
  ],
}
const SERVER = { openai: /^Chat stream error: /, anthropic: /^Anthropic stream error: / }

function fail(what, detail) {
  throw new Error(`${what}\n${JSON.stringify(detail, (k, v) => (v instanceof Uint8Array ? Buffer.from(v).toString('latin1') : v))}`)
}

/** Drains `start()` and checks the events (see the targets' headers). */
async function checkRun(provider, start, detail) {
  const events = []
  try {
    for await (const e of start()) events.push(e)
  } catch (err) {
    if (!(err instanceof Error) || !THROWN_CODES.has(err.code)) fail(`${provider}: threw ${err && err.name}: ${err && err.message} (code ${err && err.code})`, detail)
    if (detail.mentionsSecret(err.message)) fail(`${provider}: a thrown error quotes the secret`, detail)
    return
  }
  const last = events[events.length - 1]
  if (last === undefined || (last.type !== 'done' && last.type !== 'error')) fail(`${provider}: the events do not end with done or error`, { ...detail, events })
  if (events.filter((e) => e.type === 'done' || e.type === 'error').length !== 1) fail(`${provider}: more than one done/error event`, { ...detail, events })
  for (const e of events) {
    if (e.type === 'tool_call') {
      const call = e.call
      if (typeof call.id !== 'string' || call.id === '' || typeof call.name !== 'string' || call.name === '') fail(`${provider}: a tool call without an id or a name`, { ...detail, events })
      // The message names the tool (model-chosen, redacted by the agent); no argument text in it.
      const message = call.argumentsError === undefined ? '' : String(call.argumentsError.message).split(call.name).join('')
      if (detail.mentionsSecret(message)) fail(`${provider}: an argumentsError quotes the arguments`, { ...detail, events })
    }
    if (e.type === 'error') {
      const message = String(e.error.message)
      if (detail.mentionsSecret(e.error)) fail(`${provider}: an error event quotes the secret`, { ...detail, events })
      const shape = message.replace(/\d+/g, '#')
      if (!SERVER[provider].test(message) && !OWN[provider].some((re) => re.test(shape))) fail(`${provider}: an error message not of the provider's own: ${message}`, { ...detail, events })
    }
  }
}

module.exports = { checkRun }
