// The ToolEffectError / IdentityError classes the addon builds its errors from are held per JS
// environment: a worker thread gets instances of its own classes, and registering classes again in
// one environment replaces the old ones (whose references are released) without touching another's.
import { createRequire } from "node:module";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { describe, expect, it } from "vitest";

const require = createRequire(import.meta.url);
const root = join(__dirname, "..");
const api: typeof import("../index.js") = require("../index.js");
const native = require("../binding.js");

function refusal(): unknown {
  try {
    api.canonicalToolEffectJson({ f() {} });
  } catch (e) {
    return e;
  }
  throw new Error("canonicalToolEffectJson accepted a function");
}

describe("tool effect error classes", () => {
  it("are each environment's own: a worker's errors are instances of the worker's classes", async () => {
    const code = `
      const { parentPort } = require("node:worker_threads");
      const api = require(${JSON.stringify(root)});
      const out = [];
      for (let i = 0; i < 3; i++) {
        try { api.canonicalToolEffectJson({ f() {} }); } catch (e) {
          out.push([e instanceof api.ToolEffectError, e.name, e.code]);
        }
        try { api.assertIdentityActive({ verified: false }); } catch (e) {
          out.push([e instanceof api.IdentityError, e.name, e.code]);
        }
      }
      parentPort.postMessage(out);
    `;
    for (let round = 0; round < 3; round++) {
      const worker = new Worker(code, { eval: true });
      const out = await new Promise<unknown[]>((resolve, reject) => {
        worker.once("message", resolve);
        worker.once("error", reject);
      });
      await worker.terminate();
      expect(out).toHaveLength(6);
      for (const [own, name] of out as [boolean, string][]) {
        expect(own).toBe(true);
        expect(["ToolEffectError", "IdentityError"]).toContain(name);
      }
      // The main thread's classes are untouched by the workers coming and going.
      expect(refusal()).toBeInstanceOf(api.ToolEffectError);
    }
  });

  it("registered again, the new classes replace the old", () => {
    class Other extends Error {
      code: string;
      constructor(code: string, message: string) {
        super(message);
        this.code = code;
        this.name = "OtherToolEffectError";
      }
    }
    class OtherIdentity extends Error {}
    try {
      for (let i = 0; i < 100; i++) native.__registerToolEffectErrors(Other, OtherIdentity);
      const e = refusal();
      expect(e).toBeInstanceOf(Other);
      expect(e).toMatchObject({ code: "ERR_PRISM_TOOL_EFFECT_LIMIT" });
    } finally {
      native.__registerToolEffectErrors(api.ToolEffectError, api.IdentityError);
    }
    expect(refusal()).toBeInstanceOf(api.ToolEffectError);
  });
});
