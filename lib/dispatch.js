'use strict'
// Dispatch of one tool call. The decisions (step order, every blocked reason, message and code,
// abort handling, effect transitions, guardrail records, what ends the call) are taken by the Rust
// machine (crates/core/src/dispatch/machine.rs); JS performs its commands — calls the host's hooks,
// the tool and the stores, builds events, rows and results from the fields it decided — and hands
// each answer back as a small integer. Host values never cross.
//
// The parts, by what they do:
//   dispatch-options.js    reads the options once (hooks, guardrail stages, the compiled plan)
//   dispatch-loop.js       the command loop of one dispatch
//   dispatch-callbacks.js  the host code each command runs
//   dispatch-answers.js    what the host answered, as the machine's answer
//   dispatch-effects.js    the effect store's declaration, key, claim and transitions
//   dispatch-guardrails.js the tool guardrails' decisions and records
//   dispatch-records.js    redaction, events, ledger rows, the tool's context, errors
//   dispatch-host.js       calling host code: thenables, aborts, thrown codes
//   dispatch-codes.js      the command table, read from Rust
const { dispatchBegin } = require('../binding.js')
const C = require('./dispatch-codes.js')
const { invalidOption } = require('./dispatch-host.js')
const { compileOptions, createSecretRedactor } = require('./dispatch-options.js')
const { callFacts, hasEffect } = require('./dispatch-answers.js')
const { runCommands } = require('./dispatch-loop.js')
const { isoNow } = require('./clock.js')
const { plainLookup } = require('./registry.js')

/** A call's own state in the loop: one object literal, so every dispatch has the same shape. */
function callState(call, ctx, name, identity, h) {
  return {
    call,
    ctx,
    name,
    identity,
    tool: undefined,
    result: undefined,
    thrown: undefined,
    safeArgs: undefined,
    safeCall: undefined,
    safeIds: undefined,
    idempotencyKey: undefined,
    effectKey: undefined,
    effectRecord: undefined,
    effectClaim: undefined,
    effectRead: undefined,
    next: undefined,
    guard: undefined,
    checked: undefined,
    t0: h.emit !== undefined ? performance.now() : 0, // for events' durationMs only
    startedAt: h.ledger !== undefined ? isoNow() : undefined,
  }
}

/**
 * The `found` answer handed over with the beginning: 0 not looked up, 1 no tool, 2 a tool, 3 a tool
 * with no `effect` property. A registry made by createToolRegistry is looked up here (the machine's
 * first command would be the lookup): one crossing fewer a call.
 */
function lookUpFirst(h, st, name, callFlags) {
  if (!h.lookupFirst || (callFlags & (C.C_NAME_NOT_STRING | C.C_PROVIDER_HOSTED)) !== 0) return 0
  const get = plainLookup(h.registry)
  if (get === undefined) return 0
  const tool = get(name)
  st.tool = tool
  // A tool with no `effect` at all also answers the declaration (when it comes next).
  return tool !== null && (typeof tool === 'object' || typeof tool === 'function') ? (hasEffect(tool) ? 2 : 3) : 1
}

function start(h, call, context) {
  let ctx = context
  if (ctx === undefined || ctx === null) ctx = {}
  else if (typeof ctx !== 'object') throw invalidOption(TypeError, 'dispatchToolCall: context must be a ToolExecutionContext object')
  const [name, callFlags] = callFacts(call)
  const identity = h.identity !== undefined ? h.identity : ctx.identity
  let flags = h.flags
  if (identity !== undefined && identity !== null) flags |= C.F_IDENTITY
  const signal = ctx.signal
  if (signal !== undefined && signal !== null && typeof signal === 'object') flags |= C.F_SIGNAL
  const st = callState(call, ctx, name, identity, h)
  const found = lookUpFirst(h, st, name, callFlags)
  const begun = dispatchBegin(h.plan, flags, h.input ? h.input.length : 0, h.output ? h.output.length : 0, h.concurrency, name, callFlags, found)
  const s = Math.floor(begun / C.ID_STRIDE)
  return runCommands(h, st, s, begun % C.ID_STRIDE)
}

/**
 * @param {import('../types/harness').DispatchToolCallOptions} options
 * @returns {Promise<import('../types/harness').ToolResult>}
 */
function dispatchToolCall(options) {
  try {
    const h = compileOptions(options, 'dispatchToolCall')
    return start(h, options.call, options.context)
  } catch (e) {
    return Promise.reject(e)
  }
}

/**
 * @param {import('../types/harness').ToolDispatcherOptions} options
 * @returns {import('../types/harness').ToolDispatcher}
 */
function createToolDispatcher(options) {
  const h = compileOptions(options, 'createToolDispatcher')
  return {
    dispatch(call, context) {
      try {
        return start(h, call, context)
      } catch (e) {
        return Promise.reject(e)
      }
    },
  }
}

module.exports = { dispatchToolCall, createToolDispatcher, createSecretRedactor }
