#!/usr/bin/env bash
# Runs the wasm-bindgen test suites against the loopback range server, in Node, in headless
# Chromium and in a dedicated worker.
#
# Usage: scripts/test-wasm.sh [FILTER]
#   FILTER   runs only the tests whose path contains it (e.g. `cache::`, `zarr`); default all.
#            The tests are one binary, tests/wasm/main.rs, with one module per subject.
# Environment:
#   WASM_MODES        modes to run, any of "node browser worker" (default: all three)
#   WASM_FEATURES     cargo features for the test build (default: conformance)
#   WASM_RUN_TIMEOUT  seconds allowed per mode (default: 900)
#
# Three servers are started on free ports of 127.0.0.1, all serving tests/fixtures:
#   CHUNKWISE_TEST_BASE_URL               ranges honoured
#   CHUNKWISE_TEST_IGNORE_RANGE_BASE_URL  Range ignored (always 200 with the whole body)
#   CHUNKWISE_TEST_FAIL_FIRST_BASE_URL    answers 503 to its first 2 GETs (restarted on the
#                                         same port before each mode, so each mode sees them)
# The URLs are compiled into the tests (option_env!); the servers are stopped on exit.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
source "$here/scripts/env.sh"
cd "$here"

modes="${WASM_MODES:-node browser worker}"
features="${WASM_FEATURES:-conformance}"
run_timeout="${WASM_RUN_TIMEOUT:-900}"

