// The agent tool loop: the provider seam, the mock provider, createAgent / session.run.
// See docs/agent.md and docs/spec.md section 8.

import type {
  AgentEvent,
  ErrorInfo,
  GuardrailOptions,
  JsonObject,
  PermissionPolicyLike,
  SecretRedactor,
  ToolCallContent,
  ToolDefinition,
  ToolRegistry,
  ToolResult,
  ToolValidator,
} from "./harness";
import type { AgentIdentity, OwnershipScope, ToolEffectStore } from "./effects";
import type { RunLedger } from "./ledger";

export interface TextContent {
  type: "text";
  text: string;
}

export interface ThinkingContent {
  type: "thinking";
  text: string;
  signature?: string;
}

/** A block of a message: text, thinking, a tool call, a tool result, or another provider block. */
export type ContentBlock = TextContent | ThinkingContent | ToolCallContent | ToolResultContent | { type: string; [key: string]: unknown };

/** Usage as a provider reports it; summed over a run's turns as `@arnilo/prism` sums it. */
export interface Usage {
  inputTokens?: number;
  outputTokens?: number;
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
  /** Defaults to input + output when a turn does not report it. */
  totalTokens?: number;
  /** Summed while every turn reports the same `currency`. */
  cost?: number;
  currency?: string;
}

/** The first block of a `tool` message: one call's result, as `@arnilo/prism`'s serializers read it. */
export interface ToolResultContent {
  type: "tool_result";
  toolCallId: string;
  name: string;
  /** The tool result's `value`: what the model is sent. */
  result?: unknown;
  error?: ErrorInfo;
}

export type Message =
  | { role: "system"; content: TextContent[]; metadata?: Record<string, unknown> }
  | { role: "user"; content: ContentBlock[]; metadata?: Record<string, unknown> }
  | { id?: string; role: "assistant"; content: ContentBlock[] }
  /** `[tool_result, ...the result's own content blocks]`, `metadata` the result's. */
  | { role: "tool"; content: [ToolResultContent, ...ContentBlock[]]; metadata?: Record<string, unknown> };

/** `{ count, idsHash }`: how many tools a provider request carries and a hash of their names in order. */
export interface ToolsRequestMetadata {
  count: number;
  /** `sha256:` + hex SHA-256 of the names in request order, each followed by `\n`. */
  idsHash: string;
}

/**
 * The model a run talks to, as `@arnilo/prism` names it. Only `capabilities.tools` changes what the
 * loop sends: `true` leaves the `Available tools:` text list out of the request (the provider sends
 * the definitions in `tools`); other fields are passed to the provider as given.
 */
export interface ModelConfig {
  provider: string;
  model: string;
  displayName?: string;
  capabilities?: { tools?: boolean; input?: readonly string[]; [key: string]: unknown };
  [key: string]: unknown;
}

export interface ProviderRequest {
  model: ModelConfig;
  /**
   * As upstream's default prompt: a `system` message `Available tools:\n- name: description` listing
   * this turn's tools (unless `model.capabilities.tools` is `true`, or no tool is disclosed), then
   * `system` (`System instruction:\n` + the agent's instructions), then the session transcript.
   */
  messages: Message[];
  /** The tools disclosed this turn, in run order: the very `ToolDefinition`s (redacted copies with a `redactor`). */
  tools: ToolDefinition<any>[];
  /** The run's live signal. */
  signal: AbortSignal;
  metadata: { tools: ToolsRequestMetadata; [key: string]: unknown };
  /** Set when the run has a `toolChoice` for this turn; each provider maps it to its wire format. */
  options?: { toolChoice?: ToolChoice; [key: string]: unknown };
}

/** `@arnilo/prism`'s provider event protocol. */
export type ProviderEvent =
  | { type: "message_start"; messageId?: string; [key: string]: unknown }
  | { type: "content_delta"; content: ContentBlock }
  /** A fragment; calls no `tool_call` event delivered are rebuilt from these by `index`. */
  | { type: "tool_call_delta"; index: number; id?: string; name?: string; argumentsText?: string }
  /** The assembled call: what runs. */
  | { type: "tool_call"; call: ToolCallContent }
  /** The turn's usage (the last one wins). */
  | { type: "usage"; usage: Usage }
  /** Ends the turn; its usage replaces the turn's. */
  | { type: "done"; usage?: Usage; stopReason?: string }
  /** Fails the turn; redacted like a thrown error. A string becomes an `ErrorInfo`. */
  | { type: "error"; error: ErrorInfo | string };

export interface AIProvider {
  id: string;
  generate(request: ProviderRequest): AsyncIterable<ProviderEvent>;
  /** The most tools one request may carry; an agent's turn never sends more (docs/agent.md § Deferred tools and tool caps). */
  maxTools?: number;
  /** The provider searches tools marked `deferLoading` itself (Anthropic's tool search); else the agent's `search_tools` discloses them. */
  nativeToolSearch?: boolean;
}

