// "An IPv6 address that carries an IPv4 address is judged as that IPv4 address", over generated
// addresses: IPv4-mapped, -compatible, SIIT, NAT64, 6to4 and Teredo (client and server) forms, each
// written many ways (padded, upper case, a dotted tail, any zero run compressed), as a URL's host
// (the literal check of createMcpTransport) and as a DNS answer (the pinned fetch's check, resolvePinnedAddress). The forms
// are built from words by fuzz/js/address-forms.js, not by the code under test.
import fc from "fast-check";
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { budget as propertyBudget } from "./budget.js";

const require = createRequire(import.meta.url);
const { createMcpTransport } = require("../../mcp/index.js");
const { resolvePinnedAddress } = require("../../lib/mcp/pinned-fetch.js");
const { isNonPublicHostname } = require("../../lib/mcp/address.js");
const { FORMS, embedded, ipv4Text, spell } = require("../../fuzz/js/address-forms.js");

// IPv4 addresses at and around the ranges the check knows, and any address.
const EDGES = [0x00000000, 0x0a000000, 0x64400000, 0x7f000000, 0xa9fe0000, 0xac100000, 0xc0a80000, 0xc6120000, 0xe0000000, 0x08080808];
const ipv4 = fc.oneof(
  fc.tuple(fc.constantFrom(...EDGES), fc.integer({ min: -0x20000, max: 0x20000 })).map(([base, d]) => (base + d) >>> 0),
  fc.integer({ min: 0, max: 0xffffffff }),
);
const spelling = fc.tuple(fc.integer({ min: 0, max: 15 }), fc.integer({ min: 0, max: 63 }));
const form = fc.record({
  form: fc.constantFrom(...(FORMS as string[])),
  v4: ipv4,
  other: ipv4,
  fill: fc.array(fc.integer({ min: 0, max: 0xffff }), { minLength: 5, maxLength: 5 }),
  spellings: fc.array(spelling, { minLength: 1, maxLength: 4 }),
});

type Form = { form: string; v4: number; other: number; fill: number[]; spellings: [number, number][] };

/** Non-public when its IPv4 is (Teredo: its server or its client), judged as plain IPv4. */
function expected({ form, v4, other }: Form): boolean {
  const own = isNonPublicHostname(ipv4Text(v4));
  return form.startsWith("teredo") ? own || isNonPublicHostname(ipv4Text(other)) : own;
}

function literalRefused(text: string): boolean {
  try {
    createMcpTransport({ type: "streamable-http", url: `https://[${text}]/mcp`, allowedOrigins: [new URL(`https://[${text}]`).origin] });
    return false;
  } catch (error: any) {
    if (error.message !== "MCP HTTP URL is not public") throw error;
    return true;
  }
}

// The pinned fetch's own check of a name's answers (lib/mcp/pinned-fetch.js), without a socket.
async function answerRefused(text: string): Promise<boolean> {
  const fail = (message: string) => Object.assign(new Error(message), { code: "ERR_PRISM_MCP_TRANSPORT" });
  try {
    const pinned = await resolvePinnedAddress(new URL("https://mcp.example.test/mcp"), async () => [{ address: text, family: 6 }], undefined, false, fail);
    expect(pinned.family).toBe(6);
    return false;
  } catch (error: any) {
    if (error.message !== "MCP hostname resolved to a private or non-public address") throw error;
    return true;
  }
}

describe("embedded IPv4 in IPv6", () => {
  it("a URL host is refused exactly when the IPv4 it carries is not public, however it is written", () => {
    fc.assert(
      fc.property(form, (f: Form) => {
        const words = embedded(f.form, f.v4, f.other, f.fill);
        for (const [style, pick] of f.spellings) {
          expect(literalRefused(spell(words, style, pick)), `${f.form} ${ipv4Text(f.v4)} ${spell(words, style, pick)}`).toBe(expected(f));
        }
      }),
      propertyBudget(400, 5_000),
    );
  });

  it("a DNS answer is refused exactly when the IPv4 it carries is not public, however it is written", async () => {
    await fc.assert(
      fc.asyncProperty(form, async (f: Form) => {
        const words = embedded(f.form, f.v4, f.other, f.fill);
        for (const [style, pick] of f.spellings) {
          const text = spell(words, style, pick);
          expect(await answerRefused(text), `${f.form} ${ipv4Text(f.v4)} ${text}`).toBe(expected(f));
        }
      }),
      propertyBudget(200, 5_000),
    );
  });
});
