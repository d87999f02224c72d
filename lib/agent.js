'use strict'
// The agent tool loop: `createAgent(config).createSession().run(input, options)`.
// The loop awaits what must be awaited (the provider's async iterable, narrowing callbacks, the
// dispatch promises) and asks the native run rules (src/run) for every decision: the grant, the
// narrowing clamp, the tools hash, limits, the next step and the plan of each batch.
// Provider events, transcript messages and agent events have `@arnilo/prism`'s shapes, so its
// providers (their request serializers) and its hosts (their subscribers) work unchanged.
//
// This file makes agents and sessions; a run is lib/agent-run.js, its turns lib/agent-turn-loop.js
// (a host's loop strategy: lib/agent-loop.js), their requests lib/agent-assemble.js, one provider
// turn lib/agent-provider-turn.js, one round of calls lib/agent-tool-batch.js, the artifact loop's
// step lib/agent-artifact-step.js.
const { checkConfig, refuseUnsupported, SESSION_CONFIG_REFUSED } = require('./agent-options.js')
const { createEventSubscriber } = require('./agent-subscriber.js')
const approval = require('./approval.js')
const { runAgent } = require('./agent-run.js')
const { withBareResults } = require('./tool-result-shape.js')
const { resolveOutputBudget } = require('./output-budget.js')
const { createStreamResult } = require('./agent-text-stream.js')

let sessionSeq = 0
let runSeq = 0

module.exports = function agentApi(api) {
  const { createToolRegistry, search } = api
  const { createToolSearchIndex, createSearchToolsTool, activateToolNames, SEARCH_TOOLS_NAME } = search
  // Per agent config: the last run's snapshot (tools, registry, search index), reused while a
  // run's grant resolves to the very same tool objects (a registry or index over 1 000 tools costs ms).
  const shared = new WeakMap()

  function createAgent(config) {
    checkConfig(config)
    const agent = {
      config,
      createSession(sessionConfig = {}) {
        return createAgentSession({ ...(sessionConfig ?? {}), agent: this ?? agent })
      },
    }
    return agent
  }

  function snapshotOf(key0, registered, indices, searchOptions) {
    const c = shared.get(key0)
    // A grant the run rules answered from their memo is the same frozen list: no key to build.
    const key = c !== undefined && c.indices === indices ? c.key : indices.join(',')
    if (
      c !== undefined &&
      c.key === key &&
      c.registered.length === registered.length &&
      c.searchKey === searchOptions.key &&
      c.embeddings === searchOptions.embeddings
    ) {
      let same = true
      for (let i = 0; i < registered.length; i++) {
        if (c.registered[i] !== registered[i]) {
          same = false
          break
        }
      }
      if (same) return c
    }
    const tools = indices.map((i) => registered[i])
    let index
    let searchTool
    if (searchOptions.enabled) {
      try {
        // With a ranker, a hybrid index: it embeds the tools off the main thread while the run goes
        // on; its search_tools waits for the vectors, and answers lexically if the model fails.
        index = createToolSearchIndex(tools, {
          queryBytes: searchOptions.queryBytes,
          maxTools: searchOptions.maxTools,
          embeddings: searchOptions.embeddings,
        })
        searchTool = createSearchToolsTool(index, { defaultK: searchOptions.defaultK })
      } catch {
        index = undefined // fail closed: over the index cap or unreadable tools disclose the full grant
        searchTool = undefined
      }
    }
    const names = tools.map((t) => t.name)
    const dispatchTools = searchTool && !names.includes(SEARCH_TOOLS_NAME) ? tools.concat([searchTool]) : tools
    // The registry dispatch runs: each tool answering a ToolResult within its output budget.
    const budget = resolveOutputBudget(key0.toolOutputBudget, 'createAgent: toolOutputBudget')
    const registry = createToolRegistry(dispatchTools.map((t) => withBareResults(t, budget)))
    const snap = { key, indices, searchKey: searchOptions.key, embeddings: searchOptions.embeddings, registered: registered.slice(), tools, names, index, searchTool, registry }
    shared.set(key0, snap)
    return snap
  }

  // `createAgentSession({ agent, id?, metadata?, state? })`: what `agent.createSession()` returns.
  function createAgentSession(sessionConfig) {
    if (sessionConfig === null || typeof sessionConfig !== 'object') throw new TypeError('createAgentSession: config must be an object')
    const agent = sessionConfig.agent
    if (agent === null || typeof agent !== 'object' || agent.config === null || typeof agent.config !== 'object') {
      throw new TypeError('createAgentSession: agent must be an agent from createAgent')
    }
    const config = agent.config
    checkConfig(config)
    refuseUnsupported(sessionConfig, SESSION_CONFIG_REFUSED, 'createSession')
    const { id, state, metadata } = sessionConfig
    const sessionId = typeof id === 'string' && id !== '' ? id : `session_${++sessionSeq}`
    return new AgentSession(new SessionState(api, sessionId, config, metadata, state, snapshotOf, activateToolNames))
  }

  return { createAgent, createAgentSession }
}

