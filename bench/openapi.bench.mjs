// prism-tools-native/openapi against what a user would otherwise use: a GET operation called through the
// compiled tool (arguments checked, the DNS-pinned secure fetch) against the same request made with
// Node's global `fetch`, and, with --upstream <a built @arnilo/prism checkout>, against
// `@arnilo/prism-openapi-tools`' tool (global fetch, nothing checked). The server is a child process on
// 127.0.0.1, so this process's CPU is the client's alone. Sequential calls in blocks of BLOCK; blocks
// alternate between the paths (each round starting at the next path); figures are the median block: wall
// µs per call and this process's CPU µs per call (process.cpuUsage). Then compiling a 200-operation
// document whose bodies are $ref'd schemas, and (with --upstream) the tools' own work in process, ours against upstream's.
// Run: node bench/openapi.bench.mjs [--upstream /path/to/upstream] (OPENAPI_BENCH_BLOCK, OPENAPI_BENCH_BLOCKS)
import { spawn } from 'node:child_process'
import os from 'node:os'
import path from 'node:path'
import { pathToFileURL, fileURLToPath } from 'node:url'
import { createRequire } from 'node:module'

const argv = process.argv.slice(2)
const opt = (name) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : undefined)
const here = path.dirname(fileURLToPath(import.meta.url))
const require = createRequire(import.meta.url)
const { createOpenApiTools } = require(path.join(here, '..', 'openapi', 'index.js'))
const upstreamRoot = opt('--upstream')
const upstream = upstreamRoot
  ? await import(pathToFileURL(path.join(upstreamRoot, 'packages', 'prism-openapi-tools', 'dist', 'index.js')).href)
  : undefined

const BLOCK = Number(process.env.OPENAPI_BENCH_BLOCK ?? 25)
const BLOCKS = Number(process.env.OPENAPI_BENCH_BLOCKS ?? 200)
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

const serverSource = `
const http = require('node:http')
const body = JSON.stringify({ id: 'o-1', status: 'shipped', items: [{ sku: 'a', qty: 2 }, { sku: 'b', qty: 1 }] })
const server = http.createServer((req, res) => { req.resume(); req.on('end', () => { res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }); res.end(body) }) })
server.keepAliveTimeout = 60000
server.listen(0, '127.0.0.1', () => console.log('PORT=' + server.address().port))
`

async function startServer() {
  const child = spawn(process.execPath, ['-e', serverSource], { stdio: ['ignore', 'pipe', 'inherit'] })
  const port = await new Promise((resolve, reject) => {
    let text = ''
    child.stdout.on('data', (chunk) => {
      text += chunk
      const match = /PORT=(\d+)/.exec(text)
      if (match) resolve(Number(match[1]))
    })
    child.once('exit', (code) => reject(new Error(`server exited with ${code}`)))
  })
  return { port, stop: () => child.kill() }
}

function documentFor(count) {
  const paths = {}
  const schemas = {
    Item: { type: 'object', properties: { sku: { type: 'string' }, qty: { type: 'integer', minimum: 1 } }, required: ['sku', 'qty'] },
  }
  for (let i = 0; i < count; i++) {
    schemas[`Order${i}`] = { type: 'object', properties: { items: { type: 'array', items: { $ref: '#/components/schemas/Item' } }, note: { type: 'string' } }, required: ['items'] }
    paths[`/orders${i}/{id}`] = {
      get: { operationId: `getOrder${i}`, parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }, { name: 'verbose', in: 'query', schema: { type: 'boolean' } }] },
      put: { operationId: `putOrder${i}`, parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }], requestBody: { content: { 'application/json': { schema: { $ref: `#/components/schemas/Order${i}` } } } } },
    }
  }
  return { openapi: '3.1.0', info: { title: 'bench', version: '1' }, paths, components: { schemas } }
}

