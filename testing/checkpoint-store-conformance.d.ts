import type { CheckpointStore } from "../types/approval";
import type { StoreUnderTest } from "./store-conformance";

export interface CheckpointStoreConformanceOptions {
  /** Namespace of the keys (default `prism.conformance`); each run uses fresh keys and a fresh tenant. */
  readonly namespace?: string;
}

/**
 * Resolves when the store keeps the CheckpointStore contract: null for an absent key, saved values copied
 * in and out, compare-and-swap on the version (`ERR_PRISM_CHECKPOINT_CONFLICT`), strictly increasing
 * versions, fencing tokens, exact ownership, one winner of two racing saves, filtered and paged lists,
 * and delete. Rejects with an `Error` naming the first broken rule.
 */
export declare function assertCheckpointStoreConforms(
  store: StoreUnderTest<CheckpointStore>,
  options?: CheckpointStoreConformanceOptions,
): Promise<void>;

/** The same kit under `@arnilo/prism`'s naming. */
export declare const runCheckpointStoreConformance: typeof assertCheckpointStoreConforms;
