#!/usr/bin/env node
// `npm run build:embeddings`: builds the embeddings addon (crates/embeddings: all-MiniLM-L6-v2 with
// candle) into `prism-tools-embeddings.<platform>.node` beside package.json, which
// lib/embeddings-binding.js loads first, and its types into crates/embeddings/binding.d.ts. A build of
// its own: the main addon (`npm run build`) neither links nor waits for it. PRISM_BUILD_TARGET works as
// in scripts/build.mjs (a glibc version suffix pins the oldest glibc the binary needs).
import { spawnSync } from 'node:child_process'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const require = createRequire(import.meta.url)
const cli = join(dirname(require.resolve('@napi-rs/cli/package.json')), 'dist', 'cli.js')

const args = [
  'build', '--manifest-path', 'crates/embeddings/Cargo.toml', '--package-json-path', 'crates/embeddings/package.json',
  '--output-dir', '.', '--platform', '--no-js', '--dts', 'crates/embeddings/binding.d.ts', ...process.argv.slice(2),
]
const target = process.env.PRISM_BUILD_TARGET
if (target) args.push('--target', target, '--cross-compile')

const run = spawnSync(process.execPath, [cli, ...args], { cwd: root, stdio: 'inherit' })
if (run.error) throw run.error
if (run.status !== 0) process.exit(run.status ?? 1)
