// Validation benchmark: prism-tools-native's JSON Schema validator against Ajv 8, side by side in
// one process. Ajv is configured as a careful host would (strict, allErrors, validateSchema,
// allowUnionTypes) and given the same bounds checks, written in JS.
//
//   npm run build && node --expose-gc bench/validation.bench.mjs
//
// Prints a Markdown table; bench/RESULTS.md keeps the last one.
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const Ajv = require('ajv')
const native = require('../index.js')

const github = JSON.parse(readFileSync(new URL('../fixtures/github-mcp-tools.json', import.meta.url), 'utf8'))
const AJV_OPTIONS = { strict: true, allErrors: true, validateSchema: true, allowUnionTypes: true }
const L = {
  maxDepth: 64, maxProperties: 1_000, maxStringLength: 1_000_000, maxArrayLength: 10_000,
  maxSchemaBytes: 262_144, maxSchemaDepth: 64, maxSchemaProperties: 10_000, maxSchemaRefs: 128, maxSchemaKeywords: 10_000,
}
const FORBIDDEN = new Set(['__proto__', 'prototype', 'constructor'])

// ---- the JS bounds a careful Ajv host adds ------------------------------------------------------
function argumentBounds(value) {
  const stack = [[value, 1]]
  while (stack.length) {
    const [v, depth] = stack.pop()
    if (typeof v === 'string') {
      if (v.length > L.maxStringLength) return 'string too long'
    } else if (typeof v === 'number') {
      if (!Number.isFinite(v)) return 'not finite'
    } else if (typeof v === 'object' && v !== null) {
      if (depth > L.maxDepth) return 'too deep'
      if (Array.isArray(v)) {
        if (v.length > L.maxArrayLength) return 'array too long'
        for (const item of v) stack.push([item, depth + 1])
      } else {
        const proto = Object.getPrototypeOf(v)
        if (proto !== Object.prototype && proto !== null) return 'not plain'
        const keys = Object.keys(v)
        if (keys.length > L.maxProperties) return 'too many properties'
        for (const k of keys) {
          if (FORBIDDEN.has(k)) return 'forbidden key'
          stack.push([v[k], depth + 1])
        }
      }
    } else if (typeof v !== 'boolean' && v !== null) return 'not JSON'
  }
  return undefined
}

function schemaBounds(schema, text) {
  if (text.length > L.maxSchemaBytes) return 'schema too big'
  let keywords = 0, properties = 0, refs = 0
  const stack = [[schema, 1, false]]
  while (stack.length) {
    const [v, depth, names] = stack.pop()
    if (typeof v === 'number' && !Number.isFinite(v)) return 'not finite'
    if (typeof v !== 'object' || v === null) continue
    if (depth > L.maxSchemaDepth) return 'schema too deep'
    if (Array.isArray(v)) { for (const item of v) stack.push([item, depth + 1, false]); continue }
    const keys = Object.keys(v)
    if (names) properties += keys.length; else keywords += keys.length
    if (keywords > L.maxSchemaKeywords || properties > L.maxSchemaProperties) return 'schema too wide'
    for (const k of keys) {
      if (FORBIDDEN.has(k)) return 'forbidden key'
      if (k === '$ref') {
        if (++refs > L.maxSchemaRefs) return 'too many refs'
        if (typeof v[k] !== 'string' || !v[k].startsWith('#')) return 'non-local ref'
      }
      stack.push([v[k], depth + 1, !names && (k === 'properties' || k === '$defs' || k === 'definitions' || k === 'patternProperties')])
    }
  }
  return undefined
}

/** An Ajv host: content-keyed compile cache, the tool's validate function kept per tool. */
function ajvHost() {
  const ajv = new Ajv(AJV_OPTIONS)
  const byText = new Map()
  const perTool = new WeakMap()
  function compile(schema) {
    const text = JSON.stringify(schema)
    let fn = byText.get(text)
    if (fn === undefined) {
      const bad = schemaBounds(schema, text)
      fn = bad ? () => false : ajv.compile(schema)
      byText.set(text, fn)
    }
    return fn
  }
  return function validate(tool, args) {
    let entry = perTool.get(tool)
    if (entry === undefined || entry.schema !== tool.parameters) {
      entry = { schema: tool.parameters, fn: compile(tool.parameters) }
      perTool.set(tool, entry)
    }
    const bad = argumentBounds(args)
    if (bad) return bad
    return entry.fn(args) ? undefined : entry.fn.errors
  }
}

