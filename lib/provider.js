'use strict'
// The provider seam's helpers and a scripted mock provider. The runtime treats the mock like any
// other `AIProvider`; tests and examples use it to script provider turns.
const native = require('../binding.js')

function providerTextDelta(text) {
  return { type: 'content_delta', content: { type: 'text', text } }
}

function providerThinkingDelta(text, signature) {
  return { type: 'content_delta', content: { type: 'thinking', text, signature } }
}

function providerContentDelta(content) {
  return { type: 'content_delta', content }
}

function providerToolCall(call) {
  return { type: 'tool_call', call }
}

/** `{ index, id?, name?, argumentsText? }`: one streamed piece of a tool call. */
function providerToolCallDelta(delta) {
  return { type: 'tool_call_delta', ...delta }
}

function providerUsage(usage) {
  return { type: 'usage', usage }
}

function providerDone(usage, stopReason) {
  const event = { type: 'done', usage }
  if (stopReason !== undefined) event.stopReason = stopReason
  return event
}

/**
 * An `error` provider event: the thrown value as an ErrorInfo, redacted of `secrets`.
 * @param {unknown} error
 * @param {readonly (string | undefined)[]} [secrets]
 */
function providerError(error, secrets = []) {
  return { type: 'error', error: native.errorToErrorInfo(error, secrets) }
}

function toolCallContent(id, name, args = {}) {
  return { type: 'tool_call', id, name, arguments: args }
}

/**
 * `events` is either one event list, replayed on every provider turn, or a list of event lists,
 * one per turn; a turn past the script yields an `error` event (code `mock_script_exhausted`).
 * `onRequest(request, turnIndex)` sees every request before any event is yielded.
 */
function createMockProvider(events, options = {}) {
  if (!Array.isArray(events)) throw new TypeError('createMockProvider: events must be an array')
  const scripted = events.length > 0 && events.every(Array.isArray)
  const id = options.id ?? 'mock'
  let turn = 0
  return {
    id,
    async *generate(request) {
      const index = turn++
      const signal = request !== null && typeof request === 'object' ? request.signal : undefined
      // An aborted request ends with the abort reason, as a real provider's fetch would.
      const checkAbort = () => {
        if (signal && signal.aborted) throw signal.reason
      }
      checkAbort()
      if (typeof options.onRequest === 'function') await options.onRequest(request, index)
      const list = scripted ? events[index] : events
      checkAbort()
      if (list === undefined) {
        yield {
          type: 'error',
          error: {
            name: 'Error',
            message: `Mock provider ${id} has no scripted turn ${index + 1} (${events.length} scripted)`,
            code: 'mock_script_exhausted',
          },
        }
        return
      }
      for (const event of list) {
        checkAbort()
        yield event
      }
    },
  }
}

// The package entry publishes this whole object (index.js): every name here is public API.
module.exports = {
  createMockProvider,
  providerTextDelta,
  providerThinkingDelta,
  providerContentDelta,
  providerToolCall,
  providerToolCallDelta,
  providerUsage,
  providerDone,
  providerError,
  toolCallContent,
}
