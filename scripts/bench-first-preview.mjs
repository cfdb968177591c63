// Time to first preview in headless Chromium: from navigation start to the picture (the first
// chunk read, decoded and drawn to a canvas), module load included, for the large files of
// `chunkwise bench remote` through `chunkwise serve --latency-ms 40` on 127.0.0.1, side by
// side in one run:
//   b2nd   big_f4.b2nd (13.6 MB, 2000x2000 float32, ZSTD + SHUFFLE), [0:250, 0:250]: chunkwise
//   hdf5   bench_large.h5 (30 MB, /data 2000x5000 float32, gzip + shuffle, B-tree v1),
//          [0:250, 0:500]: chunkwise on the main thread, h5wasm in a dedicated worker with
//          its lazy file (FS.createLazyFile: synchronous 1 MiB range requests, as h5wasm
//          reads remote files)
//   zarr   bench_v3.zarr (/temperature 1024x1024 float32, zstd), [0:128, 0:128]: chunkwise,
//          zarrita (FetchStore) on the main thread
// and in each chunkwise-early: chunkwise with its wasm module compiled from the page's first
// line (WebAssembly.compileStreaming, the module handed to init), overlapping the JS import;
// and in each chunkwise-pending: chunkwise with RemoteArray.open called while init() is
// pending (not awaited): the open's first requests go out while the module is fetched and
// compiled (src/io/early.js), so its "module ms" overlaps its first round trip and "limit ms"
// (which adds them) is no bound for it;
// and in each, when the package has it (DIR/../worker/index.js), chunkwise/worker: the same
// reads in its dedicated worker ("module ms" is then its init(): the worker started and the
// module initialised in it; its round trips are the main thread's, its requests being the same).
// Each run is a fresh browser context (cold HTTP cache, no preflight cache) and page; the
// readers alternate within a run, so a busy machine slows them alike. The page and the
// libraries (chunkwise's package, zarrita, h5wasm) come from a second `chunkwise serve` with
// no added latency unless --page-latency (module load = fetch from loopback + compile + start); the data, cross
// origin, from the one with latency. Every picture's values are checked: the SHA-256 of the
// values drawn against that of the same window of the .npy the generator wrote next to the
// file.
//
// Columns (medians over the runs):
//   picture ms    navigation start -> the canvas drawn (putImageData returned)
//   page ms       navigation start -> the page's script running (its HTML fetched and
//                 parsed: the same for every reader)
//   module ms     navigation start -> the library ready to open (chunkwise: init() resolved;
//                 zarrita: imported, its zstd codec loads later, during the read; h5wasm: the
//                 worker started, its script imported and h5wasm.ready resolved)
//   open ms, read ms   ready -> open resolved, -> the values in hand
//   requests, preflights, bytes   the data server's log for the run (preflights: OPTIONS)
//   round trips   sequential round trips: the longest chain of data requests each starting
//                 after the previous one's answer (the page's fetch calls to their responses,
//                 by a wrapper of window.fetch; the worker's resource timing), plus the
//                 preflights (none of these readers' ranges need one). Not counted: a wait
//                 for one of the 6 connections of an origin (no case here has more than 4
//                 requests in flight)
//   xfer+dec ms   the same read after an open through the server without latency, the
//                 engine warm, median of three (transfer + decode + copy out)
//   limit ms      module + round trips x latency + xfer+dec: the physical limit of that
//                 reader's requests; "vs limit" is picture / limit
//   vs peer       chunkwise's picture / the peer's in the same format (targets: <= 0.5x
//                 zarrita, <= 0.3x h5wasm; <= 1.25x the limit)
//   open at 0 ms  an open through the server without latency after the picture, the engine
//                 warm (chunkwise, zarrita): what open costs once first-call costs are paid
//   after page ms picture - page: the part a reader controls (navigation to the page's script
//                 is the browser's, and on a busy machine its noisiest part), and its ratio
//
// Usage: node scripts/bench-first-preview.mjs [--runs N] [--formats b2nd,hdf5,zarr]
//          [--readers chunkwise,chunkwise-early,chunkwise-pending,chunkwise-worker,chunkwise-worker-pending,zarrita,h5wasm] [--latency MS] [--module DIR] [--json]
//          [--page-latency MS]
//          [--profile] [--trace] [--js-flags V8_FLAGS]
//   --page-latency MS  the page and the libraries served with this latency too (default 0:
//                 from loopback as they are), as from a server across a network: then every
//                 wave of a library's module graph (a module's imports are known only once it
//                 is fetched) and its wasm download cost a round trip, which loopback hides
//   --module DIR  the directory (inside the repository) holding the web build's chunkwise.js
//                 (default pkg/web; a build with its name section keeps function names in
//                 --profile's table)
//   --profile     after the table, one more chunkwise run per format with the CDP sampling
//                 profiler (100 us): busy time per phase between the page's marks (wasm, JS,
//                 V8/Blink native, GC, idle) and self time by function up to the picture (no
//                 xfer+dec reads in that run)
//   --trace       after the table, one more chunkwise run per format under Chromium tracing
//                 (V8 and wasm categories): per phase the main thread's CPU time and the wasm
//                 functions V8 compiled lazily on it (first calls; count, body bytes, CPU ms),
//                 and those by crate when the module has its name section (--module DIR of
//                 such a build)
//   --js-flags F  V8 flags for Chromium (--js-flags=F), for experiments such as
//                 --no-wasm-lazy-compilation (what compiling every function up front costs)
//   CHUNKWISE_BIN the CLI serving the files (default target/release/chunkwise), CHROMIUM;
//   CHUNKWISE_BENCH_RAW=1 also prints every run (marks, data requests) on stderr
// Needs: npm ci in tests/e2e (playwright-core, zarrita) and in scripts/bench-hdf5-js (h5wasm);
// the venv of scripts/setup.sh to write missing files (gen_blosc2.py --big,
// gen_hdf5_index.py --bench, gen_zarr.py --bench into the directories bench remote uses, the
// Zarr store into its own).

