// Recoverable tool effects (docs/spec.md section 7): declarations, keys, identity checks, the ToolEffectStore
// contract and the built-in stores.

/** A JSON value. */
export type EffectJsonValue = null | boolean | number | string | EffectJsonValue[] | { [key: string]: EffectJsonValue };

/** Whether a tool observes (`none`) or mutates local or external state. */
export type ToolEffectKind = "none" | "local_mutation" | "external_mutation";

/**
 * How dispatch recovers a mutation: `none` — no effect machinery; `optional` — claim through the
 * `effectStore` when one is given; `required` — claim, and without a store fail with
 * `ERR_PRISM_TOOL_EFFECT_REQUIRED` before executing; `tool_managed` — the tool receives the derived
 * `idempotencyKey` and recovers itself (no claim); `unsupported` — explicit non-recoverable execution.
 */
export type ToolEffectIdempotency = "none" | "optional" | "required" | "tool_managed" | "unsupported";

/** `ToolDefinition.effect`. `kind: "none"` only goes with `idempotency: "none"`. */
export interface ToolEffectDeclaration {
  readonly kind: ToolEffectKind;
  readonly idempotency: ToolEffectIdempotency;
}

/** Context a classifier receives: a frozen copy holding only these fields. */
export interface ToolEffectClassifierContext {
  readonly sessionId: string;
  readonly runId: string;
  readonly toolCallId: string;
  readonly signal?: AbortSignal;
  readonly metadata?: Readonly<Record<string, unknown>>;
}

/** A synchronous, deterministic, side-effect-free classifier of a call's arguments. */
export type ToolEffectClassifier = (
  args: { readonly [key: string]: unknown },
  context: ToolEffectClassifierContext,
) => ToolEffectDeclaration;

/** The codes of {@link ToolEffectError}: `@arnilo/prism`'s five, and `…_EXHAUSTED` (every attempt of the key was claimed and none dispatched; settle it with `resolveUnknown`). */
export type ToolEffectErrorCode =
  | "ERR_PRISM_TOOL_EFFECT_REQUIRED"
  | "ERR_PRISM_TOOL_EFFECT_CONFLICT"
  | "ERR_PRISM_TOOL_EFFECT_UNKNOWN"
  | "ERR_PRISM_TOOL_EFFECT_COMPLETED"
  | "ERR_PRISM_TOOL_EFFECT_LIMIT"
  | "ERR_PRISM_TOOL_EFFECT_EXHAUSTED";

/** A refusal of the tool-effect contract. Never carries claim tokens, arguments or results. */
export declare class ToolEffectError extends Error {
  constructor(code: ToolEffectErrorCode, message: string);
  readonly code: ToolEffectErrorCode;
  readonly name: "ToolEffectError";
}

/** An identity that is not active or does not own the scope it is used with. */
export declare class IdentityError extends Error {
  constructor(message: string, reason: string);
  readonly code: "ERR_PRISM_IDENTITY";
  /** Machine reason: `unverified`, `expired`, `revoked`, `invalid_issued_at`, `ownership_tenant`, … */
  readonly reason: string;
  readonly name: "IdentityError";
}

/** A host-authenticated actor. */
export interface Principal {
  readonly kind: "user" | "service" | "agent" | (string & {});
  readonly id: string;
  readonly displayName?: string;
}

/** Host-verified identity (obtain it from your verifier; never from caller-asserted claims). */
export interface AgentIdentity {
  readonly tenantId: string;
  readonly accountId?: string;
  readonly userId?: string;
  readonly principal: Principal;
  readonly sponsor?: Principal;
  readonly owner?: Principal;
  readonly delegatedFrom?: Principal;
  readonly scopes: readonly string[];
  readonly credentialRefs?: readonly string[];
  /** ISO-8601; at most one minute in the future. */
  readonly issuedAt: string;
  readonly expiresAt?: string;
  readonly revokedAt?: string;
  readonly metadata?: Readonly<Record<string, unknown>>;
  readonly verified: true;
}

/** Tenant / account / user a record belongs to. */
export interface OwnershipScope {
  readonly tenantId?: string;
  readonly accountId?: string;
  readonly userId?: string;
}

