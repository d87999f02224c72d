import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";

// The identity check dispatch hands the binding: read in JS, made into a binding handle only when
// what was read differs from the last read (lib/effect-store-wire.js, `identityChecker`).
const require = createRequire(import.meta.url);
const { identityChecker } = require("../lib/effect-store-wire.js");

const full = () => ({
  tenantId: "t1",
  accountId: "a1",
  userId: "u1",
  principal: { kind: "user", id: "p1", displayName: "P" },
  sponsor: { kind: "service", id: "s1", displayName: "S" },
  owner: { kind: "user", id: "o1", displayName: "O" },
  delegatedFrom: { kind: "agent", id: "d1", displayName: "D" },
  scopes: ["a", "b"],
  credentialRefs: ["vault:a"],
  metadata: { team: "x" },
  issuedAt: "2026-12-01T00:00:00.000Z",
  expiresAt: "Tue, 01 Dec 2026 01:00:00 GMT",
  revokedAt: "2026-12-01T02:00:00.000Z",
  verified: true,
});

function checker() {
  const texts: string[] = [];
  const check = identityChecker((text: string) => {
    texts.push(text);
    return { handle: texts.length };
  });
  return { check, texts };
}

// Every change a field can take, by the name the wire writes it under.
const changes: Record<string, ((i: any) => void)[]> = {
  tenantId: [(i) => (i.tenantId = "t2"), (i) => (i.tenantId = 1), (i) => delete i.tenantId],
  accountId: [(i) => (i.accountId = "a2"), (i) => delete i.accountId],
  userId: [(i) => (i.userId = "u2"), (i) => (i.userId = null)],
  principal: [(i) => (i.principal.id = "p2"), (i) => (i.principal.kind = "agent"), (i) => (i.principal.displayName = "Q"), (i) => (i.principal = "p1"), (i) => delete i.principal],
  sponsor: [(i) => (i.sponsor.id = "s2"), (i) => delete i.sponsor, (i) => (i.sponsor = null)],
  owner: [(i) => (i.owner.displayName = "P"), (i) => delete i.owner],
  delegatedFrom: [(i) => (i.delegatedFrom.kind = "user"), (i) => delete i.delegatedFrom],
  scopes: [(i) => i.scopes.push("c"), (i) => (i.scopes[1] = "c"), (i) => (i.scopes[0] = 5), (i) => (i.scopes = "a"), (i) => delete i.scopes],
  credentialRefs: [(i) => i.credentialRefs.pop(), (i) => (i.credentialRefs = {}), (i) => delete i.credentialRefs],
  metadataBytes: [(i) => (i.metadata.team = "xy"), (i) => (i.metadata = { n: 1n }), (i) => delete i.metadata],
  issuedAt: [(i) => (i.issuedAt = "2026-12-01T00:00:01.000Z"), (i) => (i.issuedAt = 0)],
  expiresAt: [(i) => (i.expiresAt = "Tue, 01 Dec 2026 01:00:01 GMT"), (i) => delete i.expiresAt],
  revokedAt: [(i) => (i.revokedAt = "2026-12-01T02:00:01.000Z"), (i) => delete i.revokedAt],
  verified: [(i) => (i.verified = "true"), (i) => (i.verified = false)],
};

describe("dispatch's identity check, read in JS", () => {
  it("makes a new handle for a change to any field the wire writes, and none while nothing changed", () => {
    const { check, texts } = checker();
    const first = check(full(), undefined);
    expect(check(full(), undefined)).toBe(first);
    expect(texts).toHaveLength(1);
    const written = Object.keys(JSON.parse(texts[0]).identity);
    // Every field written has changes below, so none can be left out of the comparison.
    expect(Object.keys(changes).sort()).toEqual([...written].sort());
    for (const [name, list] of Object.entries(changes)) {
      for (const change of list) {
        const id = full();
        change(id);
        const before = texts.length;
        const handle = check(id, undefined);
        expect(texts.length, `${name}: ${change}`).toBe(before + 1);
        expect(handle).not.toBe(first);
        // The same changed identity read again: no new handle.
        expect(check(id, undefined)).toBe(handle);
        expect(texts.length).toBe(before + 1);
        // Back to the original: a new one again (only the last read is kept).
        check(full(), undefined);
      }
    }
  });

  it("tells no ownership from an empty one and from a changed one", () => {
    const { check, texts } = checker();
    const id = full();
    const none = check(id, undefined);
    const empty = check(id, null);
    expect(empty).not.toBe(none);
    expect(JSON.parse(texts[1]).ownership).toEqual({});
    expect(JSON.parse(texts[0]).ownership).toBeUndefined();
    expect(check(id, 5)).toBe(empty); // not an object: an empty ownership too
    const ownership: any = { tenantId: "t1", accountId: "a1", userId: "u1" };
    const owned = check(id, ownership);
    expect(check(id, { ...ownership })).toBe(owned);
    for (const key of ["tenantId", "accountId", "userId"]) {
      const changed = { ...ownership, [key]: "other" };
      expect(check(id, changed), key).not.toBe(owned);
      check(id, ownership);
    }
  });

  it("reads each field once and in the binding's order, and writes a lone surrogate as U+FFFD", () => {
    const { check, texts } = checker();
    const log: string[] = [];
    const watch = <T extends object>(value: T, prefix: string): T =>
      new Proxy(value, {
        get(target, key, receiver) {
          if (typeof key === "string") log.push(prefix + key);
          return Reflect.get(target, key, receiver);
        },
      });
    const id = full();
    check(watch({ ...id, tenantId: "t\ud800", principal: watch(id.principal, "principal.") }, ""), undefined);
    expect(new Set(log).size).toBe(log.length);
    expect(log.slice(0, 14)).toEqual(["sponsor", "owner", "delegatedFrom", "credentialRefs", "metadata", "tenantId", "accountId", "userId", "principal", "scopes", "issuedAt", "expiresAt", "revokedAt", "verified"]);
    expect(log.slice(14)).toEqual(["principal.kind", "principal.id", "principal.displayName"]);
    const wire = JSON.parse(texts[0]);
    expect(wire.identity.tenantId).toBe("t\ufffd");
    // The date only Date.parse reads crosses parsed; the ISO ones too (the binding tries its own first).
    expect(wire.dates).toContainEqual(["Tue, 01 Dec 2026 01:00:00 GMT", Date.parse("Tue, 01 Dec 2026 01:00:00 GMT")]);
  });

  it("bounds a list at 4 096 items read, as the binding's reader does", () => {
    const { check, texts } = checker();
    let reads = 0;
    const scopes = new Proxy(Array.from({ length: 5000 }, () => "s"), {
      get(target, key, receiver) {
        if (typeof key === "string" && /^\d+$/.test(key)) reads++;
        return Reflect.get(target, key, receiver);
      },
    });
    check({ ...full(), scopes }, undefined);
    expect(reads).toBe(4096);
    const list = JSON.parse(texts[0]).identity.scopes;
    expect(list).toHaveLength(4097);
    expect(list[4096]).toBe(0);
  });
});
