// Permission and trust policies, and the errors dispatch raises for them and for guardrails.

// The two policies share one form: a request names a `kind` and a `target`, a decision gives a verdict
// with an optional `reason`, and `check` answers synchronously or not. (Not exported: `export {}` below.)
interface PolicyRequest<Kind extends string> {
  readonly kind: Kind
  readonly target: string
  readonly metadata?: Readonly<Record<string, unknown>>
}

interface PolicyDecision {
  readonly reason?: string
  readonly metadata?: Readonly<Record<string, unknown>>
}

interface Policy<Request, Decision> {
  check(request: Request): Decision | Promise<Decision>
}

export {}

export interface PermissionRequest extends PolicyRequest<"tool" | "extension" | "resource" | string> {
  readonly action: string
}

export interface PermissionDecision extends PolicyDecision {
  readonly allowed: boolean
}

export interface PermissionPolicy extends Policy<PermissionRequest, PermissionDecision> {}

export interface TrustRequest extends PolicyRequest<"tool" | "project" | "resource" | "extension" | string> {
  readonly capability?: string
}

export interface TrustDecision extends PolicyDecision {
  readonly trusted: boolean
}

export interface TrustPolicy extends Policy<TrustRequest, TrustDecision> {}

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

/**
 * `name` `GuardrailError`, `code` `ERR_PRISM_GUARDRAIL_BLOCKED`; `record` is the guardrail decision record.
 * Built from a record (`new GuardrailError(record)`, `@arnilo/prism`'s form), the message is `Guardrail
 * blocked run`, or for an `interrupt` `Guardrail interruption is unavailable at stage "<stage>"; …` with
 * `code` `ERR_PRISM_GUARDRAIL_INTERRUPT_UNAVAILABLE`.
 */
export interface GuardrailError<Code extends string = "ERR_PRISM_GUARDRAIL_BLOCKED"> extends Error {
  readonly name: "GuardrailError"
  readonly code: Code
  readonly record: unknown
}
export declare const GuardrailError: {
  new (message?: string, options?: PolicyErrorOptions): GuardrailError
  new (record: RunGuardrailRecord): GuardrailError<"ERR_PRISM_GUARDRAIL_BLOCKED" | "ERR_PRISM_GUARDRAIL_INTERRUPT_UNAVAILABLE">
  readonly prototype: GuardrailError<string>
}

/** Every guardrail stage a host may run: the run's `input` / `output` and dispatch's two tool stages. */
export type RunGuardrailStage = "input" | "output" | "tool_input" | "tool_output"

/** One decision, bounded (name 128 bytes, reason 4 KiB, metadata 16 KiB of JSON) and redacted. */
export interface RunGuardrailRecord {
  readonly guardrail: string
  readonly stage: RunGuardrailStage
  readonly action: "allow" | "block" | "tripwire" | "interrupt"
  readonly reason?: string
  readonly metadata?: Readonly<Record<string, unknown>>
}

export interface RunGuardrail {
  readonly name: string
  readonly stage: RunGuardrailStage
  evaluate(context: {
    readonly stage: RunGuardrailStage
    readonly value: unknown
    readonly signal: AbortSignal
    readonly [key: string]: unknown
  }): { action: RunGuardrailRecord["action"]; reason?: string; metadata?: Record<string, unknown> } | Promise<{
    action: RunGuardrailRecord["action"]
    reason?: string
    metadata?: Record<string, unknown>
  }>
}

export interface RunGuardrailsOptions {
  readonly stage: RunGuardrailStage
  readonly guardrails?: {
    readonly input?: readonly RunGuardrail[]
    readonly output?: readonly RunGuardrail[]
    readonly toolInput?: readonly RunGuardrail[]
    readonly toolOutput?: readonly RunGuardrail[]
    /** A safe integer 1–16 (default 1); records are still reported in declaration order. */
    readonly maxConcurrency?: number
  }
  readonly value: unknown
  readonly context: {
    readonly sessionId: string
    readonly runId: string
    readonly toolCallId?: string
    readonly toolName?: string
    readonly metadata?: Readonly<Record<string, unknown>>
    readonly signal?: AbortSignal
  }
  /** Applied to reasons, failure messages and metadata. */
  readonly redactor?: { redact<T>(value: T): T }
  /** Receives one `guardrail_decision` event per record. */
  readonly emit?: (event: {
    readonly type: "guardrail_decision"
    readonly sessionId: string
    readonly runId: string
    readonly toolCallId?: string
    readonly toolName?: string
    readonly record: RunGuardrailRecord
  }) => void | Promise<void>
}

