// Tool search: a BM25-lite index over tool names and descriptions, the generated `search_tools`
// tool, and fail-closed progressive disclosure. See docs/search.md.

import type { ToolExecutionContext } from "./harness"

/**
 * What the index reads from a tool: its `name`, its `description`, and the names and
 * descriptions of `parameters.properties`. Any `ToolDefinition` fits.
 */
export interface SearchableTool {
  readonly name: string
  readonly description?: string
  readonly parameters?: object
}

/** Options of {@link createToolSearchIndex}. */
export interface ToolSearchIndexOptions {
  /**
   * Query bytes used (UTF-8); longer queries are cut at a character boundary. Default 4 096,
   * clamped to 65 536; values are floored; NaN gives the default.
   */
  queryBytes?: number
  /**
   * Most tools the index takes: default 1 024 (`TOOL_SEARCH_LIMITS.maxIndexedTools`), floored and
   * clamped to 1…16 384 (`hardMaxIndexedTools`). More tools throw `RangeError` `tool_search_index_cap`.
   */
  maxTools?: number
}

/** A ranker from `createEmbeddingRanker` (`prism-tools-native/embeddings`). */
export interface EmbeddingRankerLike {
  readonly dimension: number
  embed(texts: readonly string[]): Promise<Float32Array>
}

/** Options of {@link createToolSearchIndex} that make a hybrid index. */
export interface HybridToolSearchIndexOptions extends ToolSearchIndexOptions {
  /** The embedding model: tools are embedded off the main thread, queries too. */
  embeddings: EmbeddingRankerLike
  /**
   * How the rankings are fused: `"rrf"` (default), the `ranking` seam's reciprocal rank fusion; or
   * `"score"`, `share ×` the query's min–max-normalised cosine `+ (1 − share) ×` BM25 over its top score.
   */
  fusion?: "rrf" | "score"
  /**
   * With `"rrf"`, the embedding ranking's weight (the seam's `rankingWeight`, default 1.5); with
   * `"score"`, the embedding share (default 0.6, clamped to 0…1).
   */
  rankingWeight?: number
}

/**
 * A lexical index and the embeddings of its tools: `search` fuses the two rankings with the
 * `ranking` seam's reciprocal rank fusion, and answers lexically if the model fails.
 */
export declare class HybridToolSearchIndex {
  private constructor()
  /** `"pending"` while the tools are embedded, then `"hybrid"`, or `"lexical"` after a model failure. */
  readonly mode: "pending" | "hybrid" | "lexical"
  /** The model's error when `mode` is `"lexical"`. */
  readonly embeddingError: unknown
  /** Milliseconds the tool vectors took, once ready. */
  readonly embedMs: number | undefined
  /** The lexical index it wraps. */
  get lexical(): ToolSearchIndex
  get size(): number
  /** The lexical index's bytes plus the tool vectors' (384 floats a tool). */
  get memoryBytes(): number
  /** Settles once every tool is embedded, or the model failed (never rejects). */
  ready(): Promise<void>
  /** The top `k` tools for `query`, best first: waits for `ready()`, embeds the query off the main thread. */
  search(query: string, options?: { k?: number; fusion?: "rrf" | "score" }): Promise<ToolSearchHit[]>
}

/** Options of {@link ToolSearchIndex.search}. */
export interface ToolSearchOptions {
  /**
   * Most results to return. Default 16; clamped to 64 (+Infinity too); floored; 0 or negative
   * gives no results; NaN gives the default. A non-number throws `TypeError`.
   */
  k?: number
  /**
   * Hybrid scoring seam, off by default: the host's own ranking of tool names, best first (for
   * example from its embeddings). When given, the result is the reciprocal rank fusion of this
   * ranking and the lexical one (the lexical top 32 each add `1 / (5 + rank)`, the host's entries
   * `rankingWeight / (5 + rank)`); `score` is then the fused score. Names not in the index are
   * ignored (at most 256 entries are read), so results still name only indexed tools. Not an
   * array → `TypeError`.
   */
  ranking?: readonly string[]
  /**
   * How much the host's `ranking` counts against the lexical list's 1. Default 1.5 (fitted with
   * all-MiniLM-L6-v2 rankings on the tuning halves of three retrieval sets, docs/search.md);
   * clamped to 0…100 (+Infinity too); NaN gives the default; 0 keeps the lexical order. Ignored
   * without a `ranking`. A non-number throws `TypeError`.
   */
  rankingWeight?: number
}

