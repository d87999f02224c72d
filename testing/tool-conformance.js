'use strict'
// Conformance kit for a host's tool setup: proves that dispatch over the host's registry, filter,
// permission policy and validator blocks each refused call with its documented reason (and never runs
// it), and runs a valid call. Framework-free: it throws an Error naming the first broken rule. Whether
// a call ran is read from the tool_execution_started / tool_execution_blocked events, never by
// wrapping the host's tool.
const { dispatchToolCall } = require('../index.js')

const denyEverything = { check: () => ({ allowed: false, reason: 'denied' }) }
const refuseEverything = () => 'invalid'

/** Dispatches `probe.call` and collects every event dispatch emits: `{ result, events }`. */
async function dispatchAndCollect(probe) {
  const events = []
  const context = { sessionId: 'conformance', runId: 'r', toolCallId: probe.call.id, ...probe.context }
  const result = await dispatchToolCall({
    call: probe.call,
    registry: probe.registry,
    context,
    filter: probe.filter,
    permission: probe.permission,
    validate: probe.validate,
    secrets: probe.secrets,
    emit(event) {
      events.push(event)
    },
  })
  return { result, events }
}

/** Throws unless dispatching `probe` is blocked with `expectedReason`, carries an error and never starts. */
async function assertToolBlocked(probe, expectedReason) {
  const { result, events } = await dispatchAndCollect(probe)
  const blocked = events.find((event) => event.type === 'tool_execution_blocked')
  if (blocked === undefined) {
    throw new Error(`Expected tool_execution_blocked for "${expectedReason}", but no blocked event was emitted`)
  }
  if (blocked.reason !== expectedReason) {
    throw new Error(`Blocked reason mismatch: expected ${expectedReason}, got ${blocked.reason}`)
  }
  if (!result.error) throw new Error(`Blocked call for "${expectedReason}" carried no error in the result`)
  if (events.some((event) => event.type === 'tool_execution_started')) {
    throw new Error(
      `Tool emitted tool_execution_started despite being blocked for "${expectedReason}"; blocked calls must not execute`,
    )
  }
}

/**
 * Registers `options.tool` in `registry`, then checks the blocked-reason matrix (unknown_tool,
 * tool_denied, invalid_arguments, permission_denied, validation_failed) and that a valid call with
 * `options.validArgs` runs without an error. Throws on the first violation.
 */
async function assertToolDispatchConforms(registry, options) {
  registry.register(options.tool)
  const context = { sessionId: 'conformance', runId: 'r', toolCallId: 'call' }
  const call = (name, args) => ({ type: 'tool_call', id: 'call', name, arguments: args })
  const host = {
    registry,
    secrets: options.secrets,
    permission: options.permission,
    validate: options.validate,
    filter: options.filter,
  }
  const name = options.tool.name
  await assertToolBlocked({ ...host, call: call('does-not-exist', {}), context }, 'unknown_tool')
  await assertToolBlocked({ ...host, call: call(name, options.validArgs), context, filter: { deny: [name] } }, 'tool_denied')
  await assertToolBlocked({ ...host, call: call(name, 'not-an-object'), context }, 'invalid_arguments')
  await assertToolBlocked({ ...host, call: call(name, options.validArgs), context, permission: denyEverything }, 'permission_denied')
  await assertToolBlocked({ ...host, call: call(name, options.validArgs), context, validate: refuseEverything }, 'validation_failed')
  const { result, events } = await dispatchAndCollect({ ...host, call: call(name, options.validArgs), context })
  if (result.error) throw new Error(`Valid tool call was not executed: ${result.error.message}`)
  if (!events.some((event) => event.type === 'tool_execution_started')) {
    throw new Error('Valid tool call did not emit tool_execution_started')
  }
  if (events.some((event) => event.type === 'tool_execution_blocked')) {
    throw new Error('Valid tool call emitted a tool_execution_blocked event')
  }
}

module.exports = { assertToolDispatchConforms, assertToolBlocked, dispatchAndCollect }
