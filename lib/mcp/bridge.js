'use strict'
// The MCP tool bridge: the tools a server lists become `ToolDefinition`s whose `execute` sends
// `tools/call`. Listing is bounded (pages, tools, bytes, time), names go through a formatter and the
// host's allow/deny, schemas are checked by the package's JSON Schema validator, and every result is
// bounded and marked untrusted. A server that closes or breaks leaves the bridge `disconnected`, and
// every pending and later call ends with an error result instead of hanging.
const native = require('../../index.js')
const { checkedArguments } = require('../validation.js')
const { watchAbort, unwatchAbort } = require('../abort-watch.js')
const sdk = require('./sdk.js')
const L = require('./limits.js')
const { McpBridgeError, McpBridgeClosedError, McpToolNameCollisionError } = require('./errors.js')
const { measureBoundedJson, utf8Bytes, truncateUtf8 } = require('./json-bounds.js')
const { mapMcpContentToBlocks, summarizeMcpContent, boundedMcpErrorMessage, mcpCallError } = require('./content.js')
const { assertValidServerId, defaultMcpNamePrefix, formatMcpToolName } = require('./names.js')
const { createMcpTransport } = require('./transport.js')
const { sentHeadersOf } = require('./sent-headers.js')
const { createCallToolResultSchema } = require('./result-schema.js')
const { outputSchemaMismatch } = require('../output-schema.js')
const { createProgressRelay } = require('./progress.js')
const apps = require('./apps.js')
const { listPageSchema, toolRefusal, entryName, isValidatorError, describeIssues } = require('./shape.js')

const { createMcpCapabilityClient, CLIENT_INFO } = require('./client-capabilities.js')
const MAX_ERROR_BYTES = 8 * 1024
const EFFECT_KINDS = new Set(['none', 'local_mutation', 'external_mutation'])
const NO_PROGRESS = Symbol.for('prism-tools-native.noProgress')
const EFFECT_IDEMPOTENCY = new Set(['none', 'optional', 'required', 'tool_managed', 'unsupported'])
const UNTRUSTED = 'untrusted_external'
// Transport errors after which the connection cannot carry a pending call to its end. The SDK reports
// these only through `onerror`, so they are recognised by message.
const BROKEN_TRANSPORT = /SSE stream disconnected|Maximum reconnection attempts|ReadBuffer exceeded|MCP HTTP response exceeds/

// One validator for every bridge: its LRU keeps compiled schemas keyed by content.
let sharedValidator
function toolArgumentValidator() {
  if (!sharedValidator) sharedValidator = native.createJsonSchemaToolArgumentValidator()
  return sharedValidator
}
let sharedAdapter
function schemaAdapter() {
  if (!sharedAdapter) sharedAdapter = native.createJsonSchemaArgumentValidator({ maxErrors: 1 })
  return sharedAdapter
}

function bridgeError(message, code, cause) {
  return new McpBridgeError(message, { code, cause })
}

function assertStringBytes(label, value, maxBytes) {
  if (typeof value !== 'string') throw bridgeError(`${label} is not a string`, 'ERR_PRISM_MCP_PROTOCOL')
  if (utf8Bytes(value) > maxBytes) throw bridgeError(`${label} exceeds ${maxBytes} bytes`, 'ERR_PRISM_MCP_LIMIT')
}

/**
 * Every tool the server lists, through raw `tools/list` requests so the SDK never compiles a remote output
 * schema. Bounded by `maxListPages`, `maxTools`, `maxCursorBytes`, name/description/schema bytes, and
 * `connectTimeoutMs` for the whole listing, not per page. Tools whose own schema breaks a bound are left out
 * and reported through `onRejected`; crossing an aggregate bound fails the listing.
 */
