'use strict'
// The two Error subclasses of the effects module (the language requires these in JS; the native addon
// receives the classes once so that errors raised in Rust are instances of them), and the built-in
// stores' JS face. No decisions live here.
const native = require('../binding.js')

/** A refusal of the tool-effect contract. `code` is one of the five `ERR_PRISM_TOOL_EFFECT_*` codes. */
class ToolEffectError extends Error {
  constructor(code, message) {
    super(message)
    this.code = code
    this.name = 'ToolEffectError'
  }
}

/** An identity that is not active or does not own what it claims. `code` is `ERR_PRISM_IDENTITY`. */
class IdentityError extends Error {
  constructor(message, reason) {
    super(message)
    this.code = 'ERR_PRISM_IDENTITY'
    this.reason = reason
    this.name = 'IdentityError'
  }
}

native.__registerToolEffectErrors(ToolEffectError, IdentityError)

const STORE_METHODS = ['get', 'begin', 'markDispatched', 'complete', 'fail', 'markUnknown', 'resolveUnknown', 'cleanup']
// Each method of a built-in store → [native store, native method], for dispatch to call directly.
const directMethods = new WeakMap()
// Each method of a built-in store → its native store.
const nativeStores = new WeakMap()

/**
 * A built-in store with `@arnilo/prism`'s ToolEffectStore contract: every method returns a Promise (a
 * refusal is a rejection) and is an own property, so `{ ...store, begin() {…} }` keeps the others.
 * Dispatch recognises these methods and calls the native ones directly, without a promise per step.
 */
function storeFace(nativeStore) {
  const store = {}
  for (const m of STORE_METHODS) {
    const f = nativeStore[m]
    const method = {
      [m](input) {
        try {
          return Promise.resolve(f.call(nativeStore, input))
        } catch (e) {
          return Promise.reject(e)
        }
      },
    }[m]
    directMethods.set(method, [nativeStore, f])
    nativeStores.set(method, nativeStore)
    store[m] = method
  }
  /** Closes the SQLite file (later calls reject); a no-op for the memory store. */
  store.close = () => nativeStore.close()
  return store
}

/** Calls `store[method](arg)`: a built-in method synchronously through its native store. */
function callStoreMethod(store, f, arg) {
  const d = directMethods.get(f)
  return d === undefined ? f.call(store, arg) : d[1].call(d[0], arg)
}

/** The native store behind `f` when `f` is a built-in store's method (dispatch's lean calls). */
const nativeStoreOf = (f) => nativeStores.get(f)

const createMemoryToolEffectStore = (options) => storeFace(native.createMemoryToolEffectStore(options))
const createSqliteToolEffectStore = (path, options) => storeFace(native.createSqliteToolEffectStore(path, options))

module.exports = { ToolEffectError, IdentityError, createMemoryToolEffectStore, createSqliteToolEffectStore, callStoreMethod, nativeStoreOf }
