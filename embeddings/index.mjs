// Subpath `prism-tools-native/embeddings` (ES modules): the very objects of the CommonJS entry.
import cjs from './index.js'

export const { createEmbeddingRanker, EmbeddingRanker, EMBEDDING_MODEL_PACKAGE } = cjs
export default cjs
