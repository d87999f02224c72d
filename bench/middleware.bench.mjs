// Middleware chain cost, side by side in one process: this package's registry (`run`, and the internal
// `runSync` dispatch uses) against a plain JS chain a user would write (the `@arnilo/prism` algorithm:
// async, one await per middleware) and a minimal synchronous JS loop (the floor). The Rust-driven row is
// a measurement fixture (`__benchRustDrivenChain`, only in a build with the `bench` cargo feature) that
// shows what running the chain from Rust costs.
// Run: npm run bench:middleware (builds with the fixture, runs this, then rebuilds without it); in a
// plain build (`npm run bench`) it runs without the Rust-driven column.
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const { createMiddlewareRegistry } = require('../index.js')
const binding = require('../binding.js')
// Without the fixture (the release build `npm run bench` makes) the Rust-driven column is left out.
const rustDriven = typeof binding.__benchRustDrivenChain === 'function' ? binding.__benchRustDrivenChain : undefined
if (rustDriven === undefined) console.log('(no `bench` cargo feature in this build: the Rust-driven column needs `npm run bench:middleware`)')

const ROUNDS = 7

function median(values) {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]
}

function timeSync(fn, iterations) {
  for (let i = 0; i < Math.min(iterations, 20_000); i++) fn()
  const samples = []
  for (let r = 0; r < ROUNDS; r++) {
    const start = process.hrtime.bigint()
    for (let i = 0; i < iterations; i++) fn()
    samples.push(Number(process.hrtime.bigint() - start) / iterations)
  }
  return median(samples)
}

async function timeAsync(fn, iterations) {
  for (let i = 0; i < Math.min(iterations, 20_000); i++) await fn()
  const samples = []
  for (let r = 0; r < ROUNDS; r++) {
    const start = process.hrtime.bigint()
    for (let i = 0; i < iterations; i++) await fn()
    samples.push(Number(process.hrtime.bigint() - start) / iterations)
  }
  return median(samples)
}

// What a user would otherwise write: @arnilo/prism's chain (async, await per middleware).
function plainAsyncChain(list) {
  return async (value) => {
    let current = value
    for (const fn of list) {
      let called = false
      const next = async (v) => {
        if (called) throw new Error('next() called more than once')
        called = true
        current = v
        return current
      }
      const result = await fn(current, next)
      if (!called && result !== undefined) current = result
    }
    return current
  }
}

// The floor: a synchronous loop with the same next/return rules and no error handling.
function plainSyncChain(list) {
  return (value) => {
    let current = value
    for (const fn of list) {
      let calls = 0
      let committed
      const result = fn(current, (v) => {
        calls++
        committed = v
        return v
      })
      current = calls > 0 ? committed : result === undefined ? current : result
    }
    return current
  }
}

const makeStep = () => {
  const rec = { n: 0, c: undefined, next: undefined }
  rec.next = (v) => {
    rec.n++
    rec.c = v
    return v
  }
  return rec
}

const shapes = {
  'return value': (v) => v,
  'return next(v)': (v, next) => next(v),
}

const rows = []
const value = { type: 'tool_call', id: 'c1', name: 'echo', arguments: { text: 'hi' } }
for (const [shape, mw] of Object.entries(shapes)) {
  for (const count of [0, 1, 3, 10]) {
    if (count === 0 && shape !== 'return value') continue
    const list = Array.from({ length: count }, () => mw)
    const registry = createMiddlewareRegistry()
    for (const fn of list) registry.use('tool_call', fn)
    const sync = plainSyncChain(list)
    const plain = plainAsyncChain(list)
    const n = count === 0 ? 2_000_000 : 400_000
    const floor = timeSync(() => sync(value), n)
    const runSync = timeSync(() => registry.runSync('tool_call', value), n)
    const rust = rustDriven === undefined ? undefined : timeSync(() => rustDriven(list, value, makeStep), n)
    const plainAsync = await timeAsync(() => plain(value), n / 4)
    const run = await timeAsync(() => registry.run('tool_call', value), n / 4)
    rows.push({ shape, count, floor, runSync, rust, plainAsync, run })
  }
}

const fmt = (ns) => (ns === undefined ? '—' : ns < 10 ? ns.toFixed(1) : ns.toFixed(0))
console.log(`node ${process.version}, ${ROUNDS} rounds, median ns per chain run`)
console.log('| middlewares | shape | plain sync JS loop (floor) | `runSync` | Rust-driven chain | plain async JS chain (prism) | `run` | `run` / prism |')
console.log('| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |')
for (const r of rows) {
  console.log(
    `| ${r.count} | ${r.shape} | ${fmt(r.floor)} | ${fmt(r.runSync)} | ${fmt(r.rust)} | ${fmt(r.plainAsync)} | ${fmt(r.run)} | ${(r.run / r.plainAsync).toFixed(2)}× |`,
  )
}
