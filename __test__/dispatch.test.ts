import { describe, expect, it } from "vitest";
import {
  createMemoryToolEffectStore,
  createSecretRedactor,
  createToolDispatcher,
  createToolRegistry,
  dispatchToolCall,
  type DispatchToolCallOptions,
  type ToolDefinition,
  type ToolRegistry,
} from "../index.js";
import { call, ctx, echoTool, recorder } from "./helpers/harness.js";

describe("dispatchToolCall: the happy path", () => {
  it("runs the tool and returns its result, as in the seed example", async () => {
    const registry = createToolRegistry([echoTool()]);
    const result = await dispatchToolCall({
      call: call("echo", { text: "hi" }),
      registry,
      context: ctx(),
      filter: { allow: ["echo"] },
      validate: (_tool, args) => (typeof args.text === "string" ? undefined : "text is required"),
    });
    expect(result).toEqual({ toolCallId: "call_1", name: "echo", value: { text: "hi" } });
  });

  it("emits started then finished and writes started then finished rows", async () => {
    const rec = recorder();
    const registry = createToolRegistry([echoTool()]);
    await dispatchToolCall({ call: call("echo", { text: "hi" }), registry, context: ctx(), emit: rec.emit, ledger: rec.ledger, ownership: { tenantId: "t1", userId: "u1" } });
    expect(rec.types()).toEqual(["tool_execution_started", "tool_execution_finished"]);
    const [started, finished] = rec.events as any[];
    expect(started).toEqual({ type: "tool_execution_started", sessionId: "s1", runId: "r1", toolName: "echo", call: call("echo", { text: "hi" }) });
    expect(finished.result).toEqual({ toolCallId: "call_1", name: "echo", value: { text: "hi" } });
    expect(finished.metadata.status).toBe("finished");
    expect(typeof finished.metadata.durationMs).toBe("number");
    expect(rec.rows.map((r) => r.status)).toEqual(["started", "finished"]);
    const [s, f] = rec.rows;
    expect(s).toMatchObject({ sessionId: "s1", runId: "r1", toolCallId: "call_1", name: "echo", arguments: { text: "hi" }, redacted: false, tenantId: "t1", userId: "u1" });
    expect(s).not.toHaveProperty("accountId");
    expect(new Date(s.startedAt).toISOString()).toBe(s.startedAt);
    expect(f.finishedAt && new Date(f.finishedAt).toISOString()).toBe(f.finishedAt);
    expect(f.result).toEqual({ toolCallId: "call_1", name: "echo", value: { text: "hi" } });
    expect(s.id).not.toBe(f.id);
  });

  it("gives the tool the caller's context with the call's id, never the caller's idempotencyKey", async () => {
    let seen: any;
    const signal = new AbortController().signal;
    const tool: ToolDefinition = {
      name: "peek",
      execute(_args, c) {
        seen = c;
        return { toolCallId: c.toolCallId, name: "peek" };
      },
    };
    await dispatchToolCall({
      call: call("peek", {}, "call_9"),
      registry: createToolRegistry([tool]),
      context: ctx({ signal, metadata: { m: 1 }, idempotencyKey: "caller-key" }),
    });
    expect(seen.toolCallId).toBe("call_9");
    expect(seen.sessionId).toBe("s1");
    expect(seen.signal).toBe(signal);
    expect(seen.metadata).toEqual({ m: 1 });
    expect(seen.idempotencyKey).toBeUndefined();
    expect(typeof seen.progress).toBe("function");
  });

  it("accepts any object with the registry shape", async () => {
    const tools = new Map<string, ToolDefinition>([["echo", echoTool()]]);
    const registry: ToolRegistry = {
      register: (t) => void tools.set(t.name, t),
      get: (n) => tools.get(n),
      resolve: (n) => tools.get(n)!,
      list: () => [...tools.values()],
    };
    expect(await dispatchToolCall({ call: call("echo", { text: "x" }), registry, context: ctx() })).toEqual({
      toolCallId: "call_1",
      name: "echo",
      value: { text: "x" },
    });
    const r = await dispatchToolCall({ call: call("other"), registry, context: ctx() });
    expect(r.error?.message).toBe("Unknown tool: other");
  });
});

