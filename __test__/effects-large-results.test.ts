// A result larger than a store keeps (64 KiB by default) must not make a completed call unknown: the
// call returns its value, the record completes with `resultOmitted: { bytes, sha256 }` in place of the
// value, and a retry of the same key never executes again (it gets ERR_PRISM_TOOL_EFFECT_COMPLETED).
// The same answer from the memory, SQLite and PostgreSQL stores.
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { AgentIdentity, ToolDefinition, ToolEffectStore } from "../index.js";
import { createPostgresToolEffectStore } from "../postgres/index.js";
import { serviceIdentity as identity } from "./helpers/service-identity.mjs";
import { freshSchema, postgresUrl } from "./helpers/postgres.js";

const require = createRequire(import.meta.url);
const api: typeof import("../index.js") = require("../index.js");
const { createMemoryToolEffectStore, createSqliteToolEffectStore, createToolRegistry, dispatchToolCall, toolEffectArgumentsHash, deriveToolEffectKey } = api;

const dir = mkdtempSync(join(tmpdir(), "prism-effects-large-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let dbs = 0;
const db = () => join(dir, `large-${++dbs}.db`);

const BIG = "x".repeat(70 * 1024);

interface Made {
  store: ToolEffectStore;
  close(): Promise<void> | void;
}
const kinds: Array<[string, (options?: { maxResultBytes?: number }) => Made]> = [
  ["memory", (o) => ({ store: createMemoryToolEffectStore(o), close() {} })],
  [
    "sqlite",
    (o) => {
      const s = createSqliteToolEffectStore(db(), o);
      return { store: s, close: () => s.close() };
    },
  ],
  [
    "postgres",
    (o) => {
      const s = createPostgresToolEffectStore({ connectionString: postgresUrl(), schema: freshSchema("large"), ...o });
      return { store: s, close: () => s.close() };
    },
  ],
];

function chargeTool(calls: { n: number }, value = BIG): ToolDefinition {
  return {
    name: "report.export",
    description: "exports a large report",
    parameters: { type: "object", properties: { id: { type: "string" } } },
    effect: { kind: "external_mutation", idempotency: "required" },
    execute(_args, ctx) {
      calls.n += 1;
      return { toolCallId: ctx.toolCallId, name: "report.export", value };
    },
  };
}

function keyOf(callId: string, args: unknown) {
  const ownership = { tenantId: "tenant" };
  const argumentsHash = toolEffectArgumentsHash(args);
  const base = { identity, ownership, sessionId: "s1", runId: "r1", toolCallId: callId, toolName: "report.export", argumentsHash };
  return { ...base, key: deriveToolEffectKey(base) };
}

describe.each(kinds)("a result larger than the %s store keeps", (_kind, make) => {
  it("completes the call with its value, keeps a digest, and never runs the key again", async () => {
    const { store, close } = make();
    try {
      const calls = { n: 0 };
      const registry = createToolRegistry([chargeTool(calls)]);
      const args = { id: "r-1" };
      const opts = {
        call: { type: "tool_call" as const, id: "call_big", name: "report.export", arguments: args },
        registry,
        context: { sessionId: "s1", runId: "r1", toolCallId: "call_big" },
        effectStore: store,
        identity,
      };
      const first = await dispatchToolCall(opts);
      expect(first.error).toBeUndefined();
      expect(first.value).toBe(BIG);
      expect(calls.n).toBe(1);

      const record = await store.get(keyOf("call_big", args));
      const text = JSON.stringify({ toolCallId: "call_big", name: "report.export", value: BIG });
      expect(record).toMatchObject({
        status: "completed",
        resultOmitted: { bytes: Buffer.byteLength(text), sha256: createHash("sha256").update(text).digest("hex") },
      });
      expect(record).not.toHaveProperty("result");

      // The retry of the same key: refused as completed without a replayable result, never run again.
      const again = await dispatchToolCall(opts);
      expect(calls.n).toBe(1);
      expect(again.error).toMatchObject({ code: "ERR_PRISM_TOOL_EFFECT_COMPLETED" });
    } finally {
      await close();
    }
  });

  it("completes through the store's own complete() with resultOmitted, and replays it from begin()", async () => {
    const { store, close } = make();
    try {
      const k = keyOf("call_direct", { id: "d" });
      const begun = await store.begin(k);
      expect(begun.outcome).toBe("acquired");
      const claim = { ...k, claimToken: begun.record.claimToken! };
      const d = await store.markDispatched({ ...claim, expectedVersion: begun.record.version });
      const done = await store.complete({
        ...claim,
        expectedVersion: d.version,
        result: { toolCallId: "call_direct", name: "report.export", value: BIG },
        resultRef: "s3://reports/d",
      });
      expect(done.status).toBe("completed");
      expect(done.result).toBeUndefined();
      expect(done.resultRef).toBe("s3://reports/d");
      expect(done.resultOmitted?.bytes).toBeGreaterThan(70 * 1024);
      const replay = await store.begin(k);
      expect(replay).toMatchObject({ outcome: "existing", record: { status: "completed", resultOmitted: done.resultOmitted } });
      expect(replay.record.claimToken).toBeUndefined();
    } finally {
      await close();
    }
  });

  it("keeps the value when maxResultBytes allows it, and refuses a bad maxResultBytes", async () => {
    const { store, close } = make({ maxResultBytes: 256 * 1024 });
    try {
      const calls = { n: 0 };
      const registry = createToolRegistry([chargeTool(calls)]);
      const opts = {
        call: { type: "tool_call" as const, id: "call_kept", name: "report.export", arguments: { id: "k" } },
        registry,
        context: { sessionId: "s1", runId: "r1", toolCallId: "call_kept" },
        effectStore: store,
        identity,
      };
      expect((await dispatchToolCall(opts)).value).toBe(BIG);
      const replay = await dispatchToolCall(opts);
      expect(replay.value).toBe(BIG);
      expect(calls.n).toBe(1);
      const record = await store.get(keyOf("call_kept", { id: "k" }));
      expect(record?.resultOmitted).toBeUndefined();
    } finally {
      await close();
    }
    for (const bad of [0, -1, 1.5, 17 * 1024 * 1024, "64k"]) {
      expect(() => make({ maxResultBytes: bad as number }), String(bad)).toThrow(/maxResultBytes must be an integer from 1 to 16777216/);
    }
  });
});