/** One search result. */
export interface ToolSearchHit {
  /** The tool's name. */
  name: string
  /** BM25 score (> 0); higher is better. */
  score: number
  /** The query terms (lower-cased, as typed) found in this tool, in query order. */
  matched: string[]
}

/** An immutable BM25-lite index over a tool list, built by {@link createToolSearchIndex}. */
export declare class ToolSearchIndex {
  private constructor()
  /** Number of indexed tools: distinct names (a repeated name keeps its first tool). */
  get size(): number
  /**
   * Native heap bytes the index holds (approximate; ~0.5 MB for 919 tools). Reported to V8 as
   * external memory while the index lives, so the garbage collector sees what it costs.
   */
  get memoryBytes(): number
  /**
   * The top `k` tools for `query`, best first; equal scores keep input order. Only tools matching
   * at least one query term are returned, so an empty, whitespace-only or emoji-only query gives
   * `[]`. Throws `TypeError` (code `invalid_tool_search_input`) when `query` is not a string.
   */
  search(query: string, options?: ToolSearchOptions): ToolSearchHit[]
}

/**
 * Builds the index once over `tools` (at most 1 024). Throws `TypeError` (code
 * `invalid_tool_search_input`) when `tools` is not an array or an entry is not an object with a
 * string `name`, and `RangeError` (code `tool_search_index_cap`) over 1 024 tools.
 */
export declare function createToolSearchIndex(tools: readonly SearchableTool[], options: HybridToolSearchIndexOptions): HybridToolSearchIndex
export declare function createToolSearchIndex(tools: readonly SearchableTool[], options?: ToolSearchIndexOptions): ToolSearchIndex

/** Arguments of the `search_tools` tool, as the model sends them. */
export interface SearchToolsArgs {
  /** Keywords describing the tool needed. A non-string gives an `invalid_arguments` result. */
  query: string
  /** Results wanted: default 8 (or `defaultK`), clamped to 64; a non-number gives the default. */
  k?: number
}

/** The part of `ToolExecutionContext` that `search_tools` reads (any context object will do). */
export interface SearchToolsContext {
  toolCallId?: string
}

/** The `ToolResult` of a `search_tools` call. */
export interface SearchToolsResult {
  /** `ctx.toolCallId`, copied when a context object is given. */
  toolCallId?: string
  name: "search_tools"
  /**
   * Inert text, one line per tool: `name: short description [matched: a, b]` (no description:
   * `name [matched: a]`); `No tools matched the query.` when nothing matched.
   */
  content?: string
  /** The names returned, best first: what the session activates (see {@link activateToolNames}). */
  value: { names: string[] }
  /** Present when `args.query` is not a string. */
  error?: { message: string; code: "invalid_arguments" }
  /** `k` used and whether the query was cut to the index's `queryBytes`. */
  metadata?: { k: number; queryTruncated: boolean }
}

/** The generated `search_tools` ToolDefinition. */
export interface SearchToolsTool {
  readonly name: "search_tools"
  readonly description: string
  readonly parameters: {
    type: "object"
    properties: {
      query: { type: "string"; description: string }
      k: { type: "integer"; description: string; minimum: number; maximum: number }
    }
    required: ["query"]
    additionalProperties: false
  }
  /** Synchronous; never throws for bad arguments (they give a result with `error`). */
  /** Called by dispatch with a full context: the result carries its `toolCallId`. */
  execute(args: SearchToolsArgs | Record<string, unknown>, ctx: ToolExecutionContext): SearchToolsResult & { toolCallId: string }
  execute(args: SearchToolsArgs | Record<string, unknown>, ctx?: SearchToolsContext): SearchToolsResult
}

