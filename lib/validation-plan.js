'use strict'
// Acceptance of plainly valid argument objects without serializing them. Rust restates a warm
// schema, when it only uses plain comparisons, as a plan (crates/core/src/validate/plan.rs); this file turns
// the plan into closures (no eval) that walk the live object and answer `true` only when the
// object is certainly valid: plain JSON data, inside every argument bound, matching the plan.
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
  const [maxDepth, maxProperties, maxStringLength, maxArrayLength] = plan.limits
  // Rust refuses a container at depth >= maxDepth (root 0); stay one level clear of it.
  const depthLimit = maxDepth - 1

  function plainString(s) {
    return s.length <= maxStringLength && s.isWellFormed()
  }

  // Any plain JSON value inside the bounds (a node with no constraints).
  function anyValue(v, depth) {
    switch (typeof v) {
      case 'string':
        return plainString(v)
      case 'number':
        return Number.isFinite(v)
      case 'boolean':
        return true
      case 'object':
        if (v === null) return true
        if (depth >= depthLimit) return false
        if (Array.isArray(v)) {
          if (v.length > maxArrayLength || plainContainerProblem(v) !== undefined) return false
          for (let i = 0; i < v.length; i++) if (!anyValue(v[i], depth + 1)) return false
          return true
        }
        return anyMembers(v, depth)
      default:
        return false
    }
  }
  const anyMembers = objectMembers(null, 0, anyValue)

  // The members check of an object node: each own enumerable key (what JSON.stringify writes) is
  // refused, or checked by its property's node, else by `other` (null: no other key admitted);
  // every `required` key must be among them. The last key list seen and what each key resolved to
  // are kept: objects of one shape (an array of records) then skip the per-key lookups.
  function objectMembers(props, required, other) {
    let shapeKeys = null
    let shapeChecks = null
    function resolve(keys) {
      const checks = new Array(keys.length)
      let seen = 0
      for (let i = 0; i < keys.length; i++) {
        const k = keys[i]
        if (REFUSED_KEYS.has(k) || !plainString(k)) return null
        const p = props === null ? undefined : props.get(k)
        if (p !== undefined && p.required) seen++
        const check = p === undefined || p.check === undefined ? other : p.check
        if (check === null) return null
        checks[i] = check
      }
      return seen === required ? checks : null
    }
    return function members(v, depth) {
      if (plainContainerProblem(v) !== undefined) return false
      // An object of the last shape seen: `for…in` reads its keys in Object.keys' order without
      // allocating a key list, and each value as its key comes (a read from the enumeration's own
      // cache, where a read by a key from the list is a megamorphic lookup). A value its key's check
      // refuses answers false at once; a key out of the shape's order (an inherited enumerable key,
      // only on a polluted prototype, included) sends the object to the full path below.
      if (shapeKeys !== null) {
        let i = 0
        let same = true
        for (const k in v) {
          if (i >= shapeKeys.length || k !== shapeKeys[i]) {
            same = false
            break
          }
          const x = v[k]
          if (x === undefined || !shapeChecks[i](x, depth + 1)) return false // JSON.stringify drops undefined
          i++
        }
        if (same && i === shapeKeys.length) return true
      }
      const keys = Object.keys(v)
      const n = keys.length
      if (n > maxProperties) return false
      const checks = resolve(keys)
      if (checks === null) return false
      shapeKeys = keys
      shapeChecks = checks
      for (let i = 0; i < n; i++) {
        const x = v[keys[i]]
        if (x === undefined || !checks[i](x, depth + 1)) return false // JSON.stringify drops undefined
      }
      return true
    }
  }

  function compile(node) {
    if (node === null || typeof node !== 'object') throw new TypeError('plan node')
    const types = node.t ?? 0
    const values = Array.isArray(node.e) ? new Set(node.e) : null
    let props = null
    let required = 0
    if (Array.isArray(node.p) || Array.isArray(node.r)) {
      props = new Map()
      for (const [name, sub] of node.p ?? []) props.set(name, { check: compile(sub), required: false })
      for (const name of node.r ?? []) {
        const p = props.get(name) ?? { check: undefined, required: false }
        if (!p.required) required++
        p.required = true
        props.set(name, p)
      }
    }
    const other = node.a === false ? null : node.a === undefined || node.a === true ? anyValue : compile(node.a)
    const members = props === null && other === anyValue ? anyMembers : objectMembers(props, required, other)
    const items = node.i === undefined ? anyValue : compile(node.i)
    const minItems = node.ni ?? 0
    const maxItems = node.xi ?? Infinity
    const minLength = node.nl ?? 0
    const maxLength = node.xl ?? Infinity
    const min = node.min ?? -Infinity
    const max = node.max ?? Infinity
    const emin = node.emin ?? -Infinity
    const emax = node.emax ?? Infinity
    const admits = (bit) => types === 0 || (types & bit) !== 0
    const all = branchChecks(node.all)
    const any = branchChecks(node.any)
    const one = branchChecks(node.one)
    const oneRefusers = one === null ? null : node.one.map(refuser)

    const check = function check(v, depth) {
      if (values !== null && !values.has(v)) return false
      switch (typeof v) {
        case 'string': {
          if (!admits(T_STRING) || !plainString(v)) return false
          if (v.length < minLength) return false
          if (v.length > maxLength || v.length < 2 * minLength) {
            const n = codePoints(v)
            return n >= minLength && n <= maxLength
          }
          return true
        }
        case 'number':
          if (!Number.isFinite(v)) return false
          if (!(admits(T_NUMBER) || (admits(T_INTEGER) && Number.isInteger(v)))) return false
          return v >= min && v <= max && v > emin && v < emax
        case 'boolean':
          return admits(T_BOOLEAN)
        case 'object': {
          if (v === null) return admits(T_NULL)
          if (depth >= depthLimit) return false
          if (Array.isArray(v)) {
            if (!admits(T_ARRAY)) return false
            const n = v.length
            if (n > maxArrayLength || n < minItems || n > maxItems || plainContainerProblem(v) !== undefined) return false
            for (let i = 0; i < n; i++) if (!items(v[i], depth + 1)) return false
            return true
          }
          if (!admits(T_OBJECT)) return false
          return members(v, depth)
        }
        default:
          return false
      }
    }
    if (all === null && any === null && one === null) return check
    // The branches in a closure of their own: `check` stays small enough for V8 to inline into
    // the walks of plans without branches (a large record array is checked a third slower else).
    return function checkWithBranches(v, depth) {
      if (!check(v, depth)) return false
      if (all !== null) for (let i = 0; i < all.length; i++) if (!all[i](v, depth)) return false
      if (any !== null && !any.some((b) => b(v, depth))) return false
      if (one !== null) {
        // Exactly one branch valid: one accepts and every other one certainly refuses.
        let accepted = 0
        for (let i = 0; i < one.length; i++) {
          if (one[i](v, depth)) accepted++
          else if (!oneRefusers[i](v)) return false
        }
        if (accepted !== 1) return false
      }
      return true
    }
  }

  function branchChecks(list) {
    if (list === undefined) return null
    if (!Array.isArray(list) || list.length === 0) throw new TypeError('plan branches')
    return list.map(compile)
  }

  // Whether a value is certainly invalid against a node, by an assertion that holds whatever else
  // the node says (plan.rs `Node::refuses`): a type it does not admit, a value outside its
  // enum/const, an object without a required key. Only asked of a value another branch accepted,
  // so the value is plain JSON data.
  function refuser(node) {
    const types = node.t ?? 0
    const values = Array.isArray(node.e) ? new Set(node.e) : null
    const required = Array.isArray(node.r) ? node.r : []
    return function refuses(v) {
      if (values !== null && !values.has(v)) return true
      if (types !== 0 && (types & typeBit(v)) === 0) return true
      if (required.length > 0 && typeof v === 'object' && v !== null && !Array.isArray(v)) {
        for (const k of required) if (!Object.hasOwn(v, k)) return true
      }
      return false
    }
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
