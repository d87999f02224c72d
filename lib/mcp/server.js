'use strict'
// `createPrismMcpServer`: a host's tools served to any MCP client on the official SDK's `McpServer`.
// `tools/list` comes from the registry (the host's filter applied, each schema bounded); every
// `tools/call` goes through `dispatchToolCall` with the host's validation, policies, guardrails,
// effect store, ledger and redactor, and the identity the host's `authorize` derives from the
// transport's authentication. Commands, resources, prompts and agent-run lifecycle tools as upstream.
const native = require('../../index.js')
const { listedTool, listTools, toCallToolResult, boundedProtocolResult } = require('./server-tools.js')
const { createCallRunner, authorizeOrThrow, progressSender, jsonObject } = require('./server-call.js')
const { SERVER_LIMITS: L, serverError, bounded, validCapabilityId } = require('./server-limits.js')
const sdk = require('./sdk.js')
const { utf8Bytes } = require('./json-bounds.js')
const { version: PACKAGE_VERSION } = require('../../package.json')

const LIFECYCLE_STATUS_SCHEMA = Object.freeze({
  type: 'object',
  properties: { runId: { type: 'string' }, sessionId: { type: 'string' } },
  required: ['runId'],
  additionalProperties: false,
})
const LIFECYCLE_RESUME_SCHEMA = Object.freeze({
  type: 'object',
  properties: {
    runId: { type: 'string' },
    sessionId: { type: 'string' },
    decision: { type: 'string', enum: ['approve', 'deny'] },
    expectedVersion: { type: 'integer', minimum: 1 },
  },
  required: ['runId', 'decision', 'expectedVersion'],
  additionalProperties: false,
})

function assertUtf8(label, value, maxBytes) {
  if (typeof value !== 'string' || !value || utf8Bytes(value) > maxBytes) {
    throw serverError(`${label} must be non-empty and <= ${maxBytes} bytes`, 'ERR_PRISM_MCP_LIMIT')
  }
}

function lifecycleId(value) {
  if (!validCapabilityId(value)) throw serverError('Invalid agent run id', 'ERR_PRISM_MCP_AGENT_RUN')
  return value
}

function requireLifecycleOwnership(authorization) {
  const ownership = authorization.ownership
  if (!ownership?.tenantId || (!ownership.accountId && !ownership.userId)) throw serverError('Forbidden', 'ERR_PRISM_MCP_FORBIDDEN')
  return ownership
}

/** The registry served: `registry` as given, or one built from `tools` (duplicates refused). */
function servedRegistry(options) {
  if (options.registry !== undefined && options.tools !== undefined) {
    throw serverError('createPrismMcpServer takes tools or registry, not both', 'ERR_PRISM_MCP_OPTIONS')
  }
  if (options.registry !== undefined) {
    const registry = options.registry
    if (!registry || typeof registry.list !== 'function' || typeof registry.get !== 'function') {
      throw serverError('createPrismMcpServer: registry must be a ToolRegistry (list, get, resolve)', 'ERR_PRISM_MCP_OPTIONS')
    }
    return registry
  }
  if (options.tools !== undefined && !Array.isArray(options.tools)) {
    throw serverError('createPrismMcpServer: tools must be an array of tool definitions', 'ERR_PRISM_MCP_OPTIONS')
  }
  return native.createToolRegistry(options.tools ?? [], { duplicate: 'error' })
}

