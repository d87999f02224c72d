'use strict'
// The provider-facing fields of a tool definition, checked once when the tool is registered
// (`createToolRegistry`, `registry.register`, `createAgent({ tools })`):
//
// - `strict: true` — the tool's `parameters` must already be written in the strict subset that both
//   OpenAI's and Anthropic's strict modes accept (docs/providers.md § Strict tools). The schema is
//   checked, never rewritten: what the provider constrains the model to is the very schema the
//   tool's arguments are validated against.
// - `inputExamples` — bounded, each one valid against `parameters` (the package's validator).
// - `deferLoading` — a boolean.
//
// A tool without any of the three costs three property reads.

const { codedError } = require('./errors.js')

const MAX_INPUT_EXAMPLES = 20
const MAX_INPUT_EXAMPLE_BYTES = 16 * 1024
// OpenAI's strict limits: 10 levels of nesting, 5 000 properties in all.
const MAX_STRICT_DEPTH = 10
const MAX_STRICT_PROPERTIES = 5000

// Keywords both strict modes accept. Everything else is refused by name.
const STRICT_KEYWORDS = new Set([
  'type', 'properties', 'required', 'additionalProperties', 'items', 'enum', 'const', 'anyOf', '$ref',
  '$defs', 'definitions', 'description', 'title', 'pattern', 'format', 'minItems', '$schema', '$comment',
])
// The `format` values both accept (OpenAI's list; Anthropic's adds `uri`).
const STRICT_FORMATS = new Set(['date-time', 'time', 'date', 'duration', 'email', 'hostname', 'ipv4', 'ipv6', 'uuid'])
// Why a keyword is refused, where a hint helps.
const STRICT_HINTS = {
  oneOf: 'write anyOf',
  allOf: 'merge the branches into one schema',
  default: 'strict mode sends every property; describe the default in `description`',
  minLength: 'Anthropic refuses string length bounds',
  maxLength: 'Anthropic refuses string length bounds',
  minimum: 'Anthropic refuses numeric bounds',
  maximum: 'Anthropic refuses numeric bounds',
  exclusiveMinimum: 'Anthropic refuses numeric bounds',
  exclusiveMaximum: 'Anthropic refuses numeric bounds',
  multipleOf: 'Anthropic refuses numeric bounds',
  maxItems: 'Anthropic takes only minItems 0 or 1',
}

const isPlainObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v)

function contractError(tool, message, extra) {
  return Object.assign(codedError(TypeError, `Tool ${tool}: ${message}`, 'ERR_PRISM_INVALID_TOOL'), extra)
}

/** Throws `ERR_PRISM_INVALID_TOOL` naming the tool, the keyword and its path when `schema` is outside the strict subset. */
function checkStrictSchema(name, schema) {
  if (!isPlainObject(schema)) throw contractError(name, 'strict mode needs `parameters`, an object schema', { keyword: 'parameters', path: '' })
  if (schema.type !== 'object') throw contractError(name, 'strict mode needs `parameters` of `type: "object"` at the root', { keyword: 'type', path: '' })
  const state = { name, properties: 0, root: schema, refs: [] }
  walkStrict(state, schema, '', 0)
  checkRefs(state)
}

function refuse(state, path, keyword, reason) {
  const where = path === '' ? 'the root' : path
  return contractError(state.name, `strict mode cannot take "${keyword}" at ${where} (${reason})`, { keyword, path })
}

