'use strict'
// Subpath `prism-tools-native/embeddings`: the embedding model of hybrid tool search (see
// docs/search.md#hybrid-search). Needs the model package `prism-tools-native-minilm`.
const { createEmbeddingRanker, EmbeddingRanker, EMBEDDING_MODEL_PACKAGE } = require('../lib/embeddings.js')

module.exports = { createEmbeddingRanker, EmbeddingRanker, EMBEDDING_MODEL_PACKAGE }
