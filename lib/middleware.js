'use strict'
// The middleware chain. It lives in JS, not Rust: every step calls host JS with a fresh `next` closure
// and compares identities of JS values, so driving it from Rust would pay several boundary crossings per
// middleware for no decision Rust could make better. bench/RESULTS.md ("Middleware") has the figures.
// What an `extension_error` carries is `errorToErrorInfo` of the thrown value (decided in Rust).

const native = require('../binding.js')

const CODE_NEXT_TWICE = 'ERR_PRISM_MIDDLEWARE_NEXT_TWICE'
const CODE_CONFLICT = 'ERR_PRISM_MIDDLEWARE_CONFLICT'
const CODE_LATE_NEXT = 'ERR_PRISM_MIDDLEWARE_LATE_NEXT'
const CODE_INVALID_ARG = 'ERR_INVALID_ARG_TYPE'

const { codedError } = require('./errors.js')

function describeType(value) {
  return value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value
}

function checkHook(hook) {
  if (typeof hook !== 'string') {
    throw codedError(TypeError, `Middleware hook must be a string, got ${describeType(hook)}`, CODE_INVALID_ARG)
  }
}

function isThenable(value) {
  return value !== null && (typeof value === 'object' || typeof value === 'function') && typeof value.then === 'function'
}

function secretList(secrets) {
  if (secrets == null) return []
  const out = []
  for (const secret of secrets) if (typeof secret === 'string' && secret !== '') out.push(secret)
  return out
}

/** The `ErrorInfo` of any thrown value, redacted: the package's one builder, `errorToErrorInfo`. */
function errorInfo(error, secrets) {
  return native.errorToErrorInfo(error, secretList(secrets))
}

function extensionError(extension, error, secrets) {
  return { type: 'extension_error', extension, error: errorInfo(error, secrets) }
}

/** One call of one middleware: its `next`, what it committed, and whether it misused `next`. */
class Step {
  constructor(registry, hook, index, input) {
    this.registry = registry
    this.hook = hook
    this.index = index
    this.input = input
    this.calls = 0
    this.committed = undefined
    this.promise = undefined
    this.twice = undefined
    this.settled = false
    this.next = (value) => this.call(value)
  }

  call(value) {
    if (this.settled) return this.late(value)
    if (++this.calls > 1) {
      const error = codedError(
        Error,
        `Middleware hook "${this.hook}" #${this.index}: next() called more than once`,
        CODE_NEXT_TWICE,
      )
      if (this.twice === undefined) this.twice = error
      throw error
    }
    this.committed = value === undefined ? this.input : value
    this.promise = Promise.resolve(this.committed)
    return this.promise
  }

  late(value) {
    // The chain has moved on; there is no run left to fail, so only report it.
    const error = codedError(
      Error,
      `Middleware hook "${this.hook}" #${this.index}: next() called after the middleware settled; the value is ignored`,
      CODE_LATE_NEXT,
    )
    try {
      const pending = this.registry.report(this.hook, error)
      if (pending !== undefined) Promise.resolve(pending).catch(() => {})
    } catch {
      // Nothing to reject: a failing onError is dropped here.
    }
    return Promise.resolve(value === undefined ? this.input : value)
  }
}

/**
 * The options of a middleware registry or an extension kernel (`what` names it in errors): an object or
 * undefined, `errorPolicy` 'event' (default) or 'throw', `onError` a function when given.
 */
function checkedErrorOptions(options, what) {
  if (options !== undefined && (options === null || typeof options !== 'object')) {
    throw codedError(TypeError, `${what} options must be an object, got ${describeType(options)}`, CODE_INVALID_ARG)
  }
  const opts = options ?? {}
  const errorPolicy = opts.errorPolicy ?? 'event'
  if (errorPolicy !== 'event' && errorPolicy !== 'throw') {
    throw codedError(TypeError, 'errorPolicy must be "event" or "throw"', CODE_INVALID_ARG)
  }
  const onError = opts.onError
  if (onError !== undefined && typeof onError !== 'function') {
    throw codedError(TypeError, `onError must be a function, got ${describeType(onError)}`, CODE_INVALID_ARG)
  }
  return { opts, errorPolicy, onError }
}

