// Dispatch, registry and filter cost, side by side in one process against what a user would
// otherwise write: the floor is a plain JS `await map.get(name).execute(args, ctx)`, and a plain JS
// filter over Sets. Figures are medians of 7 rounds, ns per operation.
// Run: npm run build && node --expose-gc bench/dispatch.bench.mjs
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const {
  createToolRegistry,
  createToolDispatcher,
  createSecretRedactor,
  dispatchToolCall,
  filterTools,
} = require('../index.js')

const ROUNDS = 7
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

async function timeAsync(fn, iterations) {
  for (let i = 0; i < Math.min(iterations, 20_000); i++) await fn(i)
  const samples = []
  for (let r = 0; r < ROUNDS; r++) {
    const start = process.hrtime.bigint()
    for (let i = 0; i < iterations; i++) await fn(i)
    samples.push(Number(process.hrtime.bigint() - start) / iterations)
  }
  return median(samples)
}

function timeSync(fn, iterations) {
  for (let i = 0; i < Math.min(iterations, 2_000); i++) fn(i)
  const samples = []
  for (let r = 0; r < ROUNDS; r++) {
    const start = process.hrtime.bigint()
    for (let i = 0; i < iterations; i++) fn(i)
    samples.push(Number(process.hrtime.bigint() - start) / iterations)
  }
  return median(samples)
}

async function timeBatch(fn, batch, rounds = ROUNDS) {
  await fn()
  const samples = []
  for (let r = 0; r < rounds; r++) {
    const start = process.hrtime.bigint()
    await fn()
    samples.push(Number(process.hrtime.bigint() - start) / batch)
  }
  return median(samples)
}

const echo = {
  name: 'echo',
  parameters: { type: 'object', properties: { text: { type: 'string' } } },
  execute(args, ctx) {
    return { toolCallId: ctx.toolCallId, name: 'echo', value: args }
  },
}
const asyncEcho = {
  name: 'async_echo',
  async execute(args, ctx) {
    await null
    return { toolCallId: ctx.toolCallId, name: 'async_echo', value: args }
  },
}
const call = { type: 'tool_call', id: 'call_1', name: 'echo', arguments: { text: 'hi' } }
const asyncCall = { ...call, name: 'async_echo' }
const context = { sessionId: 's1', runId: 'r1', toolCallId: 'call_1' }

const map = new Map([
  ['echo', echo],
  ['async_echo', asyncEcho],
])
const registry = createToolRegistry([echo, asyncEcho])

// The floor: what a host without a harness does.
const floor = () => map.get(call.name).execute(call.arguments, { ...context, toolCallId: call.id })

const rows = []
const ratio = (x, base) => (x / base).toFixed(1) + '×'

const N = 200_000
const floorNs = await timeAsync(floor, N)
rows.push(['plain JS `await map.get(name).execute(args, ctx)` (floor)', floorNs, '1.0×'])

const noHooks = await timeAsync(() => dispatchToolCall({ call, registry, context }), N)
rows.push(['`dispatchToolCall`, sync tool, no hooks', noHooks, ratio(noHooks, floorNs)])

const dispatcher = createToolDispatcher({ registry })
const bound = await timeAsync(() => dispatcher.dispatch(call, context), N)
rows.push(['`createToolDispatcher().dispatch`, no hooks', bound, ratio(bound, floorNs)])

// The machine's share of a hook-free dispatch: its two crossings alone (begin with the tool found,
// then the tool's return, which resolves and ends the dispatch), without any host call.
{
  const native = require('../binding.js')
  const C = native.dispatchCodes()
  const plan = native.dispatchPlan(undefined, undefined)
  const FOUND_NO_EFFECT = 3 // lib/dispatch.js `start`: a tool found, with no effect declaration
  const machineOnly = timeSync(() => {
    const begun = native.dispatchBegin(plan, 0, 0, 0, 1, 'echo', 0, FOUND_NO_EFFECT)
    const s = Math.floor(begun / C.ID_STRIDE)
    if (begun % C.ID_STRIDE !== C.K_EXECUTE || native.dispatchStep(s, C.A_RETURNED, 0) !== C.K_RESOLVE) {
      throw new Error('the machine no longer answers a hook-free dispatch as this bench expects')
    }
  }, N)
  rows.push(['the machine alone: the two crossings of a hook-free dispatch', machineOnly, ratio(machineOnly, floorNs)])
}