describe("dispatchToolCall: the order of the steps", () => {
  it("runs middleware, guardrails, lookup, policies, validation, beforeExecute, execute, result hooks in order", async () => {
    const log: string[] = [];
    const registry: ToolRegistry = {
      register() {},
      resolve: () => echoTool("echo", log),
      list: () => [],
      get(n) {
        log.push(`lookup:${n}`);
        return n === "echo" ? echoTool("echo", log) : undefined;
      },
    };
    const result = await dispatchToolCall({
      call: call("echo", { text: "hi" }),
      registry,
      context: ctx(),
      middleware: {
        async run(hook: string, value: any) {
          log.push(`middleware:${hook}`);
          return value;
        },
      },
      guardrails: {
        toolInput: [{ name: "in", evaluate: () => (log.push("guardrail:tool_input"), { action: "allow" as const }) }],
        toolOutput: [{ name: "out", evaluate: () => (log.push("guardrail:tool_output"), { action: "allow" as const }) }],
      },
      identity: { tenantId: "t", principal: { kind: "user", id: "u" }, scopes: ["tools"], issuedAt: new Date().toISOString(), verified: true },
      trust: { check: () => (log.push("trust"), { trusted: true }) },
      permission: { check: async () => (log.push("permission"), { allowed: true }) },
      validate: () => void log.push("validate"),
      beforeExecute: () => void log.push("beforeExecute"),
      emit: (e) => void log.push(e.type),
    });
    expect(result.value).toEqual({ text: "hi" });
    expect(log).toEqual([
      "middleware:tool_call",
      "guardrail_decision",
      "guardrail:tool_input",
      "lookup:echo",
      "trust",
      "permission",
      "validate",
      "beforeExecute",
      "tool_execution_started",
      "execute",
      "middleware:tool_result",
      "guardrail:tool_output",
      "tool_execution_finished",
    ].filter((x) => x !== "guardrail_decision").flatMap((x) => (x.startsWith("guardrail:") ? [x, "guardrail_decision"] : [x])));
  });

  it("re-checks lookup and filters after tool_call middleware: a rename cannot grant access", async () => {
    const log: string[] = [];
    const registry = createToolRegistry([echoTool("echo", log), echoTool("admin", log)]);
    const rec = recorder();
    const result = await dispatchToolCall({
      call: call("echo"),
      registry,
      context: ctx(),
      filter: { deny: ["admin"] },
      middleware: { run: async (hook: string, value: any) => (hook === "tool_call" ? { ...value, name: "admin" } : value) },
      emit: rec.emit,
    });
    expect(result.error?.message).toBe("Tool denied: admin");
    expect(log).toEqual([]);
    expect((rec.events[0] as any).reason).toBe("tool_denied");
  });

  it("lets tool_result middleware transform the result before it is returned and recorded", async () => {
    const rec = recorder();
    const result = await dispatchToolCall({
      call: call("echo", { text: "a" }),
      registry: createToolRegistry([echoTool()]),
      context: ctx(),
      middleware: { run: (hook: string, value: any) => Promise.resolve(hook === "tool_result" ? { ...value, content: "wrapped" } : value) },
      ledger: rec.ledger,
    });
    expect(result.content).toBe("wrapped");
    expect(rec.rows.at(-1)!.result!.content).toBe("wrapped");
  });
});

