// Type check of the `prism-tools-native/postgres` subpath as a host uses it (compiled by `npm run typecheck`).
import { createPostgresCheckpointStore, createPostgresRunLedger, createPostgresToolEffectStore, type PostgresToolEffectStore } from "prism-tools-native/postgres";
import { dispatchToolCall, createToolRegistry, type CheckpointStore, type ToolEffectStore, type RunLedger } from "prism-tools-native";

export async function usage(url: string): Promise<void> {
  const store: PostgresToolEffectStore = createPostgresToolEffectStore({ connectionString: url, schema: "app", maxConnections: 4 });
  const asStore: ToolEffectStore = store;
  const ledger = createPostgresRunLedger(url, "app");
  const asLedger: RunLedger = ledger;
  await store.ready();
  const registry = createToolRegistry([]);
  await dispatchToolCall({
    call: { type: "tool_call", id: "c", name: "x", arguments: {} },
    registry,
    context: { sessionId: "s", runId: "r", toolCallId: "c" },
    effectStore: asStore,
    ledger: asLedger,
  });
  const flushed: number = (await ledger.flush()).flushed;
  const rows = await ledger.list("run", 10);
  void flushed;
  void rows;
  // A pg Pool (any object with its options, query and connect) works too.
  createPostgresToolEffectStore({ options: { host: "127.0.0.1", port: 5432 }, query() {}, connect() {} }, "app");
  // Durable agent runs resumed by any worker: `runState: { checkpoints, definitionRevision }`.
  const checkpoints = createPostgresCheckpointStore({ connectionString: url, schema: "app", maxValueBytes: 1 << 20 });
  const asCheckpoints: CheckpointStore = checkpoints;
  await checkpoints.ready();
  const page = await asCheckpoints.listCheckpoints({ namespace: "prism.agent-run", limit: 10 });
  void page.nextCursor;
  await Promise.all([store.close(), ledger.close(), checkpoints.close()]);
}
