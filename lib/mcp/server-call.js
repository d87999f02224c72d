'use strict'
// One MCP call on the server side: the concurrency bound, the host's `authorize` (identity from the
// transport's authentication), the deadline, the client's cancel, ids for dispatch and effect keys,
// and tool progress sent back as `notifications/progress`.
const { randomUUID } = require('node:crypto')
const native = require('../../index.js')
const { createProgressRelay } = require('./progress.js')
const { mcpError } = require('./server-tools.js')
const { SERVER_LIMITS, serverError, validCapabilityId, errorMessage } = require('./server-limits.js')

const FORBIDDEN = 'ERR_PRISM_MCP_FORBIDDEN'

function jsonObject(value) {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return {}
  return value
}

/** A controller aborted when `signal` aborts; `dispose()` detaches it. */
function linkedController(signal) {
  const controller = new AbortController()
  const abort = () => controller.abort(signal.reason)
  if (signal?.aborted) abort()
  else signal?.addEventListener('abort', abort, { once: true })
  return { controller, signal: controller.signal, dispose: () => signal?.removeEventListener('abort', abort) }
}

/** The host's decision, checked: `allowed: true`, and an identity active and within the ownership. */
function checkedAuthorization(decision) {
  if (!decision || typeof decision !== 'object' || decision.allowed !== true) return false
  if (decision.identity !== undefined) {
    native.assertIdentityActive(decision.identity)
    if (decision.ownership !== undefined) native.assertIdentityMatchesOwnership(decision.identity, decision.ownership)
  }
  return decision
}

/** The host's `authorize` for one capability use (the request's auth info and session), false when refused or thrown. */
async function authorizeCall(authorize, kind, name, args, extra, signal) {
  const input = { kind, name, arguments: args, authInfo: extra.authInfo, sessionId: extra.sessionId, signal }
  try {
    return checkedAuthorization(await authorize(input)) || false
  } catch {
    return false
  }
}

/**
 * Ids of one call. `_meta["prism/toolCallId"]` (and optionally `prism/runId`, `prism/sessionId`) lets a
 * client retry a call under the same effect key; without it each request gets a fresh id, so two
 * requests never share a claim by accident. A named call without `prism/sessionId` uses the session
 * `mcp` (not the transport's), so a retry over a new connection finds its claim. Ids must be upstream's
 * capability ids (128 characters).
 */
function callIds(extra) {
  const meta = jsonObject(extra._meta)
  const pick = (key) => {
    const value = meta[key]
    if (value === undefined) return undefined
    if (!validCapabilityId(value)) throw serverError(`Invalid _meta["${key}"]: expected an id of at most 128 characters [A-Za-z0-9._:-]`, 'ERR_PRISM_MCP_CALL_ID')
    return value
  }
  const named = pick('prism/toolCallId')
  const toolCallId = named ?? `mcp-${randomUUID()}`
  return {
    toolCallId,
    runId: pick('prism/runId') ?? toolCallId,
    // A call the client named is the same call in any transport session (a retry after reconnecting).
    sessionId: pick('prism/sessionId') ?? (named === undefined ? extra.sessionId : undefined) ?? 'mcp',
    requestId: String(extra.requestId),
  }
}

/** `ctx.progress` for dispatch, sending coalesced `notifications/progress` with the client's token. */
function progressSender(extra) {
  const token = jsonObject(extra._meta).progressToken
  if (token === undefined || typeof extra.sendNotification !== 'function') return undefined
  let last = 0
  const deliver = (value) => {
    let progress = typeof value.progress === 'number' && Number.isFinite(value.progress) ? value.progress : last + 1
    if (progress <= last) progress = last + 1
    last = progress
    const params = { progressToken: token, progress }
    if (typeof value.total === 'number' && Number.isFinite(value.total)) params.total = value.total
    if (typeof value.message === 'string') params.message = value.message
    extra.sendNotification({ method: 'notifications/progress', params }).catch(() => undefined)
  }
  const relay = createProgressRelay(deliver, undefined, undefined, {
    progressIntervalMs: SERVER_LIMITS.SERVER_PROGRESS_INTERVAL_MS,
    maxProgressUpdates: SERVER_LIMITS.MAX_SERVER_PROGRESS_UPDATES,
  })
  const progress = (value) => {
    if (typeof value === 'number') relay.onprogress({ progress: value })
    else if (value && typeof value === 'object') relay.onprogress(value)
    else if (typeof value === 'string') relay.onprogress({ message: value })
    else relay.onprogress({})
  }
  return { progress, relay }
}

/**
 * @returns {(kind: string, name: string, rawArgs: unknown, extra: object,
 *   execute: (args: object, authorization: object, signal: AbortSignal, ids: object, extra: object) => Promise<object>) => Promise<object>}
 */
function createCallRunner({ authorize, redactor, maxConcurrentCalls, callTimeoutMs, maxResultBytes }) {
  let activeCalls = 0
  return async function runCall(kind, name, rawArgs, extra, execute) {
    if (activeCalls >= maxConcurrentCalls) return mcpError('MCP server is busy', 'ERR_PRISM_MCP_CONCURRENCY', maxResultBytes)
    activeCalls += 1
    const args = jsonObject(rawArgs)
    const linked = linkedController(extra.signal)
    let timeout
    const execution = (async () => {
      const ids = callIds(extra)
      const authorization = await authorizeCall(authorize, kind, name, args, extra, linked.signal)
      if (!authorization) return mcpError('Forbidden', FORBIDDEN, maxResultBytes)
      linked.signal.throwIfAborted()
      return execute(args, authorization, linked.signal, ids, extra)
    })()
    void execution
      .finally(() => {
        activeCalls -= 1
        linked.dispose()
      })
      .catch(() => undefined)
    const timedOut = new Promise((_, reject) => {
      timeout = setTimeout(() => {
        const error = serverError(`MCP capability timed out after ${callTimeoutMs}ms`, 'ERR_PRISM_MCP_TIMEOUT')
        linked.controller.abort(error)
        reject(error)
      }, callTimeoutMs)
    })
    try {
      return await Promise.race([execution, timedOut])
    } catch (error) {
      const message = errorMessage(error)
      const safe = redactor ? redactor.redact(message) : message
      return mcpError(safe, error && error.code === 'ERR_PRISM_MCP_CALL_ID' ? error.code : 'ERR_PRISM_MCP_SERVER', maxResultBytes)
    } finally {
      clearTimeout(timeout)
    }
  }
}

/** Authorization of a resource read or a prompt; throws upstream's `ERR_PRISM_MCP_FORBIDDEN: Forbidden`. */
async function authorizeOrThrow(authorize, kind, name, args, extra) {
  const authorization = await authorizeCall(authorize, kind, name, args, extra, extra.signal)
  if (!authorization) throw serverError(`${FORBIDDEN}: Forbidden`, FORBIDDEN)
  return authorization
}

module.exports = { createCallRunner, authorizeOrThrow, progressSender, jsonObject, linkedController, checkedAuthorization }
