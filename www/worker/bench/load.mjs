// A bounded load test of the edge chunk service in workerd, on 127.0.0.1 only, printing a
// table. Not part of `npm test` (a benchmark: numbers, not assertions).
//
//   node bench/load.mjs [--requests 5000] [--concurrency 64] [--timeout-s 600] [--seed 1]
//                       [--turns off|on|off,on]
//
// --turns: the CORE_TURNS binding of the worker phases (off: core operations concurrent, the
// default; on: one at a time per isolate); with both, the worker phases run once for each.
// Upstream: `chunkwise serve` over tests/fixtures ($CHUNKWISE_BIN, else target/debug/chunkwise);
// the Cache API behind workerd: tests/e2e/cache-api-service.mjs (in this process's memory).
// The mix: a pool of distinct requests over fixtures of every format (.b2nd, HDF5, Zarr v2,
// Zarr v3): every chunk of each array (/v1/chunk raw), slices (/v1/slice npy) and 2-D previews
// (/v1/preview.png), drawn with a seeded generator (about half chunks, a third slices, the
// rest previews), so a run repeats requests as clients do. Phases, each the same sequence:
//   cold          a new workerd process (new isolate), an empty Cache API
//   warm isolate  the same process again (the isolate's response and payload caches)
//   warm restart  a new workerd process, the Cache API filled by the cold phase
//   static        chunkwise serve alone answering the byte ranges the worker fetched in the
//                 cold phase (method, path, Range as its log has them), cycled to the same
//                 count at the same concurrency: the plain range server's cost for this mix
// Columns: throughput, latency p50/p99 (client side, fetch to body end), errors (any status
// but 200), upstream requests and bytes (from chunkwise serve's own log), and workerd's
// memory: VmRSS of the workerd process from /proc/PID/status, sampled every 100 ms (peak)
// and at the end of the phase (workerd exposes no isolate heap figure of its own). The run
// stops by itself: a bounded count, and every phase aborted after --timeout-s.

import fs from "node:fs";
import path from "node:path";
import { fixtures, get, manifest, scratchDir, startCacheService, startServer, startWorker } from "../tests/harness.mjs";

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : dflt;
};
const N = opt("requests", 5000);
const C = opt("concurrency", 64);
const TIMEOUT_S = opt("timeout-s", 600);
let seed = opt("seed", 1) >>> 0;
const TURNS = (args.includes("--turns") ? args[args.indexOf("--turns") + 1] : "off").split(",");
if (TURNS.some((t) => t !== "on" && t !== "off")) throw new Error("--turns takes off, on or off,on");
const rand = () => {
  // mulberry32
  seed = (seed + 0x6d2b79f5) >>> 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};

const blosc2 = manifest("blosc2");
// [format, src under tests/fixtures, path, shape, chunks, 2-D previews, slices]
const arrays = [
  ["b2nd", "preview/field_f4.b2nd", undefined, [2, 37, 53], [1, 16, 20], ["0, :, :", "1, :, :", "0, 5:30, 10:50"], ["0, 0:16, :", "1, 10:30, 5:45", ":, 20, :"]],
  ...["cf_lz4_shuffle", "cf_zstd_bitshuffle", "cf_zlib_delta", "cf_blosclz_bytedelta"].filter((n) => blosc2[n]).map((n) =>
    ["b2nd", `blosc2/${blosc2[n].file}`, undefined, blosc2[n].shape, blosc2[n].chunks, [":, :"], ["3:29, 2:20", "0:16, :"]]),
  ["hdf5", "hdf5/gzip_shuffle.h5", "/ints", [50, 33], [16, 10], [":, :", "10:40, 5:30"], ["7:45, 3:31", "0:16, 0:10", "::2, ::3"]],
  ["hdf5", "hdf5/gzip_shuffle.h5", "/f32_fletcher", [50, 33], [20, 20], [":, :"], ["0:50, 0:20", "25:50, 10:33"]],
  ["hdf5", "preview/grid_i2.h5", "/grid/temp", [40, 30], [16, 16], [":, :", "2:38, :"], ["0:16, 0:16", "10:40, 5:25"]],
  ["zarr v2", "zarr/v2.zarr", "/blosc", [13, 11], [5, 4], [":, :"], ["2:12, 1:10", "0:5, 0:4"]],
  ["zarr v2", "zarr/v2.zarr", "/zstd", [13, 11], [5, 4], [":, :"], [":, 3:9"]],
  ["zarr v2", "zarr/v2.zarr", "/zlib", [13, 11], [5, 4], [":, :"], ["0:13, 0:11"]],
  ["zarr v3", "zarr/v3.zarr", "/temperature", [13, 11], [5, 4], [":, :"], ["1:12, 2:9", "5:10, :"]],
  ["zarr v3", "zarr/v3.zarr", "/gzip", [13, 11], [5, 4], [":, :"], ["0:5, 0:4"]],
  ["zarr v3", "preview/grid_u1.zarr", undefined, [40, 30], [16, 16], [":, :", ":, 4:30"], ["0:32, 0:16"]],
];

