'use strict'
// `@arnilo/prism`'s named redaction entry points for the agent's outbound data. Each passes the
// value through the redactor (a native `createSecretRedactor` one is applied in Rust, a host one
// through its `redact`), or returns it unchanged without one. Field policies are not part of this
// package: a `fieldPolicy` argument is refused rather than ignored.
const native = require('../binding.js')

function through(value, redactor, fieldPolicy, fn) {
  if (fieldPolicy !== undefined && fieldPolicy !== null) {
    const err = new TypeError(`${fn}: field policies are not supported by prism-tools-native; see docs/agent.md "Upstream options"`)
    err.code = 'unsupported_agent_option'
    throw err
  }
  return redactor === undefined || redactor === null ? value : native.redactRunLedgerRecord(value, redactor)
}

function redactAgentEvent(event, redactor, fieldPolicy) {
  return through(event, redactor, fieldPolicy, 'redactAgentEvent')
}

function redactMessage(message, redactor, fieldPolicy) {
  return through(message, redactor, fieldPolicy, 'redactMessage')
}

function redactSessionEntry(entry, redactor, fieldPolicy) {
  return through(entry, redactor, fieldPolicy, 'redactSessionEntry')
}

// The request's `signal` is the live AbortSignal, never a redacted copy of it.
function redactProviderRequest(request, redactor, fieldPolicy) {
  if (request === null || typeof request !== 'object' || !('signal' in request)) return through(request, redactor, fieldPolicy, 'redactProviderRequest')
  const { signal, ...rest } = request
  const out = through(rest, redactor, fieldPolicy, 'redactProviderRequest')
  if (out === rest) return request
  out.signal = signal
  return out
}

module.exports = { redactAgentEvent, redactMessage, redactSessionEntry, redactProviderRequest }