async function listAllMcpTools(client, signal, input = {}, onRejected) {
  /** @type {Readonly<Record<string, any>>} */
  const limits = input && Object.isFrozen(input) && 'listCacheTtlMs' in input ? input : L.resolveMcpClientLimits(input)
  const { ToolSchema } = sdk.types()
  const listTimeout = limits.connectTimeoutMs ?? limits.callTimeoutMs
  const deadline = Date.now() + listTimeout
  const tools = []
  const seen = new Set()
  let cursor
  let pages = 0
  let totalSchemaBytes = 0
  let listedBefore = 0
  do {
    if (signal && signal.aborted) throw signal.reason ?? bridgeError('MCP tools/list aborted', 'ERR_PRISM_ABORTED')
    pages += 1
    if (pages > limits.maxListPages) throw bridgeError(`MCP tools/list exceeds ${limits.maxListPages} pages`, 'ERR_PRISM_MCP_LIMIT')
    const remaining = deadline - Date.now()
    if (remaining <= 0) throw bridgeError(`MCP tools/list exceeds ${listTimeout}ms`, 'ERR_PRISM_MCP_TIMEOUT')
    // The page is checked as a page; each tool alone, so one malformed tool never fails the listing.
    const page = await client.request({ method: 'tools/list', params: cursor ? { cursor } : undefined }, listPageSchema, {
      signal,
      timeout: remaining,
      maxTotalTimeout: remaining,
    })
    if (tools.length + page.tools.length > limits.maxTools) throw bridgeError(`MCP tools/list exceeds ${limits.maxTools} tools`, 'ERR_PRISM_MCP_LIMIT')
    for (let index = 0; index < page.tools.length; index++) {
      const listed = page.tools[index]
      let tool
      try {
        const name = listed !== null && typeof listed === 'object' ? listed.name : undefined
        if (typeof name === 'string') assertStringBytes('MCP tool name', name, limits.maxToolNameBytes)
        if (typeof name === 'string' && typeof listed.description === 'string') {
          assertStringBytes(`MCP tool ${name} description`, listed.description, limits.maxToolDescriptionBytes)
        }
        if (typeof name === 'string' && typeof listed.title === 'string') {
          assertStringBytes(`MCP tool ${name} title`, listed.title, limits.maxToolDescriptionBytes)
        }
        // Bounds first: a hostile schema costs at most the bound before anything else reads it.
        const bounds = { maxBytes: limits.maxToolSchemaBytes, maxDepth: limits.maxJsonDepth, maxProperties: limits.maxJsonProperties }
        let bytes = 0
        if (typeof name === 'string' && listed.inputSchema !== undefined) {
          bytes = measureBoundedJson(listed.inputSchema, { ...bounds, label: `MCP tool ${name} input schema` }).bytes
          if (listed.outputSchema !== undefined) {
            bytes += measureBoundedJson(listed.outputSchema, { ...bounds, maxBytes: Math.max(1, bounds.maxBytes - bytes), label: `MCP tool ${name} output schema` }).bytes
          }
        }
        const out = {}
        const refusal = toolRefusal(listed, listedBefore + index, ToolSchema, out)
        if (refusal !== undefined) throw bridgeError(refusal, 'ERR_PRISM_MCP_INVALID_TOOL')
        tool = out.tool
        totalSchemaBytes += bytes
      } catch (error) {
        if (typeof onRejected !== 'function') throw error
        onRejected({ remoteName: entryName(listed, listedBefore + index), reason: error.message })
        continue
      }
      if (totalSchemaBytes > limits.maxTotalToolSchemaBytes) {
        throw bridgeError(`MCP tool schemas exceed ${limits.maxTotalToolSchemaBytes} aggregate bytes`, 'ERR_PRISM_MCP_LIMIT')
      }
      tools.push(tool)
    }
    listedBefore += page.tools.length
    const next = page.nextCursor || undefined
    if (next) {
      assertStringBytes('MCP tools/list cursor', next, limits.maxCursorBytes)
      if (seen.has(next)) throw bridgeError('MCP tools/list repeated a pagination cursor', 'ERR_PRISM_MCP_PROTOCOL')
      seen.add(next)
    }
    cursor = next
  } while (cursor)
  return tools
}

/** The effect and `exclusive` flag of a remote tool: the host's `effect` policy wins over annotations. */
function remoteToolEffect(remote, serverId, policy, useAnnotations) {
  if (typeof policy === 'function') {
    const declared = policy({ serverId, remoteName: remote.name })
    if (declared !== undefined) {
      if (
        declared === null ||
        typeof declared !== 'object' ||
        !EFFECT_KINDS.has(declared.kind) ||
        !EFFECT_IDEMPOTENCY.has(declared.idempotency) ||
        (declared.kind === 'none' && declared.idempotency !== 'none')
      ) {
        throw bridgeError('MCP tool effect policy returned an invalid declaration', 'ERR_PRISM_MCP_EFFECT')
      }
      const effect = Object.freeze({ kind: declared.kind, idempotency: declared.idempotency })
      return { effect, exclusive: effect.kind !== 'none' }
    }
  }
  const hints = useAnnotations && remote.annotations && typeof remote.annotations === 'object' ? remote.annotations : {}
  if (hints.readOnlyHint === true) return { effect: Object.freeze({ kind: 'none', idempotency: 'none' }), exclusive: false }
  // MCP's defaults: a tool that is not read-only is destructive unless it says otherwise. A destructive
  // tool runs alone in a parallel turn. `idempotentHint` never makes a call claimable on its own: a claim
  // needs a verified identity, and an untrusted hint must not make dispatch demand one — a host opts in
  // through its `effect` policy.
  const destructive = hints.destructiveHint !== false
  return { effect: Object.freeze({ kind: 'external_mutation', idempotency: 'unsupported' }), exclusive: destructive }
}

