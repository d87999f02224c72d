// Human approval before side effects: durable runs on `@arnilo/prism`'s `runState` contract
// (docs/agent.md "Approval and durable runs").
import type { OwnershipScope, ToolEffectStore, AgentIdentity } from "./effects";
import type { RunLedger } from "./ledger";
import type { Agent, AgentRunResult, SubscribeOptions } from "./agent";
import type { AgentEvent, JsonValue, ToolValidator, SecretRedactor } from "./harness";

/** A checkpoint key; the ownership fields are part of its trust boundary. */
export interface CheckpointKey extends OwnershipScope {
  namespace: string;
  key: string;
  signal?: AbortSignal;
}

export interface CheckpointSaveInput extends CheckpointKey {
  /** The new version: a positive safe integer above the current one. */
  version: number;
  /** Compare-and-swap: the version the caller read (0 = absent). */
  expectedVersion?: number;
  fencingToken?: number;
  value: JsonValue;
  category?: string;
  metadata?: Record<string, JsonValue>;
}

export interface CheckpointRecord extends OwnershipScope {
  namespace: string;
  key: string;
  version: number;
  fencingToken?: number;
  value: JsonValue;
  category?: string;
  createdAt: string;
  updatedAt: string;
  metadata?: Record<string, JsonValue>;
}

export interface CheckpointQuery extends Partial<OwnershipScope> {
  namespace?: string;
  keyPrefix?: string;
  category?: string | readonly string[];
  limit?: number;
  cursor?: string;
  signal?: AbortSignal;
}

/** `@arnilo/prism`'s CheckpointStore; any object with these methods is one. */
export interface CheckpointStore {
  saveCheckpoint(input: CheckpointSaveInput): Promise<CheckpointRecord>;
  loadCheckpoint(input: CheckpointKey): Promise<CheckpointRecord | null>;
  listCheckpoints(query?: CheckpointQuery): Promise<{ items: CheckpointRecord[]; nextCursor?: string }>;
  deleteCheckpoint(input: CheckpointKey): Promise<boolean>;
}

export interface MemoryCheckpointStoreOptions {
  /** Records kept (default 10 000); the least recently saved are evicted. */
  maxRecords?: number;
  /** Largest JSON value in bytes (default 1 MiB): a larger save throws RangeError. */
  maxValueBytes?: number;
  /** Largest list page (default 500). */
  maxPageSize?: number;
}

export interface SqliteCheckpointStoreOptions extends MemoryCheckpointStoreOptions {
  /** The SQLite file (created when absent). */
  path: string;
  /** How long a writer waits for another process's lock (default 5 000 ms). */
  busyTimeoutMs?: number;
  /** `PRAGMA synchronous` (default `"full"`: a saved checkpoint survives power loss). */
  synchronous?: "full" | "normal";
}

export declare function createMemoryCheckpointStore(options?: MemoryCheckpointStoreOptions): CheckpointStore;
/**
 * A checkpoint store in a SQLite file, `(path, options?)` like the other SQLite factories. A bad path or
 * option throws TypeError / RangeError with `code: "ERR_PRISM_INVALID_OPTION"`.
 */
export declare function createSqliteCheckpointStore(path: string, options?: Omit<SqliteCheckpointStoreOptions, "path">): CheckpointStore & { close(): void };
/** The older form: the path inside the options. */
export declare function createSqliteCheckpointStore(options: SqliteCheckpointStoreOptions): CheckpointStore & { close(): void };

/** `runState` of `createAgent` / `session.run`. */
export interface AgentRunStateOptions {
  checkpoints: CheckpointStore;
  /** Host-authored revision of the agent's definition; a resume must name the same one. */
  definitionRevision: string;
  /** Pause before every tool call (default false: only tools with `needsApproval`). */
  interruptBeforeTool?: boolean;
  /** Pending decisions one suspension may hold (default 32, at most 128). */
  maxPendingDecisions?: number;
  /** Sticky decisions one run may hold (default 64, at most 256). */
  maxStickyDecisions?: number;
  fencingToken?: number;
}

export type ApprovalOutcome = "allow_once" | "allow_for_run" | "reject_once" | "reject_for_run";

