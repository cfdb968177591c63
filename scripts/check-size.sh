#!/usr/bin/env bash
# Size of the npm package's wasm modules against their bounds: the full module
# (pkg/web/chunkwise_bg.wasm, every format, shared by the web, bundler and Node builds) and the
# Blosc2-only one (pkg/b2nd/chunkwise_bg.wasm, cargo features: b2nd), gzip -9 as a server
# would send them. Bounds in decimal units: 1 MB = 1,000,000 bytes, 250 KB = 250,000 bytes.
# Prints one table row per module (raw bytes, gzip -9 bytes, the bound, and the JS glue's
# gzip size beside it, not counted against the bound) and exits 1 when a module is above its
# bound or missing. Run after scripts/build-pkg.sh (scripts/test.sh does).
# Usage: scripts/check-size.sh [PKG_DIR]   (default: pkg/ of this checkout)
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
pkg="${1:-$here/pkg}"

# feature set, build directory, bound on the gzipped module (bytes)
checks=(
  "default web 1000000"
  "b2nd b2nd 250000"
)
status=0
printf '%-10s %-28s %10s %10s %10s %8s  %s\n' features module raw_bytes gzip_bytes bound glue_gz verdict
for c in "${checks[@]}"; do
  read -r set dir bound <<<"$c"
  wasm="$pkg/$dir/chunkwise_bg.wasm"
  if [ ! -f "$wasm" ]; then
    printf '%-10s %-28s %10s %10s %10s %8s  %s\n' "$set" "$dir/chunkwise_bg.wasm" - - "$bound" - "MISSING (run scripts/build-pkg.sh)"
    status=1
    continue
  fi
  raw=$(stat -c %s "$wasm")
  gz=$(gzip -9 -c "$wasm" | wc -c)
  glue=$(gzip -9 -c "$pkg/$dir/chunkwise.js" | wc -c)
  verdict=ok
  if [ "$gz" -gt "$bound" ]; then verdict="OVER by $((gz - bound))"; status=1; fi
  printf '%-10s %-28s %10s %10s %10s %8s  %s\n' "$set" "$dir/chunkwise_bg.wasm" "$raw" "$gz" "$bound" "$glue" "$verdict"
done
[ "$status" -eq 0 ] || echo "check-size: a module is above its gzip -9 bound" >&2
exit $status
