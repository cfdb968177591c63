#!/usr/bin/env bash
# Peak memory (maximum resident set size, /usr/bin/time -v) and wall time of `chunkwise read`
# over the loopback range server:
# - a 64 MiB float64 array (4096 x 2048, 512 x 512 chunks) as .b2nd, HDF5 and Zarr v3: the
#   whole array, a 512 x 512 window that touches 4 chunks, and (HDF5, Zarr) the whole array
#   again from a warm DISK cache, whose chunks are kept converted to Blosc2;
# - a 2048 x 2048 uint8 .b2nd in 16,384 chunks of 16 x 16, read whole: the cost per chunk.
# Prints one table row per binary and case, so two builds compare side by side:
#   scripts/bench-read.sh [CHUNKWISE_BINARY ...]   (default: target/release/chunkwise)
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
cd "$here"
source scripts/env.sh
bins=("$@")
if [ ${#bins[@]} -eq 0 ]; then
  cargo build --release -q -p native-harness --bin chunkwise
  bins=("${CARGO_TARGET_DIR:-$here/target}/release/chunkwise")
fi
dir="${CARGO_TARGET_DIR:-$here/target}/bench-read"
"$CHUNKWISE_VENV/bin/python" scripts/bench_read_fixtures.py "$dir"
port=$("$CHUNKWISE_VENV/bin/python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"${bins[0]}" serve --root "$dir" --port "$port" --quiet &
server=$!
trap 'kill "$server" 2>/dev/null || true' EXIT
for _ in $(seq 50); do
  curl -sf -o /dev/null "http://127.0.0.1:$port/window.npy" && break
  sleep 0.1
done
base="http://127.0.0.1:$port"
printf '%-28s %-7s %-12s %12s %10s %9s\n' binary format read peak_MiB requests wall_s
# One measured run: prints a table row. Arguments: binary, format label, case label, then
# the arguments of `chunkwise read`.
measure() {
  local bin=$1 fmt=$2 case=$3
  shift 3
  local log out rss_kb wall requests
  log=$(mktemp)
  out=$(/usr/bin/time -v -o "$log" "$bin" read "$@")
  rss_kb=$(awk -F: '/Maximum resident set size/ {gsub(/ /,"",$2); print $2}' "$log")
  wall=$(awk '/Elapsed \(wall clock\)/ {print $NF}' "$log")
  requests=$(echo "$out" | sed -E 's/.*"requests":([0-9]+).*/\1/')
  printf '%-28s %-7s %-12s %12.1f %10s %9s\n' "$(basename "$(dirname "$bin")")/$(basename "$bin")" \
    "$fmt" "$case" "$(awk -v k="$rss_kb" 'BEGIN {print k / 1024}')" "$requests" "$wall"
  rm -f "$log"
}
window="1000:1512, 700:1212"
for bin in "${bins[@]}"; do
  for fmt in b2nd h5 zarr; do
    src="$base/big.$fmt"
    args=()
    [ "$fmt" = h5 ] && args=(--path /data)
    measure "$bin" "$fmt" whole "$src" "${args[@]}"
    measure "$bin" "$fmt" window "$src" "${args[@]}" --select "$window"
    if [ "$fmt" != b2nd ]; then
      cache=$(mktemp -d)
      "$bin" read "$src" "${args[@]}" --cache disk --cache-dir "$cache" > /dev/null
      measure "$bin" "$fmt" "whole, warm" "$src" "${args[@]}" --cache disk --cache-dir "$cache"
      rm -rf "$cache"
    fi
  done
  measure "$bin" b2nd "16k chunks" "$base/many.b2nd"
done
