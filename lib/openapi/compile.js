'use strict'
// Compiling allow-listed operations of an OpenAPI 3.1 document into what a tool needs: a name, a
// description, one argument schema (path, query and header parameters and a JSON `body`, refs inlined),
// an effect from the HTTP method, and what the request is built from.
const { OpenApiToolError } = require('./errors.js')
const { parseDocument, checkServers, operationsById, isRecord, setOwn, documentError } = require('./document.js')
const { createSchemaResolver, schemaError } = require('./schema.js')
const { utf8Prefix } = require('../utf8.js')

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE'])
const MAX_DESCRIPTION_BYTES = 16 * 1024
const TOOL_NAME = /^[A-Za-z0-9][A-Za-z0-9._:-]*$/
// RFC 9110 token: what a header name may be.
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/

function toolNameOf(operationId) {
  const name = operationId.replace(/[^A-Za-z0-9._:-]/g, '_')
  if (!TOOL_NAME.test(name) || name.length > 128) throw documentError(`operationId cannot be represented as a tool name: ${operationId}`)
  return name
}

function effectOf(method) {
  return SAFE_METHODS.has(method) ? { kind: 'none', idempotency: 'none' } : { kind: 'external_mutation', idempotency: 'required' }
}

/** `application/json`, else the first `application/*+json` media type, else undefined. */
function jsonMediaType(content) {
  if (content['application/json'] !== undefined) return 'application/json'
  return Object.keys(content).find((key) => /^application\/[^/]*\+json$/i.test(key))
}

/** Path-item parameters, overridden by the operation's of the same `in` and name. */
function mergedParameters(ref, resolver, operationId) {
  const merged = new Map()
  for (const list of [ref.pathItem.parameters, ref.operation.parameters]) {
    if (list === undefined) continue
    if (!Array.isArray(list)) throw schemaError(`parameters of ${operationId} must be an array`)
    list.forEach((entry, i) => {
      const p = resolver.component(entry, `parameter ${i} of ${operationId}`)
      if (!isRecord(p) || typeof p.name !== 'string' || p.name === '' || typeof p.in !== 'string') {
        throw schemaError(`invalid parameter in operation ${operationId}`)
      }
      merged.set(`${p.in}:${p.name}`, p)
    })
  }
  return merged
}

function compileBody(ref, resolver, operationId) {
  const body = resolver.component(ref.operation.requestBody, `requestBody of ${operationId}`)
  if (!isRecord(body)) throw schemaError(`requestBody of ${operationId} is invalid`)
  if (!isRecord(body.content)) throw schemaError(`requestBody of ${operationId} has no content`)
  const media = jsonMediaType(body.content)
  if (media === undefined) throw schemaError(`requestBody of ${operationId} has no application/json content`)
  const entry = body.content[media]
  const schema = resolver.schema(isRecord(entry) ? entry.schema : undefined, `requestBody of ${operationId}`)
  return { name: 'body', schema, required: body.required === true, mediaType: media }
}

function compileOperation(ref, pinned, resolver, pagination) {
  const { method, path, operation } = ref
  const operationId = operation.operationId
  checkServers(operation.servers, pinned, `servers of operation ${operationId}`)
  const toolName = toolNameOf(operationId)
  const pathParams = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1])
  const params = mergedParameters(ref, resolver, operationId)
  for (const name of pathParams) {
    if (!params.has(`path:${name}`)) throw schemaError(`path parameter ${name} of ${operationId} has no declaration`)
  }
  const properties = {}
  const required = []
  const query = []
  const headers = []
  const addArgument = (name, schema, isRequired) => {
    if (Object.prototype.hasOwnProperty.call(properties, name)) throw schemaError(`duplicate argument name in ${operationId}: ${name}`)
    setOwn(properties, name, schema)
    if (isRequired) required.push(name)
  }
  for (const p of params.values()) {
    const where = `parameter ${p.name} of ${operationId}`
    if (p.in === 'cookie') throw schemaError(`cookie parameters are unsupported: ${p.name} of ${operationId}`)
    if (p.content !== undefined) throw schemaError(`parameter content is unsupported: ${p.name} of ${operationId}`)
    const schema = resolver.schema(p.schema, where)
    if (p.in === 'path') {
      if (!pathParams.includes(p.name)) throw schemaError(`path parameter ${p.name} of ${operationId} is not in its path ${path}`)
      addArgument(p.name, schema, true)
    } else if (p.in === 'query') {
      query.push({ name: p.name, explode: p.explode !== false })
      addArgument(p.name, schema, p.required === true)
    } else if (p.in === 'header') {
      if (!HEADER_NAME.test(p.name)) throw schemaError(`header parameter name is not a valid header name: ${p.name} of ${operationId}`)
      headers.push({ name: p.name })
      addArgument(p.name, schema, p.required === true)
    } else {
      throw schemaError(`parameter ${p.name} of ${operationId} has an unknown location: ${p.in}`)
    }
  }
  const body = ref.operation.requestBody === undefined ? undefined : compileBody(ref, resolver, operationId)
  if (body !== undefined) addArgument(body.name, body.schema, body.required)
  const parameters = { type: 'object', properties, ...(required.length > 0 ? { required } : {}), additionalProperties: false }
  const text = [operation.summary, operation.description].filter((s) => typeof s === 'string' && s !== '').join('\n\n')
  return {
    toolName,
    operationId,
    method,
    path,
    pathParams,
    query,
    headers,
    body,
    parameters,
    description: utf8Prefix(text, MAX_DESCRIPTION_BYTES),
    effect: effectOf(method),
    paginatable: pagination !== undefined && query.some((q) => q.name === pagination.pageParam),
  }
}

/** The compiled operations, in allow-list order. */
function compileOpenApiDocument({ document, operations, pinned, limits, pagination }) {
  const doc = parseDocument(document, limits.maxDocumentBytes)
  checkServers(doc.servers, pinned, 'document servers')
  if (!Array.isArray(operations)) throw documentError('operations must be an array of operationIds')
  if (operations.length > limits.maxOperations) throw documentError(`operations allow-list exceeds maxOperations (${limits.maxOperations})`)
  const byId = operationsById(doc, pinned)
  const resolver = createSchemaResolver(doc, limits)
  const names = new Set()
  return operations.map((operationId) => {
    if (typeof operationId !== 'string') throw documentError('operations must be an array of operationIds')
    const ref = byId.get(operationId)
    if (ref === undefined) throw new OpenApiToolError('ERR_PRISM_OPENAPI_OPERATION_UNKNOWN', `operationId not present in document: ${operationId}`)
    const compiled = compileOperation(ref, pinned, resolver, pagination)
    if (names.has(compiled.toolName)) throw documentError(`tool name collision after sanitization: ${compiled.toolName}`)
    names.add(compiled.toolName)
    return compiled
  })
}

module.exports = { compileOpenApiDocument }