filter=()
if [ $# -gt 1 ]; then echo "test-wasm: one FILTER at most" >&2; exit 2; fi
if [ $# -eq 1 ]; then filter=(-- "$1"); fi

command -v wasm-bindgen-test-runner >/dev/null || {
  echo "test-wasm: wasm-bindgen-test-runner missing: run scripts/setup.sh wasm" >&2; exit 1; }

echo "test-wasm: building the range server"
cargo build -q -p native-harness --bin chunkwise
server_bin="${CARGO_TARGET_DIR:-$here/target}/debug/chunkwise"

tmp="$(mktemp -d)"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT
trap "exit 130" INT TERM

# start_server NAME PORT ARGS...: starts a server (stopped by PID on exit, and after one hour
# at most; PORT 0 picks a free one) and prints its base URL once its ready line appears.
start_server() {
  local name="$1" port="$2"; shift 2
  timeout 3600 "$server_bin" serve --root "$here/tests/fixtures" --port "$port" --quiet "$@" \
    >"$tmp/$name.out" 2>"$tmp/$name.err" &
  pids+=($!)
  last_pid=$!
  local i url=""
  for i in $(seq 1 100); do
    # The background shell may not have opened its output file yet (set -e ends on sed's error).
    [ -f "$tmp/$name.out" ] || { sleep 0.1; continue; }
    url="$(sed -n 's#^serving .* at \(http://127\.0\.0\.1:[0-9]*/\)$#\1#p' "$tmp/$name.out")"
    [ -n "$url" ] && break
    sleep 0.1
  done
  if [ -z "$url" ]; then
    echo "test-wasm: server $name did not start" >&2; cat "$tmp/$name.err" >&2; exit 1
  fi
  echo "$url"
}
# Not in $(...): the server must be a child of this shell for the trap to stop it.
start_server plain 0 >"$tmp/plain.url"
start_server ignore-range 0 --ignore-range >"$tmp/ignore.url"
start_server fail-first 0 --fail-first 2 >"$tmp/fail.url"
fail_pid=$last_pid
export CHUNKWISE_TEST_BASE_URL="$(cat "$tmp/plain.url")"
export CHUNKWISE_TEST_IGNORE_RANGE_BASE_URL="$(cat "$tmp/ignore.url")"
export CHUNKWISE_TEST_FAIL_FIRST_BASE_URL="$(cat "$tmp/fail.url")"
fail_port="${CHUNKWISE_TEST_FAIL_FIRST_BASE_URL##*:}"; fail_port="${fail_port%/}"
echo "test-wasm: servers at $CHUNKWISE_TEST_BASE_URL, $CHUNKWISE_TEST_IGNORE_RANGE_BASE_URL," \
  "$CHUNKWISE_TEST_FAIL_FIRST_BASE_URL"

# Restarts the fail-first server on its port, so that its first GETs fail again.
restart_fail_first() {
  kill "$fail_pid" 2>/dev/null || true
  wait "$fail_pid" 2>/dev/null || true
  local keep=() pid
  for pid in "${pids[@]}"; do [ "$pid" = "$fail_pid" ] || keep+=("$pid"); done
  pids=("${keep[@]}")
  start_server fail-first "$fail_port" --fail-first 2 >"$tmp/fail.url"
  fail_pid=$last_pid
}

export CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner

# In a browser, wasm-bindgen-test-runner serves the page, its scripts and the module with
# tiny_http 0.12, whose task pool can lose a connection: TaskPool::spawn queues the connection
# when it counts an idle thread, but that thread may already have been woken for the connection
# before. The request then waits until a pool thread is free, and every thread is held by one
# of Chromium's idle keep-alive connections, which it keeps for minutes: the page never loads,
# or the module never arrives (seen as a run hanging after "Not found" for webdriver.json).
# So the runner gets a port of ours, and a connection is opened and closed on it every
# second: its task either wakes a waiting thread, which takes the oldest queued connection
# first, or gets a new thread, which takes that connection once the empty one ends. Here, of
# runs of one short test in Chromium, 10 of 20 hung without it, 0 of 30 with it.
poker=""
start_poker() {
  local port i
  for i in $(seq 1 50); do # a free port below Linux's ephemeral range (32768-60999)
    port=$((20000 + RANDOM % 12000))
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null || break
  done
  export WASM_BINDGEN_TEST_ADDRESS="127.0.0.1:$port"
  ( while sleep 1; do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null || true; done ) &
  poker=$!
  pids+=("$poker")
}
stop_poker() {
  [ -n "$poker" ] || return 0
  kill "$poker" 2>/dev/null || true
  wait "$poker" 2>/dev/null || true
  poker=""
  unset WASM_BINDGEN_TEST_ADDRESS
}
# chromedriver makes a Chromium profile (about 95 MB) under TMPDIR per run and leaves it when
# the browser is killed: keep them in this run's scratch directory, removed on exit.
mkdir -p "$tmp/chromium"
export TMPDIR="$tmp/chromium"
export CHROMEDRIVER="${CHROMEDRIVER:-/usr/bin/chromedriver}"
# The runner gives a headless browser run 20 s by default; the one binary needs more.
export WASM_BINDGEN_TEST_TIMEOUT="${WASM_BINDGEN_TEST_TIMEOUT:-600}"
status=0
first=1
for mode in $modes; do
  [ $first = 1 ] || restart_fail_first
  first=0
  unset WASM_BINDGEN_USE_BROWSER WASM_BINDGEN_USE_DEDICATED_WORKER
  case "$mode" in
    node) ;;
    browser) export WASM_BINDGEN_USE_BROWSER=1 ;;
    worker) export WASM_BINDGEN_USE_DEDICATED_WORKER=1 ;;
    *) echo "test-wasm: unknown mode $mode" >&2; exit 2 ;;
  esac
  echo "test-wasm: === $mode${1:+: $1}"
  # A run that never printed "Loading Wasm module" tested nothing (for example the runner could
  # not bind its port), and is tried once more. A failure or a hang after the module loaded is
  # not retried.
  for try in 1 2; do
    [ "$mode" = node ] || start_poker
    # In a browser the module is already built (the node mode built it) and the 42 tests take
    # under a minute: a hung session is given 300 s, not the build's 900.
    limit=$run_timeout
    [ "$mode" = node ] || limit="${WASM_RUN_TIMEOUT:-300}"
    timeout "$limit" cargo test --no-fail-fast --target wasm32-unknown-unknown \
      --features "$features" --test wasm "${filter[@]}" 2>&1 | tee "$tmp/run.log"
    rc=${PIPESTATUS[0]}
    stop_poker
    if [ "$rc" -ne 0 ] && [ "$mode" != node ] && [ "$try" = 1 ] &&
        ! grep -q "Loading Wasm module" "$tmp/run.log"; then
      echo "test-wasm: $mode: the browser never loaded the module (exit $rc): once more" >&2
      continue
    fi
    break
  done
  if [ "$rc" -ne 0 ]; then
    echo "test-wasm: $mode FAILED" >&2
    status=1
  fi
done
exit $status
