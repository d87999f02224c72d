// "Every dispatched call leaves exactly one terminal row", over generated hook behaviours: each
// hook (execute, validate, permission, trust, beforeExecute, a guardrail, emit, middleware) returns
// normally, throws, rejects, returns a thenable (resolving, rejecting, throwing in `then`), a
// `then` getter that throws, a Proxy that throws on any read, or never settles (then the call is
// aborted). Calls run concurrently, as a turn's calls do.
import fc from "fast-check";
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { budget as propertyBudget } from "./budget.js";
import type { ToolCallRecord, ToolDefinition } from "../../index.js";

const require = createRequire(import.meta.url);
const { createToolRegistry, dispatchToolCall }: typeof import("../../index.js") = require("../../index.js");

const budget = propertyBudget(150, 6_000);

const HOOKS = ["execute", "validate", "permission", "trust", "beforeExecute", "guardrail", "emit"] as const;
const BEHAVIOURS = ["normal", "throw", "reject", "thenable", "thenableReject", "thenThrows", "thenGetterThrows", "proxy", "never"] as const;
type Hook = (typeof HOOKS)[number];
type Behaviour = (typeof BEHAVIOURS)[number];

const hostileProxy = () =>
  new Proxy(
    {},
    {
      get() {
        throw new Error("proxy read");
      },
      has() {
        throw new Error("proxy has");
      },
      ownKeys() {
        throw new Error("proxy keys");
      },
      getPrototypeOf() {
        throw new Error("proxy prototype");
      },
      getOwnPropertyDescriptor() {
        throw new Error("proxy descriptor");
      },
    },
  );

/** What a hook with `behaviour` gives back, where `ok` is its normal return. */
function act(behaviour: Behaviour, ok: () => unknown): unknown {
  switch (behaviour) {
    case "normal":
      return ok();
    case "throw":
      throw new Error("hook threw");
    case "reject":
      return Promise.reject(new Error("hook rejected"));
    case "thenable":
      return { then: (resolve: (v: unknown) => void) => resolve(ok()) };
    case "thenableReject":
      return { then: (_: unknown, reject: (e: unknown) => void) => reject(new Error("thenable rejected")) };
    case "thenThrows":
      return {
        then() {
          throw new Error("then threw");
        },
      };
    case "thenGetterThrows":
      return Object.defineProperty({}, "then", {
        get() {
          throw new Error("then getter threw");
        },
      });
    case "proxy":
      return hostileProxy();
    case "never":
      return new Promise(() => {});
  }
}

function options(hook: Hook, behaviour: Behaviour) {
  const at = (h: Hook, ok: () => unknown) => (hook === h ? () => act(behaviour, ok) : ok);
  const execute = at("execute", () => ({ toolCallId: "x", name: "t", value: 1 }));
  const tool: ToolDefinition = { name: "t", execute: ((_a: unknown, c: any) => {
    const r = execute() as any;
    return r !== null && typeof r === "object" && "toolCallId" in r ? { ...r, toolCallId: c.toolCallId } : r;
  }) as any };
  return {
    registry: createToolRegistry([tool]),
    validate: at("validate", () => undefined),
    permission: { check: at("permission", () => ({ allowed: true })) },
    trust: { check: at("trust", () => ({ trusted: true })) },
    beforeExecute: at("beforeExecute", () => undefined),
    guardrails: { toolInput: [{ name: "g", evaluate: at("guardrail", () => ({ action: "allow" })) }] },
    emitHook: at("emit", () => undefined),
  };
}

describe("terminal rows", () => {
  it("every dispatched call leaves exactly one terminal row, whatever its hooks do", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ hook: fc.constantFrom(...HOOKS), behaviour: fc.constantFrom(...BEHAVIOURS) }), { minLength: 1, maxLength: 6 }),
        async (plan) => {
          const rows: ToolCallRecord[] = [];
          const ledger = { appendToolCall: (r: ToolCallRecord) => void rows.push(r) };
          const controllers = plan.map(() => new AbortController());
          const settled = plan.map(({ hook, behaviour }, i) => {
            const o = options(hook, behaviour);
            return dispatchToolCall({
              call: { type: "tool_call", id: `call_${i}`, name: "t", arguments: {} },
              registry: o.registry,
              context: { sessionId: "s", runId: "r", toolCallId: "x", signal: controllers[i].signal },
              validate: o.validate as any,
              permission: o.permission as any,
              trust: o.trust as any,
              beforeExecute: o.beforeExecute,
              guardrails: o.guardrails as any,
              emit: o.emitHook as any,
              ledger,
            } as any).then(
              () => "resolved",
              () => "rejected",
            );
          });
          // A never-settling hook holds its call until the call is aborted.
          await new Promise((r) => setTimeout(r, 0));
          plan.forEach((p, i) => p.behaviour === "never" && controllers[i].abort(new Error("gave up")));
          await Promise.all(settled);
          for (let i = 0; i < plan.length; i++) {
            const mine = rows.filter((r) => r.toolCallId === `call_${i}`);
            expect(mine.filter((r) => r.status !== "started"), JSON.stringify(plan[i])).toHaveLength(1);
            // A call refused before it starts (trust, permission, validation…) has no started row.
            expect(mine.filter((r) => r.status === "started").length, JSON.stringify(plan[i])).toBeLessThanOrEqual(1);
            expect(mine[mine.length - 1].status, JSON.stringify(plan[i])).not.toBe("started");
          }
        },
      ),
      budget,
    );
  });
});
