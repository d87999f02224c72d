// In a project that installed the packed tarballs: `import` and `require` give the same objects, for the
// main entry and every subpath export, and the binary loaded is the platform package's.
import { createRequire } from 'node:module'
import { readFileSync } from 'node:fs'
import assert from 'node:assert/strict'

const require = createRequire(import.meta.url)
const pkgJsonPath = require.resolve('prism-tools-native/package.json')
assert.ok(pkgJsonPath.includes('/node_modules/prism-tools-native/'), `resolved from ${pkgJsonPath}`)
const pkg = JSON.parse(readFileSync(pkgJsonPath, 'utf8'))

let compared = 0
for (const subpath of Object.keys(pkg.exports)) {
  if (subpath === './package.json') continue
  const spec = subpath === '.' ? 'prism-tools-native' : `prism-tools-native/${subpath.slice(2)}`
  const cjs = require(spec)
  const esm = await import(spec)
  const esmKeys = Object.keys(esm).filter((k) => k !== 'default').sort()
  assert.deepEqual(esmKeys, Object.keys(cjs).sort(), `${spec}: the same export names`)
  for (const key of esmKeys) {
    assert.ok(esm[key] === cjs[key], `${spec}: ${key} is the same object under import and require`)
    compared += 1
  }
}
assert.ok(compared > 50, `compared ${compared} exports`)

// The binary came from the platform package, not from a build tree.
const nodeFiles = Object.keys(require.cache).filter((f) => f.endsWith('.node'))
assert.equal(nodeFiles.length, 1, `one native binary loaded: ${nodeFiles.join(', ')}`)
assert.match(nodeFiles[0], /\/node_modules\/prism-tools-native-linux-x64-gnu\/prism-tools-native\.linux-x64-gnu\.node$/)
const { nativeVersion } = require('prism-tools-native')
assert.equal(typeof nativeVersion(), 'string')
console.log(`esm-cjs: ${compared} exports identical under import and require; binary ${nodeFiles[0]}`)