// ---- inputs ---------------------------------------------------------------------------------------
function goodValue(s) {
  if (!s || typeof s !== 'object') return {}
  if (Array.isArray(s.enum)) return s.enum[0]
  const alt = s.oneOf ?? s.anyOf
  if (Array.isArray(alt)) return goodValue(alt[0])
  const type = Array.isArray(s.type) ? s.type[0] : s.type
  switch (type) {
    case 'string': return 'x'.repeat(Math.max(1, s.minLength ?? 1))
    case 'integer': case 'number': return s.minimum ?? 1
    case 'null': return null
    case 'boolean': return true
    case 'array': return Array.from({ length: s.minItems ?? 0 }, () => goodValue(s.items))
    default: {
      const out = {}
      for (const key of s.required ?? []) out[key] = goodValue(s.properties?.[key])
      return out
    }
  }
}
const tools = github.map((t) => ({ name: t.name, parameters: t.parameters, execute() {} }))
const goodArgs = tools.map((t) => goodValue(t.parameters))

const smallTool = {
  name: 'create_issue',
  parameters: {
    type: 'object',
    properties: {
      owner: { type: 'string' }, repo: { type: 'string' }, title: { type: 'string', minLength: 1 },
      labels: { type: 'array', items: { type: 'string' } },
    },
    required: ['owner', 'repo', 'title'],
    additionalProperties: false,
  },
}
const smallArgs = { owner: 'octocat', repo: 'hello-world', title: 'Found a bug', labels: ['bug'] }

const bigTool = {
  name: 'import_rows',
  parameters: {
    type: 'object',
    properties: {
      q: { type: 'string' },
      rows: {
        type: 'array', maxItems: 5_000,
        items: {
          type: 'object',
          properties: { id: { type: 'integer' }, name: { type: 'string' }, tags: { type: 'array', items: { type: 'string' } }, note: { type: 'string' } },
          required: ['id', 'name'],
        },
      },
    },
    required: ['q', 'rows'],
  },
}
const bigArgs = { q: 'x', rows: Array.from({ length: 1_000 }, (_, i) => ({ id: i, name: `row ${i}`, tags: ['a', 'b'], note: 'y'.repeat(50) })) }
const bigText = JSON.stringify(bigArgs)

// ---- timing -----------------------------------------------------------------------------------------
function time(fn, iterations) {
  const start = process.hrtime.bigint()
  for (let i = 0; i < iterations; i++) fn(i)
  return Number(process.hrtime.bigint() - start) / iterations // ns per iteration
}
/** Median ns per iteration over `rounds`, after a warm-up round. */
function measure(fn, iterations, rounds = 7) {
  time(fn, Math.max(1, iterations >> 2))
  const samples = []
  for (let r = 0; r < rounds; r++) samples.push(time(fn, iterations))
  samples.sort((a, b) => a - b)
  return samples[samples.length >> 1]
}
const fmt = (ns) => (ns >= 1e6 ? `${(ns / 1e6).toFixed(2)} ms` : ns >= 1e3 ? `${(ns / 1e3).toFixed(2)} µs` : `${ns.toFixed(0)} ns`)

// Sanity: both accept every good input before anything is timed.
{
  const ours = native.createJsonSchemaToolArgumentValidator()
  const theirs = ajvHost()
  tools.forEach((t, i) => {
    if (ours(t, goodArgs[i]) !== undefined) throw new Error(`native refused ${t.name}: ${ours(t, goodArgs[i])}`)
    if (theirs(t, goodArgs[i]) !== undefined) throw new Error(`ajv refused ${t.name}`)
  })
  for (const [t, a] of [[smallTool, smallArgs], [bigTool, bigArgs]]) {
    if (ours(t, a) !== undefined || theirs(t, a) !== undefined) throw new Error(`refused ${t.name}`)
  }
}

