#!/usr/bin/env bash
# Size of the npm package's wasm modules: the full module (pkg/web/chunkwise_bg.wasm, every
# format, shared by the web, bundler and Node builds) and the Blosc2-only one
# (pkg/b2nd/chunkwise_bg.wasm, cargo features: b2nd,caterva2), gzip -9 as a server would send
# them. Two bounds per module, in decimal units (1 MB = 1,000,000 bytes):
#   ceiling  the size the package has reached plus under 0.5%: above it the check fails, so no
#            change makes the module larger unnoticed (raise it in the change that grows the
#            module, saying what for);
#   target   the goal (full module 1 MB, reached; Blosc2-only 250 KB, not reached yet): the
#            table says how far above it a module is. Lower the ceiling as the modules shrink.
# Prints one table row per module (raw bytes, gzip -9 bytes, the bounds, and the JS glue's
# gzip size beside it, not counted) and exits 1 when a module is above its ceiling or missing.
# Run after scripts/build-pkg.sh (scripts/test.sh does).
# Usage: scripts/check-size.sh [PKG_DIR]   (default: pkg/ of this checkout)
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
pkg="${1:-$here/pkg}"

# What the features cost (gzip -9 of the module with the feature minus without it; measured
# while chunkwise itself was built at opt-level 3):
#   png       +40.6 KB of the full module (left out of b2nd, which it took over its ceiling);
#   caterva2  +47.4 KB of the full module (1,787,465 with, 1,740,018 without) and +49.8 KB of
#             the b2nd one (752,820 with, 703,023 without). Kept in b2nd: a Caterva2 server
#             serves Blosc2 data, so its users are that package's users; the ceiling below
#             includes it.
# Measured sizes behind the ceilings (scripts/build-pkg.sh: wasm-pack 0.15.1, release, name
# section dropped), with chunkwise at opt-level "z" and the decoders (crates/codec) at 3
# (Cargo.toml's release profile): full 1,485,966 (4,332,492 raw), b2nd 580,043 (1,621,269
# raw). With all of chunkwise at 3 they were, on the same machine, full 1,788,484 (4,942,631
# raw) and b2nd 754,512 (1,983,325 raw); with chunkwise at "s", full 1,597,329 and b2nd 648,790.
# With regex-lite in regex's place (crates/regex-lite-shim), the full module is 1,230,025
# (3,555,070 raw), from 1,486,675 (4,336,577 raw) on the same machine; b2nd has no regex.
# b2nd without the features partition, chunk-trace and zlib-zstd-encoder (Cargo.toml; the
# package module has none of them since): scripts/wasm-size.sh on one machine, one build after
# the other, b2nd,caterva2 579,653 -> 486,730 bytes gzip -9 (1,620,383 -> 1,349,989 raw);
# the full module unchanged by that (1,486,675 -> 1,486,608). The ceiling below is 486,730
# plus 0.49%. Then the full module without zlib-zstd-encoder (no caller in the package
# encodes ZLIB or ZSTD) and both modules pruned by scripts/wasm-tools/prune.mjs (zstd-sys'
# exported libc shim, duplicate functions), on one machine, one build after the other: full
# 1,229,926 -> 1,174,490 (3,356,904 raw; the pruning alone, on the module before: about
# 1,207,000), b2nd 486,730 -> 474,852 (1,300,958 raw). The ceilings below are those plus
# under 0.5%. The closure sorts of this crate through one sort instance (src/sort.rs): full
# 1,174,933 -> 1,163,214 (3,358,593 -> 3,305,111 raw), b2nd 475,272 -> 472,117 (1,302,947 ->
# 1,285,807 raw). The ceilings below are those plus under 0.5%. The warm-up arrays
# (src/open/warm_up.rs: a tiny Zarr store, HDF5 file and .b2nd embedded, opened and read
# during the first round trip; 15-40 ms less CPU on a first preview's critical path in
# headless Chromium), on one machine, one build after the other: full 1,163,299 -> 1,168,455
# (3,304,920 -> 3,322,902 raw), b2nd 471,869 -> 474,671 (1,285,616 -> 1,291,971 raw). The
# ceilings below are those plus under 0.5%. The standard library rebuilt with the crate by
# the pinned nightly (scripts/build-pkg.sh: -Z build-std, its `optimize_for_size` feature and
# `-C panic=immediate-abort`), on one machine, one build after the other: full 1,167,100 ->
# 1,077,935 (3,318,749 -> 3,032,162 raw), b2nd 474,336 -> 431,842 (1,291,434 -> 1,159,461
# raw). Each part alone, b2nd: build-std 467,021, with optimize_for_size 455,458;
# immediate-abort alone 442,323 (full 1,095,008). Decoding as fast as before (wasm in Node,
# the fastest of 8 alternating runs per build, 4 MiB float32 chunks: LZ4 + SHUFFLE 3,084 vs
# 3,090 MB/s, ZSTD + SHUFFLE 1,536 vs 1,563). Then, one build after the other: the function
# bodies in the order of their names (scripts/wasm-tools/prune.mjs), full 1,079,208 ->
# 1,025,483, b2nd 432,873 -> 419,976 (raw sizes unchanged); the PNG chunks written by
# src/render/png.rs instead of the `png` crate's encoder (full only), 1,025,483 -> 991,533
# (3,036,723 -> 2,978,298 raw); Zarr's gzip and zlib codecs chunkwise's own (src/formats/zarr/
# codecs.rs) instead of zarrs' (flate2, with its compressors), 991,533 -> 969,867 (2,911,103
# raw). JSON read through one deserializer per type (src/cache/discovery.rs from_json), full
# 969,964 -> 967,772 (2,904,744 raw), b2nd 419,976 -> 416,642 (1,150,881 raw). Attribute
# values read back by a hand-written Deserialize (src/attrs.rs), full 967,772 -> 962,978
# (2,875,545 raw), b2nd 416,642 -> 409,463 (1,117,901 raw); the boxes of a Zarr shard's
# touched inner chunks and their one storage batch (src/formats/zarr/mod.rs `shard_boxes`,
# storage.rs `hold`; full only) 962,978 -> 966,669 (2,891,149 raw). Then, one build after
# the other: the planner's last axis by runs and fills by memset (src/selection.rs; a 1-D read
# of 300 MB of one byte: 8.5 s -> 0.39 s in Node) and the group decoder moved into the codec,
# full 968,738 -> 969,826, b2nd 411,015 -> 411,573; reads of Blosc2 chunks a group of blocks at
# a time (src/pipeline/assemble.rs), full 969,826 -> 970,882 (2,899,945 raw), b2nd 411,573 ->
# 413,145 (1,125,956 raw); the decoder kept between reads and strided runs by block, full
# 971,259 (2,900,387 raw), b2nd 413,444 (1,126,447 raw); runs on every axis and joined
# copies, full 971,505 (2,901,313 raw), b2nd 413,751 (1,126,865 raw). The ceilings below are
# under 0.5% above the sizes before the last two; the full module is under its 1 MB target.
# Then, one build after the other: chunks compressed with a dictionary decoded (crates/codec),
# full 971,505 -> 972,703, b2nd 413,751 -> 414,902; converted cache entries copied a group of
# blocks at a time, python-blosc2 carriers refused, plugin codecs UNSUPPORTED and h5py's
# complex numbers read as complex, full 973,752 (2,905,378 raw), b2nd 415,953 (1,131,422
# raw); two B-tree instances fewer (the cache usage per source summed after a sort, Caterva2's
# container listings inserted one by one), one recency order for the in-memory LRU and the
# marked backend (src/cache/lru.rs), the .b2z listing's nodes gathered in a HashMap: full
# 969,378 (2,886,806 raw), b2nd 410,076 (1,107,930 raw). The ceilings below are those plus
# under 0.5%. Then values that were read wrong: HDF5 datatype and layout messages read from
# their raw bytes (src/formats/hdf5/header.rs: integers of reduced precision, floats that are
# not IEEE 754, unfiltered partial edge chunks, attributes alike), Zarr v3 extension fields,
# CTable column kinds and paths: full 969,363 -> 975,146 (2,901,983 raw), b2nd 410,031 ->
# 410,669 (1,109,736 raw). The full ceiling below is that plus under 0.5%.
# feature set, build directory, ceiling and target for the gzipped module (bytes)
checks=(
  "default web 980000 1000000"
  "b2nd b2nd 412100 250000"
)
status=0
printf '%-10s %-28s %10s %10s %10s %10s %8s  %s\n' features module raw_bytes gzip_bytes ceiling target glue_gz verdict
for c in "${checks[@]}"; do
  read -r set dir bound target <<<"$c"
  wasm="$pkg/$dir/chunkwise_bg.wasm"
  if [ ! -f "$wasm" ]; then
    printf '%-10s %-28s %10s %10s %10s %10s %8s  %s\n' "$set" "$dir/chunkwise_bg.wasm" - - "$bound" "$target" - "MISSING (run scripts/build-pkg.sh)"
    status=1
    continue
  fi
  raw=$(stat -c %s "$wasm")
  gz=$(gzip -9 -c "$wasm" | wc -c)
  glue=$(gzip -9 -c "$pkg/$dir/chunkwise.js" | wc -c)
  verdict=ok
  if [ "$gz" -gt "$target" ]; then verdict="ok, $((gz - target)) above target"; fi
  if [ "$gz" -gt "$bound" ]; then verdict="OVER the ceiling by $((gz - bound))"; status=1; fi
  printf '%-10s %-28s %10s %10s %10s %10s %8s  %s\n' "$set" "$dir/chunkwise_bg.wasm" "$raw" "$gz" "$bound" "$target" "$glue" "$verdict"
done
[ "$status" -eq 0 ] || echo "check-size: a module is above its gzip -9 ceiling" >&2
exit $status