/** Redacted match scope: never the raw arguments. */
export interface DecisionScope {
  toolName?: string;
  effectKind?: string;
  /** `tenant/kind/id` of the run's identity; never a credential. */
  identity?: string;
  /** SHA-256 hex of the canonical JSON arguments. */
  argumentsHash?: string;
}

export interface PendingDecision {
  approvalId: string;
  kind: "tool_approval";
  toolCallId?: string;
  scope: DecisionScope;
  reason: string;
}

export interface AgentRunInterruption {
  kind: "tool_approval";
  reason: string;
  toolCallId?: string;
  toolName?: string;
  pendingDecisions?: PendingDecision[];
}

/** The public part of a durable run's checkpoint. */
export interface AgentRunState {
  schemaVersion: 1;
  agentId: string;
  definitionRevision: string;
  fingerprint: string;
  runId: string;
  sessionId: string;
  model: JsonValue;
  status: "running" | "suspended" | "denied" | "succeeded" | "failed" | "aborted";
  interruption?: AgentRunInterruption;
  version: number;
}

export interface RunDecision {
  approvalId: string;
  outcome: ApprovalOutcome;
  /** At most 2 KB; a rejection's blocked result carries it. */
  reason?: string;
  /** Replaces the call's arguments; revalidated (schema, tool-input guardrails) before anything is written. At most 16 KB. */
  modifiedArguments?: { [key: string]: JsonValue };
}

export type AgentRunResume =
  | { expectedVersion: number; decision: "approve" | "deny"; decisions?: undefined }
  | { expectedVersion: number; decisions: readonly RunDecision[]; decision?: undefined };

export interface AgentRunResumeOptions {
  checkpoints: CheckpointStore;
  definitionRevision: string;
  ownership?: OwnershipScope;
  fencingToken?: number;
  maxPendingDecisions?: number;
  maxStickyDecisions?: number;
  /** Run options of the resumed run (the rest come from the agent's config). */
  signal?: AbortSignal;
  effectStore?: ToolEffectStore;
  identity?: AgentIdentity;
  runLedger?: RunLedger;
  metadata?: Record<string, unknown>;
  redactor?: SecretRedactor;
  validate?: ToolValidator;
  providerSource?: (model: any) => unknown;
}

export interface AgentRunRef {
  runId: string;
  sessionId?: string;
}

/** Resumes a suspended durable run; invalid input changes nothing (no write, no tool call, no event). */
export declare function resumeAgentRun(agent: Agent, ref: AgentRunRef, resume: AgentRunResume, options: AgentRunResumeOptions): Promise<AgentRunResult>;
/** The same resume as the resumed run's events. */
export declare function resumeAgentRunStream(agent: Agent, ref: AgentRunRef, resume: AgentRunResume, options: AgentRunResumeOptions & SubscribeOptions): AsyncGenerator<AgentRunResumeEvent>;
/** `lifecycle.status`'s answer: the run's public state and its checkpoint version. */
export interface AgentRunStatusResult {
  state: AgentRunState;
  version: number;
}

/** What `resolveAgent` answers for a stored run's agent id. */
export interface AgentRunLifecycleAgent {
  readonly agent: Agent;
  /** Current host-authored revision; it must match the stored revision. */
  readonly definitionRevision: string;
}

export interface AgentRunLifecycleOptions {
  readonly checkpoints: CheckpointStore;
  /** The agent of a stored run (called by `resume` / `resumeStream` after the run is loaded for its owner). */
  readonly resolveAgent: (input: {
    readonly agentId: string;
    readonly ownership?: OwnershipScope;
    readonly signal?: AbortSignal;
  }) => AgentRunLifecycleAgent | Promise<AgentRunLifecycleAgent>;
  /** Written with every checkpoint save of a resume; a save below the stored token is refused. A non-negative safe integer. */
  readonly fencingToken?: number;
}

