// Permission and trust policies, and the errors dispatch raises for them and for guardrails.

export interface PermissionRequest {
  readonly kind: "tool" | "extension" | "resource" | string
  readonly action: string
  readonly target: string
  readonly metadata?: Readonly<Record<string, unknown>>
}

export interface PermissionDecision {
  readonly allowed: boolean
  readonly reason?: string
  readonly metadata?: Readonly<Record<string, unknown>>
}

export interface PermissionPolicy {
  check(request: PermissionRequest): PermissionDecision | Promise<PermissionDecision>
}

export interface TrustRequest {
  readonly kind: "tool" | "project" | "resource" | "extension" | string
  readonly target: string
  readonly capability?: string
  readonly metadata?: Readonly<Record<string, unknown>>
}

export interface TrustDecision {
  readonly trusted: boolean
  readonly reason?: string
  readonly metadata?: Readonly<Record<string, unknown>>
}

export interface TrustPolicy {
  check(request: TrustRequest): TrustDecision | Promise<TrustDecision>
}

export interface StaticPermissionPolicyOptions {
  /** Exact names (`"echo"`) or full keys (`"tool:echo:execute"`) allowed. */
  readonly allow?: readonly string[]
  /** Exact names or full keys denied; deny wins over allow. */
  readonly deny?: readonly string[]
  /** For names in neither list. Default: `"allow"` when `allow` is empty, `"deny"` otherwise. */
  readonly defaultDecision?: "allow" | "deny"
}

/**
 * A synchronous policy over exact names. Denials carry `reason` `Permission denied: <kind>:<target>:<action>`
 * (deny list) or `Permission not allowed: <kind>:<target>:<action>` (not allowed by default). A request that
 * is not an object with a string `target` is refused (`Invalid permission request`). `true` / `false`
 * gives a policy that always allows / refuses. Bad options throw `TypeError` (`ERR_INVALID_ARG_TYPE`).
 */
export declare function createStaticPermissionPolicy(options?: StaticPermissionPolicyOptions | boolean): PermissionPolicy

export interface StaticTrustPolicyOptions {
  /** Exact names or full keys (`"tool:echo:execute"`, kind:target:capability) trusted. */
  readonly trusted?: readonly string[]
  /** Exact names or full keys untrusted; untrusted wins. */
  readonly untrusted?: readonly string[]
  /** For names in neither list. Default: `"trusted"` when `trusted` is empty, `"untrusted"` otherwise. */
  readonly defaultDecision?: "trusted" | "untrusted"
}

/**
 * A synchronous policy over exact names; refusals carry `reason` `Untrusted <kind>: <target>`. Also accepts
 * `true` / `false` or a constant decision `{ trusted, reason? }` (its `trusted` and `reason` are returned).
 */
export declare function createStaticTrustPolicy(options?: StaticTrustPolicyOptions | TrustDecision | boolean): TrustPolicy

export interface PolicyErrorOptions {
  readonly cause?: unknown
  readonly record?: unknown
}

/** `name` `PermissionDeniedError`, `code` `ERR_PRISM_PERMISSION_DENIED`. */
export declare class PermissionDeniedError extends Error {
  readonly name: "PermissionDeniedError"
  readonly code: "ERR_PRISM_PERMISSION_DENIED"
  /** Set by the `(request, decision)` form. */
  readonly request?: PermissionRequest
  readonly decision?: PermissionDecision
  constructor(message?: string, options?: PolicyErrorOptions)
  /** `@arnilo/prism`'s form: message = `decision.reason` or `Permission denied for <kind>:<target>:<action>`. */
  constructor(request: PermissionRequest, decision: PermissionDecision)
}

/** `name` `TrustDeniedError`, `code` `ERR_PRISM_UNTRUSTED`. */
export declare class TrustDeniedError extends Error {
  readonly name: "TrustDeniedError"
  readonly code: "ERR_PRISM_UNTRUSTED"
  readonly request?: TrustRequest
  readonly decision?: TrustDecision
  constructor(message?: string, options?: PolicyErrorOptions)
  /** `@arnilo/prism`'s form: message = `decision.reason` or `Untrusted <kind>: <target>`. */
  constructor(request: TrustRequest, decision: TrustDecision)
}

/** `name` `GuardrailError`, `code` `ERR_PRISM_GUARDRAIL_BLOCKED`; `record` is the guardrail decision record. */
export declare class GuardrailError extends Error {
  readonly name: "GuardrailError"
  readonly code: "ERR_PRISM_GUARDRAIL_BLOCKED"
  readonly record: unknown
  constructor(message?: string, options?: PolicyErrorOptions)
}
