'use strict'
// The JS side of validation: serializing host values to JSON text (the one thing Rust cannot do
// cheaply), and the closures hosts call. Every check, limit and message lives in Rust.
const native = require('../binding.js')
const { argumentsTextOf } = require('./arguments-text.js')
const { plainContainerProblem, walkFrom, walkPassed } = require('./json-object.js')
const { acceptorOf } = require('./validation-plan.js')

// JSON text cannot carry a Map, a class instance, NaN, a function…, and must not carry what a
// Proxy, a toJSON method or a getter would answer instead of what the tool reads: the replacer puts
// a tag in their place (lib/json-object.js says why each is refused), which Rust refuses with the
// path where it sits. Must match bounds::NON_JSON_TAG.
const NON_JSON_TAG = '\u0000prism:nonjson'

function tag(kind) {
  return { [NON_JSON_TAG]: kind }
}

function replacer(key, value) {
  const raw = this[key] // the value before any toJSON ran
  switch (typeof raw) {
    case 'string':
    case 'boolean':
    case 'undefined':
      return value
    case 'number':
      return Number.isFinite(raw) ? value : tag(String(raw))
    case 'object': {
      if (raw === null) return value
      const problem = plainContainerProblem(raw)
      return problem === undefined ? value : tag(problem)
    }
    default:
      return tag(`a ${typeof raw}`)
  }
}

// Fast path: whether a value is plain JSON for sure (plain objects and arrays, finite numbers,
// strings, booleans, null, no deeper than the hard depth cap). It decides nothing: a value it
// is unsure of takes the replacer path, and Rust words the refusal.
function surelyPlain(v, depth) {
  switch (typeof v) {
    case 'string':
    case 'boolean':
      return true
    case 'number':
      return Number.isFinite(v)
    case 'object': {
      if (v === null) return true
      if (depth > 128 || plainContainerProblem(v) !== undefined) return false
      if (Array.isArray(v)) {
        for (let i = 0; i < v.length; i++) if (!surelyPlain(v[i], depth + 1)) return false
        return true
      }
      for (const k in v) if (!surelyPlain(v[k], depth + 1)) return false
      return true
    }
    default:
      return false
  }
}

/**
 * JSON text of a host value, or the exception serializing it raised (cycle, getter, depth). `scan`
 * false for a schema: nothing but its JSON text is ever read (the validator compiles the text, a
 * provider is sent the text), so a getter or a non-enumerable property in it is as JSON text has
 * it, not refused; what JSON text cannot carry faithfully (a Proxy, a `toJSON`, a class instance,
 * NaN…) still is.
 */
function toJsonText(value, scan = true) {
  if (value === undefined) return JSON.stringify(tag('undefined'))
  try {
    // A replacer makes JSON.stringify ~2.5× slower; plain values (nearly all) skip it.
    walkFrom(value, scan)
    if (surelyPlain(value, 0)) {
      walkPassed(value)
      return JSON.stringify(value)
    }
    return JSON.stringify(value, replacer)
  } catch (error) {
    const isError = typeof error === 'object' && error !== null
    return {
      name: isError && typeof error.name === 'string' ? error.name : 'Error',
      message: isError && typeof error.message === 'string' ? error.message : String(error),
    }
  }
}

function optionsText(options) {
  if (options === undefined || options === null) return undefined
  if (typeof options !== 'object') throw new TypeError('options must be an object')
  return JSON.stringify(options)
}

function checkMissingSchema(value) {
  if (value !== undefined && value !== 'allow' && value !== 'reject') {
    throw new RangeError('missingSchema must be "allow" or "reject"')
  }
  return value === 'reject'
}

function missingSchemaMessage(tool) {
  return `Tool ${tool.name} has no parameters schema`
}

function joinIssues(errors) {
  if (!Array.isArray(errors)) return ''
  return errors
    .map((e) => (e !== null && typeof e === 'object' ? (e.path ? `${e.path}: ${e.message}` : `${e.message}`) : `${e}`))
    .join('; ')
}

function resultToValidatorReturn(tool, result) {
  if (result === null || typeof result !== 'object') return `Tool ${tool.name} arguments could not be validated`
  if (result.ok) return undefined
  return joinIssues(result.errors) || `Tool ${tool.name} arguments do not match its parameters schema`
}

