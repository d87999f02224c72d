import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import * as esm from "../index.mjs";
import type { AgentIdentity, NativeToolEffectStore, ToolEffectKey, ToolEffectStore } from "../index.js";
import { effectKey, serviceIdentity as identity } from "./helpers/service-identity.mjs";
import { codeOf } from "./helpers/thrown.js";

const require = createRequire(import.meta.url);
const cjs: typeof import("../index.js") = require("../index.js");
const conformance: typeof import("../testing/tool-effect-store-conformance.js") = require("prism-tools-native/testing/tool-effect-store-conformance");
const {
  ToolEffectError,
  IdentityError,
  canonicalToolEffectJson,
  toolEffectArgumentsHash,
  deriveToolEffectKey,
  resolveToolEffectDeclaration,
  isAgentIdentityActive,
  identityMatchesOwnership,
  assertIdentityActive,
  createMemoryToolEffectStore,
  createSqliteToolEffectStore,
} = cjs;

const dir = mkdtempSync(join(tmpdir(), "prism-effects-test-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let dbs = 0;
const db = () => join(dir, `effects-${++dbs}.db`);
const child = join(__dirname, "helpers", "effect-child.mjs");

async function rejectedCode(run: () => unknown): Promise<string | undefined> {
  try {
    await run();
  } catch (e) {
    return (e as { code?: string }).code;
  }
  return undefined;
}

describe("canonical JSON, hashes and keys", () => {
  it("is the same text @arnilo/prism hashes: sorted keys as JavaScript enumerates them, JSON.stringify numbers", () => {
    expect(canonicalToolEffectJson({ b: 1, 10: 2, 2: 3, a: [3, { z: null, y: "é\n" }], n: 1.5e-7, big: 1e21, neg: -0 })).toBe(
      '{"2":3,"10":2,"a":[3,{"y":"é\\n","z":null}],"b":1,"big":1e+21,"n":1.5e-7,"neg":0}',
    );
    expect(canonicalToolEffectJson(Object.assign(Object.create(null), { y: 1, x: 2 }))).toBe('{"x":2,"y":1}');
    expect(toolEffectArgumentsHash({ to: "a@b.c", amount: 5 })).toBe(toolEffectArgumentsHash({ amount: 5, to: "a@b.c" }));
    expect(toolEffectArgumentsHash({})).toBe(createHash("sha256").update("{}").digest("hex"));
  });

  it("derives prism:tool-effect:v1:<sha256> over the documented object", () => {
    const k = effectKey("call-1");
    const reference = JSON.stringify({
      accountId: null,
      argumentsHash: k.argumentsHash,
      principalId: "payments",
      runId: "run",
      sessionId: "session",
      tenantId: "tenant",
      toolCallId: "call-1",
      toolName: "charge",
      userId: null,
    });
    expect(k.key).toBe(`prism:tool-effect:v1:${createHash("sha256").update(reference).digest("hex")}`);
    expect(effectKey("call-1", { amount: 6 }).key).not.toBe(k.key);
    expect(deriveToolEffectKey({ ...k, ownership: { tenantId: "tenant", userId: "u" } })).not.toBe(k.key);
  });

  it("refuses every value that is not JSON with ERR_PRISM_TOOL_EFFECT_LIMIT", () => {
    let deep: unknown = 1;
    for (let i = 0; i < 200; i++) deep = [deep];
    const refused = [
      { d: new Date(0) },
      { m: new Map() },
      { u: undefined },
      { f: () => 1 },
      { s: Symbol("x") },
      { b: 1n },
      { n: Number.NaN },
      { i: Infinity },
      { c: new (class Point { x = 1 })() },
      JSON.parse('{"__proto__": {"x": 1}}'),
      deep,
    ];
    for (const value of refused) {
      let error: unknown;
      try {
        canonicalToolEffectJson(value);
      } catch (e) {
        error = e;
      }
      expect(error, String(value)).toBeInstanceOf(ToolEffectError);
      expect((error as InstanceType<typeof ToolEffectError>).code).toBe("ERR_PRISM_TOOL_EFFECT_LIMIT");
      expect((error as Error).message).toBe("tool effect values must be JSON");
    }
  });
});

describe("identity checks", () => {
  it("accepts an active identity and names each defect", () => {
    expect(isAgentIdentityActive(identity)).toBe(true);
    expect(isAgentIdentityActive({ ...identity, verified: false })).toBe(false);
    expect(isAgentIdentityActive({ ...identity, issuedAt: new Date(Date.now() + 30_000).toISOString() })).toBe(true);
    expect(isAgentIdentityActive({ ...identity, issuedAt: new Date(Date.now() + 120_000).toISOString() })).toBe(false);
    expect(isAgentIdentityActive({ ...identity, issuedAt: "not a date" })).toBe(false);
    expect(isAgentIdentityActive({ ...identity, issuedAt: "Thu, 01 Jan 2026 00:00:00 GMT" })).toBe(true);
    expect(isAgentIdentityActive({ ...identity, expiresAt: "2026-06-01T00:00:00Z" }, { now: Date.parse("2026-05-31T00:00:00Z") })).toBe(true);
    expect(isAgentIdentityActive({ ...identity, expiresAt: "2026-06-01T00:00:00Z" }, { now: Date.parse("2026-06-01T00:00:00Z") })).toBe(false);
    expect(isAgentIdentityActive({ ...identity, revokedAt: "2026-01-02T00:00:00Z" }, { now: Date.parse("2026-01-03T00:00:00Z") })).toBe(false);
    expect(isAgentIdentityActive(undefined)).toBe(false);
    let error: unknown;
    try {
      assertIdentityActive({ ...identity, revokedAt: "2020-01-01" });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(IdentityError);
    expect(error).toMatchObject({ code: "ERR_PRISM_IDENTITY", reason: "revoked", message: "Identity has been revoked" });
  });

  it("matches ownership field by field", () => {
    const withAccount = { ...identity, accountId: "acct" };
    expect(identityMatchesOwnership(withAccount, { tenantId: "tenant", accountId: "acct" })).toBe(true);
    expect(identityMatchesOwnership(withAccount, {})).toBe(true);
    expect(identityMatchesOwnership(withAccount, { tenantId: "other" })).toBe(false);
    expect(identityMatchesOwnership(withAccount, { userId: "u" })).toBe(false);
    expect(identityMatchesOwnership({ ...withAccount, verified: false } as unknown as AgentIdentity, {})).toBe(false);
  });
});

describe("resolveToolEffectDeclaration", () => {
  it("returns a static declaration or a classifier's, and refuses invalid ones", () => {
    const declaration = { kind: "external_mutation", idempotency: "required" } as const;
    expect(resolveToolEffectDeclaration({ effect: declaration }, {}, {})).toBe(declaration);
    expect(resolveToolEffectDeclaration({}, {}, {})).toBeUndefined();
    let seen: unknown;
    const classify = (args: { readonly [k: string]: unknown }, ctx: unknown) => {
      seen = ctx;
      return args.dryRun ? ({ kind: "none", idempotency: "none" } as const) : declaration;
    };
    expect(resolveToolEffectDeclaration({ effect: classify }, { dryRun: true }, { sessionId: "s", runId: "r", toolCallId: "c", metadata: { a: 1 } })).toEqual({
      kind: "none",
      idempotency: "none",
    });
    expect(seen).toEqual({ sessionId: "s", runId: "r", toolCallId: "c", signal: undefined, metadata: { a: 1 } });
    expect(Object.isFrozen(seen)).toBe(true);
    for (const effect of [
      { kind: "none", idempotency: "required" },
      { kind: "remote", idempotency: "none" },
      { kind: "local_mutation" },
      "external_mutation",
      () => Promise.resolve(declaration),
    ]) {
      expect(codeOf(() => resolveToolEffectDeclaration({ effect } as never, {}, {}))).toBe("ERR_PRISM_TOOL_EFFECT_LIMIT");
    }
    const boom = new Error("classifier failed");
    expect(() =>
      resolveToolEffectDeclaration({ effect: () => { throw boom; } }, {}, {}),
    ).toThrow(boom);
  });
});

const stores: Array<[string, () => NativeToolEffectStore]> = [
  ["memory", () => createMemoryToolEffectStore()],
  ["sqlite", () => createSqliteToolEffectStore(db())],
];

describe.each(stores)("%s store", (_name, make) => {
  it("passes the conformance kit", async () => {
    const store = make();
    await conformance.assertToolEffectStoreConforms(() => store);
    await conformance.assertToolEffectStoreConforms(store); // fresh keys: a second run on one store passes too
    store.close();
  });

  it("refuses a NUL in an identifier with a limit error that says so (one answer in every store)", async () => {
    const store = make();
    const nul = { ...identity, tenantId: "ten\u0000ant" };
    const base = { identity: nul, ownership: { tenantId: "ten\u0000ant" }, sessionId: "session", runId: "run", toolCallId: "nul", toolName: "charge", argumentsHash: toolEffectArgumentsHash({}) };
    const err = await Promise.resolve(store.begin({ ...base, key: deriveToolEffectKey(base) })).then(() => undefined, (e) => e);
    expect(err).toMatchObject({ name: "ToolEffectError", code: "ERR_PRISM_TOOL_EFFECT_LIMIT", message: "ownership must not contain NUL (U+0000)" });
    const sessionNul = { ...effectKey("nul2"), sessionId: "se\u0000ssion" };
    const err2 = await Promise.resolve(store.begin(sessionNul)).then(() => undefined, (e) => e);
    expect(err2).toMatchObject({ code: "ERR_PRISM_TOOL_EFFECT_LIMIT", message: "session id must not contain NUL (U+0000)" });
    store.close();
  });

  it("returns promises, rejects refusals, and keeps its methods through a spread", async () => {
    const store = make();
    const pending = store.begin(effectKey("sync"));
    expect(pending).toBeInstanceOf(Promise);
    expect((await pending).outcome).toBe("acquired");
    expect((await store.get(effectKey("sync")))?.status).toBe("pending");
    const refused = store.begin({ ...effectKey("x"), argumentsHash: "nope" });
    expect(refused).toBeInstanceOf(Promise);
    await expect(refused).rejects.toMatchObject({ code: "ERR_PRISM_TOOL_EFFECT_LIMIT" });
    // How hosts wrap a store: spread it and override one method; the others still work.
    const begun: string[] = [];
    const wrapped = { ...store, begin: (input: any) => (begun.push(input.key), store.begin(input)) };
    await conformance.assertToolEffectStoreConforms(() => wrapped);
    expect(begun.length).toBeGreaterThan(0);
    store.close();
  });

  it("refuses every claimed transition with a stale version or a wrong claim token", async () => {
    const store = make();
    const k = effectKey("cas");
    const { record } = await store.begin(k);
    const good = { ...k, claimToken: record.claimToken!, expectedVersion: record.version };
    const bad = [
      { ...good, expectedVersion: record.version - 1 },
      { ...good, expectedVersion: record.version + 1 },
      { ...good, claimToken: "forged" },
    ];
    for (const t of bad) {
      expect(await rejectedCode(() => store.markDispatched(t))).toBe("ERR_PRISM_TOOL_EFFECT_CONFLICT");
      expect(await rejectedCode(() => store.fail({ ...t, status: "failed_terminal", failure: { code: "x" } }))).toBe("ERR_PRISM_TOOL_EFFECT_CONFLICT");
    }
    const d = await store.markDispatched(good);
    const dGood = { ...k, claimToken: d.claimToken!, expectedVersion: d.version };
    for (const t of [{ ...dGood, expectedVersion: d.version - 1 }, { ...dGood, claimToken: "forged" }]) {
      expect(await rejectedCode(() => store.complete({ ...t, result: { toolCallId: "cas", name: "charge" } }))).toBe("ERR_PRISM_TOOL_EFFECT_CONFLICT");
      expect(await rejectedCode(() => store.markUnknown(t))).toBe("ERR_PRISM_TOOL_EFFECT_CONFLICT");
    }
    const u = await store.markUnknown(dGood);
    expect(await rejectedCode(() => store.resolveUnknown({ ...k, expectedVersion: u.version - 1, status: "completed" }))).toBe("ERR_PRISM_TOOL_EFFECT_CONFLICT");
    expect((await store.resolveUnknown({ ...k, expectedVersion: u.version, status: "completed" })).status).toBe("completed");
    store.close();
  });

  it("expires leases: pending becomes retryable, dispatched becomes unknown", async () => {
    let now = Date.parse("2026-03-01T00:00:00Z");
    const store = _name === "memory" ? createMemoryToolEffectStore({ now: () => now }) : createSqliteToolEffectStore(db(), { now: () => now });
    const p = effectKey("lease-p");
    const first = await store.begin({ ...p, claimTtlMs: 1000 });
    now += 1000;
    expect(await store.get(p)).toMatchObject({ status: "failed_retryable", failure: { code: "ERR_PRISM_TOOL_EFFECT_EXPIRED" } });
    expect(await rejectedCode(() => store.markDispatched({ ...p, claimToken: first.record.claimToken!, expectedVersion: first.record.version }))).toBe(
      "ERR_PRISM_TOOL_EFFECT_CONFLICT",
    );
    expect(await store.begin(p)).toMatchObject({ outcome: "acquired", record: { attempt: 2 } });
    const d = effectKey("lease-d");
    const claimed = (await store.begin({ ...d, claimTtlMs: 1000 })).record;
    await store.markDispatched({ ...d, claimToken: claimed.claimToken!, expectedVersion: claimed.version });
    now += 5000;
    expect(await store.begin(d)).toMatchObject({ outcome: "existing", record: { status: "unknown" } });
    store.close();
  });

  it("bounds results, references and inputs", async () => {
    const store = make();
    const k = effectKey("bounds");
    const { record } = await store.begin(k);
    const d = await store.markDispatched({ ...k, claimToken: record.claimToken!, expectedVersion: record.version });
    const t = { ...k, claimToken: d.claimToken!, expectedVersion: d.version };
    // (A result larger than the store keeps completes without its value: effects-large-results.test.ts.)
    expect(await rejectedCode(() => store.complete({ ...t, result: { toolCallId: "bounds", name: "charge", value: 1n } }))).toBe(
      "ERR_PRISM_TOOL_EFFECT_LIMIT",
    );
    expect(await rejectedCode(() => store.complete({ ...t, resultRef: "r".repeat(2000) }))).toBe("ERR_PRISM_TOOL_EFFECT_LIMIT");
    expect(await rejectedCode(() => store.begin({ ...effectKey("x"), argumentsHash: "nope" }))).toBe("ERR_PRISM_TOOL_EFFECT_LIMIT");
    expect(await rejectedCode(() => store.begin({ ...effectKey("x"), key: "k".repeat(97) }))).toBe("ERR_PRISM_TOOL_EFFECT_LIMIT");
    expect(await rejectedCode(() => store.begin({ ...effectKey("x"), claimTtlMs: 3_600_001 }))).toBe("ERR_PRISM_TOOL_EFFECT_LIMIT");
    expect(await rejectedCode(() => store.begin({ ...effectKey("x"), ownership: {} }))).toBe("ERR_PRISM_TOOL_EFFECT_CONFLICT");
    expect(await rejectedCode(() => store.begin({ ...effectKey("x"), identity: { ...identity, expiresAt: "2020-01-01T00:00:00Z" } }))).toBe("ERR_PRISM_IDENTITY");
    const aborted = AbortSignal.abort(new Error("stop"));
    await expect(store.get({ ...effectKey("x"), signal: aborted })).rejects.toThrow("stop");
    expect(await store.complete({ ...t, result: { toolCallId: "bounds", name: "charge", value: 1 }, resultRef: "s3://bucket/r" })).toMatchObject({
      status: "completed",
      resultRef: "s3://bucket/r",
    });
    store.close();
  });

  it("reads every string exactly, at any length and with multi-byte characters at the read buffer's edge", async () => {
    const store = make();
    for (let n = 116; n < 136; n++) {
      for (const tail of ["", "é", "中文", "😀", "é😀"]) {
        const id = "c".repeat(n) + tail;
        const { record } = await store.begin(effectKey(id));
        expect(record.toolCallId).toBe(id);
        expect((await store.get(effectKey(id)))?.toolCallId).toBe(id);
      }
    }
    const long = "L".repeat(400) + "😀";
    expect((await store.begin(effectKey(long))).record.toolCallId).toBe(long);
    store.close();
  });

  it("lets exactly one of 32 concurrent claims win, over 1 000 trials", async () => {
    const path = db();
    const many = _name === "memory"
      ? new Array<NativeToolEffectStore>(32).fill(createMemoryToolEffectStore())
      : Array.from({ length: 32 }, () => createSqliteToolEffectStore(path, { synchronous: "normal" }));
    let wins = 0;
    for (let trial = 0; trial < 1000; trial++) {
      const k = effectKey(`race-${trial}`);
      const outcomes = await Promise.all(many.map(async (s) => (await (s as ToolEffectStore).begin(k)).outcome));
      const won = outcomes.filter((o) => o === "acquired").length;
      if (won !== 1) throw new Error(`trial ${trial}: ${won} winners`);
      wins += won;
    }
    expect(wins).toBe(1000);
    for (const s of new Set(many)) s.close();
  });
});

describe("SQLite store across processes", () => {
  it("lets exactly one of two processes claim each key, over 1 000 trials", async () => {
    const path = db();
    createSqliteToolEffectStore(path).close(); // create the schema before the race
    const outs = [join(dir, "race-a.json"), join(dir, "race-b.json")];
    await Promise.all(
      outs.map(
        (out) =>
          new Promise<void>((resolve, reject) => {
            const p = spawn(process.execPath, [child, "race", path, "1000", out], { stdio: "inherit" });
            p.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`child exited ${code}`))));
          }),
      ),
    );
    const [a, b] = outs.map((o) => JSON.parse(readFileSync(o, "utf8")) as number[]);
    expect(a.length + b.length).toBe(1000);
    expect(new Set([...a, ...b]).size).toBe(1000);
  });

  const points = ["after-claim", "after-dispatched", "after-execute", "after-complete"] as const;
  it.each(points)("a process killed %s never makes a fresh process run the side effect twice", async (point) => {
    const path = db();
    const file = join(dir, `side-effect-${point}.txt`);
    await new Promise<void>((resolve, reject) => {
      const p = spawn(process.execPath, [child, "crash", path, file, point], { stdio: ["ignore", "pipe", "inherit"] });
      p.stdout.on("data", (d: Buffer) => {
        if (d.toString().includes(point)) p.kill("SIGKILL");
      });
      p.on("exit", (_code, signal) => (signal === "SIGKILL" ? resolve() : reject(new Error(`child ended without SIGKILL at ${point}`))));
    });
    const lines = () => (existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean).length : 0);
    const executedBefore = lines();
    const again = spawnSync(process.execPath, [child, "run", path, file], { encoding: "utf8" });
    expect(again.status).toBe(0);
    const outcome = JSON.parse(again.stdout);
    const seen = await createSqliteToolEffectStore(path).get(effectKey("crash"));
    switch (point) {
      case "after-claim":
        // Claimed, never dispatched: the live lease keeps others out; once it expires the effect runs once.
        expect(outcome).toEqual({ code: "ERR_PRISM_TOOL_EFFECT_CONFLICT", status: "pending" });
        expect(lines()).toBe(0);
        {
          const later = createSqliteToolEffectStore(path, { now: () => Date.now() + 120_000 });
          const retry = await later.begin(effectKey("crash"));
          expect(retry).toMatchObject({ outcome: "acquired", record: { attempt: 2 } });
          later.close();
        }
        break;
      case "after-dispatched":
        expect(outcome).toEqual({ code: "ERR_PRISM_TOOL_EFFECT_UNKNOWN", status: "dispatched" });
        expect(lines()).toBe(executedBefore);
        expect(seen?.status).toBe("dispatched");
        break;
      case "after-execute":
        expect(executedBefore).toBe(1);
        expect(outcome).toEqual({ code: "ERR_PRISM_TOOL_EFFECT_UNKNOWN", status: "dispatched" });
        expect(lines()).toBe(1);
        break;
      case "after-complete":
        expect(outcome).toEqual({ replayed: { toolCallId: "crash", name: "charge", value: { charged: 5 } } });
        expect(lines()).toBe(1);
        expect(seen?.status).toBe("completed");
        break;
    }
  });
});

