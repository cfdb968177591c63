#!/usr/bin/env bash
# The main job: build chunkwise, serve the repository on 127.0.0.1, open the bundled HDF5 sample
# (groups, attributes, dimension scales) in headless Chromium through the viewer page (www/),
# print what was read and what it cost, then keep serving so the page can be opened in a browser.
#
# Usage: scripts/demo.sh [--port P] [--no-serve]
#   --port P      port to serve on (default 8000; a free port is used if P is taken)
#   --no-serve    stop after the preview (also when CI=true)
# Installs what is missing first (scripts/setup.sh), builds the CLI (release) and the npm
# package (scripts/build-pkg.sh); both builds are skipped by cargo / build-pkg when up to date.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
cd "$here"
source scripts/env.sh

port=8000
serve=1
[ "${CI:-}" = "true" ] && serve=0
while [ $# -gt 0 ]; do
  case "$1" in
    --port) port="${2:?--port needs a number}"; shift 2 ;;
    --port=*) port="${1#--port=}"; shift ;;
    --no-serve) serve=0; shift ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    *) echo "demo: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
case "$port" in ''|*[!0-9]*) echo "demo: --port needs a number" >&2; exit 2 ;; esac

say() { printf '\n== %s\n' "$*"; }

say "setup (installs only what is missing)"
scripts/setup.sh browser

if [ -n "${CHUNKWISE_BIN:-}" ]; then
  cli="$CHUNKWISE_BIN"   # an already built CLI (the test script passes its debug build)
else
  say "native CLI: cargo build --release -p native-harness"
  cargo build --release -p native-harness --color never
  target_dir="${CARGO_TARGET_DIR:-target}"
  case "$target_dir" in /*) ;; *) target_dir="$here/$target_dir" ;; esac
  cli="$target_dir/release/chunkwise"
fi

say "npm package: scripts/build-pkg.sh"
scripts/build-pkg.sh

tmp="$(mktemp -d)"
server_pid=""
tail_pid=""
cleanup() {
  [ -n "$tail_pid" ] && kill "$tail_pid" 2>/dev/null || true
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

port_taken() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# Starts the server on $1 (0: any free port); sets server_pid and base, or returns 1.
start_server() {
  : > "$tmp/serve.out"; : > "$tmp/serve.log"
  "$cli" serve --root "$here" --port "$1" >"$tmp/serve.out" 2>"$tmp/serve.log" &
  server_pid=$!
  for _ in $(seq 1 200); do
    base=$(sed -n 's/^serving .* at \(http:[^ ]*\)$/\1/p' "$tmp/serve.out")
    [ -n "$base" ] && return 0
    kill -0 "$server_pid" 2>/dev/null || { wait "$server_pid" 2>/dev/null || true; server_pid=""; return 1; }
    sleep 0.1
  done
  echo "demo: the server printed no URL in 20 s" >&2
  return 1
}

say "serving $here on 127.0.0.1"
if port_taken "$port"; then
  echo "port $port is taken: using a free port"
  port=0
fi
if ! start_server "$port"; then
  [ "$port" != 0 ] || { cat "$tmp/serve.log" >&2; exit 1; }
  echo "could not serve on port $port: using a free port"
  start_server 0 || { cat "$tmp/serve.log" >&2; exit 1; }
fi
echo "server pid $server_pid at $base"

sample="${base}tests/fixtures/sample/sample.h5"
page="${base}www/?url=${sample}&path=/surface/temperature"

say "preview in headless Chromium"
node tests/e2e/preview.mjs "$page"

if [ "$serve" = 0 ]; then
  say "done (--no-serve): stopping the server"
  exit 0
fi

say "serving (request log below)"
echo "Open ${page} in a browser; Ctrl-C to stop"
tail -n 0 -f "$tmp/serve.log" &
tail_pid=$!
wait "$server_pid"
