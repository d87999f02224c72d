// Run ledgers: write-side adapters dispatch appends ToolCallRecord rows to.

import type { OwnershipScope } from "./effects";
import type { AgentEvent, BlockedReason, ErrorInfo, ToolResult } from "./harness";
import type { Usage } from "./agent";

export type ToolCallStatus = "started" | "finished" | "error" | "blocked";

/** One tool-call ledger row (docs/spec.md section 3). */
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

// The run-level records below are type aliases (OwnershipScope's fields as `RunRowOwnership`), not
// interfaces: a ledger whose methods take them is still a `RunLedger`, whose `appendRun`,
// `appendEvent` and `appendUsage` take any `RunLedgerObject`.

/** `OwnershipScope`'s fields as a type alias, which (unlike the interface) a `RunLedgerObject` accepts. */
export type RunRowOwnership = {
  readonly tenantId?: string;
  readonly accountId?: string;
  readonly userId?: string;
};

/** A run's status in its ledger rows: `running` when it starts, then how it ended. */
export type RunStatus = "queued" | "running" | "suspended" | "denied" | "succeeded" | "failed" | "aborted";

/**
 * The run row the agent loop appends through `appendRun` (docs/agent.md "Run ledger rows"): one with
 * `status: "running"` when a run starts and one with its end status, `finishedAt`, `abortReason` (an
 * aborted signal's reason) and `error` (a failed or aborted run) when it ends.
 */
export type RunRecord = RunRowOwnership & {
  readonly id: string;
  readonly sessionId: string;
  readonly branchId?: string;
  readonly model?: unknown;
  readonly provider?: string;
  readonly idempotencyKey?: string;
  readonly status?: RunStatus;
  readonly startedAt: string;
  readonly finishedAt?: string;
  readonly abortReason?: string;
  readonly error?: ErrorInfo;
  readonly metadata?: Readonly<Record<string, unknown>>;
};

/** One agent event of a run, appended through `appendEvent`; `redacted` when the run has a redactor. */
export type AgentEventRecord = RunRowOwnership & {
  readonly id: string;
  readonly sessionId: string;
  readonly runId?: string;
  readonly sequence?: number;
  readonly entryId?: string;
  readonly type: string;
  readonly timestamp: string;
  readonly event: AgentEvent;
  readonly redacted: boolean;
  readonly metadata?: Readonly<Record<string, unknown>>;
};

/** `provider_turn`: one provider attempt's usage; `run_total`: the run's aggregate (never sum the two). */
export type UsageScope = "provider_turn" | "run_total";

/** A usage row, appended through `appendUsage`. */
export type UsageRecord = RunRowOwnership & {
  readonly id: string;
  readonly sessionId: string;
  readonly runId?: string;
  readonly entryId?: string;
  readonly scope: UsageScope;
  readonly turn?: number;
  readonly attempt?: number;
  readonly usage: Usage;
  readonly recordedAt: string;
  readonly metadata?: Readonly<Record<string, unknown>>;
};

/** Any record a `RunLedger` is handed. */
export type RunLedgerRecord = RunRecord | AgentEventRecord | ToolCallRecord | UsageRecord;

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
 * A built-in ledger. Appends store a JSON snapshot of the record and return synchronously. Every object
 * row is kept: what JSON cannot hold or what exceeds 1 MiB is replaced by a marker — a BigInt by its
 * decimal digits as a string, an ancestor cycle by `"[Circular]"`, nesting deeper than 32 by
 * `"[MaxDepth]"`, a throwing getter or `toJSON` by `"[Unreadable]"`, the tail of a long string or array by
 * `"[Truncated]"`. A record that is not an object throws `TypeError` (`ERR_PRISM_LEDGER`); a closed
 * ledger or a storage failure throws `Error` (`ERR_PRISM_LEDGER`). The methods are own properties, so
 * `{ ...ledger, appendRun() {…} }` keeps the rest working.
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
  /**
   * Commits every queued row and closes the ledger (SQLite: its file); later appends throw `Error`
   * `run ledger is closed` (`ERR_PRISM_LEDGER`). A closed memory ledger still lists its rows. Idempotent.
   */
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

export type RunLedgerDurability = "write_through" | "flush_on_terminal" | "buffered";

export interface RunLedgerFlushResult {
  readonly accepted: number;
  readonly flushed: number;
  readonly buffered: number;
}

/** A ledger that acknowledges appends once queued; `flush()` acknowledges writes. */
export interface FlushableRunLedger extends RunLedger {
  readonly durability: RunLedgerDurability;
  appendToolCall(record: ToolCallRecord): Promise<void>;
  appendRun(record: RunLedgerObject): Promise<void>;
  appendEvent(record: RunLedgerObject): Promise<void>;
  appendUsage(record: RunLedgerObject): Promise<void>;
  /** Writes every queued record to the target in order; a failed write stays queued and rejects. */
  flush(): Promise<RunLedgerFlushResult>;
  status(): RunLedgerFlushResult;
  /** Refuses later appends; flushes first unless `{ flush: false }`, which drops the queue. */
  dispose(options?: { readonly flush?: boolean }): Promise<void>;
}

export interface BatchedRunLedgerOptions {
  /** A flush fires once this many records are queued (default 128, at most 4 096). */
  readonly maxBatchEntries?: number;
  /** A flush fires once the queued JSON reaches this many bytes (default 512 KiB, at most 8 MiB). */
  readonly maxBatchBytes?: number;
  /** An append flushes first rather than queue more records than this (default 2 × maxBatchEntries). */
  readonly maxBufferedEntries?: number;
  /** An append flushes first rather than queue more bytes than this (default 2 × maxBatchBytes). */
  readonly maxBufferedBytes?: number;
  /** Longest a queued record waits for its flush, in ms (default 25, at most 60 000). */
  readonly maxDelayMs?: number;
  /** `"flush_on_terminal"` (default): a run row with a terminal status flushes; `"write_through"`: every append. */
  readonly durability?: RunLedgerDurability;
}

/**
 * Wraps any `RunLedger` with one bounded FIFO (writes still go to `target` one record at a time, in
 * order). A record larger than the byte bounds rejects with `RangeError` `run ledger record exceeds byte
 * limit`; an option outside its range throws `RangeError` `<name> must be an integer in [1, <max>]`.
 */
export declare function createBatchedRunLedger(target: RunLedger, options?: BatchedRunLedgerOptions): FlushableRunLedger;
export declare function isFlushableRunLedger(ledger: RunLedger): ledger is FlushableRunLedger;
export declare const DEFAULT_LEDGER_BATCH_ENTRIES: 128;
export declare const HARD_LEDGER_BATCH_ENTRIES: 4096;
export declare const DEFAULT_LEDGER_BATCH_BYTES: number;
export declare const HARD_LEDGER_BATCH_BYTES: number;
export declare const DEFAULT_LEDGER_BATCH_DELAY_MS: 25;
export declare const HARD_LEDGER_BATCH_DELAY_MS: 60000;