export declare function providerTextDelta(text: string): ProviderEvent;
export declare function providerThinkingDelta(text: string, signature?: string): ProviderEvent;
export declare function providerContentDelta(content: ContentBlock): ProviderEvent;
export declare function providerToolCall(call: ToolCallContent): ProviderEvent;
export declare function providerToolCallDelta(delta: { index: number; id?: string; name?: string; argumentsText?: string }): ProviderEvent;
export declare function providerUsage(usage: Usage): ProviderEvent;
export declare function providerDone(usage?: Usage, stopReason?: string): ProviderEvent;
/** An `error` event with the error redacted through `secrets`. */
export declare function providerError(error: unknown, secrets?: readonly (string | undefined)[]): Extract<ProviderEvent, { type: "error" }>;
export declare function toolCallContent(id: string, name: string, args?: JsonObject): ToolCallContent;

export interface MockProviderOptions {
  id?: string;
  /** Sees every request (and the 0-based turn index) before any event of that turn. */
  onRequest?(request: ProviderRequest, turn: number): void | Promise<void>;
}

/**
 * A scripted provider. A flat event list replays on every turn; a list of event lists scripts one
 * list per turn, and a turn past the script yields an `error` event with code `mock_script_exhausted`.
 * An aborted request signal throws its reason.
 */
export declare function createMockProvider(events: readonly ProviderEvent[] | readonly (readonly ProviderEvent[])[], options?: MockProviderOptions): AIProvider;

export interface ToolNarrowingInput {
  /** 1-based provider turn. */
  turn: number;
  lastAssistantText?: string;
  /** The run's granted tool names, in run order. */
  toolIds: string[];
}
/** Returns the names to send this turn; names outside `toolIds` are dropped (`tool_narrowing_clamped`). */
export type ToolNarrowing = (input: ToolNarrowingInput) => readonly string[] | Promise<readonly string[]>;

export interface ToolsSearchOptions {
  /** Tools disclosed per turn: default 16, clamped to 64. */
  topK?: number;
  /** `search_tools` results when the model gives no `k`: default 8. */
  defaultK?: number;
  /** Query bytes: default 4 096, hard cap 65 536. */
  queryBytes?: number;
  /** Most tools the run's index holds (default 1 024, up to 16 384); a larger grant discloses every tool. */
  maxTools?: number;
  /**
   * A ranker from `prism-tools-native/embeddings`: `search_tools` then fuses its embedding ranking
   * with the lexical one (hybrid search), and answers lexically if the model fails.
   */
  embeddings?: import("./search").EmbeddingRankerLike;
}

export interface SingleShotLoopOptions {
  strategy?: "single-shot";
  /** Calls of one turn run at most this many at once: default 1, clamped to 64. */
  toolConcurrency?: number;
}

/** `@arnilo/prism`'s validation of a candidate artifact. */
export interface ArtifactValidationResult {
  ok: boolean;
  errors?: Array<{ path?: string; message: string }>;
  metadata?: Record<string, unknown>;
}

/**
 * A validator's answer: `{ ok: true }`, `undefined` or `true` accept the artifact;
 * `{ ok: false, errors }`, a message, `{ message }` or `false` reject it (the messages go back to the
 * model, one per line).
 */
export type ArtifactValidation = void | undefined | boolean | string | { message?: string } | ArtifactValidationResult;

/** `@arnilo/prism`'s parser answer (a parser may also return the artifact itself). */
export type ArtifactParseResult<A> = { ok: true; value: A } | { ok: false; error?: string };

export interface ArtifactContext {
  sessionId: string;
  runId: string;
  turn: number;
  signal: AbortSignal;
  metadata: Record<string, unknown>;
}

/**
 * `generate-validate-revise`: every provider response is a candidate artifact. `parser(text)` turns
 * its text into the artifact (a throw or `{ ok: false }` makes the candidate invalid; default: the
 * text itself), then `validator(artifact)` accepts or rejects it; a rejection asks the model for a
 * revision (`repairer` writes that request; default: the rejection's messages).
 */
export interface ArtifactLoopOptions<A = unknown> {
  strategy: "generate-validate-revise";
  parser?: (text: string, context: ArtifactContext) => A | ArtifactParseResult<A> | Promise<A | ArtifactParseResult<A>>;
  validator?: (artifact: A, context: ArtifactContext) => ArtifactValidation | Promise<ArtifactValidation>;
  /** `value` is undefined after a parse failure. Answers the revision request: text, blocks or messages. */
  repairer?: (value: A | undefined, failure: ArtifactValidationResult, context: ArtifactContext) => string | Message | Message[] | ContentBlock[] | Promise<string | Message | Message[] | ContentBlock[]>;
  /** Revision requests after the first candidate: default 2, clamped to 16; 0 = one candidate only. */
  maxRevisions?: number;
  /**
   * `"inert"` (default): calls in a response are never dispatched (each gets a
   * `tool_call_not_dispatched` row) and the response is still a candidate. `"bounded"`: a response
   * with calls dispatches them sequentially, consumes one of `limits.maxToolRounds` and is not parsed.
   */
  toolCalls?: "inert" | "bounded";
}

