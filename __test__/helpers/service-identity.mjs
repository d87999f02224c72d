// The host-verified identity the effect proofs dispatch under, and the key of a "charge" call: shared
// by the suites and by their child processes (a plain ES module, so a child loads it under every Node
// version without a build step).
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const { deriveToolEffectKey, toolEffectArgumentsHash } = require("../../index.js");

/** @type {import("../../index.js").AgentIdentity} */
export const serviceIdentity = {
  tenantId: "tenant",
  principal: { kind: "service", id: "payments" },
  scopes: ["tools:execute"],
  issuedAt: "2026-01-01T00:00:00.000Z",
  verified: true,
};

/**
 * The key of call `toolCallId` of the "charge" tool with `args`.
 * @returns {import("../../index.js").ToolEffectKey}
 */
export function effectKey(toolCallId, args = { amount: 5 }) {
  const base = {
    identity: serviceIdentity,
    ownership: { tenantId: "tenant" },
    sessionId: "session",
    runId: "run",
    toolCallId,
    toolName: "charge",
    argumentsHash: toolEffectArgumentsHash(args),
  };
  return { ...base, key: deriveToolEffectKey(base) };
}

/** The context the proofs dispatch "charge" calls in (dispatch keys effects by the call's own id). */
export const chargeContext = { sessionId: "session", runId: "run", toolCallId: "ignored" };

/** A "charge" call with id `id`. */
export const chargeCall = (id) => ({ type: /** @type {const} */ ("tool_call"), id, name: "charge", arguments: { amount: 5 } });

/**
 * The effectful "charge" tool: `onExecute(toolCallId)` runs once per execution, then it answers.
 * @param {(toolCallId: string) => void} onExecute
 * @returns {import("../../index.js").ToolDefinition}
 */
export function chargeTool(onExecute) {
  return {
    name: "charge",
    parameters: { type: "object", properties: { amount: { type: "number" } } },
    effect: { kind: "external_mutation", idempotency: "required" },
    async execute(args, ctx) {
      onExecute(ctx.toolCallId);
      return { toolCallId: ctx.toolCallId, name: "charge", value: { charged: /** @type {{ amount: number }} */ (args).amount } };
    },
  };
}
