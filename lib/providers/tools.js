'use strict'
// Tool definitions in each provider's wire format, for the providers here and for hosts that call a
// model SDK themselves.

function toolParameters(tool) {
  return tool.parameters ?? { type: 'object' }
}

/** One tool as a Chat Completions `tools[]` entry (upstream's name and shape). */
function serializeOpenAITool(tool) {
  return { type: 'function', function: { name: tool.name, description: tool.description, parameters: toolParameters(tool) } }
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

/** Tools as Anthropic Messages `tools[]` (`input_schema`). */
function toAnthropicTools(tools) {
  if (!Array.isArray(tools)) throw new TypeError('toAnthropicTools: tools must be an array')
  return tools.map((tool) => {
    const entry = { name: tool.name, input_schema: toolParameters(tool) }
    if (tool.description !== undefined) entry.description = tool.description
    return entry
  })
}

module.exports = { serializeOpenAITool, toOpenAITools, toAnthropicTools }