export type LoopOptions = SingleShotLoopOptions | ArtifactLoopOptions<any>;

/** What a run's input may be: text, content blocks, a message or a list of messages. */
export type AgentInput = string | ContentBlock[] | Message | Message[];

/** What `ctx.generate` answers: one provider turn, as `@arnilo/prism`'s `ProviderTurnResult`. */
export interface ProviderTurnResult {
  /** The assistant content (text joined, redacted as it was let out when the run has a redactor). */
  readonly content: readonly ContentBlock[];
  /** The tool calls of the turn, provider-hosted ones included (`authority: "provider-hosted"`). */
  readonly calls: readonly ToolCallContent[];
  readonly messageId?: string;
  /** Whether the provider started an assistant message (false: no output at all). */
  readonly started: boolean;
  /** The turn's usage, already counted against the run's limits and in the result's usage. */
  readonly usage?: Usage;
}

/**
 * What a custom loop strategy's `run(ctx)` gets (docs/agent.md "Custom loop strategies"). The
 * strategy orchestrates turns; the run does the rest. What ends the run (a breach, an abort, a
 * provider failure) is thrown from the ctx method as an Error (`RunLimitError` for a breach).
 */
export interface LoopContext {
  readonly sessionId: string;
  readonly runId: string;
  readonly metadata: Readonly<Record<string, unknown>>;
  /** The run's signal: aborted by `session.abort()`, the caller's signal or a breach. */
  readonly signal: AbortSignal;
  /** The request history: the session's messages before this run's input. The strategy pushes to it. */
  readonly history: Message[];
  /** The run's input as given to `session.run`. */
  readonly input: AgentInput;
  /** The run's input messages (redacted), already kept in the session's messages. */
  readonly inputMessages: readonly Message[];
  /** The run's `limits.maxToolRounds`. */
  readonly maxToolRounds: number;
  /** Always 1 for a custom strategy (`toolConcurrency` belongs to the single-shot options). */
  readonly toolConcurrency: number;
  /** Set it when a ceiling ends the run cleanly (e.g. `"turn_limit"`): `agent_finished` and the result carry it. */
  finishReason?: AgentFinishReason;
  /** Always undefined: durable runs do not take custom strategies here. */
  readonly restoredLoopState?: undefined;
  /**
   * Charges a turn (`maxTurns`) and builds the request: the system instruction, `history` (folded by
   * `toolResultFold`), `toolResults` as tool messages, then `nextInput` (`[]` = none). The run's tools
   * (narrowing, disclosure), metadata, `toolChoice` and redactor apply. `turn` names the turn for
   * folding and the provider events (default: the last `turn_started` the strategy emitted).
   */
  assemble(nextInput: AgentInput, toolResults?: readonly ToolResult[], turn?: number): Promise<ProviderRequest>;
  /** Charges one tool round (`maxToolRounds`) when `calls` is not empty. */
  chargeToolRound(calls: readonly ToolCallContent[]): void;
  /**
   * One provider turn with the run's retries, limits (attempts, bytes, tokens, cost), held output,
   * `provider_turn_*` and `message_started` / `message_delta` events and usage rows. A request not from
   * `assemble` is redacted here and charges its turn. The strategy keeps the assistant message
   * (`history.push`, `appendMessage`) and emits `message_finished` / `turn_finished` itself.
   */
  generate(request: ProviderRequest): Promise<ProviderTurnResult>;
  /** Dispatches one call through the run's dispatcher (validation, guardrails, policy, effects, budgets); charges `maxToolCalls`. */
  dispatchToolCall(call: ToolCallContent): Promise<ToolResult>;
  /** Whether the call's tool is `exclusive`. */
  isToolCallExclusive(call: ToolCallContent): boolean;
  /** Keeps `message` (redacted) in the session's messages: what `session.messages()` and the next run see. */
  appendMessage(message: Message): Promise<void>;
  /** Sends an event to the session's subscribers and the run ledger; a `turn_started` sets the current turn. */
  emit(event: AgentEvent | { type: string; sessionId?: string; runId?: string; [key: string]: unknown }): void;
}

/**
 * A custom loop strategy, as `@arnilo/prism`'s `AgentLoopStrategy`: `loop: { name, run }` on
 * `createAgent` or `session.run` (the run's wins) replaces the built-in loop. `run` answers the
 * usage to report when no provider turn reported any. A strategy is refused on durable runs
 * (without `snapshot`/`restore`: `AgentLoopStateError` `ERR_PRISM_LOOP_NOT_DURABLE`).
 */
