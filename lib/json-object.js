'use strict'
// Whether an object is plain JSON data by its shape, from this realm or another. Objects made in a
// `node:vm` context (Jest, vitest's vmThreads/vmForks pools, a sandbox) have that context's
// `Object.prototype`, which is not this realm's: comparing prototypes by identity would refuse them.

const { isProxy } = require('node:util').types

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

// The property scan of a walk over one arguments value: a walk over the very value a full walk
// last passed skips it (a host's constant arguments pay it once), any other walk scans. One strong
// reference, not a WeakSet: an ephemeron per fresh object cost about a microsecond of GC each.
let lastScannedRoot
let scanning = true

/**
 * Starts a walk over `root` (what decides whether its containers' properties are scanned). `scan`
 * false: no scan at all, for a value judged by its JSON text alone (a schema).
 */
function walkFrom(root, scan = true) {
  scanning = scan && root !== lastScannedRoot
}

/** The walk over `root` found it plain: a later walk over the same value need not scan again. */
function walkPassed(root) {
  if (scanning) lastScannedRoot = root
}

/**
 * Why an object or array is not plain JSON data, or undefined when it is: the one answer every
 * reader of host arguments gives (validation's walks and its JSON text), so that what validation
 * judges is what `execute` receives. Refused: a Proxy (its traps can answer the validator one
 * thing and the tool another), a `toJSON` method, own or inherited (JSON text would hold what it
 * returns, the tool gets the object), a class instance, and an accessor or non-enumerable own
 * property of an object (a getter can answer differently on each read; JSON text omits a
 * non-enumerable property the tool can still read). No trap of the value runs, and no getter but
 * one named `toJSON`, which is read to see whether it is a method, as JSON text reads it.
 *
 * The property scan is skipped when the same arguments value is walked again after a walk that
 * passed it: a property of it redefined as an accessor in between is not noticed. An array's
 * elements are read as JSON text reads them (an accessor on an index is not looked for).
 */
function plainContainerProblem(v) {
  if (isProxy(v)) return 'a Proxy'
  const array = Array.isArray(v)
  if (!array && !isPlainObjectProto(v)) return instanceKind(v)
  if (typeof v.toJSON === 'function') return toJsonKind(array)
  if (array || !scanning) return undefined
  const names = Object.getOwnPropertyNames(v)
  for (let i = 0; i < names.length; i++) {
    const name = names[i]
    const d = Object.getOwnPropertyDescriptor(v, name)
    if (d.get !== undefined || d.set !== undefined) return `an object with an accessor property (${JSON.stringify(name)})`
    if (!d.enumerable) return `an object with a non-enumerable property (${JSON.stringify(name)})`
  }
  return undefined
}

const toJsonKind = (array) => `${array ? 'an array' : 'an object'} with a toJSON method`

function instanceKind(v) {
  const proto = Object.getPrototypeOf(v)
  const ctor = Object.getOwnPropertyDescriptor(proto, 'constructor')?.value
  const name = typeof ctor === 'function' ? Object.getOwnPropertyDescriptor(ctor, 'name')?.value : undefined
  return typeof name === 'string' && name !== '' ? `an instance of ${name}` : 'an object with a custom prototype'
}

module.exports = { isObjectPrototype, isPlainObjectProto, plainContainerProblem, walkFrom, walkPassed }