function pool(up) {
  const chunks = [], slices = [], previews = [];
  for (const [format, file, p, shape, ch, pv, sl] of arrays) {
    const grid = shape.map((n, d) => Math.ceil(n / ch[d]));
    const walk = (d, acc) => {
      if (d === grid.length) { chunks.push({ format, route: "/v1/chunk", q: { src: up + file, path: p, coords: acc.join(",") } }); return; }
      for (let i = 0; i < grid[d]; i++) walk(d + 1, [...acc, i]);
    };
    walk(0, []);
    for (const s of sl) slices.push({ format, route: "/v1/slice", q: { src: up + file, path: p, select: s, format: "npy" } });
    for (const s of pv) previews.push({ format, route: "/v1/preview.png", q: { src: up + file, path: p, select: s } });
  }
  return { chunks, slices, previews };
}

function sequence(p) {
  const out = [];
  for (let i = 0; i < N; i++) {
    const r = rand();
    const list = r < 0.5 ? p.chunks : r < 0.85 ? p.slices : p.previews;
    out.push(list[Math.floor(rand() * list.length)]);
  }
  return out;
}

function rssKb(pid) {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

/** Runs `jobs` (functions resolving to a status) C at a time; returns latencies and errors. */
async function drive(jobs, pid) {
  const lat = new Array(jobs.length);
  const statuses = {};
  let next = 0, errors = 0, peak = 0;
  const sampler = pid ? setInterval(() => { peak = Math.max(peak, rssKb(pid) ?? 0); }, 100) : null;
  // One timeout signal per request (a shared one collects a listener per fetch in Node).
  const t0 = performance.now();
  const end = t0 + TIMEOUT_S * 1000;
  await Promise.all(Array.from({ length: C }, async () => {
    while (next < jobs.length && performance.now() < end) {
      const i = next++;
      const s = performance.now();
      let status;
      try {
        status = await jobs[i](AbortSignal.timeout(Math.max(1, Math.round(end - s))));
      } catch (e) {
        status = performance.now() >= end ? "timeout" : `error ${e.name}`;
      }
      lat[i] = performance.now() - s;
      statuses[status] = (statuses[status] ?? 0) + 1;
      if (status !== 200 && status !== 206) errors++;
    }
  }));
  const seconds = (performance.now() - t0) / 1000;
  if (sampler) clearInterval(sampler);
  const done = lat.filter((x) => x !== undefined).sort((a, b) => a - b);
  const q = (f) => done[Math.min(done.length - 1, Math.floor(f * done.length))];
  return { n: done.length, errors: errors + (jobs.length - done.length), statuses, seconds, p50: q(0.5), p99: q(0.99), peakKb: peak, endKb: pid ? rssKb(pid) : null };
}

const workerJob = (w, r) => async (signal) => {
  const qs = new URLSearchParams(Object.entries(r.q).filter(([, v]) => v !== undefined));
  const res = await fetch(`${w.base}${r.route}?${qs}`, { signal });
  await res.arrayBuffer();
  return res.status;
};

const scratch = scratchDir("chunkwise-edge-load-");
const up = await startServer({ root: fixtures });
const cache = await startCacheService();
const rows = [];
const workers = [];
let n = 0;
const startW = async (turns) => {
  const w = await startWorker(path.join(scratch.dir, `w${n++}`), { cache: cache.address, vars: { ALLOWED_ORIGINS: up.url.replace(/\/$/, ""), CORE_TURNS: turns } });
  workers.push(w);
  return w;
};
const upstreamOf = (mark) => {
  const l = up.log.slice(mark);
  return { requests: l.length, bytes: l.reduce((s, r) => s + (r.method === "HEAD" ? 0 : r.bytes), 0), log: l };
};

try {
  const p = pool(up.url);
  const seq = sequence(p);
  const mix = { chunk: seq.filter((r) => r.route === "/v1/chunk").length, slice: seq.filter((r) => r.route === "/v1/slice").length, preview: seq.filter((r) => r.route === "/v1/preview.png").length };
  const formats = {};
  for (const r of seq) formats[r.format] = (formats[r.format] ?? 0) + 1;

  let coldUp, cold, warm, restart, stats;
  for (const turns of TURNS) {
    const tag = TURNS.length > 1 ? `CORE_TURNS=${turns}: ` : "";
    cache.entries.clear();
    let w = await startW(turns);
    let mark = up.log.length;
    cold = await drive(seq.map((r) => workerJob(w, r)), w.pid);
    const cUp = upstreamOf(mark);
    coldUp ??= cUp;
    rows.push([`${tag}cold (new isolate, empty Cache API)`, cold, cUp]);

    mark = up.log.length;
    warm = await drive(seq.map((r) => workerJob(w, r)), w.pid);
    rows.push([`${tag}warm isolate (same process)`, warm, upstreamOf(mark)]);
    stats = (await get(w, "/v1/stats")).json();
    await w.stop();

    w = await startW(turns);
    mark = up.log.length;
    restart = await drive(seq.map((r) => workerJob(w, r)), w.pid);
    rows.push([`${tag}warm restart (new isolate, Cache API)`, restart, upstreamOf(mark)]);
    await w.stop();
  }

  // The plain range server: the cold phase's upstream requests, cycled to N.
  const ranges = coldUp.log.filter((r) => r.method === "GET");
  const staticJobs = Array.from({ length: N }, (_, i) => {
    const r = ranges[i % ranges.length];
    return async (signal) => {
      const res = await fetch(up.url + r.path.slice(1), { headers: r.range ? { range: r.range } : {}, signal });
      await res.arrayBuffer();
      return res.status === 404 ? 200 : res.status; // a Zarr probe answered 404 is what the worker got too
    };
  });
  const mark = up.log.length;
  const plain = await drive(staticJobs, null);
  rows.push(["static: chunkwise serve, the cold phase's ranges", plain, upstreamOf(mark)]);

  const fmt = (x, d = 1) => (x === null || x === undefined ? "-" : x.toFixed(d));
  console.log(`\n${N} requests, ${C} concurrent, 127.0.0.1; mix ${JSON.stringify(mix)}, by format ${JSON.stringify(formats)}; ${p.chunks.length + p.slices.length + p.previews.length} distinct requests`);
  console.log("| phase | requests | errors | s | req/s | p50 ms | p99 ms | upstream requests | upstream MB | workerd RSS peak / end MB |");
  console.log("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
  for (const [name, r, u] of rows) {
    console.log(`| ${name} | ${r.n} | ${r.errors} | ${fmt(r.seconds, 2)} | ${fmt(r.n / r.seconds, 0)} | ${fmt(r.p50)} | ${fmt(r.p99)} | ${u.requests} | ${fmt(u.bytes / 1e6, 3)} | ${r.peakKb ? `${fmt(r.peakKb / 1024)} / ${fmt(r.endKb / 1024)}` : "-"} |`);
  }
  const ratio = (a, b) => (b ? (a / b).toFixed(2) : "-");
  console.log(`\nthroughput, static server / worker: cold ${ratio(plain.n / plain.seconds, cold.n / cold.seconds)}x, warm isolate ${ratio(plain.n / plain.seconds, warm.n / warm.seconds)}x, warm restart ${ratio(plain.n / plain.seconds, restart.n / restart.seconds)}x`);
  console.log(`p50 latency, worker / static server: cold ${ratio(cold.p50, plain.p50)}x, warm isolate ${ratio(warm.p50, plain.p50)}x, warm restart ${ratio(restart.p50, plain.p50)}x`);
  console.log(`statuses: cold ${JSON.stringify(cold.statuses)} warm ${JSON.stringify(warm.statuses)} restart ${JSON.stringify(restart.statuses)} static ${JSON.stringify(plain.statuses)}`);
  for (const [name, , u] of rows.filter(([name]) => name.includes("cold") && !name.startsWith("static"))) {
    const seen = new Map();
    for (const r of u.log) { const k = `${r.method} ${r.path} ${r.range ?? ""}`; seen.set(k, (seen.get(k) ?? 0) + 1); }
    const dup = [...seen].filter(([, c]) => c > 1);
    console.log(`"${name}": ${seen.size} distinct upstream requests, ${dup.reduce((a, [, c]) => a + c - 1, 0)} repeats${dup.length ? `: ${dup.map(([k, c]) => `${k} x${c}`).join("; ")}` : ""}`);
  }
  for (const [name, , u] of rows.filter(([name]) => !name.includes("cold") && !name.startsWith("static"))) {
    if (u.requests > 0 && u.requests <= 20) console.log(`upstream requests in "${name}": ${u.log.map((r) => `${r.method} ${r.path} ${r.range ?? ""} ${r.status}`).join("; ")}`);
  }
  console.log(`isolate counters after the warm phase: ${JSON.stringify({ cache: stats.cache, singleFlight: stats.singleFlight, opens: stats.opens, upstream: stats.upstream, busy: stats.busy })}`);
} finally {
  for (const w of workers) await w.stop().catch(() => {});
  await up.stop();
  await cache.stop();
  scratch.remove();
}