export interface AgentLoopStrategy {
  readonly name: string;
  readonly revision?: string;
  run(ctx: LoopContext): Promise<Usage | undefined>;
  snapshot?(): unknown;
  restore?(snapshot: unknown): void;
}

/** A durable run and its loop strategy do not fit. */
export declare class AgentLoopStateError extends Error {
  constructor(code: "ERR_PRISM_LOOP_NOT_DURABLE" | "ERR_PRISM_LOOP_SNAPSHOT" | "ERR_PRISM_LOOP_REVISION", message: string, options?: { cause?: unknown });
  readonly name: "AgentLoopStateError";
  readonly code: "ERR_PRISM_LOOP_NOT_DURABLE" | "ERR_PRISM_LOOP_SNAPSHOT" | "ERR_PRISM_LOOP_REVISION";
}

/** `@arnilo/prism`'s run budget (docs/agent.md "The run budget"): safe integers from 1 to the hard cap. */
export interface RunLimits {
  /** Provider turns: default 16, hard cap 64. */
  maxTurns?: number;
  /** Provider attempts, retries included: default 24, hard cap 256. */
  maxProviderAttempts?: number;
  /** Rounds of calls; reaching it ends the run `turn_limit`: default 8, hard cap 64. */
  maxToolRounds?: number;
  /** Dispatched calls: default 32, hard cap 256. */
  maxToolCalls?: number;
  /** Default 120 000, hard cap 1 800 000. */
  maxWallTimeMs?: number;
  /** JSON bytes of each request: default 8 MiB, hard cap 64 MiB. */
  maxRequestBytes?: number;
  /** JSON bytes of each provider event: default 8 MiB, hard cap 64 MiB. */
  maxResponseBytes?: number;
  /** Default 40 000, hard cap 1 000 000. */
  maxInputTokens?: number;
  /** Default 10 000, hard cap 250 000. */
  maxOutputTokens?: number;
  /** Default 50 000, hard cap 1 000 000. */
  maxTotalTokens?: number;
  /** No default; `amount` from 0 through 10 000. A turn without `cost` or in another currency breaches it. */
  maxCost?: { amount: number; currency: string };
}

export type RunLimitName = keyof RunLimits;

/** What `run_limit_exceeded` and a failed result's `limit` carry. */
export interface RunLimitBreach {
  limit: RunLimitName;
  maximum: number;
  observed: number;
  currency?: string;
}

/** Every integer limit of a run, and `maxCost` when one is set: what `resolveRunLimits` answers. */
export type ResolvedRunLimits = Readonly<Required<Omit<RunLimits, "maxCost">> & Pick<RunLimits, "maxCost">>;

/** Upstream's defaults: 16 turns, 24 attempts, 8 rounds, 32 calls, 120 s, 8 MiB each way, 40 000 / 10 000 / 50 000 tokens. */
export declare const DEFAULT_RUN_LIMITS: Readonly<Required<Omit<RunLimits, "maxCost">>>;
/** The highest value each limit accepts. */
export declare const HARD_RUN_LIMITS: Readonly<Required<Omit<RunLimits, "maxCost">>>;
/** The highest `maxCost.amount` (10 000). */
export declare const HARD_MAX_RUN_COST: number;

/** A run went over one of its limits (`code` `ERR_PRISM_RUN_LIMIT`); `breach` says which. */
export declare class RunLimitError extends Error {
  constructor(breach: RunLimitBreach);
  readonly name: "RunLimitError";
  readonly code: "ERR_PRISM_RUN_LIMIT";
  readonly breach: RunLimitBreach;
}

/** What a tracker has counted. */
export interface RunLimitCounters {
  turns: number;
  providerAttempts: number;
  toolRounds: number;
  toolCalls: number;
  wallTimeMs: number;
  requestBytes: number;
  responseBytes: number;
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  cost: number;
}

export interface RunLimitTrackerOptions {
  /** Called once, with the first breach. */
  onExceeded?: (breach: RunLimitBreach) => void;
  /** Counters to start from (a resumed run); each finite and non-negative, integers but `cost`. */
  snapshot?: Partial<RunLimitCounters>;
  /** The wall-clock deadline (ISO time) instead of now + `maxWallTimeMs`. */
  deadlineAt?: string;
}

/**
 * Counts a run against its limits. `charge` and `recordUsage` throw `RunLimitError` past a limit;
 * the wall clock is a timer that reports its breach to `onExceeded` (call `dispose()` when done).
 */
export declare class RunLimitTracker {
  constructor(limits: ResolvedRunLimits, options?: RunLimitTrackerOptions);
  readonly limits: ResolvedRunLimits;
  /** ISO time. */
  readonly deadlineAt: string;
  /** The first breach, once there is one. */
  readonly breach: RunLimitBreach | undefined;
  snapshot(): RunLimitCounters;
  dispose(): void;
  charge(limit: Exclude<RunLimitName, "maxCost">, delta?: number): void;
  /** One provider turn's usage: tokens always, cost when `maxCost` is set (missing or other-currency cost breaches it). */
  recordUsage(usage: Usage | undefined): void;
}

