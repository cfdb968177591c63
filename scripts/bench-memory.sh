#!/usr/bin/env bash
# Peak memory (maximum resident set size, /usr/bin/time -v) of `chunkwise read` over the
# loopback range server, for a 64 MiB float64 array (4096 x 2048, 512 x 512 chunks) as
# .b2nd, HDF5 and Zarr v3: the whole array, and a 512 x 512 window that touches 4 chunks.
# Prints one table row per binary and case, so two builds compare side by side:
#   scripts/bench-memory.sh [CHUNKWISE_BINARY ...]   (default: target/release/chunkwise)
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
cd "$here"
source scripts/env.sh
bins=("$@")
if [ ${#bins[@]} -eq 0 ]; then
  cargo build --release -q -p native-harness --bin chunkwise
  bins=("${CARGO_TARGET_DIR:-$here/target}/release/chunkwise")
fi
dir="${CARGO_TARGET_DIR:-$here/target}/bench-memory"
"$CHUNKWISE_VENV/bin/python" scripts/bench_memory_fixtures.py "$dir"
port=$("$CHUNKWISE_VENV/bin/python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"${bins[0]}" serve --root "$dir" --port "$port" --quiet &
server=$!
trap 'kill "$server" 2>/dev/null || true' EXIT
for _ in $(seq 50); do
  curl -sf -o /dev/null "http://127.0.0.1:$port/window.npy" && break
  sleep 0.1
done
base="http://127.0.0.1:$port"
printf '%-40s %-7s %-8s %12s %10s %9s\n' binary format read peak_MiB requests wall_s
for bin in "${bins[@]}"; do
  for fmt in b2nd h5 zarr; do
    src="$base/big.$fmt"
    args=()
    [ "$fmt" = h5 ] && args=(--path /data)
    for sel in whole window; do
      select=""
      [ "$sel" = window ] && select="1000:1512, 700:1212"
      log=$(mktemp)
      out=$(/usr/bin/time -v -o "$log" "$bin" read "$src" "${args[@]}" --select "$select")
      rss_kb=$(awk -F: '/Maximum resident set size/ {gsub(/ /,"",$2); print $2}' "$log")
      wall=$(awk '/Elapsed \(wall clock\)/ {print $NF}' "$log")
      requests=$(echo "$out" | sed -E 's/.*"requests":([0-9]+).*/\1/')
      printf '%-40s %-7s %-8s %12.1f %10s %9s\n' "$(basename "$(dirname "$bin")")/$(basename "$bin")" \
        "$fmt" "$sel" "$(awk -v k="$rss_kb" 'BEGIN {print k / 1024}')" "$requests" "$wall"
      rm -f "$log"
    done
  done
done
