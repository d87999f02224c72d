#!/usr/bin/env bash
# Starts a throwaway PostgreSQL server for the test suite on 127.0.0.1 and prints its URL.
#   scripts/postgres-server.sh start DIR [PORT]   initdb into DIR (if empty), start, print the URL
#   scripts/postgres-server.sh stop DIR           stop the server started in DIR
# Installs the distribution's `postgresql` package when no server binaries are found (CI machines).
set -euo pipefail
cmd=${1:?start|stop}
dir=${2:?data directory}
port=${3:-55432}

bin_dir() {
  local d
  for d in /usr/lib/postgresql/*/bin; do
    [ -x "$d/initdb" ] && { echo "$d"; return 0; }
  done
  command -v initdb >/dev/null 2>&1 && { dirname "$(command -v initdb)"; return 0; }
  return 1
}

as_owner() {
  # PostgreSQL refuses to run as root: run its tools as the `postgres` system user then.
  if [ "$(id -u)" = 0 ]; then su postgres -s /bin/bash -c "$(printf '%q ' "$@")"; else "$@"; fi
}

case "$cmd" in
start)
  if ! BIN=$(bin_dir); then
    echo "postgres-server: installing the distribution's postgresql package" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2 && apt-get install -y -qq postgresql >&2
    BIN=$(bin_dir) || { echo "postgres-server: no PostgreSQL server binaries after install" >&2; exit 1; }
  fi
  mkdir -p "$dir"
  if [ "$(id -u)" = 0 ]; then
    chown postgres "$dir"
    chmod o+x "$(dirname "$dir")" # the server's user must reach its data folder
  fi
  chmod 700 "$dir"
  if [ ! -f "$dir/PG_VERSION" ]; then
    # TCP logins need the password (so the suite can test a failed login); the socket is trusted.
    pwfile=$(mktemp)
    echo prism >"$pwfile"
    chmod 644 "$pwfile"
    as_owner "$BIN/initdb" -D "$dir" -U prism --pwfile="$pwfile" --auth-local=trust --auth-host=scram-sha-256 \
      -E UTF8 --no-sync >"$dir/../initdb.log" 2>&1 || { cat "$dir/../initdb.log" >&2; exit 1; }
    rm -f "$pwfile"
  fi
  as_owner "$BIN/pg_ctl" -D "$dir" -l "$dir/server.log" -w -t 60 \
    -o "-h 127.0.0.1 -p $port -k $dir -c fsync=off -c max_connections=300 -c shared_buffers=64MB" start >&2 ||
    { cat "$dir/server.log" >&2; exit 1; }
  echo "postgres://prism:prism@127.0.0.1:$port/postgres"
  ;;
stop)
  BIN=$(bin_dir) || exit 0
  [ -f "$dir/postmaster.pid" ] && as_owner "$BIN/pg_ctl" -D "$dir" -m fast -w stop >&2 || true
  ;;
*) echo "usage: $0 start|stop DIR [PORT]" >&2; exit 2 ;;
esac
