// Tools served by the MCP server tests, in the test process (HTTP) and in a child process (stdio).
// `state` counts executions and sees each call's signal, so a test can tell a replay from a run and
// a cancelled call from a finished one.
export const SECRET = "sk-live-0123456789abcdef";

export function serverTools(state) {
  return [
    {
      name: "echo",
      description: "Echo text back",
      parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"], additionalProperties: false },
      effect: { kind: "none", idempotency: "none" },
      execute: (args, ctx) => ({ toolCallId: ctx.toolCallId, name: "echo", value: { echo: args.text } }),
    },
    {
      name: "charge",
      description: "Charge an amount (an external mutation claimed in the effect store)",
      parameters: { type: "object", properties: { amount: { type: "number" } }, required: ["amount"], additionalProperties: false },
      effect: { kind: "external_mutation", idempotency: "required" },
      execute: (args, ctx) => {
        state.charges = (state.charges ?? 0) + 1;
        return { toolCallId: ctx.toolCallId, name: "charge", value: { charged: args.amount, execution: state.charges, key: ctx.idempotencyKey } };
      },
    },
    {
      name: "leak",
      description: "Returns a secret in its value and its error",
      parameters: { type: "object", properties: { fail: { type: "boolean" } } },
      execute: (args, ctx) => {
        if (args.fail) throw new Error(`upstream refused key ${SECRET}`);
        return { toolCallId: ctx.toolCallId, name: "leak", value: { token: SECRET, note: `the key is ${SECRET}` } };
      },
    },
    {
      name: "slow",
      description: "Reports progress, then waits until cancelled (or released)",
      parameters: { type: "object", properties: { steps: { type: "integer" } } },
      execute: async (args, ctx) => {
        state.slowStarted = (state.slowStarted ?? 0) + 1;
        for (let i = 1; i <= (args.steps ?? 1); i++) ctx.progress?.({ progress: i, total: args.steps ?? 1, message: `step ${i}` });
        await new Promise((resolve) => {
          if (ctx.signal?.aborted) return resolve(undefined);
          ctx.signal?.addEventListener("abort", () => resolve(undefined), { once: true });
          state.release = resolve;
        });
        state.slowAborted = (state.slowAborted ?? 0) + (ctx.signal?.aborted ? 1 : 0);
        return { toolCallId: ctx.toolCallId, name: "slow", value: { aborted: Boolean(ctx.signal?.aborted) } };
      },
    },
    {
      name: "danger",
      description: "Never served: the host's filter denies it",
      execute: (_args, ctx) => {
        state.danger = (state.danger ?? 0) + 1;
        return { toolCallId: ctx.toolCallId, name: "danger", value: "ran" };
      },
    },
  ];
}

/** A verified identity for a principal, as a host derives it from authentication. */
export function identityFor(principal, tenantId = "acme") {
  return {
    tenantId,
    userId: principal,
    principal: { kind: "user", id: principal },
    scopes: ["tools:execute"],
    issuedAt: new Date(Date.now() - 1000).toISOString(),
    verified: true,
  };
}
