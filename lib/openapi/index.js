'use strict'
// `prism-tools-native/openapi`: allow-listed OpenAPI 3.1 operations as bounded tool definitions, with
// `@arnilo/prism-openapi-tools`' names, options, limits and error codes (docs/openapi.md). Each argument
// schema is checked by this package's JSON Schema validator when the tools are made, and a call's
// arguments are checked against it unless dispatch's own validator already did. Requests go through the
// secure fetch (lib/mcp/pinned-fetch.js): every address a name resolves to must be public (loopback only
// with `allowLoopbackHttp: true`), and the connection goes to the checked address.
const { OpenApiToolError, OPENAPI_ERROR_CODES } = require('./errors.js')
const { DEFAULT_OPENAPI_LIMITS, HARD_OPENAPI_LIMITS, resolveOpenApiLimits } = require('./limits.js')
const { compileOpenApiDocument } = require('./compile.js')
const { pinnedServer, documentError } = require('./document.js')
const { executeOperation } = require('./execute.js')
const { argumentError } = require('./request.js')
const { createPinnedFetch } = require('../mcp/pinned-fetch.js')
const { isLoopbackHostname, isNonPublicHostname, normalizeHostname } = require('../mcp/address.js')
const { checkedArguments, createJsonSchemaArgumentValidator, createJsonSchemaToolArgumentValidator } = require('../validation.js')

// One engine checks the schemas when tools are made (a refused schema is told apart from a value that
// does not match); the tool validator checks calls, caching each tool's compiled schema.
let sharedValidator
function validator() {
  if (!sharedValidator) sharedValidator = createJsonSchemaArgumentValidator({ maxErrors: 4 })
  return sharedValidator
}
let sharedToolValidator
function toolValidator() {
  if (!sharedToolValidator) sharedToolValidator = createJsonSchemaToolArgumentValidator({ maxErrors: 4 })
  return sharedToolValidator
}

function issuesText(errors) {
  return errors.map((e) => (e.path ? `${e.path}: ${e.message}` : e.message)).join('; ')
}

/** Each argument schema compiles in this package's validator; a schema it refuses names its operation. */
function checkSchema(operation) {
  const result = validator().validate(operation.parameters, {})
  const refusals = result.ok ? [] : result.errors.filter((e) => e.path === undefined)
  if (refusals.length > 0) {
    throw new OpenApiToolError('ERR_PRISM_OPENAPI_SCHEMA_BOUNDS', `argument schema of ${operation.operationId} is refused: ${issuesText(refusals)}`)
  }
}

function checkedArgumentsOf(tool, args, context) {
  const checked = context ? checkedArguments.get(context) : undefined
  if (checked !== undefined && checked[0] === tool.parameters && checked[1] === args) return args
  if (args === null || typeof args !== 'object' || Array.isArray(args)) throw argumentError(`arguments of ${tool.name} must be an object`)
  const refusal = toolValidator()(tool, args, undefined)
  if (refusal !== undefined) throw argumentError(`arguments of ${tool.name} do not match its schema: ${typeof refusal === 'string' ? refusal : refusal.message}`)
  return args
}

function optionalFunction(options, key) {
  const value = options[key]
  if (value !== undefined && typeof value !== 'function') throw documentError(`${key} must be a function`)
  return value
}

function checkedPagination(pagination) {
  if (pagination === undefined) return undefined
  if (pagination === null || typeof pagination !== 'object' || typeof pagination.pageParam !== 'string' || pagination.pageParam === '') {
    throw documentError('pagination.pageParam must be a non-empty string')
  }
  for (const key of ['pageSizeParam', 'nextPath', 'itemsPath']) {
    if (pagination[key] !== undefined && (typeof pagination[key] !== 'string' || pagination[key] === '')) throw documentError(`pagination.${key} must be a non-empty string`)
  }
  if (pagination.pageSize !== undefined && !(Number.isSafeInteger(pagination.pageSize) && pagination.pageSize > 0)) {
    throw documentError('pagination.pageSize must be a positive safe integer')
  }
  return { ...pagination }
}

// The secure fetch words its refusals (lib/mcp/pinned-fetch.js); an address refused is told apart from a
// transport failure by them, and __test__/openapi.test.ts checks each refusal keeps this code.
function addressError(message, cause) {
  const text = String(message).replace(/^MCP /, 'OpenAPI ')
  // A name that did not resolve may resolve on a retry; an address refused stays refused.
  if (/could not be resolved/.test(text)) return new Error(text, cause === undefined ? undefined : { cause })
  if (/address|resolved/.test(text)) return new OpenApiToolError('ERR_PRISM_OPENAPI_ADDRESS', text, cause === undefined ? undefined : { cause })
  return new Error(text, cause === undefined ? undefined : { cause })
}

/**
 * The fetch requests go through: the host's `fetch` as given (its DNS and addresses are its own to
 * check), else the secure fetch, whose refusal of a non-public server host is known before any request.
 */
function requestFetch(options, base) {
  if (options.fetch !== undefined) {
    if (typeof options.fetch !== 'function') throw documentError('fetch must be a function')
    const hostFetch = options.fetch
    return (url, init) => hostFetch(url.href, init)
  }
  const allowLoopback = options.allowLoopbackHttp === true
  const host = normalizeHostname(base.hostname)
  if (isNonPublicHostname(host) && !(allowLoopback && isLoopbackHostname(host))) {
    const hint = isLoopbackHostname(host) ? ' (set allowLoopbackHttp: true to allow loopback)' : ''
    throw new OpenApiToolError('ERR_PRISM_OPENAPI_ADDRESS', `server host ${host} is not a public address${hint}`)
  }
  const resolver = optionalFunction(options, 'resolveHostname')
  return createPinnedFetch({ resolver: resolver ?? undefined, allowLoopback, fail: addressError })
}

/** Compile the allow-listed operations of `options.document` into tool definitions. */
function createOpenApiTools(options) {
  if (options === null || typeof options !== 'object') throw documentError('createOpenApiTools options must be an object')
  const limits = resolveOpenApiLimits(options.limits ?? {})
  const base = pinnedServer(options.server)
  const pagination = checkedPagination(options.pagination)
  if (options.redactor !== undefined && (options.redactor === null || typeof options.redactor.redact !== 'function')) {
    throw documentError('redactor must have a redact(text) method')
  }
  const shared = {
    base,
    limits,
    pagination,
    fetch: requestFetch(options, base),
    credentials: optionalFunction(options, 'credentials'),
    policy: optionalFunction(options, 'policy'),
    redactor: options.redactor,
    idempotencyKeyHeader: options.idempotencyKeyHeader === true,
  }
  const compiled = compileOpenApiDocument({ document: options.document, operations: options.operations, pinned: base, limits, pagination })
  return compiled.map((operation) => {
    checkSchema(operation)
    const run = { ...shared, operation }
    const tool = {
      name: operation.toolName,
      description: operation.description,
      parameters: operation.parameters,
      effect: operation.effect,
      async execute(args, context = {}) {
        return executeOperation(run, checkedArgumentsOf(tool, args, context), context)
      },
    }
    return tool
  })
}

module.exports = {
  createOpenApiTools,
  OpenApiToolError,
  OPENAPI_ERROR_CODES,
  DEFAULT_OPENAPI_LIMITS,
  HARD_OPENAPI_LIMITS,
  resolveOpenApiLimits,
  packageName: 'prism-tools-native/openapi',
}
