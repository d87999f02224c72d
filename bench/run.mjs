// Runs every benchmark in this folder, one process each, in a fixed order; `npm run bench`.
// Each prints its own table; bench/RESULTS.md records the last figures and the command.
import { spawnSync } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const dir = fileURLToPath(new URL('.', import.meta.url))
const only = process.argv.slice(2)
const files = readdirSync(dir)
  .filter((f) => f.endsWith('.bench.mjs'))
  .filter((f) => only.length === 0 || only.some((o) => f.startsWith(o)))
  .sort()
let failed = 0
for (const file of files) {
  console.log(`\n## ${file}\n`)
  const r = spawnSync(process.execPath, ['--expose-gc', `${dir}/${file}`], { stdio: 'inherit' })
  if (r.status !== 0) failed++
}
process.exitCode = failed ? 1 : 0