describe("package entries", () => {
  it("export the effects API from CommonJS and ES modules alike", () => {
    expect(esm.createSqliteToolEffectStore).toBe(cjs.createSqliteToolEffectStore);
    expect(esm.ToolEffectError).toBe(cjs.ToolEffectError);
    const e = new esm.ToolEffectError("ERR_PRISM_TOOL_EFFECT_REQUIRED", "durable tool effect store is required");
    expect(e).toBeInstanceOf(Error);
    expect(e).toMatchObject({ name: "ToolEffectError", code: "ERR_PRISM_TOOL_EFFECT_REQUIRED" });
  });

  it("the conformance kit rejects a store that ignores the version", async () => {
    const inner = createMemoryToolEffectStore();
    const broken: ToolEffectStore = {
      get: (i) => inner.get(i),
      begin: (i) => inner.begin(i),
      markDispatched: async (i) => inner.markDispatched({ ...i, expectedVersion: (await inner.get(i))?.version ?? i.expectedVersion }),
      complete: (i) => inner.complete(i),
      fail: (i) => inner.fail(i),
      markUnknown: (i) => inner.markUnknown(i),
      resolveUnknown: (i) => inner.resolveUnknown(i),
      cleanup: (i) => inner.cleanup(i),
    };
    await expect(conformance.assertToolEffectStoreConforms(broken)).rejects.toThrow(/stale version/);
  });
});
