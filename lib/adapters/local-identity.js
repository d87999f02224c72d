'use strict'
// The local identity: what a single-process program (a CLI, a script, a desktop agent) passes where a
// durable effect or an owned checkpoint needs a verified identity, without an authentication layer.
// It is marked twice — tenant `local:<host>` and principal kind `local` — so it can never be taken for a
// tenant that an authentication layer verified (docs/approval.md § The local identity): such a layer
// issues neither the `local:` tenant prefix nor the `local` principal kind.

const os = require('node:os')
const { adapterError } = require('./harness.js')

const LOCAL_TENANT_PREFIX = 'local:'

function osUser() {
  try {
    return os.userInfo().username || 'user'
  } catch {
    return 'user'
  }
}

/**
 * `{ tenantId: "local:<host>", userId: <user>, principal: { kind: "local", id: <user> }, scopes,
 * issuedAt, verified: true, metadata: { localIdentity: true } }`. `options.user` / `options.host`
 * replace the OS user and host name (the records of one are the other's only when both match).
 *
 * @param {{ user?: string, host?: string, scopes?: string[] }} [options]
 */
function localIdentity(options = {}) {
  if (options === null || typeof options !== 'object') throw adapterError(TypeError, 'localIdentity: options must be an object { user?, host?, scopes? }', 'ERR_PRISM_INVALID_OPTION')
  const user = options.user ?? osUser()
  const host = options.host ?? os.hostname()
  for (const [k, v] of [['user', user], ['host', host]]) {
    if (typeof v !== 'string' || v === '' || v.length > 128) throw adapterError(TypeError, `localIdentity: options.${k} must be a string of 1 to 128 characters`, 'ERR_PRISM_INVALID_OPTION')
  }
  const scopes = options.scopes ?? ['tools:execute']
  return {
    tenantId: `${LOCAL_TENANT_PREFIX}${host}`,
    userId: user,
    principal: { kind: 'local', id: user },
    scopes: [...scopes],
    issuedAt: new Date().toISOString(),
    verified: true,
    metadata: { localIdentity: true },
  }
}

/** Whether `identity` is a local identity (tenant `local:…` or principal kind `local`). */
function isLocalIdentity(identity) {
  if (identity === null || typeof identity !== 'object') return false
  const tenant = typeof identity.tenantId === 'string' && identity.tenantId.startsWith(LOCAL_TENANT_PREFIX)
  const kind = identity.principal !== null && typeof identity.principal === 'object' && identity.principal.kind === 'local'
  return tenant || kind
}

module.exports = { localIdentity, isLocalIdentity, LOCAL_TENANT_PREFIX }
