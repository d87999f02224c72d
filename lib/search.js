'use strict'
// Tool search, the JS half of the crossing (docs/search.md). The index lives in Rust; this file only
// moves data across Node-API in bulk, because one Node-API call costs more than the work it carries.
// The protocol is "packed typed arrays": its layouts are written down once, in
// crates/core/src/search/packed.rs (the Rust half); this file and that one change together.
//
// - createToolSearchIndex reads each tool's name, description and parameter names and descriptions
//   here, in JS, and hands them over as a few strings (32 tools each) plus one Uint32Array of three
//   lengths per tool (name, description, parameter text): one call instead of ~25 per tool. The
//   16 KB cuts of the description and the parameter text are made in Rust on the exact UTF-8 bytes;
//   JS only cuts at 16 384 UTF-16 units first, which is never less than 16 KB of UTF-8.
// - ToolSearchIndex#search sends the query string in and reads the hits back from a Float64Array
//   (document, score, matched term positions); the names are the JS strings of the tool list, kept
//   on the index, so no string is created per hit.
//
// Errors are the ones the native entry points throw: TypeError `invalid_tool_search_input` and
// RangeError `tool_search_index_cap`.
const native = require('../binding.js')

const INVALID_INPUT = 'invalid_tool_search_input'
const INDEX_CAP = 'tool_search_index_cap'
const LIMITS = native.toolSearchLimits()
const MAX_TOOLS = LIMITS.maxIndexedTools
const HARD_MAX_TOOLS = LIMITS.hardMaxIndexedTools
const MAX_RANKING = 256 // entries of a host ranking read for fusion (packed.rs MAX_FUSED_RANKING)
const TEXT_UNITS = 16 * 1024 // packed.rs TEXT_UNITS; Rust cuts to 16 KB of UTF-8 on a character boundary
const PARAMETERS = 64 // packed.rs INDEXED_PARAMETERS
const kNames = Symbol('toolSearchNames') // document → the tool's name (a JS string)
const kDocs = Symbol('toolSearchDocs') // name → document, made on the first fused search

function typeError(message) {
  const e = new TypeError(message)
  e.code = INVALID_INPUT
  return e
}

// Search results land here; no user code runs between the native call that fills it and the loop
// that reads it, so a getter that searches again cannot interleave.
let out = new Float64Array(2048)

const cut = (s) => (s.length > TEXT_UNITS ? s.slice(0, TEXT_UNITS) : s)
const isObjectLike = (v) => v !== null && (typeof v === 'object' || typeof v === 'function')

/** `maxTools`: absent gives the default cap (1 024); a number is floored and clamped to 1…16 384. */
function maxToolsOf(value) {
  if (value === undefined || value === null) return MAX_TOOLS
  if (typeof value !== 'number' || Number.isNaN(value)) throw typeError('createToolSearchIndex: maxTools must be a number')
  const v = Math.floor(value)
  return v < 1 ? 1 : v > HARD_MAX_TOOLS ? HARD_MAX_TOOLS : v
}

/**
 * `createToolSearchIndex(tools, options?)`: see docs/search.md. With `options.embeddings` (a ranker
 * from `prism-tools-native/embeddings`) the answer is a hybrid index (lib/search-hybrid.js).
 */
function createToolSearchIndex(tools, options) {
  if (!Array.isArray(tools)) throw typeError('createToolSearchIndex: tools must be an array')
  // Options are read first, as the native entry point reads them.
  const opts = options !== null && typeof options === 'object' ? options : undefined
  const queryBytes = opts !== undefined ? opts.queryBytes : undefined
  const cap = maxToolsOf(opts !== undefined ? opts.maxTools : undefined)
  const embeddings = opts !== undefined ? opts.embeddings : undefined
  const n = tools.length
  if (n > cap) {
    const e = new RangeError(`createToolSearchIndex: ${n} tools exceed the index cap of ${cap}`)
    e.code = INDEX_CAP
    throw e
  }
  const index = buildLexical(tools, n, queryBytes)
  if (embeddings === undefined || embeddings === null) return index
  return require('./search-hybrid.js').hybridIndex(index, tools, embeddings, opts)
}

function buildLexical(tools, n, queryBytes) {
  const names = new Array(n)
  const texts = []
  let chunk = ''
  // Per call, not shared: a tool's getter may build another index while this one is being read.
  const meta = new Uint32Array(3 * n)
  let m = 0
  for (let i = 0; i < n; i++) {
    const t = tools[i]
    const name = t !== null && typeof t === 'object' ? t.name : undefined
    if (typeof name !== 'string') throw typeError(`createToolSearchIndex: tools[${i}] must be an object with a string name`)
    names[i] = name
    let d = t.description
    d = typeof d === 'string' ? cut(d) : ''
    chunk += name
    chunk += d
    meta[m++] = name.length
    meta[m++] = d.length
    // Parameter text as read_tool joins it: `key description ` per parameter (the first 64).
    let units = 0
    const p = t.parameters
    const props = isObjectLike(p) ? p.properties : undefined
    if (props !== null && typeof props === 'object') {
      const keys = Object.keys(props)
      const kn = keys.length < PARAMETERS ? keys.length : PARAMETERS
      // Rust keeps 16 KB of it; units never exceed bytes, so stopping once 16 384 units are sent
      // never sends less than Rust keeps.
      for (let j = 0; j < kn && units < TEXT_UNITS; j++) {
        const key = cut(keys[j])
        const v = props[keys[j]]
        const pd = isObjectLike(v) ? v.description : undefined
        chunk += key
        chunk += ' '
        units += key.length + 1
        if (typeof pd === 'string') {
          const c = cut(pd)
          chunk += c
          chunk += ' '
          units += c.length + 1
        }
      }
    }
    meta[m++] = units
    // Chunks of 32 tools: no string large enough for V8 to give it fresh pages of its own. A chunk is
    // built by `+=` (a rope, flattened once when the crossing reads it): an array of parts and a join
    // grew the array and made one more pass (build of 1 024 tools ~0.1-0.2 ms slower on Node 20).
    if ((i & 31) === 31) {
      texts.push(chunk)
      chunk = ''
    }
  }
  if (chunk.length > 0) texts.push(chunk)
  const positions = new Uint32Array(n)
  const index = native._buildToolSearchIndex(texts, meta, n, queryBytes, positions)
  const size = index.size
  const byDoc = new Array(size)
  for (let d = 0; d < size; d++) byDoc[d] = names[positions[d]]
  Object.defineProperty(index, kNames, { value: byDoc })
  return index
}

