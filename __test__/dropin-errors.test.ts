// What a host that moves from `@arnilo/prism` sees when something goes wrong at dispatch: the
// guardrail errors it matches by code and message, the ErrorInfo of a policy that throws, and the one
// shape every thrown value takes in results, events and extension errors.
import { describe, expect, it } from "vitest";
import {
  createMiddlewareRegistry,
  createToolRegistry,
  dispatchToolCall,
  errorToErrorInfo,
  GuardrailError,
  type Guardrail,
} from "../index.js";
import { call, ctx, echoTool, recorder } from "./helpers/harness.js";

async function outcome(p: Promise<unknown>): Promise<any> {
  return p.then(
    (value) => ({ value }),
    (error) => ({ error }),
  );
}

function dispatch(extra: Record<string, unknown>, log: string[] = []) {
  const rec = recorder();
  const promise = dispatchToolCall({
    call: call("echo", { text: "hi" }),
    registry: createToolRegistry([echoTool("echo", log)]),
    context: ctx(),
    emit: rec.emit,
    ledger: rec.ledger,
    ...extra,
  });
  return { promise, rec, log };
}

describe("guardrail rejections", () => {
  const guard = (action: string): Guardrail => ({ name: "g", evaluate: () => ({ action }) as never });

  for (const stage of ["tool_input", "tool_output"] as const) {
    const key = stage === "tool_input" ? "toolInput" : "toolOutput";

    it(`an interrupt at ${stage} cannot suspend: ERR_PRISM_GUARDRAIL_INTERRUPT_UNAVAILABLE naming the stage`, async () => {
      const { promise } = dispatch({ guardrails: { [key]: [guard("interrupt")] } });
      const { error } = await outcome(promise);
      expect(error).toBeInstanceOf(GuardrailError);
      expect(error.code).toBe("ERR_PRISM_GUARDRAIL_INTERRUPT_UNAVAILABLE");
      expect(error.message).toContain(`stage "${stage}"`);
      expect(error.record).toMatchObject({ guardrail: "g", stage, action: "interrupt" });
    });

    it(`a tripwire at ${stage} rejects with "Guardrail blocked run"`, async () => {
      const { promise } = dispatch({ guardrails: { [key]: [guard("tripwire")] } });
      const { error } = await outcome(promise);
      expect(error).toBeInstanceOf(GuardrailError);
      expect(error.code).toBe("ERR_PRISM_GUARDRAIL_BLOCKED");
      expect(error.message).toBe("Guardrail blocked run");
    });
  }

  it("a rule pack's tripwire keeps the upstream message; its rule and reason stay on the blocked row", async () => {
    const rule: Guardrail = { name: "pii", pack: "pii", rule: "email", evaluate: () => ({ action: "tripwire", reason: "an address" }) };
    const { promise, rec, log } = dispatch({ guardrails: { toolInput: [rule] } });
    const { error } = await outcome(promise);
    expect(error.message).toBe("Guardrail blocked run");
    expect(error.record).toMatchObject({ stage: "tool_input", action: "tripwire", reason: "an address" });
    expect(log).toEqual([]);
    const blocked = rec.events.find((e) => e.type === "tool_execution_blocked") as any;
    expect(blocked.error.message).toBe("Blocked by guardrail rule pack:pii/email: an address");
  });
});

describe("policies that throw", () => {
  it("a throwing permission policy blocks the call with the thrown message", async () => {
    const { promise, rec, log } = dispatch({ permission: { check: () => { throw new Error("policy down"); } } });
    const result: any = await promise;
    expect(log).toEqual([]);
    expect(result.error).toEqual({ name: "Error", message: "policy down" });
    const blocked = rec.events.find((e) => e.type === "tool_execution_blocked") as any;
    expect(blocked.reason).toBe("permission_denied");
    expect(blocked.error.message).toBe("policy down");
  });

  it("a rejecting permission policy with a non-Error value carries that value as the message", async () => {
    const { promise } = dispatch({ permission: { check: () => Promise.reject("policy down") } });
    expect(((await promise) as any).error).toEqual({ message: "policy down" });
  });

  it("a throwing trust policy carries the thrown message; a refusal's reason is the message", async () => {
    let r: any = await dispatch({ trust: { check: () => { throw new TypeError("trust store down"); } } }).promise;
    expect(r.error).toEqual({ name: "TypeError", message: "trust store down" });
    r = await dispatch({ trust: { check: () => ({ trusted: false, reason: "unsigned plugin" }) } }).promise;
    expect(r.error).toMatchObject({ name: "TrustDeniedError", code: "ERR_PRISM_UNTRUSTED", message: "unsigned plugin" });
  });

  it("a thrown secret is redacted in the result", async () => {
    const { promise } = dispatch({ secrets: ["tok_9"], permission: { check: () => { throw new Error("down: tok_9"); } } });
    expect(((await promise) as any).error.message).toBe("down: [REDACTED]");
  });
});

describe("one ErrorInfo for any thrown value", () => {
  const cyclic: Record<string, unknown> = { a: 1 };
  cyclic.self = cyclic;
  const cases: Array<[string, unknown, Record<string, unknown>]> = [
    ["an Error", new RangeError("out"), { name: "RangeError", message: "out" }],
    ["a string", "plain", { message: "plain" }],
    ["a number", 42, { message: "42" }],
    ["null", null, { message: "null" }],
    ["undefined", undefined, { message: "undefined" }],
    ["an object with message and code", { message: "m", code: "C", name: "N" }, { message: "m", code: "C" }],
    ["an object with only a code", { code: 7 }, { message: "[object Object]", code: 7 }],
    ["a cyclic object", cyclic, { message: "[object Object]" }],
    ["a null-prototype object", Object.create(null), { message: "[object Object]" }],
    ["a symbol", Symbol("s"), { message: "Symbol(s)" }],
    ["an object whose toString throws", { toString() { throw new Error("no"); } }, { message: "[object Object]" }],
    ["an Error with an Error cause", new Error("x", { cause: new Error("inner") }), { name: "Error", message: "x", cause: "Error: inner" }],
    ["an Error with a falsy cause", new Error("x", { cause: 0 }), { name: "Error", message: "x" }],
  ];

  for (const [label, thrown, info] of cases) {
    it(`${label}: the same ErrorInfo from errorToErrorInfo, a failing tool and a failing middleware`, async () => {
      expect(errorToErrorInfo(thrown)).toEqual(info);

      const tool = { name: "fail", execute: () => { throw thrown; } };
      const result: any = await dispatchToolCall({ call: call("fail"), registry: createToolRegistry([tool as never]), context: ctx() });
      expect(result.error).toEqual(info);

      const errors: any[] = [];
      const mw = createMiddlewareRegistry({ onError: (e: unknown) => void errors.push(e) } as never);
      mw.use<number>("h", () => { throw thrown; });
      await mw.run("h", 1);
      expect(errors.map((e) => e.error)).toEqual([info]);
    });
  }

  it("an Error's code and cause keys are present as undefined, as upstream's are", () => {
    const info = errorToErrorInfo(new Error("x"));
    expect(Object.keys(info)).toEqual(["name", "message", "code", "cause"]);
    expect(Object.keys(errorToErrorInfo("x"))).toEqual(["message", "code"]);
  });
});