/**
 * Maps listed tools to `ToolDefinition`s. `context.callRemoteTool(remoteName, args, ctx, mappedName)` runs
 * a call; `formatName` (default `formatMcpToolName`) names them. Two remote tools with one mapped name throw
 * `McpToolNameCollisionError`.
 */
function mapMcpToolsToDefinitions(remoteTools, context) {
  const format = typeof context.formatName === 'function' ? context.formatName : formatMcpToolName
  const seen = new Set()
  const out = []
  for (const remote of remoteTools) {
    const name = format(context.namePrefix, remote.name)
    if (typeof name !== 'string' || name.length === 0) throw bridgeError(`MCP tool name formatter returned no name for ${remote.name}`, 'ERR_PRISM_MCP_NAME')
    if (seen.has(name)) throw new McpToolNameCollisionError(name, remote.name)
    seen.add(name)
    const { effect, exclusive } = context.effectForRemoteTool
      ? { effect: context.effectForRemoteTool(remote), exclusive: undefined }
      : remoteToolEffect(remote, context.serverId, undefined, true)
    const remoteName = remote.name
    const tool = {
      name,
      description: remote.description,
      parameters: remote.inputSchema,
      effect,
      mcp: Object.freeze({ serverId: context.serverId, remoteName, annotations: remote.annotations }),
      execute(args, ctx) {
        if (context.isClosed && context.isClosed()) throw new McpBridgeClosedError()
        return context.callRemoteTool(remoteName, args, ctx, name)
      },
    }
    if (exclusive !== undefined) tool.exclusive = exclusive
    // The remote contract, kept: this tool served on (createPrismMcpServer) says what the server said,
    // and a result's `structuredContent` is checked against `outputSchema` (mapCallResult).
    if (typeof remote.title === 'string') tool.title = remote.title
    if (remote.outputSchema !== undefined) tool.outputSchema = remote.outputSchema
    if (remote.annotations !== undefined) tool.annotations = remote.annotations
    out.push(tool)
  }
  return out
}

function errorResult(ctx, name, message, code, metadata) {
  return { toolCallId: ctx.toolCallId, name, error: mcpCallError(message, code), metadata }
}

function isConnectionClosed(error) {
  return error && typeof error === 'object' && error.code === -32000 && /Connection closed/.test(String(error.message))
}

function isTimeout(error) {
  return error && typeof error === 'object' && error.code === -32001
}

function createState(client, transport, options, ownsClient) {
  assertValidServerId(options.serverId)
  const limits = L.resolveMcpClientLimits(options)
  if (options.formatName !== undefined && typeof options.formatName !== 'function') throw new TypeError('formatName must be a function')
  const filter = options.allow !== undefined || options.deny !== undefined ? { allow: options.allow, deny: options.deny } : undefined
  return {
    client,
    transport,
    // The header values this connection's requests carried, kept out of errors and results.
    sent: sentHeadersOf(transport),
    ownsClient,
    serverId: options.serverId,
    namePrefix: options.namePrefix ?? defaultMcpNamePrefix(options.serverId),
    formatName: options.formatName ?? formatMcpToolName,
    limits,
    filter,
    effect: options.effect,
    annotations: options.annotations !== false,
    validateArguments: options.validateArguments !== false,
    onToolsChanged: options.onToolsChanged,
    mcpApps: options.mcpApps === true,
    appTools: Object.freeze([]),
    appByName: new Map(),
    tools: [],
    byName: new Map(),
    remoteTools: [],
    rejectedTools: [],
    status: 'connected',
    error: undefined,
    listFetchedAt: 0,
    refreshing: undefined,
    refreshQueued: false,
  }
}

function markDisconnected(state, reason) {
  if (state.status !== 'connected') return
  state.status = 'disconnected'
  state.error = reason
  // The transport is gone or broken: closing it makes the SDK reject every pending request, kills a
  // stdio server, and leaks nothing.
  Promise.resolve()
    .then(() => state.transport.close())
    .catch(() => {})
}

