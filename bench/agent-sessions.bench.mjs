// The agent loop under load: 10 000 concurrent sessions, each one tool round (the scripted provider
// answers a tool call, then, once the tool's result is in, the text "done"), this package against
// `@arnilo/prism`'s createAgent with the same provider, tools and defaults.
//
//   npm run build && node bench/agent-sessions.bench.mjs --upstream <@arnilo/prism's dist/index.js>
//   options: --rounds 5 (child processes per implementation), --sessions 10000
//
// Each batch runs in a child process of its own, so that its peak memory is its own: the kernel's
// high-water RSS of the process, and the high-water of V8 heap + external memory above what the
// process held before the batch (sampled by the provider every 200 requests, as a batch runs
// mostly on microtasks where a timer would not fire). The two implementations' processes alternate,
// the first of each round swapping, so drifts of the machine's load hit both alike. A child first
// runs a warm-up batch of 1 000 sessions, so the measured batch is not the compiler's first.
// Throughput is given twice: runs per wall-clock second, and runs per second of the process's own
// CPU time (user + system), which other load on a shared machine moves much less.
// Without `--upstream` only this package runs. See ../shared/peer-bench/README.md for the build.
import { spawnSync } from 'node:child_process'
import { createRequire } from 'node:module'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { resolve } from 'node:path'
import { loadavg } from 'node:os'

const args = process.argv.slice(2)
const opt = (name, fallback) => {
  const i = args.indexOf(`--${name}`)
  return i >= 0 ? args[i + 1] : fallback
}
const SESSIONS = Number(opt('sessions', '10000'))
const ROUNDS = Number(opt('rounds', '5'))
const TOOLS = 20
const WARMUP = 1000

// ---- child: one implementation, one measured batch ----------------------------------------------

async function loadImpl(which) {
  if (which === 'native') return createRequire(import.meta.url)('../index.js')
  return import(pathToFileURL(resolve(opt('upstream'))).href)
}

function makeTools(counter) {
  return Array.from({ length: TOOLS }, (_, i) => ({
    name: `tool_${i}`,
    description: `Tool number ${i} works on ${['issues', 'pulls', 'files', 'users'][i % 4]} of a repository`,
    parameters: { type: 'object', properties: { q: { type: 'string' } } },
    execute: (args, ctx) => {
      counter.executed++
      return { toolCallId: ctx.toolCallId, name: `tool_${i}`, value: args }
    },
  }))
}

// The same provider object for both: plain event objects in `@arnilo/prism`'s provider protocol.
// A call until the tool's result is in, then the answer (keyed on the last message: a request
// also carries system messages, so a message count could let one side skip the tool round).
function scriptedProvider(sample) {
  let requests = 0
  return {
    id: 'scripted',
    async *generate(request) {
      if (++requests % 200 === 0) sample()
      if (request.messages.at(-1).role !== 'tool') {
        yield { type: 'tool_call', call: { type: 'tool_call', id: 'c1', name: 'tool_3', arguments: { q: 'x' } } }
      } else yield { type: 'content_delta', content: { type: 'text', text: 'done' } }
      yield { type: 'done', usage: { inputTokens: 10 } }
    },
  }
}

async function batch(api, n, label) {
  const counter = { executed: 0 }
  let peakLive = 0
  let peakRss = 0
  const sample = () => {
    const m = process.memoryUsage()
    peakLive = Math.max(peakLive, m.heapUsed + m.external)
    peakRss = Math.max(peakRss, m.rss)
  }
  const agent = api.createAgent({ model: { provider: 'scripted', model: 'm' }, provider: scriptedProvider(sample), tools: makeTools(counter) })
  globalThis.gc()
  const before = process.memoryUsage()
  const baseLive = before.heapUsed + before.external
  const cpu = process.cpuUsage()
  const t = process.hrtime.bigint()
  const results = await Promise.all(Array.from({ length: n }, (_, i) => agent.createSession({ id: `${label}${i}` }).run('go')))
  const ms = Number(process.hrtime.bigint() - t) / 1e6
  const used = process.cpuUsage(cpu)
  const cpuMs = (used.user + used.system) / 1e3
  sample()
  const ok = results.filter((r) => r.status === 'succeeded' && r.text === 'done').length
  if (ok !== n) throw new Error(`${n - ok} of ${n} sessions did not succeed with "done"`)
  // Every session ran its tool round (a turn that skipped the call would also end in "done").
  if (counter.executed !== n) throw new Error(`${counter.executed} tool calls ran for ${n} sessions`)
  return { ms, cpuMs, liveGrowth: (peakLive - baseLive) / 2 ** 20, rssGrowth: (peakRss - before.rss) / 2 ** 20 }
}

