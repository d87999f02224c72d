// Types of the tool harness: tools, registries, filters, dispatch, events, ledger rows, redaction.
// Shapes follow @arnilo/prism's tool API so code written against it type-checks unchanged.

import type { AgentIdentity, OwnershipScope, ToolEffectClassifier, ToolEffectDeclaration, ToolEffectStore } from "./effects";
import type { RunLedger, RunLedgerRecord } from "./ledger";

/** A JSON value. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** A plain object (prototype `Object.prototype` or `null`) with JSON values. */
export interface JsonObject {
  [key: string]: JsonValue | undefined;
}

/** A serialisable description of an error. */
export interface ErrorInfo {
  name?: string;
  message: string;
  code?: string | number;
  retryAfterMs?: number;
  cause?: string;
}




/** The context a tool runs with. */
export interface ToolExecutionContext {
  sessionId: string;
  runId: string;
  toolCallId: string;
  signal?: AbortSignal;
  metadata?: Record<string, unknown>;
  identity?: AgentIdentity;
  /** Set by the effect machinery only; a caller-supplied key never reaches the tool. */
  idempotencyKey?: string;
  progress?(progress?: unknown, metadata?: Record<string, unknown>): void;
}

/** The context given to a dispatch (its `toolCallId` is replaced by the call's id). */
export type DispatchContext = Omit<ToolExecutionContext, "toolCallId"> & { toolCallId?: string };

/** An image a tool returns (`@arnilo/prism`'s ImageContent): base64 `data` or a `url`. */
export interface ImageContent {
  type: "image";
  mimeType?: string;
  data?: string;
  url?: string;
  resourceUri?: string;
  name?: string;
  metadata?: Record<string, unknown>;
}

/** Audio, a file or a document a tool returns (`@arnilo/prism`'s AudioContent, FileContent, DocumentContent). */
export interface MediaContent {
  type: "audio" | "file" | "document";
  mediaType: string;
  /** Base64-encoded bytes. */
  data?: string;
  url?: string;
  resourceUri?: string;
  name?: string;
  metadata?: Record<string, unknown>;
}

/** MCP's resource link: where something is, not its bytes. */
export interface ResourceLinkContent {
  type: "resource_link";
  uri: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  size?: number;
}

/** The content blocks a tool result may carry beside its `value` (docs/providers.md "Rich tool results"). */
export type ToolResultContentBlock = { type: "text"; text: string } | ImageContent | MediaContent | ResourceLinkContent;

/**
 * What events and ledger rows hold in place of a media block: its kind, media type, name, byte
 * length and SHA-256 — never its bytes.
 */
export interface MediaContentDescriptor {
  type: "image" | "audio" | "file" | "document";
  mimeType?: string;
  mediaType?: string;
  name?: string;
  url?: string;
  resourceUri?: string;
  bytes?: number;
  sha256?: string;
  omitted: true;
}

/** What a tool returns. */
export interface ToolResult {
  toolCallId: string;
  name: string;
  /**
   * Content blocks beside `value`: text, images, audio, files, documents and resource links
   * (`ToolResultContentBlock`); other blocks pass through as given.
   */
  content?: readonly ToolResultContentBlock[] | readonly { type: string; [key: string]: unknown }[] | unknown;
  value?: unknown;
  error?: ErrorInfo;
  metadata?: Record<string, unknown>;
}

/** A tool the host owns. */
/** MCP's tool annotations: hints for a client, never enforced. */
export interface ToolAnnotations {
  title?: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
  [key: string]: unknown;
}

