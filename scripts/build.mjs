#!/usr/bin/env node
// `npm run build`: builds the addon with the napi-rs CLI and writes `prism-tools-native.<platform>.node`
// beside package.json, which binding.js (the loader, kept in git) loads first. Arguments are passed to
// `napi build` (`--release`, `--features bench`, …). Then it writes index.mjs, the ES module entry, from
// the names index.js exports (scripts/write-esm-entry.mjs; loading index.js loads a binary).
//
// PRISM_BUILD_TARGET=<triple> builds for that target through Zig (`napi build --cross-compile`, which runs
// cargo-zigbuild; Zig from PyPI's `ziglang` is found by cargo-zigbuild as `python3 -m ziglang`). A glibc
// version suffix pins the oldest glibc the binary needs:
//   PRISM_BUILD_TARGET=x86_64-unknown-linux-gnu.2.17 npm run build   # loads on glibc >= 2.17
//   PRISM_BUILD_TARGET=x86_64-unknown-linux-musl npm run build       # Alpine and other musl systems
import { spawnSync } from 'node:child_process'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const require = createRequire(import.meta.url)
const cli = join(dirname(require.resolve('@napi-rs/cli/package.json')), 'dist', 'cli.js')

// The binding crate is crates/node; its binary and binding.d.ts (kept in git: lib/ is type-checked
// against it, __test__/tsconfig.lib.json) land beside package.json.
const args = ['build', '--manifest-path', 'crates/node/Cargo.toml', '--package-json-path', 'package.json', '--output-dir', '.', '--platform', '--no-js', '--dts', 'binding.d.ts', ...process.argv.slice(2)]
const target = process.env.PRISM_BUILD_TARGET
// (For musl targets napi build itself adds `-C target-feature=-crt-static`: an addon links libc dynamically.)
if (target) args.push('--target', target, '--cross-compile')

const run = spawnSync(process.execPath, [cli, ...args], { cwd: root, stdio: 'inherit' })
if (run.error) throw run.error
if (run.status !== 0) process.exit(run.status ?? 1)

const esm = spawnSync(process.execPath, [join(root, 'scripts', 'write-esm-entry.mjs')], { cwd: root, stdio: 'inherit' })
if (esm.error) throw esm.error
if (esm.status !== 0) {
  // A binary for another target (`--target`, PRISM_BUILD_TARGET) may not load here: the build stands, and
  // index.mjs is written where one loads. A build for this machine must load.
  const crossTarget = target !== undefined || process.argv.slice(2).some((arg) => arg === '--target' || arg.startsWith('--target=') || arg === '-t')
  if (!crossTarget) process.exit(esm.status ?? 1)
  console.warn('build: index.mjs was not written (no binary this machine loads); run `node scripts/write-esm-entry.mjs` where one does')
} else {
  // The type of the dispatch command table, from the table (lib/ is type-checked against it and binding.d.ts).
  const types = spawnSync(process.execPath, [join(root, 'scripts', 'write-dispatch-codes-types.mjs')], { cwd: root, stdio: 'inherit' })
  if (types.error) throw types.error
  if (types.status !== 0) process.exit(types.status ?? 1)
}