describe("dispatchToolCall: blocked calls", () => {
  const blockedCase = async (options: Partial<DispatchToolCallOptions>, c = call("echo", { text: "hi" })) => {
    const log: string[] = [];
    const rec = recorder();
    const registry = options.registry ?? createToolRegistry([echoTool("echo", log)]);
    const result = await dispatchToolCall({ call: c, registry, context: ctx(), emit: rec.emit, ledger: rec.ledger, ...options });
    expect(log).toEqual([]); // execute never ran
    expect(rec.types()).toEqual(["tool_execution_blocked"]);
    expect(rec.rows.map((r) => r.status)).toEqual(["blocked"]);
    const event = rec.events[0] as any;
    const row = rec.rows[0];
    expect(row.reason).toBe(event.reason);
    expect(row.result).toEqual(result);
    expect(event.error).toEqual(result.error);
    expect(event.metadata.status).toBe("blocked");
    expect(event.toolCallId).toBe(c.id);
    expect(Object.keys(result).sort()).toEqual(["error", "name", "toolCallId"]);
    return { result, event, row };
  };

  it("unknown_tool", async () => {
    const { result, event } = await blockedCase({}, call("nope"));
    expect(event.reason).toBe("unknown_tool");
    expect(result).toEqual({ toolCallId: "call_1", name: "nope", error: { message: "Unknown tool: nope" } });
  });

  it("tool_denied by deny, by a missing allow, and by any of several filters", async () => {
    for (const filter of [{ deny: ["echo"] }, { allow: ["other"] }, [{ allow: ["echo"] }, { deny: ["echo"] }]]) {
      const { result, event } = await blockedCase({ filter });
      expect(event.reason).toBe("tool_denied");
      expect(result.error).toEqual({ message: "Tool denied: echo" });
    }
  });

  it("invalid_arguments keeps a provider's argumentsError as is", async () => {
    const argumentsError = { name: "ProviderTransportError", message: "Invalid tool arguments JSON for tool echo", code: "invalid_json_arguments" };
    const { result, event } = await blockedCase({}, call("echo", {}, "call_1", { argumentsError }));
    expect(event.reason).toBe("invalid_arguments");
    expect(result.error).toEqual(argumentsError);
  });

  it("invalid_arguments for every non-object argument value", async () => {
    class Args {
      text = "hi";
    }
    for (const bad of [[1, 2], null, "text", 42, undefined, new Args(), new Map(), new Date()]) {
      const { result, event } = await blockedCase({}, { type: "tool_call", id: "call_1", name: "echo", arguments: bad as never });
      expect(event.reason).toBe("invalid_arguments");
      expect(result.error).toEqual({ message: "Tool arguments must be a JSON object" });
    }
  });

  it("accepts null-prototype argument objects", async () => {
    const args = Object.assign(Object.create(null), { text: "hi" });
    const r = await dispatchToolCall({ call: call("echo", args), registry: createToolRegistry([echoTool()]), context: ctx() });
    expect(r.error).toBeUndefined();
  });

  it("permission_denied: the decision's reason, or the default message", async () => {
    let { result, event } = await blockedCase({ permission: { check: () => ({ allowed: false, reason: "Ask an admin" }) } });
    expect(event.reason).toBe("permission_denied");
    expect(result.error).toMatchObject({ name: "PermissionDeniedError", code: "ERR_PRISM_PERMISSION_DENIED", message: "Ask an admin" });
    ({ result } = await blockedCase({ permission: { check: async () => ({ allowed: false }) } }));
    expect(result.error!.message).toBe("Permission denied for tool:echo:execute");
    ({ result } = await blockedCase({ permission: { check: () => { throw new Error("policy store down"); } } }));
    expect(result.error).toEqual({ name: "Error", message: "policy store down" });
    ({ result } = await blockedCase({ permission: { check: () => "yes" as never } }));
    expect(result.error!.code).toBe("ERR_PRISM_PERMISSION_DENIED");
  });

  it("permission_denied for an untrusted tool", async () => {
    const requests: unknown[] = [];
    const { result, event } = await blockedCase({ trust: { check: (r) => (requests.push(r), { trusted: false }) } });
    expect(event.reason).toBe("permission_denied");
    expect(result.error).toMatchObject({ name: "TrustDeniedError", code: "ERR_PRISM_UNTRUSTED", message: "Untrusted tool: echo" });
    expect(requests).toEqual([{ kind: "tool", target: "echo", capability: "execute", metadata: undefined }]);
    const rejected = await blockedCase({ trust: { check: () => Promise.reject(new Error("no")) } });
    expect(rejected.result.error).toEqual({ name: "Error", message: "no" });
  });

  it("permission_denied for an inactive or foreign identity, from the option or the context", async () => {
    const base = { tenantId: "t1", principal: { kind: "user", id: "u" }, scopes: ["tools"], issuedAt: new Date().toISOString(), verified: true as const };
    const cases: [Record<string, unknown>, string, string, Record<string, unknown>?][] = [
      [{ verified: false }, "unverified", "Identity is not host-verified"],
      [{ issuedAt: "not a date" }, "invalid_issued_at", "Identity issuedAt is invalid"],
      [{ issuedAt: new Date(Date.now() + 5 * 60_000).toISOString() }, "invalid_issued_at", "Identity issuedAt is in the future"],
      [{ expiresAt: new Date(Date.now() - 1000).toISOString() }, "expired", "Identity has expired"],
      [{ revokedAt: new Date(Date.now() - 1000).toISOString() }, "revoked", "Identity has been revoked"],
      [{}, "ownership_tenant", "Ownership tenant conflicts with identity", { tenantId: "t2" }],
      // Both wrong: the identity's own state is checked first.
      [{ expiresAt: new Date(Date.now() - 1000).toISOString() }, "expired", "Identity has expired", { tenantId: "t2" }],
    ];
    for (const [patch, reason, message, ownership] of cases) {
      const { result, event } = await blockedCase({ identity: { ...base, ...patch } as never, ownership });
      expect(event.reason).toBe("permission_denied");
      expect(result.error).toMatchObject({ name: "IdentityError", message });
      const viaContext = await dispatchToolCall({
        call: call("echo"),
        registry: createToolRegistry([echoTool()]),
        context: ctx({ identity: { ...base, ...patch } }),
        ownership: ownership as never,
      });
      expect(viaContext.error!.message, reason).toBe(message);
    }
    let seen: any;
    const ok = await dispatchToolCall({
      call: call("peek"),
      registry: createToolRegistry([{ name: "peek", execute: (_a, c) => ((seen = c), { toolCallId: c.toolCallId, name: "peek" }) }]),
      context: ctx(),
      identity: { ...base, issuedAt: new Date(Date.now() + 30_000).toISOString() },
      ownership: { tenantId: "t1" },
    });
    expect(ok.error).toBeUndefined();
    expect(seen.identity.tenantId).toBe("t1");
  });

  it("validation_failed: a message, an ErrorInfo, a throw, a rejection, garbage", async () => {
    let r = await blockedCase({ validate: () => "text is required" });
    expect(r.event.reason).toBe("validation_failed");
    expect(r.result.error).toEqual({ message: "text is required" });
    r = await blockedCase({ validate: async () => ({ message: "too long", code: "E_LEN" }) });
    expect(r.result.error).toEqual({ message: "too long", code: "E_LEN" });
    r = await blockedCase({ validate: () => { throw new TypeError("validator bug"); } });
    expect(r.result.error).toEqual({ name: "TypeError", message: "validator bug" });
    r = await blockedCase({ validate: () => Promise.reject("nope") });
    expect(r.result.error!.message).toBe("nope");
    r = await blockedCase({ validate: () => 42 as never });
    expect(r.result.error!.message).toBe("Validation failed for tool echo: the validator returned a number");
    r = await blockedCase({ validate: () => null as never });
    expect(r.result.error!.message).toBe("Validation failed for tool echo: the validator returned null");
  });

  it("execution_denied when beforeExecute throws or rejects", async () => {
    let r = await blockedCase({ beforeExecute: () => { throw new Error("policy says no"); } });
    expect(r.event.reason).toBe("execution_denied");
    expect(r.result.error).toEqual({ name: "Error", message: "policy says no" });
    r = await blockedCase({ beforeExecute: async () => { throw Object.assign(new Error("x"), { code: "E_POLICY" }); } });
    expect(r.result.error!.code).toBe("E_POLICY");
  });

  it("execution_denied for a durable effect without an identity, a store or both, naming the tool and the fix", async () => {
    const tool: ToolDefinition = { ...echoTool("pay"), effect: { kind: "external_mutation", idempotency: "required" } };
    const registry = createToolRegistry([tool]);
    const identityFix = 'pass `identity` (a single-process program: localIdentity() from "prism-tools-native/ai-sdk" or "prism-tools-native/openai-agents")';
    const storeFix = 'pass `effectStore` (createMemoryToolEffectStore() or createSqliteToolEffectStore(path) from "prism-tools-native")';
    // Neither: upstream's code and words for the identity (checked first), then both fixes.
    let r = await blockedCase({ registry }, call("pay"));
    expect(r.event.reason).toBe("execution_denied");
    expect(r.result.error).toEqual({
      name: "ToolEffectError",
      message: `verified identity is required for a durable tool effect: tool pay declares idempotency "required" but the call has neither an identity nor an effect store; ${identityFix} and ${storeFix}`,
      code: "ERR_PRISM_TOOL_EFFECT_CONFLICT",
    });
    // A store but no identity.
    r = await blockedCase({ registry, effectStore: createMemoryToolEffectStore() }, call("pay"));
    expect(r.result.error).toEqual({
      name: "ToolEffectError",
      message: `verified identity is required for a durable tool effect: tool pay declares a durable effect but the call has no identity; ${identityFix}`,
      code: "ERR_PRISM_TOOL_EFFECT_CONFLICT",
    });
    // An identity but no store.
    const identity = { tenantId: "t1", principal: { kind: "user", id: "u" }, scopes: ["tools"], issuedAt: new Date().toISOString(), verified: true as const };
    r = await blockedCase({ registry, identity }, call("pay"));
    expect(r.result.error).toEqual({
      name: "ToolEffectError",
      message: `durable tool effect store is required: tool pay declares idempotency "required" but the dispatch has no effect store; ${storeFix}`,
      code: "ERR_PRISM_TOOL_EFFECT_REQUIRED",
    });
  });

  it("never dispatches a provider-hosted call", async () => {
    const r = await blockedCase({}, call("echo", {}, "call_1", { authority: "provider-hosted" }));
    expect(r.event.reason).toBe("execution_denied");
    expect(r.result.error!.code).toBe("ERR_PRISM_PROVIDER_HOSTED");
  });

  it("stops at the first blocking step", async () => {
    const log: string[] = [];
    const r = await dispatchToolCall({
      call: call("echo"),
      registry: createToolRegistry([echoTool()]),
      context: ctx(),
      permission: { check: () => (log.push("permission"), { allowed: false }) },
      validate: () => void log.push("validate"),
      beforeExecute: () => void log.push("beforeExecute"),
    });
    expect(r.error!.code).toBe("ERR_PRISM_PERMISSION_DENIED");
    expect(log).toEqual(["permission"]);
  });
});