function hookClient(state) {
  const { client } = state
  const previousClose = client.onclose
  const previousError = client.onerror
  let lastError
  client.onclose = () => {
    try {
      previousClose?.()
    } catch {}
    markDisconnected(state, lastError ? `connection closed (${lastError})` : 'connection closed')
  }
  client.onerror = (error) => {
    try {
      previousError?.(error)
    } catch {}
    lastError = boundedMcpErrorMessage(redactSent(state, error), 512)
    // A Streamable HTTP stream that broke mid-call is not retried (maxRetries 0): its calls cannot finish.
    if (BROKEN_TRANSPORT.test(lastError)) markDisconnected(state, lastError)
  }
  const { ToolListChangedNotificationSchema } = sdk.types()
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    state.listFetchedAt = 0
    scheduleRefresh(state)
  })
}

function scheduleRefresh(state) {
  if (state.status !== 'connected') return
  if (state.refreshing) {
    state.refreshQueued = true
    return
  }
  refreshTools(state).catch((error) => {
    state.lastRefreshError = boundedMcpErrorMessage(redactSent(state, error), MAX_ERROR_BYTES)
  })
}

/** Re-lists, maps and filters; replaces the tool set only when the whole refresh succeeds. */
async function refreshTools(state, signal) {
  if (state.status === 'closed') throw new McpBridgeClosedError()
  if (state.refreshing) {
    state.refreshQueued = true
    return state.refreshing
  }
  state.refreshing = (async () => {
    do {
      state.refreshQueued = false
      const rejected = []
      let listed
      try {
        listed = await listAllMcpTools(state.client, signal, state.limits, (entry) => rejected.push(entry))
      } catch (error) {
        throw redactSent(state, error)
      }
      // Host allow/deny on remote names, with the package's filter semantics (deny wins).
      let kept = listed
      if (state.filter) {
        const allowed = new Set(native.filterTools(listed.map((tool) => ({ name: tool.name })), state.filter).map((tool) => tool.name))
        kept = listed.filter((tool) => allowed.has(tool.name))
      }
      // Schemas the validator refuses (unknown dialect, remote $ref, hostile keys) are left out.
      const adapter = schemaAdapter()
      const usable = []
      const schemaRefusal = (schema) => {
        const checked = adapter.validate(schema, {})
        return !checked.ok && checked.errors && checked.errors.find((issue) => !issue.path && /^schema\b/.test(issue.message))
      }
      for (const tool of kept) {
        const refusal = schemaRefusal(tool.inputSchema)
        const outputRefused = refusal ? undefined : tool.outputSchema !== undefined ? schemaRefusal(tool.outputSchema) : undefined
        if (refusal) rejected.push({ remoteName: tool.name, reason: `input schema refused: ${refusal.message}` })
        else if (outputRefused) rejected.push({ remoteName: tool.name, reason: `output schema refused: ${outputRefused.message}` })
        else usable.push(tool)
      }
      // MCP Apps: every usable tool gets its app view; one whose UI metadata is bad is left out.
      let appViews
      if (state.mcpApps) {
        appViews = []
        for (let i = usable.length - 1; i >= 0; i--) {
          try {
            appViews[i] = apps.toMcpAppTool(usable[i], state.formatName(state.namePrefix, usable[i].name), state.limits)
          } catch (error) {
            rejected.push({ remoteName: usable[i].name, reason: error.message })
            usable.splice(i, 1)
            appViews.splice(i, 1)
          }
        }
      }
      const next = mapMcpToolsToDefinitions(usable, {
        namePrefix: state.namePrefix,
        serverId: state.serverId,
        formatName: state.formatName,
        isClosed: () => state.status === 'closed',
        callRemoteTool: (remoteName, args, ctx, name) => callRemoteTool(state, remoteName, args, ctx, name),
        effectForRemoteTool: undefined,
      })
      for (let i = 0; i < next.length; i++) {
        const { effect, exclusive } = remoteToolEffect(usable[i], state.serverId, state.effect, state.annotations)
        next[i].effect = effect
        next[i].exclusive = exclusive
      }
      if (state.status === 'closed') return
      const before = state.byName
      // An app-only tool (`_meta.ui.visibility` without "model") is never offered to the model.
      const modelTools = appViews ? next.filter((_tool, i) => appViews[i].visibility.includes('model')) : next
      state.appTools = appViews ? Object.freeze(appViews) : state.appTools
      state.appByName = appViews ? new Map(next.filter((_tool, i) => !appViews[i].visibility.includes('model')).map((tool) => [tool.name, tool])) : state.appByName
      state.tools = Object.freeze(modelTools)
      state.byName = new Map(modelTools.map((tool) => [tool.name, tool]))
      state.remoteTools = usable
      state.rejectedTools = Object.freeze(rejected)
      state.listFetchedAt = Date.now()
      state.lastRefreshError = undefined
      const added = modelTools.filter((tool) => !before.has(tool.name)).map((tool) => tool.name)
      const removed = [...before.keys()].filter((name) => !state.byName.has(name))
      if (typeof state.onToolsChanged === 'function' && before.size > 0 && added.length + removed.length > 0) {
        try {
          state.onToolsChanged(state.tools, { added, removed })
        } catch {
          // A host listener's failure never undoes a refresh.
        }
      }
    } while (state.refreshQueued && state.status === 'connected')
  })()
  try {
    await state.refreshing
  } finally {
    state.refreshing = undefined
  }
}

