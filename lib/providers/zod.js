'use strict'
// zod 4 schemas as tool `parameters`. `io: "input"` describes what a caller may send, so a field with a
// `.default()` stays optional; zod's default `io: "output"` would mark it required and refuse valid calls.

function toJSONSchemaOf(schema) {
  if (schema === null || typeof schema !== 'object' || typeof schema.safeParse !== 'function') {
    throw new TypeError('zodParameters: expected a zod 4 schema')
  }
  let z
  try {
    z = require('zod')
  } catch {
    throw new Error('zodParameters: the optional peer dependency "zod" (version 4) is not installed')
  }
  if (typeof z.toJSONSchema !== 'function') throw new Error('zodParameters: zod 4 is required (z.toJSONSchema is missing)')
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'throw' })
  delete json.$schema
  if (json.type !== 'object') throw new TypeError(`zodParameters: tool parameters must be an object schema, found ${json.type ?? 'a non-object schema'}`)
  return json
}

/** A zod object schema as tool `parameters` (JSON Schema, `io: "input"`). */
function zodParameters(schema) {
  return toJSONSchemaOf(schema)
}

/**
 * A tool whose `parameters` come from a zod schema; `execute` receives the arguments parsed by zod
 * (defaults applied), so its argument type is inferred from the schema.
 */
function zodTool(definition) {
  if (!definition || typeof definition !== 'object') throw new TypeError('zodTool: definition must be an object')
  const { schema, execute, ...rest } = definition
  if (typeof execute !== 'function') throw new TypeError('zodTool: execute must be a function')
  const parameters = toJSONSchemaOf(schema)
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
