import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

// One list of error codes: crates/core/src/error.rs (and crates/core/src/effects/error.rs for the effect and identity classes).
// A code literal in the JS modules that is not declared there is a code nobody keeps stable.
const root = join(__dirname, "..");
const declared = new Set(
  ["crates/core/src/error.rs", "crates/core/src/effects/error.rs"].flatMap((f) =>
    [...readFileSync(join(root, f), "utf8").matchAll(/"((?:ERR_PRISM|ERR_INVALID)_[A-Z_]+)"/g)].map((m) => m[1]),
  ),
);

describe("error codes", () => {
  it("every code the JS modules throw is declared in the Rust code lists", () => {
    const used = new Map<string, string>();
    for (const dir of ["lib", "testing"]) {
      for (const file of readdirSync(join(root, dir)).filter((f) => f.endsWith(".js"))) {
        for (const m of readFileSync(join(root, dir, file), "utf8").matchAll(/'((?:ERR_PRISM|ERR_INVALID)_[A-Z_]*[A-Z])'/g)) used.set(m[1], `${dir}/${file}`);
      }
    }
    expect(used.size).toBeGreaterThan(10);
    const undeclared = [...used].filter(([code]) => !declared.has(code));
    expect(undeclared).toEqual([]);
  });
});
