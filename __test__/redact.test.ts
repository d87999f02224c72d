import { describe, expect, it } from "vitest";
import { createSecretRedactor, errorToErrorInfo, redactRunLedgerRecord, redactSecrets, type ToolCallRecord } from "../index.js";

const S = "sk-secret-123";

describe("redactSecrets", () => {
  it("replaces every secret in every string and key at any depth, without mutating the input", () => {
    const input = { a: `x ${S} y ${S}`, [S]: 1, nested: { list: [S, { deep: `${S}!` }] } };
    const snapshot = structuredClone(input);
    const out = redactSecrets(input, [S]);
    expect(out).toEqual({ a: "x [REDACTED] y [REDACTED]", "[REDACTED]": 1, nested: { list: ["[REDACTED]", { deep: "[REDACTED]!" }] } });
    expect(input).toEqual(snapshot);
    expect(out).not.toBe(input);
  });

  it("ignores empty secrets and redacts overlapping secrets whole", () => {
    expect(redactSecrets({ t: "abcdef abc" }, ["", "abc", "abcdef"])).toEqual({ t: "[REDACTED] [REDACTED]" });
    expect(redactSecrets("plain", [""])).toBe("plain");
  });

  it("turns Map into an object and Set into an array; Date, RegExp and typed arrays pass through", () => {
    const date = new Date(0);
    const re = /x/g;
    const bytes = new Uint8Array([1, 2]);
    const out = redactSecrets({ m: new Map<unknown, unknown>([["k", S], [1, "v"]]), s: new Set([S, "ok"]), date, re, bytes }, [S]) as any;
    expect(out.m).toEqual({ k: "[REDACTED]", 1: "v" });
    expect(out.s).toEqual(["[REDACTED]", "ok"]);
    expect(out.date).toBe(date);
    expect(out.re).toBe(re);
    expect(out.bytes).toBe(bytes);
  });

  it("marks ancestor cycles [Circular] and depth beyond 32 [MaxDepth], but not shared siblings", () => {
    const cyclic: any = { name: "a" };
    cyclic.self = cyclic;
    cyclic.list = [cyclic];
    expect(redactSecrets(cyclic, [S])).toEqual({ name: "a", self: "[Circular]", list: ["[Circular]"] });
    const shared = { v: 1 };
    expect(redactSecrets({ a: shared, b: shared }, [S])).toEqual({ a: { v: 1 }, b: { v: 1 } });
    let deep: any = "leaf";
    for (let i = 0; i < 40; i++) deep = { d: deep };
    let cur = redactSecrets(deep, [S]) as any;
    let depth = 0;
    while (typeof cur === "object") {
      cur = cur.d;
      depth++;
    }
    expect(cur).toBe("[MaxDepth]");
    expect(depth).toBe(32);
  });

  it("suffixes keys that collide after redaction", () => {
    expect(redactSecrets({ [`a${S}`]: 1, "a[REDACTED]": 2 }, [S])).toEqual({ "a[REDACTED]": 1, "a[REDACTED]__2": 2 });
  });

  it("keeps a __proto__ key as own data and never changes a prototype", () => {
    const input = JSON.parse(`{"__proto__": {"isAdmin": true}, "t": "${S}"}`);
    const out = redactSecrets(input, [S]) as any;
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(out.isAdmin).toBeUndefined();
    expect(Object.prototype.hasOwnProperty.call(out, "__proto__")).toBe(true);
    expect(out.t).toBe("[REDACTED]");
  });

  it("survives getters that throw and keeps the rest", () => {
    const hostile = { ok: S, get bad() { throw new Error("no"); } };
    expect(redactSecrets(hostile, [S])).toEqual({ ok: "[REDACTED]", bad: "[Unreadable]" });
  });

  // The matcher was a DFA whose construction walked failure links from every state: a periodic
  // secret took quadratic time (32 000 characters, seconds; 1 MB, about forty minutes).
  it("builds for a 1 MB periodic secret and finds it in a long text", () => {
    const x = "x".repeat(1 << 20);
    const ab = "ab".repeat(1 << 19);
    expect(redactSecrets(`<${x}>`, [x])).toBe("<[REDACTED]>");
    const r = createSecretRedactor([ab, x, "xy"]);
    expect(r.redact({ a: `${ab}b ${x}y xy` })).toEqual({ a: "[REDACTED]b [REDACTED]y [REDACTED]" });
  });

  it("matches on UTF-16 code units: lone surrogates are kept and found as JS finds them", () => {
    // A lone surrogate next to a secret stays as it was (it used to become U+FFFD).
    expect(redactSecrets("\ud83dab", ["ab"])).toBe("\ud83d[REDACTED]");
    expect(redactSecrets({ t: "ab\udc00" }, ["ab"])).toEqual({ t: "[REDACTED]\udc00" });
    // A secret holding half of a pair is found inside the pair, as `includes` finds it.
    expect("x\ud83d\ude00!y".includes("\ude00!")).toBe(true);
    expect(redactSecrets("x\ud83d\ude00!y", ["\ude00!"])).toBe("x\ud83d[REDACTED]y");
    expect(redactSecrets("x\ud83d\ude00!y", ["\ud83d"])).toBe("x[REDACTED]\ude00!y");
    // A lone surrogate is not U+FFFD, either way round.
    expect(redactSecrets("a\ud800", ["\ufffd"])).toBe("a\ud800");
    expect(redactSecrets("a\ufffd", ["\ud800"])).toBe("a\ufffd");
    expect(redactSecrets("a\ud800b", ["\ud800"])).toBe("a[REDACTED]b");
    expect(createSecretRedactor(["\udc00"]).redact(["\udc00\udc00", "\ud800"])).toEqual(["[REDACTED][REDACTED]", "\ud800"]);
  });

  it("matches object and Map keys on UTF-16 code units too", () => {
    // A key was read as text, a lone surrogate as U+FFFD: a secret holding one was not found, and
    // the key came back as the secret with that one unit changed.
    const secret = "pass\ud800word";
    const out = redactSecrets({ [secret]: 1, [`x${secret}`]: 2, "\udc00": 3 }, [secret]) as Record<string, number>;
    expect(Object.keys(out)).toEqual(["[REDACTED]", "x[REDACTED]", "\udc00"]);
    expect(redactSecrets(new Map([[secret, 1]]), [secret])).toEqual({ "[REDACTED]": 1 });
    // A key left with a lone surrogate keeps it, renamed when it meets the key before it.
    expect(Object.keys(redactSecrets({ "\ud800[REDACTED]": 1, "\ud800ab": 2 }, ["ab"]) as object)).toEqual([
      "\ud800[REDACTED]",
      "\ud800[REDACTED]__2",
    ]);
  });

  // Each secret past 4 KB is matched by a scanner of its own, merged with the automaton of the
  // short ones: the result is leftmost-longest over all of them, as this plain model finds it.
  it("redacts with a 1 MB secret among short ones, leftmost-longest", () => {
    let r = 99;
    const rnd = (n: number) => (r = (r * 1103515245 + 12345) % 2 ** 31) % n;
    const chars = ["a", "b", "c", "é", "中", "😀", "\ud800"];
    let big = "";
    while (big.length < 1 << 20) big += chars[rnd(chars.length)];
    const secrets = [big, big.slice(0, 5000), "abc", "😀a", big.slice(1 << 19, (1 << 19) + 7)];
    const text = `<${big}|${big.slice(0, 6000)}|${big.slice(3)}|${big.slice(0, -1)}>abc`;
    const model = (t: string) => {
      let out = "";
      for (let i = 0; i < t.length; ) {
        const n = Math.max(0, ...secrets.filter((s) => t.startsWith(s, i)).map((s) => s.length));
        out += n > 0 ? "[REDACTED]" : t[i];
        i += n > 0 ? n : 1;
      }
      return out;
    };
    const redactor = createSecretRedactor(secrets);
    const got = redactor.redact({ text }) as { text: string };
    expect(got.text.length).toBeLessThan(text.length);
    expect(got.text.startsWith("<[REDACTED]|[REDACTED]")).toBe(true);
    expect(got.text === model(text)).toBe(true);
    expect(redactSecrets(text, secrets) === got.text).toBe(true);
  });

  it("rejects a non-array secrets list", () => {
    expect(() => redactSecrets({}, "x" as never)).toThrow("redactSecrets: secrets must be an array of strings");
  });
});

