#!/usr/bin/env bash
# Runs every fuzz target for a bounded time each: scripts/fuzz.sh [SECONDS] [TARGET...]
# (default 60 s, all targets). Not part of .ci/run: fuzzing is open-ended by nature.
#
# Needs a nightly toolchain (`rustup toolchain install nightly --profile minimal`) and a C++
# compiler (libfuzzer-sys builds libFuzzer). Uses `cargo fuzz` when installed; otherwise
# builds the targets itself with the same coverage instrumentation and AddressSanitizer (as
# cargo fuzz does by default): the LZ4 decoder's common sequence moves bytes through raw
# pointers, and an access outside its buffers must be found, not only panics, hangs and
# runaway allocations.
# New inputs go to fuzz/target/corpus/TARGET (not committed); the committed seeds in
# fuzz/corpus/TARGET are read, never written. A crash leaves its input in
# fuzz/artifacts/TARGET/ and makes this script exit non-zero.
set -euo pipefail
cd "$(dirname "$0")/../fuzz"
secs="${1:-60}"
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(frame chunk lz4 hdf5 zarr_meta partition_manifest zip_tail)
fi
# Inputs longer than this are not generated (the seeds are all smaller).
max_len=32768
if cargo +nightly fuzz --version >/dev/null 2>&1; then
  run() { cargo +nightly fuzz run "$1" "$2" "corpus/$1" -- "${@:3}"; }
else
  export RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing -Cdebug-assertions -Coverflow-checks \
-Zsanitizer=address"
  # An explicit --target keeps the instrumentation out of build scripts and proc macros.
  host="$(rustc +nightly -vV | sed -n 's/^host: //p')"
  cargo +nightly build --release --bins --target "$host"
  run() { mkdir -p "artifacts/$1"; "target/$host/release/$1" -artifact_prefix="artifacts/$1/" "$2" "corpus/$1" "${@:3}"; }
fi
status=0
for t in "${targets[@]}"; do
  mkdir -p "target/corpus/$t"
  echo "fuzz: $t for ${secs}s"
  if ! run "$t" "target/corpus/$t" -max_total_time="$secs" -max_len="$max_len" -rss_limit_mb=2048 -timeout=10; then
    echo "fuzz: $t FAILED (input in fuzz/artifacts/$t/)"
    status=1
  fi
done
exit $status