/**
 * The agent's limits narrowed by the run's (a run can only lower an agent's limit), defaults for the
 * rest. A value that is not a safe integer from 1 to its hard cap, a bad `maxCost`, or two
 * `maxCost` currencies throw a TypeError (code `invalid_run_limits`, upstream's message).
 */
export declare function resolveRunLimits(agent?: RunLimits, run?: RunLimits): ResolvedRunLimits;
/** `new RunLimitTracker(resolveRunLimits(undefined, limits), options)`. */
export declare function createRunLimitTracker(limits: RunLimits | undefined, options?: RunLimitTrackerOptions): RunLimitTracker;

/** This package's tool output budget (docs/agent.md): 64 bytes to 64 MiB. */
export interface ToolOutputBudget {
  maxBytes: number;
}

/** `@arnilo/prism`'s `toolResultFold`: off without `summarize`. */
export interface ToolResultFoldOptions {
  /** Default 2, from 1 to 1024. */
  minAgeTurns?: number;
  /** Default 4096, from 1 to 32 MiB. */
  minBytes?: number;
  /** Default 512, from 1 to 4096. */
  maxSummaryBytes?: number;
  summarize: (input: ToolResultFoldInput) => string | Promise<string>;
}

/** What `summarize` is given: the result's text (its value or error as JSON, then its text blocks). */
export interface ToolResultFoldInput {
  readonly sessionId: string;
  readonly runId: string;
  /** The turn the result answered. */
  readonly turn: number;
  readonly toolCallId: string;
  readonly toolName: string;
  /** Redacted in an agent run (its secrets, then its redactor). */
  readonly text: string;
  /** The run's signal: the run stops waiting for the summary when it aborts. */
  readonly signal?: AbortSignal;
}

export interface ResolvedToolResultFoldOptions {
  readonly minAgeTurns: number;
  readonly minBytes: number;
  readonly maxSummaryBytes: number;
  readonly summarize: (input: ToolResultFoldInput) => string | Promise<string>;
}

export interface FoldToolResultsContext {
  readonly sessionId: string;
  readonly runId: string;
  /** The turn of the request being built. */
  readonly turn: number;
  readonly signal?: AbortSignal;
  /** Redaction the summarizer's input and answer pass (the answer before its cap). */
  readonly redact?: (value: unknown) => unknown;
}

export declare const DEFAULT_TOOL_RESULT_FOLD_MIN_AGE_TURNS: number;
export declare const DEFAULT_TOOL_RESULT_FOLD_MIN_BYTES: number;
export declare const DEFAULT_TOOL_RESULT_FOLD_MAX_SUMMARY_BYTES: number;
export declare const HARD_TOOL_RESULT_FOLD_MAX_SUMMARY_BYTES: number;
/** The message metadata key that stamps the turn a tool message answered. */
export declare const TOOL_RESULT_FOLD_TURN_METADATA_KEY: "prismToolResultTurn";

/**
 * The run's options, else the agent's; undefined (folding off) without `summarize`. Out-of-range
 * values throw a TypeError (code `invalid_tool_result_fold`).
 */
export declare function resolveToolResultFold(run?: ToolResultFoldOptions | false, agent?: ToolResultFoldOptions | false): ResolvedToolResultFoldOptions | undefined;
/** The history as the provider sees it: tool results at least `minAgeTurns` old and `minBytes` long replaced by their summary. `history` is not changed. */
export declare function foldToolResultHistory(history: readonly Message[], options: ResolvedToolResultFoldOptions, context: FoldToolResultsContext): Promise<readonly Message[]>;
/** In-flight results folded the same way (their turn is the context's). */
export declare function foldToolResults(results: readonly ToolResult[], options: ResolvedToolResultFoldOptions, context: FoldToolResultsContext): Promise<readonly ToolResult[]>;
/** `Tool result <name> [<id>]: <summary>`: what a folded result's value becomes. */
export declare function foldedToolResultHeader(toolName: string, toolCallId: string, summary: string): string;
export declare function formatFoldedToolResult(summary: string): string;

/**
 * `auto` (the model decides), `none` (no tool call), `required` (some tool), or one named tool,
 * which must be active on the turn (else the run fails before the request, `ERR_PRISM_INVALID_OPTION`).
 * `required` and a named tool hold until the run's first tool round; later turns send no choice.
 */
export type ToolChoice = "auto" | "none" | "required" | { type: "tool"; name: string };

