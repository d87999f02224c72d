import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import * as esm from "../index.mjs";

const require = createRequire(import.meta.url);
const cjs = require("../index.js");

describe("package entry", () => {
  it("loads the native addon through CommonJS and ES modules alike", () => {
    const pkg = require("../package.json");
    expect(cjs.nativeVersion()).toBe(pkg.version);
    expect(esm.nativeVersion()).toBe(pkg.version);
  });

  it("exports the same objects from both entries", () => {
    for (const name of Object.keys(cjs)) {
      expect((esm as Record<string, unknown>)[name], name).toBe(cjs[name]);
    }
  });
});
