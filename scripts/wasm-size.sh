#!/usr/bin/env bash
# Size of the wasm module per cargo feature set, raw and gzipped (gzip -9), as users download
# it: a release build (LTO, the package's toolchain and standard library build of
# scripts/env.sh, as the npm package) passed through wasm-bindgen --target web and pruned
# (scripts/wasm-tools/prune.mjs, as scripts/build-pkg.sh does: it orders the functions by the
# name section and writes the module without it).
# Usage: scripts/wasm-size.sh [FEATURES ...]
#   FEATURES  comma-separated feature lists built with --no-default-features, or "default"
#             (default: "default" "b2nd" "b2nd,hdf5" "b2nd,zarr")
# Prints one table row per feature set.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
source "$here/scripts/env.sh"
cd "$here"
sets=("$@")
[ ${#sets[@]} -eq 0 ] && sets=(default b2nd b2nd,hdf5 b2nd,zarr)
command -v wasm-bindgen >/dev/null || { echo "wasm-size: wasm-bindgen missing: run scripts/setup.sh wasm" >&2; exit 1; }
[ -d "$here/scripts/wasm-tools/node_modules/binaryen" ] || { echo "wasm-size: binaryen missing: run scripts/setup.sh wasm" >&2; exit 1; }
target="${CARGO_TARGET_DIR:-$here/target}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
rows=()
for set in "${sets[@]}"; do
  if [ "$set" = default ]; then flags=(); else flags=(--no-default-features --features "$set"); fi
  echo "wasm-size: building features: $set" >&2
  # The package's toolchain and standard library build (scripts/env.sh).
  RUSTUP_TOOLCHAIN="$CHUNKWISE_PKG_TOOLCHAIN" RUSTFLAGS="$CHUNKWISE_PKG_RUSTFLAGS" \
    cargo build -q --release --target wasm32-unknown-unknown --lib "${CHUNKWISE_PKG_CARGO_ARGS[@]}" "${flags[@]}"
  out="$tmp/$set"
  wasm-bindgen --target web --out-dir "$out" --out-name chunkwise \
    "$target/wasm32-unknown-unknown/release/chunkwise.wasm"
  # As scripts/build-pkg.sh does for the package (scripts/wasm-tools/prune.mjs).
  node "$here/scripts/wasm-tools/prune.mjs" "$out/chunkwise_bg.wasm" >&2
  raw=$(stat -c %s "$out/chunkwise_bg.wasm")
  gz=$(gzip -9 -c "$out/chunkwise_bg.wasm" | wc -c)
  rows+=("$(printf '%-22s %12s %12s' "$set" "$raw" "$gz")")
done
printf '%-22s %12s %12s\n' features raw_bytes gzip_bytes
printf '%s\n' "${rows[@]}"
