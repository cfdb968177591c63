#!/usr/bin/env node
// Benchmarks of the wasm package in Node (pkg/node, built by scripts/build-pkg.sh), through the
// exported JS functions, printed as tables:
//   - chunk-cache simulator throughput on a 10-million-access trace (benchChunkTrace: the trace
//     is generated and replayed inside wasm, the workload of `chunkwise bench chunk-trace`), and
//     simulateChunkCache on a random trace passed in from JS (conversion included);
//   - partition of a synthetic scope of 100,000 arrays (the arrays of
//     `chunkwise bench partition`), repartition after growth + diff, and resolution of 1,000,000
//     keys with a KeyResolver.
// Memory per step: growth of process.memoryUsage() rss and heapUsed, and the size of the wasm
// linear memory after the step (it never shrinks).
// With the native CLI at hand (target/release/chunkwise in $CARGO_TARGET_DIR or ./target, or
// $CHUNKWISE_BIN) it also runs `chunkwise bench chunk-trace` and `bench partition` and prints the
// wasm/native time ratios; --no-native skips that.
//
// Usage: node scripts/bench-wasm.mjs [--accesses N] [--no-native]

import { execFileSync } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
const argValue = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 && args[i + 1] !== undefined ? args[i + 1] : dflt;
};
const ACCESSES = Number(argValue("--accesses", "10000000"));
const ARRAYS = 100_000;
const KEYS = 1_000_000;
const GIB = 2 ** 30;

const pkgNode = path.join(repo, "pkg/node/chunkwise.js");
if (!fs.existsSync(pkgNode)) {
  console.error(`bench-wasm: ${pkgNode} is missing: run scripts/build-pkg.sh`);
  process.exit(1);
}
const cw = createRequire(import.meta.url)(pkgNode);
const wasmMemory = () => cw.wasmMemoryBytes();

const fmt = new Intl.NumberFormat("en-US", { maximumFractionDigits: 1 });
const mib = (b) => fmt.format(b / 2 ** 20);

/** Runs `fn`, returning its result with wall and CPU time and memory growth. */
function measure(fn) {
  globalThis.gc?.();
  const m0 = process.memoryUsage();
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const result = fn();
  const wall = performance.now() - t0;
  const c = process.cpuUsage(c0);
  const m1 = process.memoryUsage();
  return {
    result, wall, cpu: (c.user + c.system) / 1000,
    rss: m1.rss - m0.rss, heap: m1.heapUsed - m0.heapUsed, wasm: wasmMemory(),
  };
}

function table(header, rows) {
  const out = [`| ${header.join(" | ")} |`, `|${header.map((_, i) => (i ? "---:" : "---")).join("|")}|`];
  for (const r of rows) out.push(`| ${r.join(" | ")} |`);
  return out.join("\n");
}

// ---- chunk-cache simulator --------------------------------------------------------------------

const sim = [];
let wasmRate = NaN;   // M accesses/s of benchChunkTrace
{
  const m = measure(() => cw.benchChunkTrace(ACCESSES, 42));
  const r = m.result;
  wasmRate = r.accesses / r.ms / 1000;
  sim.push([`benchChunkTrace: ${fmt.format(r.accesses)} accesses generated and replayed in wasm`,
    fmt.format(r.ms), wasmRate.toFixed(2), `hits ${r.hits}, reads ${r.reads}, evictions ${r.evictions}`,
    mib(m.rss), mib(m.wasm)]);
}
{
  const shape = [2000, 2000], chunks = [100, 100];
  const trace = cw.randomChunkTrace(shape, chunks, 1, 100_000);
  const geometry = { shape, chunk_shape: chunks, element_size: 4, filtered: true, default_stored_size: 12000 };
  const m = measure(() => cw.simulateChunkCache(geometry, trace, { nslots: 521, nbytes: 1 << 20, w0: 0.75 }));
  const t = m.result.total;
  const accesses = t.hits + t.reads + t.direct_reads;
  sim.push([`simulateChunkCache: 100,000 random selections from JS (${fmt.format(accesses)} accesses)`,
    fmt.format(m.wall), (accesses / m.wall / 1000).toFixed(2), `reads ${t.reads}, hits ${t.hits}`,
    mib(m.rss), mib(m.wasm)]);
}

// ---- partition --------------------------------------------------------------------------------

/** The synthetic scope of `chunkwise bench partition`: `g<i/100>/v<i>`, one array in ten of
 *  150 GiB (bucketed), the rest 1 GiB, one coordinate per thousand, key encodings rotating. */
function syntheticArrays(n) {
  const enc = ["v3_slash", "v2_slash", "v2_flat"];
  const out = new Array(n);
  for (let i = 0; i < n; i++) {
    out[i] = {
      path: `g${Math.floor(i / 100)}/v${i}`, shape: [100_000, 412, 424], chunks: [128, 412, 424],
      itemsize: 4, stored_bytes: i % 10 === 0 ? 150 * GIB : GIB, is_coordinate: i % 1000 === 1,
      key_encoding: enc[i % 3],
    };
  }
  return out;
}

const part = [];
const step = (name, m, note) => part.push([name, fmt.format(m.wall), fmt.format(m.cpu),
  mib(m.rss), mib(m.heap), mib(m.wasm), note]);

const built = measure(() => syntheticArrays(ARRAYS));
const arrays = built.result;
step("build 100,000 array objects (JS)", built, "");

