'use strict'
// Acceptance of plainly valid argument objects without serializing them. Rust restates a warm
// schema, when it only uses plain comparisons, as a plan (crates/core/src/validate/plan.rs); this file
// compiles the plan into checks (closures, no eval) that walk the live object, answering `true` only
// when the object is certainly valid: plain JSON data, inside every argument bound, matching the plan.
// Anything else answers `false`, and the caller validates the JSON text in Rust as before, which
// decides and words every refusal. A `true` here must never contradict Rust's verdict on the same
// value's JSON text; __test__/properties/validation-plan.test.ts checks that differentially.
const native = require('../binding.js')
const { plainContainerProblem, walkFrom, walkPassed } = require('./json-object.js')

// The type bits a plan's `t` field is written with, from the Rust that writes plans.
const { null: T_NULL, boolean: T_BOOLEAN, integer: T_INTEGER, number: T_NUMBER, string: T_STRING, array: T_ARRAY, object: T_OBJECT } = native.jsonSchemaTypeBits()

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

// A plan is compiled, without eval, into one check per node: `(value, depth) => boolean`, true
// only when the value is certainly valid against the node. A node that admits one JSON type (most
// of them) gets a check of that type alone; any other node gets the general check below. Checks
// of one kind share their code whatever the schema, so V8's feedback depends on the values seen,
// not on which plans were compiled before.

function stringLengthOk(v, minLength, maxLength) {
  if (v.length < minLength) return false
  if (v.length > maxLength || v.length < 2 * minLength) {
    const count = codePoints(v)
    return count >= minLength && count <= maxLength
  }
  return true
}

const stringCheck = (lim, minLength, maxLength) => (v) =>
  typeof v === 'string' && plainString(v, lim) && stringLengthOk(v, minLength, maxLength)
const integerCheck = (min, max, emin, emax) => (v) =>
  typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max && v > emin && v < emax
const numberCheck = (min, max, emin, emax) => (v) =>
  typeof v === 'number' && Number.isFinite(v) && v >= min && v <= max && v > emin && v < emax
const booleanCheck = (v) => typeof v === 'boolean'
const nullCheck = (v) => v === null

const arrayCheck = (lim, minItems, maxItems, items) => (v, depth) => {
  if (!Array.isArray(v) || depth >= lim.depthLimit) return false
  const len = v.length
  if (len > lim.maxArrayLength || len < minItems || len > maxItems || plainContainerProblem(v) !== undefined) return false
  for (let i = 0; i < len; i++) if (!items(v[i], depth + 1)) return false
  return true
}

// What an object node says of its members: the declared properties (name -> { check, required }),
// how many are required, and the check of an undeclared key (null: no other key is admitted).
// It also keeps the last key list an object of this node had and the check each key resolved to:
// objects of one shape (an array of records) then skip the per-key lookups.
class Members {
  constructor(lim, props, required, other) {
    this.lim = lim
    this.props = props
    this.required = required
    this.other = other
    this.shapeKeys = null
    this.shapeChecks = null
  }
}

const objectCheck = (m) => (v, depth) =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && depth < m.lim.depthLimit && members(m, v, depth)

// Each own enumerable key of an object (what JSON.stringify writes) is refused, or checked by its
// property's check, else by `other`; every required key must be among them.
function members(m, v, depth) {
  if (plainContainerProblem(v) !== undefined) return false
  // An object of the last shape seen: `for…in` reads its keys in Object.keys' order without
  // allocating a key list, and each value as its key comes (a read from the enumeration's own
  // cache, where a read by a key from the list is a megamorphic lookup). A value its key's check
  // refuses answers false at once; a key out of the shape's order (an inherited enumerable key,
  // only on a polluted prototype, included) sends the object to the full path below.
  const shapeKeys = m.shapeKeys
  if (shapeKeys !== null) {
    const checks = m.shapeChecks
    let i = 0
    for (const k in v) {
      if (i >= shapeKeys.length || k !== shapeKeys[i]) {
        i = -1
        break
      }
      const x = v[k]
      if (x === undefined || !checks[i](x, depth + 1)) return false // JSON.stringify drops undefined
      i++
    }
    if (i === shapeKeys.length) return true
  }
  const keys = Object.keys(v)
  const count = keys.length
  if (count > m.lim.maxProperties) return false
  const checks = resolve(m, keys)
  if (checks === null) return false
  m.shapeKeys = keys
  m.shapeChecks = checks
  for (let i = 0; i < count; i++) {
    const x = v[keys[i]]
    if (x === undefined || !checks[i](x, depth + 1)) return false // JSON.stringify drops undefined
  }
  return true
}

// The check of each key of an object; null when a key is refused or a required one is missing.
function resolve(m, keys) {
  const checks = new Array(keys.length)
  let seen = 0
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]
    if (REFUSED_KEYS.has(k) || !plainString(k, m.lim)) return null
    const p = m.props === null ? undefined : m.props.get(k)
    if (p !== undefined && p.required) seen++
    const check = p === undefined || p.check === null ? m.other : p.check
    if (check === null) return null
    checks[i] = check
  }
  return seen === m.required ? checks : null
}