import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { spawnSync } from "node:child_process";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, "..");

function args() {
  const a = { runs: 5, formats: ["b2nd", "hdf5", "zarr"], readers: ["chunkwise", "chunkwise-early", "chunkwise-pending", "chunkwise-worker", "chunkwise-worker-pending", "zarrita", "h5wasm"],
    latency: 40, pageLatency: 0, module: "pkg/web", json: false, profile: false, trace: false, jsFlags: null };
  const v = process.argv.slice(2);
  for (let i = 0; i < v.length; i++) {
    const next = () => { if (i + 1 >= v.length) throw new Error(`${v[i]} needs a value`); return v[++i]; };
    switch (v[i]) {
      case "--runs": a.runs = Number(next()); break;
      case "--formats": a.formats = next().split(","); break;
      case "--readers": a.readers = next().split(","); break;
      case "--latency": a.latency = Number(next()); break;
      case "--module": a.module = next(); break;
      case "--page-latency": a.pageLatency = Number(next()); break;
      case "--json": a.json = true; break;
      case "--profile": a.profile = true; break;
      case "--trace": a.trace = true; break;
      case "--js-flags": a.jsFlags = next(); break;
      default: throw new Error(`unknown argument ${v[i]} (see the head of ${path.relative(repo, fileURLToPath(import.meta.url))})`);
    }
  }
  if (!(a.runs >= 1) || !(a.latency > 0) || !(a.pageLatency >= 0)) {
    throw new Error("--runs must be >= 1, --latency > 0 and --page-latency >= 0");
  }
  return a;
}

/** Runs a generator of the venv (writes files that are missing). */
function generate(script, flag, dir) {
  const python = path.join(process.env.CHUNKWISE_VENV || path.join(os.homedir(), ".cache/chunkwise/venv"), "bin/python");
  fs.mkdirSync(dir, { recursive: true });
  const r = spawnSync(python, [path.join(repo, "tests/fixtures", script), flag, dir], { encoding: "utf8", timeout: 600000 });
  if (r.status !== 0) throw new Error(`${script} ${flag} ${dir} failed: ${r.stderr}`);
}

