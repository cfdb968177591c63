// wasm32 side of codec-candidates (see src/main.rs): the same decoders, cases and table, in a
// bare wasm module (no wasm-bindgen: exports cc_alloc and cc_decode, no imports).
// Usage: node bench.mjs MODULE.wasm CASE.streams...
import fs from "node:fs";
import path from "node:path";
const [wasmPath, ...cases] = process.argv.slice(2);
const { instance } = await WebAssembly.instantiate(fs.readFileSync(wasmPath), {});
const { cc_alloc, cc_decode, memory } = instance.exports;
const NAMES = ["zstd: ruzstd 0.8.3", "zstd: ruzstd 0.9.1", "zstd: C zstd 1.5.7 (zstd-sys)",
  "inflate: miniz_oxide 0.8", "inflate: zlib-rs 0.6.8"];
console.log("| case | decoder | wasm MB/s | vs first |\n|---|---|---:|---:|");
for (const file of cases) {
  const bytes = fs.readFileSync(file);
  const raw = fs.readFileSync(file.replace(".streams", ".raw"));
  const name = path.basename(file, ".streams");
  const sp = cc_alloc(bytes.length);
  const dp = cc_alloc(raw.length);
  new Uint8Array(memory.buffer, sp, bytes.length).set(bytes);
  const recs = [];
  for (let p = 0; p < bytes.length;) {
    const cl = bytes.readUInt32LE(p), dl = bytes.readUInt32LE(p + 4);
    recs.push([sp + p + 8, cl, dl]);
    p += 8 + cl;
  }
  const decs = name.startsWith("zstd") ? [0, 1, 2] : [3, 4];
  const run = (d) => {
    let o = 0;
    for (const [s, cl, dl] of recs) {
      if (cc_decode(d, s, cl, dp + o, dl) !== dl) throw new Error(`${name}: ${NAMES[d]} failed`);
      o += dl;
    }
  };
  for (const d of decs) {
    new Uint8Array(memory.buffer, dp, raw.length).fill(0);
    run(d);
    if (!Buffer.from(memory.buffer, dp, raw.length).equals(raw)) throw new Error(`${name}: ${NAMES[d]} output differs`);
    const warm = performance.now() + 300;
    while (performance.now() < warm) run(d);
  }
  // Rounds interleave the decoders (a shared machine's load hits all alike); fastest counts.
  const ROUNDS = 9;
  const perRound = Math.max(1, Math.floor((64 << 20) / raw.length / ROUNDS));
  const best = decs.map(() => 0);
  for (let r = 0; r < ROUNDS; r++) {
    decs.forEach((d, k) => {
      const t = performance.now();
      for (let i = 0; i < perRound; i++) run(d);
      best[k] = Math.max(best[k], (perRound * raw.length) / ((performance.now() - t) / 1e3) / 1e6);
    });
  }
  decs.forEach((d, k) => console.log(`| ${name} | ${NAMES[d]} | ${best[k].toFixed(0)} | ${(best[k] / best[0]).toFixed(2)} |`));
}