function createMiddlewareRegistry(options) {
  const { opts, errorPolicy, onError } = checkedErrorOptions(options, 'Middleware registry')
  const secrets = opts.secrets
  if (secrets != null && (typeof secrets === 'string' || typeof secrets[Symbol.iterator] !== 'function')) {
    throw codedError(TypeError, 'secrets must be an array of strings', CODE_INVALID_ARG)
  }
  const throws = errorPolicy === 'throw'
  // hook -> array of { fn }. Arrays are replaced, never mutated, so a run keeps the list it started with.
  const byHook = new Map()

  const internal = {
    /** Calls onError with an extension_error; returns its promise when it gave one. A throw propagates. */
    report(hook, error) {
      if (onError === undefined) return undefined
      const result = onError(extensionError(`middleware:${hook}`, error, secrets))
      return isThenable(result) ? result : undefined
    },
  }

  // The outcome of one settled step; `state.pending` holds an onError promise to wait for.
  function afterStep(state, step, ok, outcome) {
    step.settled = true
    let failure
    if (!ok) failure = outcome
    else if (step.twice !== undefined) failure = step.twice
    if (failure !== undefined || !ok) {
      if (throws) throw failure
      state.pending = internal.report(state.hook, failure)
      return step.input
    }
    if (step.calls === 0) return outcome === undefined ? step.input : outcome
    const committed = step.committed
    if (outcome !== undefined && outcome !== step.promise && outcome !== committed) {
      state.pending = internal.report(
        state.hook,
        codedError(
          Error,
          `Middleware hook "${state.hook}" #${step.index}: called next(value) and returned a different value; the next() value wins, the return is discarded`,
          CODE_CONFLICT,
        ),
      )
    }
    return committed
  }

  function waitReport(state, index, value) {
    const pending = state.pending
    state.pending = undefined
    return Promise.resolve(pending).then(() => drive(state, index + 1, value))
  }

  function suspend(state, index, step, thenable) {
    return Promise.resolve(thenable).then(
      (result) => {
        const value = afterStep(state, step, true, result)
        return state.pending !== undefined ? waitReport(state, index, value) : drive(state, index + 1, value)
      },
      (error) => {
        const value = afterStep(state, step, false, error)
        return state.pending !== undefined ? waitReport(state, index, value) : drive(state, index + 1, value)
      },
    )
  }

  // Runs middlewares from `index` on; returns the value, or a promise once a step answered with one.
  function drive(state, index, value) {
    const list = state.list
    for (let i = index; i < list.length; i++) {
      const step = new Step(internal, state.hook, i, value)
      let result
      try {
        result = list[i].fn(value, step.next)
        if (result !== undefined && result !== step.promise && isThenable(result)) return suspend(state, i, step, result)
      } catch (error) {
        value = afterStep(state, step, false, error)
        if (state.pending !== undefined) return waitReport(state, i, value)
        continue
      }
      value = afterStep(state, step, true, result)
      if (state.pending !== undefined) return waitReport(state, i, value)
    }
    return value
  }

  function runSync(hook, value) {
    checkHook(hook)
    const list = byHook.get(hook)
    if (list === undefined) return value
    return drive({ hook, list, pending: undefined }, 0, value)
  }

  const registry = {
    use(hook, middleware) {
      checkHook(hook)
      if (typeof middleware !== 'function') {
        throw codedError(
          TypeError,
          `Middleware for hook "${hook}" must be a function, got ${describeType(middleware)}`,
          CODE_INVALID_ARG,
        )
      }
      const entry = { fn: middleware }
      byHook.set(hook, [...(byHook.get(hook) ?? []), entry])
      let active = true
      return function unsubscribe() {
        if (!active) return
        active = false
        const current = byHook.get(hook)
        if (current === undefined) return
        const rest = current.filter((item) => item !== entry)
        if (rest.length === 0) byHook.delete(hook)
        else byHook.set(hook, rest)
      }
    },
    run(hook, value) {
      try {
        return Promise.resolve(runSync(hook, value))
      } catch (error) {
        return Promise.reject(error)
      }
    },
    list(hook) {
      checkHook(hook)
      const list = byHook.get(hook)
      return list === undefined ? [] : list.map((entry) => entry.fn)
    },
  }
  // Internal fast path for dispatch: the value itself when every middleware answered synchronously.
  Object.defineProperty(registry, 'runSync', { value: runSync, enumerable: false, writable: false, configurable: false })
  return registry
}

module.exports = { createMiddlewareRegistry, checkedErrorOptions, errorInfo, extensionError, isThenable, codedError, describeType }
