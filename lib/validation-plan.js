'use strict'
// Acceptance of plainly valid argument objects without serializing them. Rust restates a warm
// schema, when it only uses plain comparisons, as a plan (crates/core/src/validate/plan.rs); this file
// turns the plan into nodes (no eval) that one walk checks against the live object, answering `true`
// only when the object is certainly valid: plain JSON data, inside every argument bound, matching the
// plan.
// Anything else answers `false`, and the caller validates the JSON text in Rust as before, which
// decides and words every refusal. A `true` here must never contradict Rust's verdict on the
// same value's JSON text; __test__/validation-plan.test.ts checks that differentially.
const { plainContainerProblem, walkFrom, walkPassed } = require('./json-object.js')

const T_NULL = 1
const T_BOOLEAN = 2
const T_INTEGER = 4
const T_NUMBER = 8
const T_STRING = 16
const T_ARRAY = 32
const T_OBJECT = 64

// Must match bounds::FORBIDDEN_KEYS and bounds::NON_JSON_TAG.
const REFUSED_KEYS = new Set(['__proto__', 'prototype', 'constructor', '\u0000prism:nonjson'])

/** Unicode scalar values in a well-formed string (what `minLength`/`maxLength` count). */
function codePoints(s) {
  let n = s.length
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c >= 0xd800 && c <= 0xdbff) n--
  }
  return n
}

/** The type bit of a plain JSON value (an integer-valued number is `integer`, which `number` admits too). */
function typeBit(v) {
  switch (typeof v) {
    case 'string':
      return T_STRING
    case 'number':
      return Number.isInteger(v) ? T_INTEGER : T_NUMBER
    case 'boolean':
      return T_BOOLEAN
    case 'object':
      return v === null ? T_NULL : Array.isArray(v) ? T_ARRAY : T_OBJECT
    default:
      return 0 // not JSON data: no branch accepts it either
  }
}

// A plan node made ready to check: one class for every node, so the walk below reads the same
// fields of the same shape whatever the schema (V8's feedback at its call sites does not depend on
// which plans were checked before).
class PlanNode {
  constructor() {
    this.any = false // no constraints: any plain JSON value inside the bounds
    this.types = 0
    this.values = null // the enum/const values, a Set
    this.props = null // name -> { node, required }: the object's declared properties
    this.required = 0
    this.requiredNames = null
    this.other = null // the node of an undeclared key; null: no other key is admitted
    this.items = null
    this.minItems = 0
    this.maxItems = Infinity
    this.minLength = 0
    this.maxLength = Infinity
    this.min = -Infinity
    this.max = Infinity
    this.emin = -Infinity
    this.emax = Infinity
    this.all = null
    this.anyOf = null
    this.one = null
    // The last key list an object of this node had, and the node each key resolved to: objects of
    // one shape (an array of records) then skip the per-key lookups.
    this.shapeKeys = null
    this.shapeNodes = null
  }
}

// The bounds of one plan, as Rust resolved them.
class PlanLimits {
  constructor(maxDepth, maxProperties, maxStringLength, maxArrayLength) {
    // Rust refuses a container at depth >= maxDepth (root 0); stay one level clear of it.
    this.depthLimit = maxDepth - 1
    this.maxProperties = maxProperties
    this.maxStringLength = maxStringLength
    this.maxArrayLength = maxArrayLength
  }
}

const plainString = (s, lim) => s.length <= lim.maxStringLength && s.isWellFormed()
const admits = (n, bit) => n.types === 0 || (n.types & bit) !== 0

// Any plain JSON value inside the bounds (`n` is a node with no constraints, its own `other`).
function anyValue(n, v, depth, lim) {
  // typeof compared with a literal, not switched on: V8 turns each test into a type check where a
  // switch calls the typeof builtin and compares its strings.
  if (typeof v === 'string') return plainString(v, lim)
  if (typeof v === 'number') return Number.isFinite(v)
  if (typeof v === 'boolean') return true
  if (typeof v !== 'object') return false
  if (v === null) return true
  if (depth >= lim.depthLimit) return false
  if (Array.isArray(v)) {
    if (v.length > lim.maxArrayLength || plainContainerProblem(v) !== undefined) return false
    for (let i = 0; i < v.length; i++) if (!anyValue(n, v[i], depth + 1, lim)) return false
    return true
  }
  return members(n, v, depth, lim)
}

