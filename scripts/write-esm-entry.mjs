#!/usr/bin/env node
// Writes index.mjs, the package's ES module entry, from the CommonJS entry: one named export for each key
// of `require('./index.js')`, each the very same object, and the CommonJS object as the default export.
// index.js is the one list of the package's exports; index.mjs is not kept in git. `npm run build` runs
// this once the binary is built (loading index.js loads the binary); run it by hand where a binary was
// put beside package.json another way (`node scripts/write-esm-entry.mjs`).
//
// Not `export * from './index.js'`: on Node 23 and later that adds a `module.exports` named export.
import { writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const require = createRequire(import.meta.url)
const names = Object.keys(require(join(root, 'index.js')))

const identifier = /^[A-Za-z_$][A-Za-z0-9_$]*$/
const bad = names.filter((name) => !identifier.test(name) || name === 'default')
if (names.length === 0 || bad.length > 0) {
  console.error(`write-esm-entry: index.js exports ${names.length} names; not usable as named exports: ${bad.join(', ')}`)
  process.exit(1)
}

const text = `// Generated from index.js by scripts/write-esm-entry.mjs (\`npm run build\` runs it); not kept in git, do not edit.
// The package entry (ES modules): the same objects as the CommonJS entry, as named exports.
import cjs from './index.js'

export const {
${names.map((name) => `  ${name},\n`).join('')}} = cjs
export default cjs
`
writeFileSync(join(root, 'index.mjs'), text)
console.log(`write-esm-entry: index.mjs names the ${names.length} exports of index.js`)
