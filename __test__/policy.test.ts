import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import {
  createStaticPermissionPolicy,
  createStaticTrustPolicy,
  GuardrailError,
  PermissionDeniedError,
  TrustDeniedError,
} from "../index.js";

const tool = (target: string) => ({ kind: "tool", action: "execute", target, metadata: {} });
const trustOf = (target: string) => ({ kind: "tool", target, capability: "execute", metadata: {} });

describe("createStaticPermissionPolicy", () => {
  it("allows everything by default, synchronously", () => {
    const p = createStaticPermissionPolicy();
    const decision = p.check(tool("anything"));
    expect(decision).toEqual({ allowed: true });
    expect(decision).not.toBeInstanceOf(Promise);
    expect(createStaticPermissionPolicy({}).check(tool("x"))).toEqual({ allowed: true });
  });

  it("an allow list refuses names outside it, exactly", () => {
    const p = createStaticPermissionPolicy({ allow: ["echo"] });
    expect(p.check(tool("echo"))).toEqual({ allowed: true });
    expect(p.check(tool("Echo"))).toEqual({ allowed: false, reason: "Permission not allowed: tool:Echo:execute" });
    expect(p.check(tool("rm"))).toEqual({ allowed: false, reason: "Permission not allowed: tool:rm:execute" });
  });

  it("deny wins over allow and over defaultDecision allow", () => {
    const p = createStaticPermissionPolicy({ allow: ["rm"], deny: ["rm"], defaultDecision: "allow" });
    expect(p.check(tool("rm"))).toEqual({ allowed: false, reason: "Permission denied: tool:rm:execute" });
    expect(p.check(tool("ls"))).toEqual({ allowed: true });
  });

  it("defaultDecision deny refuses unlisted names even with no allow list", () => {
    const p = createStaticPermissionPolicy({ defaultDecision: "deny" });
    expect(p.check(tool("ls"))).toEqual({ allowed: false, reason: "Permission not allowed: tool:ls:execute" });
  });

  it("accepts @arnilo/prism's full keys and a boolean", () => {
    const p = createStaticPermissionPolicy({ allow: ["tool:echo:execute"] });
    expect(p.check(tool("echo"))).toEqual({ allowed: true });
    expect(p.check({ kind: "extension", action: "setup", target: "echo" })).toEqual({
      allowed: false,
      reason: "Permission not allowed: extension:echo:setup",
    });
    expect(createStaticPermissionPolicy(false).check(tool("x"))).toEqual({ allowed: false });
    expect(createStaticPermissionPolicy(true).check(tool("x"))).toEqual({ allowed: true });
  });

  it("refuses malformed requests (fail closed)", () => {
    const p = createStaticPermissionPolicy();
    for (const bad of [undefined, null, "echo", 5, {}, { target: 5 }]) {
      expect(p.check(bad as never)).toEqual({ allowed: false, reason: "Invalid permission request" });
    }
  });

  it("a request whose getter throws makes check throw that error", () => {
    const p = createStaticPermissionPolicy();
    const error = new Error("getter");
    const hostile = {
      get target(): string {
        throw error;
      },
    };
    expect(() => p.check(hostile as never)).toThrow(error);
  });

  it("rejects bad options with TypeError ERR_INVALID_ARG_TYPE", () => {
    const cases: Array<[unknown, string]> = [
      [{ allow: "echo" }, "createStaticPermissionPolicy: allow must be an array of strings"],
      [{ deny: [1] }, "createStaticPermissionPolicy: deny must be an array of strings"],
      [{ defaultDecision: "maybe" }, 'createStaticPermissionPolicy: defaultDecision must be "allow" or "deny"'],
      [{ defaultDecision: 1 }, 'createStaticPermissionPolicy: defaultDecision must be "allow" or "deny"'],
      ["allow", "createStaticPermissionPolicy: options must be an object or a boolean"],
    ];
    for (const [options, message] of cases) {
      expect(() => createStaticPermissionPolicy(options as never)).toThrow(message);
      try {
        createStaticPermissionPolicy(options as never);
      } catch (e) {
        expect(e).toBeInstanceOf(TypeError);
        expect((e as { code: string }).code).toBe("ERR_INVALID_ARG_TYPE");
      }
    }
  });
});