export interface AgentConfig {
  id?: string;
  name?: string;
  model: ModelConfig;
  /** Optional: without it, `providerSource(model)` resolves one when a run starts (else `Unknown provider`). */
  provider?: AIProvider;
  providerSource?: (model: any) => AIProvider | undefined;
  tools?: ToolRegistry | readonly ToolDefinition<any>[];
  instructions?: string;
  permission?: PermissionPolicyLike;
  trust?: unknown;
  /** Default: the package's JSON Schema validator over each tool's `parameters`; `false` turns validation off. */
  validator?: ToolValidator | false;
  /** Bounds each tool result the model sees; a tool's own `outputBudget` wins. */
  toolOutputBudget?: ToolOutputBudget | false;
  toolResultFold?: ToolResultFoldOptions | false;
  redactor?: SecretRedactor;
  secrets?: readonly string[];
  middleware?: unknown;
  /** The `toolInput` / `toolOutput` stages; non-empty `input` / `output` stages are refused. */
  guardrails?: GuardrailOptions;
  runLedger?: RunLedger;
  effectStore?: ToolEffectStore;
  ownership?: OwnershipScope;
  identity?: AgentIdentity;
  toolsDisclosure?: "all" | "search";
  toolsSearch?: ToolsSearchOptions;
  toolNarrowing?: ToolNarrowing;
  /** Lets the model call granted tools hidden by narrowing (default false: `tool_denied`). */
  allowHiddenToolCalls?: boolean;
  /** The deadline of each tool call without the tool's own `timeoutMs` (types/harness.d.ts); the run's wins. */
  toolTimeoutMs?: number;
  /** Loop options, or a custom strategy `{ name, run(ctx) }` (docs/agent.md "Custom loop strategies"). */
  loop?: LoopOptions | AgentLoopStrategy;
  limits?: RunLimits;
  metadata?: Record<string, unknown>;
  /** Durable runs and approval pauses (types/approval.d.ts); run options win. */
  runState?: import("./approval").AgentRunStateOptions | false;
  // `@arnilo/prism` options this package refuses (TypeError, code `unsupported_agent_option`): see
  // docs/agent.md "Upstream options". `false` is accepted as "disabled".
  store?: never | false;
  skills?: never | false;
  compaction?: never | false;
  /** Retry a provider turn that failed before any output (docs/agent.md "Retry"); see lib/retry.js. */
  retry?: RetryOptions | false;
  /** Whether and which tool the model must call (docs/agent.md "Tool choice"); the run's wins. */
  toolChoice?: ToolChoice;
  systemPrompt?: never | false;
}

export interface RunOptions {
  /** Allow-list of registered names: omitted = all, `[]` = none, unknown → `Unknown run tool: <names>`. */
  toolNames?: readonly string[];
  toolNarrowing?: ToolNarrowing;
  toolsDisclosure?: "all" | "search";
  toolsSearch?: ToolsSearchOptions;
  allowHiddenToolCalls?: boolean;
  /** Replaces the agent's `toolTimeoutMs` for this run. */
  toolTimeoutMs?: number;
  /** Replaces the agent's `validator` for this run; `false` turns validation off. */
  validate?: ToolValidator | false;
  toolResultFold?: ToolResultFoldOptions | false;
  /** Loop options, or a custom strategy `{ name, run(ctx) }` (docs/agent.md "Custom loop strategies"). */
  loop?: LoopOptions | AgentLoopStrategy;
  limits?: RunLimits;
  signal?: AbortSignal;
  metadata?: Record<string, unknown>;
  model?: ModelConfig;
  providerSource?: (model: any) => AIProvider | undefined;
  redactor?: SecretRedactor;
  runLedger?: RunLedger;
  effectStore?: ToolEffectStore;
  ownership?: OwnershipScope;
  identity?: AgentIdentity;
  /** Concatenated after the agent's guardrails. */
  guardrails?: GuardrailOptions;
  /** Durable runs and approval pauses (types/approval.d.ts). */
  runState?: import("./approval").AgentRunStateOptions | false;
  /** Merged over the agent's `retry` (the run's fields win); `false` turns it off for this run. */
  retry?: RetryOptions | false;
  /** Replaces the agent's `toolChoice` for this run. */
  toolChoice?: ToolChoice;
  /** Removed in `@arnilo/prism` 0.1.5: throws a TypeError. Use `limits.maxToolRounds`. */
  maxToolRounds?: never;
}

