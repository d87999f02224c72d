#!/usr/bin/env node
// Fails when an `unsafe` block, fn, impl or extern in crates/ has no `// SAFETY:` comment (or, for an
// `unsafe fn`, a `# Safety` doc section) saying why it is sound. The comment goes on the lines just
// above the line that holds `unsafe` (or above its `let x =` line), or at the
// end of that line. Usage: node scripts/check-unsafe.mjs [dir ...] (default: crates)
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'

const roots = process.argv.slice(2)
if (roots.length === 0) roots.push(new URL('../crates', import.meta.url).pathname)

function rustFiles(dir) {
  const out = []
  for (const name of readdirSync(dir)) {
    const p = join(dir, name)
    if (statSync(p).isDirectory()) out.push(...rustFiles(p))
    else if (name.endsWith('.rs')) out.push(p)
  }
  return out
}

// The code of a line with string/char literals blanked and any `//` comment removed, plus the
// comment. Block comments are rare in this crate and not handled beyond `/* ... */` on one line.
function split(line) {
  let code = ''
  let i = 0
  while (i < line.length) {
    const c = line[i]
    if (c === '/' && line[i + 1] === '/') return { code, comment: line.slice(i) }
    if (c === '/' && line[i + 1] === '*') {
      const end = line.indexOf('*/', i + 2)
      if (end < 0) return { code, comment: line.slice(i) }
      i = end + 2
      continue
    }
    if (c === '"') {
      i++
      while (i < line.length && line[i] !== '"') i += line[i] === '\\' ? 2 : 1
      i++
      code += '""'
      continue
    }
    code += c
    i++
  }
  return { code, comment: '' }
}

const documents = (comment) => /SAFETY:|# Safety/.test(comment)

// Lines that continue a statement from the line above: the line above ends mid-expression.
const continues = (code) => /=>?\s*$/.test(code.trimEnd())

let failures = 0
let count = 0
for (const root of roots) {
  for (const file of rustFiles(root)) {
    const lines = readFileSync(file, 'utf8').split('\n').map(split)
    lines.forEach(({ code, comment }, i) => {
      if (!/\bunsafe\b/.test(code)) return
      count++
      if (documents(comment)) return
      // Walk up: comments and attributes directly above, then (once per continued line) the
      // statement start and the comments above it.
      let j = i - 1
      for (let hops = 0; j >= 0 && hops < 8; ) {
        const above = lines[j]
        const text = above.code.trim()
        if (text === '' && above.comment !== '') {
          if (documents(above.comment)) return
          j--
          continue
        }
        if (text.startsWith('#[') || text.startsWith('#![')) {
          j--
          continue
        }
        if (text !== '' && continues(above.code)) {
          if (documents(above.comment)) return
          hops++
          j--
          continue
        }
        break
      }
      failures++
      console.error(`${relative(process.cwd(), file)}:${i + 1}: unsafe without a // SAFETY: comment`)
      console.error(`    ${code.trim()}`)
    })
  }
}
if (failures > 0) {
  console.error(`${failures} of ${count} unsafe uses lack a // SAFETY: comment`)
  process.exit(1)
}
console.log(`check-unsafe: ${count} unsafe uses, each with a // SAFETY: comment`)
