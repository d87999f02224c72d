'use strict'
// Loads the native addon for this machine. Every other module requires this file, never a `.node`.
//
// Where the binary comes from, in order:
//   1. PRISM_TOOLS_NATIVE_LIBRARY_PATH (or napi-rs's NAPI_RS_NATIVE_LIBRARY_PATH): a path to a `.node`;
//   2. `prism-tools-native.<platform>.node` beside this file (what `npm run build` writes);
//   3. the platform package `prism-tools-native-<platform>`, one of the package's optionalDependencies,
//      which npm installs only on the matching os/cpu/libc.
// When none loads, the error names the platform and libc detected, the package looked for, the
// supported list and how to build from source, and keeps every attempt's error as its `cause`.

const { existsSync } = require('node:fs')
const { join } = require('node:path')

const NAME = 'prism-tools-native'
const VERSION = require('./package.json').version

const { SUPPORTED, detectPlatform } = require('./lib/platform.js')

function loadError(detected, attempts) {
  const pkg = `${NAME}-${detected.key}`
  const supported = Object.keys(SUPPORTED).map((k) => `  ${k} (${SUPPORTED[k]})`).join('\n')
  const lines = [
    `${NAME}: no native binary could be loaded for this machine.`,
    `Detected: platform ${detected.platform}, arch ${detected.arch}, libc ${detected.libc}, Node ${process.version}.`,
    SUPPORTED[detected.key]
      ? `Looked for the platform package ${pkg}@${VERSION} (an optional dependency of ${NAME}). ` +
        'It is missing when npm was run with --no-optional / --omit=optional, when node_modules was copied ' +
        'from another platform, or when the lockfile was written on another platform without it: reinstall ' +
        `with \`npm install ${NAME}\` on this machine (or add ${pkg}@${VERSION} explicitly).`
      : `There is no prebuilt binary for ${detected.key}.`,
    `Supported platforms:\n${supported}`,
    `To build from source (needs a stable Rust toolchain and a C compiler): clone the repository, run \`npm ci && npm run build\`, ` +
      `and point PRISM_TOOLS_NATIVE_LIBRARY_PATH at the ${NAME}.<platform>.node file it writes.`,
  ]
  if (attempts.length > 0) {
    lines.push('Attempts:')
    for (const a of attempts) lines.push(`  ${a.from}: ${a.error && a.error.message ? a.error.message.split('\n')[0] : a.error}`)
  }
  const error = new Error(lines.join('\n'), { cause: attempts.length === 1 ? attempts[0].error : attempts.map((a) => a.error) })
  error.code = 'ERR_PRISM_NATIVE_BINDING'
  error.platform = detected.key
  return error
}

function load() {
  const detected = detectPlatform()
  const attempts = []
  const tryRequire = (from, load) => {
    try {
      return load()
    } catch (error) {
      attempts.push({ from, error })
      return undefined
    }
  }

  const override = process.env.PRISM_TOOLS_NATIVE_LIBRARY_PATH || process.env.NAPI_RS_NATIVE_LIBRARY_PATH
  if (override) {
    const binding = tryRequire(override, () => require(override))
    if (binding) return binding
    throw loadError(detected, attempts)
  }

  const local = join(__dirname, `${NAME}.${detected.key}.node`)
  if (existsSync(local)) {
    const binding = tryRequire(local, () => require(local))
    if (binding) return binding
  }

  const pkg = `${NAME}-${detected.key}`
  if (SUPPORTED[detected.key]) {
    const binding = tryRequire(pkg, () => {
      const found = require(`${pkg}/package.json`).version
      if (found !== VERSION) {
        throw new Error(`${pkg} is version ${found}, ${NAME} is ${VERSION}: the two must be the same version`)
      }
      return require(pkg)
    })
    if (binding) return binding
  }
  throw loadError(detected, attempts)
}

module.exports = load()
