'use strict'
// The built-in stores' JS face: the memory store's methods call its native store directly (dispatch
// too, without a promise per step); the SQLite store's operations run on the thread pool through
// `poolStoreFace`. The error classes live in effect-errors.js. No decisions live here.
const native = require('../binding.js')

const { ToolEffectError, IdentityError } = require('./effect-errors.js')
const { poolStoreFace } = require('./effect-store-wire.js')

const STORE_METHODS = ['get', 'begin', 'markDispatched', 'complete', 'fail', 'markUnknown', 'resolveUnknown', 'cleanup']
// Each method of a built-in store → [native store, native method], for dispatch to call directly.
const directMethods = new WeakMap()
// Each method of a built-in memory store → `{ store, handle }`: its native store (for its own
// methods) and the handle dispatch's claim and transitions take (free functions: a class method
// pays an unwrap at every call).
const nativeStores = new WeakMap()

/**
 * A built-in store with `@arnilo/prism`'s ToolEffectStore contract: every method returns a Promise (a
 * refusal is a rejection) and is an own property, so `{ ...store, begin() {…} }` keeps the others.
 * Dispatch recognises these methods and calls the native ones directly, without a promise per step.
 */
function storeFace(nativeStore) {
  const store = {}
  const builtIn = { store: nativeStore, handle: native.memoryStoreHandle(nativeStore) }
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
    nativeStores.set(method, builtIn)
    store[m] = method
  }
  /** A no-op: the memory store holds no file or connection. */
  store.close = () => nativeStore.close()
  return store
}

/** Calls `store[method](arg)`: a built-in method synchronously through its native store. */
function callStoreMethod(store, f, arg) {
  const d = directMethods.get(f)
  return d === undefined ? f.call(store, arg) : d[1].call(d[0], arg)
}

/** `{ store, handle }` of the memory store behind `f` when `f` is a built-in store's method (dispatch's lean calls). */
const nativeStoreOf = (f) => nativeStores.get(f)

const createMemoryToolEffectStore = (options) => storeFace(native.createMemoryToolEffectStore(options))
/**
 * `createSqliteToolEffectStore(path, { now?, busyTimeoutMs?, synchronous?, maxResultBytes? })`: the file
 * is opened here, once; every operation is a transaction run on libuv's thread pool, so a commit's
 * fsync never holds the JS thread. `close()` closes the file (later calls reject).
 */
function createSqliteToolEffectStore(path, options) {
  const handle = native.createSqliteToolEffectStore(path, options)
  const now = typeof options === 'object' && options !== null && typeof options.now === 'function' ? options.now : undefined
  return poolStoreFace(handle, now)
}

module.exports = { ToolEffectError, IdentityError, createMemoryToolEffectStore, createSqliteToolEffectStore, callStoreMethod, nativeStoreOf }