function createToolParameterValidator(adapter, options) {
  if (adapter === null || typeof adapter !== 'object' || typeof adapter.validate !== 'function') {
    throw new TypeError('adapter must have a validate(schema, value) method')
  }
  const reject = checkMissingSchema(options === undefined || options === null ? undefined : options.missingSchema)
  return function validateToolParameters(tool, args, _ctx) {
    const schema = tool.parameters
    if (schema === undefined || schema === null) return reject ? missingSchemaMessage(tool) : undefined
    const result = adapter.validate(schema, args)
    if (result !== null && typeof result === 'object' && typeof result.then === 'function') {
      return Promise.resolve(result).then((r) => resultToValidatorReturn(tool, r))
    }
    return resultToValidatorReturn(tool, result)
  }
}

function createJsonSchemaArgumentValidator(options) {
  const engine = native.jsonSchemaEngineCreate(optionsText(options))
  return {
    validate(schema, value) {
      const args = argumentsTextOf(value) ?? toJsonText(value)
      const out = native.jsonSchemaValidate(engine, toJsonText(schema, false), args, false)
      return out === null ? { ok: true } : { ok: false, errors: JSON.parse(out) }
    },
  }
}

// The package's own tool argument validators. When dispatch's `validate` is one of them and it passed,
// dispatch records, for the tool context it hands to `execute`, which schema and which arguments object
// were checked (`checkedArguments`), so a bridged MCP tool does not check the same arguments again.
// A WeakMap, not a property: a host cannot forge it, and a context copied into a nested dispatch does
// not carry it.
const ownToolArgumentValidators = new WeakSet()
const checkedArguments = new WeakMap()

function createJsonSchemaToolArgumentValidator(options) {
  const engine = native.jsonSchemaEngineCreate(optionsText(options))
  const reject = checkMissingSchema(options === undefined || options === null ? undefined : options.missingSchema)
  // Per tool: the schema object last seen, its cache id and, from its second use, the acceptor of
  // its plan (lib/validation-plan.js; `null` when it has none), so a warm call neither serializes
  // the schema again nor, when the arguments are plainly valid, the arguments. A new `parameters`
  // object is noticed; an evicted id is recompiled.
  const ids = new WeakMap()
  function idFor(tool, schema) {
    const text = toJsonText(schema, false)
    if (typeof text !== 'string') return text
    const id = native.jsonSchemaSchemaId(engine, text)
    if (typeof tool === 'object' || typeof tool === 'function') ids.set(tool, { schema, id, accept: undefined })
    return id
  }
  function acceptorFor(seen) {
    const plan = native.jsonSchemaAcceptancePlan(engine, seen.id)
    return typeof plan === 'string' ? acceptorOf(plan) : null
  }
  function validateToolArguments(tool, args, _ctx) {
    const schema = tool.parameters
    if (schema === undefined || schema === null) return reject ? missingSchemaMessage(tool) : undefined
    const providerText = argumentsTextOf(args)
    const seen = ids.get(tool)
    // Provider arguments too: the object the tool gets is the text parsed by V8, and a plainly
    // valid object needs no second parse in Rust; anything else is decided from the text.
    if (seen !== undefined && seen.schema === schema) {
      // The first warm call makes the acceptor; a schema without a plan keeps `null`.
      if (seen.accept === undefined) seen.accept = acceptorFor(seen)
      if (seen.accept !== null && seen.accept(args)) return undefined
    }
    const text = providerText ?? toJsonText(args)
    let id = seen !== undefined && seen.schema === schema ? seen.id : idFor(tool, schema)
    if (typeof id !== 'number') return native.jsonSchemaValidate(engine, id, text, true) ?? undefined
    let out = native.jsonSchemaValidateId(engine, id, text, true)
    if (out === false) {
      id = idFor(tool, schema)
      out = typeof id === 'number' ? native.jsonSchemaValidateId(engine, id, text, true) : native.jsonSchemaValidate(engine, id, text, true)
    }
    return out === null ? undefined : out
  }
  ownToolArgumentValidators.add(validateToolArguments)
  return validateToolArguments
}

module.exports = {
  ownToolArgumentValidators,
  checkedArguments,
  createToolParameterValidator,
  createJsonSchemaArgumentValidator,
  createJsonSchemaToolArgumentValidator,
}
