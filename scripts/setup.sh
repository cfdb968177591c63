#!/usr/bin/env bash
# Installs what building and testing chunkwise needs, only where it is missing (idempotent).
# Usage: scripts/setup.sh [all|native|wasm|browser|python|node]   (default: all)
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
what="${1:-all}"
source "$here/scripts/env.sh"

need_apt=()
want_apt() { dpkg -s "$1" >/dev/null 2>&1 || need_apt+=("$1"); }

case "$what" in all|native|wasm|browser|python)
  want_apt cmake; want_apt clang; want_apt pkg-config
  # C zstd (zstd-sys) for wasm32: clang's wasm32 target compiles it, and the cc crate
  # archives wasm32 objects with the llvm-ar beside clang (package llvm).
  want_apt llvm
  want_apt libhdf5-dev; want_apt hdf5-tools
  want_apt chromium; want_apt chromium-driver
  want_apt python3-venv
  want_apt python3-h5py; want_apt python3-numpy
  if [ ${#need_apt[@]} -gt 0 ]; then
    echo "setup: apt-get install ${need_apt[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq "${need_apt[@]}" >/dev/null
  fi
;; esac

case "$what" in all|wasm|browser)
  rustup target list --installed | grep -q wasm32-unknown-unknown || rustup target add wasm32-unknown-unknown
  wbv=$(awk '/^name = "wasm-bindgen"$/{getline; gsub(/version = |"/,""); print; exit}' "$here/Cargo.lock")
  if [ -n "$wbv" ] && ! wasm-bindgen --version 2>/dev/null | grep -q " $wbv\$"; then
    echo "setup: cargo install wasm-bindgen-cli $wbv (a few minutes)"
    # no --locked: its lockfile pins a crate version the registry here lacks
    cargo install -q wasm-bindgen-cli --version "$wbv"
  fi
  # The package's toolchain (scripts/env.sh): minimal profile, the standard library's source
  # for -Z build-std, and the wasm32 target wasm-pack checks for.
  if ! chunkwise_pkg_toolchain_ready; then
    echo "setup: rustup toolchain install $CHUNKWISE_PKG_TOOLCHAIN (rust-src, wasm32)"
    rustup -q toolchain install "$CHUNKWISE_PKG_TOOLCHAIN" --profile minimal --component rust-src \
      --target wasm32-unknown-unknown
  fi
  command -v wasm-pack >/dev/null || { echo "setup: cargo install wasm-pack"; cargo install -q wasm-pack --locked; }
  # binaryen (npm), which scripts/build-pkg.sh prunes the package's modules with.
  wt="$here/scripts/wasm-tools"
  if ! cmp -s "$wt/package-lock.json" "$wt/node_modules/.chunkwise-lock"; then
    echo "setup: npm ci in scripts/wasm-tools"
    (cd "$wt" && npm ci --silent --no-audit --no-fund)
    cp "$wt/package-lock.json" "$wt/node_modules/.chunkwise-lock"
  fi
;; esac

case "$what" in all|python|native)
  if [ ! -x "$CHUNKWISE_VENV/bin/python" ] || ! cmp -s "$here/scripts/requirements.txt" "$CHUNKWISE_VENV/requirements.txt"; then
    echo "setup: python venv at $CHUNKWISE_VENV"
    python3 -m venv "$CHUNKWISE_VENV"
    "$CHUNKWISE_VENV/bin/pip" install -q --upgrade pip >/dev/null
    "$CHUNKWISE_VENV/bin/pip" install -q -r "$here/scripts/requirements.txt"
    cp "$here/scripts/requirements.txt" "$CHUNKWISE_VENV/requirements.txt"
  fi
;; esac

case "$what" in all|browser|node)
  # npm ci again when the lockfile changed since the last install (e.g. a new devDependency).
  e2e="$here/tests/e2e"
  if [ -f "$e2e/package.json" ] && ! cmp -s "$e2e/package-lock.json" "$e2e/node_modules/.chunkwise-lock"; then
    echo "setup: npm ci in tests/e2e"
    (cd "$e2e" && npm ci --silent --no-audit --no-fund)
    cp "$e2e/package-lock.json" "$e2e/node_modules/.chunkwise-lock"
  fi
  # The JavaScript HDF5 readers `chunkwise bench remote` compares with (h5wasm, jsfive).
  hjs="$here/scripts/bench-hdf5-js"
  if [ -f "$hjs/package.json" ] && ! cmp -s "$hjs/package-lock.json" "$hjs/node_modules/.chunkwise-lock"; then
    echo "setup: npm ci in scripts/bench-hdf5-js"
    (cd "$hjs" && npm ci --silent --no-audit --no-fund)
    cp "$hjs/package-lock.json" "$hjs/node_modules/.chunkwise-lock"
  fi
;; esac
echo "setup: ready ($what)"