export interface ToolDefinition<Args extends JsonObject = JsonObject> {
  name: string;
  kind?: string;
  description?: string;
  /** JSON Schema of the arguments; stored as given, never copied or rewritten. */
  parameters?: JsonObject;
  /** A human-readable name; served as MCP's `title`. */
  title?: string;
  /**
   * JSON Schema of the result's `value` (its structured content, MCP's `structuredContent`). Dispatch
   * checks a successful result's `value` against it: a mismatch, or no `value`, makes the result an
   * error `ToolResultError` with code `ERR_PRISM_INVALID_OUTPUT` naming the path (docs/validation.md).
   * Served in MCP `tools/list` (there it must be `type: "object"`), the `value` going out as
   * `structuredContent` (docs/mcp.md).
   */
  outputSchema?: JsonObject;
  /** MCP tool annotations; served in `tools/list`, with `readOnlyHint` taken from a declared `effect`. */
  annotations?: ToolAnnotations;
  /**
   * Provider strict mode: sent as OpenAI's `function.strict` and Anthropic's `strict`. `parameters`
   * must be in the strict subset both accept (every object `additionalProperties: false`, every
   * property required, optional ones nullable; no bounds on strings or numbers): checked, never
   * rewritten, when the tool is registered (`ERR_PRISM_INVALID_TOOL` naming the keyword and its path).
   * docs/providers.md § Strict tools.
   */
  strict?: boolean;
  /**
   * Example arguments, each valid against `parameters` (checked at registration; at most 20, each at
   * most 16 KiB of JSON). Sent as Anthropic's `input_examples`; an OpenAI-compatible request reads
   * them at the end of the description (at most 2 KiB, whole examples only).
   */
  inputExamples?: readonly Args[];
  /**
   * Leave the tool out of the model's first view: sent with Anthropic's `defer_loading` and its tool
   * search; with other providers, disclosed by this package's `search_tools` once it finds it.
   * docs/agent.md § Deferred tools and tool caps.
   */
  deferLoading?: boolean;
  /** Forces a parallel turn that calls this tool to run sequentially. */
  exclusive?: boolean;
  /**
   * The most milliseconds `execute` may take (an integer from 1 to 2147483647; wins over the
   * dispatcher's `toolTimeoutMs`). At the deadline the tool's `ctx.signal` aborts with a
   * `TimeoutError` and the call ends blocked with reason `tool_timeout` (`ERR_PRISM_TOOL_TIMEOUT`),
   * whether or not the tool settles; a claimed effect is left `unknown` (docs/effects.md).
   */
  timeoutMs?: number;
  effect?: ToolEffectDeclaration | ToolEffectClassifier;
  /** Pause a durable run before this tool's side effect (`true`, or a predicate over the arguments); see types/approval.d.ts. */
  needsApproval?: boolean | ((args: Args, ctx: { toolCallId: string; toolName: string; sessionId: string; runId: string; metadata?: Record<string, unknown>; signal?: AbortSignal }) => boolean | Promise<boolean>);
  /**
   * Runs the tool. It may return a `ToolResult` or any other value (a "bare" result), directly or
   * in a promise. An object with any own key among `toolCallId`, `name`, `value`, `error` and
   * `content` is taken as a `ToolResult`, and an empty or missing `toolCallId` / `name` is filled
   * from the call. Anything else (a number, a string, an array, `null`, `undefined`, a domain
   * object) becomes `{ toolCallId: <the call's id>, name: <the tool's name>, value: <what it
   * returned> }`. So a result never goes to a provider with an empty `tool_call_id`. The agent loop
   * and `dispatchToolCall` both do this.
   */
  execute(args: Args, ctx: ToolExecutionContext): unknown;
}

/** A tool call as a provider produced it. */
export interface ToolCallContent {
  type: "tool_call";
  id: string;
  name: string;
  arguments: JsonObject;
  /** Set when the provider's argument text was not a JSON object; dispatch blocks the call. */
  argumentsError?: ErrorInfo;
  /** Provider-hosted calls are executed by the provider and never dispatched. */
  authority?: "host" | "provider-hosted";
}

/** Any object with this shape is a registry; `createToolRegistry` makes one over a JS `Map`. */
export interface ToolRegistry {
  /** Stores or replaces by `tool.name`; throws `Duplicate tool: <name>` in strict mode. */
  register(tool: ToolDefinition<any>): void;
  /** The very object registered, or `undefined`. */
  get(name: string): ToolDefinition<any> | undefined;
  /** The tool, or throws `Unknown tool: <name>`. */
  resolve(name: string): ToolDefinition<any>;
  /** Tools in insertion order (a replaced tool keeps its first position). */
  list(): readonly ToolDefinition<any>[];
}

export interface ToolRegistryOptions {
  /** `"replace"` (default) replaces in place; `"error"` throws `Duplicate tool: <name>`. */
  duplicate?: "replace" | "error";
}

/** Exact allow/deny names. Deny wins; an empty or missing allow means no restriction. */
export interface ToolFilter {
  allow?: readonly string[];
  deny?: readonly string[];
}

