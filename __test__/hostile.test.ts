// Hostile input: each finding of the hostile-input review, reproduced as it was reported. Every
// test here failed (or hung) before its fix.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { AgentEvent, ToolCallRecord, ToolDefinition } from "../index.js";
import { call, ctx, recorder } from "./helpers/harness.js";
import { failure } from "./helpers/agent.js";

const require = createRequire(import.meta.url);
const api: typeof import("../index.js") = require("../index.js");
const {
  AgentRunError,
  createAgent,
  createJsonSchemaToolArgumentValidator,
  createMemoryRunLedger,
  createMockProvider,
  createSqliteRunLedger,
  createSqliteToolEffectStore,
  createToolRegistry,
  dispatchToolCall,
  toolCallFromArgumentsText,
} = api;

const dir = mkdtempSync(join(tmpdir(), "prism-hostile-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const dbPath = () => join(dir, `db-${++files}.sqlite`);

const SECRET = "sk-live-4242";
const model = { provider: "mock", model: "demo" };

const deepObject = (n: number) => {
  let v: any = { leaf: true };
  for (let i = 0; i < n; i++) v = { v };
  return v;
};

describe("finding 1: provider error events are redacted", () => {
  it("an error event's message loses the secret in result.error and the error event", async () => {
    for (const error of [{ message: `401 invalid key ${SECRET}` }, `401 invalid key ${SECRET}`]) {
      const provider = createMockProvider([[{ type: "error", error } as any]]);
      const session = createAgent({ model, provider, secrets: [SECRET] } as any).createSession();
      const events: AgentEvent[] = [];
      let result: any;
      try {
        for await (const e of session.stream("x")) events.push(e);
      } catch (e) {
        result = (e as InstanceType<typeof AgentRunError>).result;
      }
      expect(result.error).toMatchObject({ message: expect.stringContaining("401 invalid key") });
      expect(typeof result.error).toBe("object");
      expect(JSON.stringify(result)).not.toContain(SECRET);
      expect(JSON.stringify(events)).not.toContain(SECRET);
      expect(events.some((e) => e.type === "error")).toBe(true);
    }
  });
});

describe("finding 2: an own toJSON does not get past redaction", () => {
  it("keeps the secret out of the result, the events and the SQLite ledger file", async () => {
    const path = dbPath();
    const ledger = createSqliteRunLedger(path);
    const rec = recorder();
    const tool: ToolDefinition = {
      name: "account",
      execute: (_a, c) => ({ toolCallId: c.toolCallId, name: "account", value: { account: { toJSON: () => ({ apiKey: SECRET }) } } as any }),
    };
    const result = await dispatchToolCall({
      call: call("account"),
      registry: createToolRegistry([tool]),
      context: ctx(),
      emit: rec.emit,
      ledger,
      secrets: [SECRET],
    } as any);
    expect(JSON.stringify(result)).not.toContain(SECRET);
    expect(JSON.stringify(rec.events)).not.toContain(SECRET);
    await (ledger as any).flush?.();
    const rows = ledger.list?.() ?? [];
    expect(JSON.stringify(rows)).not.toContain(SECRET);
    (ledger as any).close?.();
    expect(readFileSync(path).includes(Buffer.from(SECRET))).toBe(false);
  });
});

describe("finding 3: every dispatched call leaves exactly one terminal row", () => {
  const hostileValues: Array<[string, () => unknown]> = [
    ["a row over 1 MiB", () => "x".repeat(2 * 1024 * 1024)],
    ["a BigInt", () => ({ n: 10n })],
    ["a cycle", () => {
      const o: any = { a: 1 };
      o.self = o;
      return o;
    }],
    ["very deep nesting", () => deepObject(10_000)],
  ];
  for (const make of [() => createMemoryRunLedger(), () => createSqliteRunLedger(dbPath())]) {
    for (const [what, value] of hostileValues) {
      it(`${make().constructor?.name ?? "ledger"}: a result holding ${what}, without secrets`, async () => {
        const ledger = make();
        await dispatchToolCall({
          call: call("t"),
          registry: createToolRegistry([{ name: "t", execute: (_a, c) => ({ toolCallId: c.toolCallId, name: "t", value: value() as any }) }]),
          context: ctx(),
          ledger,
        });
        await (ledger as any).flush?.();
        const rows = ledger.list() as ToolCallRecord[];
        expect(rows.map((r) => r.status)).toEqual(["started", "finished"]);
        (ledger as any).close?.();
      });
    }
    it("arguments over 1 MiB still leave a started and a terminal row", async () => {
      const ledger = make();
      await dispatchToolCall({
        call: call("t", { big: "y".repeat(2 * 1024 * 1024) }),
        registry: createToolRegistry([{ name: "t", execute: (_a, c) => ({ toolCallId: c.toolCallId, name: "t", value: 1 }) }]),
        context: ctx(),
        ledger,
      });
      await (ledger as any).flush?.();
      const rows = ledger.list() as ToolCallRecord[];
      expect(rows.map((r) => r.status)).toEqual(["started", "finished"]);
      expect(JSON.stringify(rows).length).toBeLessThan(2 * 1024 * 1024);
      (ledger as any).close?.();
    });
  }
  it("an emit hook that never settles holds its call only until the call is aborted", async () => {
    const rows: ToolCallRecord[] = [];
    const controller = new AbortController();
    const done = dispatchToolCall({
      call: call("t"),
      registry: createToolRegistry([{ name: "t", execute: (_a, c) => ({ toolCallId: c.toolCallId, name: "t", value: 1 }) }]),
      context: { ...ctx(), signal: controller.signal },
      emit: () => new Promise<void>(() => {}),
      ledger: { appendToolCall: (r: ToolCallRecord) => void rows.push(r) },
    });
    await new Promise((r) => setTimeout(r, 10));
    expect(rows.map((r) => r.status)).toEqual([]);
    controller.abort(new Error("gave up"));
    await done;
    expect(rows.filter((r) => r.status !== "started")).toHaveLength(1);
  });
  it("a hook promise that rejects after its call was aborted is not an unhandled rejection", async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (e: unknown) => void unhandled.push(e);
    process.on("unhandledRejection", onUnhandled);
    try {
      const controller = new AbortController();
      const result = await api.dispatchToolCall({
        call: call("t"),
        registry: api.createToolRegistry([
          {
            name: "t",
            execute: (_a, c) => {
              controller.abort(new Error("gave up"));
              return { toolCallId: c.toolCallId, name: "t", value: 1 };
            },
          },
        ]),
        context: { ...ctx(), signal: controller.signal },
        // Asked after the abort: its rejection comes when nobody waits for it any more.
        emit: () => new Promise<void>((_, reject) => setTimeout(() => reject(new Error("emit failed late")), 5)),
      });
      expect(result.toolCallId).toBe("call_1");
      await new Promise((r) => setTimeout(r, 30));
      expect(unhandled).toEqual([]);
    } finally {
      process.off("unhandledRejection", onUnhandled);
    }
  });
  it("a ledger whose append never settles holds its call only until the call is aborted", async () => {
    const appended: string[] = [];
    const controller = new AbortController();
    const done = dispatchToolCall({
      call: call("t"),
      registry: createToolRegistry([{ name: "t", execute: (_a, c) => ({ toolCallId: c.toolCallId, name: "t", value: 1 }) }]),
      context: { ...ctx(), signal: controller.signal },
      ledger: { appendToolCall: (r: ToolCallRecord) => (appended.push(r.status), new Promise<void>(() => {})) },
    });
    await new Promise((r) => setTimeout(r, 10));
    expect(appended).toEqual(["started"]);
    controller.abort(new Error("gave up"));
    const result = await done;
    expect(result.toolCallId).toBe("call_1");
    expect(appended.filter((s) => s !== "started")).toHaveLength(1);
  });
});

describe("finding 4: a throwing then getter or a throwing Proxy is the callback throwing", () => {
  const throwingThen = () => {
    const o = {};
    Object.defineProperty(o, "then", {
      get() {
        throw new Error("then getter throws");
      },
    });
    return o;
  };
  const throwingProxy = () =>
    new Proxy(
      {},
      {
        get() {
          throw new Error("proxy throws on read");
        },
        has() {
          throw new Error("proxy throws on has");
        },
        getPrototypeOf() {
          throw new Error("proxy throws on getPrototypeOf");
        },
        ownKeys() {
          throw new Error("proxy throws on ownKeys");
        },
      },
    );
  const hooks: Array<[string, (v: () => unknown) => Record<string, unknown>]> = [
    ["execute", (v) => ({ tool: { name: "t", execute: v } })],
    ["validate", (v) => ({ validate: v })],
    ["permission.check", (v) => ({ permission: { check: v } })],
    ["trust.check", (v) => ({ trust: { check: v } })],
    ["beforeExecute", (v) => ({ beforeExecute: v })],
    ["guardrail", (v) => ({ guardrails: { toolInput: [{ name: "g", evaluate: v }] } })],
    ["emit", (v) => ({ emit: v })],
  ];
  for (const [hook, wire] of hooks) {
    for (const [kind, value] of [
      ["then getter", throwingThen],
      ["Proxy", throwingProxy],
    ] as const) {
      it(`${hook} returning a ${kind}: dispatch settles and records one terminal row`, async () => {
        const rows: ToolCallRecord[] = [];
        const extra = wire(value);
        const tool = (extra.tool as ToolDefinition) ?? { name: "t", execute: (_a: unknown, c: any) => ({ toolCallId: c.toolCallId, name: "t", value: 1 }) };
        delete extra.tool;
        const outcome = await dispatchToolCall({
          call: call("t"),
          registry: createToolRegistry([tool]),
          context: ctx(),
          ledger: { appendToolCall: (r: ToolCallRecord) => void rows.push(r) },
          ...extra,
        } as any).then(
          (r) => ({ ok: true, r }),
          (e) => ({ ok: false, e }),
        );
        expect(outcome).toBeDefined();
        const terminal = rows.filter((r) => r.status !== "started");
        expect(terminal).toHaveLength(1);
      });
    }
  }
  it("in the agent, a tool returning a throwing thenable fails the call, not the run", async () => {
    const provider = createMockProvider([
      [{ type: "tool_call", call: { type: "tool_call", id: "c1", name: "t", arguments: {} } } as any, { type: "done" } as any],
      [{ type: "done" } as any],
    ]);
    const tool: ToolDefinition = { name: "t", execute: (() => throwingThen()) as any };
    const result = await createAgent({ model, provider, tools: [tool] }).createSession().run("x");
    expect(result.status).toBe("succeeded");
  });
});

describe("finding 5: integers past 2^53 in provider text", () => {
  const validate = createJsonSchemaToolArgumentValidator();
  const check = (schema: object, text: string) => {
    const c = toolCallFromArgumentsText("c", "t", text);
    return validate({ name: "t", parameters: schema } as any, c.arguments as any, {} as any);
  };
  it("uniqueItems sees the ids the tool will receive", () => {
    const c = toolCallFromArgumentsText("c", "t", '{"ids":[9007199254740992,9007199254740993]}');
    const ids = (c.arguments as any).ids;
    expect(ids[0]).toBe(ids[1]);
    expect(check({ type: "object", properties: { ids: { type: "array", uniqueItems: true } } }, '{"ids":[9007199254740992,9007199254740993]}')).toEqual(
      expect.stringContaining("unique"),
    );
  });
  it("const, enum and not compare the rounded value", () => {
    // JSON.parse("9007199254740993") === 9007199254740992
    expect(check({ properties: { n: { not: { const: 9007199254740992 } } } }, '{"n":9007199254740993}')).toBeTypeOf("string");
    expect(check({ properties: { n: { enum: [9007199254740992] } } }, '{"n":9007199254740993}')).toBeUndefined();
    expect(check({ properties: { n: { const: 9007199254740992 } } }, '{"n":9007199254740993}')).toBeUndefined();
    expect(check({ properties: { n: { const: 18446744073709551616 } } }, '{"n":18446744073709551617}')).toBeUndefined();
    expect(check({ properties: { n: { const: 1e21 } } }, '{"n":1000000000000000000001}')).toBeUndefined();
    // A schema constant past 2^53 that JSON.stringify writes as a plain integer (found by the
    // arguments-text property): both sides must be the same double.
    expect(check({ properties: { n: { const: 576500000003000000 } } }, '{"n":5765000.00003e11}')).toBeUndefined();
    expect(check({ properties: { n: { enum: [-576500000003000000] } } }, '{"n":-576500000003000001}')).toBeUndefined();
  });
  it("small integers and floats are unchanged", () => {
    expect(check({ properties: { n: { const: 9007199254740991 } } }, '{"n":9007199254740991}')).toBeUndefined();
    expect(check({ properties: { n: { type: "integer" } } }, '{"n":9007199254740993}')).toBeUndefined();
    expect(check({ properties: { n: { const: 0.1 } } }, '{"n":0.1}')).toBeUndefined();
    expect(check({ properties: { n: { maximum: 9007199254740991 } } }, '{"n":9007199254740993}')).toBeTypeOf("string");
  });
});

describe("finding 6: bounded work in validation", () => {
  const chain = (levels: number) => {
    const defs: Record<string, object> = {};
    for (let i = 0; i < levels; i++) defs[`d${i}`] = { oneOf: [{ $ref: `#/$defs/d${i + 1}` }, { $ref: `#/$defs/d${i + 1}` }] };
    defs[`d${levels}`] = { type: "string" };
    return { $defs: defs, type: "object", properties: { a: { $ref: "#/$defs/d0" } } };
  };
  it("an exponential $ref chain is refused with the budget named", () => {
    const validate = createJsonSchemaToolArgumentValidator();
    const msg = validate({ name: "deep", parameters: chain(60) } as any, { a: "x" }, {} as any);
    expect(msg).toMatch(/\$ref expansion/);
    expect(msg).toMatch(/20000/);
  });
  it("a small $ref chain still validates", () => {
    const validate = createJsonSchemaToolArgumentValidator();
    // Both branches match, so oneOf fails; the point is that it compiles and runs.
    expect(validate({ name: "shallow", parameters: chain(3) } as any, { a: "x" }, {} as any)).toMatch(/oneOf/);
    // 2^13 - 1 expansions: under the budget, compiled and run.
    expect(validate({ name: "wide", parameters: chain(12) } as any, { a: "x" }, {} as any)).toMatch(/oneOf/);
    expect(validate({ name: "one", parameters: { $defs: { s: { type: "string" } }, properties: { a: { $ref: "#/$defs/s" } } } } as any, { a: "x" }, {} as any)).toBeUndefined();
  });
  it("a catastrophic backtracking pattern stops at the backtracking limit, named", () => {
    const validate = createJsonSchemaToolArgumentValidator({ maxStringLength: 2_000_000 });
    // A look-ahead keeps the pattern on the backtracking engine (a purely regular one runs in linear
    // time); `^(a+)+\\1$` itself is now refused at compile (a back-reference into a repeated group).
    const msg = validate({ name: "re", parameters: { properties: { s: { type: "string", pattern: "^(?:(?=a)a+)+$" } } } } as any, { s: "a".repeat(1_000_000) + "b" }, {} as any);
    expect(msg).toMatch(/backtracking limit of 100000 steps/);
  });
  it("the regex format applies pattern's compile rules", () => {
    const validate = createJsonSchemaToolArgumentValidator();
    const nested = "(".repeat(100_000) + ")".repeat(100_000);
    const schema = { properties: { r: { type: "string", format: "regex" } } };
    expect(validate({ name: "f", parameters: schema } as any, { r: nested }, {} as any)).toBeTypeOf("string");
    expect(validate({ name: "f", parameters: schema } as any, { r: "^a+$" }, {} as any)).toBeUndefined();
    expect(validate({ name: "f", parameters: schema } as any, { r: "(" }, {} as any)).toBeTypeOf("string");
  });
});

describe("finding 7: abort ends a run whose provider stream is stuck", () => {
  const stuck = { id: "stuck", async *generate() {
    await new Promise(() => {});
  } };
  it("session.abort() settles run()", async () => {
    const session = createAgent({ model, provider: stuck as any }).createSession();
    const run = session.run("x");
    setTimeout(() => session.abort("stop"), 10);
    const result = await failure(run);
    expect(result.status).toBe("aborted");
  });
  it("options.signal settles run()", async () => {
    const controller = new AbortController();
    const run = createAgent({ model, provider: stuck as any }).createSession().run("x", { signal: controller.signal });
    setTimeout(() => controller.abort("stop"), 10);
    expect((await failure(run)).status).toBe("aborted");
  });
});

describe("smaller findings", () => {
  it("createSqliteToolEffectStore refuses a private database ('' and ':memory:')", () => {
    for (const path of ["", ":memory:"]) {
      let err: any;
      try {
        createSqliteToolEffectStore(path);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(Error);
      expect(err.message).toMatch(/createMemoryToolEffectStore/);
      expect(err.code).toBe("ERR_PRISM_INVALID_OPTION");
    }
  });

  it("ledger errors carry the package's codes", () => {
    let err: any;
    try {
      createMemoryRunLedger().appendToolCall(null as never);
    } catch (e) {
      err = e;
    }
    expect(err.code).toMatch(/^ERR_PRISM_/);
    try {
      createSqliteRunLedger(join(dir, "no", "such", "dir", "x.db"));
      err = undefined;
    } catch (e) {
      err = e;
    }
    expect(err?.code).toMatch(/^ERR_PRISM_/);
    try {
      createMemoryRunLedger().list("nope" as never);
      err = undefined;
    } catch (e) {
      err = e;
    }
    expect(err?.code).toMatch(/^ERR_PRISM_/);
  });

  it("toolCallFromArgumentsText with a non-string name returns its error result", () => {
    for (const name of [undefined, null, 42, {}, Symbol("s")] as unknown[]) {
      const c = toolCallFromArgumentsText("c", name as string, "not json");
      expect(c.argumentsError?.code).toBe("invalid_json_arguments");
      expect(toolCallFromArgumentsText("c", name as string, '{"a":1}').arguments).toEqual({ a: 1 });
    }
  });

  it("limits.maxToolRounds, limits.maxTurns and loop.toolConcurrency refuse NaN", async () => {
    for (const [limits, loop, name] of [
      [{ maxToolRounds: NaN }, undefined, "maxToolRounds"],
      [{ maxTurns: NaN }, undefined, "maxTurns"],
      [undefined, { toolConcurrency: NaN }, "toolConcurrency"],
    ] as const) {
      const provider = createMockProvider([[{ type: "done" } as any]]);
      const p = (async () => createAgent({ model, provider, limits, loop } as any).createSession().run("x"))();
      await expect(p).rejects.toThrow(new RegExp(name));
    }
  });

  it("without secrets the started row is a snapshot of the arguments", async () => {
    const rows: ToolCallRecord[] = [];
    const tool: ToolDefinition = {
      name: "mut",
      execute(args: any, c) {
        args.changed = true;
        return { toolCallId: c.toolCallId, name: "mut", value: 1 };
      },
    };
    await dispatchToolCall({ call: call("mut", { a: 1 }), registry: createToolRegistry([tool]), context: ctx(), ledger: { appendToolCall: (r) => void rows.push(r) } });
    expect(rows[0].arguments).toEqual({ a: 1 });
  });

  it("a lone surrogate in a tool name never collapses two names in search", () => {
    const { createToolSearchIndex } = api as any;
    const index = createToolSearchIndex([
      { name: "pay\ud800", description: "pay an invoice" },
      { name: "pay\udc00", description: "pay a bill" },
    ]);
    const names = index.search("pay").map((h: any) => h.name);
    for (const n of names) expect(["pay\ud800", "pay\udc00"]).toContain(n);
  });
});
