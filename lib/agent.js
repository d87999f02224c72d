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
  const { createToolRegistry, redactWith, search } = api
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
    const key = indices.join(',')
    const c = shared.get(key0)
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
    const snap = { key, searchKey: searchOptions.key, embeddings: searchOptions.embeddings, registered: registered.slice(), tools, names, index, searchTool, registry }
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
    const { id, state, metadata: sessionMetadata } = sessionConfig
    const sessionId = typeof id === 'string' && id !== '' ? id : `session_${++sessionSeq}`
    const subscribers = new Set()

    // The session's internals, shared with its runs (lib/agent-run.js).
    const internals = {
      id: sessionId,
      config,
      metadata: sessionMetadata,
      snapshotOf,
      resumeGrant: state && Array.isArray(state.toolNames) ? state.toolNames.slice() : undefined,
      lastGrant: null,
      activated: state && Array.isArray(state.activatedToolNames) ? activateToolNames([], state.activatedToolNames) : [],
      transcript: state && Array.isArray(state.messages) ? state.messages.slice() : [],
      active: undefined, // the AbortController of the run in flight
      currentRunId: undefined,
      activeRedactor: undefined,
      activeLedger: undefined, // the run's ledger writer (lib/agent-ledger.js), when it has a runLedger
      // Whether an event has anyone to go to: a subscriber, or the run's ledger (event rows).
      observed: () => subscribers.size > 0 || internals.activeLedger !== undefined,
      emit(event) {
        if (subscribers.size > 0) {
          const redacted = internals.activeRedactor ? redactWith(event, internals.activeRedactor) : event
          for (const s of subscribers) s.push(redacted)
        }
        if (internals.activeLedger !== undefined) internals.activeLedger.event(event) // redacted with its row
      },
      // Dispatch events are redacted by the dispatcher itself.
      emitRedacted(event) {
        for (const s of subscribers) s.push(event)
        if (internals.activeLedger !== undefined) internals.activeLedger.event(event)
      },
      closeSubscribers() {
        for (const s of subscribers) s.close()
        subscribers.clear()
      },
    }
    internals.lastGrant = internals.resumeGrant ?? null
    // `caller` names the method in an options error (`stream` subscribes too).
    function subscribeAs(caller, options) {
      const subscriber = createEventSubscriber(sessionId, options ?? {}, () => subscribers.delete(subscriber), caller)
      subscribers.add(subscriber)
      return subscriber
    }
    function subscribe(options = {}) {
      return subscribeAs('subscribe', options)
    }
    const run = (input, options, runId) => runAgent(api, internals, input, options, runId)

    const session = {
      id: sessionId,
      run(input, options) {
        return run(input, options ?? {}, approval.durableRunId(config, options ?? {}) ?? `run_${++runSeq}`)
      },
      stream(input, options) {
        return createStreamResult(stream(input, options ?? {}))
      },
      subscribe,
      abort(reason) {
        if (internals.active) internals.active.abort(reason)
      },
      messages() {
        return internals.transcript.slice()
      },
      state() {
        const { lastGrant } = internals
        return { toolNames: lastGrant === null ? undefined : lastGrant.slice(), activatedToolNames: internals.activated.slice() }
      },
      clearActivatedTools() {
        internals.activated = []
      },
    }

    // `@arnilo/prism`'s stream: a subscription that sees only this run's events, ending when the
    // run ends; a failed or aborted run throws its AgentRunError after the last event.
    async function* stream(input, options) {
      const { maxQueuedEvents, overflow, ...runOptions } = options
      const runId = approval.durableRunId(config, runOptions) ?? `run_${++runSeq}`
      const subscription = subscribeAs('stream', { maxQueuedEvents, overflow })
      let settled = false
      const runPromise = run(input, runOptions, runId).finally(() => {
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
          if (internals.active && internals.currentRunId === runId) internals.active.abort(new Error('stream consumer closed'))
          await runPromise.catch(() => undefined)
        }
      }
    }

    return session
  }

  return { createAgent, createAgentSession }
}
