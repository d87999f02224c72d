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

/** Token counts as the provider reports them; numeric fields are summed over a run's turns. */
export interface Usage {
  inputTokens?: number;
  outputTokens?: number;
  totalTokens?: number;
  [key: string]: number | undefined;
}

/** A `tool` message's content: the dispatch result of one call. */
export interface ToolResultContent {
  type: "tool_result";
  toolCallId: string;
  name: string;
  content?: unknown;
  value?: unknown;
  error?: ErrorInfo;
  metadata?: Record<string, unknown>;
}

export type Message =
  | { role: "system"; content: TextContent[] }
  | { role: "user"; content: Array<TextContent | { type: string; [key: string]: unknown }> }
  | { role: "assistant"; content: Array<TextContent | ToolCallContent> }
  | { role: "tool"; toolCallId: string; name: string; content: [ToolResultContent] };

/** `{ count, idsHash }`: how many tools a provider request carries and a hash of their names in order. */
export interface ToolsRequestMetadata {
  count: number;
  /** `sha256:` + hex SHA-256 of the names in request order, each followed by `\n`. */
  idsHash: string;
}

export interface ProviderRequest {
  model: unknown;
  /** `system` (the agent's instructions) first, then the session transcript. */
  messages: Message[];
  /** The tools disclosed this turn, in run order: the very `ToolDefinition`s. */
  tools: ToolDefinition<any>[];
  signal: AbortSignal;
  metadata: { tools: ToolsRequestMetadata; [key: string]: unknown };
}

export type ProviderEvent =
  | { type: "message_start"; [key: string]: unknown }
  | { type: "content_delta"; content: TextContent | { type: string; [key: string]: unknown } }
  | { type: "tool_call_delta"; index: number; id?: string; name?: string; argumentsText?: string }
  | { type: "tool_call"; call: ToolCallContent }
  | { type: "usage"; usage: Usage }
  | { type: "done"; usage?: Usage; stopReason?: string }
  | { type: "error"; error: ErrorInfo };

export interface AIProvider {
  id: string;
  generate(request: ProviderRequest): AsyncIterable<ProviderEvent>;
}

export declare function providerTextDelta(text: string): ProviderEvent;
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

/**
 * A validator's answer: `undefined` / `true` accept the artifact; a message, `{ message }` or `false`
 * reject it (the message goes back to the model in a revision request).
 */
export type ArtifactValidation = void | undefined | boolean | string | { message?: string };

/**
 * `generate-validate-revise`: every provider response is a candidate artifact. `parser(text)` turns
 * its text into the artifact (a throw makes the candidate invalid; default: the text itself), then
 * `validator(artifact)` accepts or rejects it; a rejection asks the model for a revision.
 */
export interface ArtifactLoopOptions<A = unknown> {
  strategy: "generate-validate-revise";
  parser?: (text: string) => A | Promise<A>;
  validator?: (artifact: A) => ArtifactValidation | Promise<ArtifactValidation>;
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

export interface RunLimits {
  /** Provider turns whose calls are executed: default 8, hard cap 64. */
  maxToolRounds?: number;
  /** Provider turns: default and cap `maxToolRounds + 1`. */
  maxTurns?: number;
}

export interface AgentConfig {
  model: unknown;
  provider: AIProvider;
  tools?: ToolRegistry | readonly ToolDefinition<any>[];
  instructions?: string;
  permission?: PermissionPolicyLike;
  trust?: unknown;
  validator?: ToolValidator;
  redactor?: SecretRedactor;
  secrets?: readonly string[];
  middleware?: unknown;
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
}

export interface RunOptions {
  /** Allow-list of registered names: omitted = all, `[]` = none, unknown → `Unknown run tool: <names>`. */
  toolNames?: readonly string[];
  toolNarrowing?: ToolNarrowing;
  toolsDisclosure?: "all" | "search";
  toolsSearch?: ToolsSearchOptions;
  allowHiddenToolCalls?: boolean;
  validate?: ToolValidator;
  loop?: LoopOptions;
  limits?: RunLimits;
  signal?: AbortSignal;
  metadata?: Record<string, unknown>;
}

export type AgentRunStatus = "succeeded" | "failed" | "aborted";
/** `artifact_failed`: a `generate-validate-revise` run ended on `max_revisions` or `tool_round_limit`. */
export type AgentFinishReason = "stop" | "turn_limit" | "error" | "aborted" | "artifact_failed";

export interface AgentRunResult {
  sessionId: string;
  runId: string;
  status: AgentRunStatus;
  /** Text of the last assistant message. */
  text: string;
  content: Array<TextContent | ToolCallContent>;
  message?: { role: "assistant"; content: Array<TextContent | ToolCallContent> };
  usage: Usage;
  finishReason: AgentFinishReason;
  /** On an `artifact_failed` run: `{ name: "ArtifactFailedError", code: "max_revisions" | "tool_round_limit", message }`. */
  error?: ErrorInfo;
  /** `generate-validate-revise` only: the accepted artifact (what `parser` returned). */
  artifact?: unknown;
  /** `generate-validate-revise` only: revision requests made. */
  revisions?: number;
  /** `generate-validate-revise` only: tool rounds used (`toolCalls: "bounded"`). */
  toolRounds?: number;
}

/** Events of the `generate-validate-revise` loop (besides the run's other events). */
export type ArtifactLoopEvent =
  | { type: "artifact_accepted"; sessionId: string; runId: string; turn: number; artifact: unknown; metadata: { revisions: number; toolRounds: number } }
  | {
      type: "artifact_rejected";
      sessionId: string;
      runId: string;
      turn: number;
      metadata: { reason: "parse_error" | "validation_failed"; message: string; revision: number };
    }
  | {
      type: "artifact_failed";
      sessionId: string;
      runId: string;
      turn: number;
      error: ErrorInfo;
      metadata: {
        reason: "max_revisions" | "tool_round_limit" | "validator_error";
        revisions: number;
        toolRounds: number;
        rejection?: { reason: "parse_error" | "validation_failed"; message: string };
      };
    };

/** What `session.state()` returns and `createSession({ state })` resumes from (JSON-serializable). */
export interface AgentSessionState {
  /** The last run's grant (absent: every registered tool). A resumed session never widens it. */
  toolNames?: string[];
  /** Names activated by `search_tools`, newest last, at most 128. */
  activatedToolNames: string[];
}

export interface AgentRunStream extends AsyncIterable<AgentEvent> {
  /** Settles when the run ends. */
  result: Promise<void>;
}

export interface AgentSession {
  readonly id: string;
  run(input: string | readonly unknown[], options?: RunOptions): Promise<AgentRunResult>;
  /** The run's events; the last is `run_finished`, `run_failed` or `run_aborted` with the `result`. */
  stream(input: string | readonly unknown[], options?: RunOptions): AgentRunStream;
  abort(reason?: unknown): void;
  messages(): Message[];
  state(): AgentSessionState;
  clearActivatedTools(): void;
}

export interface Agent {
  readonly config: AgentConfig;
  createSession(options?: { id?: string; state?: Partial<AgentSessionState> }): AgentSession;
}

export declare function createAgent(config: AgentConfig): Agent;

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
