import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";

// lib/utf8.js's utf8Prefix is the one way the JS modules cut text to a byte budget (guardrail
// records, folded tool-result summaries, MCP server results).
const require = createRequire(import.meta.url);
const { utf8Prefix } = require("../lib/utf8.js") as { utf8Prefix: (text: string, maxBytes: number) => string };

// Code units of every UTF-8 width, surrogate pairs, and lone surrogates of both kinds.
const UNITS = ["a", "~", "é", "ß", "€", "한", "😀", "𝄞", "\ud800", "\udc00"];

function randomText(seed: number, length: number): string {
  let x = seed;
  let out = "";
  for (let i = 0; i < length; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    out += UNITS[x % UNITS.length];
  }
  return out;
}

describe("utf8Prefix", () => {
  it("is the longest prefix within the budget that splits no character (2 000 texts × every budget)", () => {
    for (let seed = 1; seed <= 2000; seed++) {
      const text = randomText(seed, seed % 17);
      const total = Buffer.byteLength(text);
      for (let max = 0; max <= total + 1; max++) {
        const p = utf8Prefix(text, max);
        expect(text.startsWith(p)).toBe(true);
        expect(Buffer.byteLength(p)).toBeLessThanOrEqual(max);
        // Not a high surrogate whose low half was cut off.
        if (p.length > 0 && p.length < text.length) {
          const pairCut = (p.charCodeAt(p.length - 1) & 0xfc00) === 0xd800 && (text.charCodeAt(p.length) & 0xfc00) === 0xdc00;
          expect(pairCut).toBe(false);
        }
        // The next whole character would not have fitted.
        if (p.length < text.length) {
          const width = text.codePointAt(p.length)! > 0xffff ? 2 : 1;
          expect(Buffer.byteLength(text.slice(0, p.length + width))).toBeGreaterThan(max);
        } else expect(p).toBe(text);
      }
    }
  });

  it("keeps the text's own code units and returns it whole when it fits", () => {
    expect(utf8Prefix("a\ud800b", 4)).toBe("a\ud800");
    expect(utf8Prefix("é😀", 5)).toBe("é");
    expect(utf8Prefix("é😀", 6)).toBe("é😀");
    const long = "x".repeat(100);
    expect(utf8Prefix(long, 300)).toBe(long);
    expect(utf8Prefix("abc", 0)).toBe("");
    expect(utf8Prefix("abc", -1)).toBe("");
    expect(utf8Prefix("abc", Number.NaN)).toBe("");
    expect(utf8Prefix("abc", Infinity)).toBe("abc");
  });
});