let sink = 0
const ledger = { appendToolCall: () => void sink++ }
const emit = () => void sink++
const redactor = createSecretRedactor(['sk-live-secret'])
const full = { registry, emit, ledger, validate: () => undefined, secrets: ['hunter2'], redactor }
const fullNs = await timeAsync(() => dispatchToolCall({ call, context, ...full }), N / 4)
rows.push(['`dispatchToolCall` + emit + ledger + validate + secrets + redactor', fullNs, ratio(fullNs, floorNs)])
const fullDispatcher = createToolDispatcher(full)
const fullBound = await timeAsync(() => fullDispatcher.dispatch(call, context), N / 4)
rows.push(['`createToolDispatcher(full hooks).dispatch`', fullBound, ratio(fullBound, floorNs)])

// 1 000 async calls in flight at once.
const asyncFloor = await timeBatch(
  () => Promise.all(Array.from({ length: 1000 }, () => map.get('async_echo').execute(asyncCall.arguments, { ...context }))),
  1000,
)
rows.push(['plain JS, async tool, 1 000 in flight (floor)', asyncFloor, '1.0×'])
const asyncNs = await timeBatch(() => Promise.all(Array.from({ length: 1000 }, () => dispatchToolCall({ call: asyncCall, registry, context }))), 1000)
rows.push(['`dispatchToolCall`, async tool, 1 000 in flight', asyncNs, ratio(asyncNs, asyncFloor)])
const asyncBound = await timeBatch(() => Promise.all(Array.from({ length: 1000 }, () => dispatcher.dispatch(asyncCall, context))), 1000)
rows.push(['`createToolDispatcher().dispatch`, async tool, 1 000 in flight', asyncBound, ratio(asyncBound, asyncFloor)])

// Registry and filters over 1 000 tools.
const tools = Array.from({ length: 1000 }, (_, i) => ({ name: `tool_${i}`, execute: echo.execute }))
const buildMap = timeSync(() => new Map(tools.map((t) => [t.name, t])), 200)
const buildRegistry = timeSync(() => createToolRegistry(tools), 200)
rows.push(['plain JS `new Map` of 1 000 tools', buildMap, '1.0×'])
rows.push(['`createToolRegistry` of 1 000 tools', buildRegistry, ratio(buildRegistry, buildMap)])
const big = createToolRegistry(tools)
const bigMap = new Map(tools.map((t) => [t.name, t]))
const names = tools.map((t) => t.name)
const mapGet = timeSync((i) => bigMap.get(names[i % 1000]), 1_000_000)
const regGet = timeSync((i) => big.get(names[i % 1000]), 1_000_000)
rows.push(['plain JS `map.get(name)`', mapGet, '1.0×'])
rows.push(['`registry.get(name)`', regGet, ratio(regGet, mapGet)])
const allow = names.filter((_, i) => i % 10 === 0)
const deny = names.filter((_, i) => i % 100 === 0)
const jsFilter = () => {
  const a = new Set(allow)
  const d = new Set(deny)
  return tools.filter((t) => !d.has(t.name) && a.has(t.name))
}
const jsFilterNs = timeSync(jsFilter, 2000)
const filterNs = timeSync(() => filterTools(tools, { allow, deny }), 2000)
rows.push(['plain JS filter of 1 000 tools (allow 100, deny 10)', jsFilterNs, '1.0×'])
rows.push(['`filterTools` of 1 000 tools (allow 100, deny 10)', filterNs, ratio(filterNs, jsFilterNs)])

console.log('| case | ns/op | vs plain JS |')
console.log('| --- | ---: | ---: |')
for (const [name, ns, r] of rows) console.log(`| ${name} | ${ns.toFixed(0)} | ${r} |`)

// Memory: resident set size after each of three million-dispatch windows. The first window grows
// the process to its working size (V8's young generation and code, the allocator's arenas); a leak
// would keep growing through the second and third.
const rssMiB = () => {
  globalThis.gc?.()
  return (process.memoryUsage().rss / 2 ** 20).toFixed(1)
}
const windows = [rssMiB()]
for (let w = 0; w < 3; w++) {
  for (let i = 0; i < 1_000_000; i++) await dispatchToolCall({ call, registry, context, ledger, emit })
  windows.push(rssMiB())
}
console.log(`\nRSS (MiB) before and after each of three windows of 1 000 000 dispatches (emit + ledger): ${windows.join(' → ')} (sink ${sink})`)
