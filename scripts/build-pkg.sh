#!/usr/bin/env bash
# Builds the npm package `chunkwise` into pkg/:
#   pkg/web      wasm-pack --target web (browsers without a bundler, workers, workerd: init/initSync),
#                and the one copy of the full wasm module (web/chunkwise_bg.wasm, cargo
#                features: the defaults but zlib-zstd-encoder) that every target uses:
#                wasm-bindgen 0.2.130 writes the same module for web, bundler and nodejs
#                (all import "./chunkwise_bg.js" and the snippets; checked below), so only
#                the glue differs. web/bundler.js + web/chunkwise_bg.js are the bundler
#                target's glue (the module imports "./chunkwise_bg.js", so that glue must sit
#                next to it), exported as `chunkwise/bundler`.
#   pkg/node     wasm-pack --target nodejs glue (CommonJS, loads ../web/chunkwise_bg.wasm
#                synchronously and its snippets from ../web/snippets), node/index.mjs its ES
#                module face; both add a no-op `init` (default export) and `initSync`, so code
#                written for the web build runs unchanged in Node, Vitest and SSR.
#   pkg/b2nd     wasm-pack --target web, Blosc2 only: .b2nd and Caterva2 sources (cargo features:
#                --no-default-features --features b2nd,caterva2): the smaller module users pick
#                with `chunkwise/b2nd`
#   pkg/package.json   pkg-template/package.json + name/version/description from Cargo.toml,
#                      with conditional `exports` choosing among the builds
#   pkg/README.md      pkg-template/README.md;  pkg/LICENSE  the repository's LICENSE
#   pkg/stores         pkg-template/stores: the cacheStore adapters `chunkwise/stores/node-fs`
#                      and `chunkwise/stores/cache-api` (plain ES modules with .d.ts)
#   pkg/worker         pkg-template/worker: `chunkwise/worker`, the web build's classes run in
#                      a dedicated worker (index.js on the page, worker.js in the worker,
#                      both importing ../web/chunkwise.js; plain ES modules with .d.ts)
# Every entry point exports `ChunkwiseError` (src/wasm/error.js, the class of every error the
# module throws). The .d.ts files lose wasm-bindgen's `[Symbol.dispose](): void` (see below).
# The wasm modules lose their `name` custom section (function names for stack traces, about
# 14% of the module; wasm-opt is off in Cargo.toml and wasm-pack has no switch for it).
# Release builds. Idempotent: when the inputs (Rust sources, JS snippets, Cargo files,
# pkg-template/, LICENSE) have not changed since the last complete build, nothing is rebuilt
# (pass --force to rebuild anyway). --assemble-only skips the wasm-pack builds and only
# (re)writes package.json, README.md, LICENSE, stores/ and worker/ around the builds already in pkg/
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
    -h|--help) sed -n '2,34p' "$0"; exit 0 ;;
    *) echo "build-pkg: unknown argument $arg" >&2; exit 2 ;;
  esac
done

out="$here/pkg"
stamp="$out/.inputs.sha256"

# Fingerprint of everything the package is made from.
inputs_hash() {
  {
    # Every file of src and crates: Rust and JS sources, and the objects Rust embeds
    # (include_bytes!, e.g. src/open/warm_up/).
    find src crates -type f | LC_ALL=C sort
    printf '%s\n' Cargo.toml Cargo.lock LICENSE .cargo/config.toml scripts/env.sh
    find pkg-template -type f | LC_ALL=C sort
    echo scripts/build-pkg.sh
    printf '%s\n' scripts/wasm-tools/prune.mjs scripts/wasm-tools/inline-snippets.mjs scripts/wasm-tools/package-lock.json
  } | while read -r f; do sha256sum "$f"; done | sha256sum | cut -d' ' -f1
}

