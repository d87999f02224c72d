'use strict'
// Reading an OpenAPI document: its byte and shape bounds, the pinned server and every `servers` entry
// that must share its origin, and the allow-listed operations found by operationId.
const { OpenApiToolError } = require('./errors.js')
const { measureBoundedJson } = require('../mcp/json-bounds.js')
const { isLoopbackHostname } = require('../mcp/address.js')

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']
// The document is walked once to bound it; deeper nesting than this is no OpenAPI document.
const MAX_DOCUMENT_DEPTH = 512

function documentError(message) {
  return new OpenApiToolError('ERR_PRISM_OPENAPI_DOCUMENT_BOUNDS', message)
}

function isRecord(value) {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/**
 * `target[key] = value` as an own, enumerable property whatever the key: a document's names are data,
 * and `__proto__` assigned plainly would set the prototype instead and lose the entry.
 */
function setOwn(target, key, value) {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true })
}

/** The document as a plain object, within `maxDocumentBytes` of JSON text, acyclic and of bounded depth. */
function parseDocument(document, maxDocumentBytes) {
  let parsed = document
  if (typeof document === 'string') {
    if (Buffer.byteLength(document, 'utf8') > maxDocumentBytes) throw documentError(`document exceeds maxDocumentBytes (${maxDocumentBytes})`)
    try {
      parsed = JSON.parse(document)
    } catch {
      throw documentError('document is not valid JSON')
    }
  }
  if (!isRecord(parsed)) throw documentError('document must be a JSON object')
  try {
    measureBoundedJson(parsed, { maxBytes: maxDocumentBytes, maxDepth: MAX_DOCUMENT_DEPTH, maxProperties: maxDocumentBytes, label: 'document' })
    // A host object becomes data once, so a getter or a later change cannot make the document read
    // differently from what was bounded.
    if (typeof document !== 'string') parsed = JSON.parse(JSON.stringify(parsed))
  } catch (error) {
    // The walk's own wording (`document exceeds N bytes`, `… contains a cycle`), under this package's code.
    const message = error instanceof Error ? error.message : String(error)
    throw documentError(message.replace(/ (\d+) bytes$/, ' maxDocumentBytes ($1)'))
  }
  if (typeof parsed.openapi !== 'string' || !parsed.openapi.startsWith('3.1')) {
    throw documentError('only OpenAPI 3.1 documents are supported')
  }
  if (!isRecord(parsed.paths)) throw documentError('document paths must be an object')
  return parsed
}

/** The pinned base URL: absolute, no credentials or fragment, https (http only for a loopback host). */
function pinnedServer(value) {
  if (typeof value !== 'string') throw documentError('server must be an absolute URL string')
  let url
  try {
    url = new URL(value)
  } catch {
    throw documentError('server is not an absolute URL')
  }
  if (url.username || url.password) throw documentError('server must not embed credentials')
  if (url.hash) throw documentError('server must not contain a fragment')
  if (url.search) throw documentError('server must not contain a query')
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackHostname(url.hostname))) {
    throw documentError('server must be https (http allowed only for loopback hosts)')
  }
  return url
}

function driftError(message) {
  return new OpenApiToolError('ERR_PRISM_OPENAPI_SERVER_DRIFT', message)
}

/** Each entry of a `servers` list (absent is fine) resolves, against the pinned base, to the pinned origin. */
function checkServers(servers, pinned, label) {
  if (servers === undefined) return
  if (!Array.isArray(servers) || servers.length === 0) throw driftError(`${label} must be a non-empty array`)
  for (const entry of servers) {
    const raw = isRecord(entry) ? entry.url : undefined
    if (typeof raw !== 'string' || raw === '') throw driftError(`${label} has an entry without a url`)
    let resolved
    try {
      resolved = new URL(raw, pinned)
    } catch {
      throw driftError(`${label} has an invalid url`)
    }
    if (resolved.origin !== pinned.origin) {
      throw driftError(`${label} origin ${resolved.origin} differs from pinned server origin ${pinned.origin}`)
    }
  }
}

/** Every operation of the document with an operationId, by id; a repeated id is refused. */
function operationsById(doc, pinned) {
  const byId = new Map()
  for (const [path, pathItem] of Object.entries(doc.paths)) {
    if (!isRecord(pathItem)) continue
    checkServers(pathItem.servers, pinned, `servers of path ${path}`)
    for (const method of HTTP_METHODS) {
      const operation = pathItem[method]
      if (!isRecord(operation)) continue
      const id = operation.operationId
      if (typeof id !== 'string' || id === '') continue
      if (byId.has(id)) throw documentError(`duplicate operationId: ${id}`)
      byId.set(id, { method: method.toUpperCase(), path, operation, pathItem })
    }
  }
  return byId
}

module.exports = { parseDocument, pinnedServer, checkServers, operationsById, isRecord, setOwn, documentError }