/** The cases: files made or reused, and the SHA-256 of the preview window of each .npy. */
function cases(formats) {
  const tmp = os.tmpdir();
  const all = {
    b2nd: { dir: path.join(tmp, "chunkwise-bench-remote"), file: "big_f4.b2nd", npy: "big_f4.npy", array: "",
      sel: [[0, 250], [0, 250]], readers: ["chunkwise", "chunkwise-early", "chunkwise-pending", "chunkwise-worker", "chunkwise-worker-pending"], make: (d) => generate("gen_blosc2.py", "--big", d) },
    hdf5: { dir: path.join(tmp, "chunkwise-bench-remote-hdf5"), file: "bench_large.h5", npy: "bench_large.npy",
      array: "/data", sel: [[0, 250], [0, 500]], readers: ["chunkwise", "chunkwise-early", "chunkwise-pending", "chunkwise-worker", "chunkwise-worker-pending", "h5wasm"], peer: "h5wasm", target: 0.3,
      make: (d) => generate("gen_hdf5_index.py", "--bench", d) },
    zarr: { dir: path.join(tmp, "chunkwise-bench-first-preview", "zarr"), file: "bench_v3.zarr",
      npy: "bench_temperature.npy", array: "/temperature", sel: [[0, 128], [0, 128]], readers: ["chunkwise", "chunkwise-early", "chunkwise-pending", "chunkwise-worker", "chunkwise-worker-pending", "zarrita"],
      peer: "zarrita", target: 0.5, make: (d) => generate("gen_zarr.py", "--bench", d) },
  };
  const out = [];
  for (const f of formats) {
    const c = all[f];
    if (!c) throw new Error(`unknown format ${f}`);
    if (!fs.existsSync(path.join(c.dir, c.file)) || !fs.existsSync(path.join(c.dir, c.npy))) c.make(c.dir);
    c.expected = npyWindowSha(path.join(c.dir, c.npy), c.sel);
    c.sourceBytes = sizeOf(path.join(c.dir, c.file));
    out.push({ format: f, ...c });
  }
  return out;
}

function sizeOf(p) {
  const st = fs.statSync(p);
  if (!st.isDirectory()) return st.size;
  return fs.readdirSync(p).reduce((s, n) => s + sizeOf(path.join(p, n)), 0);
}

/** SHA-256 of the C-ordered bytes of window `sel` of a 2-D little-endian .npy (as written). */
function npyWindowSha(file, sel) {
  const buf = fs.readFileSync(file);
  if (buf.toString("latin1", 0, 6) !== "\x93NUMPY") throw new Error(`${file}: not a .npy file`);
  const major = buf[6];
  const hlen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = (major === 1 ? 10 : 12) + hlen;
  const header = buf.toString("latin1", start - hlen, start);
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
  if (descr !== "<f4" || /'fortran_order':\s*True/.test(header)) throw new Error(`${file}: expected C-ordered <f4, got ${header}`);
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header)[1].split(",").map((s) => s.trim()).filter(Boolean).map(Number);
  if (shape.length !== 2) throw new Error(`${file}: 2-D expected`);
  const [[r0, r1], [c0, c1]] = sel;
  const h = crypto.createHash("sha256");
  for (let r = r0; r < r1; r++) h.update(buf.subarray(start + 4 * (r * shape[1] + c0), start + 4 * (r * shape[1] + c1)));
  return h.digest("hex");
}

/**
 * Sequential round trips: the longest chain of requests each starting after the previous
 * one's answer, a request counting one (on a busy machine a request's duration says more
 * about the main thread than about the network, so durations are not divided by the
 * latency), plus the preflights the server answered (each a round trip before its request).
 */
function roundTrips(resources, preflights) {
  if (!resources) return null;
  const rs = [...resources].sort((a, b) => a.end - b.end);
  const best = [];
  let max = 0;
  for (let i = 0; i < rs.length; i++) {
    let before = 0;
    for (let j = 0; j < i; j++) if (rs[j].end <= rs[i].start + 0.5) before = Math.max(before, best[j]);
    best.push(before + 1);
    max = Math.max(max, best[i]);
  }
  return max + preflights;
}

/**
 * Where a main-thread run's time went, in ms, adding up to the picture: navigation to the page
 * script, the library's JS imported, the wasm module downloaded and instantiated (chunkwise),
 * then along the requests: before the first, waiting for answers, between an answer and the
 * next request, after the last answer to the values, drawing.
 */
