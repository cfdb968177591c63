#!/usr/bin/env bash
# Runs every test of chunkwise: native unit and integration tests (with the parity checks
# against real C-Blosc2 and real libhdf5), wasm tests in Node and headless Chromium, and the
# end-to-end tests of the preview page. Installs what is missing first (scripts/setup.sh).
# Usage: scripts/test.sh [--native-only]
set -uo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
cd "$here"
source scripts/env.sh
log="$(mktemp -d)/test.log"
status=0

start=$SECONDS
last=$SECONDS
# Each step's heading also says how long the previous one took (the summary lists them all).
times=""
step() {
  if [ -n "${current:-}" ]; then times+="$(printf '%5ds  %s' $((SECONDS - last)) "$current")"$'\n'; fi
  last=$SECONDS; current="$*"
  echo; echo "=== $* (at $((SECONDS - start)) s)"
}
run() { # run a step, keep its output for the summary, remember failure
  "$@" 2>&1 | tee -a "$log"
  local rc=${PIPESTATUS[0]}
  if [ "$rc" -ne 0 ]; then echo "!!! failed ($rc): $*" | tee -a "$log"; status=1; fi
}

# Disk: a whole run fills about 7 GB under target/ (plus what setup installs). Say what is
# free first, so that a "No space left on device" later in a log explains itself.
echo "disk: $(df -h --output=avail "$here" | tail -1 | tr -d ' ') free where target/ is ($here)"

step "setup"
scripts/setup.sh all || { echo "setup failed"; exit 1; }

step "native tests (cargo test --workspace)"
# --no-fail-fast: a failing test binary must not keep the others from running (cargo stops
# at the first by default, and the summary would then hide what was never run).
run cargo test --workspace --no-fail-fast --color never
step "the fuzz targets compile (fuzz/: run them with scripts/fuzz.sh, not here)"
# They build against the library's API and would rot unseen: fuzzing is not part of a test
# run. With the main lockfile's versions (fuzz/Cargo.lock is not kept), so that a new
# release of a dependency cannot fail this step alone.
cp Cargo.lock fuzz/Cargo.lock
run cargo check --manifest-path fuzz/Cargo.toml --bins --color never
step "the Blosc2-only build's unit tests (cargo features: b2nd)"
run cargo test -p chunkwise --lib --no-default-features --features b2nd --color never

if [ "${1:-}" != "--native-only" ]; then
  step "wasm tests (Node and headless Chromium)"
  run scripts/test-wasm.sh
  step "npm package (scripts/build-pkg.sh)"
  run scripts/build-pkg.sh
  step "package size (gzip -9: ceilings against growth, and the targets 1 MB full, 250 KB Blosc2-only)"
  run scripts/check-size.sh
  step "end-to-end tests of the package (tests/e2e: Node, headless Chromium, the page)"
  # The debug CLI built by cargo test serves the files: a release build adds minutes and
  # nothing the end-to-end checks measure.
  export CHUNKWISE_BIN="${CARGO_TARGET_DIR:-$here/target}/debug/chunkwise"
  run bash -c "cd tests/e2e && node --test"
  step "the edge chunk service in workerd (www/worker: npm ci, npm test)"
  run bash -c "cd www/worker && npm ci --silent --no-audit --no-fund && npm test"
  step "the package's TypeScript declarations (tsc --strict: README snippets, every API)"
  run scripts/check-types.sh
  step "the packed package in fresh Vite, webpack, esbuild and Node projects"
  run scripts/test-toolchains.sh
  step "the main job (scripts/demo.sh --no-serve)"
  run scripts/demo.sh --no-serve
fi

# One closing line for the whole run, summed over cargo's and node's reports.
passed=$(grep -hoE 'test result: [a-zA-Z]+\. [0-9]+ passed' "$log" | awk '{s+=$4} END {print s+0}')
failed=$(grep -hoE '[0-9]+ failed;' "$log" | awk '{s+=$1} END {print s+0}')
npass=$(grep -hoE '^# pass [0-9]+' "$log" | awk '{s+=$3} END {print s+0}')
nfail=$(grep -hoE '^# fail [0-9]+' "$log" | awk '{s+=$3} END {print s+0}')
passed=$((passed + npass)); failed=$((failed + nfail))
# A skipped test did not run: everything it needs is installed by setup.sh, so a skip means
# a server, browser or fixture went missing, and the run must not pass as if it had tested it.
nskip=$(grep -hoE '^# skipped [0-9]+' "$log" | awk '{s+=$3} END {print s+0}')
if [ "$nskip" -ne 0 ]; then
  echo "!!! failed: $nskip test(s) skipped (see '# SKIP' above)" | tee -a "$log"
  status=1; failed=$((failed + nskip))
fi
if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then failed=1; fi
step "summary"
echo "time per step:"
printf '%s' "$times"
echo
echo "disk: target/ holds $(du -sh "${CARGO_TARGET_DIR:-$here/target}" 2>/dev/null | cut -f1); $(df -h --output=avail "$here" | tail -1 | tr -d ' ') free"
# What failed, next to the closing line: a log is often read from its end only.
if [ "$status" -ne 0 ]; then
  echo
  echo "what failed (steps, then tests; the full report is above):"
  grep -E '^!!! failed|^test .* \.\.\. FAILED$|^ *not ok |^test-wasm: .*(FAILED|stalled|never loaded)|Failed to detect test' \
    "$log" | head -40 | sed 's/^/  /'
fi
echo "$passed passed, $failed failed in $((SECONDS - start)) s"
exit $status
