'use strict'
// The run-level rows the agent loop writes to a configured `runLedger`, with `@arnilo/prism`'s names
// and shapes: a run row when the run starts (`status: "running"`) and one when it ends
// (`succeeded` / `failed` / `aborted` / `suspended`, with `finishedAt`, `abortReason`, `error`); a
// usage row per provider attempt that reported usage (`scope: "provider_turn"`, `turn`, `attempt`) and
// one aggregate on success (`scope: "run_total"`); an event row per agent event of the run.
//
// Every append of the run — these rows and dispatch's tool rows — goes through one queue: the next
// append starts only once the previous one (a promise, if the ledger returns one) has settled, so a
// ledger sees one append at a time, in run order. Run and usage appends are awaited by the loop and a
// failure fails the run. Event appends are not awaited: the first failure is kept (later event rows
// are skipped) and thrown by `drain()`, which the loop calls before the run succeeds and before the
// terminal row. A tool row's failure is swallowed by dispatch, as before. Each row passes through
// the run's redactor (the same `redactRunLedgerRecord` the tool rows' redaction uses) when it is
// queued. A ledger method that is missing is skipped. Only a run with a ledger builds any of this.
// An append that never settles holds the run only until the run is aborted: every wait of the loop
// on the queue ends ABORT_GRACE_MS after the run's signal aborts (a ledger that answers keeps every
// row, the aborted run's terminal row included; one that never does is given up on).

const { randomUUID } = require('node:crypto')
const { isoNow } = require('./clock.js')

const noop = () => {}
// How long an aborted run still waits for its ledger.
const ABORT_GRACE_MS = 1000

// The run's ownership: `ownership`, else the identity's tenant/account/user (as upstream derives it).
function ownershipOf(ownership, identity) {
  const o = ownership !== undefined && ownership !== null ? ownership : identity
  if (o === null || typeof o !== 'object') return undefined
  const out = {}
  if (o.tenantId != null) out.tenantId = o.tenantId
  if (o.accountId != null) out.accountId = o.accountId
  if (o.userId != null) out.userId = o.userId
  return out
}

const flushesOnTerminal = (ledger) => typeof ledger.flush === 'function' && ledger.durability === 'flush_on_terminal'

/**
 * The writer of one run's rows to `ledger`.
 * @param {object} ledger the run's `runLedger`
 * @param {{ sessionId: string, runId: string, model: any, redactor: any, redactWith: Function, ownership: any, identity: any, signal?: AbortSignal }} o
 */
function createRunLedgerWriter(ledger, o) {
  const { sessionId, runId, model, redactor, redactWith, signal } = o
  // Resolves a grace period after the run is aborted: what every wait below races.
  let aborted
  const untilAborted = () => {
    if (aborted === undefined) {
      aborted = new Promise((resolve) => {
        const later = () => setTimeout(resolve, ABORT_GRACE_MS).unref()
        if (signal.aborted) later()
        else signal.addEventListener('abort', later, { once: true })
      })
    }
    return aborted
  }
  const bounded = (p) => (signal === undefined ? p : Promise.race([p, untilAborted()]))
  const owner = ownershipOf(o.ownership, o.identity)
  const startedAt = isoNow()
  const provider = model !== null && typeof model === 'object' ? model.provider : undefined
  let chain = Promise.resolve()
  let failed = false
  let failure

  const safe = (record) => (redactor ? redactWith(record, redactor) : record)
  const owned = (record) => (owner === undefined ? record : Object.assign(record, owner))

  // Queued after every earlier append; settles with this append.
  function write(method, record) {
    const p = chain.then(() => {
      const f = ledger[method]
      if (typeof f === 'function') return f.call(ledger, record)
      return undefined
    })
    chain = p.then(noop, noop)
    return bounded(p)
  }

  function runRow(status, end) {
    const row = { id: runId, sessionId }
    if (model !== undefined) row.model = model
    if (provider !== undefined) row.provider = provider
    row.status = status
    row.startedAt = startedAt
    if (end !== undefined) {
      row.finishedAt = isoNow()
      if (end.abortReason !== undefined) row.abortReason = end.abortReason
      if (end.error !== undefined) row.error = end.error
    }
    return safe(owned(row))
  }

  function usageRow(scope, usage, turn, attempt) {
    const row = { id: `usage_${randomUUID()}`, sessionId, runId, scope }
    if (turn !== undefined) row.turn = turn
    if (attempt !== undefined) row.attempt = attempt
    row.usage = usage
    row.recordedAt = isoNow()
    return safe(owned(row))
  }

  async function drain() {
    await bounded(chain)
    if (failed) {
      const error = failure
      failed = false
      failure = undefined
      throw error
    }
  }

  return {
    /** The `running` row; the caller awaits it. */
    start: () => write('appendRun', runRow('running')),
    /** One event row (the event is redacted with the row). Not awaited; see `drain`. */
    event(event) {
      const row = safe(owned({
        id: `event_${randomUUID()}`,
        sessionId: event.sessionId ?? sessionId,
        runId: event.runId,
        type: event.type,
        timestamp: isoNow(),
        event,
        redacted: Boolean(redactor),
      }))
      chain = chain
        .then(() => {
          if (failed) return undefined
          const f = ledger.appendEvent
          return typeof f === 'function' ? f.call(ledger, row) : undefined
        })
        .then(noop, (error) => {
          if (!failed) {
            failed = true
            failure = error
          }
        })
    },
    /** A provider attempt's usage row; the caller awaits it. */
    turnUsage: (usage, turn, attempt) => write('appendUsage', usageRow('provider_turn', usage, turn, attempt)),
    /** Before a run succeeds: the aggregate usage row (when there was usage), then `drain`. */
    async total(usage) {
      if (usage !== undefined) await write('appendUsage', usageRow('run_total', usage))
      await drain()
    },
    drain,
    /** The terminal row, after the queued events; then `flush()` for a flush-on-terminal ledger. */
    async finish(status, end) {
      await drain()
      await write('appendRun', runRow(status, end))
      if (flushesOnTerminal(ledger)) await bounded(Promise.resolve(ledger.flush()))
    },
    /** What dispatch appends tool rows to: the same queue. */
    tools: {
      appendToolCall: (row) => write('appendToolCall', row),
    },
  }
}

module.exports = { createRunLedgerWriter }
