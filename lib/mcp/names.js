'use strict'
// Names of bridged tools. The default keeps upstream's `mcp:<serverId>:<tool>`; the provider-safe
// formatter yields names every major provider accepts (`^[a-zA-Z0-9_-]{1,64}$`, no colons).
const { createHash } = require('node:crypto')

const SAFE_NAME = /^[a-zA-Z0-9_-]{1,64}$/
const UNSAFE_CHARS = /[^a-zA-Z0-9_-]/g
const MAX_SAFE_NAME = 64
const HASH_CHARS = 8

function defaultMcpNamePrefix(serverId) {
  return `mcp:${serverId}:`
}

/** Upstream's formatter: the prefix followed by the remote name, unchanged. */
function formatMcpToolName(prefix, remoteName) {
  return `${prefix}${remoteName}`
}

function shortHash(text) {
  return createHash('sha256').update(text, 'utf8').digest('hex').slice(0, HASH_CHARS)
}

/**
 * A provider-safe name: the prefix with every character outside `[a-zA-Z0-9_-]` replaced by `_`, then
 * the remote name. A remote name that is already safe and fits is kept as it is; any other remote name
 * (a replaced character, or too long) keeps a readable safe prefix and ends in `_` plus 8 hex digits of
 * the SHA-256 of the original name. Distinct remote names therefore get distinct names: an unchanged
 * name never contains the hash suffix it would need to collide with a rewritten one unless the server
 * lists that exact string, which the bridge then reports as `McpToolNameCollisionError`.
 */
function formatProviderSafeMcpToolName(prefix, remoteName) {
  let safePrefix = String(prefix).replace(UNSAFE_CHARS, '_')
  // Leave room for at least a hash and a few readable characters.
  if (safePrefix.length > MAX_SAFE_NAME - HASH_CHARS - 5) safePrefix = safePrefix.slice(0, MAX_SAFE_NAME - HASH_CHARS - 5)
  const name = String(remoteName)
  const room = MAX_SAFE_NAME - safePrefix.length
  if (name.length > 0 && name.length <= room && !/[^a-zA-Z0-9_-]/.test(name)) return safePrefix + name
  const readable = name.replace(UNSAFE_CHARS, '_').slice(0, room - HASH_CHARS - 1)
  return `${safePrefix}${readable}_${shortHash(name)}`
}

function isProviderSafeToolName(name) {
  return typeof name === 'string' && SAFE_NAME.test(name)
}

function assertValidServerId(serverId) {
  if (typeof serverId !== 'string' || !/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(serverId) || serverId.length > 128) {
    throw new TypeError('serverId must be a non-empty identifier (letters, digits, ., _, -; must not start with . or -)')
  }
}

module.exports = {
  defaultMcpNamePrefix,
  formatMcpToolName,
  formatProviderSafeMcpToolName,
  isProviderSafeToolName,
  assertValidServerId,
}
