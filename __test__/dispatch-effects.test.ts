import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  assertIdentityActive,
  createMemoryToolEffectStore,
  createMiddlewareRegistry,
  createSqliteToolEffectStore,
  createToolRegistry,
  deriveToolEffectKey,
  dispatchToolCall,
  resolveToolEffectDeclaration,
  toolEffectArgumentsHash,
  type ToolDefinition,
  type ToolEffectStore,
} from "../index.js";
import { call, ctx, recorder } from "./helpers/harness.js";

const dir = mkdtempSync(join(tmpdir(), "prism-dispatch-effects-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const identity = {
  tenantId: "t1",
  userId: "u1",
  principal: { kind: "user", id: "u1" },
  scopes: ["payments"],
  issuedAt: new Date().toISOString(),
  verified: true as const,
};

/** A payment tool whose side effect is counted; `fail` makes it throw after the effect. */
function payTool(log: { charges: number; keys: (string | undefined)[] }, fail = false): ToolDefinition {
  return {
    name: "pay",
    effect: { kind: "external_mutation", idempotency: "required" },
    execute(args, c) {
      log.charges += 1;
      log.keys.push(c.idempotencyKey);
      if (fail) throw new Error("gateway timeout after charging");
      return { toolCallId: c.toolCallId, name: "pay", value: { charged: args.amount } };
    },
  };
}

/** The same store answering every method through a promise, as a remote store would. */
function asyncStore(store: ToolEffectStore): ToolEffectStore {
  const wrap = (m: keyof ToolEffectStore) => (input: never) => Promise.resolve().then(() => (store[m] as any)(input));
  return {
    get: wrap("get"),
    begin: wrap("begin"),
    markDispatched: wrap("markDispatched"),
    complete: wrap("complete"),
    fail: wrap("fail"),
    markUnknown: wrap("markUnknown"),
    resolveUnknown: wrap("resolveUnknown"),
    cleanup: wrap("cleanup"),
  } as ToolEffectStore;
}

const stores: [string, () => ToolEffectStore][] = [
  ["memory", () => createMemoryToolEffectStore()],
  ["sqlite", () => createSqliteToolEffectStore(join(dir, `${Math.random().toString(36).slice(2)}.db`))],
  ["async host store", () => asyncStore(createMemoryToolEffectStore())],
];

const keyOf = (args: Record<string, unknown>, id = "call_1") =>
  deriveToolEffectKey({
    identity,
    ownership: { tenantId: "t1", userId: "u1" },
    sessionId: "s1",
    runId: "r1",
    toolCallId: id,
    toolName: "pay",
    argumentsHash: toolEffectArgumentsHash(args),
  });

describe.each(stores)("dispatch with an effect store (%s)", (_label, makeStore) => {
  it("claims before the side effect, hands the tool the derived key, and replays instead of repeating", async () => {
    const store = makeStore();
    const log = { charges: 0, keys: [] as (string | undefined)[] };
    const registry = createToolRegistry([payTool(log)]);
    const rec = recorder();
    const options = {
      call: call("pay", { amount: 42 }),
      registry,
      context: ctx({ idempotencyKey: "caller-supplied" }),
      identity,
      effectStore: store,
      emit: rec.emit,
      ledger: rec.ledger,
    };
    const first = await dispatchToolCall(options);
    expect(first).toEqual({ toolCallId: "call_1", name: "pay", value: { charged: 42 } });
    expect(log.charges).toBe(1);
    const key = keyOf({ amount: 42 });
    expect(key).toMatch(/^prism:tool-effect:v1:[0-9a-f]{64}$/);
    expect(log.keys).toEqual([key]);
    const record = await store.get({ identity, ownership: { tenantId: "t1", userId: "u1" }, key, sessionId: "s1", runId: "r1", toolCallId: "call_1", toolName: "pay", argumentsHash: toolEffectArgumentsHash({ amount: 42 }) } as never);
    expect(record!.status).toBe("completed");

    // A retry of the same call: the stored result, no second charge.
    const again = await dispatchToolCall(options);
    expect(again).toEqual(first);
    expect(log.charges).toBe(1);
    expect(rec.terminalRows().map((r) => r.status)).toEqual(["finished", "finished"]);
  });

  it("marks the effect unknown when the tool fails after dispatch and never runs it again", async () => {
    const store = makeStore();
    const log = { charges: 0, keys: [] as (string | undefined)[] };
    const options = { call: call("pay", { amount: 7 }), registry: createToolRegistry([payTool(log, true)]), context: ctx(), identity, effectStore: store };
    const first = await dispatchToolCall(options);
    expect(first.error).toEqual({ name: "ToolEffectError", message: "tool effect outcome requires reconciliation", code: "ERR_PRISM_TOOL_EFFECT_UNKNOWN" });
    const retry = await dispatchToolCall(options);
    expect(retry.error!.code).toBe("ERR_PRISM_TOOL_EFFECT_UNKNOWN");
    expect(log.charges).toBe(1);
  });

  it("closes the claim as failed_terminal when the call stops before dispatch; the same call is then refused", async () => {
    const store = makeStore();
    const log = { charges: 0, keys: [] as (string | undefined)[] };
    const registry = createToolRegistry([payTool(log)]);
    const base = { call: call("pay", { amount: 1 }), registry, context: ctx(), identity, effectStore: store };
    const denied = await dispatchToolCall({ ...base, beforeExecute: () => { throw new Error("approval missing"); } });
    expect(denied.error!.message).toBe("approval missing");
    expect(log.charges).toBe(0);
    const key = keyOf({ amount: 1 });
    const record = await store.get({ identity, ownership: { tenantId: "t1", userId: "u1" }, key, sessionId: "s1", runId: "r1", toolCallId: "call_1", toolName: "pay", argumentsHash: toolEffectArgumentsHash({ amount: 1 }) } as never);
    expect(record!.status).toBe("failed_terminal");
    const retried = await dispatchToolCall(base);
    expect(retried.error).toEqual({ name: "ToolEffectError", message: "tool effect is not dispatchable", code: "ERR_PRISM_TOOL_EFFECT_CONFLICT" });
    expect(log.charges).toBe(0);
  });

  it("a run suspended in beforeExecute rejects the dispatch, records no ending, and the resumed call runs once", async () => {
    const store = makeStore();
    const log = { charges: 0, keys: [] as (string | undefined)[] };
    const rec = recorder();
    const base = { call: call("pay", { amount: 3 }), registry: createToolRegistry([payTool(log)]), context: ctx(), identity, effectStore: store, emit: rec.emit, ledger: rec.ledger };
    const pause = Object.assign(new Error("waiting for approval"), { code: "ERR_PRISM_AGENT_RUN_SUSPENDED" });
    await expect(dispatchToolCall({ ...base, beforeExecute: () => { throw pause; } })).rejects.toBe(pause);
    expect(log.charges).toBe(0);
    // The call did not end: no blocked event or row (the run stopped, it will come back).
    expect(rec.types().filter((t) => t.startsWith("tool_execution_"))).toEqual([]);
    expect(rec.rows).toEqual([]);
    const record = await store.get({ identity, ownership: { tenantId: "t1", userId: "u1" }, key: keyOf({ amount: 3 }), sessionId: "s1", runId: "r1", toolCallId: "call_1", toolName: "pay", argumentsHash: toolEffectArgumentsHash({ amount: 3 }) } as never);
    expect(record!.status).toBe("failed_retryable");
    // The resumed run dispatches the same call: it is claimed again and runs once.
    expect(await dispatchToolCall(base)).toEqual({ toolCallId: "call_1", name: "pay", value: { charged: 3 } });
    expect(log.charges).toBe(1);
    // An async beforeExecute that rejects with a loop-state error rejects too, and its claim is closed.
    const loop = Object.assign(new Error("snapshot failed"), { code: "ERR_PRISM_LOOP_SNAPSHOT" });
    const other = { ...base, call: call("pay", { amount: 4 }, "call_2") };
    await expect(dispatchToolCall({ ...other, beforeExecute: async () => { throw loop; } })).rejects.toBe(loop);
    await expect(dispatchToolCall(other)).resolves.toMatchObject({ error: { code: "ERR_PRISM_TOOL_EFFECT_CONFLICT" } });
    expect(log.charges).toBe(1);
  });

  it("gives each distinct call its own claim", async () => {
    const store = makeStore();
    const log = { charges: 0, keys: [] as (string | undefined)[] };
    const registry = createToolRegistry([payTool(log)]);
    for (const [id, amount] of [["a", 1], ["b", 1], ["a", 2]] as const) {
      await dispatchToolCall({ call: call("pay", { amount }, id), registry, context: ctx(), identity, effectStore: store });
    }
    expect(log.charges).toBe(3);
    expect(new Set(log.keys).size).toBe(3);
  });
});

describe("the built-in stores' direct path", () => {
  it("answers exactly as the same store called through its public methods, for every kind of result", async () => {
    const results: Record<string, unknown> = {
      plain: { charged: 5, list: [1, "two", null] },
      toJSON: { at: new Date(0), nested: { toJSON: () => "flattened" } },
      bigint: { n: 10n },
      cyclic: (() => {
        const c: any = { a: 1 };
        c.self = c;
        return c;
      })(),
      huge: { text: "x".repeat(200 * 1024) },
      none: undefined,
    };
    for (const [name, value] of Object.entries(results)) {
      const outcomes = [];
      for (const store of [createMemoryToolEffectStore(), asyncStore(createMemoryToolEffectStore())]) {
        const tool: ToolDefinition = {
          name: "pay",
          effect: { kind: "external_mutation", idempotency: "required" },
          execute: (_args, c) => ({ toolCallId: c.toolCallId, name: "pay", value }) as never,
        };
        const options = { call: call("pay", { amount: 1 }), registry: createToolRegistry([tool]), context: ctx(), identity, effectStore: store };
        const first = await dispatchToolCall(options);
        const again = await dispatchToolCall(options);
        const record = await store.get({ identity, ownership: { tenantId: "t1", userId: "u1" }, key: keyOf({ amount: 1 }), sessionId: "s1", runId: "r1", toolCallId: "call_1", toolName: "pay", argumentsHash: toolEffectArgumentsHash({ amount: 1 }) } as never);
        const plain = (v: unknown) => JSON.parse(JSON.stringify(v, (_k, x) => (typeof x === "bigint" ? `${x}n` : x)) ?? "null");
        outcomes.push({ first: first.error ?? plain(first), again: again.error ?? plain(again), status: record!.status, version: record!.version, result: record!.result });
      }
      expect(outcomes[0], name).toEqual(outcomes[1]);
    }
  });
});

describe("the built-in stores' claim, read once at begin", () => {
  // Dispatch reads the key once when a built-in store claims; later transitions reuse it. Expiry,
  // ownership and the abort signal must still be checked at each transition, exactly as the public
  // methods (driven here through an async wrapper, which takes the general path) check them.
  const scenarios: Record<string, (clock: { t: number }, abort: AbortController) => void> = {
    "identity expires during execute": (clock) => {
      clock.t += 2 * HOUR;
    },
    "the call is aborted during execute": (_clock, abort) => abort.abort(new Error("stop")),
    "nothing happens during execute": () => {},
  };
  const HOUR = 3_600_000;
  it.each(Object.keys(scenarios))("%s: the same outcome and record as the general path", async (name) => {
    const outcomes = [];
    const start = Date.now();
    for (const wrap of [(s: ToolEffectStore) => s, asyncStore]) {
      const clock = { t: start };
      const abort = new AbortController();
      const store = wrap(createMemoryToolEffectStore({ now: () => clock.t }));
      const expiring = { ...identity, issuedAt: new Date(start - HOUR).toISOString(), expiresAt: new Date(start + HOUR).toISOString() };
      const tool: ToolDefinition = {
        name: "pay",
        effect: { kind: "external_mutation", idempotency: "required" },
        execute: (_args, c) => {
          scenarios[name](clock, abort);
          return { toolCallId: c.toolCallId, name: "pay", value: 1 };
        },
      };
      const context = { ...ctx(), signal: abort.signal };
      const out = await dispatchToolCall({ call: call("pay", { amount: 1 }), registry: createToolRegistry([tool]), context, identity: expiring, effectStore: store }).then(
        (r) => ({ resolved: r.error ? { code: r.error.code, message: r.error.message } : r.value }),
        (e) => ({ rejected: String(e?.message ?? e) }),
      );
      clock.t = start;
      const record = await store.get({ identity: expiring, ownership: { tenantId: "t1", userId: "u1" }, key: keyOf({ amount: 1 }), sessionId: "s1", runId: "r1", toolCallId: "call_1", toolName: "pay", argumentsHash: toolEffectArgumentsHash({ amount: 1 }) } as never);
      outcomes.push({ out, status: record?.status, version: record?.version });
    }
    expect(outcomes[0]).toEqual(outcomes[1]);
    if (name === "nothing happens during execute") expect(outcomes[0].status).toBe("completed");
    else expect(outcomes[0].status).not.toBe("completed");
  });
});

describe("dispatch's identity check", () => {
  // Dispatch reads an identity's fields in JS and hands the binding their values; the binding's own
  // reader (behind assertIdentityActive) reads the same fields by name. A getter sees the fields read
  // before it, so both must read in one order, once each.
  function recording(log: string[]) {
    const watch = <T extends object>(value: T, prefix: string): T =>
      new Proxy(value, {
        get(target, key, receiver) {
          if (typeof key === "string") log.push(prefix + key);
          return Reflect.get(target, key, receiver);
        },
      });
    const principal = watch({ kind: "user", id: "p1" }, "principal.");
    return watch({ ...identity, principal, metadata: { team: "a" }, credentialRefs: ["vault:a"] }, "");
  }
  it("reads each field once, in the binding's own order, with and without an effect store", async () => {
    const named: string[] = [];
    assertIdentityActive(recording(named));
    expect(new Set(named).size).toBe(named.length);
    expect(named).toContain("tenantId");
    // What a field holds is read after every top-level field, by both readers.
    expect(named.indexOf("principal.kind")).toBeGreaterThan(named.indexOf("verified"));
    const tool: ToolDefinition = { name: "echo", execute: (_a, c) => ({ toolCallId: c.toolCallId, name: "echo", value: 1 }) };
    for (const effectStore of [undefined, createMemoryToolEffectStore()]) {
      const read: string[] = [];
      const r = await dispatchToolCall({ call: call("echo", {}), registry: createToolRegistry([tool]), context: ctx(), identity: recording(read), effectStore });
      expect(r.error).toBeUndefined();
      expect(read).toEqual(named);
    }
  });
});

describe("dispatch's identity, read again at every call", () => {
  // The binding keeps what the last identity check read and JS hands it back while the values read
  // are the same: a change to any field, or to what a field holds, must be seen at the next call.
  const tool: ToolDefinition = { name: "echo", execute: (_a, c) => ({ toolCallId: c.toolCallId, name: "echo", value: "ran" }) };
  const effectTool: ToolDefinition = {
    name: "pay",
    effect: { kind: "external_mutation", idempotency: "required" },
    execute: (_a, c) => ({ toolCallId: c.toolCallId, name: "pay", value: c.idempotencyKey }),
  };
  const registry = createToolRegistry([tool, effectTool]);
  const outcome = async (id: unknown, opts: { effectStore?: ToolEffectStore; ownership?: unknown; name?: string } = {}) => {
    const r = await dispatchToolCall({ call: call(opts.name ?? "echo", { n: 1 }), registry, context: ctx(), identity: id as never, effectStore: opts.effectStore, ownership: opts.ownership as never });
    return r.error ? `${r.error.code}: ${r.error.message}` : String(r.value);
  };
  const fresh = () => ({ ...identity, principal: { ...identity.principal }, scopes: [...identity.scopes] });

  for (const withStore of [false, true]) {
    it(`sees a changed field, a changed principal, scopes or ownership at the next call${withStore ? " (with an effect store)" : ""}`, async () => {
      const effectStore = withStore ? createMemoryToolEffectStore() : undefined;
      const name = withStore ? "pay" : "echo";
      const id: any = fresh();
      const ok = await outcome(id, { effectStore, name });
      expect(ok).not.toMatch(/ERR_/);
      const refusals: [string, (i: any) => void][] = [
        ["verified", (i) => (i.verified = false)],
        ["revoked", (i) => (i.revokedAt = new Date(Date.now() - 1000).toISOString())],
        ["expired", (i) => (i.expiresAt = "Tue, 01 Dec 2020 00:00:00 GMT")],
        ["principal kind", (i) => (i.principal.kind = 5)],
        ["scope", (i) => i.scopes.push("")],
        ["metadata", (i) => (i.metadata = { blob: "x".repeat(70_000) })],
        ["tenant", (i) => (i.tenantId = "")],
      ];
      for (const [what, change] of refusals) {
        const same: any = fresh();
        expect(await outcome(same, { effectStore, name }), what).not.toMatch(/ERR_/);
        change(same);
        expect(await outcome(same, { effectStore, name }), what).toMatch(/ERR_PRISM_IDENTITY|ERR_PRISM_TOOL_EFFECT_CONFLICT/);
        // Mended, it runs again: nothing of the refusal is kept.
        expect(await outcome(fresh(), { effectStore, name }), what).not.toMatch(/ERR_/);
      }
      // The ownership is read at every call too: the same identity owned by another tenant is refused.
      const ownership = { tenantId: "t1", userId: "u1" };
      expect(await outcome(id, { effectStore, name, ownership })).not.toMatch(/ERR_/);
      ownership.tenantId = "t2";
      expect(await outcome(id, { effectStore, name, ownership })).toMatch(/ERR_PRISM_/);
      expect(await outcome(id, { effectStore, name, ownership: undefined })).not.toMatch(/ERR_/);
    });
  }

  it("keys a call by the principal read at that call", async () => {
    const id: any = fresh();
    const effectStore = createMemoryToolEffectStore();
    const before = await outcome(id, { effectStore, name: "pay" });
    id.principal.id = "u2";
    const after = await outcome(id, { effectStore, name: "pay" });
    const keyFor = (principalId: string) =>
      deriveToolEffectKey({ identity: { ...id, principal: { kind: "user", id: principalId } }, ownership: { tenantId: "t1", userId: "u1" }, sessionId: ctx().sessionId!, runId: ctx().runId!, toolCallId: call("pay").id, toolName: "pay", argumentsHash: toolEffectArgumentsHash({ n: 1 }) });
    expect(before).toBe(keyFor("u1"));
    expect(after).toBe(keyFor("u2"));
  });

  it("keys a call by its tool name after call middleware renamed it", async () => {
    const middleware = createMiddlewareRegistry();
    middleware.use("tool_call", (c: any) => ({ ...c, name: "pay" }));
    const r = await dispatchToolCall({ call: call("alias", { n: 1 }), registry, context: ctx(), identity: fresh(), effectStore: createMemoryToolEffectStore(), middleware });
    expect(r.error).toBeUndefined();
    const keyOfName = (toolName: string) =>
      deriveToolEffectKey({ identity: fresh(), ownership: { tenantId: "t1", userId: "u1" }, sessionId: ctx().sessionId!, runId: ctx().runId!, toolCallId: call("pay").id, toolName, argumentsHash: toolEffectArgumentsHash({ n: 1 }) });
    expect(r.value).toBe(keyOfName("pay"));
    expect(r.value).not.toBe(keyOfName("alias"));
  });

  it("reads the same fields at every call, from the first on", async () => {
    const log: string[] = [];
    const watched = new Proxy(fresh(), {
      get(target, key, receiver) {
        if (typeof key === "string") log.push(key);
        return Reflect.get(target, key, receiver);
      },
    });
    for (const effectStore of [undefined, createMemoryToolEffectStore()]) {
      log.length = 0;
      await outcome(watched, { effectStore, name: effectStore ? "pay" : "echo" });
      const first = [...log];
      log.length = 0;
      await outcome(watched, { effectStore, name: effectStore ? "pay" : "echo" });
      expect(log).toEqual(first);
      expect(first).toContain("verified");
    }
  });

  it("reads a lone surrogate as the binding's own reader does, and a date only Date.parse knows", async () => {
    for (const effectStore of [undefined, createMemoryToolEffectStore()]) {
      const name = effectStore ? "pay" : "echo";
      const lone = { ...fresh(), tenantId: "t\ud800" };
      expect(await outcome(lone, { effectStore, name })).not.toMatch(/ERR_/);
      expect(await outcome(lone, { effectStore, name, ownership: { tenantId: "t\ufffd" } })).not.toMatch(/ERR_/);
      expect(await outcome(lone, { effectStore, name, ownership: { tenantId: "t" } })).toMatch(/ERR_PRISM_/);
      const rfc = { ...fresh(), issuedAt: new Date(Date.now() - 60_000).toUTCString() };
      expect(() => assertIdentityActive(rfc)).not.toThrow();
      expect(await outcome(rfc, { effectStore, name })).not.toMatch(/ERR_/);
      const ahead = { ...fresh(), issuedAt: new Date(Date.now() + 3_600_000).toUTCString() };
      expect(() => assertIdentityActive(ahead)).toThrow();
      expect(await outcome(ahead, { effectStore, name })).toMatch(/ERR_PRISM_/);
    }
  });
});

describe("dispatch effects without a claim", () => {
  it("gives a tool_managed tool the derived key and claims nothing", async () => {
    const seen: (string | undefined)[] = [];
    const tool: ToolDefinition = {
      name: "pay",
      effect: { kind: "external_mutation", idempotency: "tool_managed" },
      execute: (_a, c) => (seen.push(c.idempotencyKey), { toolCallId: c.toolCallId, name: "pay" }),
    };
    const r = await dispatchToolCall({ call: call("pay", { amount: 3 }), registry: createToolRegistry([tool]), context: ctx(), identity });
    expect(r.error).toBeUndefined();
    expect(seen).toEqual([keyOf({ amount: 3 })]);
  });

  it("runs a tool without a declaration with no key in its context", async () => {
    let key: unknown = "unset";
    const tool: ToolDefinition = { name: "plain", execute: (_a, c) => ((key = c.idempotencyKey), { toolCallId: c.toolCallId, name: "plain" }) };
    await dispatchToolCall({ call: call("plain"), registry: createToolRegistry([tool]), context: ctx({ idempotencyKey: "caller" }), identity });
    expect(key).toBeUndefined();
  });

  it("reads a declaration again at every call, frozen or not", async () => {
    const run = async (effect: unknown) => {
      const tool = { name: "x", effect, execute: (_a: unknown, c: any) => ({ toolCallId: c.toolCallId, name: "x", value: 1 }) } as never;
      const r = await dispatchToolCall({ call: call("x"), registry: createToolRegistry([tool]), context: ctx(), identity });
      return r.error ? r.error.message : "ran";
    };
    // A mutable declaration made invalid after a call is refused at the next.
    const mutable = { kind: "none", idempotency: "none" };
    expect(await run(mutable)).toBe("ran");
    mutable.kind = "teleport";
    expect(await run(mutable)).toMatch(/tool effect declaration is invalid/);
    // A frozen one whose kind is a getter is read again at every call.
    let reads = 0;
    const getter = Object.freeze(Object.defineProperty({ idempotency: "none" }, "kind", { enumerable: true, get: () => (reads++, "none") }));
    expect(await run(getter)).toBe("ran");
    const once = reads;
    expect(once).toBeGreaterThan(0);
    expect(await run(getter)).toBe("ran");
    expect(reads).toBe(2 * once);
    // A frozen invalid one is refused every time, never remembered as valid.
    const invalid = Object.freeze({ kind: "teleport", idempotency: "none" });
    for (let i = 0; i < 3; i++) expect(await run(invalid)).toMatch(/tool effect declaration is invalid/);
    // A frozen valid one keeps working.
    const fixed = Object.freeze({ kind: "none", idempotency: "none" });
    for (let i = 0; i < 3; i++) expect(await run(fixed)).toBe("ran");
    // A Proxy whose other traps throw is read through its get trap alone.
    const asking = new Proxy(
      { kind: "external_mutation", idempotency: "tool_managed" },
      { isExtensible: () => { throw new Error("trap"); }, ownKeys: () => { throw new Error("trap"); } },
    );
    for (let i = 0; i < 2; i++) expect(await run(asking)).toBe("ran");
  });

  it("reads a declaration as resolveToolEffectDeclaration does, whatever the value", async () => {
    const reads: string[] = [];
    const watched = (target: object) =>
      new Proxy(target, {
        get(t, key, receiver) {
          if (typeof key === "string") reads.push(key);
          return Reflect.get(t, key, receiver);
        },
      });
    const thenable = { kind: "none", idempotency: "none", then: () => {} };
    const effects: [string, () => unknown][] = [
      ["null", () => null],
      ["a string", () => "external_mutation"],
      ["a number", () => 3],
      ["an array", () => ["external_mutation", "required"]],
      ["a promise", () => Promise.resolve({ kind: "none", idempotency: "none" })],
      ["a thenable", () => thenable],
      ["a kind that is no string", () => ({ kind: 1, idempotency: "none" })],
      ["no idempotency", () => ({ kind: "external_mutation" })],
      ["a valid one", () => ({ kind: "external_mutation", idempotency: "tool_managed" })],
      ["a valid one with an inherited kind", () => Object.assign(Object.create({ kind: "local_mutation" }), { idempotency: "optional" })],
      ["a getter that throws", () => Object.defineProperty({ idempotency: "none" }, "kind", { get: () => { throw new Error("kind getter"); } })],
      ["a watched one", () => watched({ kind: "local_mutation", idempotency: "optional" })],
      ["a watched thenable", () => watched({ kind: "none", idempotency: "none", then: () => {} })],
    ];
    for (const [what, make] of effects) {
      const tool = { name: "x", effect: make(), execute: (_a: unknown, c: any) => ({ toolCallId: c.toolCallId, name: "x", value: c.idempotencyKey ?? "no key" }) } as never;
      reads.length = 0;
      let resolved: string;
      let publicReads: string[];
      try {
        const d = resolveToolEffectDeclaration(tool, {}, ctx() as never);
        publicReads = [...reads];
        resolved = d === undefined ? "none" : `${(d as any).kind}/${(d as any).idempotency}`;
      } catch (e) {
        publicReads = [...reads];
        resolved = `threw ${(e as Error).message}`;
      }
      reads.length = 0;
      const r = await dispatchToolCall({ call: call("x"), registry: createToolRegistry([tool]), context: ctx(), identity });
      const dispatched = r.error ? `threw ${r.error.message}` : "ran";
      if (resolved.startsWith("threw")) expect(dispatched, what).toBe(resolved);
      else expect(dispatched, what).toBe("ran");
      // What a key-only declaration does is seen by the tool: a key exactly when one is declared.
      if (resolved === "external_mutation/tool_managed") expect(r.value, what).toMatch(/^prism:tool-effect:v1:/);
      // Dispatch reads what the binding's own resolver reads, in its order, once.
      expect(reads, what).toEqual(publicReads.filter((k) => k !== "effect"));
    }
  });

  it("refuses an invalid declaration or a classifier that throws", async () => {
    for (const effect of [{ kind: "teleport", idempotency: "none" }, { kind: "none", idempotency: "required" }, () => { throw new Error("classifier bug"); }]) {
      const tool = { name: "x", effect, execute: (_a: unknown, c: any) => ({ toolCallId: c.toolCallId, name: "x" }) } as never;
      const rec = recorder();
      const r = await dispatchToolCall({ call: call("x"), registry: createToolRegistry([tool]), context: ctx(), identity, emit: rec.emit });
      expect((rec.events[0] as any).reason).toBe("execution_denied");
      expect(r.error!.message).toMatch(/tool effect declaration is invalid|classifier bug/);
    }
  });
});

// The built-in memory store's lean path: with its default clock, a claim whose next command is
// markDispatched makes that transition in the same crossing. These tests hold it to the usual
// path (a store with a host clock, which goes through advanceClaim): the same answers, the same
// records, the same side effects, in every way a call can end.
const ownership = { tenantId: "t1", userId: "u1" };

type Outcome = (args: Record<string, unknown>, signal: AbortSignal | undefined) => unknown;
const endings: [string, Outcome][] = [
  ["returns a value", (args) => ({ value: { charged: args.amount } })],
  ["returns an error result", () => ({ error: { message: "declined" } })],
  ["throws after the side effect", () => {
    throw new Error("gateway timeout");
  }],
  ["throws a non-Error", () => {
    throw "bare string";
  }],
  ["returns a result too large to keep", () => ({ value: "x".repeat(70 * 1024) })],
  ["returns a value JSON cannot hold", () => ({ value: { n: 1n } })],
  ["resolves later", async (args) => {
    await new Promise((resolve) => setTimeout(resolve, 1));
    return { value: args.amount };
  }],
  ["is aborted while it runs", async (_args, signal) => {
    await new Promise((resolve) => setTimeout(resolve, 1));
    return signal?.aborted ? { error: { message: "aborted" } } : { value: 1 };
  }],
];

function tool(outcome: Outcome, log: string[]): ToolDefinition {
  return {
    name: "pay",
    effect: { kind: "external_mutation", idempotency: "required" },
    async execute(args, c) {
      log.push(c.idempotencyKey ?? "no key");
      const out = (await outcome(args as Record<string, unknown>, c.signal)) as Record<string, unknown>;
      return { toolCallId: c.toolCallId, name: "pay", ...out };
    },
  };
}

/** What a record says that does not depend on the clock or the random claim token. */
function stable(record: Record<string, unknown> | null) {
  if (record === null) return null;
  const { createdAt, updatedAt, claimToken, expiresAt, ...rest } = record as Record<string, unknown>;
  return { ...rest, hasClaim: claimToken !== undefined, timed: [createdAt, updatedAt, expiresAt].map((t) => t !== undefined) };
}

async function scenario(store: ToolEffectStore, outcome: Outcome, abort: boolean) {
  const log: string[] = [];
  const registry = createToolRegistry([tool(outcome, log)]);
  const controller = new AbortController();
  const options = { call: call("pay", { amount: 5 }), registry, context: ctx({ signal: controller.signal }), identity, ownership, effectStore: store };
  const first = dispatchToolCall(options);
  if (abort) controller.abort("stop");
  const answers = [await first.then((r) => r, (e) => ({ threw: String(e) }))];
  answers.push(await dispatchToolCall({ ...options, context: ctx() }).then((r) => r, (e) => ({ threw: String(e) })));
  const argumentsHash = toolEffectArgumentsHash({ amount: 5 });
  const key = deriveToolEffectKey({ identity, ownership, sessionId: "s1", runId: "r1", toolCallId: "call_1", toolName: "pay", argumentsHash });
  const record = await store.get({ identity, ownership, key, sessionId: "s1", runId: "r1", toolCallId: "call_1", toolName: "pay", argumentsHash } as never);
  return { answers, executed: log.length, record: stable(record as never) };
}

describe("the memory store's claim and markDispatched in one crossing", () => {
  for (const [label, outcome] of endings) {
    it(`ends as the usual path does when the tool ${label}`, async () => {
      const abort = label.includes("aborted");
      const lean = await scenario(createMemoryToolEffectStore(), outcome, abort);
      const usual = await scenario(createMemoryToolEffectStore({ now: () => Date.now() }), outcome, abort);
      expect(lean).toEqual(usual);
      expect(lean.executed).toBe(1); // never a second time, whatever the first call's end
    });
  }

  it("leaves markDispatched to the host when the host replaced it, even over a built-in begin", async () => {
    const base = createMemoryToolEffectStore();
    const marked: number[] = [];
    const store = {
      ...base,
      markDispatched: async (input: never) => {
        const record = await base.markDispatched(input);
        marked.push((record as { version: number }).version);
        throw new Error("connection dropped"); // uncertain: the call must end unknown, never run
      },
    };
    const log: string[] = [];
    const registry = createToolRegistry([tool(endings[0][1], log)]);
    const options = { call: call("pay", { amount: 5 }), registry, context: ctx(), identity, ownership, effectStore: store as ToolEffectStore };
    const first = await dispatchToolCall(options);
    expect(marked).toEqual([2]);
    expect(first.error?.code).toBe("ERR_PRISM_TOOL_EFFECT_UNKNOWN");
    expect(log).toEqual([]);
    expect((await dispatchToolCall(options)).error?.code).toBe("ERR_PRISM_TOOL_EFFECT_UNKNOWN");
    expect(log).toEqual([]);
  });

  it("takes the record through dispatched to its end: version 3 after a completed call", async () => {
    const lean = await scenario(createMemoryToolEffectStore(), endings[0][1], false);
    expect(lean.record).toMatchObject({ status: "completed", version: 3, hasClaim: false });
  });

  it("answers with the result a host store's complete kept when it is an object, else with the tool's", async () => {
    const kept = { toolCallId: "call_1", name: "pay", value: "as stored" };
    const answers: [string, unknown, unknown][] = [
      ["an object", kept, kept],
      ["null", null, "ran"],
      ["a string", "text", "ran"],
      ["a number", 7, "ran"],
      ["nothing", undefined, "ran"],
    ];
    for (const [what, result, expected] of answers) {
      const base = createMemoryToolEffectStore();
      const store = {
        ...base,
        complete: async (input: never) => ({ ...((await base.complete(input)) as object), result }),
      };
      const payTool: ToolDefinition = {
        name: "pay",
        effect: { kind: "external_mutation", idempotency: "required" },
        execute: (_args, c) => ({ toolCallId: c.toolCallId, name: "pay", value: "ran" }),
      };
      const out = await dispatchToolCall({ call: call("pay", { amount: 5 }), registry: createToolRegistry([payTool]), context: ctx(), identity, ownership, effectStore: store as ToolEffectStore });
      expect(out.error, what).toBeUndefined();
      if (typeof expected === "object") expect(out, what).toBe(expected);
      else expect(out.value, what).toBe(expected);
    }
    // A built-in store keeps the result's JSON: the call answers with that copy, not the tool's object.
    const returned = { toolCallId: "call_1", name: "pay", value: { at: new Date(0) } };
    const dated: ToolDefinition = { name: "pay", effect: { kind: "external_mutation", idempotency: "required" }, execute: () => returned };
    for (const store of [createMemoryToolEffectStore(), asyncStore(createMemoryToolEffectStore())]) {
      const out = await dispatchToolCall({ call: call("pay", { amount: 5 }), registry: createToolRegistry([dated]), context: ctx(), identity, ownership, effectStore: store });
      expect(out).not.toBe(returned);
      expect(out.value).toEqual({ at: "1970-01-01T00:00:00.000Z" });
    }
  });
});
