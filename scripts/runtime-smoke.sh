#!/usr/bin/env bash
# The package under Bun and Deno, as a user of either installs it: `npm pack` the main package and the
# linux-x64-gnu platform package (as scripts/pack-proof.sh does), install both tarballs into a fresh
# project together with Bun and Deno from the npm registry (pinned below), and run
# scripts/runtime-smoke/smoke.mjs (dispatch, validation, search, an agent run with a tool over the mock
# provider, textStream, an effect store, SQLite ledger and checkpoint store, the OpenTelemetry subpath,
# CommonJS require) under `bun` and under `deno run`. Each runtime prints "<runtime>: N passed, N failed".
# It never builds: it packs the prism-tools-native.linux-x64-gnu.node that `npm run build` left beside
# package.json.
#
# Usage: bash scripts/runtime-smoke.sh   (Linux x64; KEEP=1 keeps the temporary project)
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

step "a fresh project: the two tarballs, bun $BUN_VERSION and deno $DENO_VERSION from the npm registry"
app=$work/app
mkdir -p "$app"
cp "$root/scripts/runtime-smoke/smoke.mjs" "$app/"
write_app_package "$app" prism-runtime-smoke "\"@oven/bun-linux-x64\": \"$BUN_VERSION\", \"deno\": \"$DENO_VERSION\""
# --ignore-scripts: neither runtime needs an install script (both binaries ship in their packages).
(cd "$app" && npm install --no-audit --no-fund --prefer-offline --ignore-scripts --loglevel=error)
bun=$app/node_modules/@oven/bun-linux-x64/bin/bun
deno=$app/node_modules/@deno/linux-x64-glibc/deno
"$bun" --version
"$deno" --version | head -1

status=0
# Each runtime's stderr is kept: when its environment ends, the addon deletes every reference it
# holds, and napi-rs reports one dropped undeleted ("ObjectRef is not unref") there.
leaked() {
  cat "$work/$1.err" >&2
  if grep -q "is not unref" "$work/$1.err"; then echo "runtime-smoke: $1 reported a reference left undeleted" >&2; return 0; fi
  return 1
}
step "bun"
(cd "$app" && "$bun" smoke.mjs 2>"$work/bun.err") || status=1
if leaked bun; then status=1; fi
step "deno"
# -A: the addon is a Node-API module (--allow-ffi), and the checks read and write temporary files.
(cd "$app" && DENO_NO_UPDATE_CHECK=1 "$deno" run -A smoke.mjs 2>"$work/deno.err") || status=1
if leaked deno; then status=1; fi

if [ "$status" = 0 ]; then printf '\nruntime-smoke: bun and deno passed\n'; else printf '\nruntime-smoke: a runtime failed\n' >&2; fi
exit "$status"
