#!/usr/bin/env bash
# The package as a user gets it: `npm pack` the main package and the linux-x64-gnu platform package,
# install both tarballs into a fresh project whose PATH has no Rust toolchain, and there check that
#   - import (ESM) and require (CJS) give the same objects, and the binary is the platform package's;
#   - a TypeScript file using the exports compiles under moduleResolution node16, nodenext and bundler;
#   - a vitest test running an agent with createMockProvider and a tool passes in the threads, forks and
#     vmThreads pools;
#   - the agent demo (examples/agent-demo.mjs, its imports pointed at the package) runs;
#   - with the model package and the embeddings platform package also installed from tarballs, a
#     hybrid search runs inside a network namespace with no network.
# It never builds: it packs the prism-tools-native.linux-x64-gnu.node that `npm run build` (the test
# command's build) left beside package.json, and refuses it when it needs a glibc newer than 2.17.
#
# Usage: bash scripts/pack-proof.sh   (Linux x64; KEEP=1 keeps the temporary project)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
fixture=$root/scripts/pack-proof
binary=$root/prism-tools-native.linux-x64-gnu.node
max_glibc=2.17

step() { printf '\n== pack-proof: %s\n' "$*"; }
# shellcheck source=scripts/pack-tarballs.sh
. "$root/scripts/pack-tarballs.sh"

[ -f "$binary" ] || { echo "pack-proof: $binary is missing: run npm run build first" >&2; exit 1; }

