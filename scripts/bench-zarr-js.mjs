// A full read of a 2000x3000 float32 Zarr v3 array by chunkwise (the wasm package) and by
// zarrita.js, side by side on the same store and the same `chunkwise serve`, in Node and in
// headless Chromium, cold and warm, with no added latency and with --latency-ms 40.
//
// Stores, written at run time by the pinned zarr-python (`gen_zarr.py --bench-js`) from a
// seeded array: default.zarr (zarr-python's defaults: chunks 250x750, compressor zstd level 0)
// and blosc.zarr (blosc zstd clevel 5, shuffle). Every read's values are checked: the SHA-256
// of the result's bytes against the one the generator wrote (expected.json).
//
//   cold  Node: a new process per run, timed from open to the values (module load excluded);
//         Chromium: a freshly loaded page per run, the same span.
//   warm  the same read again on the same handle (chunkwise: from its memory cache; zarrita
//         has no cache and fetches again).
//   reopen then a new handle (no cache) in the same process or page: a cold read whose
//         engine has warmed up (its wasm or JS already compiled and tiered up), so cold minus
//         reopen is about the one-time compilation a first read pays.
// ms is the median of RUNS runs (CHUNKWISE_BENCH_RUNS, default 5); requests and bytes are the
// server's count of the run; "CPU ms" the process's CPU time (user + system, every thread)
// over the same span, Node only (steadier than ms on a busy machine); "wasm MB" is wasmMemoryBytes() after the read (wasm memory only
// grows, so this is its peak); "JS MB" is the peak of heapUsed + arrayBuffers in Node
// (process.memoryUsage(), sampled every 5 ms and at the end), and V8's usedJSHeapSize in
// Chromium (performance.memory, which leaves ArrayBuffers out); "vs zarrita" is the ratio of
// the medians in the same host, state, latency and store.
//
// Usage: node scripts/bench-zarr-js.mjs  (after scripts/build-pkg.sh and npm ci in tests/e2e)
//   CHUNKWISE_BIN     the CLI serving the stores (default target/release/chunkwise)
//   CHUNKWISE_PKG     the package directory inside the repository (default pkg)
//   CHUNKWISE_BENCH_RUNS, CHUNKWISE_BENCH_HOSTS ("node,chromium"), CHUNKWISE_BENCH_STORES
//   ("default,blosc"; also "raw", no compressor), CHUNKWISE_BENCH_LATENCIES ("0,40"), CHUNKWISE_BENCH_JSON=1 (JSON rows)

import { fork, spawnSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, "..");
const pkgDir = path.resolve(repo, process.env.CHUNKWISE_PKG || "pkg");
const STATES = ["cold", "warm", "reopen"];
const zarritaUrl = pathToFileURL(path.join(repo, "tests/e2e/node_modules/zarrita/dist/src/index.js")).href;

if (process.argv[2] === "--child") {
  await child();
} else {
  await main();
}