const rows = []
function row(name, nativeNs, ajvNs, note = '') {
  rows.push(`| ${name} | ${fmt(nativeNs)} | ${fmt(ajvNs)} | ${(ajvNs / nativeNs).toFixed(1)}× | ${note} |`)
}

// cold: a fresh validator compiles and validates each of the 117 schemas once.
row(
  'cold: compile + validate 117 GitHub MCP schemas (per set)',
  measure(() => { const v = native.createJsonSchemaToolArgumentValidator(); tools.forEach((t, i) => v(t, goodArgs[i])) }, 3, 7),
  measure(() => { const v = ajvHost(); tools.forEach((t, i) => v(t, goodArgs[i])) }, 1, 5),
)

// warm
{
  const ours = native.createJsonSchemaToolArgumentValidator()
  const theirs = ajvHost()
  row('warm: small arguments (4 properties), one tool', measure(() => ours(smallTool, smallArgs), 200_000), measure(() => theirs(smallTool, smallArgs), 200_000))
  const n = tools.length
  row('warm: round-robin over the 117 tools', measure((i) => ours(tools[i % n], goodArgs[i % n]), 200_000), measure((i) => theirs(tools[i % n], goodArgs[i % n]), 200_000))
  const call = native.toolCallFromArgumentsText('c', 'create_issue', JSON.stringify(smallArgs))
  row('warm: small arguments from provider text (validation only)', measure(() => ours(smallTool, call.arguments), 200_000), measure(() => theirs(smallTool, JSON.parse(JSON.stringify(smallArgs))), 200_000), 'native: validate only (the acceptance plan); Ajv side: JSON.parse + bounds + validate')
  row('warm: ~100 KB arguments as a JS object', measure(() => ours(bigTool, bigArgs), 200), measure(() => theirs(bigTool, bigArgs), 200))
  row(
    '~100 KB provider text: parse + validate',
    measure(() => { const c = native.toolCallFromArgumentsText('c', 'import_rows', bigText); ours(bigTool, c.arguments) }, 200),
    measure(() => theirs(bigTool, JSON.parse(bigText)), 200),
    'native: toolCallFromArgumentsText (JSON.parse) + validate (the acceptance plan on the parsed object, the text in Rust when it is unsure); Ajv: JSON.parse + bounds + validate',
  )
  const parsed = native.toolCallFromArgumentsText('c', 'import_rows', bigText)
  const parsedAjv = JSON.parse(bigText)
  row('~100 KB provider text: validation only', measure(() => ours(bigTool, parsed.arguments), 200), measure(() => theirs(bigTool, parsedAjv), 200), 'Ajv side: bounds + validate of the parsed object')
}

// memory: resident size of 1 024 compiled schemas (the GitHub schemas, made distinct).
function rssOf(build) {
  global.gc?.()
  const before = process.memoryUsage().rss
  const keep = build()
  global.gc?.()
  const after = process.memoryUsage().rss
  return { mb: (after - before) / 1_048_576, keep }
}
const variants = Array.from({ length: 1_024 }, (_, i) => ({
  name: `t${i}`,
  parameters: { ...tools[i % tools.length].parameters, $comment: `variant ${i}` },
}))
const mem = rssOf(() => {
  const v = native.createJsonSchemaToolArgumentValidator({ maxCompiledSchemas: 1_024 })
  variants.forEach((t) => v(t, {}))
  return v
})
const memAjv = rssOf(() => {
  const v = ajvHost()
  variants.forEach((t) => v(t, {}))
  return v
})
rows.push(`| memory: RSS growth with 1 024 compiled schemas | ${mem.mb.toFixed(1)} MB | ${memAjv.mb.toFixed(1)} MB | ${(memAjv.mb / mem.mb).toFixed(1)}× | RSS delta after gc, native measured first |`)

console.log(`Node ${process.version}, ${process.platform}-${process.arch}, Ajv ${require('ajv/package.json').version}\n`)
console.log('| case | prism-tools-native | Ajv 8 + JS bounds | Ajv / native | notes |')
console.log('| --- | --- | --- | --- | --- |')
for (const r of rows) console.log(r)