/** What a retry policy decides from: the failed attempt (1-based) and its redacted error. */
export interface RetryContext {
  readonly sessionId: string;
  readonly runId: string;
  readonly attempt: number;
  readonly error: ErrorInfo;
  readonly metadata?: Readonly<Record<string, unknown>>;
  readonly signal?: AbortSignal;
}
export interface RetryDecision {
  readonly retry: boolean;
  readonly delayMs?: number;
  readonly metadata?: Readonly<Record<string, unknown>>;
}
export interface RetryPolicy {
  readonly name: string;
  decide(context: RetryContext): Promise<RetryDecision> | RetryDecision;
  readonly metadata?: Readonly<Record<string, unknown>>;
}
/** `@arnilo/prism`'s `RetryOptions`. Defaults: 3 attempts, 100 ms base, 1 000 ms cap, ±25 % jitter. */
export interface RetryOptions {
  readonly policy?: RetryPolicy;
  readonly maxAttempts?: number;
  readonly baseDelayMs?: number;
  readonly maxDelayMs?: number;
  readonly jitter?: number;
  readonly random?: () => number;
  readonly transientCodes?: readonly (string | number)[];
  /** Exact strings removed from retry errors and `retry_scheduled` events. */
  readonly secrets?: readonly (string | undefined)[];
  readonly metadata?: Readonly<Record<string, unknown>>;
}
export interface DefaultRetryPolicyOptions extends Omit<RetryOptions, "policy" | "secrets" | "metadata"> {
  readonly name?: string;
}
export declare function createDefaultRetryPolicy(options?: DefaultRetryPolicyOptions): RetryPolicy;
export declare function isTransientErrorInfo(error: ErrorInfo, transientCodes?: ReadonlySet<string | number>): boolean;
/** Waits `decision.delayMs`; rejects with the signal's reason when it aborts first. */
export declare function waitForRetry(decision: RetryDecision, signal?: AbortSignal): Promise<void>;

export interface SubscribeOptions {
  /** Queue bound: default 1 024. */
  maxQueuedEvents?: number;
  /** Past the bound: `"close"` (default: one `event_subscriber_overflow` event, then the end), `"drop_oldest"`, `"drop_newest"`. */
  overflow?: "close" | "drop_oldest" | "drop_newest";
}

export type StreamOptions = RunOptions & SubscribeOptions;

/** `suspended` / `denied`: durable runs only (types/approval.d.ts). */
export type AgentRunStatus = "succeeded" | "failed" | "aborted" | "suspended" | "denied";
/** `artifact_failed`: a `generate-validate-revise` run ended without an accepted artifact. */
export type AgentFinishReason = "stop" | "turn_limit" | "error" | "aborted" | "artifact_failed";

export interface AgentRunResult {
  sessionId: string;
  runId: string;
  status: AgentRunStatus;
  /** Text of the last assistant message. */
  text: string;
  content: ContentBlock[];
  message?: { id?: string; role: "assistant"; content: ContentBlock[] };
  /** Undefined when no turn reported usage. */
  usage?: Usage;
  finishReason: AgentFinishReason;
  /** A failed or aborted run's error; an artifact loop's `{ name: "ArtifactFailed", code, message }`. */
  error?: ErrorInfo;
  /** An aborted run's reason, as a string. */
  abortReason?: string;
  /** A run a limit stopped (status `failed`): the breach. */
  limit?: RunLimitBreach;
  /** A suspended (or denied) durable run: the redacted reason it waits for, with its pending decisions. */
  interruption?: import("./approval").AgentRunInterruption;
  /** A suspended (or denied) durable run: the public part of its checkpoint, with the `version` a resume expects. */
  runState?: import("./approval").AgentRunState;
  /** `generate-validate-revise` only: the accepted artifact (what `parser` returned). */
  artifact?: unknown;
  /** `generate-validate-revise` only: revision requests made. */
  revisions?: number;
  /** `generate-validate-revise` only: tool rounds used (`toolCalls: "bounded"`). */
  toolRounds?: number;
}

/** Events of the `generate-validate-revise` loop, as `@arnilo/prism` names them. */
export type ArtifactLoopEvent =
  | { type: "artifact_validation_started"; sessionId: string; runId: string; turn: number; attempt: number }
  | { type: "artifact_validation_finished"; sessionId: string; runId: string; turn: number; attempt: number; result: ArtifactValidationResult }
  | { type: "artifact_revision_started"; sessionId: string; runId: string; turn: number; attempt: number; failure: ArtifactValidationResult }
  | { type: "artifact_finished"; sessionId: string; runId: string; turn: number; attempt: number; result: ArtifactValidationResult }
  | { type: "artifact_failed"; sessionId: string; runId: string; turn: number; attempt: number; result: ArtifactValidationResult };

