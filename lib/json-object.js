'use strict'
// Whether an object is plain JSON data by its shape, from this realm or another. Objects made in a
// `node:vm` context (Jest, vitest's vmThreads/vmForks pools, a sandbox) have that context's
// `Object.prototype`, which is not this realm's: comparing prototypes by identity would refuse them.

// Other realms' Object.prototype objects already recognised (weakly held: a context can be collected).
const foreignObjectPrototypes = new WeakSet()

/**
 * Whether `proto` is an `Object.prototype`: this realm's, or another realm's recognised by shape — no
 * prototype of its own, and an own `constructor` data property holding a function named `Object` whose
 * own `prototype` is `proto`. Reads own data properties only, so no getter of the value runs.
 */
function isObjectPrototype(proto) {
  if (proto === Object.prototype) return true
  if (proto === null || typeof proto !== 'object') return false
  if (foreignObjectPrototypes.has(proto)) return true
  if (Object.getPrototypeOf(proto) !== null) return false
  const ctor = Object.getOwnPropertyDescriptor(proto, 'constructor')
  if (ctor === undefined || typeof ctor.value !== 'function') return false
  const back = Object.getOwnPropertyDescriptor(ctor.value, 'prototype')
  const name = Object.getOwnPropertyDescriptor(ctor.value, 'name')
  if (back === undefined || back.value !== proto || name === undefined || name.value !== 'Object') return false
  foreignObjectPrototypes.add(proto)
  return true
}

/** Whether a non-null object (not an array) is plain: its prototype is null or an Object.prototype. */
function isPlainObjectProto(value) {
  const proto = Object.getPrototypeOf(value)
  return proto === null || isObjectPrototype(proto)
}

module.exports = { isObjectPrototype, isPlainObjectProto }
