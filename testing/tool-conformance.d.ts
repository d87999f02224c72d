import type { PermissionPolicy } from "../types/policy";
import type {
  DispatchContext,
  JsonObject,
  ToolCallContent,
  ToolDefinition,
  ToolFilterInput,
  ToolRegistry,
  ToolResult,
  ToolValidator,
} from "../types/harness";

/** One dispatch to observe. */
export interface ToolDispatchProbeOptions {
  readonly call: ToolCallContent;
  readonly registry: ToolRegistry;
  /** Merged over `{ sessionId: "conformance", runId: "r", toolCallId: call.id }`. */
  readonly context?: Partial<DispatchContext>;
  readonly filter?: ToolFilterInput;
  readonly permission?: PermissionPolicy;
  readonly validate?: ToolValidator;
  readonly secrets?: readonly (string | undefined)[];
}

export interface ToolConformanceOptions {
  /** Registered into the registry and used as the success-path target. */
  readonly tool: ToolDefinition<any>;
  /** Arguments the tool accepts. */
  readonly validArgs: JsonObject;
  /** The host's permission policy (default: allow all). */
  readonly permission?: PermissionPolicy;
  /** The host's validator. */
  readonly validate?: ToolValidator;
  /** The host's filter, applied to every probe. */
  readonly filter?: ToolFilterInput;
  readonly secrets?: readonly (string | undefined)[];
}

/**
 * Registers `options.tool`, then asserts that an unknown tool, a denied tool, non-object arguments, a
 * permission denial and a validator refusal are each blocked with their reason and never start, and that a
 * valid call runs without an error. Rejects with an `Error` naming the first violation.
 */
export declare function assertToolDispatchConforms(registry: ToolRegistry, options: ToolConformanceOptions): Promise<void>;

/** Rejects unless the probe is blocked with `expectedReason`, carries an error and emits no `tool_execution_started`. */
export declare function assertToolBlocked(probe: ToolDispatchProbeOptions, expectedReason: string): Promise<void>;

/** Dispatches the probe and returns the result with every event dispatch emitted, in order. */
export declare function dispatchAndCollect(probe: ToolDispatchProbeOptions): Promise<{
  result: ToolResult;
  events: { readonly type: string; readonly [key: string]: unknown }[];
}>;
