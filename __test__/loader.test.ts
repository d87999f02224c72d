// The loader (binding.js) as a user meets it: a copy of the package's loader beside its package.json,
// with or without a platform package, run in a child process as an installed package would be.
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const root = resolve(__dirname, "..");
const version: string = require("../package.json").version;
const key = process.platform === "linux" ? `linux-${process.arch}-gnu` : process.platform === "win32" ? `win32-${process.arch}-msvc` : `${process.platform}-${process.arch}`;
const built = join(root, `prism-tools-native.${key}.node`);
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** A directory holding the loader (with the platform detection it shares), and package.json only, as the main tarball installs them. */
function installedLoader(): string {
  const dir = mkdtempSync(join(tmpdir(), "prism-loader-"));
  dirs.push(dir);
  copyFileSync(join(root, "binding.js"), join(dir, "binding.js"));
  mkdirSync(join(dir, "lib"));
  copyFileSync(join(root, "lib", "platform.js"), join(dir, "lib", "platform.js"));
  copyFileSync(join(root, "package.json"), join(dir, "package.json"));
  return dir;
}

/** Loads `dir/binding.js` in a fresh node; the error's message and code when it throws. */
function load(dir: string, env: Record<string, string> = {}) {
  const script = `try { const b = require('./binding.js'); console.log(JSON.stringify({ ok: typeof b.nativeVersion })) }
    catch (e) { console.log(JSON.stringify({ code: e.code, platform: e.platform, message: e.message })) }`;
  const clean = { ...process.env, PRISM_TOOLS_NATIVE_LIBRARY_PATH: "", NAPI_RS_NATIVE_LIBRARY_PATH: "", ...env };
  return JSON.parse(execFileSync(process.execPath, ["-e", script], { cwd: dir, env: clean, encoding: "utf8" }));
}

describe.runIf(process.platform === "linux" && process.arch === "x64")("the native loader", () => {
  it("without its platform package says what it detected, what it looked for, the list and how to build", () => {
    const r = load(installedLoader());
    expect(r.code).toBe("ERR_PRISM_NATIVE_BINDING");
    expect(r.platform).toBe("linux-x64-gnu");
    expect(r.message).toContain("Detected: platform linux, arch x64, libc glibc");
    expect(r.message).toContain(`Looked for the platform package prism-tools-native-linux-x64-gnu@${version}`);
    for (const p of ["linux-x64-gnu", "linux-x64-musl", "linux-arm64-gnu", "linux-arm64-musl", "darwin-x64", "darwin-arm64", "win32-x64-msvc", "win32-arm64-msvc"]) {
      expect(r.message).toContain(`  ${p} (`);
    }
    expect(r.message).toContain("npm ci && npm run build");
    expect(r.message).not.toContain("npm has a bug");
  });

  it("loads the platform package from node_modules, and refuses one of another version", () => {
    const dir = installedLoader();
    const pkgDir = join(dir, "node_modules", "prism-tools-native-linux-x64-gnu");
    mkdirSync(pkgDir, { recursive: true });
    copyFileSync(built, join(pkgDir, "prism-tools-native.linux-x64-gnu.node"));
    const manifest = (v: string) =>
      writeFileSync(join(pkgDir, "package.json"), JSON.stringify({ name: "prism-tools-native-linux-x64-gnu", version: v, main: "prism-tools-native.linux-x64-gnu.node" }));
    manifest(version);
    expect(load(dir)).toEqual({ ok: "function" });
    manifest("0.0.0-other");
    const r = load(dir);
    expect(r.code).toBe("ERR_PRISM_NATIVE_BINDING");
    expect(r.message).toContain(`prism-tools-native-linux-x64-gnu is version 0.0.0-other, prism-tools-native is ${version}`);
  });

  it("PRISM_TOOLS_NATIVE_LIBRARY_PATH names the binary; a wrong path is reported, not skipped", () => {
    const dir = installedLoader();
    expect(load(dir, { PRISM_TOOLS_NATIVE_LIBRARY_PATH: built })).toEqual({ ok: "function" });
    const r = load(dir, { PRISM_TOOLS_NATIVE_LIBRARY_PATH: join(dir, "missing.node") });
    expect(r.code).toBe("ERR_PRISM_NATIVE_BINDING");
    expect(r.message).toContain(`${join(dir, "missing.node")}: Cannot find module`);
  });
});
