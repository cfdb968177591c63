#!/usr/bin/env node
// Removes code from a wasm-bindgen module that no caller can reach, with binaryen (npm
// `binaryen`, pinned in this folder's package.json; install with scripts/setup.sh wasm):
//   1. the exports `rust_zstd_wasm_shim_*`: zstd-sys' libc shim for C zstd (malloc, memcpy,
//      qsort, ...) is `#[no_mangle] extern "C"`, which rustc exports from a cdylib, so its
//      code stayed in the module although only C zstd calls it, from inside. The qsort alone
//      holds five sort instantiations (about 39 KB raw) that C zstd's decoder never calls;
//   2. binaryen's `remove-unused-module-elements` (what became unreachable) and
//      `duplicate-function-elimination` (identical function bodies, mostly generic code
//      instantiated for types of one layout, merged into one);
//   3. `reorder-functions-by-name`: the function bodies in the order of their (demangled Rust)
//      names, so the instances of one generic function (serde's visitors of every type,
//      `drop_in_place::<T>`, `Vec<T>` growth, ...) stand next to each other. Those bodies are
//      alike, and gzip and Brotli find repeats only within a window (32 KB for gzip): rustc
//      spreads them over the whole code section, the name order puts them within reach. It
//      changes no code, only the order of the bodies (wasm engines compile and run each function
//      on its own; the order has no effect on speed). Measured on one build, gzip -9: full
//      module 1,079,197 -> 1,025,472 bytes, Blosc2-only 432,873 -> 419,966; raw size unchanged.
//      It needs the name section that wasm-bindgen leaves in the module: without one (a module
//      stripped before) the step is skipped and the line printed says so.
// The module is written without its name section. Nothing else is optimised: binaryen's -O
// levels made the gzipped module larger (-Oz: b2nd 581,307 -> 615,191 bytes gzip -9;
// `merge-similar-functions` alone 9% smaller raw, 0.1% larger gzipped; after the name order it
// and `optimize-instructions`, `remove-unused-brs`, `vacuum`, `reorder-locals` each moved the
// full module by under 0.1%). The exports wasm-bindgen's glue uses are kept; the module is
// validated and compiled before it is written.
// Usage: node scripts/wasm-tools/prune.mjs IN.wasm [OUT.wasm]   (OUT defaults to IN)
// Prints one line: IN, raw bytes before -> after.
import fs from "node:fs";
import binaryen from "binaryen";

const [input, output = input] = process.argv.slice(2);
if (!input) {
  console.error("usage: prune.mjs IN.wasm [OUT.wasm]");
  process.exit(2);
}
const before = fs.readFileSync(input);
let module;
try {
  module = binaryen.readBinary(before);
} catch (e) {
  console.error(`prune: ${input}: not a wasm module binaryen can read (${e?.message ?? e}); left as it was`);
  process.exit(1);
}
// The features rustc's wasm32 target and .cargo/config.toml give the module (SIMD128, bulk
// memory, reference types, ...), and no more: with binaryen.Features.All it writes newer
// encodings (its compact import section) that engines of today refuse.
const F = binaryen.Features;
module.setFeatures(F.MVP | F.MutableGlobals | F.NontrappingFPToInt | F.SIMD128 | F.BulkMemory | F.BulkMemoryOpt |
  F.SignExt | F.ReferenceTypes | F.Multivalue);
const shim = [];
for (let i = 0; i < module.getNumExports(); i++) {
  const { name } = binaryen.getExportInfo(module.getExportByIndex(i));
  if (name.startsWith("rust_zstd_wasm_shim_")) shim.push(name);
}
for (const name of shim) module.removeExport(name);
const passes = ["remove-unused-module-elements", "duplicate-function-elimination"];
const named = hasNameSection(before);
if (named) passes.push("reorder-functions-by-name");
module.runPasses(passes);
if (!module.validate()) {
  console.error(`prune: ${input}: binaryen's output does not validate; the module is left as it was`);
  process.exit(1);
}
binaryen.setDebugInfo(false); // no name section in the output
const after = module.emitBinary();
module.dispose();
// Compiled by this Node's engine before it is written: an encoding the engine refuses fails here.
try {
  new WebAssembly.Module(after);
} catch (e) {
  console.error(`prune: ${input}: the pruned module does not compile (${e.message}); the module is left as it was`);
  process.exit(1);
}
fs.writeFileSync(output, after);
console.log(`prune: ${input}: ${before.length} -> ${after.length} bytes (${shim.length} shim exports removed, ` +
  (named ? "functions in name order)" : "no name section: functions left in their order)"));

/** True when the module has a custom section "name" (the order of step 3 reads it). */
function hasNameSection(bytes) {
  let p = 8;
  const leb = () => { let r = 0, shift = 0, x; do { x = bytes[p++]; r += (x & 0x7f) * 2 ** shift; shift += 7; } while (x & 0x80); return r; };
  while (p < bytes.length) {
    const id = bytes[p++];
    const len = leb();
    const end = p + len;
    if (id === 0) {
      const n = leb();
      if (Buffer.from(bytes.subarray(p, p + n)).toString("utf8") === "name") return true;
    }
    p = end;
  }
  return false;
}
