import { createRequire } from "node:module";
import { afterEach, describe, expect, it, vi } from "vitest";

const require = createRequire(import.meta.url);
const { isoNow } = require("../lib/clock.js");

describe("isoNow", () => {
  afterEach(() => vi.restoreAllMocks());

  it("is new Date().toISOString() at every kind of instant", () => {
    const instants = [
      0, 1, 9, 10, 99, 100, 999, 1000, 59_999, 60_000, 60_001, -1, -60_000, -60_001, -86_400_001,
      Date.UTC(2026, 11, 4, 23, 59, 59, 999), Date.UTC(2026, 11, 5, 0, 0, 0, 0), Date.UTC(2024, 1, 29, 12, 0, 5, 7),
      Date.UTC(10000, 0, 1), Date.UTC(-1, 0, 1, 0, 0, 1, 1), 8.64e15,
    ];
    // And a walk through one minute and its neighbours in uneven steps, as the cache sees it.
    for (let t = Date.UTC(2026, 0, 1, 0, 0, 58, 0); t < Date.UTC(2026, 0, 1, 0, 2, 1, 0); t += 337) instants.push(t);
    const now = vi.spyOn(Date, "now");
    for (const t of instants) {
      now.mockReturnValue(t);
      expect(isoNow(), String(t)).toBe(new Date(t).toISOString());
    }
  });
});