const first = measure(() => cw.partition(arrays, { scope: "bench/scope", generated_at: "2026-12-01T00:00:00+00:00" }));
const manifest = first.result.manifest;
step("partition (fresh)", first, `${manifest.blobs.length} blobs, ${manifest.hot_always.length} hot patterns`);
// The first call grows the wasm memory from nothing, and each growth can start a full JS garbage
// collection over everything alive; a second call reuses the grown memory.
const warm = measure(() => cw.partition(arrays, { scope: "bench/scope", generated_at: "2026-12-01T00:00:00+00:00" }));
step("partition (fresh) again, wasm memory grown", warm, `${warm.result.manifest.blobs.length} blobs`);

const grown = arrays.map((a) => ({ ...a, shape: [a.shape[0] * 2, ...a.shape.slice(1)], stored_bytes: a.stored_bytes * 2 }));
const again = measure(() => {
  const next = cw.partition(grown, { scope: "bench/scope", previous: manifest, generated_at: "2026-12-02T00:00:00+00:00" });
  return cw.diff(manifest, next.manifest);
});
step("repartition after growth + diff", again, `diff empty: ${again.result.is_empty}`);

const res = measure(() => {
  const r = new cw.KeyResolver();
  r.add(manifest);
  return r;
});
const resolver = res.result;
step("build resolver", res, `${resolver.size} prefixes`);

const look = measure(() => {
  let archivable = 0;
  for (let k = 0; k < KEYS; k++) {
    const a = arrays[k % ARRAYS];
    const i = k % 700;
    const key = a.key_encoding === "v3_slash" ? `bench/scope/${a.path}/c/${i}/0/0`
      : a.key_encoding === "v2_slash" ? `bench/scope/${a.path}/${i}/0/0`
        : `bench/scope/${a.path}/${i}.0.0`;
    if (resolver.isArchivable(key)) archivable++;
  }
  return archivable;
});
step("resolve 1,000,000 keys (isArchivable)", look,
  `${fmt.format(look.wall * 1e6 / KEYS)} ns/key, ${look.result} archivable`);

const objs = measure(() => {
  let blobs = 0;
  for (let k = 0; k < 100_000; k++) {
    const a = arrays[k % ARRAYS];
    if (a.key_encoding !== "v3_slash") continue;
    if (resolver.resolve(`bench/scope/${a.path}/c/${k % 700}/0/0`).kind === "blob") blobs++;
  }
  return blobs;
});
step("resolve 100,000 keys (v3 only tried) to objects", objs,
  `${fmt.format(objs.wall * 1e6 / 33_334)} ns/resolved key, ${objs.result} in blobs`);
resolver.free();

console.log(`wasm in Node ${process.version} (pkg/node), ${new Date().toISOString()}\n`);
console.log("Chunk-cache simulator\n");
console.log(table(["run", "ms", "M accesses/s", "counts", "RSS growth (MiB)", "wasm memory (MiB)"], sim));
console.log("\nPartition and resolution\n");
console.log(table(["step", "wall (ms)", "CPU (ms)", "RSS growth (MiB)", "heap growth (MiB)", "wasm memory (MiB)", "notes"], part));

// ---- native comparison ------------------------------------------------------------------------

const nativeBin = process.env.CHUNKWISE_BIN ||
  path.join(path.resolve(repo, process.env.CARGO_TARGET_DIR || "target"), "release/chunkwise");
if (!args.includes("--no-native") && fs.existsSync(nativeBin)) {
  const run = (...a) => execFileSync(nativeBin, a, { encoding: "utf8", maxBuffer: 1 << 24 });
  const ct = run("bench", "chunk-trace");
  const ctm = /(\d+) accesses in ([\d.]+) s = ([\d.]+) M accesses\/s/.exec(ct);
  const pt = run("bench", "partition");
  const native = Object.fromEntries(pt.split("\n").filter((l) => /^\| [a-z]/.test(l) && !l.startsWith("| step"))
    .map((l) => l.split("|").map((s) => s.trim())).map((c) => [c[1], { wall: Number(c[2]), cpu: Number(c[3]), peak: c[4], growth: c[5] }]));
  console.log(`\nNative (${path.relative(repo, nativeBin)})\n`);
  console.log(ct.trim());
  console.log("\n" + pt.trim());
  const rows = [];
  if (ctm) {
    rows.push([`chunk-cache simulator, ${fmt.format(ACCESSES)} accesses (M accesses/s)`,
      wasmRate.toFixed(2), ctm[3], (Number(ctm[3]) / wasmRate).toFixed(2)]);
  }
  const pair = [["partition (fresh)", "partition (fresh)"],
    ["partition (fresh) again, wasm memory grown", "partition (fresh)"],
    ["repartition after growth + diff", "repartition after growth + diff"],
    ["build resolver", "build resolver"],
    ["resolve 1,000,000 keys (isArchivable)", "resolve 1,000,000 keys"]];
  for (const [w, n] of pair) {
    const wr = part.find((r) => r[0] === w), nr = native[n];
    if (!wr || !nr) continue;
    const wms = Number(wr[1].replace(/,/g, ""));
    rows.push([`${w} (wall ms)`, fmt.format(wms), fmt.format(nr.wall), nr.wall > 0 ? `${(wms / nr.wall).toFixed(2)}` : "-"]);
  }
  console.log("\nwasm / native\n");
  console.log(table(["measure", "wasm (Node)", "native", "wasm / native time"], rows));
}
