#!/usr/bin/env bash
# Runs the wasm-bindgen test suites against the loopback range server, in Node, in headless
# Chromium and in a dedicated worker.
#
# Usage: scripts/test-wasm.sh [TEST ...]
#   TEST     names of files tests/<TEST>.rs (default: every tests/wasm_*.rs)
# Environment:
#   WASM_MODES        modes to run, any of "node browser worker" (default: all three)
#   WASM_FEATURES     cargo features for the test build (default: conformance)
#   WASM_RUN_TIMEOUT  seconds allowed per mode (default: 900)
#
# Two servers are started on free ports of 127.0.0.1, both serving tests/fixtures:
#   CHUNKWISE_TEST_BASE_URL               ranges honoured
#   CHUNKWISE_TEST_IGNORE_RANGE_BASE_URL  Range ignored (always 200 with the whole body)
# The URLs are compiled into the tests (option_env!); the servers are stopped on exit.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
source "$here/scripts/env.sh"
cd "$here"

modes="${WASM_MODES:-node browser worker}"
features="${WASM_FEATURES:-conformance}"
run_timeout="${WASM_RUN_TIMEOUT:-900}"

if [ $# -gt 0 ]; then
  tests=("$@")
else
  tests=()
  for f in tests/wasm_*.rs; do tests+=("$(basename "$f" .rs)"); done
fi
test_args=()
for t in "${tests[@]}"; do test_args+=(--test "$t"); done

command -v wasm-bindgen-test-runner >/dev/null || {
  echo "test-wasm: wasm-bindgen-test-runner missing: run scripts/setup.sh wasm" >&2; exit 1; }

echo "test-wasm: building the range server"
cargo build -q -p native-harness --bin range-server
server_bin="$here/target/debug/range-server"

tmp="$(mktemp -d)"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

# start_server NAME ARGS...: starts a server (stopped by PID on exit, and after one hour at
# most) and prints its base URL once its ready line appears.
start_server() {
  local name="$1"; shift
  timeout 3600 "$server_bin" --root "$here/tests/fixtures" --port 0 --quiet "$@" \
    >"$tmp/$name.out" 2>"$tmp/$name.err" &
  pids+=($!)
  local i url=""
  for i in $(seq 1 100); do
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
start_server plain >"$tmp/plain.url"
start_server ignore-range --ignore-range >"$tmp/ignore.url"
export CHUNKWISE_TEST_BASE_URL="$(cat "$tmp/plain.url")"
export CHUNKWISE_TEST_IGNORE_RANGE_BASE_URL="$(cat "$tmp/ignore.url")"
echo "test-wasm: servers at $CHUNKWISE_TEST_BASE_URL and $CHUNKWISE_TEST_IGNORE_RANGE_BASE_URL"

export CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner
export CHROMEDRIVER="${CHROMEDRIVER:-/usr/bin/chromedriver}"
status=0
for mode in $modes; do
  unset WASM_BINDGEN_USE_BROWSER WASM_BINDGEN_USE_DEDICATED_WORKER
  case "$mode" in
    node) ;;
    browser) export WASM_BINDGEN_USE_BROWSER=1 ;;
    worker) export WASM_BINDGEN_USE_DEDICATED_WORKER=1 ;;
    *) echo "test-wasm: unknown mode $mode" >&2; exit 2 ;;
  esac
  echo "test-wasm: === $mode: ${tests[*]}"
  if ! timeout "$run_timeout" cargo test --target wasm32-unknown-unknown \
      --features "$features" "${test_args[@]}"; then
    echo "test-wasm: $mode FAILED" >&2
    status=1
  fi
done
exit $status
