'use strict'
// Dispatch options, read once: the hooks, the guardrail stages, and the filter and secrets compiled
// into the machine's plan (crates/core/src/dispatch/). What a call then runs with is one object of a
// known shape (`CompiledOptions`), so each read in the command loop is a named load.
const native = require('../binding.js')
const C = require('./dispatch-codes.js')
const { invalidOption } = require('./dispatch-host.js')
const { registerRedactorSecrets, redactorSecrets } = require('./stream-redaction.js')
const { sameItems } = require('./registry.js')
const { readToolTimeout } = require('./dispatch-deadline.js')

const { dispatchPlan, dispatchSecrets, createSecretRedactor: rawCreateSecretRedactor } = native

/**
 * A redactor made by createSecretRedactor is registered with its secrets (one registry, shared with
 * the stream redactor): dispatch then redacts in Rust with the same matcher, and a stream need not
 * hold a turn's whole text.
 * @param {string[]} secrets
 */
function createSecretRedactor(secrets) {
  return registerRedactorSecrets(rawCreateSecretRedactor(secrets), Array.isArray(secrets) ? secrets : [])
}

const NO_PLAN = dispatchPlan(undefined, undefined)
const NO_SECRETS = { plan: NO_PLAN, secrets: undefined, redactor: undefined, match: undefined }

/** A plan and what JS redacts with: its secrets, their native redactor, and the list `includes` may scan. */
function compiledPlan(plan) {
  const list = dispatchSecrets(plan)
  if (list.length === 0) return { plan, secrets: undefined, redactor: undefined, match: undefined }
  // `match`: the secrets JS may look for with `includes` — only when each is well-formed UTF-16,
  // so that a substring in JS is exactly a substring of the UTF-8 text the native matcher sees.
  const match = list.every((x) => x.isWellFormed()) ? list : undefined
  return { plan, secrets: list, redactor: rawCreateSecretRedactor(list), match }
}

// Plans for options without a filter, by their secrets (the last 64 lists): a dispatch that passes
// the same secrets every call compiles them once. The key is the list as JSON, which no two lists share.
const PLANS = new Map()
function planFor(filter, secrets) {
  if (filter !== undefined) return compiledPlan(dispatchPlan(filter, secrets))
  if (secrets === undefined || secrets.length === 0) return NO_SECRETS
  const key = JSON.stringify(secrets)
  let c = PLANS.get(key)
  if (c === undefined) {
    if (PLANS.size >= 64) PLANS.clear()
    c = compiledPlan(dispatchPlan(undefined, secrets))
    PLANS.set(key, c)
  }
  return c
}

/** The secrets a plan redacts: the strings of `options.secrets`, then a built-in redactor's own. */
function secretList(listed, own) {
  const list = listed === undefined ? undefined : listed.filter((s) => typeof s === 'string')
  return own === undefined ? list : list ? list.concat(own) : own
}

// The plan of the last options without a filter, with what its secrets were made of: a dispatch
// that passes the same secrets at every call (items compared one by one, so a list changed in
// place is seen) reuses it without listing and looking them up again.
let lastPlan = { listed: undefined, own: undefined, compiled: NO_SECRETS }
function unfilteredPlan(listed, own) {
  const last = lastPlan
  if (own === last.own && sameItems(listed, last.listed)) return last.compiled
  const compiled = planFor(undefined, secretList(listed, own))
  lastPlan = { listed: listed === undefined ? undefined : listed.slice(), own, compiled }
  return compiled
}

const given = (v) => (v === null ? undefined : v)

// The agent loop's dispatch option (not public): `() => boolean`, whether a lifecycle event would
// reach anyone now (a session subscriber or the run's ledger). A call whose events nobody observes
// builds none; the machine's steps are the same either way.
const OBSERVED = Symbol('prism-tools-native.observed')

function stageList(g, key) {
  const list = g[key]
  if (list === undefined || list === null) return undefined
  if (!Array.isArray(list)) throw invalidOption(TypeError, `guardrails.${key} must be an array of guardrails`)
  return list.length ? list : undefined
}