/** One filter or an ordered list (every non-empty allow must list the tool; any deny excludes it). */
export type ToolFilterInput = ToolFilter | readonly ToolFilter[];

/** Host validation: `undefined` passes; a message or an `ErrorInfo` blocks with `validation_failed`. */
export type ToolValidator = (
  tool: ToolDefinition<any>,
  args: JsonObject,
  ctx: DispatchContext,
) => void | undefined | string | ErrorInfo | Promise<void | undefined | string | ErrorInfo>;

export type BlockedReason =
  | "unknown_tool"
  | "tool_denied"
  | "invalid_arguments"
  | "permission_denied"
  | "validation_failed"
  | "execution_denied"
  | "guardrail_blocked"
  /** The tool did not settle within its `timeoutMs` (or the dispatcher's `toolTimeoutMs`). */
  | "tool_timeout";

/** `{ durationMs, status }` on finished, error and blocked events. */
export interface ToolEventMetadata {
  durationMs: number;
  status: "finished" | "error" | "blocked";
}

export interface ToolExecutionBlockedEvent {
  type: "tool_execution_blocked";
  sessionId: string;
  runId: string;
  /** The called tool's name (`call.name`), on every `tool_execution_*` event. */
  toolName: string;
  toolCallId: string;
  name: string;
  reason: BlockedReason;
  error: ErrorInfo;
  metadata: ToolEventMetadata;
}
export interface ToolExecutionStartedEvent {
  type: "tool_execution_started";
  sessionId: string;
  runId: string;
  /** The called tool's name (`call.name`), on every `tool_execution_*` event. */
  toolName: string;
  call: ToolCallContent;
}
export interface ToolExecutionProgressEvent {
  type: "tool_execution_progress";
  sessionId: string;
  runId: string;
  /** The called tool's name (`call.name`), on every `tool_execution_*` event. */
  toolName: string;
  toolCallId: string;
  name: string;
  progress: unknown;
  metadata: unknown;
}
export interface ToolExecutionFinishedEvent {
  type: "tool_execution_finished";
  sessionId: string;
  runId: string;
  /** The called tool's name (`call.name`), on every `tool_execution_*` event. */
  toolName: string;
  result: ToolResult;
  metadata: ToolEventMetadata;
}
export interface ToolExecutionErrorEvent {
  type: "tool_execution_error";
  sessionId: string;
  runId: string;
  /** The called tool's name (`call.name`), on every `tool_execution_*` event. */
  toolName: string;
  call: ToolCallContent;
  error: ErrorInfo;
  metadata: ToolEventMetadata;
}
export interface GuardrailDecisionEvent {
  type: "guardrail_decision";
  sessionId: string;
  runId: string;
  toolCallId: string;
  toolName: string;
  record: GuardrailDecisionRecord;
}

/** The events dispatch emits. */
export type ToolAgentEvent =
  | ToolExecutionBlockedEvent
  | ToolExecutionStartedEvent
  | ToolExecutionProgressEvent
  | ToolExecutionFinishedEvent
  | ToolExecutionErrorEvent
  | GuardrailDecisionEvent;

/** An `AgentEvent`: the tool events, and any other event a runtime emits. */
export type AgentEvent = ToolAgentEvent | { type: string; [key: string]: unknown };



export interface SecretRedactor {
  redact<T>(value: T): T;
}

/** Guardrail stages. */
export type GuardrailStage = "tool_input" | "tool_output";

export interface GuardrailContext {
  stage: GuardrailStage;
  /** The call (tool_input) or the raw result (tool_output). */
  value: unknown;
  sessionId: string;
  runId: string;
  toolCallId: string;
  toolName: string;
  metadata?: Record<string, unknown>;
  /** Aborted when an earlier guardrail already decided, or the caller's signal aborts. */
  signal: AbortSignal;
}

export interface GuardrailDecision {
  action: "allow" | "block" | "tripwire" | "interrupt";
  reason?: string;
  metadata?: Record<string, unknown>;
}

export interface Guardrail {
  name: string;
  stage?: GuardrailStage;
  /** Set by rule packs: a block then reads `Blocked by guardrail rule pack:<pack>/<rule>`. */
  pack?: string;
  rule?: string;
  evaluate(ctx: GuardrailContext): GuardrailDecision | Promise<GuardrailDecision>;
}