describe("dispatchToolCall: tool failures are results", () => {
  const failing = (thrown: () => unknown, async = false): ToolDefinition => ({
    name: "fail",
    execute: async
      ? async () => {
          throw thrown();
        }
      : () => {
          throw thrown();
        },
  });

  it("turns any thrown value into an error result, an error event and an error row", async () => {
    const cases: [() => unknown, Record<string, unknown>][] = [
      [() => new RangeError("out of range"), { name: "RangeError", message: "out of range" }],
      [() => "a string", { message: "a string" }],
      [() => 42, { message: "42" }],
      [() => undefined, { message: "undefined" }],
      [() => null, { message: "null" }],
      [() => ({ message: "plain object", code: 503, retryAfterMs: 1000 }), { message: "plain object", code: 503, retryAfterMs: 1000 }],
      [() => Object.assign(new Error("outer"), { cause: new Error("inner") }), { name: "Error", message: "outer", cause: "Error: inner" }],
      [() => ({ retryAfterMs: -1, message: "neg" }), { message: "neg" }],
    ];
    for (const [thrown, expected] of cases) {
      for (const isAsync of [false, true]) {
        const rec = recorder();
        const result = await dispatchToolCall({
          call: call("fail"),
          registry: createToolRegistry([failing(thrown, isAsync)]),
          context: ctx(),
          emit: rec.emit,
          ledger: rec.ledger,
        });
        expect(result.error).toEqual(expected);
        expect(result).toEqual({ toolCallId: "call_1", name: "fail", error: expected });
        expect(rec.types()).toEqual(["tool_execution_started", "tool_execution_error"]);
        expect((rec.events[1] as any).error).toEqual(expected);
        expect((rec.events[1] as any).metadata.status).toBe("error");
        expect(rec.rows.map((r) => r.status)).toEqual(["started", "error"]);
        expect(rec.rows[1].result).toEqual(result);
      }
    }
  });

  it("makes a bare return value a ToolResult of the call (any value, never an empty id or name)", async () => {
    const domain = { city: "Paris", temp: 21 };
    for (const value of [undefined, null, 5, "x", [1], domain]) {
      const r = await dispatchToolCall({
        call: call("bare"),
        registry: createToolRegistry([{ name: "bare", execute: () => value as never }]),
        context: ctx(),
      });
      expect(r).toEqual({ toolCallId: "call_1", name: "bare", value });
    }
  });

  it("fills a missing or empty toolCallId and name of a returned ToolResult from the call", async () => {
    const returned = { toolCallId: "", value: 7 };
    const r = await dispatchToolCall({
      call: call("half"),
      registry: createToolRegistry([{ name: "half", execute: () => returned as never }]),
      context: ctx(),
    });
    expect(r).toEqual({ toolCallId: "call_1", name: "half", value: 7 });
    expect(returned).toEqual({ toolCallId: "", value: 7 }); // the tool's object is not changed
    const failed = await dispatchToolCall({
      call: call("err"),
      registry: createToolRegistry([{ name: "err", execute: () => ({ error: { message: "no" } }) as never }]),
      context: ctx(),
    });
    expect(failed).toMatchObject({ toolCallId: "call_1", name: "err", error: { message: "no" } });
  });

  it("reports a registered tool without an execute function", async () => {
    const r = await dispatchToolCall({ call: call("inert"), registry: createToolRegistry([{ name: "inert" } as never]), context: ctx() });
    expect(r.error).toMatchObject({ message: "Tool inert has no execute function", code: "invalid_tool" });
  });
});

