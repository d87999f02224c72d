// PostgreSQL tool effect store, run ledger and checkpoint store (`prism-tools-native/postgres`, docs/postgres.md).
import type { Promised, ToolEffectStore } from "./effects";
import type { CheckpointStore } from "./approval";
import type { RunLedger, RunLedgerObject, RunLedgerRecordKind, ToolCallRecord } from "./ledger";

/** The part of a `pg` `Pool` the store reads: its connection settings (`pool.options`). */
export interface PgPoolLike {
  readonly options?: {
    readonly connectionString?: string;
    readonly host?: string;
    readonly port?: number;
    readonly user?: string;
    readonly password?: string;
    readonly database?: string;
    readonly ssl?: unknown;
  };
  query(...args: never[]): unknown;
  connect(...args: never[]): unknown;
}

export interface PostgresConnectionOptions {
  /** `postgres://user:password@host:port/database` (TLS is not supported yet). */
  readonly connectionString: string;
  /** Schema for the tables, created and migrated when absent: `^[a-z_][a-z0-9_]{0,62}$`. Default `"prism"`. */
  readonly schema?: string;
  /** Time to connect before an operation fails (ms, 1–3 600 000). Default 10 000. */
  readonly connectTimeoutMs?: number;
  /** `statement_timeout` (and `lock_timeout`) of every connection (ms, 1–3 600 000). Default 30 000. */
  readonly statementTimeoutMs?: number;
}

export interface PostgresToolEffectStoreOptions extends PostgresConnectionOptions {
  /** Connections the store keeps (1–64). Default 8. */
  readonly maxConnections?: number;
  /** Replaces the clock (epoch ms), e.g. to test lease expiry. */
  readonly now?: () => number;
  /**
   * The largest result kept (bytes of its `JSON.stringify` text; 1 – 16 777 216, default 65 536). A
   * larger one completes its record with `resultOmitted` instead of the value.
   */
  readonly maxResultBytes?: number;
  /**
   * The lease of a claim whose `begin` names no `claimTtlMs` (ms, 1 – 3 600 000, default 900 000): how
   * long a claim left `pending` (its worker died, the server restarted) blocks its key.
   */
  readonly claimTtlMs?: number;
}

/**
 * A `ToolEffectStore` whose every method returns a promise and runs off the JS thread. Failures of the
 * database that wrote nothing reject with an `Error` whose `code` is `ERR_PRISM_TOOL_EFFECT_STORE` and whose
 * message names the cause (safe to retry); a commit whose answer was lost rejects with `ToolEffectError`
 * `ERR_PRISM_TOOL_EFFECT_UNKNOWN`; contract refusals are `ToolEffectError` / `IdentityError` as with every store.
 */
export interface PostgresToolEffectStore extends Promised<ToolEffectStore> {
  /** Resolves once connected and migrated; rejects with the connection or migration failure. */
  ready(): Promise<void>;
  /** Closes the connections; later calls reject with `ERR_PRISM_TOOL_EFFECT_STORE`. */
  close(): Promise<void>;
}

/**
 * `createPostgresToolEffectStore(pool, schema)` (upstream's shape: the store connects with the pool's
 * settings), `(connectionString, schema?)` or `(options)`.
 */
export declare function createPostgresToolEffectStore(pool: PgPoolLike, schema?: string): PostgresToolEffectStore;
export declare function createPostgresToolEffectStore(connectionString: string, schema?: string): PostgresToolEffectStore;
export declare function createPostgresToolEffectStore(options: PostgresToolEffectStoreOptions): PostgresToolEffectStore;

export interface PostgresRunLedgerOptions extends PostgresConnectionOptions {
  /** Rows per insert (1–10 000). Default 512. */
  readonly batchSize?: number;
  /** Longest a queued row waits before its batch is written (ms). Default 10. */
  readonly flushIntervalMs?: number;
  /** Rows waiting for the database before appends throw `ERR_PRISM_LEDGER`. Default 65 536. */
  readonly maxPendingRows?: number;
}

/** `{ accepted, flushed, buffered }`: rows appended, committed, and waiting. */
export interface RunLedgerFlushResult {
  readonly accepted: number;
  readonly flushed: number;
  readonly buffered: number;
}

/**
 * A `RunLedger` shared by many workers. Appends return at once (a row that cannot be stored whole — over
 * 1 MiB, a BigInt, a cycle — is stored as its identifying fields plus `truncated`); a writer thread
 * inserts them in batches, in append order, and keeps them through a database outage.
 */
export interface PostgresRunLedger extends RunLedger {
  readonly durability: "buffered";
  appendToolCall(record: ToolCallRecord): void;
  appendRun(record: RunLedgerObject): void;
  appendEvent(record: RunLedgerObject): void;
  appendUsage(record: RunLedgerObject): void;
  status(): RunLedgerFlushResult;
  /** Resolves once every row appended so far is committed; rejects with `ERR_PRISM_LEDGER` after `timeoutMs` (default 30 000). */
  flush(timeoutMs?: number): Promise<RunLedgerFlushResult>;
  /** Records of one kind (default `"tool_call"`) in append order. */
  list(kind?: "tool_call", limit?: number): Promise<ToolCallRecord[]>;
  list(kind: RunLedgerRecordKind, limit?: number): Promise<RunLedgerObject[]>;
  ready(): Promise<void>;
  /** Flushes within `timeoutMs`, then stops the writer; later appends throw. */
  close(timeoutMs?: number): Promise<void>;
  dispose(options?: { readonly flush?: boolean }): Promise<void>;
}

export declare function createPostgresRunLedger(pool: PgPoolLike, schema?: string): PostgresRunLedger;
export declare function createPostgresRunLedger(connectionString: string, schema?: string): PostgresRunLedger;
export declare function createPostgresRunLedger(options: PostgresRunLedgerOptions): PostgresRunLedger;

export interface PostgresCheckpointStoreOptions extends PostgresConnectionOptions {
  /** Largest JSON value in bytes (default 1 MiB): a larger save rejects with `RangeError`. */
  maxValueBytes?: number;
  /** Largest list page (default 500). */
  maxPageSize?: number;
}

/**
 * A `CheckpointStore` whose every method runs off the JS thread: durable agent runs suspended by one
 * worker and resumed by another. Conflicts reject with `CheckpointConflictError`
 * (`ERR_PRISM_CHECKPOINT_CONFLICT`); database failures with an `Error` naming the cause.
 */
export interface PostgresCheckpointStore extends CheckpointStore {
  /** Resolves once connected and migrated; rejects with the connection or migration failure. */
  ready(): Promise<void>;
  /** Closes the connections; later calls reject. */
  close(): Promise<void>;
}

export declare function createPostgresCheckpointStore(pool: PgPoolLike, schema?: string): PostgresCheckpointStore;
export declare function createPostgresCheckpointStore(connectionString: string, schema?: string): PostgresCheckpointStore;
export declare function createPostgresCheckpointStore(options: PostgresCheckpointStoreOptions): PostgresCheckpointStore;