/** Options of the identity checks. */
export interface IdentityCheckOptions {
  /** Clock in epoch milliseconds (default `Date.now()`). */
  readonly now?: number;
  /** `assertIdentityActive` only: the identity's tenant must equal this. */
  readonly expectedTenantId?: string;
}

/** Error information inside a stored result. */
export interface ToolEffectErrorInfo {
  readonly name?: string;
  readonly message: string;
  readonly code?: string | number;
  readonly retryAfterMs?: number;
  readonly cause?: string;
}

/** The `ToolResult` a completed record keeps (JSON; at most 64 KiB serialised). */
export interface ToolEffectResult {
  readonly toolCallId: string;
  readonly name: string;
  readonly content?: readonly unknown[];
  readonly value?: unknown;
  readonly error?: ToolEffectErrorInfo;
  readonly metadata?: Readonly<Record<string, unknown>>;
}

export type ToolEffectStatus = "pending" | "dispatched" | "completed" | "failed_retryable" | "failed_terminal" | "unknown";

/** `{ code, reference? }`: code at most 128 bytes, reference at most 1 KiB. */
export interface ToolEffectFailure {
  readonly code: string;
  readonly reference?: string;
}

/** The fields that name one effect: on every `ToolEffectKey` and every stored `ToolEffectRecord`. */
export interface ToolEffectIds {
  /** The derived key (`deriveToolEffectKey`); at most 96 bytes. */
  readonly key: string;
  readonly sessionId: string;
  readonly runId: string;
  readonly toolCallId: string;
  readonly toolName: string;
  /** 64 lower-case hex characters (`toolEffectArgumentsHash`). */
  readonly argumentsHash: string;
}

/** What a record keeps of a result larger than its store keeps. */
export interface ToolEffectResultDigest {
  readonly bytes: number;
  readonly sha256: string;
}

/** One stored effect (at most 128 KiB serialised, or `maxResultBytes` + 64 KiB when that is larger). */
export interface ToolEffectRecord extends ToolEffectIds {
  readonly tenantId: string;
  readonly accountId?: string;
  readonly userId?: string;
  readonly status: ToolEffectStatus;
  /** 1 for the first claim; +1 each time a `failed_retryable` record is claimed again. */
  readonly attempt: number;
  /** +1 on every transition; the compare-and-swap value. */
  readonly version: number;
  /** Present while `pending` or `dispatched`, on records returned to the claim holder. */
  readonly claimToken?: string;
  readonly result?: ToolEffectResult;
  /** At most 1 KiB. */
  readonly resultRef?: string;
  /**
   * Set instead of `result` when the completed result was larger than the store keeps
   * (`maxResultBytes`, default 64 KiB): its `JSON.stringify` size in bytes and SHA-256 (hex). The call
   * that completed it returned its value; a retry of the key is refused with
   * `ERR_PRISM_TOOL_EFFECT_COMPLETED` and never runs the tool again.
   */
  readonly resultOmitted?: ToolEffectResultDigest;
  readonly failure?: ToolEffectFailure;
  readonly createdAt: string;
  readonly updatedAt: string;
  /** End of the claim lease (pending / dispatched only). */
  readonly expiresAt?: string;
}

/** Identifies one effect. `ownership` must equal the identity's tenant / account / user exactly. */
export interface ToolEffectKey extends ToolEffectIds {
  readonly identity: AgentIdentity;
  readonly ownership: OwnershipScope;
  readonly signal?: AbortSignal;
}

/** A claimed transition: the claim token and the version the caller last saw. */
export interface ToolEffectTransition extends ToolEffectKey {
  readonly claimToken: string;
  readonly expectedVersion: number;
}

export interface ToolEffectBeginInput extends ToolEffectKey {
  /** Claim lease in ms: default 900 000 (15 min), at most 3 600 000. */
  readonly claimTtlMs?: number;
  /** Claims of a `failed_retryable` record allowed in total: default 3, at most 10. */
  readonly maxAttempts?: number;
}

export interface ToolEffectBeginResult {
  readonly outcome: "acquired" | "existing";
  readonly record: ToolEffectRecord;
}

