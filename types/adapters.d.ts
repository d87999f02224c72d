// Framework adapters: the harness under the Vercel AI SDK and the OpenAI Agents SDK, the approval
// gate and the local identity (docs/ai-sdk.md, docs/openai-agents.md, docs/approval.md).
import type { ToolSet, PrepareStepFunction, ToolApprovalConfiguration } from "ai";
import type { FunctionTool, RunContext } from "@openai/agents";
import type { ToolDefinition, ToolDispatcherOptions, ToolExecutionContext, ToolRegistry, ErrorInfo } from "./harness";
import type { CheckpointStore } from "./approval";
import type { AgentIdentity, OwnershipScope } from "./effects";

/** A tool error as a framework sees it: the dispatch's error, named after the tool, with its code. */
export declare class ToolCallError extends Error {
  /** The dispatch error's code, when it has one. */
  readonly code?: string;
  readonly toolName: string;
  readonly info: ErrorInfo;
}

/** The options of an adapter: createToolDispatcher's (without `registry`) and the adapter's own. */
export interface AdapterOptions<FrameworkContext> extends Partial<Omit<ToolDispatcherOptions, "registry">> {
  /** The call context of every dispatch, or a function of the framework's context answering it. */
  context?: Partial<ToolExecutionContext> | ((framework: FrameworkContext) => Partial<ToolExecutionContext> | undefined);
  /**
   * `"framework"` (default): the framework's tool call id. `"content"`: an id derived from the tool
   * name and arguments (contentToolCallId), so a retried request whose model gives a new id is the
   * same effect within one `sessionId` and `runId`.
   */
  callIds?: "framework" | "content";
  /** An approval gate: every call passes `gate.admit` before it runs. */
  approval?: ApprovalGate;
  /** Adds `search_tools` over the granted tools; the disclosure is applied per step. */
  search?: boolean | { topK?: number; defaultK?: number };
}

/** What an adapter takes: this package's tool definitions or a registry (or the framework's own tools). */
export type HarnessTools = readonly ToolDefinition<any>[] | ToolRegistry;

// ----- AI SDK -------------------------------------------------------------------------------------

export interface AiSdkExecutionOptions {
  toolCallId: string;
  messages: unknown[];
  abortSignal?: AbortSignal;
  context?: unknown;
}

/** An AI SDK ToolSet whose every call goes through this package's dispatch. */
export declare function toAiSdkTools(tools: HarnessTools | ToolSet, options?: AdapterOptions<AiSdkExecutionOptions>): ToolSet;
/** AI SDK tools as this package's tool definitions (schema as JSON Schema; the tool's own parse before its execute). */
export declare function fromAiSdkTools(toolSet: ToolSet): ToolDefinition<any>[];

export interface AiSdkPrepareStepOptions {
  /** The grant: only these tools are ever active. */
  toolNames?: readonly string[];
  /** Names for this step (clamped to the grant). */
  narrowing?: (step: { stepNumber: number; steps: unknown[]; toolNames: string[] }) => readonly string[] | Promise<readonly string[]>;
  /** Top-scored tools per step with `search` (default 16, at most 64). */
  topK?: number;
  /** Names found by `search_tools` before this run. */
  activated?: readonly string[];
  /** More of the step's settings (its answer is merged; `activeTools` is the disclosure's). */
  prepare?: PrepareStepFunction<any>;
}
/** A `prepareStep` that sets each step's `activeTools`: grant, narrowing, `search_tools` disclosure. */
export declare function aiSdkPrepareStep(toolSet: ToolSet, options?: AiSdkPrepareStepOptions): PrepareStepFunction<any>;
/** The AI SDK's `toolApproval` over the approval gate of a set made with `options.approval`. */
export declare function aiSdkToolApproval(toolSet: ToolSet): ToolApprovalConfiguration<any, any>;

// ----- OpenAI Agents SDK --------------------------------------------------------------------------

/** Agents SDK function tools whose every call goes through this package's dispatch (run context passed through as `ctx.runContext`). */
export declare function toOpenAIAgentsTools(
  tools: HarnessTools | readonly FunctionTool<any, any, any>[],
  options?: AdapterOptions<RunContext<any>> & { search?: boolean | { topK?: number; defaultK?: number; input?: (runContext: RunContext<any>) => string | Promise<string> } },
): FunctionTool<any, any, any>[];
/** Agents SDK function tools as this package's tool definitions (their own `invoke` runs inside the dispatch). */
export declare function fromOpenAIAgentsTools(tools: readonly FunctionTool<any, any, any>[]): ToolDefinition<any>[];
/** The tools to enable for a run's `input` (grant, narrowing, top-k, found names), for hosts that pick tools before `run`. */
export declare function openAIAgentsToolFilter(
  tools: FunctionTool<any, any, any>[],
  options?: Omit<AiSdkPrepareStepOptions, "prepare">,
): (turn?: { input?: string; activated?: readonly string[]; stepNumber?: number }) => Promise<FunctionTool<any, any, any>[]>;

// ----- approval, identity, call ids -----------------------------------------------------------------

export interface GateCall {
  id: string | number;
  name: string;
  arguments?: unknown;
}
export interface ApprovalGateOptions {
  /** Where pending calls and decisions are kept (createSqliteCheckpointStore(path) survives a restart). */
  checkpoints: CheckpointStore;
  /** The conversation or job the decisions belong to (the checkpoint key), 1–256 characters. */
  runId: string;
  /** Which calls wait for a person: default true (every call). */
  needsApproval?: boolean | ((call: GateCall) => boolean | Promise<boolean>) | Record<string, boolean | ((call: GateCall) => boolean | Promise<boolean>)>;
  ownership?: OwnershipScope;
  identity?: AgentIdentity;
  maxPendingDecisions?: number;
  maxStickyDecisions?: number;
}
export interface GatePending {
  approvalId: string;
  toolCallId: string;
  toolName: string;
  argumentsHash: string;
  arguments: unknown;
}
export type GateOutcome = "allow_once" | "allow_for_run" | "reject_once" | "reject_for_run";
export type GateDecision = ({ approvalId: string; toolCallId?: never } | { toolCallId: string; approvalId?: never }) & { outcome: GateOutcome; reason?: string };
export interface ApprovalGate {
  readonly runId: string;
  /** True when the call must wait for a person (it is then recorded as pending). */
  requires(call: GateCall): Promise<boolean>;
  /** The AI SDK's approval status of the call. */
  status(call: GateCall): Promise<"not-applicable" | "approved" | "user-approval" | { type: "denied"; reason: string }>;
  pending(): Promise<GatePending[]>;
  decide(decisions: readonly GateDecision[]): Promise<{ approvalId: string; toolCallId: string; toolName: string; outcome: GateOutcome }[]>;
  /** Returns when the call may run; throws `approval_rejected`, `ERR_PRISM_DECISION_BINDING` or `ERR_PRISM_AGENT_RUN_SUSPENDED`. */
  admit(call: GateCall): Promise<void>;
}
/** A durable approval gate for the calls of one run. */
export declare function createApprovalGate(options: ApprovalGateOptions): ApprovalGate;

/** The identity of a single-process program: tenant `local:<host>`, principal kind `local`. */
export declare function localIdentity(options?: { user?: string; host?: string; scopes?: readonly string[] }): AgentIdentity & { userId: string };
/** Whether an identity is a local identity (never one an authentication layer verified). */
export declare function isLocalIdentity(identity: unknown): boolean;
/** A tool call id derived from the tool name and the arguments (and `occurrence`, default 0). */
export declare function contentToolCallId(toolName: string, args: unknown, occurrence?: number): string;
