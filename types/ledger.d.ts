// Run ledgers: write-side adapters dispatch appends ToolCallRecord rows to.

import type { OwnershipScope } from "./effects";
import type { BlockedReason, ToolResult } from "./harness";

export type ToolCallStatus = "started" | "finished" | "error" | "blocked";

/** One tool-call ledger row (SPEC section 3). */
export interface ToolCallRecord extends OwnershipScope {
  readonly id: string;
  readonly sessionId: string;
  readonly runId?: string;
  readonly entryId?: string;
  readonly toolCallId: string;
  readonly name: string;
  readonly arguments: { readonly [key: string]: unknown };
  readonly result?: ToolResult;
  readonly status?: ToolCallStatus;
  readonly reason?: BlockedReason;
  readonly progress?: unknown;
  readonly progressMetadata?: Readonly<Record<string, unknown>>;
  readonly progressAt?: string;
  readonly startedAt: string;
  readonly finishedAt?: string;
  readonly redacted: boolean;
  readonly metadata?: Readonly<Record<string, unknown>>;
}

/** A JSON object appended through `appendRun`, `appendEvent` or `appendUsage`. */
export type RunLedgerObject = { readonly [key: string]: unknown };

/** Which append method stored a row. */
export type RunLedgerRecordKind = "tool_call" | "run" | "event" | "usage";

/** The write side dispatch uses. Each method may return a value or a Promise. */
export interface RunLedger {
  appendToolCall(record: ToolCallRecord): void | Promise<void>;
  appendRun?(record: RunLedgerObject): void | Promise<void>;
  appendEvent?(record: RunLedgerObject): void | Promise<void>;
  appendUsage?(record: RunLedgerObject): void | Promise<void>;
}

/**
 * A built-in ledger. Appends store a JSON snapshot of the record (at most 1 MiB; not an object or not
 * serialisable → `Error`) and return synchronously.
 */
export interface NativeRunLedger extends RunLedger {
  appendToolCall(record: ToolCallRecord): void;
  appendRun(record: RunLedgerObject): void;
  appendEvent(record: RunLedgerObject): void;
  appendUsage(record: RunLedgerObject): void;
  /** Records of one kind in append order (default `"tool_call"`). */
  list(kind?: "tool_call"): ToolCallRecord[];
  list(kind: RunLedgerRecordKind): RunLedgerObject[];
  /** Commits every row appended so far (SQLite); a no-op in memory. */
  flush(): void;
  /** Commits every queued row and closes the file; later appends throw. Idempotent. */
  close(): void;
}

export interface SqliteRunLedgerOptions {
  /** Rows per commit (default 512). */
  readonly batchSize?: number;
  /** Longest a queued row waits for its commit, in ms (default 10). */
  readonly flushIntervalMs?: number;
  /** Rows queued before `append` waits for the writer (default 8 192): what a killed process can lose at most. */
  readonly maxPendingRows?: number;
  /** How long a commit waits for another process's write lock (ms, default 5 000). */
  readonly busyTimeoutMs?: number;
  /** `"normal"` (default) survives a killed process; `"full"` also survives power loss. */
  readonly synchronous?: "full" | "normal";
}

/** Rows in memory, in order: for tests and examples. */
export declare function createMemoryRunLedger(): NativeRunLedger;

/**
 * Rows in a SQLite file (WAL). Appends are queued and committed in batches by a writer thread, in append
 * order; `close()` (also run when the process ends, including `process.exit()`) commits every queued row. A process
 * killed without closing loses the rows not yet committed — at most `maxPendingRows`, in practice the rows
 * of the last `flushIntervalMs` plus the batch in flight.
 */
export declare function createSqliteRunLedger(path: string, options?: SqliteRunLedgerOptions): NativeRunLedger;
