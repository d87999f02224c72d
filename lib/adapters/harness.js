'use strict'
// What the framework adapters (lib/adapters/ai-sdk.js, lib/adapters/openai-agents.js) share: the
// tools as a registry, one dispatcher built from the caller's options, and one call through it.
// Every call a framework makes goes through `createToolDispatcher` — lookup, filter, policies,
// guardrails, JSON Schema validation, effects, ledger, redaction, abort — so the framework sees
// what the package decided: a value, or an error it hands the model as a tool error.

const { createHash } = require('node:crypto')
const prism = require('../../index.js')

// The createToolDispatcher options an adapter passes on; `context` (the call context) and
// `approval` (an approval gate) are the adapter's own.
const DISPATCH_KEYS = ['middleware', 'guardrails', 'identity', 'ownership', 'trust', 'permission', 'validate', 'effectStore', 'beforeExecute', 'emit', 'ledger', 'redactor', 'filter', 'secrets', 'toolTimeoutMs']

/** A tool error as a framework sees it: the dispatch's error info, with its code and the tool's name. */
class ToolCallError extends Error {
  constructor(toolName, info) {
    const message = typeof info?.message === 'string' && info.message !== '' ? info.message : 'Tool call failed'
    super(message.startsWith(`Tool ${toolName}`) ? message : `Tool ${toolName}: ${message}`)
    this.name = typeof info?.name === 'string' && info.name !== '' ? info.name : 'ToolCallError'
    // The dispatch's code when the error has one (a validation failure's message is its detail).
    if (typeof info?.code === 'string') this.code = info.code
    this.toolName = toolName
    this.info = info
  }
}

function adapterError(Ctor, message, code) {
  const e = new Ctor(message)
  e.code = code
  return e
}

const isRegistry = (v) => v !== null && typeof v === 'object' && typeof v.get === 'function' && typeof v.list === 'function'

/**
 * The tools as `{ registry, list }`. `tools` is an array of this package's tool definitions, a
 * registry (`createToolRegistry`), or a framework's own tool set, turned into definitions by
 * `fromForeign` (which answers undefined when `tools` is not one).
 */
function harnessTools(tools, fromForeign, who) {
  if (isRegistry(tools)) return { registry: tools, list: tools.list() }
  if (Array.isArray(tools)) {
    const foreign = fromForeign(tools)
    const list = foreign ?? tools
    return { registry: prism.createToolRegistry(list), list }
  }
  if (tools !== null && typeof tools === 'object') {
    const foreign = fromForeign(tools)
    if (foreign !== undefined) return { registry: prism.createToolRegistry(foreign), list: foreign }
  }
  throw adapterError(TypeError, `${who}: tools must be an array of tool definitions, a tool registry or a tool set`, 'ERR_PRISM_INVALID_OPTION')
}

// A static effect declaration that needs a claim in a durable store: checked when the tools are
// adapted, so a missing store or identity is named with its fix before the first call.
function durableEffect(tool) {
  const e = tool.effect
  if (e === null || typeof e !== 'object') return false
  return typeof e.kind === 'string' && e.kind !== 'none' && (e.idempotency === 'required' || e.idempotency === 'idempotent' || e.idempotency === 'conditional')
}

function checkDurableEffects(list, options, who) {
  const tool = list.find((t) => t !== null && typeof t === 'object' && durableEffect(t))
  if (tool === undefined) return
  const declared = `Tool ${tool.name} declares effect { kind: "${tool.effect.kind}", idempotency: "${tool.effect.idempotency}" }`
  const identity = options.identity ?? options.context?.identity
  const noIdentity = identity === undefined || identity === null
  if (options.effectStore === undefined || options.effectStore === null) {
    // Both missing: one error names both fixes, so the second is not found only after the first.
    const also = noIdentity ? ', and options.identity (your authenticated tenant and principal, or localIdentity() in a single-process program)' : ''
    throw adapterError(
      TypeError,
      `${who}: ${declared}, which is claimed in a durable store before it runs: pass options.effectStore (createSqliteToolEffectStore(path), or createMemoryToolEffectStore() in tests)${also}`,
      'ERR_PRISM_TOOL_EFFECT_REQUIRED',
    )
  }
  if (noIdentity) {
    throw adapterError(
      TypeError,
      `${who}: ${declared}, whose record is owned by a verified identity: pass options.identity (your authenticated tenant and principal, or localIdentity() in a single-process program)`,
      'ERR_PRISM_IDENTITY',
    )
  }
}

