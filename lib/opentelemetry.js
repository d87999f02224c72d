'use strict'
// `prism-tools-native/opentelemetry`: agent events as OpenTelemetry spans and metrics, with the API,
// span names, attribute keys and metric names of `@arnilo/prism-observability-opentelemetry` 0.3.0
// (OpenTelemetry's GenAI semantic conventions):
//
//   invoke_agent prism            one run (internal); its children:
//     chat {model}                one provider attempt (client)
//     execute_tool {tool}         one tool call (internal)
//     prism.guardrail.evaluate    one guardrail decision (internal, ended at once)
//     prism.agent.delegate        a delegation the host reports (internal)
//
//   gen_ai.client.operation.duration (s), gen_ai.client.token.usage (token),
//   gen_ai.execute_tool.duration (s), gen_ai.invoke_agent.duration (s), prism.run.feedback,
//   prism.run.evaluation.
//
// Only metadata is exported: no prompt, message, tool argument or result ever becomes an attribute.
// Ids (session, run, call) are span attributes, never metric labels. String values and status
// messages go through `redactor` / `secrets` when given, and are cut to 1 024 UTF-8 bytes between
// characters. A span's name says what its attribute says (`chat {model}` from the exported
// `gen_ai.request.model`, `execute_tool {tool}` from `gen_ai.tool.name`), never more. A failing
// tracer, meter or exporter never reaches the run: the error goes to `onExporterError`.
// `@opentelemetry/api` is an optional peer: wrapOpenTelemetryApi adapts its tracer and meter.
const { createInMemoryTelemetry } = require('./opentelemetry-memory.js')
const { wrapOpenTelemetryApi } = require('./opentelemetry-wrap.js')
const { utf8Prefix } = require('./utf8.js')

const CODE_INVALID_OPTION = 'ERR_PRISM_INVALID_OPTION'
const MAX_STRING_BYTES = 1024
const MAX_EVALUATION_NAME = 128
const REDACTED = '[REDACTED]'

function invalid(Ctor, message) {
  const error = new Ctor(`createOpenTelemetryInstrumentation: ${message}`)
  error.code = CODE_INVALID_OPTION
  return error
}

function checkOptions(options) {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) throw invalid(TypeError, 'options must be an object')
  const { tracer, meter, secrets, redactor, fieldPolicy, onExporterError, onTraceReference } = options
  if (tracer !== undefined && (tracer === null || typeof tracer.startSpan !== 'function')) throw invalid(TypeError, 'tracer must have startSpan(name, options)')
  if (meter !== undefined && (meter === null || typeof meter.createCounter !== 'function' || typeof meter.createHistogram !== 'function')) {
    throw invalid(TypeError, 'meter must have createCounter(name) and createHistogram(name)')
  }
  if (secrets !== undefined && (!Array.isArray(secrets) || !secrets.every((s) => typeof s === 'string'))) throw invalid(TypeError, 'secrets must be an array of strings')
  if (redactor !== undefined && (redactor === null || typeof redactor.redact !== 'function')) throw invalid(TypeError, 'redactor must have redact(value)')
  for (const [name, fn] of [['fieldPolicy', fieldPolicy], ['onExporterError', onExporterError], ['onTraceReference', onTraceReference]]) {
    if (fn !== undefined && typeof fn !== 'function') throw invalid(TypeError, `${name} must be a function`)
  }
  const max = options.maxTraceReferences ?? 1024
  if (!Number.isSafeInteger(max) || max < 1 || max > 10_000) throw invalid(RangeError, 'maxTraceReferences must be an integer from 1 to 10000')
  return max
}

// A string value as exported: redacted, then cut between characters (never through a surrogate pair).
function makeCleaner(options) {
  const secrets = (options.secrets ?? []).filter((s) => s !== '').sort((a, b) => b.length - a.length)
  const redactor = options.redactor
  return (text) => {
    let out = text
    if (redactor !== undefined) {
      const r = redactor.redact(out)
      out = typeof r === 'string' ? r : REDACTED
    }
    for (const s of secrets) if (out.includes(s)) out = out.split(s).join(REDACTED)
    return utf8Prefix(out, MAX_STRING_BYTES)
  }
}

// FNV-1a of the path and value, and a per-process sequence: a token that names no value.
let tokenSeq = 0
function tokenFor(path, value) {
  let h = 0x811c9dc5
  const text = `${path}\u0000${value}`
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i)
    h = Math.imul(h, 0x01000193)
  }
  tokenSeq += 1
  return `tok_${(h >>> 0).toString(16).padStart(8, '0')}${tokenSeq.toString(36)}`
}

