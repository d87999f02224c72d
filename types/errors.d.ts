// Errors of the provider seam and the agent loop, with `@arnilo/prism`'s names and shapes.

export type ProviderTransportErrorCode =
  | "sse_buffer_overflow"
  | "sse_event_overflow"
  | "response_body_overflow"
  | "aborted"
  | "invalid_json_arguments"
  | "incomplete_delta"
  | "response_body_shape";

/** A provider stream that could not be read. `limitBytes` is the bound hit by an overflow code. */
export declare class ProviderTransportError extends Error {
  readonly name: "ProviderTransportError";
  readonly code: ProviderTransportErrorCode;
  readonly limitBytes?: number;
  constructor(code: ProviderTransportErrorCode, message: string, limitBytes?: number);
}

/** What `session.run` rejects with when a run ends `failed` or `aborted`; `result` is the run's result. */
export declare class AgentRunError<R = unknown> extends Error {
  readonly name: "AgentRunError";
  readonly result: R;
  constructor(result: R, options?: { readonly cause?: unknown });
}