async function calls(server) {
  const base = `http://127.0.0.1:${server.port}`
  const document = documentFor(1)
  const context = { sessionId: 's', runId: 'r', toolCallId: 't' }
  const args = { id: 'o-1', verbose: true }
  const ours = createOpenApiTools({ document, operations: ['getOrder0'], server: base, allowLoopbackHttp: true })[0]
  const oursHostFetch = createOpenApiTools({ document, operations: ['getOrder0'], server: base, fetch: globalThis.fetch })[0]
  const paths = [
    ['global fetch + JSON.parse (by hand)', async () => {
      const response = await fetch(`${base}/orders0/${encodeURIComponent(args.id)}?verbose=true`, { redirect: 'manual' })
      return { status: response.status, body: JSON.parse(await response.text()) }
    }],
    ['openapi tool.execute (pinned fetch)', () => ours.execute(args, context)],
    ['openapi tool.execute (fetch: globalThis.fetch)', () => oursHostFetch.execute(args, context)],
  ]
  if (upstream) {
    const theirs = upstream.createOpenApiTools({ document, operations: ['getOrder0'], server: base })[0]
    paths.push(['upstream prism-openapi-tools tool.execute', () => theirs.execute(args, context)])
  }
  for (const [, run] of paths) for (let i = 0; i < 200; i++) await run() // warm
  const wall = paths.map(() => [])
  const cpu = paths.map(() => [])
  for (let block = 0; block < BLOCKS; block++) {
    for (let k = 0; k < paths.length; k++) {
      const i = (block + k) % paths.length
      const c0 = process.cpuUsage()
      const t0 = process.hrtime.bigint()
      for (let j = 0; j < BLOCK; j++) await paths[i][1]()
      const t1 = process.hrtime.bigint()
      const c1 = process.cpuUsage(c0)
      wall[i].push(Number(t1 - t0) / 1000 / BLOCK)
      cpu[i].push((c1.user + c1.system) / BLOCK)
    }
  }
  const floor = median(wall[0])
  const floorCpu = median(cpu[0])
  console.log(`\nGET through each path (median of ${BLOCKS} blocks of ${BLOCK}); % of the global-fetch path`)
  console.log('| path | wall µs | CPU µs | wall % | CPU % |\n| --- | ---: | ---: | ---: | ---: |')
  paths.forEach(([name], i) => {
    const w = median(wall[i])
    const c = median(cpu[i])
    console.log(`| ${name} | ${w.toFixed(1)} | ${c.toFixed(1)} | ${Math.round((w / floor) * 100)} | ${Math.round((c / floorCpu) * 100)} |`)
  })
}

// The tool's own work: the same host fetch for both, answering in process without a network.
async function inProcess() {
  if (!upstream) return
  const document = documentFor(1)
  const body = JSON.stringify({ id: 'o-1', status: 'shipped' })
  const answer = async () => new Response(body, { headers: { 'content-type': 'application/json' } })
  const context = { sessionId: 's', runId: 'r', toolCallId: 't' }
  const args = { id: 'o-1', verbose: true }
  const options = { document, operations: ['getOrder0'], server: 'https://api.example.com', fetch: answer }
  const paths = [
    ['prism-tools-native/openapi', createOpenApiTools(options)[0]],
    ['@arnilo/prism-openapi-tools', upstream.createOpenApiTools(options)[0]],
  ]
  for (const [, tool] of paths) for (let i = 0; i < 2000; i++) await tool.execute(args, context)
  const cpu = paths.map(() => [])
  for (let block = 0; block < 40; block++) {
    for (let k = 0; k < paths.length; k++) {
      const i = (block + k) % paths.length
      const c0 = process.cpuUsage()
      for (let j = 0; j < 500; j++) await paths[i][1].execute(args, context)
      const c = process.cpuUsage(c0)
      cpu[i].push((c.user + c.system) / 500)
    }
  }
  console.log('\nIn process, one host fetch answering without a network (CPU µs per call: median of 40 blocks of 500; min–max)')
  paths.forEach(([name], i) => console.log(`| ${name} | ${median(cpu[i]).toFixed(1)} | ${Math.min(...cpu[i]).toFixed(1)}–${Math.max(...cpu[i]).toFixed(1)} |`))
}

function compile() {
  const document = documentFor(100)
  const operations = Object.values(document.paths).flatMap((item) => Object.values(item).map((op) => op.operationId))
  const text = JSON.stringify(document)
  const runs = [['prism-tools-native/openapi', () => createOpenApiTools({ document: text, operations, server: 'https://api.example.com', fetch: globalThis.fetch })]]
  if (upstream) runs.push(['@arnilo/prism-openapi-tools', () => upstream.createOpenApiTools({ document: text, operations, server: 'https://api.example.com' })])
  // CPU time, not wall: on a loaded machine a few-ms loop is descheduled often enough to swamp it.
  const ROUNDS = 80
  const times = runs.map(() => [])
  for (let round = 0; round < ROUNDS; round++) {
    for (let k = 0; k < runs.length; k++) {
      const i = (round + k) % runs.length
      const c0 = process.cpuUsage()
      runs[i][1]()
      const c = process.cpuUsage(c0)
      if (round >= 20) times[i].push((c.user + c.system) / 1000) // the first 20 rounds warm up
    }
  }
  console.log(`\nCompile ${operations.length} operations from ${(text.length / 1024).toFixed(0)} KiB of JSON text (CPU ms: median of ${ROUNDS - 20} after 20 warm-up rounds; min–max)`)
  runs.forEach(([name], i) => console.log(`| ${name} | ${median(times[i]).toFixed(2)} | ${Math.min(...times[i]).toFixed(2)}–${Math.max(...times[i]).toFixed(2)} |`))
}

console.log(`node ${process.version}, load ${os.loadavg()[0].toFixed(1)}, ${os.cpus().length} cpus${upstream ? ', upstream ' + upstreamRoot : ''}`)
const server = await startServer()
try {
  await calls(server)
  await inProcess()
  compile()
} finally {
  server.stop()
}