/** Whether `v` is certainly valid against node `n`. */
function check(n, v, depth, lim) {
  if (n.any) return anyValue(n, v, depth, lim)
  if (!checkOwn(n, v, depth, lim)) return false
  return n.all === null && n.anyOf === null && n.one === null ? true : checkBranches(n, v, depth, lim)
}

function checkOwn(n, v, depth, lim) {
  if (n.values !== null && !n.values.has(v)) return false
  if (typeof v === 'string') {
    if (!admits(n, T_STRING) || !plainString(v, lim)) return false
    if (v.length < n.minLength) return false
    if (v.length > n.maxLength || v.length < 2 * n.minLength) {
      const count = codePoints(v)
      return count >= n.minLength && count <= n.maxLength
    }
    return true
  }
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) return false
    if (!(admits(n, T_NUMBER) || (admits(n, T_INTEGER) && Number.isInteger(v)))) return false
    return v >= n.min && v <= n.max && v > n.emin && v < n.emax
  }
  if (typeof v === 'boolean') return admits(n, T_BOOLEAN)
  if (typeof v !== 'object') return false
  if (v === null) return admits(n, T_NULL)
  if (depth >= lim.depthLimit) return false
  if (Array.isArray(v)) {
    if (!admits(n, T_ARRAY)) return false
    const len = v.length
    if (len > lim.maxArrayLength || len < n.minItems || len > n.maxItems || plainContainerProblem(v) !== undefined) return false
    const items = n.items
    for (let i = 0; i < len; i++) if (!check(items, v[i], depth + 1, lim)) return false
    return true
  }
  if (!admits(n, T_OBJECT)) return false
  return members(n, v, depth, lim)
}

function checkBranches(n, v, depth, lim) {
  const all = n.all
  if (all !== null) for (let i = 0; i < all.length; i++) if (!check(all[i], v, depth, lim)) return false
  const anyOf = n.anyOf
  if (anyOf !== null) {
    let some = false
    for (let i = 0; i < anyOf.length && !some; i++) some = check(anyOf[i], v, depth, lim)
    if (!some) return false
  }
  const one = n.one
  if (one !== null) {
    // Exactly one branch valid: one accepts and every other one certainly refuses.
    let accepted = 0
    for (let i = 0; i < one.length; i++) {
      if (check(one[i], v, depth, lim)) accepted++
      else if (!refuses(one[i], v)) return false
    }
    if (accepted !== 1) return false
  }
  return true
}

// The members of an object of node `n`: each own enumerable key (what JSON.stringify writes) is
// refused, or checked by its property's node, else by `n.other` (null: no other key admitted);
// every required key must be among them.
function members(n, v, depth, lim) {
  if (plainContainerProblem(v) !== undefined) return false
  // An object of the last shape seen: `for…in` reads its keys in Object.keys' order without
  // allocating a key list, and each value as its key comes (a read from the enumeration's own
  // cache, where a read by a key from the list is a megamorphic lookup). A value its key's node
  // refuses answers false at once; a key out of the shape's order (an inherited enumerable key,
  // only on a polluted prototype, included) sends the object to the full path below.
  const shapeKeys = n.shapeKeys
  if (shapeKeys !== null) {
    let i = 0
    let same = true
    for (const k in v) {
      if (i >= shapeKeys.length || k !== shapeKeys[i]) {
        same = false
        break
      }
      i++
    }
    if (same && i === shapeKeys.length) {
      const values = Object.values(v)
      const shapeNodes = n.shapeNodes
      for (let j = 0; j < i; j++) {
        const x = values[j]
        if (x === undefined || !check(shapeNodes[j], x, depth + 1, lim)) return false // JSON.stringify drops undefined
      }
      return true
    }
  }
  const keys = Object.keys(v)
  const count = keys.length
  if (count > lim.maxProperties) return false
  const nodes = resolve(n, keys, lim)
  if (nodes === null) return false
  n.shapeKeys = keys
  n.shapeNodes = nodes
  for (let i = 0; i < count; i++) {
    const x = v[keys[i]]
    if (x === undefined || !check(nodes[i], x, depth + 1, lim)) return false // JSON.stringify drops undefined
  }
  return true
}

