'use strict'
// Guardrails inside dispatch: starting each guardrail of a stage (up to its concurrency), reading
// its decision for the machine, and the decision record and event the machine settles on.

const { boundedMetadata, failedMetadata } = require('./guardrails.js')
const { dispatchGuardAnswer } = require('../binding.js')
const C = require('./dispatch-codes.js')
const { swallow, thenOf, text, str } = require('./dispatch-host.js')
const { redact, anyRedaction, safeIds } = require('./dispatch-records.js')
const { forgetArgumentsText } = require('./arguments-text.js')

function guardStart(h, st, d) {
  const stage = d.stage
  const list = stage === 'tool_input' ? h.input : h.output
  let gs = st.guard
  if (gs === undefined || gs.stage !== stage) {
    const controller = new AbortController()
    const caller = st.ctx.signal
    const signal = caller ? AbortSignal.any([caller, controller.signal]) : controller.signal
    gs = st.guard = { stage, controller, signal, slots: [], max: h.concurrency, record: undefined }
  }
  const g = list[d.index]
  const slot = { state: 'value', value: undefined, g }
  gs.slots[d.index] = slot
  try {
    const evaluate = g?.evaluate
    const stageOk = g?.stage === undefined || g.stage === stage
    if (typeof evaluate !== 'function' || typeof g.name !== 'string' || !stageOk) {
      slot.state = 'invalid'
      return
    }
    if (stage === 'tool_input') forgetArgumentsText(st.call.arguments)
    const v = evaluate.call(g, {
      stage,
      value: stage === 'tool_input' ? st.call : st.result,
      sessionId: text(st.ctx.sessionId),
      runId: text(st.ctx.runId),
      toolCallId: text(st.call.id),
      toolName: st.name,
      metadata: st.ctx.metadata,
      signal: gs.signal,
    })
    slot.value = v
    if (thenOf(v)) {
      slot.state = 'pending'
      // Not awaited yet: a rejection must not count as unhandled meanwhile.
      if (gs.max > 1) swallow(v)
    }
  } catch (e) {
    slot.state = 'threw'
    slot.value = e
  }
}

const ACTIONS = { __proto__: null, allow: C.G_ALLOW, block: C.G_BLOCK, tripwire: C.G_TRIPWIRE, interrupt: C.G_INTERRUPT }

/** A guardrail's answer for the machine: its names as read, and its decision when it gave one. */
function guardAnswer(s, slot) {
  const g = slot.g
  const answer = { name: undefined, pack: undefined, rule: undefined, action: undefined, reason: undefined, metadata: undefined }
  try {
    answer.name = str(g?.name)
    answer.pack = str(g?.pack)
    answer.rule = str(g?.rule)
  } catch {}
  if (slot.state === 'invalid') return dispatchGuardAnswer(s, C.A_GUARD_INVALID, answer)
  if (slot.state === 'threw') return dispatchGuardAnswer(s, C.A_GUARD_FAILED, answer)
  const d = slot.value
  try {
    if (d === null || typeof d !== 'object') throw 0
    const action = ACTIONS[d.action]
    if (typeof d.action !== 'string' || action === undefined) throw 0
    slot.metadata = d.metadata
    answer.action = action
    answer.metadata = d.metadata !== undefined && d.metadata !== null
    answer.reason = str(d.reason)
    return dispatchGuardAnswer(s, C.A_GUARD, answer)
  } catch {
    answer.action = answer.metadata = answer.reason = undefined
    return dispatchGuardAnswer(s, C.A_GUARD_MALFORMED, answer)
  }
}

// The record's metadata as `runGuardrails` writes it (lib/guardrails.js): the decision's metadata
// redacted, through JSON, at most 16 KiB (`{ truncated: true }`) or `{ invalid: true }`; for a
// guardrail that threw or rejected, `{ error }` with its message.
function guardRecord(h, st, d) {
  const gs = st.guard
  const slot = gs.slots[st.guardIndex]
  const rec = { guardrail: d.guardrail, stage: d.stage, action: d.action }
  if (d.reason !== undefined) rec.reason = d.reason
  const redactor = anyRedaction(h) ? { redact: (v) => redact(h, v) } : undefined
  const metadata = d.metadata ? boundedMetadata(slot.metadata, redactor) : slot?.state === 'threw' ? boundedMetadata(failedMetadata(slot.value, redactor), redactor) : undefined
  if (metadata !== undefined) rec.metadata = metadata
  gs.record = rec
  if (typeof h.emit === 'function') {
    try {
      swallow(h.emit({ type: 'guardrail_decision', sessionId: text(st.ctx.sessionId), runId: text(st.ctx.runId), toolCallId: text(safeIds(h, st)[0]), toolName: text(safeIds(h, st)[1]), record: rec }))
    } catch {}
  }
}

module.exports = { guardStart, guardAnswer, guardRecord }