/** The machine's option flags: which hooks the host gave. */
function optionFlags(h) {
  let flags = 0
  if (h.middleware !== undefined) flags |= C.F_MIDDLEWARE
  if (h.trust !== undefined) flags |= C.F_TRUST
  if (h.permission !== undefined) flags |= C.F_PERMISSION
  if (h.validate !== undefined) flags |= C.F_VALIDATE
  if (h.effectStore !== undefined) flags |= C.F_EFFECT_STORE
  if (h.beforeExecute !== undefined) flags |= C.F_BEFORE_EXECUTE
  if (h.emit !== undefined) flags |= C.F_EMIT
  if (h.ledger !== undefined) flags |= C.F_LEDGER
  if (h.hostRedactor !== undefined) flags |= C.F_REDACTION
  return flags
}

/** The guardrail stages and their concurrency (1 to 16). */
function readGuardrails(h) {
  const g = h.guardrails
  if (g === undefined) return
  h.input = stageList(g, 'toolInput')
  if (h.input !== undefined) h.lookupFirst = false
  h.output = stageList(g, 'toolOutput')
  const mc = g.maxConcurrency
  if (mc !== undefined) {
    if (typeof mc !== 'number') throw invalidOption(RangeError, 'guardrails.maxConcurrency must be an integer from 1 to 16')
    if (!Number.isInteger(mc) || mc < 1 || mc > 16) {
      throw invalidOption(RangeError, `guardrails.maxConcurrency must be an integer from 1 to 16 (got ${mc})`)
    }
    h.concurrency = mc
  }
}

/** The secrets and redactor: the plan, and which redactor is called back (a built-in one never is). */
function readRedaction(h, options) {
  const filter = options.filter
  let listed = options.secrets
  if (listed !== undefined && listed !== null) {
    if (!Array.isArray(listed)) throw invalidOption(TypeError, 'secrets must be an array of strings')
  } else listed = undefined
  h.hostRedactor = h.redactor
  const own = h.redactor !== undefined ? redactorSecrets(h.redactor) : undefined
  if (own !== undefined) {
    h.hostRedactor = undefined
  } else if (h.redactor !== undefined && typeof h.redactor.redact !== 'function') {
    throw invalidOption(TypeError, 'redactor must have a redact(value) method')
  }
  const compiled = filter !== undefined ? planFor(filter, secretList(listed, own)) : unfilteredPlan(listed, own)
  h.plan = compiled.plan
  h.secrets = compiled.secrets
  h.nativeRedactor = compiled.redactor
  h.secretMatch = compiled.match
}

/**
 * Reads dispatch options once (`who` names the function in errors).
 * @param {any} options
 * @param {string} who
 */
function compileOptions(options, who) {
  if (options === null || typeof options !== 'object') throw invalidOption(TypeError, `${who}: options must be an object`)
  // One object literal with every field the options ever get: each read in the loop is a named load
  // of a known shape (a loop over key names made every access megamorphic, a quarter of a bare dispatch).
  const h = {
    middleware: given(options.middleware),
    guardrails: given(options.guardrails),
    identity: given(options.identity),
    ownership: given(options.ownership),
    trust: given(options.trust),
    permission: given(options.permission),
    validate: given(options.validate),
    effectStore: given(options.effectStore),
    beforeExecute: given(options.beforeExecute),
    emit: given(options.emit),
    observed: typeof options[OBSERVED] === 'function' ? options[OBSERVED] : undefined,
    ledger: given(options.ledger),
    redactor: given(options.redactor),
    registry: given(options.registry),
    hostRedactor: undefined,
    plan: undefined,
    secrets: undefined,
    nativeRedactor: undefined,
    secretMatch: undefined,
    flags: 0,
    // Nothing runs before the lookup: the tool may be looked up before the machine begins.
    lookupFirst: false,
    input: undefined,
    output: undefined,
    concurrency: 1,
    toolTimeoutMs: readToolTimeout(options.toolTimeoutMs, who),
  }
  if (h.registry === undefined) throw invalidOption(TypeError, `${who}: options.registry is required`)
  readRedaction(h, options)
  h.flags = optionFlags(h)
  h.lookupFirst = h.middleware === undefined
  readGuardrails(h)
  return h
}

module.exports = { compileOptions, createSecretRedactor, OBSERVED }