/**
 * The per-call signal the SDK's `request()` gets in place of the caller's: what it uses of a signal
 * (`aborted`, `reason`, `throwIfAborted()`, `addEventListener('abort')`) without an `AbortController` per
 * call — on Node 20 the first listener on a new `AbortSignal` costs ~10 µs, more than the rest of the
 * bridge. Aborted by the caller's signal, and garbage with the call.
 */
class CallSignal {
  constructor() {
    this.aborted = false
    this.reason = undefined
    this.onabort = null
    this.listeners = []
  }

  throwIfAborted() {
    if (this.aborted) throw this.reason
  }

  addEventListener(type, listener) {
    if (type === 'abort' && typeof listener === 'function' && !this.listeners.includes(listener)) this.listeners.push(listener)
  }

  removeEventListener(type, listener) {
    const i = type === 'abort' ? this.listeners.indexOf(listener) : -1
    if (i >= 0) this.listeners.splice(i, 1)
  }

  abort(reason) {
    if (this.aborted) return
    this.aborted = true
    this.reason = reason
    const event = { type: 'abort', target: this }
    const listeners = this.onabort ? [this.onabort, ...this.listeners] : this.listeners.slice()
    this.listeners = []
    for (const listener of listeners) {
      try {
        listener.call(this, event)
      } catch {
        // The SDK's listener sends notifications/cancelled and rejects the request; it catches its own
        // failures. Nothing else listens.
      }
    }
  }
}

// Results that took the fast path of the result schema: their size, texts and isError, read once.
const simpleResults = new WeakMap()

function resultSchemaFor(state) {
  if (state.resultSchema === undefined) {
    const { CompatibilityCallToolResultSchema } = sdk.types()
    state.resultSchema = createCallToolResultSchema(CompatibilityCallToolResultSchema, state.limits, simpleResults)
  }
  return state.resultSchema
}

function mcpMetadata(state, remoteName) {
  return { mcp: { serverId: state.serverId, remoteName }, untrusted: true, trust: UNTRUSTED }
}

function resultMetadata(state, remoteName, truncated, bytesUsed) {
  return { mcp: { serverId: state.serverId, remoteName, truncated, bytesUsed }, untrusted: true, trust: UNTRUSTED }
}

/** The content of a result that took the fast path: its non-empty texts, none of which the byte bound cuts. */
function simpleTextBlocks(texts) {
  const blocks = []
  for (let i = 0; i < texts.length; i++) {
    const text = texts[i]
    if (text) blocks.push({ type: 'text', text })
  }
  return blocks
}

/** `error` (or a result) with the header values the connection sent redacted; as it is without any. */
function redactSent(state, value) {
  if (state.sent === undefined || state.sent.size === 0) return value
  return value instanceof Error ? state.sent.redactError(value) : state.sent.redact(value)
}

/** A call's result, error results too, with no header value the connection sent (a server may echo them). */
async function callRemoteTool(state, remoteName, args, ctx, name) {
  return redactSent(state, await callRemote(state, remoteName, args, ctx, name))
}

