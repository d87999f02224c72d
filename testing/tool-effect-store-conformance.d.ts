import type { AgentIdentity, OwnershipScope, ToolEffectStore } from "../types/effects";
import type { StoreUnderTest } from "./store-conformance";

export interface ToolEffectStoreConformanceOptions {
  /** Identity every key uses (default: a fixed verified service identity, tenant `tenant-conformance`). */
  readonly identity?: AgentIdentity;
  /** Ownership every key uses (default: the identity's tenant / account / user). */
  readonly ownership?: OwnershipScope;
  /** Prefix of the keys (default `prism:tool-effect:v1:`); each run appends fresh suffixes. */
  readonly keyPrefix?: string;
}

/**
 * Resolves when the store keeps the ToolEffectStore contract: claim, duplicate and replay, every claimed
 * transition refused with a wrong claim token or a stale version (`ERR_PRISM_TOOL_EFFECT_CONFLICT`),
 * dispatched and unknown never re-claimed, retry attempts, bounded results, ownership, and cleanup. Rejects
 * with an `Error` naming the first broken rule.
 */
export declare function assertToolEffectStoreConforms(
  store: StoreUnderTest<ToolEffectStore>,
  options?: ToolEffectStoreConformanceOptions,
): Promise<void>;

/** The same kit under `@arnilo/prism`'s other name. */
export declare const runToolEffectStoreConformance: typeof assertToolEffectStoreConforms;
