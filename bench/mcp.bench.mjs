// A bridged MCP tool call through dispatch against the same call made with the SDK client directly,
// over one connection to the published server-everything (`echo`), on stdio (a real child process) and
// on Streamable HTTP (its HTTP transport on 127.0.0.1). On each transport every path shares the client,
// so the difference is the bridge and dispatch, not the server or the pipe (one HTTP-only path,
// connectMcpTools on its own bounded transport, opens a second session to the same server).
// Sequential calls in blocks of BLOCK; blocks alternate between the paths (each round starting at the
// next path) so every path sees the same machine load; the figures are the median block: wall µs per
// call and this process's CPU µs per call (process.cpuUsage, all threads), which moves less with the
// load of other processes. MCP_BENCH_BLOCK / MCP_BENCH_BLOCKS set the block size and count;
// MCP_BENCH_PATHS (a regular expression) runs only the paths it matches, besides the floor.
// Run: npm run build && node bench/mcp.bench.mjs [--root <a built checkout>] [--transport stdio|http]
//   --root measures another checkout (say, the previous commit's) with this same script.
import { createRequire } from 'node:module'
import { spawn } from 'node:child_process'
import os from 'node:os'
import { setMaxListeners } from 'node:events'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const argv = process.argv.slice(2)
const opt = (name) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : undefined)
const here = path.dirname(fileURLToPath(import.meta.url))
const root = path.resolve(opt('--root') ?? path.join(here, '..'))
const only = opt('--transport')
const require = createRequire(path.join(root, 'index.js'))
const { createToolRegistry, dispatchToolCall, createToolDispatcher, createJsonSchemaToolArgumentValidator, createMemoryRunLedger } = require(path.join(root, 'index.js'))
const { attachMcpToolBridge, connectMcpTools } = require(path.join(root, 'mcp/index.js'))
const { Client } = require('@modelcontextprotocol/sdk/client/index.js')
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js')
const { StreamableHTTPClientTransport } = require('@modelcontextprotocol/sdk/client/streamableHttp.js')
const { CallToolResultSchema } = require('@modelcontextprotocol/sdk/types.js')

const BLOCK = Number(process.env.MCP_BENCH_BLOCK ?? 25)
const BLOCKS = Number(process.env.MCP_BENCH_BLOCKS ?? 200)
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const everything = require.resolve('@modelcontextprotocol/server-everything/dist/index.js')

async function stdioConnection() {
  const transport = new StdioClientTransport({ command: process.execPath, args: [everything, 'stdio'], stderr: 'ignore' })
  return { transport, stop: () => {} }
}

// server-everything's Streamable HTTP transport, bound to 127.0.0.1 on a free port by the same
// launcher the tests use.
async function httpConnection() {
  const launcher = path.join(here, '..', '__test__', 'helpers', 'mcp-everything-http.mjs')
  const child = spawn(process.execPath, [launcher], { cwd: root, stdio: ['pipe', 'pipe', 'ignore'] })
  const port = await new Promise((resolve, reject) => {
    let text = ''
    const timer = setTimeout(() => reject(new Error('server-everything (HTTP) did not start in 20 s')), 20_000)
    child.stdout.on('data', (chunk) => {
      text += chunk
      const match = /MCP_TEST_PORT=(\d+)/.exec(text)
      if (match) {
        clearTimeout(timer)
        resolve(Number(match[1]))
      }
    })
    child.once('exit', (code) => reject(new Error(`server-everything (HTTP) exited with ${code}`)))
  })
  child.stdout.resume()
  const url = `http://127.0.0.1:${port}/mcp`
  const transport = new StreamableHTTPClientTransport(new URL(url))
  const config = { type: 'streamable-http', url, allowedOrigins: [`http://127.0.0.1:${port}`], allowLoopbackHttp: true }
  return { transport, stop: () => child.kill(), config }
}

