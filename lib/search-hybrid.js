'use strict'
// Hybrid tool search (docs/search.md#hybrid-search): the lexical index of lib/search.js plus an
// embedding ranking from `prism-tools-native/embeddings`, fused by the `ranking` seam's reciprocal
// rank fusion (crates/core/src/search/fuse.rs; nothing is fused here).
//
// Building embeds every tool off the main thread, in batches (the ranker's tasks on libuv's pool);
// `ready()` settles when that is done. A query embeds on the pool too, and ranks the tool vectors
// there. If the model fails, at build or at a query, the index answers with the lexical ranking
// alone (fail closed): `mode` says which, `embeddingError` says why.
const native = require('../binding.js')
const { searchDocs, namesOf } = require('./search.js')
const { EmbeddingRanker, toolText } = require('./embeddings.js')

// Tools read from the embedding ranking for fusion: the seam reads its host ranking to 256 entries
// and the fusion weighs rank r by 1 / (5 + r), so past 32 an entry cannot lift a tool into a top 16.
const DENSE_DEPTH = 32

function typeError(message) {
  const e = new TypeError(message)
  e.code = 'invalid_tool_search_input'
  return e
}

class HybridToolSearchIndex {
  #lexical
  #ranker
  #set // VectorSet of the tool vectors, in document order; undefined until ready or on failure
  #ready
  #weight
  #fusion
  /** `'pending'` while tools are embedded, then `'hybrid'`, or `'lexical'` after a model failure. */
  mode = 'pending'
  /** The model's error when `mode` is `'lexical'`. */
  embeddingError = undefined
  /** Milliseconds the tool vectors took (from the cache or the model). */
  embedMs = undefined

  constructor(lexical, tools, ranker, weight, fusion) {
    this.#lexical = lexical
    this.#ranker = ranker
    this.#weight = weight
    this.#fusion = fusion
    this.#ready = this.#embed(tools)
  }

  async #embed(tools) {
    const started = performance.now()
    try {
      // Document order: the lexical index's documents are the list's distinct names, first wins.
      const byName = new Map()
      for (const t of tools) if (!byName.has(t.name)) byName.set(t.name, t)
      const texts = namesOf(this.#lexical).map((name) => toolText(byName.get(name)))
      const vectors = await this.#ranker.embed(texts)
      this.#set = this.#ranker.vectorSet(vectors)
      this.mode = 'hybrid'
    } catch (error) {
      this.mode = 'lexical'
      this.embeddingError = error
    }
    this.embedMs = performance.now() - started
  }

  /** The lexical index (`ToolSearchIndex`): what `selectDisclosedTools` and `search_tools` read. */
  get lexical() {
    return this.#lexical
  }

  get size() {
    return this.#lexical.size
  }

  get memoryBytes() {
    return this.#lexical.memoryBytes + (this.#set !== undefined ? this.size * this.#ranker.dimension * 4 : 0)
  }

  /** Settles once every tool is embedded (or the model failed: then `mode` is `'lexical'`). */
  ready() {
    return this.#ready
  }

  /** The documents of the embedding ranking of `query`, best first, or undefined (see `dense`). */
  async denseDocs(query) {
    const dense = await this.dense(query)
    return dense === undefined ? undefined : dense.rows
  }

  /**
   * The embedding ranking of `query`: `{ rows, scores }` (documents best first, their cosines), or
   * undefined when the index is lexical (the model failed before or fails now: then `mode` becomes
   * `'lexical'`).
   */
  async dense(query) {
    await this.#ready
    if (this.#set === undefined) return undefined
    try {
      return await this.#ranker.rank(query, this.#set, DENSE_DEPTH)
    } catch (error) {
      this.mode = 'lexical'
      this.embeddingError = error
      this.#set = undefined
      return undefined
    }
  }

  /**
   * `await index.search(query, { k, fusion }?)`: `[{ name, score, matched }]`, the lexical and
   * embedding rankings fused (`fusion`: `'rrf'`, the default, or `'score'`).
   */
  async search(query, options) {
    if (typeof query !== 'string') throw typeError('HybridToolSearchIndex.search: query must be a string')
    let k
    let fusion = this.#fusion
    if (options !== undefined && options !== null) {
      if (typeof options !== 'object') throw typeError('HybridToolSearchIndex.search: options must be an object')
      k = options.k
      if (k !== undefined && k !== null && typeof k !== 'number') throw typeError('HybridToolSearchIndex.search: k must be a number')
      if (options.fusion !== undefined) fusion = fusionOf(options.fusion, 'HybridToolSearchIndex.search')
    }
    const dense = await this.dense(query)
    if (dense === undefined) return searchDocs(this.#lexical, query, k)
    const scores = fusion === 'score' ? dense.scores : undefined
    return searchDocs(this.#lexical, query, k, dense.rows, this.#weight, scores)
  }
}

function fusionOf(value, where) {
  if (value === undefined || value === null) return 'rrf'
  if (value !== 'rrf' && value !== 'score') throw typeError(`${where}: fusion must be "rrf" or "score"`)
  return value
}

function hybridIndex(lexical, tools, ranker, options) {
  if (!(ranker instanceof EmbeddingRanker)) {
    throw typeError('createToolSearchIndex: embeddings must be a ranker from createEmbeddingRanker (prism-tools-native/embeddings)')
  }
  const weight = options.rankingWeight
  if (weight !== undefined && weight !== null && typeof weight !== 'number') {
    throw typeError('createToolSearchIndex: rankingWeight must be a number')
  }
  const fusion = fusionOf(options.fusion, 'createToolSearchIndex')
  return new HybridToolSearchIndex(lexical, tools, ranker, weight ?? undefined, fusion)
}

/**
 * The `search_tools` tool over a hybrid index: the native tool over its lexical index, whose
 * `execute` is given the embedding ranking of the query (fused in Rust as the seam fuses it). It
 * answers a promise; with the model failed, the lexical answer.
 */
function hybridSearchToolsTool(hybrid, options) {
  const tool = native.createSearchToolsTool(hybrid.lexical, options)
  const run = tool.execute
  tool.execute = async (args, ctx) => {
    if (args === null || typeof args !== 'object') return ctx === undefined ? run(args) : run(args, ctx)
    // Read once: the native tool reads the copy, so a getter cannot answer it something else.
    const query = args.query
    const copy = { query, k: args.k }
    const docs = typeof query === 'string' ? await hybrid.denseDocs(query) : undefined
    return docs === undefined ? run(copy, ctx) : run(copy, ctx, docs)
  }
  return tool
}

module.exports = { hybridIndex, hybridSearchToolsTool, HybridToolSearchIndex }