/** Options of {@link createSearchToolsTool}. */
export interface SearchToolsToolOptions {
  /** `k` when the model gives none. Default 8, clamped to 64. */
  defaultK?: number
}

/** The generated `search_tools` tool over `index`. Its results only ever name tools of `index`. */
export declare function createSearchToolsTool(index: ToolSearchIndex, options?: SearchToolsToolOptions): SearchToolsTool
/** Over a hybrid index: `execute` answers a promise of the same result, the rankings fused. */
export declare function createSearchToolsTool(index: HybridToolSearchIndex, options?: SearchToolsToolOptions): HybridSearchToolsTool

/** The `search_tools` tool over a {@link HybridToolSearchIndex}. */
export interface HybridSearchToolsTool extends Omit<SearchToolsTool, "execute"> {
  execute(args: SearchToolsArgs | Record<string, unknown>, ctx?: SearchToolsContext): Promise<SearchToolsResult>
}

/** Input of {@link selectDisclosedTools}. */
export interface SelectDisclosedToolsOptions<T extends SearchableTool> {
  /** The tools that may be sent (the run's grant). Must be an array. */
  tools: readonly T[]
  /** The turn's text that tools are scored against. A non-string discloses every tool. */
  input: string
  /** Top-scored tools to send: default 16, clamped to 64; 0 sends only activated and `search_tools`. */
  topK?: number
  /** Names activated by earlier `search_tools` calls; the newest 128 count; unknown names are inert. */
  activated?: readonly string[]
  /** A prebuilt index (e.g. once per run); without it one is built from `tools` for this call. A hybrid index discloses by its lexical index. */
  index?: ToolSearchIndex | HybridToolSearchIndex
  /** Query bytes when no `index` is given (see {@link ToolSearchIndexOptions.queryBytes}). */
  queryBytes?: number
}

/**
 * The tools to send this turn: the top `topK` of `tools` by score for `input`, plus the activated
 * names, plus the tool named `search_tools` when the list has one — always in the list's order,
 * never a tool outside it. Fails closed to (a copy of) the whole list when there are more than
 * 1 024 tools, an entry has no string name, `input` is not a string, anything throws while
 * reading, or the selection would be empty. Throws `TypeError` only when `options` is not an
 * object or `options.tools` is not an array.
 */
export declare function selectDisclosedTools<T extends SearchableTool>(options: SelectDisclosedToolsOptions<T>): T[]

/**
 * Adds `names` to an activation list and returns the new list: distinct names, the newest last,
 * at most 128 (the oldest drop). Non-string entries are ignored; a non-array counts as empty.
 */
export declare function activateToolNames(activated: readonly string[] | undefined, names: readonly string[]): string[]

/** The name of the generated tool. */
export declare const SEARCH_TOOLS_NAME: "search_tools"

/** The limits of tool search. */
export declare const TOOL_SEARCH_LIMITS: Readonly<{
  /** Tools disclosed per turn, and `search` results, when no count is given: 16. */
  defaultTopK: number
  /** Hard cap of `topK` and `k`: 64. */
  maxTopK: number
  /** `search_tools` results when the model gives no `k`: 8. */
  searchToolsDefaultK: number
  /** Most tools an index holds by default: 1 024. */
  maxIndexedTools: number
  /** Largest `maxTools` an index may be given: 16 384. */
  hardMaxIndexedTools: number
  /** Query bytes by default: 4 096. */
  defaultQueryBytes: number
  /** Hard cap of the query-bytes option: 65 536. */
  maxQueryBytes: number
  /** Most activated names kept: 128. */
  maxActivatedNames: number
  /** Characters of a description in a `search_tools` line: 160. */
  descriptionChars: number
}>
