'use strict'
// What every loop of a run shares to build its provider requests: the run's tool snapshot, its
// dispatcher, the per-turn tool set (narrowing, then disclosure) and the request itself (system
// instruction, history folded by `toolResultFold`, the redactor over the whole request). Used by
// the built-in loops (lib/agent-turn-loop.js) and by custom loop strategies (lib/agent-loop.js).
// `r` is the run (lib/agent-run.js).
const native = require('../binding.js')
const { decode, json, textOf } = require('./agent-values.js')
const { AGENT_RETRIES } = require('./retry.js')
const { createJsonSchemaToolArgumentValidator } = require('./validation.js')
const { resolveToolResultFold, foldToolResultHistory } = require('./tool-result-fold.js')
const { checkTurnToolChoice } = require('./providers/request-options.js')
const { jsonBytes, rememberTextMessageBytes } = require('./run-limits.js')
const { OBSERVED } = require('./dispatch-options.js')
const { runToolPolicy, turnTools } = require('./agent-tool-policy.js')

// Arguments are checked against each tool's `parameters` unless the host turns it off: the run's
// `validate`, else the agent's `validator`, else the package's JSON Schema validator (one, shared by
// every agent, so its compiled schemas are too). `false` at either level turns validation off.
let defaultValidator
function validatorOf(options, config) {
  const chosen = options.validate !== undefined ? options.validate : config.validator
  if (chosen === false || chosen === null) return undefined
  if (chosen !== undefined) return chosen
  if (defaultValidator === undefined) defaultValidator = createJsonSchemaToolArgumentValidator()
  return defaultValidator
}

/** The run's turn set-up: its tools, registry, dispatcher, system message, narrowing and folding. */
function prepareTurns(r) {
  const { config, options, redactor, session } = r
  const { createToolDispatcher } = r.api
  session.lastGrant = r.grant.stored
  const searchConfig = r.pick('toolsSearch') ?? {}
  // Deferred tools and the provider's tool cap may need the search index under "all" too.
  const policy = runToolPolicy(r.provider, r.registered, r.grant.indices)
  const searching = r.disclosure === 'search' || policy.needsSearch
  const searchOptions = {
    enabled: searching,
    queryBytes: searchConfig.queryBytes,
    defaultK: searchConfig.defaultK,
    maxTools: searchConfig.maxTools,
    embeddings: searchConfig.embeddings,
    key: searching ? `${searchConfig.queryBytes}/${searchConfig.defaultK}/${searchConfig.maxTools}` : '',
  }
  const snap = r.snapshotOf(config, r.registered, r.grant.indices, searchOptions)
  r.searchTool = snap.searchTool
  r.registry = snap.registry
  const dispatcherOptions = {
    registry: snap.registry,
    middleware: config.middleware,
    validate: validatorOf(options, config),
    emit: (event) => r.emitRedacted(event),
    [OBSERVED]: () => r.observed(), // events nobody observes are not built
    secrets: r.secrets,
    redactor,
    ledger: r.ledger !== undefined ? r.ledger.tools : options.runLedger ?? config.runLedger, // tool rows join the run's queue
    ownership: options.ownership ?? config.ownership,
    identity: options.identity ?? config.identity,
    trust: config.trust,
    permission: config.permission,
    guardrails: r.guardrails,
    effectStore: options.effectStore ?? config.effectStore,
    toolTimeoutMs: r.pick('toolTimeoutMs'),
  }
  return {
    snap,
    policy,
    searchConfig,
    allowHidden: r.pick('allowHiddenToolCalls') === true,
    dispatcherOptions,
    unfiltered: createToolDispatcher(dispatcherOptions),
    system: typeof config.instructions === 'string' && config.instructions !== ''
      ? [{ role: 'system', content: [{ type: 'text', text: `System instruction:\n${config.instructions}` }] }]
      : [],
    narrowing: r.pick('toolNarrowing'),
    fold: resolveToolResultFold(options.toolResultFold, config.toolResultFold),
    narrowCache: undefined, // [kept key, tools, dispatcher] for an unchanged narrowed set
  }
}

/**
 * The tools of turn `r.turns`: narrowed by the host's `toolNarrowing`, then disclosed (`search`).
 * Answers `{ requestTools, tools, dispatcher }`: the request's tool list, its `{ count, idsHash }`
 * and the dispatcher that runs only what was shown (unless `allowHiddenToolCalls`).
 */