function namesOf(index) {
  let names = index[kNames]
  if (names === undefined) {
    // An index made by the native entry point directly: read its names once.
    names = index._names()
    Object.defineProperty(index, kNames, { value: names })
  }
  return names
}

function rankingDocs(index, names, ranking) {
  let docs = index[kDocs]
  if (docs === undefined) {
    docs = new Map()
    for (let d = 0; d < names.length; d++) docs.set(names[d], d)
    Object.defineProperty(index, kDocs, { value: docs })
  }
  const len = ranking.length < MAX_RANKING ? ranking.length : MAX_RANKING
  const picked = new Uint32Array(len)
  let j = 0
  for (let i = 0; i < len; i++) {
    const d = docs.get(ranking[i]) // only a string equal to an indexed name maps
    if (d !== undefined) picked[j++] = d
  }
  return picked.subarray(0, j)
}

/**
 * `ToolSearchIndex#search(query, { k?, ranking?, rankingWeight? }?)`: `[{ name, score, matched }]`,
 * best first.
 */
function search(query, options) {
  if (typeof query !== 'string') throw typeError('ToolSearchIndex.search: query must be a string')
  let k
  let ranking
  let weight
  if (options !== undefined && options !== null) {
    if (typeof options !== 'object') throw typeError('ToolSearchIndex.search: options must be an object')
    const r = options.ranking
    if (r !== undefined && r !== null) {
      if (!Array.isArray(r)) throw typeError('ToolSearchIndex.search: ranking must be an array of tool names')
      ranking = rankingDocs(this, namesOf(this), r)
    }
    k = options.k
    if (k !== undefined && k !== null && typeof k !== 'number') throw typeError('ToolSearchIndex.search: k must be a number')
    weight = options.rankingWeight
    if (weight !== undefined && weight !== null && typeof weight !== 'number') {
      throw typeError('ToolSearchIndex.search: rankingWeight must be a number')
    }
  }
  return searchDocs(this, query, k, ranking, weight)
}

/**
 * The search itself, `ranking` already documents (a Uint32Array) or undefined: hit objects. With
 * `scores` (a Float32Array beside `ranking`) the fusion is the score-based one.
 */
function searchDocs(index, query, k, ranking, weight, scores) {
  const names = namesOf(index)
  let terms = index._searchPacked(query, k, ranking, weight, out, scores)
  if (typeof terms === 'number') {
    out = new Float64Array(Math.max(terms, out.length * 2))
    terms = index._searchPacked(query, k, ranking, weight, out, scores)
  }
  if (terms === undefined) return []
  const words = terms === '' ? [] : terms.split(' ')
  const count = out[0]
  const hits = new Array(count)
  let p = 1
  for (let i = 0; i < count; i++) {
    const mc = out[p + 2]
    const matched = new Array(mc)
    for (let j = 0; j < mc; j++) matched[j] = words[out[p + 3 + j]]
    hits[i] = { name: names[out[p]], score: out[p + 1], matched }
    p += 3 + mc
  }
  return hits
}

Object.defineProperty(native.ToolSearchIndex.prototype, 'search', { value: search, writable: true, configurable: true })

// A hybrid index (lib/search-hybrid.js) answers for the lexical one it wraps where the native
// entry points read an index; the hybrid module is loaded only once such an index exists.
const hybridOf = (index) => {
  if (index === null || typeof index !== 'object' || index instanceof native.ToolSearchIndex) return undefined
  const { HybridToolSearchIndex } = require('./search-hybrid.js')
  return index instanceof HybridToolSearchIndex ? index : undefined
}

/** `createSearchToolsTool(index, options?)`: over a hybrid index, its `execute` fuses the embedding ranking. */
function createSearchToolsTool(index, options) {
  const hybrid = hybridOf(index)
  if (hybrid === undefined) return native.createSearchToolsTool(index, options)
  return require('./search-hybrid.js').hybridSearchToolsTool(hybrid, options)
}

/** `selectDisclosedTools(options)`: a hybrid index discloses by its lexical index (sync, per turn). */
function selectDisclosedTools(options) {
  const hybrid = options !== null && typeof options === 'object' ? hybridOf(options.index) : undefined
  if (hybrid === undefined) return native.selectDisclosedTools(options)
  return native.selectDisclosedTools({ ...options, index: hybrid.lexical })
}

module.exports = { createToolSearchIndex, createSearchToolsTool, selectDisclosedTools, searchDocs, namesOf }
