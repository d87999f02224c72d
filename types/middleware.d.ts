// Middleware registry (docs/spec.md section 4).

/** The `ErrorInfo` an `extension_error` event carries: known secrets are already `[REDACTED]`. */
export interface ExtensionErrorInfo {
  readonly name?: string
  readonly message: string
  readonly code?: string | number
}

/**
 * An event reported by the middleware registry or the extension kernel.
 * `extension` is `"middleware:<hook>"` for a middleware, or the extension's name for a failed `setup`.
 */
export interface ExtensionEvent {
  readonly type: "extension_error" | string
  readonly extension?: string
  readonly error?: ExtensionErrorInfo
  readonly [key: string]: unknown
}

/** Hook names the harness and `@arnilo/prism` use; any string is accepted. */
export type MiddlewareHookName =
  | "beforeProviderTurn"
  | "provider_request"
  | "input_assembly"
  | "prompt_build"
  | "context"
  | "tool_call"
  | "tool_result"
  | "retry"
  | "compaction_request"
  | "compaction"
  | "session_start"
  | "session_shutdown"

/**
 * Commits `value` as this middleware's output (`undefined` or no argument: the value it received).
 * Returns a promise of the committed value, so `return next(v)` is the idiomatic form. Calling it a
 * second time throws `ERR_PRISM_MIDDLEWARE_NEXT_TWICE`.
 */
export type MiddlewareNext<T> = (value?: T) => Promise<T>

/**
 * A middleware: gets the current value and `next`. Return a value (or a promise of one) to pass it on;
 * return `undefined` without calling `next` to pass the current value on unchanged; or call `next(v)`.
 */
export type Middleware<T = unknown> = (value: T, next: MiddlewareNext<T>) => T | undefined | void | Promise<T | undefined | void>

export interface MiddlewareRegistryOptions {
  /** `"event"` (default): a failing middleware is skipped and reported through `onError`. `"throw"`: `run` rejects with what it threw. */
  readonly errorPolicy?: "event" | "throw"
  /** Known secret values, replaced by `[REDACTED]` in reported errors. Read when an error is reported. */
  readonly secrets?: readonly (string | undefined)[]
  /** Receives `extension_error` events. A returned promise is awaited before the chain goes on; a throw makes `run` reject. */
  readonly onError?: (event: ExtensionEvent) => void | Promise<void>
}

export interface MiddlewareRegistry {
  /**
   * Adds `middleware` at the end of `hook`'s chain. Returns an idempotent unsubscribe that removes this
   * registration only. Throws `TypeError` (`ERR_INVALID_ARG_TYPE`) for a non-string hook or a non-function.
   */
  use<T>(hook: MiddlewareHookName | string, middleware: Middleware<T>): () => void
  /**
   * Runs `hook`'s middlewares in registration order on `value` and resolves to the final value. Always a
   * promise (a non-string hook rejects with `TypeError`). A run uses the chain as it was when it started.
   */
  run<T>(hook: MiddlewareHookName | string, value: T): Promise<T>
  /** The middlewares of `hook`, in order (a copy). */
  list(hook: MiddlewareHookName | string): readonly Middleware[]
}

/**
 * Creates a middleware registry. Errors a middleware can cause, each reported as
 * `{ type: "extension_error", extension: "middleware:<hook>", error }`:
 * - a throw or rejection (any value): the middleware is skipped — its input, not anything it committed
 *   with `next`, passes on; under `errorPolicy: "throw"` `run` rejects with the thrown value itself;
 * - `next()` called twice: `Middleware hook "<hook>" #<index>: next() called more than once`
 *   (`ERR_PRISM_MIDDLEWARE_NEXT_TWICE`), handled like a throw;
 * - `next(v)` then a different return value: `Middleware hook "<hook>" #<index>: called next(value) and
 *   returned a different value; the next() value wins, the return is discarded`
 *   (`ERR_PRISM_MIDDLEWARE_CONFLICT`), reported under both policies, `v` passes on;
 * - `next()` after the middleware settled: `… next() called after the middleware settled; the value is
 *   ignored` (`ERR_PRISM_MIDDLEWARE_LATE_NEXT`), reported only.
 */
export declare function createMiddlewareRegistry(options?: MiddlewareRegistryOptions): MiddlewareRegistry