async function measure(label, connect, extra) {
  const { transport, stop, config } = await connect()
  const client = new Client({ name: 'bench', version: '1.0.0' })
  await client.connect(transport)
  const bridge = await attachMcpToolBridge(client, transport, { serverId: 'everything', allow: ['echo'] })
  // A second bridge on the same client without its own argument check: what that check costs.
  const unchecked = await attachMcpToolBridge(client, transport, { serverId: 'everything', allow: ['echo'], validateArguments: false })
  // Dispatch's own share: a plain tool whose execute is the SDK's raw request, through the same dispatch.
  const plain = {
    name: 'plain_echo',
    description: 'client.request tools/call echo',
    parameters: { type: 'object' },
    execute: (args) => client.request({ method: 'tools/call', params: { name: 'echo', arguments: args } }, CallToolResultSchema),
  }
  const registry = createToolRegistry([...bridge.tools, plain])
  const name = 'mcp:everything:echo'
  const ctx = { sessionId: 's', runId: 'r' }
  const dispatcher = createToolDispatcher({ registry })
  const validate = createJsonSchemaToolArgumentValidator()
  const ledger = createMemoryRunLedger()
  // A run's signal, as an agent passes one to every call: a new one per block (the SDK leaves one
  // listener per call on the signal it is given; a block's 25 stay bounded).
  let runSignal
  const call = (i) => ({ type: 'tool_call', id: `c${i}`, name, arguments: { message: `m${i}` } })
  const paths = {
    'SDK client.callTool (floor)': (i) => client.callTool({ name: 'echo', arguments: { message: `m${i}` } }),
    'SDK client.request tools/call (raw)': (i) =>
      client.request({ method: 'tools/call', params: { name: 'echo', arguments: { message: `m${i}` } } }, CallToolResultSchema),
    'bridged tool.execute': (i) => bridge.tools[0].execute({ message: `m${i}` }, { ...ctx, toolCallId: `c${i}` }),
    'bridged tool.execute, validateArguments: false': (i) => unchecked.tools[0].execute({ message: `m${i}` }, { ...ctx, toolCallId: `c${i}` }),
    'dispatchToolCall(plain tool calling client.request), no hooks': (i) =>
      dispatchToolCall({ call: { type: 'tool_call', id: `c${i}`, name: 'plain_echo', arguments: { message: `m${i}` } }, registry, context: ctx }),
    'dispatchToolCall(bridged), no hooks': (i) => dispatchToolCall({ call: call(i), registry, context: ctx }),
    'createToolDispatcher(bridged).dispatch': (i) => dispatcher.dispatch(call(i), ctx),
    'dispatchToolCall(bridged) + validate + ledger': (i) => dispatchToolCall({ call: call(i), registry, context: ctx, validate, ledger }),
    'SDK client.callTool with a run signal': (i) => client.callTool({ name: 'echo', arguments: { message: `m${i}` } }, undefined, { signal: runSignal }),
    'dispatchToolCall(bridged) with a run signal': (i) => dispatchToolCall({ call: call(i), registry, context: { ...ctx, signal: runSignal } }),
  }
  const closers = []
  if (extra) Object.assign(paths, await extra(config, closers))
  // MCP_BENCH_PATHS: a regular expression; only the paths it matches run (the floor always does).
  const pick = process.env.MCP_BENCH_PATHS ? new RegExp(process.env.MCP_BENCH_PATHS) : undefined
  if (pick) for (const key of Object.keys(paths)) if (key !== 'SDK client.callTool (floor)' && !pick.test(key)) delete paths[key]
  const freshSignal = () => {
    runSignal = new AbortController().signal
    setMaxListeners(0, runSignal)
  }
  freshSignal()
  const before = { 'SDK client.callTool with a run signal': freshSignal, 'dispatchToolCall(bridged) with a run signal': freshSignal }

  // Check every path answers the same before timing.
  for (const [path, fn] of Object.entries(paths)) {
    const r = await fn(0)
    const text = (r.content ?? [])[0]?.text
    if (text !== 'Echo: m0') throw new Error(`${label} ${path} answered ${JSON.stringify(r)}`)
  }
  for (const fn of Object.values(paths)) for (let i = 0; i < 300; i++) await fn(i) // warm-up

  const wall = Object.fromEntries(Object.keys(paths).map((k) => [k, []]))
  const cpu = Object.fromEntries(Object.keys(paths).map((k) => [k, []]))
  const entries = Object.entries(paths)
  for (let b = 0; b < BLOCKS; b++) {
    // Each round starts at another path, so no path always runs first (over HTTP, with a fixed order,
    // the path that always ran first looked ~15 % faster than its twin).
    for (let j = 0; j < entries.length; j++) {
      const [path, fn] = entries[(b + j) % entries.length]
      before[path]?.()
      const c0 = process.cpuUsage()
      const start = process.hrtime.bigint()
      for (let i = 0; i < BLOCK; i++) await fn(i)
      wall[path].push(Number(process.hrtime.bigint() - start) / BLOCK / 1000)
      const c = process.cpuUsage(c0)
      cpu[path].push((c.user + c.system) / BLOCK)
    }
  }
  for (const close of closers) await close()
  await unchecked.close()
  await bridge.close()
  stop()

  const floorWall = median(wall['SDK client.callTool (floor)'])
  const floorCpu = median(cpu['SDK client.callTool (floor)'])
  console.log(`\n${label}: ${BLOCKS} blocks of ${BLOCK} sequential calls per path, interleaved; load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`)
  console.log('| path | wall µs/call | vs callTool | CPU µs/call | vs callTool |')
  console.log('| --- | ---: | ---: | ---: | ---: |')
  for (const path of Object.keys(paths)) {
    const w = median(wall[path])
    const c = median(cpu[path])
    console.log(`| ${path} | ${w.toFixed(1)} | ${((w / floorWall) * 100).toFixed(1)}% | ${c.toFixed(1)} | ${((c / floorCpu) * 100).toFixed(1)}% |`)
  }
}

// The SDK's Streamable HTTP client piles abort listeners on its transport's own signal (~1 per 2
// calls, with or without the bridge); Node's warning about it would bury the tables.
process.removeAllListeners('warning')
process.on('warning', (warning) => {
  if (warning.name !== 'MaxListenersExceededWarning') console.warn(warning)
})

console.log(`Node ${process.version}, ${os.cpus().length} cores, checkout ${root}`)
if (!only || only === 'stdio') await measure('stdio', stdioConnection)
// Over HTTP, also the bridge on its own transport (connectMcpTools: origin check, DNS-pinned node:http
// requests in a keep-alive agent of its own, no redirects, a byte bound on every response body), on a
// second session to the same server.
async function ownTransport(config, closers) {
  const own = await connectMcpTools({ serverId: 'everything', transport: config, allow: ['echo'] })
  closers.push(() => own.close())
  return { 'connectMcpTools tool.execute (own session, DNS-pinned fetch)': (i) => own.tools[0].execute({ message: `m${i}` }, { sessionId: 's', runId: 'r', toolCallId: `c${i}` }) }
}

if (!only || only === 'http') await measure('Streamable HTTP', httpConnection, ownTransport)
