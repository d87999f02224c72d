// Type check: uses every export the way a user would. `tsc -p __test__/tsconfig.json` must pass.
import { nativeVersion } from "../index.js";

const version: string = nativeVersion();
void version;

// Recoverable tool effects and run ledgers.
import {
  ToolEffectError,
  IdentityError,
  canonicalToolEffectJson,
  toolEffectArgumentsHash,
  deriveToolEffectKey,
  resolveToolEffectDeclaration,
  isAgentIdentityActive,
  identityMatchesOwnership,
  assertIdentityActive,
  assertIdentityMatchesOwnership,
  createMemoryToolEffectStore,
  createSqliteToolEffectStore,
  createMemoryRunLedger,
  createSqliteRunLedger,
  type AgentIdentity,
  type ToolEffectDeclaration,
  type ToolEffectClassifier,
  type ToolEffectKey,
  type ToolEffectStore,
  type ToolEffectRecord,
  type RunLedger,
  type ToolCallRecord,
} from "../index.js";
import { assertToolEffectStoreConforms } from "../testing/tool-effect-store-conformance.js";

const identity: AgentIdentity = {
  tenantId: "t",
  principal: { kind: "service", id: "svc" },
  scopes: ["tools:execute"],
  issuedAt: "2026-01-01T00:00:00.000Z",
  verified: true,
};
const declaration: ToolEffectDeclaration = { kind: "external_mutation", idempotency: "required" };
const classify: ToolEffectClassifier = (args) => (args.dryRun ? { kind: "none", idempotency: "none" } : declaration);
const resolved: ToolEffectDeclaration | undefined = resolveToolEffectDeclaration({ effect: classify }, { dryRun: false }, { sessionId: "s" });
const canonical: string = canonicalToolEffectJson({ b: 1, a: 2 });
const argumentsHash: string = toolEffectArgumentsHash({ amount: 5 });
const base = { identity, ownership: { tenantId: "t" }, sessionId: "s", runId: "r", toolCallId: "c", toolName: "pay", argumentsHash };
const effectKey: ToolEffectKey = { ...base, key: deriveToolEffectKey(base) };
const active: boolean = isAgentIdentityActive(identity, { now: Date.now() }) && identityMatchesOwnership(identity, { tenantId: "t" });
assertIdentityActive(identity);
assertIdentityMatchesOwnership(identity, { tenantId: "t" });
const memoryStore = createMemoryToolEffectStore({ now: () => Date.now() });
const sqliteStore = createSqliteToolEffectStore("/tmp/effects.db", { busyTimeoutMs: 5000, synchronous: "full" });
const asContract: ToolEffectStore = sqliteStore;
const begun = memoryStore.begin({ ...effectKey, claimTtlMs: 60_000, maxAttempts: 3 });
if (begun.outcome === "acquired" && begun.record.claimToken) {
  const t = { ...effectKey, claimToken: begun.record.claimToken, expectedVersion: begun.record.version };
  const dispatched: ToolEffectRecord = memoryStore.markDispatched(t);
  memoryStore.complete({ ...t, expectedVersion: dispatched.version, result: { toolCallId: "c", name: "pay", value: 1 } });
  memoryStore.fail({ ...t, status: "failed_terminal", failure: { code: "x" } });
  memoryStore.markUnknown({ ...t, failure: { code: "x" } });
  memoryStore.resolveUnknown({ ...effectKey, expectedVersion: 4, status: "completed" });
}
const seen: ToolEffectRecord | undefined = memoryStore.get(effectKey);
const { deleted }: { deleted: number } = memoryStore.cleanup({ ownership: { tenantId: "t" }, before: new Date().toISOString(), limit: 100 });
void assertToolEffectStoreConforms(() => memoryStore, { identity });
sqliteStore.close();
const err = new ToolEffectError("ERR_PRISM_TOOL_EFFECT_UNKNOWN", "tool effect outcome requires reconciliation");
const code: "ERR_PRISM_TOOL_EFFECT_UNKNOWN" | string = err.code;
const idErr: string = new IdentityError("Identity has expired", "expired").reason;
const ledger: RunLedger = createMemoryRunLedger();
const sqliteLedger = createSqliteRunLedger("/tmp/ledger.db", { batchSize: 512, flushIntervalMs: 10, maxPendingRows: 8192, synchronous: "normal" });
const toolRow: ToolCallRecord = {
  id: "1", sessionId: "s", runId: "r", toolCallId: "c", name: "pay", arguments: {}, status: "started",
  startedAt: new Date().toISOString(), redacted: false,
};
void ledger.appendToolCall(toolRow);
sqliteLedger.appendToolCall(toolRow);
sqliteLedger.appendRun({ id: "r" });
sqliteLedger.flush();
const rows: ToolCallRecord[] = sqliteLedger.list();
sqliteLedger.close();
void [resolved, canonical, active, asContract, seen, deleted, code, idErr, rows];
