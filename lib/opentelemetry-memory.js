'use strict'
// createInMemoryTelemetry(): a tracer and a meter that keep what they are given, for tests and for
// looking at a run's span tree without an OpenTelemetry SDK. Trace ids are 32 hex digits, span ids
// 16, from one process-wide counter; a child span takes its parent's trace id.

let lastId = 0
const nextId = (digits) => (++lastId).toString(16).padStart(digits, '0').slice(-digits)

function createInMemoryTelemetry() {
  const spans = []
  const metrics = []

  const tracer = {
    startSpan(name, options) {
      const parent = options?.parent && typeof options.parent.spanContext === 'function' ? options.parent.spanContext() : undefined
      const record = {
        name,
        kind: options?.kind,
        traceId: parent?.traceId ?? nextId(32),
        spanId: nextId(16),
        parentSpanId: parent?.spanId,
        attributes: { ...(options?.attributes ?? {}) },
        ended: false,
        events: [],
      }
      spans.push(record)
      return {
        setAttribute(key, value) {
          record.attributes[key] = value
        },
        setStatus(code, message) {
          record.status = { code, message }
        },
        addEvent(eventName, attributes) {
          record.events.push({ name: eventName, attributes: { ...(attributes ?? {}) } })
        },
        spanContext() {
          return { traceId: record.traceId, spanId: record.spanId }
        },
        end() {
          record.ended = true
        },
      }
    },
  }

  const instrument = (name, kind) => (value, attributes) => {
    metrics.push({ name, kind, value, attributes: { ...(attributes ?? {}) } })
  }
  const meter = {
    createCounter: (name) => ({ add: instrument(name, 'counter') }),
    createHistogram: (name) => ({ record: instrument(name, 'histogram') }),
  }

  return {
    tracer,
    meter,
    get spans() {
      return spans
    },
    get metrics() {
      return metrics
    },
    clear() {
      spans.length = 0
      metrics.length = 0
    },
  }
}

module.exports = { createInMemoryTelemetry }