describe("dispatchToolCall: progress", () => {
  it("calls the caller's progress, emits progress events and appends started rows with the snapshot", async () => {
    const rec = recorder();
    const seen: unknown[] = [];
    const tool: ToolDefinition = {
      name: "long",
      async execute(_a, c) {
        c.progress!(0.25, { stage: "download" });
        await new Promise((r) => setTimeout(r, 1));
        c.progress!(0.75);
        return { toolCallId: c.toolCallId, name: "long", value: "done" };
      },
    };
    await dispatchToolCall({
      call: call("long", { q: 1 }),
      registry: createToolRegistry([tool]),
      context: ctx({ progress: (p: unknown, m: unknown) => seen.push([p, m]) }),
      emit: rec.emit,
      ledger: rec.ledger,
    });
    expect(seen).toEqual([[0.25, { stage: "download" }], [0.75, undefined]]);
    expect(rec.types()).toEqual(["tool_execution_started", "tool_execution_progress", "tool_execution_progress", "tool_execution_finished"]);
    expect(rec.events[1]).toEqual({ type: "tool_execution_progress", sessionId: "s1", runId: "r1", toolCallId: "call_1", name: "long", toolName: "long", progress: 0.25, metadata: { stage: "download" } });
    expect(rec.rows.map((r) => r.status)).toEqual(["started", "started", "started", "finished"]);
    expect(rec.rows[1]).toMatchObject({ status: "started", progress: 0.25, progressMetadata: { stage: "download" }, arguments: { q: 1 } });
    expect(typeof rec.rows[1].progressAt).toBe("string");
  });

  it("a throwing progress observer does not fail the tool", async () => {
    const tool: ToolDefinition = { name: "p", execute: (_a, c) => (c.progress!(1), { toolCallId: c.toolCallId, name: "p", value: 1 }) };
    const r = await dispatchToolCall({
      call: call("p"),
      registry: createToolRegistry([tool]),
      context: ctx({ progress: () => { throw new Error("observer"); } }),
      emit: () => { throw new Error("emit observer"); },
      ledger: { appendToolCall: () => Promise.reject(new Error("ledger down")) },
    });
    expect(r.value).toBe(1);
  });
});

describe("dispatchToolCall: callbacks that answer with promises or plain values", () => {
  it("produces the same outcome and the same rows whether every hook is sync or async", async () => {
    const run = async (wrap: <T>(v: T) => T | Promise<T>) => {
      const rec = recorder();
      const registry = createToolRegistry([
        { name: "t", execute: (a, c) => wrap({ toolCallId: c.toolCallId, name: "t", value: a }) as never },
      ]);
      const result = await dispatchToolCall({
        call: call("t", { n: 1 }),
        registry,
        context: ctx(),
        trust: { check: () => wrap({ trusted: true }) },
        permission: { check: () => wrap({ allowed: true }) },
        validate: () => wrap(undefined),
        beforeExecute: () => wrap(undefined),
        emit: (e) => wrap(void rec.events.push(e)) as never,
        ledger: { appendToolCall: (r) => wrap(void rec.rows.push(r)) as never },
      });
      return { result, types: rec.types(), statuses: rec.rows.map((r) => r.status) };
    };
    const sync = await run((v) => v);
    const async_ = await run((v) => Promise.resolve(v));
    const thenable = await run((v) => ({ then: (res: (x: unknown) => void) => res(v) }) as never);
    expect(async_).toEqual(sync);
    expect(thenable).toEqual(sync);
    expect(sync.result.value).toEqual({ n: 1 });
  });

  it("runs 1 000 concurrent async dispatches with every result in place", async () => {
    const rec = recorder();
    const registry = createToolRegistry([
      {
        name: "sleep",
        async execute(a, c) {
          await new Promise((r) => setTimeout(r, Number(a.ms)));
          return { toolCallId: c.toolCallId, name: "sleep", value: a.i };
        },
      },
    ]);
    const results = await Promise.all(
      Array.from({ length: 1000 }, (_, i) =>
        dispatchToolCall({ call: call("sleep", { i, ms: i % 7 }, `c${i}`), registry, context: ctx(), ledger: rec.ledger }),
      ),
    );
    results.forEach((r, i) => expect(r).toEqual({ toolCallId: `c${i}`, name: "sleep", value: i }));
    expect(rec.terminalRows()).toHaveLength(1000);
    expect(new Set(rec.rows.map((r) => r.id)).size).toBe(2000);
  });
});