function phases(m, resources) {
  if (!resources || !resources.length) return null;
  const rs = [...resources].sort((a, b) => a.start - b.start);
  let waiting = 0, between = 0, last = null;
  for (const r of rs) {
    if (last === null) waiting += r.end - r.start;
    else if (r.start >= last) { between += r.start - last; waiting += r.end - r.start; }
    else waiting += Math.max(0, r.end - last); // overlapping requests: only the time past the last answer
    last = last === null ? r.end : Math.max(last, r.end);
  }
  const p = { page: m.script };
  if (m.imported === undefined) {
    p.init = m.ready - m.script; // h5wasm: its worker started, its script imported, ready
  } else if (m.wasmFetched !== undefined) {
    Object.assign(p, { importJs: m.imported - m.script, wasmDownload: m.wasmFetched - m.imported, instantiate: m.ready - m.wasmFetched });
  } else {
    Object.assign(p, { importJs: m.imported - m.script, init: m.ready - m.imported });
  }
  Object.assign(p, { beforeFirstRequest: rs[0].start - m.ready, waiting, betweenRequests: between,
    afterLastAnswer: m.data - last, draw: m.drawn - m.data });
  return p;
}

const median = (xs) => {
  const s = xs.filter((x) => x != null && !Number.isNaN(x)).sort((a, b) => a - b);
  if (!s.length) return null;
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

async function main() {
  const opt = args();
  const { startServer, chromiumPath } = await import("../tests/e2e/lib.mjs");
  const need = [
    [path.join(repo, opt.module, "chunkwise.js"), "scripts/build-pkg.sh (or --module DIR)"],
    [path.join(repo, "tests/e2e/node_modules/playwright-core/index.mjs"), "npm ci in tests/e2e"],
  ];
  if (opt.readers.includes("zarrita")) need.push([path.join(repo, "tests/e2e/node_modules/zarrita/dist/src/index.js"), "npm ci in tests/e2e"]);
  if (opt.readers.includes("h5wasm")) need.push([path.join(repo, "scripts/bench-hdf5-js/node_modules/h5wasm/dist/iife/h5wasm.js"), "npm ci in scripts/bench-hdf5-js"]);
  for (const [f, how] of need) if (!fs.existsSync(f)) throw new Error(`${f} is missing: ${how}`);
  // chunkwise/worker: the package's worker entry next to the web build, when it has one.
  const workerEntry = path.join(repo, opt.module, "../worker/index.js");
  if (opt.readers.includes("chunkwise-worker") && !fs.existsSync(workerEntry)) {
    console.error(`(no ${path.relative(repo, workerEntry)}: the chunkwise-worker rows are left out)`);
    opt.readers = opt.readers.filter((r) => !r.startsWith("chunkwise-worker"));
  }
  if (path.relative(repo, path.resolve(repo, opt.module)).startsWith("..")) throw new Error(`--module must be inside ${repo} (the page server's root)`);

  const work = cases(opt.formats);
  const pageServer = await startServer({ root: repo, quiet: true, latencyMs: opt.pageLatency });
  const servers = [];
  let browser = null;
  const runs = []; // { format, reader, run, picture, ready, opened, data, requests, preflights, bytes, rt, local }
  const profiles = [];
  const traces = [];
  try {
    for (const c of work) {
      c.slow = await startServer({ root: c.dir, latencyMs: opt.latency });
      c.fast = await startServer({ root: c.dir, quiet: true });
      servers.push(c.slow, c.fast);
    }
    const { chromium } = await import(pathToFileURL(path.join(repo, "tests/e2e/node_modules/playwright-core/index.mjs")).href);
    browser = await chromium.launch({
      executablePath: chromiumPath, headless: true, timeout: 30000,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        ...(opt.jsFlags ? [`--js-flags=${opt.jsFlags}`] : [])],
    });
    const once = async (c, reader, { profile = false, trace = false } = {}) => {
      const context = await browser.newContext();
      try {
        const page = await context.newPage();
        if (trace) {
          await browser.startTracing(page, { categories: ["toplevel", "v8", "v8.wasm", "disabled-by-default-v8.wasm.detailed", "blink.user_timing", "devtools.timeline"] });
        }
        let cdp = null;
        if (profile) {
          cdp = await context.newCDPSession(page);
          await cdp.send("Profiler.enable");
          await cdp.send("Profiler.setSamplingInterval", { interval: 100 });
          await cdp.send("Profiler.start");
        }
        const q = new URLSearchParams({ reader, url: `${c.slow.url}${c.file}`, path: c.array, sel: JSON.stringify(c.sel), module: opt.module });
        if (!profile && !trace) q.set("zero", `${c.fast.url}${c.file}`);
        if (profile) q.set("profile", "1");
        const since = c.slow.log.length;
        await page.goto(`${pageServer.url}tests/e2e/bench-first-preview.html?${q}`);
        await page.waitForFunction(() => window.benchFirstPreview !== undefined, null, { timeout: 120000 });
        const r = await page.evaluate(() => window.benchFirstPreview);
        if (r.error) throw new Error(`${reader} on ${c.format}: ${r.error}`);
        if (r.sha256 !== c.expected) throw new Error(`${reader} on ${c.format}: the picture's values have SHA-256 ${r.sha256}, the generator's .npy ${c.expected}`);
        const hits = c.slow.log.slice(since);
        const data = hits.filter((h) => h.method !== "OPTIONS");
        let prof = null;
        if (cdp) prof = (await cdp.send("Profiler.stop")).profile;
        const traceEvents = trace ? JSON.parse((await browser.stopTracing()).toString("utf8")).traceEvents : null;
        return {
          format: c.format, reader, marks: r.marks, phases: phases(r.marks, r.resources), picture: r.marks.drawn, page: r.marks.script,
          afterPage: r.marks.drawn - r.marks.script, ready: r.marks.ready,
          opened: r.marks.opened - r.marks.ready, read: r.marks.data - r.marks.opened,
          requests: data.length, preflights: hits.length - data.length,
          bytes: data.reduce((s, h) => s + (h.method === "HEAD" ? 0 : h.bytes), 0),
          rt: roundTrips(r.resources, hits.length - data.length), local: median(r.local), localOpen: r.localOpen, prof,
          resources: r.resources, localRuns: r.local, hits, pageResources: r.pageResources, traceEvents,
        };
      } finally {
        await context.close();
      }
    };
    // One untimed warm-up per reader (the browser's own first-use costs: its processes,
    // disk caches of the compiled code are per context and so do not carry over).
    for (const c of work) for (const reader of c.readers.filter((x) => opt.readers.includes(x))) await once(c, reader);
    for (let i = 0; i < opt.runs; i++) {
      for (const c of work) {
        for (const reader of c.readers.filter((x) => opt.readers.includes(x))) runs.push({ run: i, ...(await once(c, reader)) });
      }
    }
    if (opt.profile) {
      for (const c of work) profiles.push(await once(c, "chunkwise", { profile: true }));
    }
    if (opt.trace) {
      for (const c of work) traces.push(await once(c, "chunkwise", { trace: true }));
    }
  } finally {
    if (browser) await browser.close();
    for (const s of servers) await s.stop();
    await pageServer.stop();
  }

  const rows = [];
  for (const c of work) {
    for (const reader of c.readers.filter((x) => opt.readers.includes(x))) {
      const rs = runs.filter((r) => r.format === c.format && r.reader === reader);
      const m = (k) => median(rs.map((r) => r[k]));
      const row = { format: c.format, file: c.file, sourceBytes: c.sourceBytes, reader, runs: rs.length,
        picture: m("picture"), page: m("page"), afterPage: m("afterPage"), module: m("ready"), open: m("opened"), read: m("read"),
        requests: m("requests"), preflights: m("preflights"), bytes: m("bytes"), roundTrips: m("rt"), xferDecode: m("local"),
        localOpen: m("localOpen") };
      // chunkwise/worker's requests are its worker's, unseen by the page: the same reads as on
      // the main thread (requests compared), so the same round trips.
      const main = rows.find((x) => x.format === c.format && x.reader === "chunkwise");
      if (row.roundTrips == null && main && main.requests === row.requests) row.roundTrips = main.roundTrips;
      row.limit = row.roundTrips == null ? null : row.module + row.roundTrips * opt.latency + row.xferDecode;
      row.vsLimit = row.limit == null ? null : row.picture / row.limit;
      rows.push(row);
    }
  }
  for (const r of rows) {
    const c = work.find((w) => w.format === r.format);
    const peer = rows.find((x) => x.format === r.format && x.reader === c.peer);
    r.vsPeer = r.reader.startsWith("chunkwise") && peer ? r.picture / peer.picture : null;
    r.vsPeerAfterPage = r.vsPeer == null ? null : r.afterPage / peer.afterPage;
    r.target = r.vsPeer == null ? null : c.target;
  }
  if (process.env.CHUNKWISE_BENCH_RAW) {
    for (const r of runs) console.error(JSON.stringify({ ...r, prof: undefined }));
  }
  if (opt.json) {
    for (const r of rows) console.log(JSON.stringify(r));
  } else {
    const f = (x, d = 0) => (x == null ? "-" : x.toFixed(d));
    console.log(`Time to first preview in headless Chromium (${chromiumPath}${opt.jsFlags ? ` --js-flags=${opt.jsFlags}` : ""}), data through chunkwise serve --latency-ms ${opt.latency} on 127.0.0.1, page and libraries ${opt.pageLatency ? `through --latency-ms ${opt.pageLatency}` : "without latency"}; median of ${opt.runs} runs, each in a fresh browser context; every picture's values matched the generator's .npy`);
    console.log("| format | reader | picture ms | page ms | module ms | open ms | read ms | requests | preflights | bytes | round trips | xfer+dec ms | limit ms | vs limit | vs peer (target) | after page ms | vs peer after page | open at 0 ms |");
    console.log("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (const r of rows) {
      console.log(`| ${r.format} ${r.file} | ${r.reader} | ${f(r.picture)} | ${f(r.page)} | ${f(r.module)} | ${f(r.open)} | ${f(r.read)} | ${r.requests} | ${r.preflights} | ${r.bytes} | ${r.roundTrips ?? "-"} | ${f(r.xferDecode, 1)} | ${f(r.limit)} | ${r.vsLimit == null ? "-" : `${r.vsLimit.toFixed(2)}x`} | ${r.vsPeer == null ? "-" : `${r.vsPeer.toFixed(2)}x (<= ${r.target}x)`} | ${f(r.afterPage)} | ${r.vsPeerAfterPage == null ? "-" : `${r.vsPeerAfterPage.toFixed(2)}x`} | ${f(r.localOpen)} |`);
    }
  }
  if (!opt.json) {
    // The critical path of the main-thread readers, phase by phase (medians; they add up to
    // about the picture's median).
    const names = { page: "navigation -> page script", importJs: "library JS imported", wasmDownload: "wasm downloaded (after the JS)",
      instantiate: "wasm compiled + instantiated after download", init: "init (zarrita: none; h5wasm: worker started, script imported, ready)", beforeFirstRequest: "ready -> first data request",
      waiting: "waiting for answers", betweenRequests: "answer -> next request (CPU)", afterLastAnswer: "last answer -> values (decode, CPU)", draw: "values -> drawn (h5wasm: + the transfer from its worker)" };
    const cols = [];
    for (const c of work) for (const reader of c.readers.filter((x) => opt.readers.includes(x) && !x.startsWith("chunkwise-"))) cols.push([c, reader]);
    console.log(`\nCritical path by phase, ms (medians of ${opt.runs} runs; main-thread readers; h5wasm's marks are its worker's)`);
    console.log(`| phase | ${cols.map(([c, r]) => `${c.format} ${r}`).join(" | ")} |`);
    console.log(`|---|${"---:|".repeat(cols.length)}`);
    for (const [k, label] of Object.entries(names)) {
      const vals = cols.map(([c, reader]) => median(runs.filter((r) => r.format === c.format && r.reader === reader && r.phases).map((r) => r.phases[k])));
      if (vals.every((v) => v == null)) continue;
      console.log(`| ${label} | ${vals.map((v) => (v == null ? "-" : v.toFixed(0))).join(" | ")} |`);
    }
  }
  for (const p of profiles) printProfile(p);
  if (traces.length) {
    const names = wasmFunctionNames(path.join(repo, opt.module, "chunkwise_bg.wasm"));
    for (const t of traces) printTrace(t, names);
  }
}

