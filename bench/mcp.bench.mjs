// A bridged MCP tool call through dispatch against the same call made with the SDK client directly,
// over one connection to the published server-everything (stdio, a real child process). Both paths
// share the client, so the difference is the bridge and dispatch, not the server or the pipe.
// Sequential calls in blocks of BLOCK; blocks alternate between the paths so every path sees the same
// machine load; the figure is the median block, µs per call.
// Run: npm run build && node bench/mcp.bench.mjs
import { createRequire } from 'node:module'
import os from 'node:os'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js'

const require = createRequire(import.meta.url)
const { createToolRegistry, dispatchToolCall, createToolDispatcher, createJsonSchemaToolArgumentValidator, createMemoryRunLedger } = require('../index.js')
const { attachMcpToolBridge } = require('../mcp/index.js')

const BLOCK = Number(process.env.MCP_BENCH_BLOCK ?? 25)
const BLOCKS = Number(process.env.MCP_BENCH_BLOCKS ?? 200)
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

const server = require.resolve('@modelcontextprotocol/server-everything/dist/index.js')
const transport = new StdioClientTransport({ command: process.execPath, args: [server, 'stdio'], stderr: 'ignore' })
const client = new Client({ name: 'bench', version: '1.0.0' })
await client.connect(transport)
const bridge = await attachMcpToolBridge(client, transport, { serverId: 'everything', allow: ['echo'] })
const registry = createToolRegistry(bridge.tools)
const name = 'mcp:everything:echo'
const ctx = { sessionId: 's', runId: 'r' }
const dispatcher = createToolDispatcher({ registry })
const validate = createJsonSchemaToolArgumentValidator()
const ledger = createMemoryRunLedger()

const paths = {
  'SDK client.callTool (floor)': (i) => client.callTool({ name: 'echo', arguments: { message: `m${i}` } }),
  'SDK client.request tools/call (raw)': (i) =>
    client.request({ method: 'tools/call', params: { name: 'echo', arguments: { message: `m${i}` } } }, CallToolResultSchema),
  'bridged tool.execute': (i) => bridge.tools[0].execute({ message: `m${i}` }, { ...ctx, toolCallId: `c${i}` }),
  'dispatchToolCall(bridged), no hooks': (i) =>
    dispatchToolCall({ call: { type: 'tool_call', id: `c${i}`, name, arguments: { message: `m${i}` } }, registry, context: ctx }),
  'createToolDispatcher(bridged).dispatch': (i) =>
    dispatcher.dispatch({ type: 'tool_call', id: `c${i}`, name, arguments: { message: `m${i}` } }, ctx),
  'dispatchToolCall(bridged) + validate + ledger': (i) =>
    dispatchToolCall({ call: { type: 'tool_call', id: `c${i}`, name, arguments: { message: `m${i}` } }, registry, context: ctx, validate, ledger }),
}

// Check every path answers the same before timing.
for (const [label, fn] of Object.entries(paths)) {
  const r = await fn(0)
  const text = (r.content ?? [])[0]?.text
  if (text !== 'Echo: m0') throw new Error(`${label} answered ${JSON.stringify(r)}`)
}
for (const fn of Object.values(paths)) for (let i = 0; i < 300; i++) await fn(i) // warm-up

const samples = Object.fromEntries(Object.keys(paths).map((k) => [k, []]))
for (let b = 0; b < BLOCKS; b++) {
  for (const [label, fn] of Object.entries(paths)) {
    const start = process.hrtime.bigint()
    for (let i = 0; i < BLOCK; i++) await fn(i)
    samples[label].push(Number(process.hrtime.bigint() - start) / BLOCK / 1000)
  }
}
await bridge.close()

const floor = median(samples['SDK client.callTool (floor)'])
const raw = median(samples['SDK client.request tools/call (raw)'])
console.log(`Node ${process.version}, load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}, ${BLOCKS} blocks of ${BLOCK} sequential calls per path, interleaved`)
console.log('| path | µs/call (median block) | vs SDK client.callTool | vs raw request |')
console.log('| --- | ---: | ---: | ---: |')
for (const [label, xs] of Object.entries(samples)) {
  const m = median(xs)
  console.log(`| ${label} | ${m.toFixed(1)} | ${((m / floor) * 100).toFixed(1)}% | ${((m / raw) * 100).toFixed(1)}% |`)
}
