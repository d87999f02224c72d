#!/usr/bin/env node
// Runs one Jazzer.js fuzz target of fuzz/js/ (coverage-guided, libFuzzer underneath):
//
//   npm run fuzz:js -- <target> [libFuzzer flags, e.g. -runs=10000000 -max_total_time=7200]
//   npm run fuzz:js -- list
//
// The corpus grows in fuzz/js/corpus/<target>/ (not committed); a crash is written to
// fuzz/js/crashes/<target>/ and the run exits non-zero. docs/fuzzing.md has the targets and results.
import { spawnSync, execFileSync } from "node:child_process";
import { createRequire } from "node:module";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const require = createRequire(import.meta.url);
const TARGETS = {
  "stream-redaction": { file: "stream-redaction.fuzz.js", sync: true },
  "openai-stream": { file: "openai-stream.fuzz.js", sync: false },
  "anthropic-stream": { file: "anthropic-stream.fuzz.js", sync: false },
  address: { file: "address.fuzz.js", sync: true },
};

const [name, ...rest] = process.argv.slice(2);
if (name === undefined || name === "list" || !(name in TARGETS)) {
  const known = Object.keys(TARGETS).join(", ");
  if (name !== undefined && name !== "list") console.error(`fuzz-js: unknown target "${name}" (known: ${known})`);
  else console.log(`targets: ${known}\nusage: npm run fuzz:js -- <target> [-runs=N] [-max_total_time=S] [other libFuzzer flags]`);
  process.exit(name === undefined || name === "list" ? 0 : 2);
}
const target = TARGETS[name];

let cli;
try {
  cli = require.resolve("@jazzer.js/core/dist/cli.js");
} catch {
  console.error("fuzz-js: @jazzer.js/core is not installed (it is a devDependency: run npm install)");
  process.exit(2);
}

// The fuzzer addon in @jazzer.js/fuzzer is built against glibc 2.38 / libstdc++ 13. On an older
// glibc (Debian 12 has 2.36) it fails to load; the three symbols it takes from the newer versions
// are supplied by a tiny library, and a copy of the addon marks those versions weak.
function glibcCompat() {
  if (process.platform !== "linux" || process.arch !== "x64") return {};
  const glibc = process.report.getReport().header.glibcVersionRuntime;
  if (glibc === undefined) return {};
  const [major, minor] = glibc.split(".").map(Number);
  if (major > 2 || (major === 2 && minor >= 38)) return {};
  const addon = path.join(path.dirname(require.resolve("@jazzer.js/fuzzer/package.json")), "prebuilds", "fuzzer-linux-x64.node");
  const cache = path.join(root, "node_modules", ".cache", "prism-fuzz-js");
  fs.mkdirSync(cache, { recursive: true });
  const copy = path.join(cache, "fuzzer-linux-x64.node");
  const shim = path.join(cache, "glibc-shim.so");
  const stamp = `${fs.statSync(addon).size}:${fs.statSync(addon).mtimeMs}`;
  const stampFile = path.join(cache, "stamp");
  if (!fs.existsSync(copy) || !fs.existsSync(shim) || (fs.existsSync(stampFile) ? fs.readFileSync(stampFile, "utf8") : "") !== stamp) {
    fs.writeFileSync(copy, weakenVersions(fs.readFileSync(addon), new Set(["GLIBC_2.38", "GLIBCXX_3.4.32"])));
    const source = path.join(cache, "glibc-shim.cc");
    fs.writeFileSync(
      source,
      [
        "#include <cstdlib>",
        "#include <iostream>",
        'extern "C" long __isoc23_strtol(const char *s, char **end, int base) { return std::strtol(s, end, base); }',
        'extern "C" unsigned long __isoc23_strtoul(const char *s, char **end, int base) { return std::strtoul(s, end, base); }',
        'extern "C" void prism_ios_base_library_init() __asm__("_ZSt21ios_base_library_initv");',
        'extern "C" void prism_ios_base_library_init() {}',
        "",
      ].join("\n"),
    );
    try {
      execFileSync(process.env.CXX ?? "g++", ["-shared", "-fPIC", "-O2", "-o", shim, source], { stdio: "inherit" });
    } catch {
      console.error(`fuzz-js: glibc ${glibc} is older than the fuzzer addon needs (2.38), and building its compatibility shim needs a C++ compiler (g++)`);
      process.exit(2);
    }
    fs.writeFileSync(stampFile, stamp);
  }
  const preload = [shim, process.env.LD_PRELOAD].filter(Boolean).join(":");
  return { env: { PRISM_FUZZ_JS_ADDON: copy, LD_PRELOAD: preload }, nodeArgs: ["-r", path.join(root, "fuzz", "js", "glibc-compat.cjs")] };
}

/** The ELF image with the named required symbol versions (.gnu.version_r) flagged VER_FLG_WEAK. */
function weakenVersions(image, names) {
  const b = Buffer.from(image);
  const shoff = Number(b.readBigUInt64LE(0x28));
  const shentsize = b.readUInt16LE(0x3a);
  const shnum = b.readUInt16LE(0x3c);
  const section = (i) => {
    const o = shoff + i * shentsize;
    return { type: b.readUInt32LE(o + 4), offset: Number(b.readBigUInt64LE(o + 0x18)), link: b.readUInt32LE(o + 0x28), info: b.readUInt32LE(o + 0x2c) };
  };
  for (let i = 0; i < shnum; i++) {
    const s = section(i);
    if (s.type !== 0x6ffffffe) continue; // SHT_GNU_verneed
    const strings = section(s.link).offset;
    let need = s.offset;
    for (let n = 0; n < s.info; n++) {
      let aux = need + b.readUInt32LE(need + 8);
      for (let k = 0; k < b.readUInt16LE(need + 2); k++) {
        const at = strings + b.readUInt32LE(aux + 8);
        if (names.has(b.toString("latin1", at, b.indexOf(0, at)))) b.writeUInt16LE(b.readUInt16LE(aux + 4) | 2, aux + 4);
        aux += b.readUInt32LE(aux + 12);
      }
      need += b.readUInt32LE(need + 12);
    }
  }
  return b;
}

const corpus = path.join(root, "fuzz", "js", "corpus", name);
const crashes = path.join(root, "fuzz", "js", "crashes", name);
fs.mkdirSync(corpus, { recursive: true });
fs.mkdirSync(crashes, { recursive: true });
const dict = path.join(root, "fuzz", "js", `${name}.dict`);
const compat = glibcCompat();
const libFuzzerArgs = [`-artifact_prefix=${crashes}${path.sep}`, ...(fs.existsSync(dict) ? [`-dict=${dict}`] : []), ...rest];
const args = [
  ...(compat.nodeArgs ?? []),
  cli,
  path.join(root, "fuzz", "js", target.file),
  corpus,
  // Only the package's own code is instrumented (not node_modules, not the target itself).
  "--includes=lib/",
  "--timeout=10000",
  ...(target.sync ? ["--sync"] : []),
  "--",
  ...libFuzzerArgs,
];
console.log(`fuzz-js: node ${process.version}, @jazzer.js/core ${require("@jazzer.js/core/package.json").version}, target ${name}`);
const run = spawnSync(process.execPath, args, { cwd: root, stdio: "inherit", env: { ...process.env, ...compat.env } });
process.exit(run.status ?? 1);
