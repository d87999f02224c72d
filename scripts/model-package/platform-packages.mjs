#!/usr/bin/env node
// Writes the embeddings addon's platform packages, `prism-tools-native-embeddings-<platform>`, one folder
// each under <out>, from the binaries found under <binaries> (`prism-tools-embeddings.<platform>.node`,
// e.g. the release workflow's downloaded artifacts); `os`, `cpu` and `libc` as the main platform
// packages (npm/<platform>) set them, so npm installs only the matching one. Prints the folders written.
// Usage: node platform-packages.mjs <binaries-dir> <out-dir>
import { copyFileSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { basename, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(fileURLToPath(new URL('.', import.meta.url)), '..', '..')
const [binaries, out] = process.argv.slice(2)
const main = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
const walk = (dir) => readdirSync(dir).flatMap((f) => (statSync(join(dir, f)).isDirectory() ? walk(join(dir, f)) : [join(dir, f)]))
for (const file of walk(binaries)) {
  const m = /^prism-tools-embeddings\.(.+)\.node$/.exec(basename(file))
  if (!m) continue
  const platform = m[1]
  const twin = JSON.parse(readFileSync(join(root, 'npm', platform, 'package.json'), 'utf8'))
  const dir = join(out, platform)
  mkdirSync(dir, { recursive: true })
  copyFileSync(file, join(dir, basename(file)))
  const pkg = {
    name: `prism-tools-native-embeddings-${platform}`,
    version: main.version,
    description: 'The embeddings addon of prism-tools-native (all-MiniLM-L6-v2 run with candle) for one platform',
    license: main.license,
    repository: main.repository,
    os: twin.os,
    cpu: twin.cpu,
    ...(twin.libc ? { libc: twin.libc } : {}),
    main: basename(file),
    files: [basename(file)],
  }
  writeFileSync(join(dir, 'package.json'), JSON.stringify(pkg, null, 2) + '\n')
  console.log(dir)
}
