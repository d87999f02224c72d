import { describe, expect, it } from "vitest";
import {
  assertIdentityPropagation,
  assertPermission,
  assertTrusted,
  createStaticPermissionPolicy,
  createStaticTrustPolicy,
  DEFAULT_IDENTITY_LIMITS,
  HARD_IDENTITY_LIMITS,
  identityTelemetryAttributes,
  narrowIdentity,
  ownershipFromIdentity,
  PermissionDeniedError,
  resolveIdentityLimits,
  resolveRunIdentity,
  TrustDeniedError,
  type AgentIdentity,
} from "../index.js";

const parent: AgentIdentity = {
  tenantId: "t1",
  accountId: "acc",
  principal: { kind: "user", id: "u1" },
  scopes: ["read", "write"],
  issuedAt: "2026-01-01T00:00:00.000Z",
  expiresAt: "2099-01-01T00:00:00.000Z",
  verified: true,
};

const caught = async (p: Promise<unknown> | (() => unknown)) => {
  try {
    await (typeof p === "function" ? p() : p);
  } catch (e) {
    return e as any;
  }
  throw new Error("expected a throw");
};

describe("assertPermission / assertTrusted", () => {
  it("resolve when allowed or without a policy", async () => {
    await assertPermission(undefined, { kind: "tool", action: "execute", target: "echo" });
    await assertPermission(createStaticPermissionPolicy({ allow: ["echo"] }), { kind: "tool", action: "execute", target: "echo" });
    await assertTrusted(undefined, { kind: "tool", target: "echo" });
    await assertTrusted({ check: async () => ({ trusted: true }) }, { kind: "tool", target: "echo" });
  });

  it("throw the typed errors with the request, the decision and its reason", async () => {
    const request = { kind: "tool", action: "execute", target: "rm" };
    const e = await caught(assertPermission(createStaticPermissionPolicy({ deny: ["rm"] }), request));
    expect(e).toBeInstanceOf(PermissionDeniedError);
    expect(e.message).toBe("Permission denied: tool:rm:execute");
    expect(e.code).toBe("ERR_PRISM_PERMISSION_DENIED");
    expect(e.request).toBe(request);
    const bare = await caught(assertPermission({ check: () => ({ allowed: false }) }, request));
    expect(bare.message).toBe("Permission denied for tool:rm:execute");
    const t = await caught(assertTrusted(createStaticTrustPolicy(false), { kind: "tool", target: "rm" }));
    expect(t).toBeInstanceOf(TrustDeniedError);
    expect(t.message).toBe("Untrusted tool: rm");
  });

  it("a policy that throws or rejects carries its own message", async () => {
    const request = { kind: "tool", action: "execute", target: "x" };
    const thrown = await caught(assertPermission({ check: () => { throw new Error("policy down"); } }, request));
    expect(thrown.message).toBe("policy down");
    const rejected = await caught(assertTrusted({ check: () => Promise.reject(new Error("policy down")) }, { kind: "tool", target: "x" }));
    expect(rejected.message).toBe("policy down");
    const garbage = await caught(assertPermission({ check: () => null as never }, request));
    expect(garbage).toBeInstanceOf(PermissionDeniedError);
  });
});

describe("identity helpers", () => {
  it("limits: defaults, overrides within the hard bounds, clear refusals", () => {
    expect(resolveIdentityLimits()).toEqual(DEFAULT_IDENTITY_LIMITS);
    expect(resolveIdentityLimits({ maxScopes: 256 }).maxScopes).toBe(HARD_IDENTITY_LIMITS.maxScopes);
    expect(() => resolveIdentityLimits({ maxScopes: 257 })).toThrow("maxScopes must be a positive safe integer no greater than 256");
    expect(() => resolveIdentityLimits({ maxScopeBytes: 0 })).toThrow(RangeError);
  });

  it("narrowIdentity narrows scopes, keeps tenant and owners, never widens", async () => {
    const child = narrowIdentity(parent, { scopes: ["read"], principal: { kind: "agent", id: "a1" } });
    expect(child).toMatchObject({ tenantId: "t1", accountId: "acc", scopes: ["read"], delegatedFrom: parent.principal, verified: true });
    expect(child.principal).toEqual({ kind: "agent", id: "a1" });
    expect(child.expiresAt).toBe(parent.expiresAt);
    expect((await caught(() => narrowIdentity(parent, { scopes: ["admin"] }))).reason).toBe("scope_widen");
    expect((await caught(() => narrowIdentity(parent, { scopes: [] }))).reason).toBe("empty_scopes");
    expect((await caught(() => narrowIdentity(parent, { scopes: ["read"], expiresAt: "2100-01-01T00:00:00Z" }))).reason).toBe("expiry_widen");
    expect((await caught(() => narrowIdentity(parent, { scopes: ["read"], limits: { maxScopes: 1 } }))).reason).toBe("too_many_scopes");
    const e = await caught(() => narrowIdentity({ ...parent, verified: false as never }, { scopes: ["read"] }));
    expect(e).toMatchObject({ name: "IdentityError", code: "ERR_PRISM_IDENTITY" });
  });

  it("assertIdentityPropagation refuses a changed tenant, account or a wider scope", async () => {
    const child = narrowIdentity(parent, { scopes: ["read"] });
    assertIdentityPropagation(parent, child);
    expect((await caught(() => assertIdentityPropagation(parent, { ...child, tenantId: "t2" }))).reason).toBe("tenant_widen");
    expect((await caught(() => assertIdentityPropagation(parent, { ...child, accountId: "other" }))).reason).toBe("account_widen");
    expect((await caught(() => assertIdentityPropagation(child, parent))).reason).toBe("scope_widen");
  });

  it("resolveRunIdentity and ownershipFromIdentity", async () => {
    expect(ownershipFromIdentity(parent)).toEqual({ tenantId: "t1", accountId: "acc" });
    expect(resolveRunIdentity(undefined, undefined)).toBeUndefined();
    expect(resolveRunIdentity(undefined, parent)).toBe(parent);
    const run = narrowIdentity(parent, { scopes: ["read"] });
    expect(resolveRunIdentity(run, parent)).toBe(run);
    expect((await caught(() => resolveRunIdentity(parent, undefined, { tenantId: "t2" }))).reason).toBe("ownership_tenant");
  });

  it("identityTelemetryAttributes names the identity without credentials", () => {
    expect(identityTelemetryAttributes({ ...parent, credentialRefs: ["vault:key"] })).toEqual({
      "prism.identity.tenant_id": "t1",
      "prism.identity.principal_kind": "user",
      "prism.identity.principal_id": "u1",
      "prism.identity.scope_count": "2",
      "prism.identity.account_id": "acc",
      "prism.identity.credential_ref_count": "1",
    });
  });
});