describe("dispatchToolCall: secrets", () => {
  const SECRET = "sk-live-0123456789";

  it("never lets a secret reach an event, a row, an error or a validator message", async () => {
    const rec = recorder();
    const leaky: ToolDefinition = {
      name: "leaky",
      execute: (args) => {
        throw new Error(`failed with key ${SECRET} and ${String(args.token)}`);
      },
    };
    const r = await dispatchToolCall({
      call: call("leaky", { token: SECRET, [SECRET]: "as a key", nested: { deep: [SECRET] } }),
      registry: createToolRegistry([leaky]),
      context: ctx(),
      secrets: [SECRET],
      emit: rec.emit,
      ledger: rec.ledger,
    });
    expect(r.error!.message).toBe("failed with key [REDACTED] and [REDACTED]");
    const everything = JSON.stringify([r, rec.events, rec.rows]);
    expect(everything).not.toContain(SECRET);
    expect(everything).toContain("[REDACTED]");

    const v = await dispatchToolCall({
      call: call("leaky", {}),
      registry: createToolRegistry([leaky]),
      context: ctx(),
      redactor: createSecretRedactor([SECRET]),
      validate: () => `bad token ${SECRET}`,
      emit: rec.emit,
      ledger: rec.ledger,
    });
    expect(v.error!.message).toBe("bad token [REDACTED]");
    expect(JSON.stringify([v, rec.events, rec.rows])).not.toContain(SECRET);
    expect(rec.rows.at(-1)!.redacted).toBe(true);
  });

  it("redacts finished results with the redactor, and passes rows through a host redactor", async () => {
    const rec = recorder();
    const seen: unknown[] = [];
    const r = await dispatchToolCall({
      call: call("echo", { text: `my ${SECRET}` }),
      registry: createToolRegistry([echoTool()]),
      context: ctx(),
      redactor: { redact: (v: any) => (seen.push(v), JSON.parse(JSON.stringify(v).replaceAll(SECRET, "***"))) },
      emit: rec.emit,
      ledger: rec.ledger,
    });
    expect(r.value).toEqual({ text: "my ***" });
    expect(JSON.stringify([rec.events, rec.rows])).not.toContain(SECRET);
    expect(seen.length).toBeGreaterThan(0);
  });

  it("reads the secrets at every call: the same list changed in place, a new list, a redactor added or gone", async () => {
    const registry = createToolRegistry([echoTool()]);
    const secrets: unknown[] = ["alpha"];
    const options = { call: call("echo", { text: "alpha beta gamma" }), registry, context: ctx(), secrets: secrets as string[] };
    const text = async (o: object = options) => ((await dispatchToolCall(o as never)).value as { text: string }).text;
    expect(await text()).toBe("[REDACTED] beta gamma");
    secrets.push("beta");
    expect(await text()).toBe("[REDACTED] [REDACTED] gamma");
    secrets[0] = "gamma";
    expect(await text()).toBe("alpha [REDACTED] [REDACTED]");
    secrets.length = 0;
    secrets.push(7, null, "alpha");
    expect(await text()).toBe("[REDACTED] beta gamma");
    expect(await text({ ...options, secrets: ["gamma"] })).toBe("alpha beta [REDACTED]");
    expect(await text({ ...options, redactor: createSecretRedactor(["beta"]) })).toBe("[REDACTED] [REDACTED] gamma");
    expect(await text({ ...options, secrets: undefined })).toBe("alpha beta gamma");
    expect(await text()).toBe("[REDACTED] beta gamma");
  });
});

describe("createToolDispatcher", () => {
  it("behaves like dispatchToolCall with the options read once", async () => {
    const rec = recorder();
    const registry = createToolRegistry([echoTool(), echoTool("admin")]);
    const dispatcher = createToolDispatcher({ registry, filter: { deny: ["admin"] }, emit: rec.emit, ledger: rec.ledger, secrets: ["zzz"] });
    const ok = await dispatcher.dispatch(call("echo", { text: "zzz" }), ctx());
    expect(ok).toEqual({ toolCallId: "call_1", name: "echo", value: { text: "[REDACTED]" } });
    const denied = await dispatcher.dispatch(call("admin", {}, "c2"), ctx());
    expect(denied.error!.message).toBe("Tool denied: admin");
    const unknown = await dispatcher.dispatch(call("nope", {}, "c3"), ctx());
    expect(unknown.error!.message).toBe("Unknown tool: nope");
    expect(rec.types()).toEqual(["tool_execution_started", "tool_execution_finished", "tool_execution_blocked", "tool_execution_blocked"]);
    expect(rec.terminalRows().map((r) => r.toolCallId)).toEqual(["call_1", "c2", "c3"]);
  });

  it("reports progress through the bound emit and ledger", async () => {
    const rec = recorder();
    const tool: ToolDefinition = { name: "p", execute: (_a, c) => (c.progress!(0.5), { toolCallId: c.toolCallId, name: "p" }) };
    const dispatcher = createToolDispatcher({ registry: createToolRegistry([tool]), emit: rec.emit, ledger: rec.ledger });
    await dispatcher.dispatch(call("p"), ctx());
    expect(rec.types()).toEqual(["tool_execution_started", "tool_execution_progress", "tool_execution_finished"]);
    expect(rec.rows.map((r) => r.status)).toEqual(["started", "started", "finished"]);
  });

  it("rejects misuse with clear errors", () => {
    expect(() => createToolDispatcher({} as never)).toThrow("createToolDispatcher: options.registry is required");
    expect(() => createToolDispatcher(null as never)).toThrow("createToolDispatcher: options must be an object");
  });
});