function createPrismMcpServer(options) {
  if (!options || typeof options !== 'object') throw serverError('createPrismMcpServer needs options', 'ERR_PRISM_MCP_OPTIONS')
  if (typeof options.authorize !== 'function') {
    throw serverError('createPrismMcpServer needs authorize(input): every call is authorized by the host', 'ERR_PRISM_MCP_OPTIONS')
  }
  const { McpServer } = sdk.server()
  const types = sdk.types()
  const registry = servedRegistry(options)
  const filter = options.filter
  const commands = options.commands ?? []
  const resources = options.resources ?? []
  const prompts = options.prompts ?? []
  const agentRuns = options.agentRuns ?? {}
  if (resources.length > L.MAX_SERVER_CAPABILITIES || prompts.length > L.MAX_SERVER_CAPABILITIES) {
    throw serverError(`MCP resources/prompts exceed ${L.MAX_SERVER_CAPABILITIES} items`, 'ERR_PRISM_MCP_LIMIT')
  }
  const maxResultBytes = bounded(options.maxResultBytes, L.DEFAULT_MAX_SERVER_RESULT_BYTES, L.HARD_MAX_SERVER_RESULT_BYTES, 'maxResultBytes')
  const maxConcurrentCalls = bounded(options.maxConcurrentCalls, L.DEFAULT_MAX_SERVER_CONCURRENT_CALLS, L.HARD_MAX_SERVER_CONCURRENT_CALLS, 'maxConcurrentCalls')
  const callTimeoutMs = bounded(options.callTimeoutMs, L.DEFAULT_SERVER_CALL_TIMEOUT_MS, L.HARD_SERVER_CALL_TIMEOUT_MS, 'callTimeoutMs')
  const redactor = options.redactor ?? (options.secrets?.length ? native.createSecretRedactor(options.secrets) : undefined)
  const validate = options.validate ?? native.createJsonSchemaToolArgumentValidator()

  // Names are unique across tools, commands, resources, prompts and agent lifecycle tools; each tool
  // listed at start is checked against the listing bounds now, so a bad schema fails here, not at a client.
  const names = new Set()
  const claim = (name, label = 'Duplicate or empty MCP capability name') => {
    if (!name || names.has(name)) throw serverError(`${label}: ${name}`, 'ERR_PRISM_MCP_DUPLICATE')
    names.add(name)
  }
  listTools(native.filterTools(registry.list(), filter), (_tool, error) => {
    throw error
  })
  for (const tool of registry.list()) claim(tool.name)
  const extraTools = new Map() // commands and lifecycle tools: name -> { entry, run }
  for (const command of commands) {
    claim(command.name)
    extraTools.set(command.name, { entry: listedTool(command).entry, kind: 'command', command })
  }
  for (const resource of resources) claim(resource.name)
  for (const prompt of prompts) claim(prompt.name)
  for (const agentId of Object.keys(agentRuns)) {
    if (!validCapabilityId(agentId)) throw serverError(`Invalid agent lifecycle capability id: ${agentId}`, 'ERR_PRISM_MCP_AGENT_RUN')
    for (const [suffix, description, parameters] of [
      ['status', 'Get redacted durable agent run status', LIFECYCLE_STATUS_SCHEMA],
      ['resume', 'Approve or deny durable agent run interruption', LIFECYCLE_RESUME_SCHEMA],
    ]) {
      const name = `agent.${agentId}.${suffix}`
      claim(name, 'Duplicate MCP capability name')
      const definition = { name, description, parameters }
      extraTools.set(name, { entry: listedTool(definition).entry, kind: 'lifecycle', agentId, suffix, lifecycle: agentRuns[agentId].lifecycle })
    }
  }

  const hasTools = options.tools !== undefined || options.registry !== undefined || extraTools.size > 0
  const server = new McpServer({ name: options.name ?? 'prism-mcp-server', version: options.version ?? PACKAGE_VERSION })
  const capabilities = {}
  if (hasTools) capabilities.tools = { listChanged: true }
  if (resources.length) capabilities.resources = { listChanged: true }
  if (prompts.length) capabilities.prompts = { listChanged: true }
  server.server.registerCapabilities(capabilities)

  const runCall = createCallRunner({ authorize: options.authorize, redactor, maxConcurrentCalls, callTimeoutMs, maxResultBytes })

  const dispatchTool = async (name, args, authorization, signal, ids, extra) => {
    const sent = progressSender(extra)
    let blockedReason
    const emit = (event) => {
      if (event && event.type === 'tool_execution_blocked' && event.toolCallId === ids.toolCallId) blockedReason = event.reason
      return options.emit ? options.emit(event) : undefined
    }
    const metadata = { ...authorization.metadata, mcp: { requestId: ids.requestId, sessionId: extra.sessionId } }
    const context = { sessionId: ids.sessionId, runId: ids.runId, toolCallId: ids.toolCallId, signal, metadata }
    if (authorization.identity !== undefined) context.identity = authorization.identity
    if (sent) context.progress = sent.progress
    let result
    try {
      result = await native.dispatchToolCall({
        call: { type: 'tool_call', id: ids.toolCallId, name, arguments: args },
        registry,
        context,
        filter,
        middleware: options.middleware,
        validate,
        emit,
        redactor,
        ledger: options.ledger,
        ownership: authorization.ownership,
        identity: authorization.identity,
        trust: options.trust,
        permission: options.permission,
        guardrails: options.guardrails,
        effectStore: options.effectStore,
      })
    } finally {
      if (sent) sent.relay.flush()
    }
    return toCallToolResult(result, maxResultBytes, redactor, blockedReason, registry.get(name)?.outputSchema)
  }

  const runExtra = async (extraTool, args, authorization, signal, ids, extra) => {
    if (extraTool.kind === 'command') {
      const command = extraTool.command
      const result = await command.execute(args, {
        sessionId: extra.sessionId,
        runId: ids.runId,
        signal,
        metadata: { ...command.metadata, ...authorization.metadata },
      })
      const r = result ?? {}
      return toCallToolResult({ toolCallId: ids.toolCallId, name: command.name, content: r.content, value: r.value, error: r.error, metadata: r.metadata }, maxResultBytes, redactor, undefined, command.outputSchema)
    }
    const ownership = requireLifecycleOwnership(authorization)
    const ref = { runId: lifecycleId(args.runId), sessionId: args.sessionId === undefined ? undefined : lifecycleId(args.sessionId) }
    const scope = { ownership, signal, agentId: extraTool.agentId }
    let value
    try {
      if (extraTool.suffix === 'status') value = await extraTool.lifecycle.status(ref, scope)
      else {
        if (args.decision !== 'approve' && args.decision !== 'deny') throw serverError('Invalid agent run resume decision', 'ERR_PRISM_MCP_AGENT_RUN')
        if (!Number.isSafeInteger(args.expectedVersion) || args.expectedVersion < 1) throw serverError('Invalid agent run version', 'ERR_PRISM_MCP_AGENT_RUN')
        value = await extraTool.lifecycle.resume(ref, { decision: args.decision, expectedVersion: args.expectedVersion }, scope)
      }
    } catch (error) {
      if (error && error.name === 'AgentRunStateError') throw serverError('Agent run not found', 'ERR_PRISM_MCP_AGENT_RUN')
      throw error
    }
    return toCallToolResult({ toolCallId: ids.toolCallId, name: extraTool.entry.name, value }, maxResultBytes, redactor)
  }

  if (hasTools) {
    server.server.setRequestHandler(types.ListToolsRequestSchema, () => {
      const listed = listTools(native.filterTools(registry.list(), filter), () => undefined)
      for (const extraTool of extraTools.values()) listed.push(extraTool.entry)
      return { tools: listed }
    })
    server.server.setRequestHandler(types.CallToolRequestSchema, (request, extra) => {
      const { name, arguments: rawArgs } = request.params
      const extraTool = extraTools.get(name)
      const kind = extraTool ? (extraTool.kind === 'command' ? 'command' : 'tool') : 'tool'
      const execute = extraTool
        ? (args, authorization, signal, ids) => runExtra(extraTool, args, authorization, signal, ids, extra)
        : (args, authorization, signal, ids) => dispatchTool(name, args, authorization, signal, ids, extra)
      return runCall(kind, name, rawArgs, { ...extra, _meta: request.params._meta }, execute)
    })
  }

  if (resources.length) {
    for (const resource of resources) {
      assertUtf8('MCP resource name', resource.name, 1024)
      assertUtf8('MCP resource URI', resource.uri, 16 * 1024)
      try {
        new URL(resource.uri)
      } catch {
        throw serverError(`Invalid MCP resource URI: ${resource.uri}`, 'ERR_PRISM_MCP_RESOURCE')
      }
    }
    const byUri = new Map(resources.map((resource) => [resource.uri, resource]))
    server.server.setRequestHandler(types.ListResourcesRequestSchema, () => ({
      resources: resources.map(({ uri, name, title, description, mimeType }) => ({ uri, name, title, description, mimeType })),
    }))
    server.server.setRequestHandler(types.ListResourceTemplatesRequestSchema, () => ({ resourceTemplates: [] }))
    server.server.setRequestHandler(types.ReadResourceRequestSchema, async (request, extra) => {
      const uri = request.params.uri
      const resource = byUri.get(uri)
      if (!resource) throw new types.McpError(types.ErrorCode.InvalidParams, `Resource ${uri} not found`)
      const authorization = await authorizeOrThrow(options.authorize, 'resource', resource.name, { uri }, extra)
      const result = await resource.read({ uri, authorization, signal: extra.signal })
      return boundedProtocolResult(result, maxResultBytes, `MCP resource ${resource.name} result`, redactor)
    })
  }

  if (prompts.length) {
    for (const prompt of prompts) {
      assertUtf8('MCP prompt name', prompt.name, 1024)
      const argNames = Object.keys(prompt.arguments ?? {})
      if (argNames.length > 100) throw serverError(`MCP prompt ${prompt.name} exceeds 100 arguments`, 'ERR_PRISM_MCP_LIMIT')
      for (const name of argNames) assertUtf8('MCP prompt argument name', name, 256)
    }
    const byName = new Map(prompts.map((prompt) => [prompt.name, prompt]))
    server.server.setRequestHandler(types.ListPromptsRequestSchema, () => ({
      prompts: prompts.map((prompt) => ({
        name: prompt.name,
        title: prompt.title,
        description: prompt.description,
        arguments: Object.entries(prompt.arguments ?? {}).map(([name, value]) => ({ name, description: value.description, required: Boolean(value.required) })),
      })),
    }))
    server.server.setRequestHandler(types.GetPromptRequestSchema, async (request, extra) => {
      const prompt = byName.get(request.params.name)
      if (!prompt) throw new types.McpError(types.ErrorCode.InvalidParams, `Prompt ${request.params.name} not found`)
      const args = jsonObject(request.params.arguments)
      for (const [name, value] of Object.entries(prompt.arguments ?? {})) {
        if (value.required && typeof args[name] !== 'string') {
          throw new types.McpError(types.ErrorCode.InvalidParams, `MCP prompt ${prompt.name} needs argument ${name}`)
        }
      }
      const authorization = await authorizeOrThrow(options.authorize, 'prompt', prompt.name, args, extra)
      const result = await prompt.get({ arguments: args, authorization, signal: extra.signal })
      return boundedProtocolResult(result, maxResultBytes, `MCP prompt ${prompt.name} result`, redactor)
    })
  }

  return server
}

module.exports = { createPrismMcpServer }
