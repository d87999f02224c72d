// An agent over the real tools of the MCP filesystem server (@modelcontextprotocol/server-filesystem,
// spawned over stdio and confined to a temporary folder), driven by a scripted provider.
// Run: npm run demo:mcp
//
// What it shows: the server's tools bridged in a few lines with provider-safe names; search disclosure
// picks the tools each turn; the model's calls run through dispatch with schema validation and a run
// ledger; one write is denied by the host's filter; the server process is gone after close().
import { mkdtempSync, readFileSync, rmSync, writeFileSync, realpathSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  createAgent,
  createJsonSchemaToolArgumentValidator,
  createMemoryRunLedger,
  createMockProvider,
  providerDone,
  providerTextDelta,
  providerToolCall,
  toolCallContent,
} from '../index.mjs'
import { connectMcpTools, formatProviderSafeMcpToolName } from '../mcp/index.mjs'
import { printLedgerRows, printToolCalls } from './demo-tables.mjs'

const folder = realpathSync(mkdtempSync(join(tmpdir(), 'prism-mcp-demo-')))
writeFileSync(join(folder, 'notes.txt'), 'Ship the MCP bridge.\nBenchmark it against the SDK client.\n')
writeFileSync(join(folder, 'todo.txt'), '- write docs\n- run the demo\n')

// The bridge: a stdio server in the temp folder, names every provider accepts.
const server = createRequire(import.meta.url).resolve('@modelcontextprotocol/server-filesystem/dist/index.js')
const bridge = await connectMcpTools({
  serverId: 'fs',
  transport: { type: 'stdio', command: process.execPath, args: [server, folder], stderr: 'ignore' },
  formatName: formatProviderSafeMcpToolName,
})
const pid = bridge.pid

const call = (id, name, args) => providerToolCall(toolCallContent(id, name, args))
const script = [
  // 1: the model looks for file tools.
  [providerTextDelta('Let me find the file tools. '), call('call_1', 'search_tools', { query: 'read text file list directory', k: 3 }), providerDone({ inputTokens: 700, outputTokens: 20 })],
  // 2: two reads in parallel, and a search for a tool that writes.
  [
    call('call_2', 'mcp_fs_list_directory', { path: folder }),
    call('call_3', 'mcp_fs_read_text_file', { path: join(folder, 'notes.txt') }),
    call('call_3b', 'search_tools', { query: 'create or overwrite a file with new content', k: 2 }),
    providerDone({ inputTokens: 900, outputTokens: 40 }),
  ],
  // 3: one write the host allows, one it denies (its filter hides edit_file from this agent).
  [
    call('call_4', 'mcp_fs_write_file', { path: join(folder, 'summary.md'), content: '# Summary\n\n- Ship the MCP bridge.\n- Benchmark it.\n' }),
    call('call_5', 'mcp_fs_edit_file', { path: join(folder, 'notes.txt'), edits: [{ oldText: 'Ship', newText: 'Delete' }] }),
    providerDone({ inputTokens: 1100, outputTokens: 70 }),
  ],
  // 4: the answer.
  [providerTextDelta('I wrote summary.md; editing notes.txt is not allowed here, so I left it.'), providerDone({ inputTokens: 1200, outputTokens: 25 })],
]

const turns = []
const provider = createMockProvider(script, {
  onRequest: (request, index) => turns.push({ turn: index + 1, tools: request.tools.map((t) => t.name) }),
})
const ledger = createMemoryRunLedger()
const agent = createAgent({
  model: { provider: 'mock', model: 'scripted' },
  provider,
  tools: bridge.tools,
  instructions: 'You keep notes in a folder.',
  validator: createJsonSchemaToolArgumentValidator(),
  toolsDisclosure: 'search',
  toolsSearch: { topK: 4 },
  // The host's filter: this agent never edits or moves files in place.
  toolNarrowing: ({ toolIds }) => toolIds.filter((name) => name !== 'mcp_fs_edit_file' && name !== 'mcp_fs_move_file'),
  loop: { strategy: 'single-shot', toolConcurrency: 3 },
  runLedger: ledger,
})
const session = agent.createSession({ id: 'mcp-demo' })
const events = []
for await (const event of session.stream('Summarise my notes into summary.md')) events.push(event)
// The stream ends with agent_finished; the answer is the last assistant message.
const finish = events.at(-1)
const answer = session.messages().findLast((m) => m.role === 'assistant')

console.log(`\nMCP filesystem server (pid ${pid}) in ${folder}`)
console.log(`${bridge.tools.length} tools bridged: ${bridge.tools.map((t) => t.name).join(', ')}\n`)
console.log('Turns and the tools disclosed to the provider')
for (const t of turns) console.log(`  turn ${t.turn}: ${t.tools.length} tools: ${t.tools.join(', ')}`)

console.log('\nTool calls, in transcript order')
printToolCalls(session.messages(), events, [8, 22, 12, 60], (r) => {
  const out = r.result
  if (r.name === 'search_tools') return `activated: ${out.names.join(', ')}`
  return (Array.isArray(out?.content) ? out.content.map((c) => c.text ?? '').join(' ') : JSON.stringify(out ?? '')).replace(/\s+/g, ' ')
})

console.log('\nLedger rows')
printLedgerRows(ledger.list(), [8, 22, 9, 24])

console.log(`\nsummary.md now holds:\n${readFileSync(join(folder, 'summary.md'), 'utf8').replace(/^/gm, '  ')}`)
console.log(`notes.txt unchanged: ${readFileSync(join(folder, 'notes.txt'), 'utf8').startsWith('Ship the MCP bridge.')}`)
console.log(`Result: ${finish.type} after ${turns.length} turns, ${finish.usage.totalTokens} tokens`)
console.log(`Answer: ${(answer?.content ?? []).map((c) => c.text ?? '').join('')}`)

await bridge.close()
let alive = true
for (let i = 0; i < 100 && alive; i++) {
  try {
    process.kill(pid, 0)
    await new Promise((resolve) => setTimeout(resolve, 20))
  } catch {
    alive = false
  }
}
console.log(`Bridge ${bridge.state}; server process ${alive ? 'still running' : 'ended'}\n`)
rmSync(folder, { recursive: true, force: true })
