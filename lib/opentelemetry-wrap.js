'use strict'
// wrapOpenTelemetryApi(tracer, meter?, api?): an `@opentelemetry/api` tracer and meter as the
// instrumentation's PrismTracer / PrismMeter. A child span is started in the context of its parent
// (`api.trace.setSpan(api.context.active(), parent)`); without `api` the installed
// `@opentelemetry/api` (an optional peer) is used when it can be loaded, and a span whose parent
// cannot be set becomes a root span. Span kinds and status codes are OpenTelemetry's numbers
// (SpanKind INTERNAL 0, CLIENT 2; SpanStatusCode OK 1, ERROR 2).

const SPAN_KIND = { internal: 0, client: 2 }
const STATUS = { ok: 1, error: 2 }
const RAW = Symbol('prism.opentelemetry.span')

let installedApi
function loadInstalledApi() {
  if (installedApi === undefined) {
    try {
      const api = require('@opentelemetry/api')
      installedApi = api && api.context && api.trace ? { context: api.context, trace: api.trace } : null
    } catch {
      installedApi = null
    }
  }
  return installedApi
}

function invalid(message) {
  const error = new TypeError(`wrapOpenTelemetryApi: ${message}`)
  error.code = 'ERR_PRISM_INVALID_OPTION'
  return error
}

function wrapOpenTelemetryApi(tracer, meter, api) {
  if (tracer === null || typeof tracer !== 'object' || typeof tracer.startSpan !== 'function') throw invalid('tracer must have startSpan(name, options, context)')
  if (meter !== undefined && meter !== null && (typeof meter.createCounter !== 'function' || typeof meter.createHistogram !== 'function')) {
    throw invalid('meter must have createCounter(name, options) and createHistogram(name, options)')
  }
  if (api !== undefined && (api === null || typeof api.context?.active !== 'function' || typeof api.trace?.setSpan !== 'function')) {
    throw invalid('api must be { context, trace } from @opentelemetry/api')
  }
  const contextApi = () => api ?? loadInstalledApi()

  const wrappedTracer = {
    startSpan(name, options) {
      const raw = options?.parent?.[RAW]
      let context = options?.parentContext
      if (context === undefined && raw !== undefined) {
        const a = contextApi()
        if (a) context = a.trace.setSpan(a.context.active(), raw)
      }
      const attributes = options?.attributes ? { ...options.attributes } : undefined
      const span = tracer.startSpan(name, { attributes, kind: SPAN_KIND[options?.kind] ?? SPAN_KIND.internal }, context)
      return {
        [RAW]: span,
        setAttribute: (key, value) => span.setAttribute(key, value),
        setStatus: (code, message) => span.setStatus(message === undefined ? { code: STATUS[code] ?? 0 } : { code: STATUS[code] ?? 0, message }),
        addEvent: (eventName, attrs) => span.addEvent?.(eventName, attrs ? { ...attrs } : undefined),
        spanContext: () => (typeof span.spanContext === 'function' ? span.spanContext() : { traceId: '', spanId: '' }),
        end: () => span.end(),
      }
    },
  }

  let wrappedMeter
  if (meter) {
    wrappedMeter = {
      createCounter(name, options) {
        const counter = meter.createCounter(name, options)
        return { add: (value, attributes) => counter.add(value, attributes) }
      },
      createHistogram(name, options) {
        const histogram = meter.createHistogram(name, options)
        return { record: (value, attributes) => histogram.record(value, attributes) }
      },
    }
  }
  return { tracer: wrappedTracer, meter: wrappedMeter }
}

module.exports = { wrapOpenTelemetryApi }
