// The host-verified identity the effect proofs dispatch under (the same as helpers/dispatch-child.mjs).
export const serviceIdentity = {
  tenantId: "tenant",
  principal: { kind: "service", id: "payments" },
  scopes: ["tools:execute"],
  issuedAt: "2026-01-01T00:00:00.000Z",
  verified: true as const,
};
