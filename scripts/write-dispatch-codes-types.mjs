#!/usr/bin/env node
// Writes lib/dispatch-codes.d.ts, the type of the dispatch command table, from the table itself
// (`dispatchCodes()`, written once in crates/node/src/dispatch/codes.rs): the type-check of lib/
// (`__test__/tsconfig.lib.json`) then refuses a code the binding does not have. `npm run build` runs
// this once the binary is built; run it by hand where a binary was put beside package.json another way.
import { writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const require = createRequire(import.meta.url)
const codes = require(join(root, 'binding.js')).dispatchCodes()
const names = Object.keys(codes)
const identifier = /^[A-Z][A-Z0-9_]*$/
if (names.length === 0 || names.some((n) => !identifier.test(n) || !Number.isInteger(codes[n]))) {
  console.error('write-dispatch-codes-types: dispatchCodes() is not a table of NAME: integer')
  process.exit(1)
}

const text = `// Generated from dispatchCodes() (crates/node/src/dispatch/codes.rs) by scripts/write-dispatch-codes-types.mjs;
// \`npm run build\` keeps it current. Do not edit.
declare const C: Readonly<{
${names.map((n) => `  ${n}: number;\n`).join('')}}>;
export = C;
`
writeFileSync(join(root, 'lib', 'dispatch-codes.d.ts'), text)