const NO_SUBSCRIBERS = new Set() // shared by sessions no one subscribed to; never added to

/**
 * A session's internals, shared with its runs (lib/agent-run.js): its transcript, grant and
 * activated tools, its subscribers, and the run in flight. A class, so ten thousand sessions share
 * their methods instead of holding a closure each.
 */
class SessionState {
  constructor(api, id, config, metadata, state, snapshotOf, activateToolNames) {
    this.api = api
    this.id = id
    this.config = config
    this.metadata = metadata
    this.snapshotOf = snapshotOf
    this.resumeGrant = state && Array.isArray(state.toolNames) ? state.toolNames.slice() : undefined
    this.lastGrant = this.resumeGrant ?? null
    this.activated = state && Array.isArray(state.activatedToolNames) ? activateToolNames([], state.activatedToolNames) : []
    this.transcript = state && Array.isArray(state.messages) ? state.messages.slice() : []
    this.subscribers = NO_SUBSCRIBERS // a Set of its own at the first subscribe (most sessions have none)
    this.active = undefined // the run in flight (lib/agent-run.js), which `abort(reason)` ends
    this.currentRunId = undefined
    this.activeRedactor = undefined
    this.activeLedger = undefined // the run's ledger writer (lib/agent-ledger.js), when it has a runLedger
  }

  /** Whether an event has anyone to go to: a subscriber, or the run's ledger (event rows). */
  observed() {
    return this.subscribers.size > 0 || this.activeLedger !== undefined
  }

  emit(event) {
    if (this.subscribers.size > 0) {
      const redacted = this.activeRedactor ? this.api.redactWith(event, this.activeRedactor) : event
      for (const s of this.subscribers) s.push(redacted)
    }
    if (this.activeLedger !== undefined) this.activeLedger.event(event) // redacted with its row
  }

  /** Dispatch events are redacted by the dispatcher itself. */
  emitRedacted(event) {
    for (const s of this.subscribers) s.push(event)
    if (this.activeLedger !== undefined) this.activeLedger.event(event)
  }

  closeSubscribers() {
    if (this.subscribers.size === 0) return
    for (const s of this.subscribers) s.close()
    this.subscribers.clear()
  }

  /** A subscriber; `caller` names the method in an options error (`stream` subscribes too). */
  subscribeAs(caller, options) {
    if (this.subscribers === NO_SUBSCRIBERS) this.subscribers = new Set()
    const subscribers = this.subscribers
    const subscriber = createEventSubscriber(this.id, options ?? {}, () => subscribers.delete(subscriber), caller)
    subscribers.add(subscriber)
    return subscriber
  }

  run(input, options, runId) {
    return runAgent(this.api, this, input, options, runId)
  }
}

/** What `agent.createSession()` returns: `@arnilo/prism`'s AgentSession. */
class AgentSession {
  #s
  constructor(state) {
    this.#s = state
    this.id = state.id
  }

  run(input, options) {
    const s = this.#s
    return s.run(input, options ?? {}, approval.durableRunId(s.config, options ?? {}) ?? `run_${++runSeq}`)
  }

  stream(input, options) {
    return createStreamResult(streamRun(this.#s, input, options ?? {}))
  }

  subscribe(options = {}) {
    return this.#s.subscribeAs('subscribe', options)
  }

  abort(reason) {
    const s = this.#s
    if (s.active) s.active.abort(reason)
  }

  messages() {
    return this.#s.transcript.slice()
  }

  state() {
    const { lastGrant, activated } = this.#s
    return { toolNames: lastGrant === null ? undefined : lastGrant.slice(), activatedToolNames: activated.slice() }
  }

  clearActivatedTools() {
    this.#s.activated = []
  }
}

// `@arnilo/prism`'s stream: a subscription that sees only this run's events, ending when the
// run ends; a failed or aborted run throws its AgentRunError after the last event.
async function* streamRun(s, input, options) {
  const { maxQueuedEvents, overflow, ...runOptions } = options
  const runId = approval.durableRunId(s.config, runOptions) ?? `run_${++runSeq}`
  const subscription = s.subscribeAs('stream', { maxQueuedEvents, overflow })
  let settled = false
  const runPromise = s.run(input, runOptions, runId).finally(() => {
    settled = true
    subscription.close() // a run refused before it started closes no subscriber itself
  })
  runPromise.catch(() => {})
  try {
    for await (const event of subscription) {
      if (typeof event.runId === 'string' && event.runId !== runId) continue
      yield event
    }
    await runPromise
  } finally {
    if (!settled) {
      if (s.active && s.currentRunId === runId) s.active.abort(new Error('stream consumer closed'))
      await runPromise.catch(() => undefined)
    }
  }
}