describe("createSecretRedactor and redactRunLedgerRecord", () => {
  it("redacts with the secrets it was made with", () => {
    const r = createSecretRedactor([S]);
    expect(r.redact({ k: S })).toEqual({ k: "[REDACTED]" });
  });

  it("passes a ledger row through the redactor, or returns it as is without one", () => {
    const row = { id: "1", sessionId: "s", runId: "r", toolCallId: "c", name: "t", arguments: { key: S }, status: "started", startedAt: "2026-01-01T00:00:00.000Z", redacted: true } as ToolCallRecord;
    expect(redactRunLedgerRecord(row, createSecretRedactor([S])).arguments).toEqual({ key: "[REDACTED]" });
    expect(redactRunLedgerRecord(row)).toBe(row);
    expect(redactRunLedgerRecord(row, { redact: (v: any) => ({ ...v, arguments: {} }) }).arguments).toEqual({});
  });
});

describe("errorToErrorInfo", () => {
  it("keeps name, message, code, retryAfterMs and cause as a string, all redacted", () => {
    const e = Object.assign(new TypeError(`bad ${S}`), { code: `E_${S}`, retryAfterMs: 250, cause: new Error(`root ${S}`) });
    expect(errorToErrorInfo(e, [S])).toEqual({ name: "TypeError", message: "bad [REDACTED]", code: "E_[REDACTED]", retryAfterMs: 250, cause: "Error: root [REDACTED]" });
  });

  it("drops invalid retryAfterMs and codes that are not strings or numbers", () => {
    expect(errorToErrorInfo({ message: "m", code: { x: 1 }, retryAfterMs: Number.POSITIVE_INFINITY })).toEqual({ message: "m" });
    expect(errorToErrorInfo({ message: "m", code: 7, retryAfterMs: 0 })).toEqual({ message: "m", code: 7, retryAfterMs: 0 });
  });

  it("describes thrown non-errors", () => {
    expect(errorToErrorInfo("plain")).toEqual({ message: "plain" });
    expect(errorToErrorInfo(42)).toEqual({ message: "42" });
    expect(errorToErrorInfo(undefined)).toEqual({ message: "undefined" });
    expect(errorToErrorInfo(Symbol("s"))).toEqual({ message: "Symbol(s)" });
    expect(errorToErrorInfo({ no: "message" })).toEqual({ message: "[object Object]" });
  });
});

