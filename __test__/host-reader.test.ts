// One reader of host values (crates/node/src/host.rs) serves canonical JSON (the arguments hash and
// effect key) and redaction: each kind of value gets one reading, and the two consumers give their
// own answer from it. These cases pin both answers for the same value.
import vm from "node:vm";
import { Worker } from "node:worker_threads";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { canonicalToolEffectJson, redactSecrets, toolEffectArgumentsHash } from "../index.js";

const limitCode = (f: () => unknown): string | undefined => {
  try {
    f();
  } catch (e) {
    return (e as { code?: string }).code;
  }
  return undefined;
};

describe("the host reader, read by canonical JSON and by redaction", () => {
  it("runs each getter once per read and answers a throwing one: canonical rethrows it, redaction marks it", () => {
    let reads = 0;
    const value = {
      get counted() {
        reads++;
        return "sk-1";
      },
    };
    expect(canonicalToolEffectJson(value)).toBe('{"counted":"sk-1"}');
    expect(reads).toBe(1);
    expect(redactSecrets(value, ["sk-1"])).toEqual({ counted: "[REDACTED]" });
    expect(reads).toBe(2);

    const boom = new Error("getter failed");
    const throwing = {
      ok: 1,
      get bad() {
        throw boom;
      },
    };
    let caught: unknown;
    try {
      canonicalToolEffectJson(throwing);
    } catch (e) {
      caught = e;
    }
    expect(caught).toBe(boom);
    expect(redactSecrets(throwing, [])).toEqual({ ok: 1, bad: "[Unreadable]" });
  });

  it("answers a proxy whose ownKeys throws: canonical rethrows, redaction marks the object", () => {
    const thrown = new TypeError("no keys");
    const proxy = new Proxy(
      {},
      {
        ownKeys() {
          throw thrown;
        },
      },
    );
    expect(() => canonicalToolEffectJson({ p: proxy })).toThrow(thrown);
    expect(redactSecrets({ p: proxy }, [])).toEqual({ p: "[Unreadable]" });
  });

  it("recognises Map and Set by the built-ins of the addon's load, whatever replaces them later", async () => {
    // A fresh environment (a worker) loads the package, then a script replaces Map and Set before
    // the reader's first container: the reader still reads the real ones as what they are.
    const index = fileURLToPath(new URL("../index.js", import.meta.url));
    const code = `
      const { parentPort } = require("node:worker_threads");
      const api = require(${JSON.stringify(index)});
      const RealMap = Map, RealSet = Set;
      globalThis.Map = class Map {};
      globalThis.Set = class Set {};
      const first = api.redactSecrets("sk-1", ["sk-1"]);
      const copy = api.redactSecrets({ m: new RealMap([["k", "sk-1"]]), s: new RealSet(["sk-1"]) }, ["sk-1"]);
      parentPort.postMessage({ first, copy });`;
    const worker = new Worker(code, { eval: true });
    try {
      const got = await new Promise((resolve, reject) => {
        worker.once("message", resolve);
        worker.once("error", reject);
      });
      expect(got).toEqual({ first: "[REDACTED]", copy: { m: { k: "[REDACTED]" }, s: ["[REDACTED]"] } });
    } finally {
      await worker.terminate();
    }
  });

  it("reads another realm's plain objects and null-prototype objects as plain data in both", () => {
    const foreign = vm.runInNewContext('({ b: [1, { c: "sk-9" }], a: Object.assign(Object.create(null), { z: 1 }) })');
    expect(canonicalToolEffectJson(foreign)).toBe('{"a":{"z":1},"b":[1,{"c":"sk-9"}]}');
    expect(toolEffectArgumentsHash(foreign)).toBe(toolEffectArgumentsHash({ a: { z: 1 }, b: [1, { c: "sk-9" }] }));
    expect(redactSecrets(foreign, ["sk-9"])).toEqual({ b: [1, { c: "[REDACTED]" }], a: { z: 1 } });
  });

  it("refuses what is not JSON in canonical text and copies it in redaction", () => {
    class Point {
      x = 1;
    }
    const date = new Date(0);
    const cases: Array<[unknown, unknown]> = [
      [new Point(), { x: 1 }],
      [new Map([["k", "sk-2"]]), { k: "[REDACTED]" }],
      [new Set(["sk-2"]), ["[REDACTED]"]],
      [{ f: () => 1, u: undefined }, { u: undefined }],
      [Object.assign(new Error("sk-2 failed"), { code: "E" }), { name: "Error", message: "[REDACTED] failed", code: "E" }],
    ];
    for (const [value, redacted] of cases) {
      expect(limitCode(() => canonicalToolEffectJson(value))).toBe("ERR_PRISM_TOOL_EFFECT_LIMIT");
      expect(redactSecrets(value, ["sk-2"])).toEqual(redacted);
    }
    expect(limitCode(() => canonicalToolEffectJson({ when: date }))).toBe("ERR_PRISM_TOOL_EFFECT_LIMIT");
    expect(redactSecrets({ when: date }, []).when).toBe(date);
  });

  it("answers a cycle: canonical refuses it, redaction marks it", () => {
    const a: Record<string, unknown> = { name: "a" };
    a.self = a;
    expect(limitCode(() => canonicalToolEffectJson(a))).toBe("ERR_PRISM_TOOL_EFFECT_LIMIT");
    expect(redactSecrets(a, [])).toEqual({ name: "a", self: "[Circular]" });
  });

  it("answers holes and an own __proto__ key", () => {
    // eslint-disable-next-line no-sparse-arrays
    const sparse = [1, , 3];
    expect(canonicalToolEffectJson(sparse)).toBe("[1,null,3]");
    const copy = redactSecrets(sparse, []) as unknown[];
    expect(copy).toHaveLength(3);
    expect(copy[1]).toBeUndefined();

    const hostile = JSON.parse('{"__proto__": {"polluted": true}, "ok": 1}');
    expect(limitCode(() => canonicalToolEffectJson(hostile))).toBe("ERR_PRISM_TOOL_EFFECT_LIMIT");
    const redacted = redactSecrets(hostile, []) as Record<string, unknown>;
    expect(Object.getPrototypeOf(redacted)).toBe(Object.prototype);
    expect(Object.prototype.hasOwnProperty.call(redacted, "__proto__")).toBe(true);
    expect((redacted as { polluted?: boolean }).polluted).toBeUndefined();
  });

  it("stops at each consumer's depth: canonical refuses past 128 levels, redaction marks past 32", () => {
    let deep: unknown = "end";
    for (let i = 0; i < 200; i++) deep = [deep];
    expect(limitCode(() => canonicalToolEffectJson(deep))).toBe("ERR_PRISM_TOOL_EFFECT_LIMIT");
    let level = redactSecrets(deep, []) as unknown;
    let n = 0;
    while (Array.isArray(level)) {
      level = level[0];
      n++;
    }
    expect(n).toBe(32);
    expect(level).toBe("[MaxDepth]");
    let ok: unknown = 1;
    for (let i = 0; i < 127; i++) ok = [ok];
    expect(canonicalToolEffectJson(ok)).toBe(`${"[".repeat(127)}1${"]".repeat(127)}`);
  });
});