const kindOf = (value) => (value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value)
const clampCount = (n) => (Number.isSafeInteger(n) && n > 0 ? Math.min(n, 64) : 0)
const str = (value) => (typeof value === 'string' ? value : value === undefined || value === null ? '' : String(value))

function modelName(model) {
  if (typeof model === 'string') return model
  if (model !== null && typeof model === 'object' && typeof model.model === 'string') return model.model
  return undefined
}

function createOpenTelemetryInstrumentation(options = {}) {
  const maxTraceReferences = checkOptions(options ?? {})
  const { tracer, meter, fieldPolicy } = options
  const enabled = options.enabled !== false && (tracer !== undefined || meter !== undefined)
  const onExporterError = options.onExporterError ?? (() => {})
  const clean = makeCleaner(options)

  const histogram = (name, description, unit) => (enabled && meter ? meter.createHistogram(name, { description, unit }) : undefined)
  const counter = (name, description) => (enabled && meter ? meter.createCounter(name, { description }) : undefined)
  const metrics = {
    operation: histogram('gen_ai.client.operation.duration', 'GenAI client operation duration', 's'),
    tool: histogram('gen_ai.execute_tool.duration', 'Tool execution duration', 's'),
    tokens: histogram('gen_ai.client.token.usage', 'GenAI token usage', 'token'),
    agent: histogram('gen_ai.invoke_agent.duration', 'Agent invocation duration', 's'),
    feedback: counter('prism.run.feedback', 'Run feedback count'),
    evaluation: counter('prism.run.evaluation', 'Run evaluation count'),
  }

  // Open spans by key: `agent:<run>`, `provider:<run>:<turn>:<attempt>`, `tool:<run>:<call>`, `delegation:<run>:<id>`.
  const open = new Map()
  const runStarts = new Map() // runId -> ms, for gen_ai.invoke_agent.duration
  const turnStarts = new Map() // provider span key -> ms, when an event carries no latencyMs
  const traces = new Map() // runId -> traceId, oldest first, at most maxTraceReferences

  const guard = (fn) => {
    if (!enabled) return
    try {
      fn()
    } catch (error) {
      try {
        onExporterError(error)
      } catch {}
    }
  }

  // Exported attributes: strings cleaned, then the field policy (deny drops, redact masks, tokenize hashes).
  function exported(attributes) {
    const out = {}
    for (const path of Object.keys(attributes)) {
      let value = attributes[path]
      if (typeof value === 'string') value = clean(value)
      if (fieldPolicy === undefined) {
        out[path] = value
        continue
      }
      let decision
      try {
        decision = fieldPolicy({ path, kind: kindOf(value), destination: 'telemetry', direction: 'outbound' })
      } catch {
        continue // a failing policy drops the attribute; the value is never echoed
      }
      const action = decision !== null && typeof decision === 'object' ? decision.action : undefined
      if (action === 'allow') out[path] = value
      else if (action === 'redact') out[path] = REDACTED
      else if (action === 'tokenize' && typeof value === 'string') out[path] = tokenFor(path, value)
    }
    return out
  }

  function close(key, status, message) {
    const entry = open.get(key)
    if (entry === undefined) return
    open.delete(key)
    try {
      entry.span.setStatus(status, message === undefined ? undefined : clean(str(message)))
    } finally {
      entry.span.end()
    }
  }
  function closeAll(predicate, message) {
    for (const [key, entry] of [...open]) if (predicate(entry, key)) close(key, 'error', message)
  }
  const agentSpan = (runId) => open.get(`agent:${runId}`)?.span

  function rememberTrace(runId, span) {
    const traceId = typeof span.spanContext === 'function' ? span.spanContext()?.traceId : undefined
    if (typeof traceId !== 'string' || traceId === '') return
    traces.delete(runId)
    traces.set(runId, traceId)
    while (traces.size > maxTraceReferences) traces.delete(traces.keys().next().value)
    options.onTraceReference?.({ runId, traceId })
  }

  // `operation`, then the exported value of the attribute `subject` names when there is one: the span
  // name carries nothing its attribute does not (redacted, cut, and as the field policy left it).
  function openChild(key, runId, sessionId, operation, subject, kind, attributes) {
    if (!tracer) return
    close(key, 'error', 'Duplicate span start')
    const out = exported(attributes)
    const named = subject === undefined ? undefined : out[subject]
    const name = typeof named === 'string' && named !== '' ? `${operation} ${named}` : operation
    const span = tracer.startSpan(name, { kind, parent: agentSpan(runId), attributes: out })
    open.set(key, { span, runId, sessionId })
  }

  const labels = (value) => value // metric labels: fixed keys, low-cardinality values only

  const on = {
    agent_started(e) {
      if (!tracer) return
      const key = `agent:${e.runId}`
      close(key, 'error', 'Duplicate agent start')
      const parentContext = typeof options.parentContext === 'function' ? options.parentContext(e) : options.parentContext
      const span = tracer.startSpan('invoke_agent prism', {
        kind: 'internal',
        parentContext,
        attributes: exported({
          'gen_ai.operation.name': 'invoke_agent',
          'gen_ai.agent.name': 'prism',
          'prism.session_id': str(e.sessionId),
          'prism.run_id': str(e.runId),
        }),
      })
      open.set(key, { span, runId: e.runId, sessionId: e.sessionId })
      runStarts.set(e.runId, Date.now())
      rememberTrace(e.runId, span)
    },
    agent_finished(e) {
      const key = `agent:${e.runId}`
      closeAll((entry, k) => entry.runId === e.runId && k !== key, 'Agent finished with child span open')
      close(key, 'ok')
      const start = runStarts.get(e.runId)
      runStarts.delete(e.runId)
      if (start !== undefined) metrics.agent?.record((Date.now() - start) / 1000, labels({ 'gen_ai.operation.name': 'invoke_agent' }))
    },
    agent_suspended(e) {
      closeAll((entry) => entry.runId === e.runId, 'Agent suspended')
      runStarts.delete(e.runId)
    },
    agent_denied(e) {
      closeAll((entry) => entry.runId === e.runId, 'Agent denied')
      runStarts.delete(e.runId)
    },
    provider_turn_started(e) {
      const m = e.metadata ?? {}
      const attempt = m.attempt ?? 1
      const key = `provider:${e.runId}:${e.turn}:${attempt}`
      const model = modelName(m.model)
      const attributes = { 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': str(m.providerId) }
      if (model !== undefined) attributes['gen_ai.request.model'] = model
      attributes['prism.turn'] = e.turn
      if (m.attempt) attributes['prism.attempt'] = m.attempt
      turnStarts.set(key, Date.now())
      openChild(key, e.runId, e.sessionId, 'chat', 'gen_ai.request.model', 'client', attributes)
    },
    provider_turn_finished(e) {
      const m = e.metadata ?? {}
      const key = `provider:${e.runId}:${e.turn}:${m.attempt ?? 1}`
      const entry = open.get(key)
      if (entry !== undefined && typeof m.httpStatus === 'number') {
        const status = exported({ 'http.response.status_code': m.httpStatus })
        if ('http.response.status_code' in status) entry.span.setAttribute('http.response.status_code', status['http.response.status_code'])
      }
      close(key, e.error ? 'error' : 'ok', e.error?.message)
      const started = turnStarts.get(key)
      turnStarts.delete(key)
      const latencyMs = typeof m.latencyMs === 'number' ? m.latencyMs : started !== undefined ? Date.now() - started : 0
      const provider = str(m.providerId)
      metrics.operation?.record(latencyMs / 1000, labels({ 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': provider, outcome: e.error ? 'error' : 'success' }))
      const usage = e.usage
      if (usage && usage.inputTokens !== undefined) {
        metrics.tokens?.record(usage.inputTokens, labels({ 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': provider, 'gen_ai.token.type': 'input' }))
      }
      if (usage && usage.outputTokens !== undefined) {
        metrics.tokens?.record(usage.outputTokens, labels({ 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': provider, 'gen_ai.token.type': 'output' }))
      }
    },
    tool_execution_started(e) {
      const call = e.call ?? {}
      const name = str(call.name ?? e.toolName)
      openChild(`tool:${e.runId}:${call.id}`, e.runId, e.sessionId, 'execute_tool', 'gen_ai.tool.name', 'internal', {
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': name,
        'gen_ai.tool.call.id': str(call.id),
      })
    },
    tool_execution_finished(e) {
      toolEnded(e, e.result?.toolCallId, 'ok', undefined)
    },
    tool_execution_error(e) {
      toolEnded(e, e.call?.id, 'error', e.error?.message)
    },
    tool_execution_blocked(e) {
      toolEnded(e, e.toolCallId, 'error', e.error?.message)
    },
    guardrail_decision(e) {
      if (!tracer) return
      const record = e.record ?? {}
      const span = tracer.startSpan('prism.guardrail.evaluate', {
        kind: 'internal',
        parent: agentSpan(e.runId),
        attributes: exported({ 'prism.guardrail.stage': str(record.stage), 'prism.guardrail.action': str(record.action) }),
      })
      try {
        span.setStatus(record.action === 'allow' ? 'ok' : 'error')
      } finally {
        span.end()
      }
    },
    error(e) {
      const message = e.error?.message
      if (e.runId) {
        closeAll((entry) => entry.runId === e.runId, message)
        runStarts.delete(e.runId)
      } else if (e.sessionId) closeAll((entry) => entry.sessionId === e.sessionId, message)
    },
  }

  function toolEnded(e, callId, status, message) {
    close(`tool:${e.runId}:${callId}`, status, message)
    const m = e.metadata ?? {}
    const ms = typeof m.durationMs === 'number' ? m.durationMs : 0
    metrics.tool?.record(ms / 1000, labels({ 'gen_ai.operation.name': 'execute_tool', outcome: str(m.status) }))
  }

  function handleAgentEvent(event) {
    if (!enabled || event === null || typeof event !== 'object') return
    const handler = Object.prototype.hasOwnProperty.call(on, event.type) ? on[event.type] : undefined
    if (handler !== undefined) guard(() => handler(event))
  }

  // A run-level event: on the run's span while it is open, else a span of its own, ended at once.
  function runEvent(runId, name, attributes) {
    guard(() => {
      const attrs = exported(attributes)
      const span = agentSpan(runId)
      if (span !== undefined && typeof span.addEvent === 'function') span.addEvent(name, attrs)
      else if (tracer) {
        const own = tracer.startSpan(name, { kind: 'internal', attributes: { ...exported({ 'prism.run_id': str(runId) }), ...attrs } })
        try {
          own.setStatus('ok')
        } finally {
          own.end()
        }
      }
    })
  }

  return {
    enabled,
    handleAgentEvent,
    handleDelegation(event) {
      if (event === null || typeof event !== 'object') return
      guard(() => {
        const key = `delegation:${event.runId}:${event.delegationId}`
        if (event.type === 'started') openChild(key, event.runId, 'delegation', 'prism.agent.delegate', undefined, 'internal', { 'prism.delegation.child': str(event.childId) })
        else close(key, event.type === 'finished' ? 'ok' : 'error', event.message)
      })
    },
    handleRunFeedback(feedback) {
      if (feedback === null || typeof feedback !== 'object') return
      const r = feedback.rating
      const rating = typeof r === 'number' && Number.isFinite(r) && r >= -1 && r <= 1 ? r : undefined
      const evaluationCount = clampCount(feedback.evaluationCount)
      runEvent(feedback.runId, 'prism.run.feedback', {
        'prism.feedback.rating': rating ?? 0,
        'prism.feedback.has_rating': rating !== undefined,
        'prism.feedback.has_comment': Boolean(feedback.hasComment),
        'prism.feedback.tag_count': clampCount(feedback.tagCount),
        'prism.feedback.scorer_count': clampCount(feedback.scorerCount),
        'prism.feedback.evaluation_count': evaluationCount,
      })
      const bucket = rating === undefined ? 'none' : rating > 0 ? 'positive' : rating < 0 ? 'negative' : 'neutral'
      guard(() => metrics.feedback?.add(1, labels({ rating: bucket, linked_evaluation: evaluationCount > 0 ? 'true' : 'false' })))
    },
    handleEvaluation(evaluation) {
      if (evaluation === null || typeof evaluation !== 'object') return
      const s = evaluation.score
      const score = typeof s === 'number' && Number.isFinite(s) ? s : undefined
      const attributes = {
        'gen_ai.evaluation.name': (typeof evaluation.name === 'string' ? evaluation.name.slice(0, MAX_EVALUATION_NAME) : '') || 'prism.run',
        'prism.evaluation.status': str(evaluation.status),
        'prism.evaluation.has_reason': Boolean(evaluation.hasReason),
      }
      if (score !== undefined) attributes['gen_ai.evaluation.score.value'] = score
      runEvent(evaluation.runId, 'gen_ai.evaluation.result', attributes)
      const status = ['scored', 'skipped', 'failed'].includes(evaluation.status) ? evaluation.status : 'unknown'
      guard(() => metrics.evaluation?.add(1, labels({ status })))
    },
    traceId: (runId) => traces.get(runId),
    attachSession(session) {
      if (!enabled) return () => {}
      if (session === null || typeof session !== 'object' || typeof session.subscribe !== 'function') {
        throw invalid(TypeError, 'attachSession: session must have subscribe()')
      }
      const iterator = session.subscribe()[Symbol.asyncIterator]()
      let attached = true
      ;(async () => {
        try {
          while (attached) {
            const step = await iterator.next()
            if (!attached || step.done) break
            handleAgentEvent(step.value)
          }
        } catch {}
      })()
      return () => {
        if (!attached) return
        attached = false
        try {
          Promise.resolve(iterator.return?.()).catch(() => {})
        } catch {}
        guard(() => closeAll((entry) => entry.sessionId === session.id, 'Instrumentation detached'))
      }
    },
  }
}

module.exports = { createOpenTelemetryInstrumentation, createInMemoryTelemetry, wrapOpenTelemetryApi }