/** The run's own events (besides the dispatch and artifact events). */
export type AgentLifecycleEvent =
  | { type: "agent_started"; sessionId: string; runId: string }
  | { type: "agent_finished"; sessionId: string; runId: string; usage?: Usage; finishReason?: "turn_limit" }
  | { type: "run_limit_exceeded"; sessionId: string; runId: string; breach: RunLimitBreach }
  /** Durable runs (types/approval.d.ts): the run stopped for approval, or resumed after a decision. */
  | { type: "agent_suspended"; sessionId: string; runId: string; interruption: import("./approval").AgentRunInterruption; version: number }
  | { type: "agent_resumed"; sessionId: string; runId: string; version: number }
  | { type: "turn_started"; sessionId: string; runId: string; turn: number; metadata: { tools: ToolsRequestMetadata } }
  | { type: "turn_finished"; sessionId: string; runId: string; turn: number }
  | { type: "provider_turn_started"; sessionId: string; runId: string; turn: number; metadata: { providerId: string; model: unknown; attempt: number; tools: ToolsRequestMetadata } }
  | { type: "retry_scheduled"; sessionId: string; runId: string; attempt: number; delayMs: number; error: ErrorInfo }
  | { type: "provider_turn_finished"; sessionId: string; runId: string; turn: number; metadata: { providerId: string; model: unknown; attempt: number; tools: ToolsRequestMetadata }; usage?: Usage; error?: ErrorInfo }
  | { type: "message_started"; sessionId: string; runId: string; message: Message }
  | { type: "message_delta"; sessionId: string; runId: string; content: ContentBlock }
  | { type: "message_finished"; sessionId: string; runId: string; message: Message }
  | { type: "tool_narrowing_clamped"; sessionId: string; runId: string; turn: number; dropped: string[] }
  | { type: "event_subscriber_overflow"; sessionId: string; droppedEvents: number; maxQueuedEvents: number; overflow: "close" | "drop_oldest" | "drop_newest" }
  | { type: "error"; sessionId: string; runId: string; error: ErrorInfo };

/** What `session.state()` returns and `createSession({ state })` resumes from (JSON-serializable). */
export interface AgentSessionState {
  /** The last run's grant (absent: every registered tool). A resumed session never widens it. */
  toolNames?: string[];
  /** Names activated by `search_tools`, newest last, at most 128. */
  activatedToolNames: string[];
}

/** `session.subscribe()`: the session's events; ends when the run it observes ends. */
export interface AgentEventSubscription extends AsyncIterableIterator<AgentEvent> {
  return(): Promise<IteratorResult<AgentEvent>>;
}

/**
 * What `session.stream()` returns: the run's events (an async generator, as `@arnilo/prism` has it)
 * and `textStream`. Both read the one run: a reader starts at its first `next()` and sees every event
 * from then on; the run is cancelled only when every started reader has stopped early.
 */
export interface AgentEventStream extends AsyncGenerator<AgentEvent, void, undefined> {
  /**
   * The text of the run's assistant messages as it arrives: the `text` of each `message_delta` whose
   * content is a text block, across every turn, redacted as the events are. A failed or aborted run
   * throws its `AgentRunError` after the last text.
   */
  readonly textStream: AsyncGenerator<string, void, undefined>;
}

export interface AgentSession {
  readonly id: string;
  /** Resolves a succeeded run; a failed or aborted one rejects with `AgentRunError<AgentRunResult>`. */
  run(input: string | readonly unknown[] | Message, options?: RunOptions): Promise<AgentRunResult>;
  /**
   * One run's events, `agent_started` to `agent_finished`; a failed run throws `AgentRunError` after its `error` event.
   * The result's `textStream` is the run's text as it arrives.
   */
  stream(input: string | readonly unknown[] | Message, options?: StreamOptions): AgentEventStream;
  subscribe(options?: SubscribeOptions): AgentEventSubscription;
  abort(reason?: unknown): void;
  messages(): Message[];
  state(): AgentSessionState;
  clearActivatedTools(): void;
}

export interface AgentSessionOptions {
  id?: string;
  /** Merged into every request's metadata, between the agent's and the run's. */
  metadata?: Record<string, unknown>;
  state?: Partial<AgentSessionState>;
}

export interface Agent {
  readonly config: AgentConfig;
  createSession(options?: AgentSessionOptions): AgentSession;
}

export declare function createAgent(config: AgentConfig): Agent;
/** What `agent.createSession(options)` calls. */
export declare function createAgentSession(config: AgentSessionOptions & { agent: Agent }): AgentSession;

/** `@arnilo/prism`'s redaction entry points: the value through `redactor`, or unchanged without one. Field policies are refused. */
export declare function redactAgentEvent<T>(event: T, redactor?: SecretRedactor): T;
/** A request's `signal` stays the live `AbortSignal`. */
export declare function redactProviderRequest<T>(request: T, redactor?: SecretRedactor): T;
export declare function redactMessage<T>(message: T, redactor?: SecretRedactor): T;
export declare function redactSessionEntry<T>(entry: T, redactor?: SecretRedactor): T;

/**
 * `{ defaultMaxToolRounds: 8, maxToolRounds: 64, maxToolConcurrency: 64, maxGrantNames: 1024,
 * defaultMaxRevisions: 2, maxRevisions: 16 }`.
 */
export declare const AGENT_RUN_LIMITS: Readonly<{
  defaultMaxToolRounds: number;
  maxToolRounds: number;
  maxToolConcurrency: number;
  maxGrantNames: number;
  defaultMaxRevisions: number;
  maxRevisions: number;
}>;
