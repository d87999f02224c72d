'use strict'
// Which prebuilt binary this process loads: the platform key (`linux-x64-gnu`, `darwin-arm64`, …)
// that names the platform packages of the main addon (binding.js) and of the embeddings addon
// (lib/embeddings-binding.js).
const { readFileSync } = require('node:fs')

// The published platforms (package.json `napi.targets`), by the key this loader computes.
const SUPPORTED = {
  'linux-x64-gnu': 'x86_64-unknown-linux-gnu',
  'linux-x64-musl': 'x86_64-unknown-linux-musl',
  'linux-arm64-gnu': 'aarch64-unknown-linux-gnu',
  'linux-arm64-musl': 'aarch64-unknown-linux-musl',
  'darwin-x64': 'x86_64-apple-darwin',
  'darwin-arm64': 'aarch64-apple-darwin',
  'win32-x64-msvc': 'x86_64-pc-windows-msvc',
  'win32-arm64-msvc': 'aarch64-pc-windows-msvc',
}

/** Which C library this Linux process runs on: 'glibc', 'musl' or undefined when unknown. */
function linuxLibc() {
  // The dynamic loader's ldd script names musl (Alpine) or glibc in its text; cheap, no subprocess.
  try {
    const ldd = readFileSync('/usr/bin/ldd', 'latin1')
    if (ldd.includes('musl')) return 'musl'
    if (ldd.includes('GNU C Library') || ldd.includes('glibc')) return 'glibc'
  } catch {}
  // Node's own diagnostic report: glibc builds of Node fill glibcVersionRuntime, musl ones load ld-musl.
  try {
    /** @type {any} */
    const report = typeof process.report?.getReport === 'function' ? process.report.getReport() : undefined
    const header = report?.header
    if (header?.glibcVersionRuntime) return 'glibc'
    const objects = Array.isArray(report?.sharedObjects) ? report.sharedObjects : []
    if (objects.some((f) => f.includes('libc.musl-') || f.includes('ld-musl-'))) return 'musl'
  } catch {}
  return undefined
}

/** The platform key of this process (`linux-x64-gnu`, `darwin-arm64`, …) and what it was made of. */
function detectPlatform() {
  const { platform, arch } = process
  if (platform === 'linux') {
    const libc = linuxLibc()
    return { key: `linux-${arch}-${libc === 'musl' ? 'musl' : 'gnu'}`, platform, arch, libc: libc ?? 'unknown (glibc assumed)' }
  }
  if (platform === 'win32') return { key: `win32-${arch}-msvc`, platform, arch, libc: 'msvc' }
  return { key: `${platform}-${arch}`, platform, arch, libc: 'system' }
}

module.exports = { SUPPORTED, linuxLibc, detectPlatform }
