// The tables the demos print: fixed-width columns, the transcript's tool calls and the ledger's rows.

/** Prints `rows` under `headers`, each cell padded or cut to its column's width, indented by two spaces. */
export function printTable(headers, widths, rows) {
  const line = (cells) => cells.map((cell, i) => String(cell).padEnd(widths[i]).slice(0, widths[i])).join(' | ')
  console.log('  ' + line(headers))
  console.log('  ' + widths.map((n) => '-'.repeat(n)).join('-+-'))
  for (const row of rows) console.log('  ' + line(row))
}

/**
 * The tool calls of a transcript, in its order: call id, tool, outcome (the reason a call was blocked,
 * `error` or `ok`) and a detail: the error's message, or `detail(result)` for a tool's result.
 */
export function printToolCalls(messages, events, widths, detail) {
  const rows = []
  for (const m of messages) {
    if (m.role !== 'tool') continue
    // A tool message holds { type: 'tool_result', toolCallId, name, result } (or `error`).
    const r = m.content[0]
    const blocked = events.find((e) => e.type === 'tool_execution_blocked' && e.toolCallId === r.toolCallId)
    const outcome = blocked ? blocked.reason : r.error ? 'error' : 'ok'
    rows.push([r.toolCallId, r.name, outcome, r.error ? r.error.message : detail(r)])
  }
  printTable(['call', 'tool', 'outcome', 'detail'], widths, rows)
}

/**
 * A run ledger's rows: call id, tool, status, and the blocked reason, or what the row holds: the error's
 * code, the result's trust label (`value` without one), or `arguments` on a started row.
 */
export function printLedgerRows(rows, widths) {
  const extra = (row) => row.reason ?? (row.result ? (row.result.error ? row.result.error.code ?? 'error' : row.result.metadata?.trust ?? 'value') : 'arguments')
  printTable(['call', 'tool', 'status', 'reason / result'], widths, rows.map((row) => [row.toolCallId, row.toolName ?? row.name, row.status, extra(row)]))
}
