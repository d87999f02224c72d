// What a tool deadline costs a call, side by side in one process: an async tool dispatched without a
// deadline, with one (`toolTimeoutMs`), and what a user would otherwise write around a bare call — an
// AbortController, a timer raced against the tool, the timer cleared. Medians of 7 rounds, ns per call.
// Run: npm run build && node --expose-gc bench/deadline.bench.mjs
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const { createToolRegistry, createToolDispatcher } = require('../index.js')

const ROUNDS = 7
const ITERATIONS = 50_000
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

async function time(fn) {
  for (let i = 0; i < 20_000; i++) await fn(i)
  const samples = []
  for (let r = 0; r < ROUNDS; r++) {
    globalThis.gc?.()
    const start = process.hrtime.bigint()
    for (let i = 0; i < ITERATIONS; i++) await fn(i)
    samples.push(Number(process.hrtime.bigint() - start) / ITERATIONS)
  }
  return median(samples)
}

const tool = { name: 'echo', execute: async (args, ctx) => ({ toolCallId: ctx.toolCallId, name: 'echo', value: args }) }
const registry = createToolRegistry([tool])
const plain = createToolDispatcher({ registry })
const timed = createToolDispatcher({ registry, toolTimeoutMs: 60_000 })
const call = { type: 'tool_call', id: 'c1', name: 'echo', arguments: { q: 1 } }
const ctx = { sessionId: 's', runId: 'r', toolCallId: '' }

async function byHand() {
  const controller = new AbortController()
  let timer
  const deadline = new Promise((resolve) => {
    timer = setTimeout(resolve, 60_000, 'timeout')
  })
  try {
    return await Promise.race([tool.execute(call.arguments, { ...ctx, toolCallId: call.id, signal: controller.signal }), deadline])
  } finally {
    clearTimeout(timer)
  }
}

const rows = [
  ['by hand: bare execute with an AbortController and a raced timer', await time(byHand)],
  ['createToolDispatcher().dispatch, async tool, no deadline', await time(() => plain.dispatch(call, ctx))],
  ['createToolDispatcher({ toolTimeoutMs }).dispatch, async tool', await time(() => timed.dispatch(call, ctx))],
]
for (const [name, ns] of rows) console.log(`${name.padEnd(66)} ${Math.round(ns).toLocaleString('en-US').padStart(8)} ns`)
