'use strict'
// The command loop of dispatch. The decisions (step order, every blocked reason, message and
// code, abort handling, effect transitions, guardrail records, what ends the call) are taken by
// the Rust machine (crates/core/src/dispatch/machine.rs); this loop performs its commands — calls the host's
// hooks, the tool and the stores, builds events, rows and results from the fields it decided —
// and hands each answer back as a small integer. Host values never cross.

const { isPlainObjectProto } = require('./json-object.js')
const { ownToolArgumentValidators } = require('./validation.js')
const { registerRedactorSecrets, redactorSecrets } = require('./stream-redaction.js')
const { toToolResult } = require('./tool-result-shape.js')
const { forgetArgumentsText } = require('./arguments-text.js')
const bindRecords = require('./dispatch-records.js')
const bindGuardrails = require('./dispatch-guardrails.js')
const { callStoreMethod, nativeStoreOf } = require('./effects.js')
const { identityChecker } = require('./effect-store-wire.js')
const { isPromise } = require('node:util').types
const { isoNow } = require('./clock.js')
const { raceAbort: raceAbortWith } = require('./abort-watch.js')
const { plainLookup, sameItems } = require('./registry.js')

module.exports = function bindDispatch(native, errors) {
  // A copy with fast properties: the object napi builds (82 keys) is a dictionary, so each `C.K_…` in
  // the command loop was an inline-cache miss.
  const C = Object.freeze({ ...native.dispatchCodes() })
  const identityCheck = identityChecker(native.identityCheck)
  const { dispatchBegin, dispatchStep, dispatchAnswer, dispatchDetail, dispatchEnd, dispatchPlan, dispatchSecrets, dispatchRowBlock } = native
  // Ledger row ids, `tcr_<ms>_<pid>_<counter>` (time and pid in base 36, taken when a block is
  // reserved; the counter in decimal), from blocks of the process-wide counter
  // (crates/core/src/dispatch/clock.rs): no Node-API crossing per row, no id handed out twice, and no base-36
  // conversion per row (V8's radix formatting was a tenth of a dispatch with a ledger).
  const ROW_BLOCK = 1024
  let rowNext = 0
  let rowEnd = 0
  let rowPrefix = ''
  function rowId() {
    if (rowNext === rowEnd) {
      const [first, pid] = dispatchRowBlock(ROW_BLOCK)
      rowNext = first
      rowEnd = first + ROW_BLOCK
      rowPrefix = `tcr_${Date.now().toString(36)}_${pid.toString(36)}_`
    }
    return rowPrefix + rowNext++
  }
  const NO_PLAN = dispatchPlan(undefined, undefined)
  const rawCreateSecretRedactor = native.createSecretRedactor
  // A redactor made by createSecretRedactor is registered with its secrets (one registry, shared
  // with the stream redactor): dispatch then redacts in Rust with the same matcher, and a stream
  // need not hold a turn's whole text.
  function createSecretRedactor(secrets) {
    return registerRedactorSecrets(rawCreateSecretRedactor(secrets), Array.isArray(secrets) ? secrets : [])
  }

  const invalidOption = (Kind, message, code = 'ERR_PRISM_INVALID_OPTION') => {
    const e = new Kind(message)
    e.code = code
    return e
  }
  const noop = () => {}
  const swallow = (v) => {
    try {
      if (v !== null && typeof v === 'object' && typeof v.then === 'function') v.then(undefined, noop)
    } catch {}
  }

  // A thenable, or undefined; a `then` that throws on read counts as the callback throwing.
  const THREW = { threw: true, value: undefined }
  function thenOf(v) {
    if (v === null || (typeof v !== 'object' && typeof v !== 'function')) return undefined
    const t = v.then
    return typeof t === 'function' ? t : undefined
  }

  const ABORTED = Symbol('aborted')
  // What a callback returns when the binding has already handed its outcome to the machine (the
  // identity check and a built-in store's claim and transitions): the next command is `st.next`.
  const STEPPED = Symbol('stepped')
  const toAborted = () => ABORTED
  // ABORTED once the signal aborts; the wait is on the signal's one shared listener (lib/abort-watch.js).
  const raceAbort = (p, signal) => raceAbortWith(p, signal, toAborted)

  const codeOf = (e) => {
    try {
      const c = e !== null && (typeof e === 'object' || typeof e === 'function') ? e.code : undefined
      return typeof c === 'string' ? c : undefined
    } catch {
      return undefined
    }
  }

  const TYPE_INDEX = { undefined: C.T_UNDEFINED, boolean: C.T_BOOLEAN, number: C.T_NUMBER, string: C.T_STRING, symbol: C.T_SYMBOL, bigint: C.T_BIGINT, function: C.T_FUNCTION }
  const typeIndex = (v) => (v === null ? C.T_NULL : Array.isArray(v) ? C.T_ARRAY : typeof v === 'object' ? C.T_OBJECT : TYPE_INDEX[typeof v])
  const text = (v) => (v === undefined || v === null ? '' : String(v))
  const str = (v) => (typeof v === 'string' ? v : undefined)

  // A JSON object: a plain object of this realm or another (`node:vm`), not an array or instance.
  function isJsonObject(v) {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return false
    try {
      return isPlainObjectProto(v)
    } catch {
      return false
    }
  }

  // The call's facts the machine decides on: [name text or undefined, packed flags].
  function callFacts(call) {
    if (call === null || typeof call !== 'object') {
      throw invalidOption(TypeError, 'dispatchToolCall: call must be a tool_call object', 'ERR_PRISM_INVALID_CALL')
    }
    const name = call.name
    let flags = 0
    if (call.argumentsError !== undefined && call.argumentsError !== null) flags |= C.C_ARGS_PROVIDER_ERROR
    else if (!isJsonObject(call.arguments)) flags |= C.C_ARGS_NOT_OBJECT
    if (call.authority === 'provider-hosted') flags |= C.C_PROVIDER_HOSTED
    if (typeof name !== 'string') flags |= C.C_NAME_NOT_STRING
    return [typeof name === 'string' ? name : name === undefined || name === null ? '' : String(name), flags]
  }

  // Plans for options without a filter, by their secrets: a dispatch that passes the same secrets
  // every call compiles them once.
  const PLANS = new Map()
  const NO_SECRETS = { plan: NO_PLAN, secrets: undefined, redactor: undefined }
  function planFor(filter, secrets) {
    if (filter !== undefined) {
      const plan = dispatchPlan(filter, secrets)
      return compiledPlan(plan)
    }
    if (secrets === undefined || secrets.length === 0) return NO_SECRETS
    const key = secrets.join('\u0000')
    let c = PLANS.get(key)
    if (c === undefined) {
      if (PLANS.size >= 64) PLANS.clear()
      c = compiledPlan(dispatchPlan(undefined, secrets))
      PLANS.set(key, c)
    }
    return c
  }
  function compiledPlan(plan) {
    const list = dispatchSecrets(plan)
    if (list.length === 0) return { plan, secrets: undefined, redactor: undefined, match: undefined }
    // `match`: the secrets JS may look for with `includes` — only when each is well-formed UTF-16,
    // so that a substring in JS is exactly a substring of the UTF-8 text the native matcher sees.
    const match = list.every((x) => x.isWellFormed()) ? list : undefined
    return { plan, secrets: list, redactor: rawCreateSecretRedactor(list), match }
  }

  const given = (v) => (v === null ? undefined : v)

  // The secrets a plan redacts: the strings of `options.secrets`, then a built-in redactor's own.
  function secretList(listed, own) {
    const list = listed === undefined ? undefined : listed.filter((s) => typeof s === 'string')
    return own === undefined ? list : list ? list.concat(own) : own
  }

  // The plan of the last options without a filter, with what its secrets were made of: a dispatch
  // that passes the same secrets at every call (items compared one by one, so a list changed in
  // place is seen) reuses it without listing, joining and looking them up again.
  let lastPlan = { listed: undefined, own: undefined, compiled: NO_SECRETS }
  function unfilteredPlan(listed, own) {
    const last = lastPlan
    if (own === last.own && sameItems(listed, last.listed)) return last.compiled
    const compiled = planFor(undefined, secretList(listed, own))
    lastPlan = { listed: listed === undefined ? undefined : listed.slice(), own, compiled }
    return compiled
  }

  function stageList(g, key) {
    const list = g[key]
    if (list === undefined || list === null) return undefined
    if (!Array.isArray(list)) throw invalidOption(TypeError, `guardrails.${key} must be an array of guardrails`)
    return list.length ? list : undefined
  }

  // Reads the options once: the hooks, the filter and secrets compiled in a plan.
  function compile(options, who) {
    if (options === null || typeof options !== 'object') throw invalidOption(TypeError, `${who}: options must be an object`)
    // One object literal with every field the plan ever gets: each read below is a named load of a
    // known shape (a loop over key names made every access megamorphic, a quarter of a bare dispatch).
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
      ledger: given(options.ledger),
      redactor: given(options.redactor),
      registry: given(options.registry),
      hostRedactor: undefined,
      plan: undefined,
      secrets: undefined,
      nativeRedactor: undefined,
      secretMatch: undefined,
      flags: 0,
      input: undefined,
      output: undefined,
      concurrency: 1,
    }
    if (h.registry === undefined) throw invalidOption(TypeError, `${who}: options.registry is required`)
    const filter = options.filter
    let listed = options.secrets
    if (listed !== undefined && listed !== null) {
      if (!Array.isArray(listed)) throw invalidOption(TypeError, 'secrets must be an array of strings')
    } else listed = undefined
    // A redactor made by createSecretRedactor redacts in Rust with the same matcher: its secrets
    // join the plan's and it is never called back.
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
    h.flags = flags
    // Nothing runs before the lookup: the tool may be looked up before the machine begins.
    h.lookupFirst = h.middleware === undefined
    h.input = undefined
    h.output = undefined
    h.concurrency = 1
    const g = h.guardrails
    if (g !== undefined) {
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
    return h
  }

  const { redact, anyRedaction, hostRedact, errorInfo, makeRow, emit, append, safeArgs, safeCall, safeIds, plainCopy, redactCopy, progressSink, toolContext, buildError } = bindRecords({
    native,
    C,
    rowId,
    swallow,
    thenOf,
    text,
  })
  const { guardStart, guardAnswer, guardRecord } = bindGuardrails({ C, dispatchAnswer, dispatchStep, swallow, thenOf, text, str, redact, anyRedaction, safeIds, forgetArgumentsText })

  // ----- effects -----------------------------------------------------------------------------------

  const STATUS = { __proto__: null, claimed: C.S_CLAIMED, dispatched: C.S_DISPATCHED, completed: C.S_COMPLETED, unknown: C.S_UNKNOWN, failed_retryable: C.S_FAILED_RETRYABLE }
  const status = (r) => STATUS[r?.status] ?? C.S_OTHER

  function transition(st, d, extra) {
    const k = st.effectKey
    const t = {
      identity: k.identity,
      ownership: k.ownership,
      key: k.key,
      sessionId: k.sessionId,
      runId: k.runId,
      toolCallId: k.toolCallId,
      toolName: k.toolName,
      argumentsHash: k.argumentsHash,
      signal: k.signal,
      claimToken: d.claimToken,
      expectedVersion: d.expectedVersion,
    }
    return extra ? Object.assign(t, extra) : t
  }

  // A built-in store checks its input's signal first. On dispatch's own claim the signal crosses
  // only when it is aborted (the binding then throws its reason): a live one costs no read there.
  const abortedSignal = (sig) => (typeof sig === 'object' && sig !== null && sig.aborted === true ? sig : undefined)

  // `complete` on a built-in store: the result crosses as the JSON text the store keeps, and the
  // stored result dispatch answers with is that text parsed — what the record would hold. On the
  // dispatch's own claim the binding hands the new version to the machine itself, and the stored
  // result is taken here (see `useStored`).
  function advanceComplete(ns, st, s) {
    const result = st.result
    let text
    let unserializable = false
    if (result !== undefined) {
      try {
        text = JSON.stringify(result)
      } catch {}
      if (text === undefined) unserializable = true
    }
    const stored = text === undefined ? undefined : JSON.parse(text)
    let answer = STEPPED
    if (st.effectClaim !== undefined) {
      st.next = native.advanceClaim(ns.handle, s, true, text, unserializable, abortedSignal(st.effectKey.signal))
    } else {
      answer = ns.store.advance(transition(st, dispatchDetail(s)), true, text, unserializable)
    }
    st.effectRecord = { result: stored }
    useStored(st, stored)
    return answer
  }

  // A completed record's stored result, when it is an object, is what the call answers with
  // (upstream's `record.result ?? result`): taken as the store answers, before the machine goes on.
  function useStored(st, stored) {
    if (stored !== null && typeof stored === 'object') st.result = stored
  }

  function storeCall(h, method, arg, f = h.effectStore[method]) {
    const store = h.effectStore
    if (typeof f !== 'function') {
      throw invalidOption(TypeError, `effectStore.${method} is not a function`, 'ERR_PRISM_TOOL_EFFECT_STORE')
    }
    return callStoreMethod(store, f, arg)
  }

  // A settle write: failures and a missing method are swallowed; a thenable is waited for.
  function settleCall(h, method, arg) {
    try {
      const f = h.effectStore[method]
      if (typeof f !== 'function') return undefined
      const v = callStoreMethod(h.effectStore, f, arg)
      return thenOf(v) ? v : undefined
    } catch {
      return undefined
    }
  }

  // ----- the loop ----------------------------------------------------------------------------------

  // Performs a host callback: returns [kind, value] where kind 0 = value, 1 = threw, 2 = pending.
  function perform(fn) {
    try {
      const v = fn()
      return thenOf(v) ? [2, v] : [0, v]
    } catch (e) {
      return [1, e]
    }
  }

  async function settle(p, signal) {
    try {
      const v = await raceAbort(p, signal)
      return v === ABORTED ? [3, undefined] : [0, v]
    } catch (e) {
      return [1, e]
    }
  }

  // The lifecycle event (`emit`) or ledger row (`append`) of command `k`: the hook's thenable, or undefined.
  function report(h, st, s, k) {
    if (k === C.K_EMIT_STARTED) {
      return emit(h, { type: 'tool_execution_started', sessionId: st.ctx.sessionId, runId: st.ctx.runId, toolName: safeIds(h, st)[1], call: safeCall(h, st) })
    }
    if (k === C.K_APPEND_STARTED) {
      safeArgs(h, st)
      return append(h, makeRow(h, st, 'started'))
    }
    if (k === C.K_APPEND_FINISHED || k === C.K_APPEND_FINISHED + 1 || k === C.K_APPEND_FINISHED + 2) {
      safeArgs(h, st)
      const status = k === C.K_APPEND_FINISHED ? 'finished' : k === C.K_APPEND_FINISHED + 1 ? 'error' : 'blocked'
      const reason = status === 'blocked' ? dispatchDetail(s).reason : undefined
      return append(h, makeRow(h, st, status, { reason }))
    }
    const ms = performance.now() - st.t0
    const r = st.result
    const [id, name] = safeIds(h, st)
    if (k === C.K_EMIT_FINISHED) return emit(h, { type: 'tool_execution_finished', sessionId: st.ctx.sessionId, runId: st.ctx.runId, toolName: name, result: r, metadata: { durationMs: ms, status: 'finished' } })
    if (k === C.K_EMIT_FINISHED + 1) return emit(h, { type: 'tool_execution_error', sessionId: st.ctx.sessionId, runId: st.ctx.runId, toolName: name, call: safeCall(h, st), error: r.error, metadata: { durationMs: ms, status: 'error' } })
    return emit(h, { type: 'tool_execution_blocked', sessionId: st.ctx.sessionId, runId: st.ctx.runId, toolCallId: id, name, toolName: name, reason: dispatchDetail(s).reason, error: r.error, metadata: { durationMs: ms, status: 'blocked' } })
  }

  // Answers the command `k` with the outcome of a host callback.
  function answerFor(h, st, s, k, kind, v) {
    if (kind === 3) return dispatchStep(s, C.A_ABORTED)
    if (kind === 1) {
      st.thrown = v
      return dispatchAnswer(s, C.A_THREW, undefined, undefined, codeOf(v))
    }
    if (v === STEPPED) return st.next
    try {
      switch (k) {
        case C.K_CALL_MIDDLEWARE: {
          if (v !== undefined && v !== null) st.call = v
          forgetArgumentsText(st.call?.arguments)
          st.safeArgs = st.safeCall = st.safeIds = undefined
          const [name, flags] = callFacts(st.call)
          st.name = name
          return dispatchAnswer(s, C.A_CALL, flags, undefined, name)
        }
        case C.K_LOOKUP:
          st.tool = v
          return dispatchStep(s, C.A_FOUND, v !== null && (typeof v === 'object' || typeof v === 'function') ? 1 : 0)
        case C.K_CHECK_TRUST:
        case C.K_CHECK_PERMISSION: {
          const key = k === C.K_CHECK_TRUST ? 'trusted' : 'allowed'
          if (typeof v === 'boolean') return dispatchStep(s, C.A_DECISION, v ? 1 : 0)
          if (v === null || typeof v !== 'object') return dispatchStep(s, C.A_DECISION, 0)
          let g = v[key]
          if (g === undefined && key !== 'allowed') g = v.allowed
          return dispatchAnswer(s, C.A_DECISION, g === true ? 1 : 0, undefined, str(v.reason))
        }
        case C.K_VALIDATE:
          if (v === undefined) {
            if (ownToolArgumentValidators.has(h.validate)) st.checked = [st.tool.parameters, st.call.arguments]
            // 1: the tool has no `effect` property (read after the hook ran), which also answers
            // the declaration when that comes next.
            return dispatchStep(s, C.A_VALID, hasEffect(st.tool) ? 0 : 1)
          }
          if (typeof v === 'string') return dispatchAnswer(s, C.A_INVALID_MESSAGE, undefined, undefined, v)
          if (v !== null && typeof v === 'object' && !Array.isArray(v) && typeof v.message === 'string') {
            st.thrown = v
            return dispatchStep(s, C.A_INVALID_INFO)
          }
          return dispatchStep(s, C.A_INVALID_OTHER, typeIndex(v))
        case C.K_EFFECT_BEGIN: {
          st.effectRecord = v?.record
          const outcome = v?.outcome
          if (outcome === 'existing') {
            const r = st.effectRecord
            return dispatchAnswer(s, C.A_EXISTING, status(r), r?.result !== null && typeof r?.result === 'object' ? 1 : 0)
          }
          const r = st.effectRecord
          if (outcome === 'acquired' && typeof r?.claimToken === 'string' && typeof r?.version === 'number') {
            return dispatchAnswer(s, C.A_ACQUIRED, r.version, undefined, r.claimToken)
          }
          return dispatchStep(s, C.A_MALFORMED)
        }
        case C.K_MARK_DISPATCHED:
        case C.K_EFFECT_COMPLETE: {
          // A built-in store's lean answer: the new version (`st.effectRecord` and the stored result
          // are taken by advanceComplete).
          if (typeof v === 'number') return dispatchAnswer(s, C.A_RECORD, v)
          const version = typeof v?.version === 'number' ? v.version : NaN
          st.effectRecord = v
          if (k === C.K_EFFECT_COMPLETE) useStored(st, v?.result)
          return dispatchAnswer(s, C.A_RECORD, version)
        }
        case C.K_EXECUTE:
          // A bare value (a number, a domain object…) or a result missing its id or name is made
          // a ToolResult of this call (lib/tool-result-shape.js); a complete one is kept as is.
          if (v === null || typeof v !== 'object' || typeof v.toolCallId !== 'string' || v.toolCallId === '' || typeof v.name !== 'string' || v.name === '') {
            v = toToolResult(v, st.call.id, st.name)
          }
          st.result = v
          return dispatchStep(s, C.A_RETURNED, v.error !== undefined && v.error !== null ? 1 : 0)
        case C.K_RESULT_MIDDLEWARE:
          if (v !== undefined && v !== null) st.result = v
          return dispatchStep(s, C.A_DONE)
        case C.K_EFFECT_GET:
          return dispatchAnswer(s, C.A_STORED, status(v), typeof v?.version === 'number' ? v.version : NaN, str(v?.claimToken))
        default:
          return dispatchStep(s, C.A_DONE)
      }
    } catch (e) {
      // A value whose read throws (a Proxy, a throwing getter) counts as the callback throwing.
      st.thrown = e
      return dispatchAnswer(s, C.A_THREW, undefined, undefined, codeOf(e))
    }
  }

  // The host callback of command `k`, or undefined when the command is performed here.
  function callbackFor(h, st, s, k) {
    switch (k) {
      case C.K_CALL_MIDDLEWARE:
      case C.K_RESULT_MIDDLEWARE: {
        const mw = h.middleware
        const run = typeof mw.runSync === 'function' ? mw.runSync : mw.run
        if (typeof run !== 'function') throw invalidOption(TypeError, 'middleware must be a MiddlewareRegistry with run(hook, value)')
        return k === C.K_CALL_MIDDLEWARE ? () => run.call(mw, 'tool_call', st.call) : () => run.call(mw, 'tool_result', st.result)
      }
      case C.K_LOOKUP: {
        const r = h.registry
        const get = r.get
        if (typeof get !== 'function') throw invalidOption(TypeError, 'dispatchToolCall: registry must have get(name)')
        return () => get.call(r, st.name)
      }
      case C.K_CHECK_IDENTITY:
        // The identity is read once, here, in JS (lib/effect-store-wire.js): the binding gets a handle.
        // With an effect store its snapshot serves the key and the claim.
        if (h.effectStore !== undefined) {
          return () => {
            st.next = native.dispatchIdentity(s, identityCheck(st.identity, h.ownership))
            st.effectRead = true
            return STEPPED
          }
        }
        return () => native.assertDispatchIdentity(identityCheck(st.identity, h.ownership))
      case C.K_CHECK_TRUST:
      case C.K_CHECK_PERMISSION: {
        const trust = k === C.K_CHECK_TRUST
        const policy = trust ? h.trust : h.permission
        const check = policy.check
        if (typeof check !== 'function') return null
        const req = trust
          ? { kind: 'tool', target: st.name, capability: 'execute', metadata: st.ctx.metadata }
          : { kind: 'tool', action: 'execute', target: st.name, metadata: st.ctx.metadata }
        return () => check.call(policy, req)
      }
      case C.K_VALIDATE:
        if (typeof h.validate !== 'function') throw invalidOption(TypeError, 'validate must be a function (tool, args, ctx)')
        return () => h.validate(st.tool, st.call.arguments, st.ctx)
      case C.K_BEFORE_EXECUTE:
        if (typeof h.beforeExecute !== 'function') throw invalidOption(TypeError, 'beforeExecute must be a function (call, tool, ctx)')
        return () => h.beforeExecute(st.call, st.tool, st.ctx)
      case C.K_EFFECT_BEGIN:
        return () => {
          // A built-in store reads the key once and hands back the claim for the transitions below.
          const f = h.effectStore.begin
          const ns = nativeStoreOf(f)
          if (ns === undefined) return storeCall(h, 'begin', st.effectKey, f)
          if (st.effectRead === undefined) return storeCall(h, 'begin', st.effectKey, f)
          // The claim makes markDispatched too when the host's markDispatched is this store's own.
          const v = native.claimDispatch(ns.handle, s, abortedSignal(st.effectKey.signal), nativeStoreOf(h.effectStore.markDispatched) === ns)
          if (typeof v !== 'number') return v // another claimant's record, answered below
          st.effectClaim = true
          st.next = v
          return STEPPED
        }
      // On a built-in store's claim the binding reads the claim token and version from the machine
      // (`advanceClaim(dispatch, …)`); other stores get them in the transition's input.
      case C.K_MARK_DISPATCHED:
        return () => {
          const f = h.effectStore.markDispatched
          const ns = nativeStoreOf(f)
          if (ns !== undefined && st.effectClaim !== undefined) {
            st.next = native.advanceClaim(ns.handle, s, false, undefined, false, abortedSignal(st.effectKey.signal))
            return STEPPED
          }
          const d = dispatchDetail(s)
          if (ns === undefined) return storeCall(h, 'markDispatched', transition(st, d), f)
          return ns.store.advance(transition(st, d), false, undefined, false)
        }
      case C.K_EFFECT_COMPLETE:
        return () => {
          const f = h.effectStore.complete
          const ns = nativeStoreOf(f)
          if (ns !== undefined) return advanceComplete(ns, st, s)
          return storeCall(h, 'complete', transition(st, dispatchDetail(s), { result: st.result }), f)
        }
      case C.K_EXECUTE: {
        const tool = st.tool
        const execute = tool.execute
        if (typeof execute !== 'function') return null
        const tctx = toolContext(h, st)
        return () => execute.call(tool, st.call.arguments, tctx)
      }
      default:
        return undefined
    }
  }

  async function loop(h, st, s, k) {
    // The machine forgets the dispatch itself when it resolves or rethrows (no detail is read
    // after them); any other way out of the loop ends it here.
    let over = false
    try {
    for (;;) {
      if (k >= C.K_GATED) {
        // The pre-execute signal check, on the command it gates: an aborted signal answers for it.
        k -= C.K_GATED
        const sig = st.ctx.signal
        if (sig !== null && typeof sig === 'object' && sig.aborted === true) {
          k = dispatchStep(s, C.A_SIGNAL_ABORTED)
          continue
        }
      }
      switch (k) {
        case C.K_RESOLVE:
          over = true
          return st.result
        case C.K_REJECT_THROWN:
          over = true
          throw st.thrown
        case C.K_REJECT_GUARDRAIL: {
          const d = dispatchDetail(s)
          const e = new errors.GuardrailError(d.message, { record: st.guard?.record ?? st.lastRecord })
          e.code = d.code
          throw e
        }
        case C.K_SET_ERROR:
          st.result = { toolCallId: safeIds(h, st)[0], name: safeIds(h, st)[1], error: buildError(h, st, dispatchDetail(s)) }
          k = dispatchStep(s, C.A_DONE)
          continue
        case C.K_EFFECT_DECLARATION: {
          try {
            const tool = st.tool
            const effect = tool.effect
            if (effect === undefined || effect === null) {
              k = dispatchStep(s, C.A_DECLARATION)
            } else if (typeof effect === 'function') {
              // A classifier: called, its answer validated and handed to the machine in one crossing.
              k = native.dispatchDeclaration(s, tool, effect, st.call.arguments, st.ctx)
            } else {
              // A declaration, read here once and in the binding's order (`resolve_declaration` in
              // crates/node/src/effects/identity.rs): a value that is no object, a promise or a
              // thenable is invalid and nothing more of it is read; then `kind`, then `idempotency`.
              let kind
              let idempotency
              if (typeof effect === 'object' && !isPromise(effect) && typeof effect.then !== 'function') {
                kind = effect.kind
                idempotency = effect.idempotency
              }
              k = native.dispatchDeclared(s, typeof kind === 'string' ? kind : undefined, typeof idempotency === 'string' ? idempotency : undefined)
            }
          } catch (e) {
            st.thrown = e
            k = dispatchAnswer(s, C.A_THREW, undefined, undefined, codeOf(e))
          }
          continue
        }
        case C.K_EFFECT_KEY: {
          try {
            const id = st.identity
            const ownership = {}
            if (id.tenantId != null) ownership.tenantId = id.tenantId
            if (id.accountId != null) ownership.accountId = id.accountId
            if (id.userId != null) ownership.userId = id.userId
            const key = { identity: id, ownership, sessionId: text(st.ctx.sessionId), runId: text(st.ctx.runId), toolCallId: text(st.call.id), toolName: st.name }
            if (st.effectRead !== undefined) {
              // The snapshot's key: the key then the 64 hex digits of the arguments hash.
              const kh = native.dispatchEffectKey(s, key.sessionId, key.runId, key.toolCallId, st.call.arguments)
              key.argumentsHash = kh.slice(-64)
              key.key = kh.slice(0, -64)
            } else {
              key.argumentsHash = native.toolEffectArgumentsHash(st.call.arguments)
              key.key = native.deriveToolEffectKey(key)
            }
            const derived = key.key
            key.signal = st.ctx.signal
            st.effectKey = key
            st.idempotencyKey = derived
            k = dispatchStep(s, C.A_DONE)
          } catch (e) {
            st.thrown = e
            k = dispatchAnswer(s, C.A_THREW, undefined, undefined, codeOf(e))
          }
          continue
        }
        case C.K_REPLAY:
          st.result = st.effectRecord.result
          k = dispatchStep(s, C.A_DONE)
          continue
        case C.K_REDACT_RESULT:
          st.result = redact(h, st.result)
          k = dispatchStep(s, C.A_DONE)
          continue
        case C.K_START_GUARDRAIL:
          guardStart(h, st, dispatchDetail(s))
          k = dispatchStep(s, C.A_GUARD_STARTED)
          continue
        case C.K_AWAIT_GUARDRAIL: {
          const d = dispatchDetail(s)
          const slot = st.guard.slots[d.index]
          st.guardIndex = d.index
          if (slot.state === 'pending') {
            const [kind, v] = await settle(slot.value, st.ctx.signal)
            slot.state = kind === 0 ? 'value' : 'threw'
            slot.value = v
          }
          k = guardAnswer(s, slot)
          continue
        }
        case C.K_GUARDRAIL_RECORD:
          guardRecord(h, st, dispatchDetail(s))
          k = dispatchStep(s, C.A_DONE)
          continue
        case C.K_ABORT_GUARDRAILS:
          try {
            st.guard.controller.abort()
          } catch {}
          st.lastRecord = st.guard.record
          k = dispatchStep(s, C.A_DONE)
          continue
        // An emit or a ledger append that never settles holds its call only until the call is
        // aborted: then the call goes on to its terminal row (the hook's promise is left to itself).
        case C.K_EMIT_STARTED:
        case C.K_APPEND_STARTED:
        case C.K_EMIT_FINISHED:
        case C.K_EMIT_FINISHED + 1:
        case C.K_EMIT_FINISHED + 2:
        case C.K_APPEND_FINISHED:
        case C.K_APPEND_FINISHED + 1:
        case C.K_APPEND_FINISHED + 2: {
          const p = report(h, st, s, k)
          if (p) await settle(p, st.ctx.signal)
          k = dispatchStep(s, C.A_DONE)
          continue
        }
        case C.K_MARK_UNKNOWN:
        case C.K_RELEASE_CLAIM:
        case C.K_RELEASE_RETRYABLE: {
          const d = dispatchDetail(s)
          const status = k === C.K_RELEASE_RETRYABLE ? 'failed_retryable' : 'failed_terminal'
          const p = k === C.K_MARK_UNKNOWN
            ? settleCall(h, 'markUnknown', transition(st, d, { failure: { code: 'ERR_PRISM_TOOL_EFFECT_UNKNOWN' } }))
            : settleCall(h, 'fail', transition(st, d, { status, failure: { code: 'ERR_PRISM_TOOL_EFFECT_PRE_DISPATCH' } }))
          if (p) await settle(p, undefined)
          k = dispatchStep(s, C.A_DONE)
          continue
        }
        case C.K_EFFECT_GET: {
          let r = [0, undefined]
          try {
            const f = h.effectStore.get
            if (typeof f === 'function') {
              r = perform(() => callStoreMethod(h.effectStore, f, st.effectKey))
              if (r[0] === 2) r = await settle(r[1], undefined)
            }
          } catch {}
          k = r[0] === 0 ? answerFor(h, st, s, k, 0, r[1]) : dispatchStep(s, C.A_DONE)
          continue
        }
      }
      // A host callback.
      const cb = callbackFor(h, st, s, k)
      if (cb === null) {
        k = dispatchStep(s, k === C.K_EXECUTE ? C.A_NO_EXECUTE : C.A_MISSING)
        continue
      }
      let [kind, v] = perform(cb)
      if (kind === 2) {
        // settle() inlined: one async frame and one promise hop fewer on every call whose tool or
        // hook returns a promise.
        try {
          v = await raceAbort(v, st.ctx.signal)
          kind = v === ABORTED ? 3 : 0
        } catch (e) {
          kind = 1
          v = e
        }
      }
      k = answerFor(h, st, s, k, kind, v)
    }
    } finally {
      if (!over) dispatchEnd(s)
    }
  }

  // `in` runs no getter; a proxy's throwing `has` trap leaves the declaration to its own step.
  function hasEffect(tool) {
    try {
      return 'effect' in tool
    } catch {
      return true
    }
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
    const st = {
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
      startedAt: undefined,
    }
    if (h.ledger !== undefined) st.startedAt = isoNow()
    // A registry made by createToolRegistry is looked up here, its answer handed over with the
    // beginning (the machine's first command would be the lookup): one crossing fewer a call.
    let found = 0
    if (h.lookupFirst && (callFlags & (C.C_NAME_NOT_STRING | C.C_PROVIDER_HOSTED)) === 0) {
      const get = plainLookup(h.registry)
      if (get !== undefined) {
        const tool = get(name)
        st.tool = tool
        // A tool with no `effect` at all also answers the declaration (when it comes next).
        found = tool !== null && (typeof tool === 'object' || typeof tool === 'function') ? (hasEffect(tool) ? 2 : 3) : 1
      }
    }
    const begun = dispatchBegin(h.plan, flags, h.input ? h.input.length : 0, h.output ? h.output.length : 0, h.concurrency, name, callFlags, found)
    const s = Math.floor(begun / C.ID_STRIDE)
    return loop(h, st, s, begun % C.ID_STRIDE)
  }

  function dispatchToolCall(options) {
    try {
      const h = compile(options, 'dispatchToolCall')
      return start(h, options.call, options.context)
    } catch (e) {
      return Promise.reject(e)
    }
  }

  function createToolDispatcher(options) {
    const h = compile(options, 'createToolDispatcher')
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

  return { dispatchToolCall, createToolDispatcher, createSecretRedactor }
}