describe("dispatchToolCall: nested calls", () => {
  it("lets a tool dispatch other tools, synchronously and asynchronously, with one terminal row each", async () => {
    const rec = recorder();
    const registry = createToolRegistry([echoTool()]);
    const outer: ToolDefinition = {
      name: "outer",
      async execute(args, c) {
        const first = await dispatchToolCall({ call: call("echo", { text: "a" }, `${c.toolCallId}.1`), registry, context: ctx(), ledger: rec.ledger });
        const second = await dispatchToolCall({ call: call("missing", {}, `${c.toolCallId}.2`), registry, context: ctx(), ledger: rec.ledger });
        return { toolCallId: c.toolCallId, name: "outer", value: [first.value, second.error] };
      },
    };
    registry.register(outer);
    const r = await dispatchToolCall({ call: call("outer", {}, "top"), registry, context: ctx(), ledger: rec.ledger });
    expect(r.value).toEqual([{ text: "a" }, { message: "Unknown tool: missing" }]);
    expect(rec.terminalRows().map((x) => [x.toolCallId, x.status])).toEqual([
      ["top.1", "finished"],
      ["top.2", "blocked"],
      ["top", "finished"],
    ]);
  });
});

describe("dispatchToolCall: options however they are built", () => {
  it("finds hooks set through getters, prototypes and non-enumerable properties", async () => {
    const registry = createToolRegistry([echoTool()]);
    const base = { call: call("echo"), registry, context: ctx() };
    class Options {
      call = base.call;
      registry = registry;
      context = base.context;
      get filter() {
        return { deny: ["echo"] };
      }
    }
    const inherited = Object.assign(Object.create({ filter: { deny: ["echo"] } }), base);
    const hidden = Object.defineProperty({ ...base }, "filter", { value: { deny: ["echo"] }, enumerable: false });
    for (const options of [new Options(), inherited, hidden]) {
      const r = await dispatchToolCall(options as never);
      expect(r.error).toEqual({ message: "Tool denied: echo" });
    }
    const plain = await dispatchToolCall(base);
    expect(plain.error).toBeUndefined();
  });
});

describe("dispatchToolCall: misuse rejects, never throws synchronously", () => {
  it("rejects a missing registry, a non-object call and bad options", async () => {
    await expect(dispatchToolCall(undefined as never)).rejects.toThrow("dispatchToolCall: options must be an object");
    await expect(dispatchToolCall({ call: call("x"), context: ctx() } as never)).rejects.toThrow("dispatchToolCall: options.registry is required");
    await expect(dispatchToolCall({ call: "x" as never, registry: createToolRegistry(), context: ctx() })).rejects.toThrow(
      "dispatchToolCall: call must be a tool_call object",
    );
    await expect(
      dispatchToolCall({ call: call("x"), registry: createToolRegistry(), context: ctx(), filter: { allow: "x" as never } }),
    ).rejects.toThrow("filter.allow must be an array of tool names");
  });
});

