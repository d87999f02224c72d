'use strict'
// Tool definitions in each provider's wire format, for the providers here and for hosts that call a
// model SDK themselves.
const { codedError } = require('../errors.js')

function toolParameters(tool) {
  return tool.parameters ?? { type: 'object' }
}

/**
 * One tool as a Chat Completions `tools[]` entry (upstream's name and shape). A `strict: true` tool
 * adds `function.strict` (its schema was checked at registration, lib/tool-contract.js); its
 * `inputExamples` go at the end of the description (`describedWithExamples`).
 */
function serializeOpenAITool(tool) {
  // A tool with neither field is what it always was: two reads more on the request's hot path.
  if (tool.strict === undefined && tool.inputExamples === undefined) {
    return { type: 'function', function: { name: tool.name, description: tool.description, parameters: toolParameters(tool) } }
  }
  const fn = { name: tool.name, description: describedWithExamples(tool), parameters: toolParameters(tool) }
  if (tool.strict === true) fn.strict = true
  return { type: 'function', function: fn }
}

// A provider without an examples field reads them in the description, after a blank line, one JSON
// object a line, as many whole ones as fit in this many bytes.
const EXAMPLES_IN_DESCRIPTION_BYTES = 2048
const EXAMPLES_HEADING = 'Example inputs:'
const described = new WeakMap() // tool -> { description, examples, text }

/** `tool.description` with its `inputExamples` appended (bounded, whole examples only); cached per tool. */
function describedWithExamples(tool) {
  const examples = tool.inputExamples
  const description = tool.description
  if (!Array.isArray(examples) || examples.length === 0) return description
  const kept = described.get(tool)
  if (kept !== undefined && kept.description === description && kept.examples === examples) return kept.text
  const lines = []
  let bytes = 0
  for (const example of examples) {
    const line = JSON.stringify(example)
    const size = Buffer.byteLength(line) + 1
    if (bytes + size > EXAMPLES_IN_DESCRIPTION_BYTES) break
    lines.push(line)
    bytes += size
  }
  const base = typeof description === 'string' && description !== '' ? `${description}\n\n` : ''
  const text = lines.length === 0 ? description : `${base}${EXAMPLES_HEADING}\n${lines.join('\n')}`
  described.set(tool, { description, examples, text })
  return text
}

const STRICT_DROPPED_KEYWORDS = [
  'minLength', 'maxLength', 'pattern', 'format', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum',
  'multipleOf', 'minItems', 'maxItems', 'uniqueItems', 'minProperties', 'maxProperties', 'patternProperties',
  'default', 'examples', '$schema', 'if', 'then', 'else', 'not', 'dependentRequired', 'dependentSchemas',
]
const MAX_STRICT_DEPTH = 64

/**
 * OpenAI strict mode wants every object closed (`additionalProperties: false`) with every property
 * required; an optional property becomes required and nullable. Keywords strict mode refuses are
 * removed, each one reported as `{ tool, path, keyword }` in `dropped`.
 */
function strictSchema(schema, toolName, path, dropped, depth) {
  if (depth > MAX_STRICT_DEPTH) {
    dropped.push({ tool: toolName, path, keyword: '(depth)', reason: `nested deeper than ${MAX_STRICT_DEPTH}` })
    return {}
  }
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) return schema
  const out = {}
  for (const [key, value] of Object.entries(schema)) {
    if (STRICT_DROPPED_KEYWORDS.includes(key)) {
      dropped.push({ tool: toolName, path, keyword: key, reason: 'not supported in strict mode' })
      continue
    }
    if (key === 'properties' && value && typeof value === 'object') {
      out.properties = {}
      for (const [name, sub] of Object.entries(value)) out.properties[name] = strictSchema(sub, toolName, `${path}/properties/${name}`, dropped, depth + 1)
    } else if ((key === 'items' || key === 'additionalProperties') && value && typeof value === 'object') {
      out[key] = strictSchema(value, toolName, `${path}/${key}`, dropped, depth + 1)
    } else if ((key === 'anyOf' || key === 'allOf' || key === 'oneOf') && Array.isArray(value)) {
      // strict mode takes anyOf only; oneOf's exclusivity cannot be kept.
      if (key === 'oneOf') dropped.push({ tool: toolName, path, keyword: 'oneOf', reason: 'rewritten as anyOf' })
      out[key === 'oneOf' ? 'anyOf' : key] = value.map((sub, i) => strictSchema(sub, toolName, `${path}/${key}/${i}`, dropped, depth + 1))
    } else if ((key === '$defs' || key === 'definitions') && value && typeof value === 'object') {
      out[key] = {}
      for (const [name, sub] of Object.entries(value)) out[key][name] = strictSchema(sub, toolName, `${path}/${key}/${name}`, dropped, depth + 1)
    } else {
      out[key] = value
    }
  }
  const isObject = out.type === 'object' || (Array.isArray(out.type) && out.type.includes('object')) || out.properties !== undefined
  if (isObject) {
    const props = out.properties ?? {}
    out.properties = props
    const required = new Set(Array.isArray(out.required) ? out.required : [])
    for (const name of Object.keys(props)) {
      if (!required.has(name)) props[name] = nullable(props[name])
    }
    out.required = Object.keys(props)
    if (out.additionalProperties !== undefined && out.additionalProperties !== false) {
      dropped.push({ tool: toolName, path, keyword: 'additionalProperties', reason: 'strict mode closes every object' })
    }
    out.additionalProperties = false
  }
  return out
}