describe('function-valued properties and redaction', () => {
  it('an own toJSON cannot get a secret into a ledger row', async () => {
    const { createToolRegistry, dispatchToolCall } = await import('../index.js')
    const secret = 'sk-live-0123456789'
    const args = { text: 'hello', toJSON: () => ({ text: secret }) }
    const rows: unknown[] = []
    const events: unknown[] = []
    const registry = createToolRegistry([
      { name: 'echo', execute: (_a: unknown, c: { toolCallId: string }) => ({ toolCallId: c.toolCallId, name: 'echo', value: 'ok' }) },
    ])
    await dispatchToolCall({
      call: { type: 'tool_call', id: 'c1', name: 'echo', arguments: args },
      registry,
      context: { sessionId: 's', runId: 'r' },
      secrets: [secret],
      emit: (e: unknown) => void events.push(e),
      ledger: { appendToolCall: (row: unknown) => void rows.push(row) },
    })
    expect(rows).toHaveLength(2)
    expect(JSON.stringify(rows)).not.toContain(secret)
    expect(JSON.stringify(events)).not.toContain(secret)
  })
})

describe("dispatchToolCall: model-chosen call ids and tool names", () => {
  const SECRET = "sk-live-0123456789abcdef";
  const holds = (v: unknown) => JSON.stringify(v).includes(SECRET);

  for (const how of ["secrets", "createSecretRedactor", "a host redactor"] as const) {
    it(`never lets a secret in a call id or a tool name into events, rows or the result (${how})`, async () => {
      const { createToolRegistry, dispatchToolCall, createMemoryRunLedger } = await import("../index.js");
      const redaction =
        how === "secrets"
          ? { secrets: [SECRET] }
          : how === "createSecretRedactor"
            ? { redactor: createSecretRedactor([SECRET]) }
            : { redactor: { redact: (v: unknown) => JSON.parse(JSON.stringify(v).split(SECRET).join("[REDACTED]")) } };
      const registry = createToolRegistry([
        { name: `pay_${SECRET}`, execute: (_a: unknown, c: { toolCallId: string }) => ({ toolCallId: c.toolCallId, name: `pay_${SECRET}`, value: 1 }) },
        { name: "progress", execute: (_a: unknown, c: { toolCallId: string; progress?: (p: number) => void }) => (c.progress?.(0.5), { toolCallId: c.toolCallId, name: "progress", value: 1 }) },
      ]);
      const events: unknown[] = [];
      const ledger = createMemoryRunLedger();
      const results = [];
      for (const [id, name] of [
        [`call_${SECRET}`, `unknown_${SECRET}`], // blocked: unknown tool
        [`call_${SECRET}`, `pay_${SECRET}`], // finished: a tool whose own name holds the secret
        [`call_${SECRET}`, "progress"], // progress events
      ]) {
        results.push(
          await dispatchToolCall({
            call: { type: "tool_call", id, name, arguments: {} },
            registry,
            context: { sessionId: "s", runId: "r", toolCallId: id },
            emit: (e: unknown) => void events.push(e),
            ledger,
            ...redaction,
          }),
        );
      }
      expect(results[0].error?.message).toMatch(/^Unknown tool: /);
      expect(events.length).toBeGreaterThan(4);
      for (const e of events) expect(holds(e), JSON.stringify(e)).toBe(false);
      const rows = ledger.list();
      expect(rows.length).toBeGreaterThan(4);
      for (const row of rows) expect(holds(row), JSON.stringify(row)).toBe(false);
      for (const r of results) expect(holds(r), JSON.stringify(r)).toBe(false);
    });
  }
});
