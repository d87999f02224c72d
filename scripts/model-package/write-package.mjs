#!/usr/bin/env node
// Writes the model package's package.json and README.md (scripts/build-model-package.sh calls it).
// The package carries data only; the inference addon for each platform is one of its
// optionalDependencies (`prism-tools-native-embeddings-<platform>`), added at publish time as the
// main package's are, so installing the model brings the one binary this machine loads.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

const [root, out] = process.argv.slice(2)
const main = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
const pkg = {
  name: 'prism-tools-native-minilm',
  version: main.version,
  description: 'all-MiniLM-L6-v2 (sentence-transformers, Apache-2.0) as f16 safetensors, for the hybrid tool search of prism-tools-native',
  license: 'Apache-2.0',
  homepage: main.homepage,
  repository: main.repository,
  files: ['model.safetensors', 'tokenizer.json', 'config.json', 'LICENSE', 'NOTICE', 'README.md'],
}
// At publish (PRISM_MODEL_OPTIONAL_DEPENDENCIES=1): the 8 embeddings platform packages, as the main
// package lists its own, so installing the model brings the binary this machine loads. Left out
// otherwise: a tarball install with no registry (the pack proof) could not resolve them.
if (process.env.PRISM_MODEL_OPTIONAL_DEPENDENCIES === '1') {
  const platforms = readdirSync(join(root, 'npm')).sort()
  pkg.optionalDependencies = Object.fromEntries(platforms.map((p) => [`prism-tools-native-embeddings-${p}`, main.version]))
}
writeFileSync(join(out, 'package.json'), JSON.stringify(pkg, null, 2) + '\n')
writeFileSync(
  join(out, 'README.md'),
  `# prism-tools-native-minilm

The sentence-embedding model of \`prism-tools-native/embeddings\`: sentence-transformers/all-MiniLM-L6-v2
(Apache-2.0, see LICENSE and NOTICE), its weights stored as f16 safetensors, with its tokenizer and config.
Install it beside \`prism-tools-native\` to turn on hybrid tool search; the addon checks every file's sha256
when it loads the model.
`,
)