async function callRemote(state, remoteName, args, ctx, name) {
  if (state.status === 'closed') throw new McpBridgeClosedError()
  if (state.status === 'disconnected') {
    return errorResult(ctx, name, `MCP server ${state.serverId} disconnected: ${state.error}`, 'ERR_PRISM_MCP_DISCONNECTED', mcpMetadata(state, remoteName))
  }
  // A definition that a refresh dropped (removed by the server or no longer allowed) never reaches the server.
  const current = state.byName.get(name) ?? state.appByName.get(name)
  if (current === undefined || current.execute === undefined) {
    return errorResult(ctx, name, `MCP tool ${name} is no longer offered by server ${state.serverId}`, 'ERR_PRISM_MCP_TOOL_REMOVED', mcpMetadata(state, remoteName))
  }
  // Dispatch's own JSON Schema validator already passed these arguments against this tool's schema.
  const checked = state.validateArguments && ctx ? checkedArguments.get(ctx) : undefined
  if (state.validateArguments && (checked === undefined || checked[0] !== current.parameters || checked[1] !== args)) {
    const refusal = toolArgumentValidator()(current, args, ctx)
    if (refusal !== undefined) {
      return errorResult(ctx, name, String(typeof refusal === 'string' ? refusal : refusal.message), 'ERR_PRISM_MCP_INVALID_ARGUMENTS', mcpMetadata(state, remoteName))
    }
  }
  // The timeout is the SDK's own per-request timer (it sets one on every request, whatever the options).
  // A disconnect or close() closes the transport, and the SDK then rejects every pending request.
  // The caller's signal reaches the SDK through a per-call relay (abort → notifications/cancelled):
  // the SDK adds an abort listener to the signal it is given and never removes it, so a run's signal
  // handed to it directly would keep one listener (and the request's closures) per call until the run
  // ends, and on abort cancel every call the run ever made. The relay waits on the run's signal through
  // its one shared listener (lib/abort-watch.js). Without a signal nothing is allocated.
  const signal = ctx ? ctx.signal : undefined
  let sdkSignal = signal
  let unlink
  if (signal && signal.aborted === false && typeof signal.addEventListener === 'function') {
    const relay = new CallSignal()
    const onAbort = () => relay.abort(signal.reason)
    watchAbort(signal, onAbort)
    unlink = () => unwatchAbort(signal, onAbort)
    sdkSignal = relay
  }
  // Dispatch's unobserved progress is skipped: no progressToken, no per-call handler in the SDK, no
  // notifications for the server to send.
  const progress = ctx && typeof ctx.progress === 'function' && ctx.progress[NO_PROGRESS] !== true ? ctx.progress : undefined
  const timeout = state.limits.callTimeoutMs
  const requestOptions = { signal: sdkSignal, timeout }
  // Coalesced per call (lib/mcp/progress.js): bounded events, ledger rows and memory, the newest value kept.
  let relay
  if (progress) {
    const deliver = state.sent === undefined ? progress : function (value, metadata) { return progress.call(this, redactSent(state, value), metadata) }
    relay = createProgressRelay(deliver, ctx, mcpMetadata(state, remoteName), state.limits)
    requestOptions.onprogress = relay.onprogress
  }
  try {
    const result = await state.client.request({ method: 'tools/call', params: { name: remoteName, arguments: args } }, resultSchemaFor(state), requestOptions)
    if (relay !== undefined) relay.flush()
    return mapCallResult(state, remoteName, name, ctx, result, current.outputSchema)
  } catch (error) {
    if (relay !== undefined) relay.cancel()
    if (state.status === 'closed') throw new McpBridgeClosedError()
    const metadata = mcpMetadata(state, remoteName)
    if (state.status === 'disconnected' || isConnectionClosed(error)) {
      return errorResult(ctx, name, `MCP server ${state.serverId} disconnected: ${state.error ?? 'connection closed'}`, 'ERR_PRISM_MCP_DISCONNECTED', metadata)
    }
    // Before the timeout check: the SDK reports a cancelled request with the timeout's error code.
    if (signal && signal.aborted) return errorResult(ctx, name, 'MCP tool call aborted', 'ERR_PRISM_ABORTED', metadata)
    if (isTimeout(error)) return errorResult(ctx, name, `MCP tool call timed out after ${timeout}ms`, 'ERR_PRISM_MCP_TIMEOUT', metadata)
    const maxBytes = Math.min(MAX_ERROR_BYTES, state.limits.maxResultBytes)
    if (error instanceof McpBridgeError && typeof error.detail === 'string') {
      return errorResult(ctx, name, truncateUtf8(`MCP tool ${remoteName} returned an invalid result ${error.detail}`, maxBytes), 'ERR_PRISM_MCP_INVALID_RESULT', metadata)
    }
    // A server's JSON-RPC error (or anything else the request threw), bounded like a result.
    return errorResult(ctx, name, boundedMcpErrorMessage(error, maxBytes), 'ERR_PRISM_MCP_TOOL', metadata)
  } finally {
    if (unlink !== undefined) unlink()
  }
}

/**
 * A successful result of a tool with an `outputSchema` must carry `structuredContent` that matches it
 * (MCP 2025-06-18); the refusal as an error result, or undefined.
 */