/** One decision, bounded (name 128 bytes, reason 4 KiB, metadata 16 KiB of JSON) and redacted. */
export interface GuardrailDecisionRecord {
  guardrail: string;
  stage: GuardrailStage;
  action: GuardrailDecision["action"];
  reason?: string;
  metadata?: unknown;
}

export interface GuardrailOptions {
  toolInput?: readonly Guardrail[];
  toolOutput?: readonly Guardrail[];
  /** How many guardrails of a stage run at once: a safe integer 1–16 (default 1). */
  maxConcurrency?: number;
}

// GuardrailError (the error a tripwire rejects dispatch with) is declared with the policy errors.

/** A permission policy: `{ allowed, reason? }` (or a boolean). A throw denies. */
export interface PermissionPolicyLike {
  check(request: {
    kind: "tool";
    action: "execute";
    target: string;
    metadata?: Record<string, unknown>;
  }): { allowed: boolean; reason?: string } | boolean | Promise<{ allowed: boolean; reason?: string } | boolean>;
}

/** A trust policy: `{ trusted, reason? }` (or a boolean). A throw denies. */
export interface TrustPolicyLike {
  check(request: {
    kind: "tool";
    target: string;
    capability: "execute";
    metadata?: Record<string, unknown>;
  }): { trusted: boolean; reason?: string } | boolean | Promise<{ trusted: boolean; reason?: string } | boolean>;
}

/** A middleware registry as dispatch uses it. */
export interface MiddlewareRunner {
  run(hook: string, value: unknown): Promise<unknown>;
}


export interface DispatchToolCallOptions {
  call: ToolCallContent;
  registry: ToolRegistry;
  /** The call's context; none (or null) dispatches with an empty one. */
  context?: DispatchContext | null;
  filter?: ToolFilterInput;
  middleware?: MiddlewareRunner;
  validate?: ToolValidator;
  beforeExecute?(call: ToolCallContent, tool: ToolDefinition<any>, ctx: DispatchContext): unknown;
  emit?(event: AgentEvent): void | Promise<void>;
  /** Known secret values redacted from errors, events and rows (items that are not strings are skipped). */
  secrets?: readonly (string | undefined)[];
  redactor?: SecretRedactor;
  ledger?: RunLedger;
  ownership?: OwnershipScope;
  identity?: AgentIdentity;
  trust?: TrustPolicyLike;
  permission?: PermissionPolicyLike;
  guardrails?: GuardrailOptions;
  /** Durable claims so a retry never repeats a side effect (see docs/effects.md). */
  effectStore?: ToolEffectStore;
  /** The deadline of every tool without its own `timeoutMs` (an integer from 1 to 2147483647 ms; none by default). */
  toolTimeoutMs?: number;
}

/** `createToolDispatcher`'s options: everything but the per-call `call` and `context`. */
export type ToolDispatcherOptions = Omit<DispatchToolCallOptions, "call" | "context">;

export interface ToolDispatcher {
  dispatch(call: ToolCallContent, context?: DispatchContext | null): Promise<ToolResult>;
}

export declare function createToolRegistry(
  tools?: readonly ToolDefinition<any>[],
  options?: ToolRegistryOptions,
): ToolRegistry;
export declare function filterTools<T extends { name: string }>(tools: readonly T[], filter?: ToolFilterInput): readonly T[];
export declare function dispatchToolCall(options: DispatchToolCallOptions): Promise<ToolResult>;
/** Same behaviour as `dispatchToolCall`, with the options read once. */
export declare function createToolDispatcher(options: ToolDispatcherOptions): ToolDispatcher;

/** Secrets lists: items that are not strings are skipped; none (or null) redacts nothing. */
export declare function redactSecrets<T>(value: T, secrets?: readonly (string | undefined)[] | null): T;
export declare function createSecretRedactor(secrets?: readonly (string | undefined)[] | null): SecretRedactor;
export declare function errorToErrorInfo(error: unknown, secrets?: readonly (string | undefined)[] | null): ErrorInfo;
export declare function redactRunLedgerRecord<T extends RunLedgerRecord>(record: T, redactor?: SecretRedactor): T;
