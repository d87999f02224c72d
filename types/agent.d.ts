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

export interface ProviderRequest {
  model: unknown;
  /** `system` (`System instruction:\n` + the agent's instructions) first, then the session transcript. */
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
  summarize: (input: { sessionId: string; runId: string; turn: number; toolCallId: string; toolName: string; text: string }) => string | Promise<string>;
}

/**
 * `auto` (the model decides), `none` (no tool call), `required` (some tool), or one named tool,
 * which must be active on the turn (else the run fails before the request, `ERR_PRISM_INVALID_OPTION`).
 * `required` and a named tool hold until the run's first tool round; later turns send no choice.
 */
export type ToolChoice = "auto" | "none" | "required" | { type: "tool"; name: string };

export interface AgentConfig {
  id?: string;
  name?: string;
  model: unknown;
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
  loop?: LoopOptions;
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
  /** Replaces the agent's `validator` for this run; `false` turns validation off. */
  validate?: ToolValidator | false;
  toolResultFold?: ToolResultFoldOptions | false;
  loop?: LoopOptions;
  limits?: RunLimits;
  signal?: AbortSignal;
  metadata?: Record<string, unknown>;
  model?: unknown;
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