function outputRefusal(state, remoteName, name, ctx, outputSchema, structured) {
  if (outputSchema === undefined) return undefined
  const metadata = mcpMetadata(state, remoteName)
  if (structured === undefined) {
    return errorResult(ctx, name, `MCP tool ${remoteName} declares an outputSchema but returned no structuredContent`, 'ERR_PRISM_MCP_INVALID_OUTPUT', metadata)
  }
  const mismatch = outputSchemaMismatch(name, outputSchema, structured)
  if (mismatch === undefined) return undefined
  const message = truncateUtf8(`MCP tool ${remoteName} structuredContent does not match its outputSchema: ${mismatch}`, Math.min(MAX_ERROR_BYTES, state.limits.maxResultBytes))
  return errorResult(ctx, name, message, 'ERR_PRISM_MCP_INVALID_OUTPUT', metadata)
}

/** A `tools/call` result as a `ToolResult`: bounded, mapped, checked against `outputSchema`, marked untrusted. */
function mapCallResult(state, remoteName, name, ctx, result, outputSchema) {
  const toolCallId = ctx.toolCallId
  const simple = simpleResults.get(result)
  if (simple !== undefined) {
    // Checked against every bound while the SDK parsed it; text blocks within maxResultBytes.
    const metadata = resultMetadata(state, remoteName, false, simple.bytes)
    const content = simpleTextBlocks(simple.texts)
    if (simple.isError) {
      const blocks = simple.texts.map((text) => ({ type: 'text', text }))
      const message = summarizeMcpContent(blocks, Math.min(MAX_ERROR_BYTES, state.limits.maxResultBytes))
      return { toolCallId, name, content, error: mcpCallError(message), metadata }
    }
    return outputRefusal(state, remoteName, name, ctx, outputSchema, undefined) ?? { toolCallId, name, content, metadata }
  }
  let measured
  try {
    measured = measureBoundedJson(result, {
      maxBytes: state.limits.maxResultBytes,
      maxDepth: state.limits.maxJsonDepth,
      maxProperties: state.limits.maxJsonProperties,
      label: `MCP tool ${remoteName} result`,
    })
  } catch (error) {
    return errorResult(ctx, name, error.message, 'ERR_PRISM_MCP_RESULT_LIMIT', mcpMetadata(state, remoteName))
  }
  if ('toolResult' in result) {
    return { toolCallId, name, value: result.toolResult, metadata: resultMetadataNoTruncation(state, remoteName, measured.bytes) }
  }
  const mapped = mapMcpContentToBlocks(result.content, { maxResultBytes: state.limits.maxResultBytes, richContent: true })
  const metadata = resultMetadata(state, remoteName, mapped.truncated, measured.bytes)
  if (result.isError) {
    return {
      toolCallId,
      name,
      content: mapped.content,
      error: mcpCallError(summarizeMcpContent(result.content, Math.min(MAX_ERROR_BYTES, state.limits.maxResultBytes))),
      metadata,
    }
  }
  const refusal = outputRefusal(state, remoteName, name, ctx, outputSchema, result.structuredContent)
  if (refusal !== undefined) return refusal
  const out = { toolCallId, name, content: mapped.content, metadata }
  if (result.structuredContent !== undefined) out.value = result.structuredContent
  return out
}

function resultMetadataNoTruncation(state, remoteName, bytesUsed) {
  return { mcp: { serverId: state.serverId, remoteName, bytesUsed }, untrusted: true, trust: UNTRUSTED }
}

async function closeState(state) {
  if (state.status === 'closed') return
  state.status = 'closed'
  state.tools = Object.freeze([])
  state.byName = new Map()
  state.remoteTools = []
  try {
    await state.client.close()
  } catch {}
  try {
    await state.transport.close()
  } catch {}
}

/**
 * A connection's facade: the live view of its state every facade shares (`state`, `error`,
 * `rejectedTools`, `pid`, `serverId`, `client`), then `own`'s properties, getters kept as getters.
 */
function connectionFacade(state, own) {
  const facade = {
    get state() {
      return state.status
    },
    get error() {
      return state.error
    },
    get rejectedTools() {
      return state.rejectedTools
    },
    get pid() {
      const pid = state.transport && state.transport.pid
      return typeof pid === 'number' ? pid : undefined
    },
    get serverId() {
      return state.serverId
    },
    get client() {
      return state.client
    },
  }
  return Object.defineProperties(facade, Object.getOwnPropertyDescriptors(own))
}

function createFacade(state) {
  return connectionFacade(state, {
    get tools() {
      if (state.status === 'closed') throw new McpBridgeClosedError()
      return state.tools
    },
    ...(state.mcpApps ? { apps: apps.createMcpAppsFacade(state, (remoteName, args, ctx) => callAppTool(state, remoteName, args, ctx)) } : {}),
    refresh: (options) => {
      if (state.status === 'disconnected') return Promise.reject(bridgeError(`MCP server ${state.serverId} disconnected: ${state.error}`, 'ERR_PRISM_MCP_DISCONNECTED'))
      return refreshTools(state, options && options.signal)
    },
    close: () => closeState(state),
  })
}