async function child(which) {
  const api = await loadImpl(which)
  await batch(api, WARMUP, 'w')
  const b = await batch(api, SESSIONS, 's')
  const maxRss = process.resourceUsage().maxRSS / 1024 // KiB → MiB
  process.stdout.write(`${JSON.stringify({ which, runsPerSec: (SESSIONS / b.ms) * 1000, runsPerCpuSec: (SESSIONS / b.cpuMs) * 1000, ms: b.ms, maxRss, liveGrowth: b.liveGrowth, rssGrowth: b.rssGrowth })}\n`)
}

// ---- parent: interleaved child processes, then the table ----------------------------------------

function spawnChild(which) {
  const extra = which === 'upstream' ? ['--upstream', opt('upstream')] : []
  const r = spawnSync(process.execPath, ['--expose-gc', fileURLToPath(import.meta.url), '--child', which, '--sessions', String(SESSIONS), ...extra], { encoding: 'utf8', maxBuffer: 1 << 20 })
  if (r.status !== 0) throw new Error(`${which} child failed (${r.status}): ${r.stderr}`)
  return JSON.parse(r.stdout.trim().split('\n').at(-1))
}

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1]
const range = (xs, digits) => {
  const s = [...xs].sort((a, b) => a - b)
  return `${s[0].toFixed(digits)}–${s.at(-1).toFixed(digits)}`
}
const cell = (xs, digits) => `${median(xs).toFixed(digits)} (${range(xs, digits)})`

function parent() {
  const impls = opt('upstream') === undefined ? ['native'] : ['native', 'upstream']
  const runs = { native: [], upstream: [] }
  const loadBefore = loadavg()[0]
  for (let k = 0; k < ROUNDS; k++) {
    const order = k % 2 === 0 ? impls : [...impls].reverse()
    for (const which of order) runs[which].push(spawnChild(which))
  }
  console.log(`Node ${process.version}: ${SESSIONS} concurrent sessions, one tool round each, ${TOOLS} tools; ${ROUNDS} child processes per implementation, interleaved. Median (min–max). Load average ${loadBefore.toFixed(1)} before, ${loadavg()[0].toFixed(1)} after.\n`)
  console.log('| loop | runs/s (wall) | runs per CPU second | peak RSS (MiB) | heap + external high-water above start (MiB) |')
  console.log('| --- | --- | --- | --- | --- |')
  for (const which of impls) {
    const rs = runs[which]
    const label = which === 'native' ? 'prism-tools-native' : '@arnilo/prism createAgent'
    console.log(`| ${label} | ${cell(rs.map((r) => r.runsPerSec), 0)} | ${cell(rs.map((r) => r.runsPerCpuSec), 0)} | ${cell(rs.map((r) => r.maxRss), 0)} | ${cell(rs.map((r) => r.liveGrowth), 0)} |`)
  }
  if (runs.upstream.length > 0) {
    // Same-round ratios: each pair of processes ran next to each other.
    const speed = runs.native.map((r, i) => r.runsPerSec / runs.upstream[i].runsPerSec)
    const cpu = runs.native.map((r, i) => r.runsPerCpuSec / runs.upstream[i].runsPerCpuSec)
    const rss = runs.native.map((r, i) => r.maxRss / runs.upstream[i].maxRss)
    const live = runs.native.map((r, i) => r.liveGrowth / runs.upstream[i].liveGrowth)
    console.log(`\nper round, native ÷ upstream: runs/s ${cell(speed, 2)}×; runs per CPU second ${cell(cpu, 2)}×; peak RSS ${cell(rss, 2)}×; heap + external high-water ${cell(live, 2)}×`)
  }
}

if (args.includes('--child')) await child(opt('child'))
else parent()