want="$(inputs_hash)"
builds_present() {
  for t in web b2nd; do
    [ -f "$out/$t/chunkwise.js" ] && [ -f "$out/$t/chunkwise_bg.wasm" ] || return 1
  done
  [ -f "$out/node/chunkwise.js" ] && [ -f "$out/node/index.mjs" ] && [ -f "$out/web/bundler.js" ] &&
    [ -f "$out/web/wasm-module.d.ts" ]
}
complete() {
  builds_present && [ -f "$out/package.json" ] && [ -f "$out/README.md" ] && [ -f "$out/LICENSE" ] &&
    [ -f "$out/stores/node-fs.js" ] && [ -f "$out/stores/cache-api.js" ] &&
    [ -f "$out/worker/index.js" ] && [ -f "$out/worker/worker.js" ] && [ -f "$out/worker/index.d.ts" ]
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
chunkwise_pkg_toolchain_ready ||
  { echo "build-pkg: toolchain $CHUNKWISE_PKG_TOOLCHAIN with rust-src and wasm32 missing: run scripts/setup.sh wasm" >&2; exit 1; }
# wasm-pack uses the wasm-bindgen on PATH only when its version equals the lockfile's;
# with a match, forbid it from installing anything.
wbv=$(awk '/^name = "wasm-bindgen"$/{getline; gsub(/version = |"/,""); print; exit}' Cargo.lock)
mode=normal
if wasm-bindgen --version 2>/dev/null | grep -q " $wbv\$"; then mode=no-install; fi

rm -f "$stamp"
# The modules are built by the pinned nightly of scripts/env.sh, with the standard library
# rebuilt for size (CHUNKWISE_PKG_RUSTFLAGS, CHUNKWISE_PKG_CARGO_ARGS: see there).
build() { # target dir [cargo arguments]
  local target=$1 dir=$2
  shift 2
  echo "build-pkg: wasm-pack --target $target -> pkg/$dir $* ($CHUNKWISE_PKG_TOOLCHAIN, build-std)"
  rm -rf "${out:?}/$dir"
  RUSTUP_TOOLCHAIN="$CHUNKWISE_PKG_TOOLCHAIN" RUSTFLAGS="$CHUNKWISE_PKG_RUSTFLAGS" \
    wasm-pack --log-level warn build "$here" --release --mode "$mode" --target "$target" \
    --out-dir "pkg/$dir" --out-name chunkwise --no-pack --no-gitignore -- "${CHUNKWISE_PKG_CARGO_ARGS[@]}" "$@"
}
# The full module has every default feature of Cargo.toml but `zlib-zstd-encoder`: the package
# encodes LZ4 only (the payload cache's conversion, src/cache/convert.rs), so the ZLIB and ZSTD
# arms of the encoder are code no caller reaches (33 KB of the gzipped module). The list is
# checked against Cargo.toml's defaults, so a new default feature cannot be left out unnoticed.
full_features=b2nd,hdf5,zarr,png,caterva2,partition,chunk-trace
defaults=$(sed -n 's/^default = \[\(.*\)\]$/\1/p' Cargo.toml | tr -d '" ' | tr ',' '\n' |
  grep -vx zlib-zstd-encoder | LC_ALL=C sort | paste -sd, -)
if [ "$defaults" != "$(tr ',' '\n' <<<"$full_features" | LC_ALL=C sort | paste -sd, -)" ]; then
  echo "build-pkg: the full module's features ($full_features) are not Cargo.toml's defaults less zlib-zstd-encoder ($defaults)" >&2
  exit 1
fi
full=(--no-default-features --features "$full_features")
build web web "${full[@]}"
build bundler bundler "${full[@]}"
build nodejs node "${full[@]}"
build web b2nd --no-default-features --features b2nd,caterva2
rm -rf "${out:?}/.parts"
mkdir -p "$out/.parts"

# One module for three targets: the bundler's and Node's glue move next to web's module.
for t in bundler node; do
  cmp -s "$out/web/chunkwise_bg.wasm" "$out/$t/chunkwise_bg.wasm" || {
    echo "build-pkg: the $t target's wasm differs from the web target's: it cannot share it" >&2
    exit 1
  }
  diff -r -q "$out/web/snippets" "$out/$t/snippets" >/dev/null || {
    echo "build-pkg: the $t target's snippets differ from the web target's" >&2
    exit 1
  }
done
mv "$out/bundler/chunkwise_bg.js" "$out/web/chunkwise_bg.js"
# Unreachable code out of both modules (zstd-sys' exported libc shim, duplicate functions):
# full module 1,229,926 -> about 1,207,000 bytes gzip -9, b2nd 486,730 -> 474,852 (one build, before
# and after); then the function bodies in the order of their names, which the name section
# wasm-pack leaves gives (full 1,079,208 -> 1,025,483, b2nd 432,873 -> 419,976). See
# scripts/wasm-tools/prune.mjs.
[ -d "$here/scripts/wasm-tools/node_modules/binaryen" ] ||
  { echo "build-pkg: binaryen missing: run scripts/setup.sh wasm" >&2; exit 1; }
for t in web b2nd; do node "$here/scripts/wasm-tools/prune.mjs" "$out/$t/chunkwise_bg.wasm"; done
sed 's|/\* @ts-self-types="./chunkwise.d.ts" \*/|/* @ts-self-types="./bundler.d.ts" */|' \
  "$out/bundler/chunkwise.js" > "$out/web/bundler.js"
rm -rf "${out:?}/bundler" "$out/node/chunkwise_bg.wasm" "$out/node/snippets" "$out/node/chunkwise_bg.wasm.d.ts"
# The nodejs glue reads `${__dirname}/chunkwise_bg.wasm` and requires ./snippets/...
node - "$out/node/chunkwise.js" <<'JS'
const fs = require("fs");
const file = process.argv[2];
let s = fs.readFileSync(file, "utf8");
const before = s;
s = s.replace("`${__dirname}/chunkwise_bg.wasm`", "`${__dirname}/../web/chunkwise_bg.wasm`");
// Only the require() paths: the import object's keys are the module's import names.
s = s.replace(/require\((String\.raw)?([`"'])\.\/snippets\//g, "require($1$2../web/snippets/");
if (s === before || s.includes("`${__dirname}/chunkwise_bg.wasm`")) {
  console.error("build-pkg: the nodejs glue no longer looks as expected");
  process.exit(1);
}
fs.writeFileSync(file, s);
JS
fi

# The snippet directory wasm-bindgen named (chunkwise-<hash>), holding src/wasm/error.js.
snippet_of() { # build dir
  local f
  f=$(cd "$out/$1" && find snippets -path '*/src/wasm/error.js' | head -n 1)
  [ -n "$f" ] || { echo "build-pkg: no src/wasm/error.js snippet in pkg/$1" >&2; exit 1; }
  echo "$f"
}
web_err=$(snippet_of web)

if [ "$assemble_only" = 0 ]; then
# (b2nd's snippets are inlined into its glue below, and their directory removed.)
b2nd_err=$(snippet_of b2nd)
# ChunkwiseError from every entry point: the class the module's own errors are made with.
for t in web b2nd; do
  e=$web_err; [ "$t" = b2nd ] && e=$b2nd_err
  printf '\n// The class of every error this module throws (src/wasm/error.js).\nexport { ChunkwiseError } from "./%s";\n' "$e" >> "$out/$t/chunkwise.js"
done
# free() as close() on the three handle classes, in every glue file (web, bundler, b2nd, node): the
# generated free() drops the Rust object at once, after which every call (close() included)
# threw wasm-bindgen's bare "null pointer passed to rust" Error. Now a call after free()
# throws the ChunkwiseError of a closed handle; the emptied object (a few bytes) is dropped
# when collected, as a handle dropped without either.
free_is_close='
// free() is close(): later calls throw the ChunkwiseError of a closed handle (scripts/build-pkg.sh).
for (const C of [RemoteArray, RemoteStore, RemoteTable]) {
  C.prototype.free = function free() { this.close(); };
  if (Symbol.dispose) C.prototype[Symbol.dispose] = C.prototype.free;
}'
for f in "$out/web/chunkwise.js" "$out/web/chunkwise_bg.js" "$out/b2nd/chunkwise.js" "$out/node/chunkwise.js"; do
  grep -q '^    free() {$' "$f" || { echo "build-pkg: no free() in $f (wasm-bindgen changed?)" >&2; exit 1; }
  printf '%s\n' "$free_is_close" >> "$f"
done
# SIMD128 (.cargo/config.toml): the module needs it, and no baseline module is built. An
# engine without it would fail to compile the module with a bare CompileError; init and
# initSync of the web builds first validate a 31-byte SIMD module (i8x16.splat, i8x16.popcnt:
# wasm-feature-detect's probe) and throw a ChunkwiseError with code UNSUPPORTED instead.
# An open called while init() is pending (not awaited) sends the open's first requests at
# once, while the module is still fetched and compiled, then runs when init has resolved
# (src/io/early.js: the requests it can tell from the name and options; FetchSource takes
# their answers). After init, an open is the generated one; before any init() call it rejects
# INVALID_ARGUMENT (call init first).
for t in web b2nd; do
  e=$web_err; [ "$t" = b2nd ] && e=$b2nd_err
  zarr=true; [ "$t" = b2nd ] && zarr=false
  early=$(cd "$out/$t" && find snippets -path '*/src/io/early.js' | head -n 1)
  [ -n "$early" ] || { echo "build-pkg: no src/io/early.js snippet in pkg/$t" >&2; exit 1; }
  f="$out/$t/chunkwise.js"
  grep -q '^let wasmModule, wasmInstance, wasm;$' "$f" || {
    echo "build-pkg: no 'let wasmModule, wasmInstance, wasm;' in $f (wasm-bindgen changed?)" >&2; exit 1; }
  grep -q '^export { initSync, __wbg_init as default };$' "$f" || {
    echo "build-pkg: no 'export { initSync, __wbg_init as default }' in $f (wasm-bindgen changed?)" >&2; exit 1; }
  sed -i '/^export { initSync, __wbg_init as default };$/d' "$f"
  cat >> "$f" <<JS

// WebAssembly SIMD128 is required (Chrome/Edge 91, Firefox 89, Safari 16.4, Node 16.4):
// init and initSync refuse an engine without it with a typed error.
import { ChunkwiseError as __CwError } from "./$e";
const __CW_SIMD_PROBE = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3,
  2, 1, 0, 10, 10, 1, 8, 0, 65, 0, 253, 15, 253, 98, 11]);
function __cwRequireSimd() {
  if (!WebAssembly.validate(__CW_SIMD_PROBE)) {
    throw new __CwError("chunkwise needs WebAssembly SIMD128, which this engine lacks " +
      "(Chrome/Edge 91, Firefox 89, Safari 16.4 or later have it)", "UNSUPPORTED");
  }
}
// The pending init(), while it is: opens called meanwhile wait for it (see below).
let __cwPending = null;
async function __cwInit(module_or_path) {
  __cwRequireSimd();
  const p = __wbg_init(module_or_path);
  __cwPending = p;
  p.then(() => { __cwPending = null; }, () => { if (__cwPending === p) __cwPending = null; });
  return p;
}
function __cwInitSync(module) {
  __cwRequireSimd();
  return initSync(module);
}
export { __cwInitSync as initSync, __cwInit as default };

// open() while init() is pending: the first requests now, the open once the module is ready
// (src/io/early.js openWhenReady: the signal, timeoutMs and init's failure kept meanwhile).
import { openWhenReady as __cwOpenWhenReady } from "./$early";
// Before any init() call, an open rejects with that advice rather than a bare TypeError.
for (const [C, kind] of [[RemoteArray, "array"], [RemoteStore, "store"], [RemoteTable, "table"]]) {
  const open = C.open;
  C.open = function open_(url, options) {
    if (wasm !== undefined) return open.call(C, url, options);
    if (__cwPending === null) {
      return Promise.reject(new __CwError("chunkwise's module is not initialised: call init() first " +
        "(an open may start while its promise is pending)", "INVALID_ARGUMENT"));
    }
    return __cwOpenWhenReady(__cwPending, (o) => open.call(C, url, o), url, options, kind, $zarr,
      (message, code) => new __CwError(message, code));
  };
}
// The other functions, called before init() has resolved: a ChunkwiseError INVALID_ARGUMENT
// that says so (thrown, or the rejection of those that return a promise) rather than the
// glue's bare TypeError on its undefined \`wasm\`.
function __cwNotReady(name) {
  return new __CwError(\`chunkwise's module is not initialised: await init() before calling \${name}\`,
    "INVALID_ARGUMENT");
}
JS
  # Every exported function of the glue, and which of them return a promise (the .d.ts).
  dts="$out/$t/chunkwise.d.ts"
  [ -f "$dts" ] || { echo "build-pkg: no $dts" >&2; exit 1; }
  async_fns=" $(tr '\n' ' ' < "$dts" | grep -oP 'export function \K\w+(?=\([^;]*?\): Promise<)' | tr '\n' ' ')"
  fns=$(grep -oP '^export function \K\w+(?=\()' "$f")
  for name in decodeChunk cacheUsage; do
    grep -qx "$name" <<<"$fns" || { echo "build-pkg: no export function $name in $f (wasm-bindgen changed?)" >&2; exit 1; }
  done
  [[ "$async_fns" == *" cacheUsage "* ]] || { echo "build-pkg: cacheUsage not seen returning a Promise in $dts" >&2; exit 1; }
  for name in $fns; do
    if [[ "$async_fns" == *" $name "* ]]; then fail="return Promise.reject(__cwNotReady(\"$name\"))"; else fail="throw __cwNotReady(\"$name\")"; fi
    # An exported function declaration is a mutable binding: importers see the wrapper.
    printf '{ const f = %s; %s = function %s(...a) { if (wasm === undefined) %s; return f.apply(this, a); }; }\n' \
      "$name" "$name" "$name" "$fail" >> "$f"
  done
done
# The snippets into the two browser entries' glue (scripts/wasm-tools/inline-snippets.mjs):
# importing `chunkwise` or `chunkwise/b2nd` is then one module, not chunkwise.js and then its
# four snippets, a wave of requests less before the wasm module is asked. b2nd's snippets
# have no other reader; web's stay for the bundler's and Node's glue (chunkwise_bg.js and
# node/chunkwise.js import them).
for t in web b2nd; do node "$here/scripts/wasm-tools/inline-snippets.mjs" "$out/$t/chunkwise.js"; done
rm -rf "${out:?}/b2nd/snippets"
cat >> "$out/web/bundler.js" <<JS

// The class of every error this module throws (src/wasm/error.js).
export { ChunkwiseError } from "./$web_err";
// The module is instantiated on import: init and initSync only keep the web build's calls
// (\`await init()\`) valid here.
export default async function init() {}
export function initSync() {}
JS
printf '%s\n' "export * from \"./chunkwise.js\";" \
  "/** Does nothing: this build instantiates its module on import. */" \
  "export default function init(module_or_path?: unknown): Promise<void>;" \
  "/** Does nothing: this build instantiates its module on import. */" \
  "export function initSync(module?: unknown): void;" > "$out/web/bundler.d.ts"
# Node: the same calls as the web build, and the error class, on the CommonJS exports ...
cat >> "$out/node/chunkwise.js" <<JS

// The class of every error this module throws (src/wasm/error.js).
exports.ChunkwiseError = require("../web/$web_err").ChunkwiseError;
// The module was instantiated above: init and initSync only keep the web build's calls
// (\`await init()\`) valid in Node, Vitest and server-side rendering.
exports.initSync = function initSync() {};
exports.default = async function init() {};
Object.defineProperty(exports, "__esModule", { value: true });
JS
# ... and as an ES module whose default export is that init (Node gives an ES importer a
# CommonJS module's whole exports object as its default).
cat > "$out/node/index.mjs" <<'JS'
// ES module face of the CommonJS Node build (./chunkwise.js): the same instance, its named
// exports, and its no-op init as the default export (`import init from "chunkwise"`).
import cw from "./chunkwise.js";
export * from "./chunkwise.js";
export default cw.default;
JS

# Declarations. wasm-bindgen declares `[Symbol.dispose](): void` on every class; TypeScript
# knows Symbol.dispose only with lib esnext.disposable (TS >= 5.2), so a consumer on lib
# es2020 fails to compile the package. The method stays at run time where the engine has
# Symbol.dispose (the glue guards it); the declaration goes, and `close()` is the documented
# way to release a handle.
for f in "$out/web/chunkwise.d.ts" "$out/b2nd/chunkwise.d.ts" "$out/node/chunkwise.d.ts"; do
  grep -q '^    \[Symbol.dispose\](): void;$' "$f" || { echo "build-pkg: no Symbol.dispose in $f (wasm-bindgen changed?)" >&2; exit 1; }
  sed -i '/^    \[Symbol.dispose\](): void;$/d' "$f"
done
cat >> "$out/node/chunkwise.d.ts" <<'TS'

/** Does nothing: Node instantiates the module when it is loaded. Lets code written for the
 *  web build (`await init()`) run unchanged. */
export default function init(module_or_path?: unknown): Promise<void>;
/** Does nothing (see init). */
export function initSync(module?: unknown): void;
TS
# `import wasm from "chunkwise/chunkwise_bg.wasm"` (workers, whose bundlers give a compiled
# module for a .wasm import) is typed by this declaration.
cat > "$out/web/wasm-module.d.ts" <<'TS'
/** The compiled module, as workerd, wrangler and Miniflare give a `.wasm` import (for initSync). */
declare const module: WebAssembly.Module;
export default module;
TS
# An ES importer under TypeScript's node16/nodenext resolution types a CommonJS .d.ts's
# default export as the whole module: index.mjs gets declarations of its own.
cp "$out/node/chunkwise.d.ts" "$out/node/index.d.mts"

# The name section (function names) out of each module.
for t in web b2nd; do
  node - "$out/$t/chunkwise_bg.wasm" <<'JS'
const fs = require("fs");
const file = process.argv[2];
const b = fs.readFileSync(file);
if (b.readUInt32LE(0) !== 0x6d736100) throw new Error(`${file}: not a wasm module`);
const keep = [b.subarray(0, 8)];
let p = 8;
const leb = () => { let r = 0, shift = 0, x; do { x = b[p++]; r += (x & 0x7f) * 2 ** shift; shift += 7; } while (x & 0x80); return r; };
while (p < b.length) {
  const start = p;
  const id = b[p++];
  const len = leb();
  const body = p;
  let name = null;
  if (id === 0) { const n = leb(); name = b.subarray(p, p + n).toString("utf8"); }
  p = body + len;
  if (name !== "name") keep.push(b.subarray(start, p));
}
fs.writeFileSync(file, Buffer.concat(keep));
new WebAssembly.Module(fs.readFileSync(file)); // still a valid module
JS
done
fi

# Each target directory says how its .js is to be loaded (the node glue is CommonJS).
# bundler.js instantiates the module on import: the one file with a side effect.
echo '{ "type": "module", "sideEffects": ["./bundler.js"] }' > "$out/web/package.json"
echo '{ "type": "module" }' > "$out/b2nd/package.json"
# The glue require()s its JS snippets (../web/snippets, ES modules): Node (>= 20.19) loads
# them so because web/package.json says "module"; as CommonJS they are a SyntaxError.
echo '{ "type": "commonjs", "main": "./chunkwise.js", "types": "./chunkwise.d.ts" }' > "$out/node/package.json"

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
rm -rf "${out:?}/worker"
cp -R pkg-template/worker "$out/worker"
cp LICENSE "$out/LICENSE"

complete || { echo "build-pkg: incomplete output in pkg/" >&2; exit 1; }
# The stamp vouches for builds made from these inputs: an assembly alone does not refresh it.
[ "$assemble_only" = 1 ] || echo "$want" > "$stamp"
for t in web b2nd; do
  printf 'build-pkg: pkg/%-5s %s bytes of wasm (%s gzipped)\n' "$t" "$(stat -c %s "$out/$t/chunkwise_bg.wasm")" \
    "$(gzip -9 -c "$out/$t/chunkwise_bg.wasm" | wc -c)"
done