describe("createStaticTrustPolicy", () => {
  it("trusts everything by default", () => {
    expect(createStaticTrustPolicy().check(trustOf("x"))).toEqual({ trusted: true });
  });

  it("a trusted list refuses names outside it; untrusted wins", () => {
    const p = createStaticTrustPolicy({ trusted: ["echo", "rm"], untrusted: ["rm"] });
    expect(p.check(trustOf("echo"))).toEqual({ trusted: true });
    expect(p.check(trustOf("rm"))).toEqual({ trusted: false, reason: "Untrusted tool: rm" });
    expect(p.check(trustOf("ls"))).toEqual({ trusted: false, reason: "Untrusted tool: ls" });
  });

  it("defaultDecision untrusted refuses unlisted names", () => {
    const p = createStaticTrustPolicy({ defaultDecision: "untrusted" });
    expect(p.check(trustOf("ls"))).toEqual({ trusted: false, reason: "Untrusted tool: ls" });
    expect(createStaticTrustPolicy({ trusted: ["a"], defaultDecision: "trusted" }).check(trustOf("b"))).toEqual({ trusted: true });
  });

  it("accepts a boolean or a constant decision, like @arnilo/prism", () => {
    expect(createStaticTrustPolicy(true).check(trustOf("x"))).toEqual({ trusted: true });
    expect(createStaticTrustPolicy(false).check(trustOf("x"))).toEqual({ trusted: false });
    expect(createStaticTrustPolicy({ trusted: false, reason: "nope" }).check(trustOf("x"))).toEqual({ trusted: false, reason: "nope" });
  });

  it("refuses malformed requests and bad options", () => {
    expect(createStaticTrustPolicy().check(null as never)).toEqual({ trusted: false, reason: "Invalid trust request" });
    expect(() => createStaticTrustPolicy({ defaultDecision: "allow" } as never)).toThrow(
      'createStaticTrustPolicy: defaultDecision must be "trusted" or "untrusted"',
    );
    expect(() => createStaticTrustPolicy({ untrusted: [null] } as never)).toThrow("untrusted must be an array of strings");
  });
});

describe("policy errors", () => {
  it("PermissionDeniedError has the documented name, code, message and cause", () => {
    const cause = new Error("root");
    const e = new PermissionDeniedError("Permission denied for tool:rm:execute", { cause });
    expect(e).toBeInstanceOf(Error);
    expect(e).toBeInstanceOf(PermissionDeniedError);
    expect(e.name).toBe("PermissionDeniedError");
    expect(e.code).toBe("ERR_PRISM_PERMISSION_DENIED");
    expect(e.message).toBe("Permission denied for tool:rm:execute");
    expect(e.cause).toBe(cause);
    expect(String(e)).toBe("PermissionDeniedError: Permission denied for tool:rm:execute");
  });

  it("the permission and trust errors also take @arnilo/prism's (request, decision) form", () => {
    const request = tool("rm");
    const e = new PermissionDeniedError(request, { allowed: false });
    expect(e.message).toBe("Permission denied for tool:rm:execute");
    expect(e.request).toBe(request);
    expect(new PermissionDeniedError(request, { allowed: false, reason: "why" }).message).toBe("why");
    const t = new TrustDeniedError(trustOf("rm"), { trusted: false });
    expect(t.message).toBe("Untrusted tool: rm");
  });

  it("TrustDeniedError has the documented name and code", () => {
    const e = new TrustDeniedError("Untrusted tool: rm");
    expect(e).toBeInstanceOf(TrustDeniedError);
    expect([e.name, e.code, e.message]).toEqual(["TrustDeniedError", "ERR_PRISM_UNTRUSTED", "Untrusted tool: rm"]);
  });

  it("GuardrailError carries its record", () => {
    const record = { guardrail: "g", stage: "tool_input", action: "tripwire" };
    const e = new GuardrailError("Tool call blocked by guardrail", { record });
    expect([e.name, e.code, e.message]).toEqual(["GuardrailError", "ERR_PRISM_GUARDRAIL_BLOCKED", "Tool call blocked by guardrail"]);
    expect(e.record).toBe(record);
    expect(new GuardrailError("x").record).toBeUndefined();
  });

  it("lib/errors.js is the module the package entry exports", () => {
    const require = createRequire(import.meta.url);
    const errors = require("../lib/errors.js");
    expect(errors.PermissionDeniedError).toBe(PermissionDeniedError);
    expect(errors.TrustDeniedError).toBe(TrustDeniedError);
    expect(errors.GuardrailError).toBe(GuardrailError);
  });
});
