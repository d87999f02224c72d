import { execFileSync } from "node:child_process";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const require = createRequire(import.meta.url);
const root = fileURLToPath(new URL("..", import.meta.url));

describe("package entry", () => {
  it("loads the native addon through CommonJS", () => {
    const pkg = require("../package.json");
    expect(require("../index.js").nativeVersion()).toBe(pkg.version);
  });

  it("gives ES modules and CommonJS the very same objects, by package name and subpath", () => {
    // Run in plain Node: the test runner's own module loader would evaluate index.js a second time.
    const script = `
      import { createRequire } from "node:module";
      import * as esm from "prism-tools-native";
      const require = createRequire(process.cwd() + "/");
      const cjs = require("prism-tools-native");
      const names = Object.keys(cjs);
      const mismatched = names.filter((n) => esm[n] !== cjs[n]);
      const missing = Object.keys(esm).filter((n) => n !== "default" && !(n in cjs));
      console.log(JSON.stringify({ count: names.length, mismatched, missing }));
    `;
    const out = JSON.parse(execFileSync(process.execPath, ["--input-type=module", "-e", script], { cwd: root, encoding: "utf8" }));
    expect(out.mismatched).toEqual([]);
    expect(out.missing).toEqual([]);
    expect(out.count).toBeGreaterThan(10);
  });
});