/**
 * A CDP CPU profile of one run: busy time per phase between the page's marks by kind (wasm,
 * JS, "(program)": V8 and Blink native work such as compiling wasm functions on first call,
 * GC), and the functions of most self time up to the picture. Samples are put on the page's
 * clock by the first sample in benchClockSync (at marks.script).
 */
function printProfile(run) {
  const p = run.prof;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const samples = [];
  let t = p.startTime;
  for (let i = 0; i < p.samples.length; i++) {
    t += p.timeDeltas[i];
    samples.push({ t, dt: (p.timeDeltas[i + 1] ?? 0) / 1000, cf: byId.get(p.samples[i]).callFrame });
  }
  const sync = samples.find((s) => s.cf.functionName === "benchClockSync");
  if (!sync) throw new Error("profile: no sample in benchClockSync");
  const at = (s) => (s.t - sync.t) / 1000 + run.marks.script;
  const kind = (cf) => {
    if (cf.functionName === "(idle)") return "idle";
    if (cf.functionName === "(program)") return "program";
    if (cf.functionName === "(garbage collector)") return "gc";
    if (cf.url.endsWith(".wasm") || /^wasm-function\[/.test(cf.functionName)) return "wasm";
    return "js";
  };
  const phases = [["navigation", 0, run.marks.script], ["page script -> imported", run.marks.script, run.marks.imported],
    ["imported -> ready (init)", run.marks.imported, run.marks.ready], ["ready -> first request", run.marks.ready, run.marks.request],
    ["first request -> opened", run.marks.request, run.marks.opened],
    ["opened -> data (read)", run.marks.opened, run.marks.data], ["data -> drawn", run.marks.data, run.marks.drawn]];
  const kinds = ["wasm", "js", "program", "gc", "idle"];
  console.log(`\nProfile: chunkwise on ${run.format}, one run (CDP sampling profiler, 100 us, main thread); marks (ms since navigation): ${Object.entries(run.marks).sort((a, b) => a[1] - b[1]).map(([k, v]) => `${k} ${v.toFixed(1)}`).join(", ")}`);
  console.log(`| phase | ms | ${kinds.join(" ms | ")} ms |`);
  console.log(`|---|${"---:|".repeat(kinds.length + 1)}`);
  for (const [name, a, b] of phases) {
    const k = Object.fromEntries(kinds.map((x) => [x, 0]));
    for (const s of samples) if (at(s) >= a && at(s) < b) k[kind(s.cf)] += s.dt;
    console.log(`| ${name} | ${(b - a).toFixed(1)} | ${kinds.map((x) => k[x].toFixed(1)).join(" | ")} |`);
  }
  const self = new Map();
  let busy = 0;
  for (const s of samples) {
    if (at(s) < run.marks.script || at(s) >= run.marks.drawn || kind(s.cf) === "idle") continue;
    const file = s.cf.url ? s.cf.url.split("/").pop() : "";
    const key = `${s.cf.functionName || "(anonymous)"}${file ? ` (${file})` : ""}`;
    self.set(key, (self.get(key) ?? 0) + s.dt);
    busy += s.dt;
  }
  console.log(`| function, self time from the page script to the picture | ms | share of ${busy.toFixed(1)} ms busy |`);
  console.log("|---|---:|---:|");
  for (const [k, v] of [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, 20)) {
    console.log(`| ${k.replace(/\|/g, "\\|")} | ${v.toFixed(1)} | ${((100 * v) / busy).toFixed(0)}% |`);
  }
}

/** Function names by index from a wasm module's `name` section (empty when it has none). */
function wasmFunctionNames(file) {
  const b = fs.readFileSync(file);
  const names = new Map();
  let p = 8;
  const leb = () => { let n = 0, shift = 0, c; do { c = b[p++]; n += (c & 0x7f) * 2 ** shift; shift += 7; } while (c & 0x80); return n; };
  while (p < b.length) {
    const id = b[p++];
    const size = leb();
    const end = p + size;
    if (id === 0) {
      const n = leb();
      const name = b.toString("utf8", p, p + n);
      p += n;
      if (name === "name") {
        while (p < end) {
          const sub = b[p++];
          const len = leb();
          const subEnd = p + len;
          if (sub === 1) {
            for (let k = leb(); k > 0; k--) {
              const idx = leb();
              const l = leb();
              names.set(idx, b.toString("utf8", p, p + l));
              p += l;
            }
          }
          p = subEnd;
        }
      }
    }
    p = end;
  }
  return names;
}

/** The crate of a demangled Rust symbol: its first path segment (inside `<...>` for impls). */
function crateOf(name) {
  if (!name) return "(no name section)";
  if (!name.includes("::")) return "(exports, glue)";
  const m = /^[<&\s]*(?:dyn |mut )?([A-Za-z_][A-Za-z0-9_]*)(?:\[[0-9a-f]+\])?(::|$)/.exec(name);
  return m ? m[1] : name.slice(0, 30);
}

/** The wasm functions V8 compiled lazily (on first call) on the page's main thread. */
function printTrace(run, names) {
  const ev = run.traceEvents;
  const markTs = {};
  for (const e of ev) if (e.name && e.name.startsWith("bench:") && markTs[e.name.slice(6)] === undefined) markTs[e.name.slice(6)] = { ts: e.ts, pid: e.pid, tid: e.tid };
  const s = markTs.script;
  if (!s) throw new Error("trace: no bench:script mark");
  const main = ev.filter((e) => e.pid === s.pid && e.tid === s.tid);
  const lazy = main.filter((e) => e.name === "wasm.CompileLazy" && e.ph === "X");
  const size = new Map(main.filter((e) => e.name === "wasm.CompileBaseline").map((e) => [e.args.funcIndex, e.args.bodySize]));
  const order = ["script", "imported", "ready", "request", "opened", "data", "drawn"].filter((k) => markTs[k]);
  const at = (ts) => (ts - s.ts) / 1000 + run.marks.script;
  // The thread's CPU time (tdur): a busy machine stretches the wall time (dur) of many events.
  const cpu = (e) => e.tdur ?? e.dur;
  console.log(`\nTrace: chunkwise on ${run.format}, one run: wasm functions compiled lazily (V8 wasm.CompileLazy: on first call, on the main thread); picture ${run.picture.toFixed(0)} ms`);
  // The main thread's CPU per phase: its top-level tasks' thread time, cut at the marks.
  const tasks = main.filter((e) => e.ph === "X" && e.cat === "toplevel" && e.tdur !== undefined);
  const cpuIn = (a, z) => tasks.reduce((t, e) => {
    const from = Math.max(a, e.ts), to = Math.min(z, e.ts + e.dur);
    return to > from ? t + (cpu(e) * (to - from)) / e.dur : t;
  }, 0) / 1000;
  console.log("| phase | ms | main thread CPU ms | functions | body KB | compile CPU ms |");
  console.log("|---|---:|---:|---:|---:|---:|");
  let total = { n: 0, kb: 0, ms: 0 };
  for (let i = 0; i + 1 < order.length; i++) {
    const a = markTs[order[i]].ts, z = markTs[order[i + 1]].ts;
    const xs = lazy.filter((e) => e.ts >= a && e.ts < z);
    const kb = xs.reduce((t, e) => t + (size.get(e.args.func_index) ?? 0), 0) / 1024;
    const ms = xs.reduce((t, e) => t + cpu(e), 0) / 1000;
    const c = cpuIn(a, z);
    total = { n: total.n + xs.length, kb: total.kb + kb, ms: total.ms + ms, cpu: (total.cpu ?? 0) + c };
    console.log(`| ${order[i]} -> ${order[i + 1]} | ${(at(z) - at(a)).toFixed(0)} | ${c.toFixed(0)} | ${xs.length} | ${kb.toFixed(0)} | ${ms.toFixed(1)} |`);
  }
  console.log(`| page script -> picture | ${(at(markTs[order[order.length - 1]].ts) - at(s.ts)).toFixed(0)} | ${(total.cpu ?? 0).toFixed(0)} | ${total.n} | ${total.kb.toFixed(0)} | ${total.ms.toFixed(1)} |`);
  if (!names.size) return;
  const by = new Map();
  const end = markTs.drawn ? markTs.drawn.ts : Infinity;
  for (const e of lazy) {
    if (e.ts >= end) continue;
    const k = crateOf(names.get(e.args.func_index));
    const o = by.get(k) ?? { n: 0, kb: 0, ms: 0 };
    o.n++; o.kb += (size.get(e.args.func_index) ?? 0) / 1024; o.ms += cpu(e) / 1000;
    by.set(k, o);
  }
  console.log("| crate (lazily compiled to the picture) | functions | body KB | compile CPU ms |");
  console.log("|---|---:|---:|---:|");
  for (const [k, o] of [...by.entries()].sort((x, y) => y[1].ms - x[1].ms).slice(0, 15)) console.log(`| ${k} | ${o.n} | ${o.kb.toFixed(0)} | ${o.ms.toFixed(1)} |`);
  console.log("| largest functions compiled lazily to the picture | body KB | compile CPU ms |");
  console.log("|---|---:|---:|");
  const big = lazy.filter((e) => e.ts < end).sort((x, y) => (size.get(y.args.func_index) ?? 0) - (size.get(x.args.func_index) ?? 0)).slice(0, 8);
  for (const e of big) {
    const n = (names.get(e.args.func_index) ?? `#${e.args.func_index}`).replace(/::h[0-9a-f]{16}$/, "").replace(/\|/g, "\\|");
    console.log(`| ${n} | ${((size.get(e.args.func_index) ?? 0) / 1024).toFixed(0)} | ${(cpu(e) / 1000).toFixed(1)} |`);
  }
}

await main();
