#!/usr/bin/env bash
# The package under Bun and Deno, installed the two ways a user installs it:
#   - from the tarballs: `npm pack` the main package and the linux-x64-gnu platform package (as
#     scripts/pack-proof.sh does) and install both into a fresh project;
#   - from a folder: `npm install <this checkout>` (a `file:` dependency, which npm links), loading the
#     prism-tools-native.linux-x64-gnu.node that `npm run build` left beside package.json. Deno reads a
#     linked package at its real path, outside any node_modules, where package.json's "type" alone
#     decides whether the .js files are CommonJS.
# Bun and Deno come from the npm registry (pinned below). In each project scripts/runtime-smoke/smoke.mjs
# (every subpath through import and require, dispatch, validation, search, an agent run with a tool over
# the mock provider, textStream, an effect store, SQLite ledger and checkpoint store, the OpenTelemetry
# subpath) runs under `bun` and under `deno run`; each prints "<runtime> (<install>): N passed, N failed".
# It never builds.
#
# Usage: bash scripts/runtime-smoke.sh   (Linux x64; KEEP=1 keeps the temporary projects)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
binary=$root/prism-tools-native.linux-x64-gnu.node
BUN_VERSION=1.4.4   # @oven/bun-linux-x64 (the Bun binary's own package: no install script)
DENO_VERSION=2.9.6  # deno (its binary comes in @deno/linux-x64-glibc, an optional dependency)

step() { printf '\n== runtime-smoke: %s\n' "$*"; }
# shellcheck source=scripts/pack-tarballs.sh
. "$root/scripts/pack-tarballs.sh"
[ -f "$binary" ] || { echo "runtime-smoke: $binary is missing: run npm run build first" >&2; exit 1; }

work=$(mktemp -d /tmp/prism-runtime-smoke-XXXXXX)
if [ "${KEEP:-}" = 1 ]; then echo "keeping $work"; else trap 'rm -rf "$work"' EXIT; fi

step "npm pack: the platform package and the main package"
pack_tarballs
ls -1 "$work/tarballs"

step "a project on the two tarballs, with bun $BUN_VERSION and deno $DENO_VERSION from the npm registry"
mkdir -p "$work/tarball"
cp "$root/scripts/runtime-smoke/smoke.mjs" "$work/tarball/"
write_app_package "$work/tarball" prism-runtime-smoke "\"@oven/bun-linux-x64\": \"$BUN_VERSION\", \"deno\": \"$DENO_VERSION\""
# --ignore-scripts: neither runtime needs an install script (both binaries ship in their packages).
(cd "$work/tarball" && npm install --no-audit --no-fund --prefer-offline --ignore-scripts --loglevel=error)
bun=$work/tarball/node_modules/@oven/bun-linux-x64/bin/bun
deno=$work/tarball/node_modules/@deno/linux-x64-glibc/deno
"$bun" --version
"$deno" --version | head -1

step "a project on this checkout as a folder dependency (file:$root)"
mkdir -p "$work/folder"
cp "$root/scripts/runtime-smoke/smoke.mjs" "$work/folder/"
printf '{ "name": "prism-runtime-smoke-folder", "private": true, "type": "module", "dependencies": { "prism-tools-native": "file:%s" } }\n' "$root" >"$work/folder/package.json"
(cd "$work/folder" && npm install --no-audit --no-fund --prefer-offline --ignore-scripts --loglevel=error)
[ -L "$work/folder/node_modules/prism-tools-native" ] || { echo "runtime-smoke: npm did not link the folder" >&2; exit 1; }

status=0
# Each runtime's stderr is kept: when its environment ends, the addon deletes every reference it
# holds, and napi-rs reports one dropped undeleted ("ObjectRef is not unref") there.
leaked() {
  cat "$work/$1.err" >&2
  if grep -q "is not unref" "$work/$1.err"; then echo "runtime-smoke: $1 reported a reference left undeleted" >&2; return 0; fi
  return 1
}
for install in tarball folder; do
  step "bun, $install install"
  (cd "$work/$install" && SMOKE_INSTALL=$install "$bun" smoke.mjs 2>"$work/bun-$install.err") || status=1
  if leaked "bun-$install"; then status=1; fi
  step "deno, $install install"
  # -A: the addon is a Node-API module (--allow-ffi), and the checks read and write temporary files.
  (cd "$work/$install" && SMOKE_INSTALL=$install DENO_NO_UPDATE_CHECK=1 "$deno" run -A smoke.mjs 2>"$work/deno-$install.err") || status=1
  if leaked "deno-$install"; then status=1; fi
done

if [ "$status" = 0 ]; then
  printf '\nruntime-smoke: bun and deno passed, installed from the tarballs and from a folder\n'
else
  printf '\nruntime-smoke: a runtime failed\n' >&2
fi
exit "$status"