/** One Node run, driven by the parent over IPC: "cold", then "warm", then exit. */
async function child() {
  const { reader, url, array } = JSON.parse(process.argv[3]);
  let peakJs = 0;
  const sample = () => {
    const m = process.memoryUsage();
    peakJs = Math.max(peakJs, m.heapUsed + m.arrayBuffers);
  };
  let read;
  let wasmBytes = () => null;
  if (reader === "chunkwise") {
    const { createRequire } = await import("node:module");
    const cw = createRequire(import.meta.url)(path.join(pkgDir, "node/chunkwise.js"));
    wasmBytes = () => cw.wasmMemoryBytes();
    let arr = null;
    read = async (fresh) => {
      if (fresh) {
        arr.close(); // its cache goes back to the allocator
        arr = null;
      }
      arr ??= await cw.RemoteArray.open(url, { path: array });
      return (await arr.read("...")).data;
    };
  } else {
    const zarr = await import(zarritaUrl);
    let arr = null;
    read = async (fresh) => {
      if (fresh) arr = null;
      arr ??= await zarr.open(zarr.root(new zarr.FetchStore(url)).resolve(array.replace(/^\//, "")), { kind: "array" });
      return (await zarr.get(arr, null)).data;
    };
  }
  const once = async (fresh) => {
    sample();
    const timer = setInterval(sample, 5);
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    const data = await read(fresh);
    const ms = performance.now() - t0;
    const c = process.cpuUsage(c0);
    sample();
    clearInterval(timer);
    const sha = crypto.createHash("sha256").update(new Uint8Array(data.buffer, data.byteOffset, data.byteLength)).digest("hex");
    return { ms, cpu: (c.user + c.system) / 1000, sha, wasm: wasmBytes(), js: peakJs };
  };
  process.on("message", async (m) => {
    let answer;
    try {
      answer = { ok: await once(m === "reopen") };
    } catch (e) {
      answer = { error: String((e && e.stack) || e) };
    }
    // Idle keep-alive sockets must not hold the process after the last read.
    process.send(answer, () => { if (m === "reopen" || answer.error) process.exit(0); });
  });
  process.send({ ready: true });
}

function nodeRun(reader, url, array) {
  const p = fork(fileURLToPath(import.meta.url), ["--child", JSON.stringify({ reader, url, array })],
    { stdio: ["ignore", "inherit", "inherit", "ipc"] });
  const queue = [];
  let wake = null;
  p.on("message", (m) => { queue.push(m); wake?.(); });
  p.on("exit", (code) => { queue.push({ exit: code }); wake?.(); });
  const next = async () => {
    while (!queue.length) await new Promise((r) => (wake = r));
    wake = null;
    const m = queue.shift();
    if (m.error) throw new Error(`${reader}: ${m.error}`);
    if (m.exit !== undefined) throw new Error(`${reader}: child exited (${m.exit})`);
    return m;
  };
  return {
    async start() { await next(); },
    async step(what) { p.send(what); return (await next()).ok; },
    done: new Promise((r) => p.once("exit", r)),
  };
}

async function main() {
  const { startServer, chromiumPath } = await import("../tests/e2e/lib.mjs");
  const RUNS = Number(process.env.CHUNKWISE_BENCH_RUNS || 5);
  const HOSTS = (process.env.CHUNKWISE_BENCH_HOSTS || "node,chromium").split(",");
  const STORES = (process.env.CHUNKWISE_BENCH_STORES || "default,blosc").split(",");
  const LATENCIES = (process.env.CHUNKWISE_BENCH_LATENCIES || "0,40").split(",").map(Number);
  for (const [host, f] of [["node", "node/chunkwise.js"], ["chromium", "web/chunkwise.js"]]) {
    if (HOSTS.includes(host) && !fs.existsSync(path.join(pkgDir, f))) throw new Error(`${pkgDir}/${f} is missing: run scripts/build-pkg.sh`);
  }
  if (!fs.existsSync(fileURLToPath(zarritaUrl))) throw new Error("zarrita is missing: run npm ci in tests/e2e");
  if (path.relative(repo, pkgDir).startsWith("..")) throw new Error(`CHUNKWISE_PKG must be inside ${repo} (the page server's root)`);

  // The stores, once per machine (the generator is deterministic).
  const dir = path.join(os.tmpdir(), "chunkwise-bench-zarr-js");
  const expectedFile = path.join(dir, "expected.json");
  if (!fs.existsSync(expectedFile) || STORES.some((st) => !fs.existsSync(path.join(dir, `${st}.zarr`)))) {
    fs.mkdirSync(dir, { recursive: true });
    const python = path.join(process.env.CHUNKWISE_VENV || path.join(os.homedir(), ".cache/chunkwise/venv"), "bin/python");
    const r = spawnSync(python, [path.join(repo, "tests/fixtures/gen_zarr.py"), "--bench-js", dir], { encoding: "utf8", timeout: 300000 });
    if (r.status !== 0) throw new Error(`gen_zarr.py --bench-js failed: ${r.stderr}`);
  }
  const expected = JSON.parse(fs.readFileSync(expectedFile, "utf8"));

  const servers = {};
  for (const l of LATENCIES) servers[l] = await startServer({ root: dir, latencyMs: l });
  const pageServer = HOSTS.includes("chromium") ? await startServer({ root: repo, quiet: true }) : null;
  const counted = (server, since) => {
    const hits = server.log.slice(since).filter((h) => h.method !== "OPTIONS");
    return { requests: hits.length, bytes: hits.reduce((s, h) => s + (h.method === "HEAD" ? 0 : h.bytes), 0) };
  };

  let browser = null;
  const runs = []; // { host, store, latency, reader, state, ms, requests, bytes, wasm, js, sha }
  const record = (k, state, r, c) => {
    if (r.sha !== expected.sha256) throw new Error(`${k.reader} ${k.host} ${k.store} ${state}: checksum ${r.sha}, generator wrote ${expected.sha256}`);
    runs.push({ ...k, state, ms: r.ms, cpu: r.cpu ?? null, wasm: r.wasm, js: r.js, ...c });
  };
  try {
    for (const host of HOSTS) {
      let page = null;
      if (host === "chromium") {
        const { chromium } = await import(pathToFileURL(path.join(repo, "tests/e2e/node_modules/playwright-core/index.mjs")).href);
        browser = await chromium.launch({
          executablePath: chromiumPath, headless: true, timeout: 30000,
          args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--enable-precise-memory-info",
            "--disable-background-networking", "--disable-component-update", "--disable-sync"],
        });
      }
      for (const store of STORES) {
        for (const latency of LATENCIES) {
          const server = servers[latency];
          const url = `${server.url}${store}.zarr`;
          for (let i = 0; i < RUNS; i++) {
            // Readers alternate within a run so a busy machine slows both alike.
            for (const reader of ["chunkwise", "zarrita"]) {
              const k = { host, store, latency, reader };
              if (host === "node") {
                const run = nodeRun(reader, url, expected.path);
                await run.start();
                let since = server.log.length;
                record(k, "cold", await run.step("cold"), counted(server, since));
                since = server.log.length;
                record(k, "warm", await run.step("warm"), counted(server, since));
                since = server.log.length;
                record(k, "reopen", await run.step("reopen"), counted(server, since));
                await run.done;
              } else {
                page = await browser.newPage();
                page.on("pageerror", (e) => console.error("page error:", e.message));
                await page.goto(`${pageServer.url}tests/e2e/bench-zarr-page.html?pkg=${encodeURIComponent(path.relative(repo, pkgDir))}`);
                await page.waitForFunction(() => window.benchZarr !== undefined);
                for (const state of STATES) {
                  const since = server.log.length;
                  const r = await page.evaluate(({ reader, url, array, fresh }) => window.benchZarr.read(reader, url, array, fresh),
                    { reader, url, array: expected.path, fresh: state === "reopen" });
                  if (r.error) throw new Error(`${reader} in Chromium: ${r.error}`);
                  record(k, state, r, counted(server, since));
                }
                await page.close();
              }
            }
          }
        }
      }
      if (browser) { await browser.close(); browser = null; }
    }
  } finally {
    if (browser) await browser.close();
    for (const s of Object.values(servers)) await s.stop();
    if (pageServer) await pageServer.stop();
  }

  const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2; };
  const rows = [];
  for (const host of HOSTS) for (const store of STORES) for (const state of STATES) for (const latency of LATENCIES) for (const reader of ["chunkwise", "zarrita"]) {
    const rs = runs.filter((r) => r.host === host && r.store === store && r.state === state && r.latency === latency && r.reader === reader);
    if (!rs.length) continue;
    rows.push({
      reader, host, store, state, latency, runs: rs.length, ms: median(rs.map((r) => r.ms)),
      cpu: rs[0].cpu == null ? null : median(rs.map((r) => r.cpu)),
      requests: median(rs.map((r) => r.requests)), bytes: median(rs.map((r) => r.bytes)),
      wasmMB: rs[0].wasm == null ? null : Math.max(...rs.map((r) => r.wasm)) / 2 ** 20,
      jsMB: Math.max(...rs.map((r) => r.js)) / 2 ** 20,
    });
  }
  for (const r of rows) {
    const z = rows.find((x) => x.reader === "zarrita" && x.host === r.host && x.store === r.store && x.state === r.state && x.latency === r.latency);
    r.vsZarrita = z && z.ms > 0 ? r.ms / z.ms : null;
  }
  if (process.env.CHUNKWISE_BENCH_JSON) {
    for (const r of rows) console.log(JSON.stringify(r));
    return;
  }
  const s = expected.stores;
  console.log(`Full read of ${expected.path} (${expected.shape.join("x")} ${expected.dtype}, ${expected.generator}); median of ${RUNS} runs; every read's SHA-256 matched the generator's`);
  for (const st of STORES) console.log(`  ${st}.zarr: chunks ${s[`${st}.zarr`].chunks.join("x")}, compressors ${JSON.stringify(s[`${st}.zarr`].compressors)}`);
  console.log("| reader | host | store | state | latency ms | ms | CPU ms | requests | bytes | wasm MB | JS MB | vs zarrita |");
  console.log("|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|");
  for (const r of rows) {
    console.log(`| ${r.reader} | ${r.host} | ${r.store} | ${r.state} | ${r.latency} | ${r.ms.toFixed(0)} | ${r.cpu == null ? "-" : r.cpu.toFixed(0)} | ${r.requests} | ${r.bytes} | ${r.wasmMB == null ? "-" : r.wasmMB.toFixed(1)} | ${r.jsMB.toFixed(1)} | ${r.vsZarrita == null ? "-" : r.vsZarrita.toFixed(2) + "x"} |`);
  }
}