describe("dispatchToolCall: the binding forgets every dispatch, however it ends", () => {
  it("holds no dispatch after results, errors, blocks, rethrows, guardrail rejections and misuse", async () => {
    const { createRequire } = await import("node:module");
    const binding = createRequire(import.meta.url)("../binding.js");
    const registry = createToolRegistry([
      echoTool(),
      { name: "boom", execute: () => { throw new Error("tool failed"); } },
      { name: "later", execute: async (_a, c) => (await new Promise((r) => setTimeout(r, 1)), { toolCallId: c.toolCallId, name: "later", value: 1 }) },
    ]);
    const suspended = Object.assign(new Error("waiting"), { code: "ERR_PRISM_AGENT_RUN_SUSPENDED" });
    const settled = (p: Promise<unknown>) => p.then(() => "resolved", () => "rejected");
    const outcomes = await Promise.all([
      settled(dispatchToolCall({ call: call("echo"), registry, context: ctx() })),
      settled(dispatchToolCall({ call: call("boom"), registry, context: ctx() })),
      settled(dispatchToolCall({ call: call("later"), registry, context: ctx(), emit: () => {} })),
      settled(dispatchToolCall({ call: call("missing"), registry, context: ctx() })),
      settled(dispatchToolCall({ call: call("echo"), registry, context: ctx(), beforeExecute: () => { throw suspended; } })),
      settled(dispatchToolCall({ call: call("echo"), registry, context: ctx(), guardrails: { toolInput: [{ name: "trip", evaluate: () => ({ action: "tripwire", reason: "no" }) }] } })),
      settled(dispatchToolCall({ call: call("echo"), registry, context: ctx(), validate: "not a function" as never })),
      settled(dispatchToolCall({ call: call("echo"), registry: { get: () => { throw new Error("registry down"); } } as never, context: ctx() })),
    ]);
    expect(outcomes).toEqual(["resolved", "resolved", "resolved", "resolved", "rejected", "rejected", "rejected", "resolved"]);
    expect(binding.dispatchLive()).toBe(0);
  });

  it("a dispatch id kept past its end finds nothing, not the dispatch that reused its slot", async () => {
    const { createRequire } = await import("node:module");
    const binding = createRequire(import.meta.url)("../binding.js");
    const C = binding.dispatchCodes();
    const plan = binding.dispatchPlan(undefined, undefined);
    const begin = () => Math.floor(binding.dispatchBegin(plan, 0, 0, 0, 1, "echo", 0) / 128);
    const stale = begin();
    binding.dispatchEnd(stale);
    const fresh = begin(); // the freed slot, under a new generation
    expect(fresh).not.toBe(stale);
    expect(binding.dispatchStep(stale, C.A_DONE)).toBe(C.K_RESOLVE); // nothing found: resolve
    binding.dispatchEnd(stale); // and a stale end cannot forget the live dispatch
    expect(binding.dispatchLive()).toBe(1);
    expect(binding.dispatchStep(fresh, C.A_FOUND, 0)).not.toBe(C.K_RESOLVE); // the live one still steps
    binding.dispatchEnd(fresh);
    expect(binding.dispatchLive()).toBe(0);
  });

  it("a built-in store's claim transition reads its token only from a dispatch that is making one", async () => {
    const { createRequire } = await import("node:module");
    const binding = createRequire(import.meta.url)("../binding.js");
    const store = binding.memoryStoreHandle(binding.createMemoryToolEffectStore());
    const plan = binding.dispatchPlan(undefined, undefined);
    const id = Math.floor(binding.dispatchBegin(plan, 0, 0, 0, 1, "echo", 0) / 128); // at its lookup, not a transition
    for (const dispatch of [id, id + 4096, 0]) {
      expect(() => binding.advanceClaim(store, dispatch, false, undefined, false, false, undefined)).toThrow(`advanceClaim: dispatch ${dispatch} has no claim transition in progress`);
    }
    binding.dispatchEnd(id);
    expect(binding.dispatchLive()).toBe(0);
  });

  it("the effect snapshot lives in its dispatch: a stale or unknown id finds none, and an ended dispatch drops it", async () => {
    const { createRequire } = await import("node:module");
    const binding = createRequire(import.meta.url)("../binding.js");
    const store = binding.memoryStoreHandle(binding.createMemoryToolEffectStore());
    const identity = { tenantId: "t1", userId: "u1", principal: { kind: "user", id: "p1" }, scopes: ["payments.write"], issuedAt: new Date().toISOString(), verified: true };
    const check = binding.identityCheck(JSON.stringify({ identity }));
    const plan = binding.dispatchPlan(undefined, undefined);
    const id = Math.floor(binding.dispatchBegin(plan, 0, 0, 0, 1, "pay", 0) / 128);
    for (const dispatch of [id + 4096, 0]) {
      expect(() => binding.dispatchIdentity(dispatch, check)).toThrow(`dispatchIdentity: dispatch ${dispatch} is not in flight`);
      expect(() => binding.dispatchEffectKey(dispatch, "s", "r", "c", {})).toThrow(`dispatchEffectKey: dispatch ${dispatch} is not in flight`);
      expect(() => binding.claimDispatch(store, dispatch, undefined)).toThrow(`claimDispatch: dispatch ${dispatch} is not in flight`);
    }
    // A live dispatch with no snapshot yet: the key step and the claim are refused as a store refuses.
    expect(() => binding.dispatchEffectKey(id, "s", "r", "c", {})).toThrow("tool effect dispatch snapshot was already used");
    expect(() => binding.claimDispatch(store, id, undefined)).toThrow("tool effect dispatch snapshot was already used");
    binding.dispatchEnd(id);
    expect(binding.dispatchLive()).toBe(0);
    expect(() => binding.claimDispatch(store, id, undefined)).toThrow(`claimDispatch: dispatch ${id} is not in flight`);
  });

  it("a built-in store's claim takes only a memory store's handle", async () => {
    const { createRequire } = await import("node:module");
    const binding = createRequire(import.meta.url)("../binding.js");
    const store = binding.createMemoryToolEffectStore();
    const identity = { tenantId: "t1", principal: { kind: "user", id: "p1" }, verified: true };
    // Another kind of handle, the store object itself, or no value: refused before any dispatch is read.
    for (const wrong of [binding.identityCheck(JSON.stringify({ identity })), store, {}, 7, undefined]) {
      expect(() => binding.claimDispatch(wrong, 0, undefined)).toThrow();
      expect(() => binding.advanceClaim(wrong, 0, true, "{}", false, true, undefined)).toThrow();
    }
    expect(() => binding.claimDispatch(binding.identityCheck(JSON.stringify({ identity })), 0, undefined)).toThrow(/is not the type of wrapped object/);
    expect(() => binding.memoryStoreHandle({})).toThrow();
    expect(binding.dispatchLive()).toBe(0);
  });
});
