'use strict'
// Bounds of `prism-tools-native/openapi`: the defaults and hard caps of `@arnilo/prism-openapi-tools`.
const { OpenApiToolError } = require('./errors.js')

const MIB = 1024 * 1024

const DEFAULT_OPENAPI_LIMITS = Object.freeze({
  maxDocumentBytes: 2 * MIB,
  maxOperations: 256,
  maxSchemaDepth: 32,
  maxRefs: 1024,
  maxBodyBytes: MIB,
  maxResponseBytes: MIB,
  maxPages: 20,
  maxPaginationItems: 1000,
  maxRetries: 0,
})

const HARD_OPENAPI_LIMITS = Object.freeze({
  maxDocumentBytes: 16 * MIB,
  maxOperations: 1024,
  maxSchemaDepth: 128,
  maxRefs: 8192,
  maxBodyBytes: 16 * MIB,
  maxResponseBytes: 16 * MIB,
  maxPages: 100,
  maxPaginationItems: 10000,
  maxRetries: 3,
})

function boundsError(message) {
  return new OpenApiToolError('ERR_PRISM_OPENAPI_DOCUMENT_BOUNDS', message)
}

/** The limits in force: each given one a safe integer within [min, hard cap]; an unknown key is refused. */
function resolveOpenApiLimits(input = {}) {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) throw boundsError('openapi limits must be an object')
  const resolved = { ...DEFAULT_OPENAPI_LIMITS }
  for (const key of Object.keys(input)) {
    if (!Object.prototype.hasOwnProperty.call(HARD_OPENAPI_LIMITS, key)) throw boundsError(`openapi limit ${key} is not a known limit`)
    const value = input[key]
    if (value === undefined) continue
    const min = key === 'maxRetries' ? 0 : 1
    if (!Number.isSafeInteger(value) || value < min) throw boundsError(`openapi limit ${key} must be a safe integer >= ${min}`)
    if (value > HARD_OPENAPI_LIMITS[key]) throw boundsError(`openapi limit ${key} exceeds its hard cap ${HARD_OPENAPI_LIMITS[key]}`)
    resolved[key] = value
  }
  return Object.freeze(resolved)
}

module.exports = { DEFAULT_OPENAPI_LIMITS, HARD_OPENAPI_LIMITS, resolveOpenApiLimits }
