# Shared environment for chunkwise scripts (sourced, not run).
export CHUNKWISE_VENV="${CHUNKWISE_VENV:-$HOME/.cache/chunkwise/venv}"
export PATH="$HOME/.cargo/bin:$PATH"
export CHROMEDRIVER="${CHROMEDRIVER:-/usr/bin/chromedriver}"
# The toolchain that builds the npm package's wasm modules (scripts/build-pkg.sh, and
# scripts/wasm-size.sh the same way): a pinned nightly, for its rebuild of the standard library
# with the crate (-Z build-std) instead of linking the prebuilt one, with
#   - `optimize_for_size`: the standard library's own size-over-speed choices (smaller sorts,
#     formatting, searching), where the prebuilt one is optimised for speed;
#   - `-C panic=immediate-abort`: a panic is a trap (`RuntimeError: unreachable`) without the
#     formatting and location strings of a panic message. Bad input is a typed error, never a
#     panic, so a panic is a bug either way, and in either build the instance cannot go on
#     after it; what is lost is the message (the native CLI and the wasm test builds, made by
#     the stable toolchain, keep it).
# What each part saves is measured in scripts/check-size.sh. Installed by scripts/setup.sh
# wasm (minimal profile, rust-src). Everything else builds with the stable toolchain.
# RUSTFLAGS replaces .cargo/config.toml's rustflags (cargo's rule), so SIMD128 is named here too.
export CHUNKWISE_PKG_TOOLCHAIN="${CHUNKWISE_PKG_TOOLCHAIN:-nightly-2026-05-20}"
CHUNKWISE_PKG_RUSTFLAGS="-C target-feature=+simd128 -Zunstable-options -Cpanic=immediate-abort"
CHUNKWISE_PKG_CARGO_ARGS=(-Zbuild-std=std,panic_abort -Zbuild-std-features=optimize_for_size)
# True when the package's toolchain has what the build needs (rust-src, the wasm32 target).
chunkwise_pkg_toolchain_ready() {
  rustup "+$CHUNKWISE_PKG_TOOLCHAIN" component list --installed 2>/dev/null | grep -q '^rust-src' &&
    rustup "+$CHUNKWISE_PKG_TOOLCHAIN" target list --installed 2>/dev/null | grep -q '^wasm32-unknown-unknown$'
}