/**
 * A tool call id derived from the call's content (tool name and arguments hash): the same call
 * made again gets the same id, and so the same effect key, where a framework does not keep the
 * model's ids stable across a retry or a restart. `occurrence` tells apart the same call made
 * twice on purpose within one run.
 */
function contentToolCallId(toolName, args, occurrence = 0) {
  if (typeof toolName !== 'string' || toolName === '') throw adapterError(TypeError, 'contentToolCallId: toolName must be a non-empty string', 'ERR_PRISM_INVALID_OPTION')
  if (!Number.isSafeInteger(occurrence) || occurrence < 0) throw adapterError(RangeError, 'contentToolCallId: occurrence must be a non-negative safe integer', 'ERR_PRISM_INVALID_OPTION')
  const hash = prism.toolEffectArgumentsHash(args ?? {})
  const digest = createHash('sha256').update(JSON.stringify(['prism.content-call.v1', toolName, hash, occurrence])).digest('base64url')
  return `call_${digest.slice(0, 32)}`
}

function checkCallIds(mode, who) {
  if (mode === undefined || mode === 'framework' || mode === 'content') return mode ?? 'framework'
  throw adapterError(TypeError, `${who}: options.callIds must be "framework" or "content" (got ${JSON.stringify(mode)})`, 'ERR_PRISM_INVALID_OPTION')
}

/**
 * The adapter's dispatch: one dispatcher over the tools, with the JSON Schema validator as the
 * default `validate` and the approval gate (when given) before `beforeExecute`'s own hook.
 */
function createAdapterDispatch(registry, options, who) {
  if (options === null || typeof options !== 'object') throw adapterError(TypeError, `${who}: options must be an object`, 'ERR_PRISM_INVALID_OPTION')
  const dispatchOptions = { registry }
  for (const k of DISPATCH_KEYS) if (options[k] !== undefined) dispatchOptions[k] = options[k]
  if (dispatchOptions.validate === undefined) dispatchOptions.validate = prism.createJsonSchemaToolArgumentValidator()
  const gate = options.approval
  if (gate !== undefined && gate !== null) {
    if (typeof gate.admit !== 'function') throw adapterError(TypeError, `${who}: options.approval must be an approval gate (createApprovalGate)`, 'ERR_PRISM_INVALID_OPTION')
    const own = options.beforeExecute
    dispatchOptions.beforeExecute = async (call, tool, ctx) => {
      if (typeof own === 'function') await own(call, tool, ctx)
      await gate.admit(call, ctx)
    }
  }
  const dispatcher = prism.createToolDispatcher(dispatchOptions)
  const base = options.context ?? {}
  if (base === null || typeof base !== 'object') throw adapterError(TypeError, `${who}: options.context must be an object`, 'ERR_PRISM_INVALID_OPTION')
  const callIds = checkCallIds(options.callIds, who)
  // The id dispatch (and so the effect key and the approval gate) sees for a framework's call.
  const idOf = (name, args, frameworkId) => (callIds === 'content' ? contentToolCallId(name, args) : frameworkId)

  /**
   * One call through the dispatch. `frameworkId` is the id the framework gave the call; `extra`
   * is merged into the call context (`signal`, `metadata`). Answers the tool's (redacted) value,
   * or throws a ToolCallError the framework turns into a tool error.
   */
  async function call(name, args, frameworkId, extra) {
    // "content": the same tool and arguments within one session and run are one effect, whatever
    // id the model gave them (a retried request, a restarted process).
    const id = idOf(name, args, frameworkId)
    const ctx = { ...base, ...extra, metadata: { ...base.metadata, ...extra?.metadata } }
    if (extra?.signal === undefined) ctx.signal = base.signal
    const result = await dispatcher.dispatch({ type: 'tool_call', id, name, arguments: args }, ctx)
    if (result !== null && typeof result === 'object' && result.error !== undefined) throw new ToolCallError(name, result.error)
    return resultValue(result)
  }
  return { call, dispatcher, callIds, idOf, gate: gate ?? undefined }
}

// What the model is answered with: the tool's value, else its content, else the result itself.
function resultValue(result) {
  if (result === null || typeof result !== 'object') return result
  if ('value' in result) return result.value
  if ('content' in result) return result.content
  const { toolCallId: _id, name: _name, ...rest } = result
  return rest
}

module.exports = { ToolCallError, harnessTools, createAdapterDispatch, checkDurableEffects, contentToolCallId, adapterError, isRegistry }
