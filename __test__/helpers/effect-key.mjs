// The verified service identity and the "charge" effect key that the effect-store suites and their
// child process (effect-child.mjs) share.
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const { deriveToolEffectKey, toolEffectArgumentsHash } = require("../../index.js");

/** @type {import("../../index.js").AgentIdentity} */
export const identity = {
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
    identity,
    ownership: { tenantId: "tenant" },
    sessionId: "session",
    runId: "run",
    toolCallId,
    toolName: "charge",
    argumentsHash: toolEffectArgumentsHash(args),
  };
  return { ...base, key: deriveToolEffectKey(base) };
}