step "the binary needs no glibc newer than $max_glibc"
need=$(objdump -T "$binary" | grep -o 'GLIBC_[0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -1)
echo "highest GLIBC_ symbol version: $need"
if [ "$(printf '%s\n%s\n' "$need" "$max_glibc" | sort -V | tail -1)" != "$max_glibc" ]; then
  echo "pack-proof: $binary needs GLIBC_$need (> $max_glibc): build it with PRISM_BUILD_TARGET=x86_64-unknown-linux-gnu.$max_glibc" >&2
  exit 1
fi

work=$(mktemp -d /tmp/prism-pack-proof-XXXXXX)
if [ "${KEEP:-}" = 1 ]; then echo "keeping $work"; else trap 'rm -rf "$work"' EXIT; fi

step "npm pack: the platform package and the main package"
pack_tarballs optional-dependencies
tar -tzf "$platform_tgz" | sort
tar -xzOf "$main_tgz" package/package.json | node -e '
  const pkg = JSON.parse(require("fs").readFileSync(0, "utf8"))
  const deps = Object.keys(pkg.optionalDependencies ?? {})
  if (deps.length !== 8 || !deps.includes("prism-tools-native-linux-x64-gnu")) throw new Error("optionalDependencies: " + deps)
  console.log("main package: " + deps.length + " platform packages in optionalDependencies")'
if tar -tzf "$main_tgz" | grep -q '\.node$'; then
  echo "pack-proof: the main tarball holds a .node file; binaries ship in the platform packages" >&2
  exit 1
fi

step "a fresh project, PATH without cargo or rustc"
app=$work/app
mkdir -p "$app"
cp "$fixture"/* "$app/"
# The demo, its imports pointed at the installed package instead of the repository's entry files.
sed -e "s#'../index.mjs'#'prism-tools-native'#" \
    -e "s#'../providers/openai-compatible.mjs'#'prism-tools-native/providers/openai-compatible'#" \
    "$root/examples/agent-demo.mjs" >"$app/agent-demo.mjs"
cp "$root/examples/github-mcp-tools.json" "$app/"
cp "$root/examples/demo-tables.mjs" "$app/"
if grep -q "'\.\./" "$app/agent-demo.mjs"; then echo "pack-proof: the demo still imports from the repository" >&2; exit 1; fi
# The tools the proof runs with: the versions the repository's lockfile installed.
ver() { node -p "require('$root/node_modules/$1/package.json').version"; }
write_app_package "$app" prism-pack-proof "\"typescript\": \"$(ver typescript)\", \"vitest\": \"$(ver vitest)\""
node_dir=$(dirname "$(command -v node)")
clean_path="$node_dir:/usr/bin:/bin"
run_clean() { (cd "$app" && env -u CARGO_HOME -u RUSTUP_HOME -u OPENAI_BASE_URL PATH="$clean_path" "$@"); }
if run_clean sh -c 'command -v cargo || command -v rustc'; then
  echo "pack-proof: a Rust toolchain is still on the clean PATH ($clean_path)" >&2
  exit 1
fi
run_clean npm install --no-audit --no-fund --prefer-offline --loglevel=error
run_clean node -e "require.resolve('prism-tools-native-linux-x64-gnu')"

step "import and require give the same objects"
run_clean node esm-cjs.mjs

step "TypeScript, strict, under moduleResolution node16, nodenext and bundler"
for mode in node16 nodenext bundler; do
  run_clean node node_modules/typescript/bin/tsc -p "tsconfig.$mode.json"
  echo "tsc $mode: ok"
done

step "vitest in the threads, forks and vmThreads pools"
for pool in threads forks vmThreads; do
  run_clean node node_modules/vitest/vitest.mjs run --pool "$pool" agent.test.ts
done

step "the demo runs from the installed package"
run_clean node agent-demo.mjs >"$work/demo.out"
cat "$work/demo.out"
grep -q '^Ledger rows' "$work/demo.out"
grep -q 'call_6.*delete_repository' "$work/demo.out"

step "hybrid search: the model package and the embeddings addon from tarballs, no network"
embeddings_binary=$root/prism-tools-embeddings.linux-x64-gnu.node
model_dir=$root/models/minilm
[ -f "$embeddings_binary" ] || { echo "pack-proof: $embeddings_binary is missing: run npm run build:embeddings" >&2; exit 1; }
[ -f "$model_dir/model.safetensors" ] || { echo "pack-proof: $model_dir is missing: run bash scripts/build-model-package.sh" >&2; exit 1; }
need=$(objdump -T "$embeddings_binary" | grep -o 'GLIBC_[0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -1)
echo "embeddings addon: $(stat -c %s "$embeddings_binary") bytes, highest GLIBC_ symbol version: $need"
if [ "$(printf '%s\n%s\n' "$need" "$max_glibc" | sort -V | tail -1)" != "$max_glibc" ]; then
  echo "pack-proof: $embeddings_binary needs GLIBC_$need (> $max_glibc)" >&2
  exit 1
fi
version=$(node -p "require('$root/package.json').version")
emb_pkg=$work/embeddings-platform
mkdir -p "$emb_pkg"
cp "$embeddings_binary" "$emb_pkg/"
node -e '
  const [dir, version] = process.argv.slice(1)
  const file = "prism-tools-embeddings.linux-x64-gnu.node"
  require("fs").writeFileSync(dir + "/package.json", JSON.stringify({ name: "prism-tools-native-embeddings-linux-x64-gnu", version,
    license: "MIT", os: ["linux"], cpu: ["x64"], libc: ["glibc"], main: file, files: [file] }, null, 2))' "$emb_pkg" "$version"
(cd "$emb_pkg" && npm pack --silent --pack-destination "$work/tarballs" >/dev/null)
(cd "$model_dir" && npm pack --silent --pack-destination "$work/tarballs" >/dev/null)
emb_tgz=$work/tarballs/prism-tools-native-embeddings-linux-x64-gnu-$version.tgz
model_tgz=$work/tarballs/prism-tools-native-minilm-$version.tgz
tar -tzf "$model_tgz" | sort
hybrid=$work/hybrid
mkdir -p "$hybrid"
cp "$fixture/hybrid.mjs" "$hybrid/"
node -e '
  const [dir, main, platform, emb, model] = process.argv.slice(1)
  require("fs").writeFileSync(dir + "/package.json", JSON.stringify({ name: "prism-hybrid-proof", private: true, type: "module",
    dependencies: { "prism-tools-native": "file:" + main, "prism-tools-native-linux-x64-gnu": "file:" + platform,
      "prism-tools-native-embeddings-linux-x64-gnu": "file:" + emb, "prism-tools-native-minilm": "file:" + model } }, null, 2))' \
  "$hybrid" "$main_tgz" "$platform_tgz" "$emb_tgz" "$model_tgz"
(cd "$hybrid" && env PATH="$clean_path" npm install --no-audit --no-fund --prefer-offline --loglevel=error)
# No network at all while it loads the model and searches: a network namespace with no interface up.
(cd "$hybrid" && env -u PRISM_TOOLS_MINILM_PATH -u PRISM_TOOLS_EMBEDDINGS_LIBRARY_PATH PATH="$clean_path" unshare --net node hybrid.mjs)

printf '\npack-proof: all checks passed\n'
