# Sourced by scripts/pack-proof.sh and scripts/runtime-smoke.sh, which set `root`, `binary` and `work`:
# the two tarballs a user installs, and a fresh project that depends on them.

# `npm pack`s the linux-x64-gnu platform package (with the binary `npm run build` left) and the main
# package (the files it ships, after scripts/prepack.mjs) into $work/tarballs; sets main_tgz and
# platform_tgz. With `optional-dependencies`, the main package lists every platform package in
# optionalDependencies, as `napi prepublish` writes them before `npm publish` (the repository's
# package.json lists none, so that `npm ci` works before they are published).
pack_tarballs() {
  mkdir -p "$work/platform" "$work/tarballs" "$work/main"
  cp "$root"/npm/linux-x64-gnu/* "$work/platform/"
  cp "$binary" "$work/platform/"
  (cd "$work/platform" && npm pack --silent --pack-destination "$work/tarballs" >/dev/null)
  (cd "$root" && node scripts/prepack.mjs)
  (cd "$root" && npm pack --dry-run --json --ignore-scripts 2>/dev/null) |
    node -e 'for (const f of JSON.parse(require("fs").readFileSync(0, "utf8"))[0].files) console.log(f.path)' |
    (cd "$root" && while read -r f; do mkdir -p "$work/main/$(dirname "$f")"; cp "$f" "$work/main/$f"; done)
  if [ "${1:-}" = optional-dependencies ]; then
    node -e '
      const fs = require("fs"), path = process.argv[1], pkg = JSON.parse(fs.readFileSync(path, "utf8"))
      const suffix = { "x86_64-unknown-linux-gnu": "linux-x64-gnu", "x86_64-unknown-linux-musl": "linux-x64-musl",
        "aarch64-unknown-linux-gnu": "linux-arm64-gnu", "aarch64-unknown-linux-musl": "linux-arm64-musl",
        "x86_64-apple-darwin": "darwin-x64", "aarch64-apple-darwin": "darwin-arm64",
        "x86_64-pc-windows-msvc": "win32-x64-msvc", "aarch64-pc-windows-msvc": "win32-arm64-msvc" }
      pkg.optionalDependencies = Object.fromEntries(pkg.napi.targets.map((t) => [`${pkg.name}-${suffix[t]}`, pkg.version]))
      fs.writeFileSync(path, JSON.stringify(pkg, null, 2) + "\n")' "$work/main/package.json"
  fi
  (cd "$work/main" && npm pack --silent --ignore-scripts --pack-destination "$work/tarballs" >/dev/null)
  local version
  version=$(node -p "require('$root/package.json').version")
  main_tgz=$work/tarballs/prism-tools-native-$version.tgz
  platform_tgz=$work/tarballs/prism-tools-native-linux-x64-gnu-$version.tgz
}

# Writes <dir>/package.json: a private ES-module project named <name> that depends on both tarballs,
# with <devDependencies>, the members of a JSON object ("name": "version", …).
write_app_package() {
  cat >"$1/package.json" <<EOF
{
  "name": "$2",
  "private": true,
  "type": "module",
  "dependencies": {
    "prism-tools-native": "file:$main_tgz",
    "prism-tools-native-linux-x64-gnu": "file:$platform_tgz"
  },
  "devDependencies": { $3 }
}
EOF
}
