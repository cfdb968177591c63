#!/usr/bin/env bash
# Builds the npm package `chunkwise` into pkg/:
#   pkg/web      wasm-pack --target web      (browsers without a bundler, workers, workerd: init/initSync)
#   pkg/bundler  wasm-pack --target bundler  (webpack, Vite, ... importing the .wasm as a module)
#   pkg/node     wasm-pack --target nodejs   (Node >= 20, CommonJS, loads the .wasm synchronously)
#   pkg/b2nd     wasm-pack --target web, Blosc2 .b2nd only (cargo features: --no-default-features
#                --features b2nd): the smaller module users pick with `chunkwise/b2nd`
#   pkg/package.json   pkg-template/package.json + name/version/description from Cargo.toml,
#                      with conditional `exports` choosing among the three
#   pkg/README.md      pkg-template/README.md
#   pkg/stores         pkg-template/stores: the cacheStore adapters `chunkwise/stores/node-fs`
#                      and `chunkwise/stores/cache-api` (plain ES modules with .d.ts)
# Release builds; wasm-opt is off in Cargo.toml. Idempotent: when the inputs (Rust sources,
# Cargo files, pkg-template/) have not changed since the last complete build, nothing is rebuilt
# (pass --force to rebuild anyway). --assemble-only skips the wasm-pack builds and only
# (re)writes package.json, README.md, LICENSE and stores/ around the builds already in pkg/
# (for changes to pkg-template/ alone; the builds must exist).
# Usage: scripts/build-pkg.sh [--force | --assemble-only]
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
source "$here/scripts/env.sh"
cd "$here"

force=0
assemble_only=0
for arg in "$@"; do
  case "$arg" in
    --force) force=1 ;;
    --assemble-only) assemble_only=1 ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) echo "build-pkg: unknown argument $arg" >&2; exit 2 ;;
  esac
done

out="$here/pkg"
stamp="$out/.inputs.sha256"

# Fingerprint of everything the package is made from.
inputs_hash() {
  {
    find src -type f -name '*.rs' | LC_ALL=C sort
    printf '%s\n' Cargo.toml Cargo.lock
    find pkg-template -type f | LC_ALL=C sort
    echo scripts/build-pkg.sh
  } | while read -r f; do sha256sum "$f"; done | sha256sum | cut -d' ' -f1
}

want="$(inputs_hash)"
builds_present() {
  for t in web bundler node b2nd; do
    [ -f "$out/$t/chunkwise.js" ] && [ -f "$out/$t/chunkwise_bg.wasm" ] || return 1
  done
}
complete() {
  builds_present && [ -f "$out/package.json" ] && [ -f "$out/README.md" ] &&
    [ -f "$out/stores/node-fs.js" ] && [ -f "$out/stores/cache-api.js" ]
}
if [ "$assemble_only" = 1 ]; then
  builds_present || { echo "build-pkg: --assemble-only needs the builds in pkg/ (run without it first)" >&2; exit 1; }
elif [ "$force" = 0 ] && complete && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
  echo "build-pkg: pkg/ is up to date"
  exit 0
fi

# The wasm-pack builds (skipped by --assemble-only).
if [ "$assemble_only" = 0 ]; then
command -v wasm-pack >/dev/null || { echo "build-pkg: wasm-pack missing: run scripts/setup.sh wasm" >&2; exit 1; }
# wasm-pack uses the wasm-bindgen on PATH only when its version equals the lockfile's;
# with a match, forbid it from installing anything.
wbv=$(awk '/^name = "wasm-bindgen"$/{getline; gsub(/version = |"/,""); print; exit}' Cargo.lock)
mode=normal
if wasm-bindgen --version 2>/dev/null | grep -q " $wbv\$"; then mode=no-install; fi

rm -f "$stamp"
build() { # target dir [cargo arguments]
  local target=$1 dir=$2
  shift 2
  echo "build-pkg: wasm-pack --target $target -> pkg/$dir $*"
  rm -rf "${out:?}/$dir"
  wasm-pack --log-level warn build "$here" --release --mode "$mode" --target "$target" \
    --out-dir "pkg/$dir" --out-name chunkwise --no-pack --no-gitignore -- "$@"
}
build web web
build bundler bundler
build nodejs node
build web b2nd --no-default-features --features b2nd
fi

# Each target directory says how its .js is to be loaded (the node glue is CommonJS).
echo '{ "type": "module", "sideEffects": ["./chunkwise.js", "./snippets/*"] }' > "$out/bundler/package.json"
echo '{ "type": "module" }' > "$out/web/package.json"
echo '{ "type": "module" }' > "$out/b2nd/package.json"
echo '{ "type": "commonjs", "main": "./chunkwise.js", "types": "./chunkwise.d.ts" }' > "$out/node/package.json"
# The glue require()s its JS snippets (src/wasm/*.js), which are ES modules: Node (>= 20.19)
# loads them so only when their directory says so; as CommonJS they are a SyntaxError.
if [ -d "$out/node/snippets" ]; then echo '{ "type": "module" }' > "$out/node/snippets/package.json"; fi

# name, version, description, license and repository come from Cargo.toml; the rest from the template.
meta_name=chunkwise
meta_version=$(awk -F'"' '/^version = /{print $2; exit}' Cargo.toml)
meta_description=$(awk -F'"' '/^description = /{print $2; exit}' Cargo.toml)
meta_license=$(awk -F'"' '/^license = /{print $2; exit}' Cargo.toml)
if command -v jq >/dev/null; then
  jq --arg n "$meta_name" --arg v "$meta_version" --arg d "$meta_description" --arg l "$meta_license" \
    '. + {name: $n, version: $v, description: $d, license: $l}' \
    pkg-template/package.json > "$out/package.json"
else
  N="$meta_name" V="$meta_version" D="$meta_description" L="$meta_license" node -e '
    const fs = require("fs");
    const t = JSON.parse(fs.readFileSync("pkg-template/package.json", "utf8"));
    const o = Object.assign(t, { name: process.env.N, version: process.env.V,
      description: process.env.D, license: process.env.L });
    fs.writeFileSync(process.argv[1], JSON.stringify(o, null, 2) + "\n");' "$out/package.json"
fi
cp pkg-template/README.md "$out/README.md"
rm -rf "${out:?}/stores"
cp -R pkg-template/stores "$out/stores"
[ -f LICENSE ] && cp LICENSE "$out/LICENSE"

complete || { echo "build-pkg: incomplete output in pkg/" >&2; exit 1; }
# The stamp vouches for builds made from these inputs: an assembly alone does not refresh it.
[ "$assemble_only" = 1 ] || echo "$want" > "$stamp"
for t in web bundler node b2nd; do
  printf 'build-pkg: pkg/%-8s %s bytes of wasm\n' "$t" "$(stat -c %s "$out/$t/chunkwise_bg.wasm")"
done
