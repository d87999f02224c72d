// The embedding model of hybrid tool search: `prism-tools-native/embeddings`. See docs/search.md.

import type { EmbeddingRankerLike } from "./search"

/** Options of {@link createEmbeddingRanker}. */
export interface EmbeddingRankerOptions {
  /**
   * The model package's folder. Default: `PRISM_TOOLS_MINILM_PATH`, else the installed package
   * `prism-tools-native-minilm`.
   */
  modelDir?: string
  /** A folder where tool vectors are kept by content hash, so a restart does not embed again. */
  cacheDir?: string
}

/** all-MiniLM-L6-v2, loaded and run off the main thread; vectors cached by content hash. */
export declare class EmbeddingRanker implements EmbeddingRankerLike {
  private constructor()
  /** Floats per vector: 384. */
  readonly dimension: number
  /** `"prism-tools-native-minilm"`. */
  readonly model: string
  /** Unit vectors of `texts`, row after row (`texts.length × dimension` floats), computed in batches off the main thread. */
  embed(texts: readonly string[]): Promise<Float32Array>
}

/**
 * Loads the model package and checks every file's sha256 off the main thread. Rejects with code
 * `ERR_PRISM_EMBEDDINGS_UNAVAILABLE` (naming the package to install) when the model package or
 * the embeddings addon is missing, and `ERR_PRISM_EMBEDDINGS_MODEL_INVALID` when a file is not the
 * pinned one.
 */
export declare function createEmbeddingRanker(options?: EmbeddingRankerOptions): Promise<EmbeddingRanker>

/** `"prism-tools-native-minilm"`: the package to install. */
export declare const EMBEDDING_MODEL_PACKAGE: "prism-tools-native-minilm"