async function selectTools(r, t, inputText) {
  const { snap, unfiltered } = t
  const { tools: snapshot, names: runNames, index, searchTool } = snap
  const { selectDisclosedTools, SEARCH_TOOLS_NAME } = r.api.search
  let visible = snapshot
  let dispatcher = unfiltered
  if (typeof t.narrowing === 'function') {
    const answer = await t.narrowing({ turn: r.turns, lastAssistantText: r.lastAssistant ? textOf(r.lastAssistant.content) : undefined, toolIds: runNames.slice() })
    const clamped = decode(native.runClampNarrowing(runNames, json(answer)))
    if (clamped.dropped.length > 0) r.emit({ type: 'tool_narrowing_clamped', sessionId: r.sessionId, runId: r.runId, turn: r.turns, dropped: clamped.dropped })
    if (clamped.kept.length !== snapshot.length) {
      const key = clamped.kept.join(',')
      if (t.narrowCache === undefined || t.narrowCache[0] !== key) {
        const kept = clamped.kept.map((i) => snapshot[i])
        let filtered = unfiltered
        if (!t.allowHidden) {
          const allow = kept.map((tool) => tool.name)
          if (searchTool) allow.push(SEARCH_TOOLS_NAME)
          filtered = r.api.createToolDispatcher({ ...t.dispatcherOptions, filter: allow.length > 0 ? { allow } : { deny: runNames } })
        }
        t.narrowCache = [key, kept, filtered]
      }
      visible = t.narrowCache[1]
      dispatcher = t.narrowCache[2]
    }
  }
  let requestTools = visible
  if (searchTool && index && r.disclosure === 'search') {
    requestTools = selectDisclosedTools({ tools: visible.concat([searchTool]), input: inputText, topK: t.searchConfig.topK, activated: r.session.activated, index })
  }
  const { policy } = t
  if (policy.deferred || policy.cap !== undefined) {
    // Deferred tools wait for `search_tools`; a turn stays within the provider's cap (lib/agent-tool-policy.js).
    const select = (tools, topK) => selectDisclosedTools({ tools, input: inputText, topK, activated: r.session.activated, index })
    const search = searchTool && index ? { tool: searchTool, select } : undefined
    requestTools = turnTools(policy, requestTools, visible, search, r.session.activated, r.disclosure !== 'search')
  }
  // What the list's names give, kept on the snapshot (shared by the agent's runs) for the list it
  // was read from, and read again when a tool is renamed: the list's `{ count, idsHash }` (frozen,
  // as every run's requests and events carry the same object) and, once a model without tool
  // capability needs it, the `Available tools:` text (see `toolListMessage`).
  if (snap.listings === undefined) snap.listings = new WeakMap() // request tools array -> listing
  let listing = snap.listings.get(requestTools)
  if (listing === undefined || !sameNames(listing.names, requestTools)) {
    const names = requestTools.map((tool) => tool.name)
    const tools = Object.freeze({ count: names.length, idsHash: native.runToolIdsHash(names) })
    listing = { tools, names, descriptions: undefined, text: undefined, bytes: 0 }
    snap.listings.set(requestTools, listing)
  }
  return { requestTools, tools: listing.tools, dispatcher, listing }
}

function sameNames(names, tools) {
  if (names.length !== tools.length) return false
  for (let i = 0; i < names.length; i++) if (tools[i].name !== names[i]) return false
  return true
}

/**
 * The provider request of turn `r.turns`: the system message, then `history` folded by
 * `toolResultFold` (in the request only), then `after` (not folded). The redactor sees the whole
 * request (messages, tools, metadata) before the provider does; the signal is the run's own object.
 */
async function buildRequest(r, t, history, selection, after = []) {
  const { signal } = r
  const { requestTools, tools } = selection
  const folded = t.fold === undefined ? history : await foldToolResultHistory(history, t.fold, { sessionId: r.sessionId, runId: r.runId, turn: r.turns, signal, redact: r.resultRedact })
  const listed = toolListMessage(r.model, selection)
  const messages = listed === undefined ? t.system.concat(folded) : [listed, ...t.system, ...folded]
  for (const m of after) messages.push(m)
  const plain = { model: r.model, messages, tools: requestTools, metadata: { ...r.metadata, tools } }
  // `toolChoice` (the run's, else the agent's) as the run machine fixed it for this turn goes on
  // the request's options, checked against this turn's tools.
  const toolChoice = checkTurnToolChoice(r.tracker.turnChoice(), requestTools)
  if (toolChoice !== undefined) plain.options = { toolChoice }
  const request = redactRequest(r, plain, requestTools)
  request.signal = signal
  if (r.retry) request[AGENT_RETRIES] = true
  return request
}

/**
 * Upstream's default prompt: a `system` message `Available tools:\n- name: description` before the
 * rest, for a model that does not declare `capabilities.tools === true` (a tool-capable model reads
 * the definitions from `request.tools`; the text would double their tokens). The text and its JSON
 * size are made once per listing (`selectTools`); the message is new each turn (a provider may
 * change what it is given), and the request-size limit uses the kept size while it is unchanged.
 */
function toolListMessage(model, { requestTools, listing }) {
  const { names } = listing
  if (model?.capabilities?.tools === true || names.length === 0) return undefined
  // Descriptions are read only here, where they are used: reading a thousand of them each turn
  // cost more than reading the names (selectTools).
  if (listing.descriptions === undefined || !sameDescriptions(listing.descriptions, requestTools)) {
    const descriptions = requestTools.map((tool) => tool.description)
    listing.descriptions = descriptions
    listing.text = `Available tools:\n${names.map((name, i) => `- ${name}${descriptions[i] ? `: ${descriptions[i]}` : ''}`).join('\n')}`
    listing.bytes = jsonBytes(systemMessage(listing.text))
  }
  const message = systemMessage(listing.text)
  rememberTextMessageBytes(message, listing.bytes)
  return message
}

function sameDescriptions(descriptions, tools) {
  for (let i = 0; i < descriptions.length; i++) if (tools[i].description !== descriptions[i]) return false
  return true
}

const systemMessage = (text) => ({ role: 'system', content: [{ type: 'text', text }] })

/** `request` as the provider may see it: redacted (a copy) when the run has a redactor. */
function redactRequest(r, request, requestTools) {
  if (!r.redactor) return request
  const redacted = r.api.redactWith(request, r.redactor)
  // Redaction copies drop functions (so an own toJSON cannot carry a secret past them); the
  // redacted tool definitions keep their `execute`, which is code, not data.
  if (Array.isArray(redacted.tools) && Array.isArray(requestTools)) {
    redacted.tools = redacted.tools.map((tool, i) =>
      tool !== null && typeof tool === 'object' && typeof requestTools[i]?.execute === 'function' ? { ...tool, execute: requestTools[i].execute } : tool,
    )
  }
  return redacted
}

module.exports = { prepareTurns, selectTools, buildRequest, redactRequest, validatorOf }