// The node each key of an object of node `n` is checked by; null when a key is refused or a
// required one is missing.
function resolve(n, keys, lim) {
  const nodes = new Array(keys.length)
  let seen = 0
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]
    if (REFUSED_KEYS.has(k) || !plainString(k, lim)) return null
    const p = n.props === null ? undefined : n.props.get(k)
    if (p !== undefined && p.required) seen++
    const node = p === undefined || p.node === null ? n.other : p.node
    if (node === null) return null
    nodes[i] = node
  }
  return seen === n.required ? nodes : null
}

// Whether a value is certainly invalid against a node, by an assertion that holds whatever else
// the node says (plan.rs `Node::refuses`): a type it does not admit, a value outside its
// enum/const, an object without a required key. Only asked of a value another branch accepted,
// so the value is plain JSON data.
function refuses(n, v) {
  if (n.values !== null && !n.values.has(v)) return true
  if (n.types !== 0 && (n.types & typeBit(v)) === 0) return true
  const required = n.requiredNames
  if (required !== null && typeof v === 'object' && v !== null && !Array.isArray(v)) {
    for (const k of required) if (!Object.hasOwn(v, k)) return true
  }
  return false
}

/**
 * The acceptor of a plan's text: `(value) => boolean`, or `null` when the text is not a plan.
 * `limits` are [maxDepth, maxProperties, maxStringLength, maxArrayLength] as Rust resolved them.
 */
function acceptorOf(planText) {
  let plan
  try {
    plan = JSON.parse(planText)
  } catch {
    return null
  }
  if (plan === null || typeof plan !== 'object' || !Array.isArray(plan.limits)) return null
  const lim = new PlanLimits(...plan.limits)
  const any = new PlanNode()
  any.any = true
  any.other = any

  function compile(node) {
    if (node === null || typeof node !== 'object') throw new TypeError('plan node')
    const n = new PlanNode()
    n.types = node.t ?? 0
    if (Array.isArray(node.e)) n.values = new Set(node.e)
    if (Array.isArray(node.p) || Array.isArray(node.r)) {
      n.props = new Map()
      for (const [name, sub] of node.p ?? []) n.props.set(name, { node: compile(sub), required: false })
      for (const name of node.r ?? []) {
        const p = n.props.get(name) ?? { node: null, required: false }
        if (!p.required) n.required++
        p.required = true
        n.props.set(name, p)
      }
    }
    if (Array.isArray(node.r) && node.r.length > 0) n.requiredNames = node.r
    n.other = node.a === false ? null : node.a === undefined || node.a === true ? any : compile(node.a)
    n.items = node.i === undefined ? any : compile(node.i)
    n.minItems = node.ni ?? 0
    n.maxItems = node.xi ?? Infinity
    n.minLength = node.nl ?? 0
    n.maxLength = node.xl ?? Infinity
    n.min = node.min ?? -Infinity
    n.max = node.max ?? Infinity
    n.emin = node.emin ?? -Infinity
    n.emax = node.emax ?? Infinity
    n.all = branches(node.all)
    n.anyOf = branches(node.any)
    n.one = branches(node.one)
    return n
  }

  function branches(list) {
    if (list === undefined) return null
    if (!Array.isArray(list) || list.length === 0) throw new TypeError('plan branches')
    return list.map(compile)
  }

  let root
  try {
    root = compile(plan.root)
  } catch {
    return null
  }
  return function accept(value) {
    // Arguments are an object; a getter that throws or a proxy trap is the text path's to word.
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return false
    try {
      walkFrom(value)
      const ok = check(root, value, 0, lim)
      if (ok) walkPassed(value)
      return ok
    } catch {
      return false
    }
  }
}

module.exports = { acceptorOf }