function nullable(schema) {
  if (schema === null || typeof schema !== 'object') return schema
  if (typeof schema.type === 'string') return schema.type === 'null' ? schema : { ...schema, type: [schema.type, 'null'] }
  if (Array.isArray(schema.type)) return schema.type.includes('null') ? schema : { ...schema, type: [...schema.type, 'null'] }
  return { anyOf: [schema, { type: 'null' }] }
}

/**
 * Tools as Chat Completions `tools[]`. With `{ strict: true }` each schema is rewritten for strict
 * mode and the answer is `{ tools, dropped }`, `dropped` listing what strict mode could not keep.
 */
function toOpenAITools(tools, options = {}) {
  if (!Array.isArray(tools)) throw new TypeError('toOpenAITools: tools must be an array')
  if (!options.strict) return tools.map(serializeOpenAITool)
  const dropped = []
  const out = tools.map((tool) => {
    const entry = serializeOpenAITool(tool)
    entry.function.parameters = strictSchema(toolParameters(tool), tool.name, '', dropped, 0)
    entry.function.strict = true
    return entry
  })
  return { tools: out, dropped }
}

// Anthropic's server-side tool search, one entry per variant (`toolSearch` option).
const ANTHROPIC_TOOL_SEARCH = {
  bm25: { type: 'tool_search_tool_bm25_20251119', name: 'tool_search_tool_bm25' },
  regex: { type: 'tool_search_tool_regex_20251119', name: 'tool_search_tool_regex' },
}

function anthropicToolSearch(variant, who) {
  const entry = ANTHROPIC_TOOL_SEARCH[variant ?? 'bm25']
  if (entry === undefined) throw new TypeError(`${who}: toolSearch must be "bm25" or "regex"`)
  return entry
}

/**
 * Tools as Anthropic Messages `tools[]` (`input_schema`), with `strict`, `input_examples` and
 * `defer_loading` from the tool's `strict`, `inputExamples` and `deferLoading`. When any tool is
 * deferred, the server-side tool search goes last (`options.toolSearch`: `"bm25"`, the default, or
 * `"regex"`; `false` marks nothing deferred and adds no search).
 */
function toAnthropicTools(tools, options = {}) {
  if (!Array.isArray(tools)) throw new TypeError('toAnthropicTools: tools must be an array')
  let deferred = false
  const out = tools.map((tool) => {
    const entry = { name: tool.name, input_schema: toolParameters(tool) }
    if (tool.description !== undefined) entry.description = tool.description
    if (tool.strict === undefined && tool.inputExamples === undefined && tool.deferLoading === undefined) return entry
    if (tool.strict === true) entry.strict = true
    if (Array.isArray(tool.inputExamples) && tool.inputExamples.length > 0) entry.input_examples = tool.inputExamples
    if (tool.deferLoading === true && options.toolSearch !== false) {
      entry.defer_loading = true
      deferred = true
    }
    return entry
  })
  if (deferred) out.push({ ...anthropicToolSearch(options.toolSearch, 'toAnthropicTools') })
  return out
}

/** Whether a Messages `server_tool_use` name is one of the tool searches (its calls are the provider's own). */
const isAnthropicToolSearchName = (name) => name === ANTHROPIC_TOOL_SEARCH.bm25.name || name === ANTHROPIC_TOOL_SEARCH.regex.name

// OpenAI's Chat Completions refuses a request with more tools than this.
const OPENAI_MAX_TOOLS = 128

/** A provider's `maxTools` option: a positive integer, else `fallback`. */
function maxToolsOption(value, fallback, who) {
  if (value === undefined) return fallback
  if (!Number.isSafeInteger(value) || value < 1) {
    throw codedError(RangeError, `${who}: maxTools must be a positive integer`, 'ERR_PRISM_INVALID_OPTION')
  }
  return value
}

/** Throws `ERR_PRISM_TOOL_CAP` when a request carries more tools than its provider's cap. */
function checkToolCap(count, cap, who) {
  if (cap === undefined || count <= cap) return
  throw Object.assign(
    codedError(RangeError, `${who}: the request has ${count} tools and this provider takes at most ${cap} (maxTools); mark tools deferLoading or use toolsDisclosure "search"`, 'ERR_PRISM_TOOL_CAP'),
    { limit: cap, count },
  )
}

module.exports = {
  serializeOpenAITool,
  toOpenAITools,
  toAnthropicTools,
  describedWithExamples,
  anthropicToolSearch,
  isAnthropicToolSearchName,
  OPENAI_MAX_TOOLS,
  maxToolsOption,
  checkToolCap,
  EXAMPLES_IN_DESCRIPTION_BYTES,
}