function walkStrict(state, node, path, depth) {
  if (typeof node === 'boolean') throw refuse(state, path, 'boolean schema', 'write an object schema')
  if (!isPlainObject(node)) throw refuse(state, path, 'schema', 'a schema must be an object')
  if (depth > MAX_STRICT_DEPTH) throw refuse(state, path, 'nesting', `deeper than ${MAX_STRICT_DEPTH} levels`)
  for (const key of Object.keys(node)) {
    if (!STRICT_KEYWORDS.has(key)) throw refuse(state, path, key, STRICT_HINTS[key] ?? 'not in the strict subset')
  }
  if (node.format !== undefined && !STRICT_FORMATS.has(node.format)) throw refuse(state, path, 'format', `"${String(node.format)}" is not one of ${[...STRICT_FORMATS].join(', ')}`)
  if (node.minItems !== undefined && node.minItems !== 0 && node.minItems !== 1) throw refuse(state, path, 'minItems', 'Anthropic takes only 0 or 1')
  if (node.enum !== undefined) checkEnum(state, node.enum, path)
  if (node.$ref !== undefined) state.refs.push({ ref: node.$ref, path })
  const types = Array.isArray(node.type) ? node.type : [node.type]
  if (types.includes('object') || node.properties !== undefined) checkObject(state, node, path, depth)
  else if (node.additionalProperties !== undefined || node.required !== undefined) {
    throw refuse(state, path, node.additionalProperties !== undefined ? 'additionalProperties' : 'required', 'only on a schema of `type: "object"`')
  }
  if (node.items !== undefined) {
    if (!isPlainObject(node.items)) throw refuse(state, path, 'items', 'one schema for every item (no tuples)')
    walkStrict(state, node.items, `${path}/items`, depth + 1)
  }
  if (node.anyOf !== undefined) {
    if (!Array.isArray(node.anyOf) || node.anyOf.length === 0) throw refuse(state, path, 'anyOf', 'a non-empty array of schemas')
    if (path === '') throw refuse(state, path, 'anyOf', 'the root must be one object schema')
    node.anyOf.forEach((sub, i) => walkStrict(state, sub, `${path}/anyOf/${i}`, depth + 1))
  }
  for (const defs of ['$defs', 'definitions']) {
    if (node[defs] === undefined) continue
    if (path !== '') throw refuse(state, path, defs, 'definitions go at the root')
    if (!isPlainObject(node[defs])) throw refuse(state, path, defs, 'an object of schemas')
    for (const [key, sub] of Object.entries(node[defs])) walkStrict(state, sub, `/${defs}/${key}`, 1)
  }
}

function checkObject(state, node, path, depth) {
  if (node.additionalProperties !== false) throw refuse(state, path, 'additionalProperties', 'every object needs `additionalProperties: false`')
  const properties = node.properties ?? {}
  if (!isPlainObject(properties)) throw refuse(state, path, 'properties', 'an object of schemas')
  const names = Object.keys(properties)
  state.properties += names.length
  if (state.properties > MAX_STRICT_PROPERTIES) throw refuse(state, path, 'properties', `more than ${MAX_STRICT_PROPERTIES} in all`)
  const required = Array.isArray(node.required) ? node.required : []
  for (const key of names) {
    if (!required.includes(key)) {
      throw refuse(state, `${path}/properties/${key}`, 'required', `every property is required; write an optional one as required with a "null" type`)
    }
    walkStrict(state, properties[key], `${path}/properties/${key}`, depth + 1)
  }
}

function checkEnum(state, values, path) {
  if (!Array.isArray(values) || values.length === 0) throw refuse(state, path, 'enum', 'a non-empty array')
  for (const v of values) {
    if (v !== null && typeof v === 'object') throw refuse(state, path, 'enum', 'only strings, numbers, booleans and null')
  }
}

// `$ref` must point at a definition of this schema, and no definition may reach itself (Anthropic
// refuses recursive schemas).
function checkRefs(state) {
  const target = (ref) => {
    const m = typeof ref === 'string' ? /^#\/(\$defs|definitions)\/([^/]+)$/.exec(ref) : null
    const defs = m ? state.root[m[1]] : undefined
    return m && isPlainObject(defs) && Object.hasOwn(defs, m[2]) ? `/${m[1]}/${m[2]}` : undefined
  }
  const edges = new Map() // definition path -> definition paths it refers to
  for (const { ref, path } of state.refs) {
    const to = target(ref)
    if (to === undefined) throw refuse(state, path, '$ref', `"${String(ref)}" is not a definition of this schema (#/$defs/<name>)`)
    const from = /^\/(\$defs|definitions)\/[^/]+/.exec(path)?.[0]
    if (from === undefined) continue
    if (!edges.has(from)) edges.set(from, [])
    edges.get(from).push(to)
  }
  const done = new Set()
  const visit = (node, stack) => {
    if (stack.includes(node)) throw refuse(state, node, '$ref', 'recursive schemas are refused by Anthropic')
    if (done.has(node)) return
    for (const next of edges.get(node) ?? []) visit(next, [...stack, node])
    done.add(node)
  }
  for (const from of edges.keys()) visit(from, [])
}

