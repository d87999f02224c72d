'use strict'
// Inlining a document's internal `$ref`s into self-contained schemas. Bounded three ways: nesting
// (`maxSchemaDepth`), `$ref`s expanded over the whole compile (`maxRefs`, so refs that fan out cannot
// multiply the work), and schema nodes built (MAX_SCHEMA_NODES). A `$ref` that reaches itself is a cycle,
// named; an external or unresolvable `$ref` is refused. Keywords that hold no schema are kept as given.
const { OpenApiToolError } = require('./errors.js')
const { isRecord, setOwn } = require('./document.js')

const SCHEMA_KEYWORDS = new Set(['items', 'additionalProperties', 'not', 'if', 'then', 'else', 'contains', 'propertyNames', 'unevaluatedProperties', 'unevaluatedItems', 'contentSchema'])
const SCHEMA_MAP_KEYWORDS = new Set(['properties', 'patternProperties', 'dependentSchemas', '$defs', 'definitions'])
const SCHEMA_LIST_KEYWORDS = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems'])
const MAX_SCHEMA_NODES = 262144

function schemaError(message) {
  return new OpenApiToolError('ERR_PRISM_OPENAPI_SCHEMA_BOUNDS', message)
}

/** The value at a `#/…` JSON pointer of the document, or undefined. */
function resolvePointer(doc, pointer) {
  let current = doc
  for (const raw of pointer.slice(2).split('/')) {
    const part = raw.replace(/~1/g, '/').replace(/~0/g, '~')
    if (!isRecord(current) && !Array.isArray(current)) return undefined
    if (!Object.prototype.hasOwnProperty.call(current, part)) return undefined
    current = current[part]
  }
  return current
}

/**
 * A resolver of one compile: `schema(value, where)` inlines refs; `component(value, where)` follows a
 * `$ref` of a parameter or request body to its target. `where` names the place in errors.
 */
function createSchemaResolver(doc, limits) {
  let refs = 0
  let nodes = 0

  function follow(ref, where) {
    if (++refs > limits.maxRefs) throw schemaError(`${where}: schemas exceed maxRefs (${limits.maxRefs})`)
    if (!ref.startsWith('#/')) throw schemaError(`${where}: external $ref is unsupported: ${ref}`)
    const target = resolvePointer(doc, ref)
    if (target === undefined) throw schemaError(`${where}: unresolvable $ref: ${ref}`)
    return target
  }

  function resolve(value, where, depth, expanding) {
    if (depth > limits.maxSchemaDepth) throw schemaError(`${where}: schema exceeds maxSchemaDepth (${limits.maxSchemaDepth})`)
    if (++nodes > MAX_SCHEMA_NODES) throw schemaError(`${where}: schemas exceed ${MAX_SCHEMA_NODES} nodes once refs are inlined`)
    if (typeof value === 'boolean') return value
    if (!isRecord(value)) throw schemaError(`${where}: a schema must be an object or a boolean`)
    let target
    let nextExpanding = expanding
    if (typeof value.$ref === 'string') {
      if (expanding.includes(value.$ref)) throw schemaError(`${where}: $ref cycle at ${value.$ref}`)
      nextExpanding = [...expanding, value.$ref]
      target = resolve(follow(value.$ref, where), where, depth + 1, nextExpanding)
    }
    const out = {}
    for (const key of Object.keys(value)) {
      if (key === '$ref') continue
      const child = value[key]
      if (SCHEMA_LIST_KEYWORDS.has(key) && Array.isArray(child)) {
        setOwn(out, key, child.map((item) => resolve(item, where, depth + 1, nextExpanding)))
      } else if (SCHEMA_MAP_KEYWORDS.has(key) && isRecord(child)) {
        const mapped = {}
        for (const name of Object.keys(child)) setOwn(mapped, name, resolve(child[name], where, depth + 1, nextExpanding))
        setOwn(out, key, mapped)
      } else if (SCHEMA_KEYWORDS.has(key) && (isRecord(child) || typeof child === 'boolean')) {
        setOwn(out, key, resolve(child, where, depth + 1, nextExpanding))
      } else {
        setOwn(out, key, child)
      }
    }
    if (target === undefined) return out
    // A `$ref` beside other keywords (allowed in OpenAPI 3.1): both apply, so the target joins `allOf`.
    if (Object.keys(out).length === 0) return target
    out.allOf = Array.isArray(out.allOf) ? [...out.allOf, target] : [target]
    return out
  }

  return {
    schema: (value, where) => resolve(value === undefined ? {} : value, where, 0, []),
    component(value, where) {
      let current = value
      for (let hops = 0; isRecord(current) && typeof current.$ref === 'string'; hops++) {
        if (hops >= limits.maxSchemaDepth) throw schemaError(`${where}: $ref chain exceeds maxSchemaDepth (${limits.maxSchemaDepth})`)
        current = follow(current.$ref, where)
      }
      return current
    },
  }
}

module.exports = { createSchemaResolver, schemaError }