export interface AgentRunLifecycleRequest {
  /** The caller's authorized owner: only the run's owner reads its status or resumes it. */
  readonly ownership?: OwnershipScope;
  readonly signal?: AbortSignal;
  /** Adapter-selected capability; stored runs for another agent are refused like missing ones. */
  readonly agentId?: string;
  /** Skill session state: not supported by this package (`true` throws `unsupported_agent_option`). */
  readonly persistSessionState?: false;
  /** Skill session state: not supported by this package (`true` throws `unsupported_agent_option`). */
  readonly includeSkillBodies?: false;
}

/** Bounded live-event options for a durable lifecycle resume. */
export interface AgentRunLifecycleStreamRequest extends AgentRunLifecycleRequest, SubscribeOptions {}

export interface AgentRunLifecycle {
  status(ref: AgentRunRef, options?: AgentRunLifecycleRequest): Promise<AgentRunStatusResult>;
  resume(ref: AgentRunRef, resume: AgentRunResume, options?: AgentRunLifecycleRequest): Promise<AgentRunResult>;
  resumeStream(ref: AgentRunRef, resume: AgentRunResume, options?: AgentRunLifecycleStreamRequest): AsyncGenerator<AgentRunResumeEvent>;
}

/** One event of `resumeAgentRunStream` / `lifecycle.resumeStream`. */
export type AgentRunResumeEvent = AgentEvent | { type: "agent_suspended" | "agent_denied"; sessionId: string; runId: string; interruption?: AgentRunInterruption; version: number };

/**
 * Host capability for durable agent status and resume (upstream's `createAgentRunLifecycle`): adapters
 * such as the MCP server's `agent.<id>.status` / `agent.<id>.resume` tools supply authorized ownership only.
 * A bad option throws TypeError with `code: "ERR_PRISM_INVALID_OPTION"`.
 */
export declare function createAgentRunLifecycle(options: AgentRunLifecycleOptions): AgentRunLifecycle;
/** The fingerprint a checkpoint of this agent under this revision records. */
export declare function agentFingerprint(agent: Agent, definitionRevision: string): string;

export declare class AgentDecisionError extends Error {
  readonly name: "AgentDecisionError";
  readonly code:
    | "ERR_PRISM_DECISION_STALE"
    | "ERR_PRISM_DECISION_UNKNOWN"
    | "ERR_PRISM_DECISION_DUPLICATE"
    | "ERR_PRISM_DECISION_SCOPE"
    | "ERR_PRISM_DECISION_INVALID"
    | "ERR_PRISM_DECISION_LIMIT"
    /** The checkpoint's pending call is not the one its approval id was issued for (tool, arguments hash, call id or run changed). */
    | "ERR_PRISM_DECISION_BINDING";
}
export declare class AgentRunStateError extends Error {
  readonly name: "AgentRunStateError";
  /**
   * `ERR_PRISM_AGENT_RUN_STATE`, or for a refused resume: `ERR_PRISM_AGENT_RUN_STALE` (the run moved on
   * since its version was read, e.g. another resume won: read it again) and `ERR_PRISM_AGENT_RUN_RECONCILE`
   * (a claimed tool call has no known outcome: its worker is still running it or died; an operator
   * reconciles, no resume runs it).
   */
  readonly code: "ERR_PRISM_AGENT_RUN_STATE" | "ERR_PRISM_AGENT_RUN_STALE" | "ERR_PRISM_AGENT_RUN_RECONCILE";
}
export declare class CheckpointConflictError extends Error {
  readonly name: "CheckpointConflictError";
  readonly code: "ERR_PRISM_CHECKPOINT_CONFLICT";
}
export declare const CHECKPOINT_CONFLICT_CODE: "ERR_PRISM_CHECKPOINT_CONFLICT";
export declare const AGENT_RUN_STATE_NAMESPACE: "prism.agent-run";
export declare const APPROVAL_LIMITS: Readonly<{
  DEFAULT_MAX_PENDING_DECISIONS: 32;
  HARD_MAX_PENDING_DECISIONS: 128;
  DEFAULT_MAX_STICKY_DECISIONS: 64;
  HARD_MAX_STICKY_DECISIONS: 256;
  MAX_DECISION_REASON_BYTES: 2048;
  MAX_DECISION_PAYLOAD_BYTES: 16384;
}>;
