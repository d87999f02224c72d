'use strict'
// zod 4 schemas as tool `parameters`. `io: "input"` describes what a caller may send, so a field with a
// `.default()` stays optional; zod's default `io: "output"` would mark it required and refuse valid calls.

// zod types JSON Schema cannot describe, with what to use instead.
const UNREPRESENTABLE = {
  date: 'z.iso.datetime() (an ISO 8601 string; convert it in execute)',
  bigint: 'z.number().int() or z.string()',
  int64: 'z.number().int() or z.string()',
  symbol: 'a JSON type',
  undefined: '.optional() on the field',
  void: '.optional() on the field',
  map: 'z.record(…)',
  set: 'z.array(…)',
  nan: 'z.number()',
  custom: 'a JSON type',
  function: 'a JSON type',
  promise: 'a JSON type',
  transform: 'z.pipe(<a JSON type>, z.transform(…)) so the input side stays JSON',
}

// A JSON Schema path (`properties`/`items`/… keywords and names) as the field it describes.
function fieldOf(path) {
  const out = []
  for (let i = 0; i < path.length; i++) {
    const k = path[i]
    if (k === 'properties' || k === 'patternProperties') {
      if (i + 1 < path.length) out.push(String(path[++i]))
    } else if (k === 'items' || k === 'prefixItems' || k === 'additionalProperties') out.push('[]')
  }
  return out.length ? out.join('.').replace(/\.\[\]/g, '[]') : '(root)'
}

const who = (options) => (typeof options?.toolName === 'string' ? `Tool ${options.toolName}: ` : 'zodParameters: ')

// The AI SDK's `jsonSchema(…)` / `zodSchema(…)` result: a JSON Schema already, under `jsonSchema`.
function aiSdkJsonSchema(schema) {
  if (typeof schema.safeParse === 'function') return undefined
  const marked = Object.getOwnPropertySymbols(schema).some((s) => s.description === 'vercel.ai.schema')
  if (!marked && !('validate' in schema && 'jsonSchema' in schema)) return undefined
  const json = schema.jsonSchema
  return json !== null && typeof json === 'object' && typeof json.then !== 'function' ? json : undefined
}

function objectSchema(json, options) {
  const { $schema: _drop, ...rest } = json
  if (rest.type !== 'object') {
    throw Object.assign(new TypeError(`${who(options)}tool parameters must be an object schema, found ${rest.type ?? 'a non-object schema'}: wrap the fields in z.object({ … })`), { code: 'ERR_PRISM_INVALID_TOOL' })
  }
  return rest
}

function toJSONSchemaOf(schema, options) {
  if (schema === null || typeof schema !== 'object') {
    throw Object.assign(new TypeError(`${who(options)}expected a zod 4 schema or the AI SDK's jsonSchema(…)`), { code: 'ERR_PRISM_INVALID_TOOL' })
  }
  const fromAiSdk = aiSdkJsonSchema(schema)
  if (fromAiSdk !== undefined) return objectSchema(structuredClone(fromAiSdk), options)
  if (typeof schema.safeParse !== 'function') {
    throw Object.assign(new TypeError(`${who(options)}expected a zod 4 schema or the AI SDK's jsonSchema(…)`), { code: 'ERR_PRISM_INVALID_TOOL' })
  }
  let z
  try {
    z = require('zod')
  } catch {
    throw new Error('zodParameters: the optional peer dependency "zod" (version 4) is not installed')
  }
  if (typeof z.toJSONSchema !== 'function') throw new Error('zodParameters: zod 4 is required (z.toJSONSchema is missing)')
  // Every field JSON cannot carry is collected (not just the first), each named with its fix.
  const found = []
  const json = z.toJSONSchema(schema, {
    io: 'input',
    unrepresentable: 'any',
    override(ctx) {
      const type = ctx.zodSchema?._zod?.def?.type
      if (type !== undefined && Object.prototype.hasOwnProperty.call(UNREPRESENTABLE, type)) found.push({ type, field: fieldOf(ctx.path) })
    },
  })
  if (found.length > 0) {
    const list = found.map((f) => `field ${f.field} is z.${f.type}(), which JSON Schema cannot describe: use ${UNREPRESENTABLE[f.type]}`).join('; ')
    throw Object.assign(new TypeError(`${who(options)}${list}`), { code: 'ERR_PRISM_INVALID_TOOL', fields: found.map((f) => f.field) })
  }
  return objectSchema(json, options)
}

/**
 * A zod object schema as tool `parameters` (JSON Schema, `io: "input"`); the AI SDK's `jsonSchema(…)`
 * gives its JSON Schema. `options.toolName` names the tool in errors.
 */
function zodParameters(schema, options) {
  return toJSONSchemaOf(schema, options)
}

/**
 * A tool whose `parameters` come from a zod schema; `execute` receives the arguments parsed by zod
 * (defaults applied), so its argument type is inferred from the schema.
 */
function zodTool(definition) {
  if (!definition || typeof definition !== 'object') throw new TypeError('zodTool: definition must be an object')
  const { schema, execute, ...rest } = definition
  if (typeof execute !== 'function') throw new TypeError('zodTool: execute must be a function')
  const parameters = toJSONSchemaOf(schema, { toolName: definition.name })
  return {
    ...rest,
    parameters,
    execute(args, context) {
      const parsed = schema.safeParse(args)
      if (!parsed.success) {
        const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')
        throw Object.assign(new Error(`Tool ${definition.name} arguments do not match the schema: ${issues}`), { code: 'invalid_arguments' })
      }
      return execute(parsed.data, context)
    },
  }
}

module.exports = { zodParameters, zodTool }