/** An MCP Apps call by remote name: the app-only or model-visible definition the last listing made. */
function callAppTool(state, remoteName, args, ctx) {
  for (const tool of state.appByName.values()) if (tool.mcp.remoteName === remoteName) return callRemoteTool(state, remoteName, args, ctx, tool.name)
  for (const tool of state.tools) if (tool.mcp.remoteName === remoteName) return callRemoteTool(state, remoteName, args, ctx, tool.name)
  throw new McpBridgeError('MCP App tool is unavailable', { code: 'ERR_PRISM_MCP_APPS' })
}

async function connectClient(options) {
  if (options === null || typeof options !== 'object') throw new TypeError('connectMcpTools needs an options object')
  assertValidServerId(options.serverId)
  const limits = L.resolveMcpClientLimits(options)
  if (options.signal && options.signal.aborted) throw options.signal.reason
  // What the client offers (MCP Apps, roots, sampling, elicitation) follows the options.
  const client = createMcpCapabilityClient(options)
  const transport = createMcpTransport(options.transport)
  const onAbort = () => {
    client.close().catch(() => {})
    transport.close().catch(() => {})
  }
  options.signal?.addEventListener('abort', onAbort, { once: true })
  // A transport failure while connecting (a bound crossed, a broken stream) ends the connect at once
  // instead of leaving the handshake to time out.
  let transportFailure
  const sent = sentHeadersOf(transport)
  const redact = (error) => (sent === undefined ? error : sent.redactError(error))
  client.onerror = (error) => {
    const message = boundedMcpErrorMessage(redact(error), 512)
    if (transportFailure === undefined && BROKEN_TRANSPORT.test(message)) {
      transportFailure = error
      transport.close().catch(() => {})
    }
  }
  try {
    await client.connect(transport, { signal: options.signal, timeout: limits.connectTimeoutMs, maxTotalTimeout: limits.connectTimeoutMs })
    if (options.mcpApps === true) apps.assertMcpAppsNegotiated(client)
  } catch (thrown) {
    onAbort()
    // A server may echo its request (a 500 body): no header value sent comes back in the error.
    const error = redact(thrown)
    if (transportFailure !== undefined) {
      throw bridgeError(`MCP server ${options.serverId} failed while connecting: ${boundedMcpErrorMessage(transportFailure, MAX_ERROR_BYTES)}`, 'ERR_PRISM_MCP_TRANSPORT', transportFailure)
    }
    if (isValidatorError(error)) {
      throw redact(bridgeError(`MCP server ${options.serverId} answered initialize with an invalid result ${describeIssues(error)}`, 'ERR_PRISM_MCP_PROTOCOL'))
    }
    throw error
  } finally {
    options.signal?.removeEventListener('abort', onAbort)
    client.onerror = undefined
  }
  return { client, transport }
}

async function startBridge(state, signal) {
  hookClient(state)
  const onAbort = () => closeState(state)
  signal?.addEventListener('abort', onAbort, { once: true })
  try {
    await refreshTools(state, signal)
  } catch (error) {
    await closeState(state)
    throw error
  } finally {
    signal?.removeEventListener('abort', onAbort)
  }
  return createFacade(state)
}

/**
 * Connects to an MCP server over the configured transport and bridges its tools.
 * @param {import('../../types/mcp').ConnectMcpToolsOptions} options
 */
async function connectMcpTools(options) {
  const { client, transport } = await connectClient(options)
  return startBridge(createState(client, transport, options, true), options.signal)
}

/** Bridges the tools of a host's own, already connected SDK client. `close()` closes both. */
async function attachMcpToolBridge(client, transport, options) {
  // As upstream: an MCP Apps bridge first checks the server acknowledged the extension.
  if (options && options.mcpApps === true) apps.assertMcpAppsNegotiated(client)
  if (!client || typeof client.request !== 'function') throw new TypeError('attachMcpToolBridge needs a connected @modelcontextprotocol/sdk Client')
  return startBridge(createState(client, transport, options || {}, false), options && options.signal)
}

module.exports = {
  connectMcpTools,
  attachMcpToolBridge,
  listAllMcpTools,
  mapMcpToolsToDefinitions,
  remoteToolEffect,
  connectClient,
  createState,
  startBridge,
  closeState,
  connectionFacade,
  CLIENT_INFO,
}
