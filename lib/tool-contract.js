'use strict'
// The provider-facing fields of a tool definition, checked once when the tool is registered
// (`createToolRegistry`, `registry.register`, `createAgent({ tools })`):
//
// - `strict: true` — the tool's `parameters` must already be written in the strict subset that both
//   OpenAI's and Anthropic's strict modes accept (docs/providers.md § Strict tools; the rule is the
//   core's, crates/core/src/tool_contract.rs). The schema is checked, never rewritten: what the
//   provider constrains the model to is the very schema the tool's arguments are validated against.
// - `inputExamples` — bounded, each one valid against `parameters` (the package's validator).
// - `deferLoading` — a boolean.
//
// - `parameters.$schema` — a dialect the validator reads (draft 2020-12, 2019-09, 07, 06 or 04).
//
// A tool without any of them costs four property reads.

const native = require('../binding.js')
const { codedError } = require('./errors.js')

const MAX_INPUT_EXAMPLES = 20
const MAX_INPUT_EXAMPLE_BYTES = 16 * 1024

const isPlainObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v)

function contractError(tool, message, extra) {
  return Object.assign(codedError(TypeError, `Tool ${tool}: ${message}`, 'ERR_PRISM_INVALID_TOOL'), extra)
}

/**
 * Throws `ERR_PRISM_INVALID_TOOL` naming the tool, the keyword and its path when `schema` is outside
 * the strict subset; the rule is the core's (`crates/core/src/tool_contract.rs`), given the JSON text.
 */
function checkStrictSchema(name, schema) {
  let text
  try {
    text = JSON.stringify(schema)
  } catch (err) {
    throw contractError(name, `strict mode needs \`parameters\` that are JSON (${err && err.message})`, { keyword: 'parameters', path: '' })
  }
  const found = native.toolStrictSchemaProblem(text ?? 'null')
  if (found === null || found === undefined) return
  const { keyword, path, reason } = found
  if (found.root) throw contractError(name, reason, { keyword, path })
  throw contractError(name, `strict mode cannot take "${keyword}" at ${path === '' ? 'the root' : path} (${reason})`, { keyword, path })
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
/**
 * Throws `ERR_PRISM_INVALID_TOOL` naming the tool when its `parameters.$schema` names a dialect the
 * validator does not read (the list is the core's, `validate::draft_of`).
 */
function checkDialect(name, uri) {
  const problem = native.toolSchemaDialectProblem(JSON.stringify(uri) ?? 'null')
  if (problem !== null && problem !== undefined) throw contractError(name, `parameters: ${problem}`, { keyword: '$schema', path: '' })
}

function checkToolContract(tool) {
  const parameters = tool.parameters
  if (parameters !== null && typeof parameters === 'object' && parameters.$schema !== undefined) checkDialect(String(tool.name), parameters.$schema)
  const strict = tool.strict
  const examples = tool.inputExamples
  const defer = tool.deferLoading
  if (strict === undefined && examples === undefined && defer === undefined) return
  const seen = checkedTools.get(tool)
  if (seen !== undefined && seen.strict === strict && seen.examples === examples && seen.defer === defer && seen.parameters === parameters) return
  const name = String(tool.name)
  if (strict !== undefined && typeof strict !== 'boolean') throw contractError(name, 'strict must be a boolean', { keyword: 'strict' })
  if (defer !== undefined && typeof defer !== 'boolean') throw contractError(name, 'deferLoading must be a boolean', { keyword: 'deferLoading' })
  if (strict === true) checkStrictSchema(name, parameters)
  if (examples !== undefined) checkInputExamples(tool, name)
  checkedTools.set(tool, { strict, examples, defer, parameters })
}

module.exports = { checkToolContract, checkStrictSchema, MAX_INPUT_EXAMPLES, MAX_INPUT_EXAMPLE_BYTES }