/**
 * Evaluates one stage's guardrails; the first decision other than `allow` stops the rest (their signal
 * aborts). A guardrail that is malformed, answers garbage or throws becomes a `tripwire` record
 * (`guardrail_invalid`, `guardrail_invalid_decision`, `guardrail_failed` with `metadata.error`).
 */
export declare function runGuardrails(options: RunGuardrailsOptions): Promise<{
  records: RunGuardrailRecord[]
  terminal?: RunGuardrailRecord
}>

/** Throws the `GuardrailError` of `result.terminal` when there is one. */
export declare function assertGuardrailsAllowed(result: { readonly terminal?: RunGuardrailRecord }): void

/** 16: the most guardrails of a stage that run at once. */
export declare const MAX_GUARDRAIL_CONCURRENCY: 16

/**
 * Resolves when `policy` allows `request` (no policy allows); otherwise throws
 * `PermissionDeniedError(request, decision)`. A policy that throws or rejects propagates its own error.
 */
export declare function assertPermission(policy: PermissionPolicy | undefined, request: PermissionRequest): Promise<void>

/**
 * Resolves when `policy` trusts `request` (no policy trusts); otherwise throws
 * `TrustDeniedError(request, decision)`. A policy that throws or rejects propagates its own error.
 */
export declare function assertTrusted(policy: TrustPolicy | undefined, request: TrustRequest): Promise<void>

// ----- identity helpers ----------------------------------------------------------------------------

import type { AgentIdentity, OwnershipScope, Principal } from "./effects"

export interface IdentityLimits {
  readonly maxScopes: number
  readonly maxScopeBytes: number
  readonly maxMetadataBytes: number
  readonly maxCredentialRefBytes: number
  readonly maxPrincipalIdBytes: number
}

/** `{ maxScopes: 64, maxScopeBytes: 128, maxMetadataBytes: 4096, maxCredentialRefBytes: 256, maxPrincipalIdBytes: 256 }`. */
export declare const DEFAULT_IDENTITY_LIMITS: IdentityLimits
/** The most any limit may be raised to. */
export declare const HARD_IDENTITY_LIMITS: IdentityLimits

/** Defaults filled in; a value outside `[1, hard]` throws `RangeError` `<name> must be a positive safe integer no greater than <hard>`. */
export declare function resolveIdentityLimits(input?: Partial<IdentityLimits>): IdentityLimits

export interface IdentityLimitOptions {
  readonly limits?: Partial<IdentityLimits>
  readonly now?: number
  readonly expectedTenantId?: string
}

/** `{ tenantId, accountId?, userId? }` of the identity. */
export declare function ownershipFromIdentity(identity: AgentIdentity): OwnershipScope & { readonly tenantId: string }

export interface NarrowIdentityOptions {
  /** Non-empty, each held by the parent (else `IdentityError` reason `scope_widen`). */
  readonly scopes: readonly string[]
  readonly principal?: Principal
  readonly credentialRefs?: readonly string[]
  /** Never later than the parent's (`expiry_widen`). */
  readonly expiresAt?: string
  readonly metadata?: Readonly<Record<string, unknown>>
  readonly limits?: Partial<IdentityLimits>
}

/** A delegated identity: same tenant and owners, `delegatedFrom` the parent's principal, narrower scopes. */
export declare function narrowIdentity(parent: AgentIdentity, options: NarrowIdentityOptions): AgentIdentity

/** Throws `IdentityError` unless `child` is active, keeps tenant/account/user and does not widen scopes. */
export declare function assertIdentityPropagation(parent: AgentIdentity, child: AgentIdentity, options?: IdentityLimitOptions): void

/** The run's identity (`runIdentity` wins), checked active and owning `ownership`; `undefined` when neither is given. */
export declare function resolveRunIdentity(
  runIdentity: AgentIdentity | undefined,
  agentIdentity: AgentIdentity | undefined,
  ownership?: OwnershipScope,
  options?: IdentityLimitOptions,
): AgentIdentity | undefined

/** `prism.identity.*` attributes naming the identity, without credentials. */
export declare function identityTelemetryAttributes(identity: AgentIdentity): Readonly<Record<string, string>>
