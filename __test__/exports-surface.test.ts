// Every entry point of package.json "exports" gives ES modules and CommonJS the same public surface:
// the ES module's named exports are exactly the CommonJS object's keys (no name missing, none added,
// e.g. no `module.exports` name that a re-export of a CommonJS module brings on Node 23 and later),
// each the very same object, and the default export is the CommonJS object itself.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("..", import.meta.url));
const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
const subpaths = Object.keys(pkg.exports).filter((key) => typeof pkg.exports[key] === "object");

// Plain Node, by package name: the test runner's own loader would read the entries its own way.
const script = `
  import { createRequire } from "node:module";
  const require = createRequire(process.cwd() + "/");
  const out = {};
  for (const subpath of JSON.parse(process.argv[1])) {
    const specifier = subpath === "." ? "prism-tools-native" : "prism-tools-native" + subpath.slice(1);
    const esm = await import(specifier);
    const cjs = require(specifier);
    const named = Object.keys(esm).filter((name) => name !== "default").sort();
    out[subpath] = {
      named,
      cjs: Object.keys(cjs).sort(),
      different: named.filter((name) => esm[name] !== cjs[name]),
      defaultIsCjs: esm.default === cjs,
    };
  }
  console.log(JSON.stringify(out));
`;

describe("package exports: the same surface for ES modules and CommonJS", () => {
  const surface = JSON.parse(
    execFileSync(process.execPath, ["--input-type=module", "-e", script, JSON.stringify(subpaths)], { cwd: root, encoding: "utf8" }),
  );

  it("covers every subpath of package.json", () => {
    expect(subpaths.length).toBeGreaterThan(10);
    expect(Object.keys(surface).sort()).toEqual([...subpaths].sort());
  });

  it.each(subpaths)("%s: the ES module names exactly the CommonJS keys, the very same objects", (subpath) => {
    const entry = surface[subpath];
    expect(entry.cjs.length).toBeGreaterThan(0);
    expect(entry.named).toEqual(entry.cjs);
    expect(entry.different).toEqual([]);
    expect(entry.defaultIsCjs).toBe(true);
  });
});
