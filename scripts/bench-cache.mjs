// Benchmark of the persistent cache in headless Chromium: open + preview of a .b2nd, an HDF5
// dataset and a Zarr array through `chunkwise serve --latency-ms 40`, in four states side by
// side, and prints one table (requests and body bytes counted by the server, time in the page):
//   cold memory   a fresh page, cache "memory" (the baseline)
//   cold disk     a fresh page, cache "disk" on IndexedDB, emptied (the writes it adds)
//   warm disk idb the page reloaded (nothing in memory), cache "disk" on IndexedDB
//   warm disk opfs the same on OPFS
//   warm memory   the same page, shareCache: true, opened a second time
// Each time is the median of RUNS runs (environment CHUNKWISE_BENCH_RUNS, default 5).
// Fixtures are written at run time by the pinned python-blosc2, h5py and zarr-python
// (gen_blosc2.py --big, gen_hdf5_index.py --bench, gen_zarr.py --bench).
//
// Usage: chunkwise bench cache [--latency-ms 40] [--runs 5], or node scripts/bench-cache.mjs
// (after scripts/build-pkg.sh; CHUNKWISE_BIN names the CLI, CHUNKWISE_BENCH_LATENCY the latency)

import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { chromiumPath, repo, scratchDir, startServer } from "../tests/e2e/lib.mjs";
import { ensureBigFixture } from "../tests/e2e/big-fixture.mjs";

const RUNS = Number(process.env.CHUNKWISE_BENCH_RUNS || 5);
const LATENCY = Number(process.env.CHUNKWISE_BENCH_LATENCY || 40);
const venvPython = path.join(process.env.CHUNKWISE_VENV || path.join(os.homedir(), ".cache/chunkwise/venv"), "bin/python");
const benchDir = path.join(os.tmpdir(), "chunkwise-bench-cache");

function generate(script, sub, marker) {
  const out = path.join(benchDir, sub);
  if (fs.existsSync(path.join(out, marker))) return out;
  fs.mkdirSync(out, { recursive: true });
  const r = spawnSync(venvPython, [path.join(repo, "tests/fixtures", script), "--bench", out], { encoding: "utf8", timeout: 300000 });
  if (r.status !== 0) throw new Error(`${script} --bench failed: ${r.stderr}`);
  return out;
}

const big = ensureBigFixture();
if (!big.ok) throw new Error(big.reason);
const hdf5Dir = generate("gen_hdf5_index.py", "hdf5", "bench_large.h5");
const zarrDir = generate("gen_zarr.py", "zarr", "bench_v3.zarr");

// Every source under one served root (the server serves no link that leaves its root).
const bigCopy = path.join(benchDir, "big_f4.b2nd");
if (!fs.existsSync(bigCopy) || fs.statSync(bigCopy).size !== fs.statSync(big.file).size) fs.copyFileSync(big.file, bigCopy);

const CASES = [
  { format: ".b2nd", file: "big_f4.b2nd", path: null, select: "0:256, 0:256" },
  { format: "HDF5", file: "hdf5/bench_large.h5", path: "/data", select: "0:250, 0:500" },
  { format: "Zarr v3", file: "zarr/bench_v3.zarr", path: "/temperature", select: "0:256, 0:256" },
];

const [pageServer, dataServer] = await Promise.all([
  startServer({ quiet: true }), startServer({ root: benchDir, latencyMs: LATENCY }),
]);
const profile = scratchDir("chunkwise-bench-profile-");
const { chromium } = await import(path.join(repo, "tests/e2e/node_modules/playwright-core/index.mjs"));
const ctx = await chromium.launchPersistentContext(profile.dir, {
  executablePath: chromiumPath, headless: true, timeout: 30000,
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});

const page = await ctx.newPage();
page.on("pageerror", (e) => console.error("page error:", e.message));
await page.goto(`${pageServer.url}tests/e2e/cache-page.html`);

/** Opens and reads `select` in the page; returns { ms, requests, bytes } (the server's count). */
async function run(c, opts) {
  const since = dataServer.log.length;
  const url = dataServer.url + c.file;
  const r = await page.evaluate(({ url, opts, select }) => window.cacheTest.time(url, opts, select),
    { url, opts: { ...opts, path: c.path ?? undefined }, select: c.select });
  if (r.error) throw new Error(`${c.format}: ${r.error}`);
  const hits = dataServer.log.slice(since).filter((h) => h.method !== "OPTIONS");
  return { ms: r.ms, requests: hits.length, bytes: hits.reduce((s, h) => s + h.bytes, 0) };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

async function measure(c, state) {
  const out = [];
  for (let i = 0; i < RUNS; i++) {
    const name = `bench-${state}-${i}-${Date.now()}`;
    let r;
    if (state === "cold memory") {
      await page.reload();
      r = await run(c, { cache: "memory" });
    } else if (state === "cold disk") {
      // The cache exists (as it does after a first use) but holds nothing of this source:
      // the cost measured is the writes, not the creation of a database.
      await page.evaluate(() => window.cacheTest.clear({ cacheName: "bench-cold" }));
      await page.reload();
      r = await run(c, { cache: "disk", cacheName: "bench-cold" });
    } else if (state.startsWith("warm disk")) {
      const backend = state.endsWith("opfs") ? "opfs" : "indexeddb";
      await page.reload();
      await run(c, { cache: "disk", cacheBackend: backend, cacheName: name });
      await page.reload();
      r = await run(c, { cache: "disk", cacheBackend: backend, cacheName: name });
    } else {
      await page.reload();
      await run(c, { cache: "memory", shareCache: true });
      r = await run(c, { cache: "memory", shareCache: true });
    }
    out.push(r);
  }
  return { ms: median(out.map((r) => r.ms)), requests: median(out.map((r) => r.requests)), bytes: median(out.map((r) => r.bytes)) };
}

const STATES = ["cold memory", "cold disk", "warm disk idb", "warm disk opfs", "warm memory"];
const rows = [];
try {
  for (const c of CASES) {
    for (const state of STATES) rows.push({ format: c.format, state, ...(await measure(c, state)) });
    await page.evaluate(() => window.cacheTest.clearAll());
  }
} finally {
  await ctx.close();
  await Promise.all([pageServer.stop(), dataServer.stop()]);
  profile.remove();
}

console.log(`open + preview in headless Chromium, ${LATENCY} ms latency, median of ${RUNS} runs`);
console.log("| format | state | requests | bytes | ms | vs warm memory |");
console.log("|---|---|---:|---:|---:|---:|");
for (const r of rows) {
  const mem = rows.find((x) => x.format === r.format && x.state === "warm memory");
  const ratio = mem.ms > 0 ? (r.ms / mem.ms).toFixed(1) + "x" : "-";
  console.log(`| ${r.format} | ${r.state} | ${r.requests} | ${r.bytes} | ${r.ms.toFixed(1)} | ${ratio} (+${(r.ms - mem.ms).toFixed(1)} ms) |`);
}