export interface ToolEffectResolveInput extends ToolEffectKey {
  readonly expectedVersion: number;
  readonly status: "completed" | "failed_retryable" | "failed_terminal";
  readonly result?: ToolEffectResult;
  readonly resultRef?: string;
  readonly failure?: ToolEffectFailure;
}

export interface ToolEffectCleanupInput {
  readonly ownership: OwnershipScope;
  /** ISO-8601: delete terminal records last updated before this. */
  readonly before: string;
  /** Default 100, at most 500. */
  readonly limit?: number;
  readonly signal?: AbortSignal;
}

/** A value or a Promise of it: a host store may answer either way. */
export type MaybePromise<T> = T | Promise<T>;

/** `S` with every method answering a Promise of what it answers in `S` (a refusal is then a rejection). */
export type Promised<S> = {
  [K in keyof S]: S[K] extends (...args: infer A) => infer R ? (...args: A) => Promise<Awaited<R>> : S[K];
};

/**
 * Durable claim / compare-and-swap store for recoverable tool effects. Every transition checks the exact
 * owner, key and arguments hash, the claim token and `expectedVersion`, and refuses anything else with
 * `ERR_PRISM_TOOL_EFFECT_CONFLICT`.
 */
export interface ToolEffectStore {
  get(input: ToolEffectKey): MaybePromise<ToolEffectRecord | undefined>;
  begin(input: ToolEffectBeginInput): MaybePromise<ToolEffectBeginResult>;
  markDispatched(input: ToolEffectTransition): MaybePromise<ToolEffectRecord>;
  complete(input: ToolEffectTransition & { readonly result?: ToolEffectResult; readonly resultRef?: string }): MaybePromise<ToolEffectRecord>;
  fail(
    input: ToolEffectTransition & {
      readonly status: "failed_retryable" | "failed_terminal";
      readonly failure: ToolEffectFailure;
    },
  ): MaybePromise<ToolEffectRecord>;
  markUnknown(input: ToolEffectTransition & { readonly failure?: ToolEffectFailure }): MaybePromise<ToolEffectRecord>;
  resolveUnknown(input: ToolEffectResolveInput): MaybePromise<ToolEffectRecord>;
  cleanup(input: ToolEffectCleanupInput): MaybePromise<{ readonly deleted: number }>;
}

/**
 * A built-in store. Its methods keep `@arnilo/prism`'s contract: each returns a Promise, and a refusal
 * (`ERR_PRISM_TOOL_EFFECT_CONFLICT`, …) is a rejection. They are own properties of the store, so
 * `{ ...store, begin(input) { … } }` keeps the others. Dispatch calls them without a promise per step.
 */
export interface NativeToolEffectStore extends Promised<ToolEffectStore> {
  /** A no-op: the memory store holds no file or connection. */
  close(): void;
}

/**
 * The SQLite store. Its methods keep the same contract; each operation is one transaction run on
 * libuv's thread pool, so a commit waiting for its fsync (`synchronous: "full"`) never holds the JS
 * thread. The file is opened by `createSqliteToolEffectStore` itself (an unusable path throws there).
 */
export interface SqliteToolEffectStore extends Promised<ToolEffectStore> {
  /** Resolves once the store is open: at once, since the file was opened when the store was made. */
  ready(): Promise<void>;
  /** Closes the file once operations already running finish; later calls reject with `ERR_PRISM_TOOL_EFFECT_STORE`. */
  close(): Promise<void>;
}

export interface MemoryToolEffectStoreOptions {
  /** Clock in epoch milliseconds (default `Date.now`), e.g. to test lease expiry. */
  readonly now?: () => number;
  /**
   * The largest result kept (bytes of its `JSON.stringify` text; 1 – 16 777 216, default 65 536). A
   * larger one completes its record with `resultOmitted` instead of the value.
   */
  readonly maxResultBytes?: number;
  /**
   * The lease of a claim whose `begin` names no `claimTtlMs` (ms, 1 – 3 600 000, default 900 000): how
   * long a claim left `pending` (its worker died, the database restarted) blocks its key.
   */
  readonly claimTtlMs?: number;
}