let exampleValidator
function validateExample(tool, example) {
  if (exampleValidator === undefined) exampleValidator = require('./validation.js').createJsonSchemaToolArgumentValidator()
  return exampleValidator(tool, example)
}

function checkInputExamples(tool, name) {
  const examples = tool.inputExamples
  if (!Array.isArray(examples)) throw contractError(name, 'inputExamples must be an array of argument objects', { keyword: 'inputExamples' })
  if (examples.length > MAX_INPUT_EXAMPLES) throw contractError(name, `inputExamples has ${examples.length} examples; at most ${MAX_INPUT_EXAMPLES}`, { keyword: 'inputExamples' })
  for (let i = 0; i < examples.length; i++) {
    const example = examples[i]
    if (!isPlainObject(example)) throw contractError(name, `inputExamples[${i}] must be an object of arguments`, { keyword: 'inputExamples', index: i })
    let text
    try {
      text = JSON.stringify(example)
    } catch (err) {
      throw contractError(name, `inputExamples[${i}] is not JSON (${err && err.message})`, { keyword: 'inputExamples', index: i })
    }
    if (Buffer.byteLength(text) > MAX_INPUT_EXAMPLE_BYTES) {
      throw contractError(name, `inputExamples[${i}] is over ${MAX_INPUT_EXAMPLE_BYTES} bytes of JSON`, { keyword: 'inputExamples', index: i })
    }
    if (tool.parameters === undefined || tool.parameters === null) continue
    const problem = validateExample(tool, example)
    if (problem !== undefined) {
      // The validator answers `<JSON pointer>: <why>`, the pointer empty at the root.
      const text = String(problem)
      const cut = text.startsWith('/') ? text.indexOf(': ') : -1
      const path = cut > 0 ? text.slice(0, cut) : ''
      const why = cut > 0 ? text.slice(cut + 2) : text.replace(/^: /, '')
      throw contractError(name, `inputExamples[${i}] does not match its parameters at ${path === '' ? 'the root' : path}: ${why}`, { keyword: 'inputExamples', index: i, path })
    }
  }
}

// Tools already checked, with the values they were checked with: a tool registered again (each run's
// registry, each session's agent) is not walked again unless one of them changed.
const checkedTools = new WeakMap()

/** Checks `strict`, `inputExamples` and `deferLoading` of `tool`; a tool with none of them passes at once. */
function checkToolContract(tool) {
  const strict = tool.strict
  const examples = tool.inputExamples
  const defer = tool.deferLoading
  if (strict === undefined && examples === undefined && defer === undefined) return
  const seen = checkedTools.get(tool)
  const parameters = tool.parameters
  if (seen !== undefined && seen.strict === strict && seen.examples === examples && seen.defer === defer && seen.parameters === parameters) return
  const name = String(tool.name)
  if (strict !== undefined && typeof strict !== 'boolean') throw contractError(name, 'strict must be a boolean', { keyword: 'strict' })
  if (defer !== undefined && typeof defer !== 'boolean') throw contractError(name, 'deferLoading must be a boolean', { keyword: 'deferLoading' })
  if (strict === true) checkStrictSchema(name, parameters)
  if (examples !== undefined) checkInputExamples(tool, name)
  checkedTools.set(tool, { strict, examples, defer, parameters })
}

module.exports = { checkToolContract, checkStrictSchema, MAX_INPUT_EXAMPLES, MAX_INPUT_EXAMPLE_BYTES, STRICT_FORMATS }