// The general check of a node that admits several types (or any): the check of each admitted
// container or scalar type, null where the type is not admitted.
const typedCheck = (string, number, boolean, nil, array, object) => (v, depth) => {
  // typeof compared with a literal, not switched on: V8 turns each test into a type check where a
  // switch calls the typeof builtin and compares its strings.
  if (typeof v === 'string') return string !== null && string(v)
  if (typeof v === 'number') return number !== null && number(v)
  if (typeof v === 'boolean') return boolean
  if (typeof v !== 'object') return false
  if (v === null) return nil
  if (Array.isArray(v)) return array !== null && array(v, depth)
  return object !== null && object(v, depth)
}

const enumCheck = (values, own) => (v, depth) => values.has(v) && own(v, depth)

const branchesCheck = (own, all, anyOf, one, refusals) => (v, depth) => {
  if (!own(v, depth)) return false
  if (all !== null) for (let i = 0; i < all.length; i++) if (!all[i](v, depth)) return false
  if (anyOf !== null) {
    let some = false
    for (let i = 0; i < anyOf.length && !some; i++) some = anyOf[i](v, depth)
    if (!some) return false
  }
  if (one !== null) {
    // Exactly one branch valid: one accepts and every other one certainly refuses.
    let accepted = 0
    for (let i = 0; i < one.length; i++) {
      if (one[i](v, depth)) accepted++
      else if (!refusals[i](v)) return false
    }
    if (accepted !== 1) return false
  }
  return true
}

// Whether a value is certainly invalid against a node, by an assertion that holds whatever else
// the node says (plan.rs `Node::refuses`): a type it does not admit, a value outside its
// enum/const, an object without a required key. Only asked of a value another branch accepted,
// so the value is plain JSON data.
const refusal = (types, values, required) => (v) => {
  if (values !== null && !values.has(v)) return true
  if (types !== 0 && (types & typeBit(v)) === 0) return true
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

  // Any plain JSON value inside the bounds: its objects admit any key, checked by itself.
  const anyMembers = new Members(lim, null, 0, null)
  const anyValue = typedCheck(
    stringCheck(lim, 0, Infinity),
    numberCheck(-Infinity, Infinity, -Infinity, Infinity),
    true,
    true,
    arrayCheck(lim, 0, Infinity, (v, depth) => anyValue(v, depth)),
    objectCheck(anyMembers),
  )
  anyMembers.other = anyValue

  function compile(node) {
    if (node === null || typeof node !== 'object') throw new TypeError('plan node')
    const own = ownCheck(node)
    const values = Array.isArray(node.e) ? new Set(node.e) : null
    const checked = values === null ? own : enumCheck(values, own)
    const all = branches(node.all)
    const anyOf = branches(node.any)
    const oneNodes = node.one
    const one = branches(oneNodes)
    if (all === null && anyOf === null && one === null) return checked
    const refusals = one === null ? null : oneNodes.map(refusalOf)
    return branchesCheck(checked, all, anyOf, one, refusals)
  }

  // The node's own assertions, by type.
  function ownCheck(node) {
    const types = node.t ?? 0
    const admits = (bit) => types === 0 || (types & bit) !== 0
    const min = node.min ?? -Infinity
    const max = node.max ?? Infinity
    const emin = node.emin ?? -Infinity
    const emax = node.emax ?? Infinity
    const string = admits(T_STRING) ? stringCheck(lim, node.nl ?? 0, node.xl ?? Infinity) : null
    const number = admits(T_NUMBER)
      ? numberCheck(min, max, emin, emax)
      : admits(T_INTEGER)
        ? integerCheck(min, max, emin, emax)
        : null
    const array = admits(T_ARRAY) ? arrayCheck(lim, node.ni ?? 0, node.xi ?? Infinity, node.i === undefined ? anyValue : compile(node.i)) : null
    const object = admits(T_OBJECT) ? objectCheck(membersOf(node)) : null
    switch (types) {
      case T_STRING:
        return string
      case T_INTEGER:
      case T_NUMBER:
      case T_INTEGER | T_NUMBER:
        return number
      case T_BOOLEAN:
        return booleanCheck
      case T_NULL:
        return nullCheck
      case T_ARRAY:
        return array
      case T_OBJECT:
        return object
      default:
        return typedCheck(string, number, admits(T_BOOLEAN), admits(T_NULL), array, object)
    }
  }

  function membersOf(node) {
    let props = null
    let required = 0
    if (Array.isArray(node.p) || Array.isArray(node.r)) {
      props = new Map()
      for (const [name, sub] of node.p ?? []) props.set(name, { check: compile(sub), required: false })
      for (const name of node.r ?? []) {
        const p = props.get(name) ?? { check: null, required: false }
        if (!p.required) required++
        p.required = true
        props.set(name, p)
      }
    }
    const other = node.a === false ? null : node.a === undefined || node.a === true ? anyValue : compile(node.a)
    return new Members(lim, props, required, other)
  }

  function refusalOf(node) {
    const required = Array.isArray(node.r) && node.r.length > 0 ? node.r : null
    return refusal(node.t ?? 0, Array.isArray(node.e) ? new Set(node.e) : null, required)
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
      const ok = root(value, 0)
      if (ok) walkPassed(value)
      return ok
    } catch {
      return false
    }
  }
}

module.exports = { acceptorOf }
