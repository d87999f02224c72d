'use strict'
// Building one HTTP request of a compiled operation from checked arguments: the URL (path parameters
// percent-encoded, query parameters form-style), the headers and the JSON body, each bounded.
const { OpenApiToolError } = require('./errors.js')
const { setOwn } = require('./document.js')

// Header values may not carry CR, LF or NUL (request splitting) nor other control characters.
const BAD_HEADER_VALUE = /[\u0000-\u0008\u000a-\u001f\u007f]/

/** An argument by name, own properties only (a parameter named `__proto__` or `constructor` is data). */
function own(args, name) {
  return Object.prototype.hasOwnProperty.call(args, name) ? args[name] : undefined
}

function argumentError(message) {
  return new OpenApiToolError('ERR_PRISM_OPENAPI_ARGUMENTS', message)
}

/** A scalar argument as text; an array (allowed for query parameters) is handled by the caller. */
function scalarText(value, where) {
  if (typeof value === 'string') return value
  if (typeof value === 'number' || typeof value === 'boolean') return String(value)
  throw argumentError(`${where} must be a string, number or boolean, not ${value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value}`)
}

function requestUrl(operation, base, args, credentialQuery) {
  let path = operation.path
  for (const name of operation.pathParams) {
    const value = own(args, name)
    if (value === undefined) throw argumentError(`missing path parameter: ${name}`)
    path = path.split(`{${name}}`).join(encodeURIComponent(scalarText(value, `path parameter ${name}`)))
  }
  const url = new URL(`${base.href.replace(/\/+$/, '')}${path}`)
  for (const { name, explode } of operation.query) {
    const value = own(args, name)
    if (value === undefined || value === null) continue
    if (Array.isArray(value)) {
      const texts = value.map((item, i) => scalarText(item, `query parameter ${name}[${i}]`))
      if (explode) for (const text of texts) url.searchParams.append(name, text)
      else url.searchParams.set(name, texts.join(','))
    } else url.searchParams.set(name, scalarText(value, `query parameter ${name}`))
  }
  if (credentialQuery) for (const [key, value] of Object.entries(credentialQuery)) url.searchParams.set(key, value)
  return url
}

function requestHeaders(operation, args, credentialHeaders, idempotencyKey) {
  const headers = {}
  for (const { name } of operation.headers) {
    const value = own(args, name)
    if (value === undefined || value === null) continue
    const text = Array.isArray(value) ? value.map((item, i) => scalarText(item, `header ${name}[${i}]`)).join(',') : scalarText(value, `header ${name}`)
    if (BAD_HEADER_VALUE.test(text)) throw argumentError(`header ${name} contains a control character`)
    setOwn(headers, name, text)
  }
  if (operation.body !== undefined && own(args, operation.body.name) !== undefined) headers['content-type'] = operation.body.mediaType
  if (idempotencyKey !== undefined && operation.effect.kind !== 'none') headers['idempotency-key'] = idempotencyKey
  if (credentialHeaders) for (const [key, value] of Object.entries(credentialHeaders)) setOwn(headers, key, value)
  return headers
}

function requestBody(operation, args, maxBodyBytes) {
  if (operation.body === undefined) return undefined
  const value = own(args, operation.body.name)
  if (value === undefined) return undefined
  const text = JSON.stringify(value)
  if (Buffer.byteLength(text, 'utf8') > maxBodyBytes) {
    throw new OpenApiToolError('ERR_PRISM_OPENAPI_RESPONSE_BOUNDS', `request body exceeds maxBodyBytes (${maxBodyBytes})`)
  }
  return text
}

/** What a credential resolver returned, checked: `{ headers?, query? }` of string values. */
function checkedCredential(value) {
  if (value === undefined || value === null) return undefined
  if (typeof value !== 'object') throw argumentError('credentials must return { headers?, query? } or undefined')
  for (const key of ['headers', 'query']) {
    const record = value[key]
    if (record === undefined) continue
    if (record === null || typeof record !== 'object') throw argumentError(`credentials ${key} must be an object of strings`)
    for (const [name, text] of Object.entries(record)) {
      if (typeof text !== 'string') throw argumentError(`credentials ${key} value for ${name} must be a string`)
      if (key === 'headers' && BAD_HEADER_VALUE.test(text)) throw argumentError(`credentials header ${name} contains a control character`)
    }
  }
  return value
}

module.exports = { requestUrl, requestHeaders, requestBody, checkedCredential, argumentError }