export interface SqliteToolEffectStoreOptions extends MemoryToolEffectStoreOptions {
  /** How long a transition waits for another process's write lock (ms, default 5 000). */
  readonly busyTimeoutMs?: number;
  /** `"full"` (default) survives power loss; `"normal"` survives a killed process only. */
  readonly synchronous?: "full" | "normal";
}

/** The input of `deriveToolEffectKey`. */
export interface ToolEffectKeyInput {
  readonly identity: Pick<AgentIdentity, "principal">;
  readonly ownership: OwnershipScope;
  readonly sessionId: string;
  readonly runId: string;
  readonly toolCallId: string;
  readonly toolName: string;
  readonly argumentsHash: string;
}

/** A tool as far as effect resolution reads it. */
export interface ToolEffectTool {
  readonly effect?: ToolEffectDeclaration | ToolEffectClassifier;
}

/**
 * Canonical JSON: object keys in the order JavaScript enumerates a copy built from the sorted keys (array
 * indices ascending, then the rest by UTF-16 code units), no whitespace, arrays in order, numbers as
 * `JSON.stringify` writes them, depth at most 128. Non-JSON values (`undefined`, functions, symbols,
 * bigints, non-finite numbers, `Date` / `Map` / class instances, `__proto__` keys) throw
 * `ToolEffectError` `ERR_PRISM_TOOL_EFFECT_LIMIT`.
 */
export declare function canonicalToolEffectJson(value: unknown): string;

/** SHA-256 hex of `canonicalToolEffectJson(args)`. */
export declare function toolEffectArgumentsHash(args: { readonly [key: string]: unknown }): string;

/**
 * The only authoritative effect key: `prism:tool-effect:v1:` + SHA-256 hex of the canonical JSON of
 * `{ tenantId, accountId, userId, principalId, sessionId, runId, toolCallId, toolName, argumentsHash }`
 * (tenant / account / user from `ownership`, `accountId` / `userId` `null` when unset, `principalId` =
 * `identity.principal.id`). Missing fields throw `ERR_PRISM_TOOL_EFFECT_LIMIT`.
 */
export declare function deriveToolEffectKey(input: ToolEffectKeyInput): string;

/**
 * The tool's effect declaration for these arguments: the static declaration, or what its classifier
 * returns (called synchronously with the arguments and a frozen {@link ToolEffectClassifierContext});
 * `undefined` when the tool declares none. An invalid declaration (unknown strings, `kind: "none"` with
 * another idempotency, a Promise) throws `ToolEffectError` `ERR_PRISM_TOOL_EFFECT_LIMIT`
 * `tool effect declaration is invalid`; a classifier's own throw propagates unchanged.
 */
export declare function resolveToolEffectDeclaration(
  tool: ToolEffectTool,
  args: { readonly [key: string]: unknown },
  context: Partial<ToolEffectClassifierContext>,
): ToolEffectDeclaration | undefined;

/** Active: `verified === true`, `issuedAt` parseable and at most a minute ahead, not expired, not revoked, bounded shape. */
export declare function isAgentIdentityActive(identity: unknown, options?: IdentityCheckOptions): boolean;

/** Active, and each field `ownership` sets equals the identity's. */
export declare function identityMatchesOwnership(identity: unknown, ownership?: OwnershipScope, options?: IdentityCheckOptions): boolean;

/** Throws {@link IdentityError} (with its `reason`) unless the identity is active. */
export declare function assertIdentityActive(identity: unknown, options?: IdentityCheckOptions): void;

/** Throws {@link IdentityError} unless the identity is active and owns `ownership`. */
export declare function assertIdentityMatchesOwnership(identity: unknown, ownership?: OwnershipScope): void;

/** The in-process reference store. */
export declare function createMemoryToolEffectStore(options?: MemoryToolEffectStoreOptions): NativeToolEffectStore;

/**
 * The embedded durable store: a SQLite file (WAL, busy timeout, one `BEGIN IMMEDIATE` transaction per
 * transition), safe for several processes on one machine sharing the file.
 */
export declare function createSqliteToolEffectStore(path: string, options?: SqliteToolEffectStoreOptions): SqliteToolEffectStore;
