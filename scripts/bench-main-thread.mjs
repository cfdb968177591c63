#!/usr/bin/env node
// Main-thread responsiveness while a page reads 64 MiB, in headless Chromium: the same whole
// read of a 4096 x 2048 float64 array (512 x 512 chunks; .b2nd, HDF5 with shuffle + gzip 1,
// Zarr v3 with zstd: the arrays of scripts/bench-read.sh, written by
// scripts/bench_read_fixtures.py) with the main entry (pkg/web: fetch and decode on the page)
// and with `chunkwise/worker` (pkg/worker: in a dedicated worker, the result transferred),
// side by side in one browser, against `chunkwise serve` on loopback.
// Per format and entry, the median over --runs N (default 3) of:
//   read ms        open + whole read, module start excluded (done before)
//   longest task   the longest "longtask" entry (PerformanceObserver, tasks over 50 ms)
//   tasks, total   how many long tasks, and their summed time
//   longest gap    the longest wait between two ticks of a setTimeout(0) heartbeat: how long
//                  a click or a frame would have waited at worst
// Values are checked: the 512 x 512 window [1000:1512, 700:1212] of each result equals
// window.npy of the generator. A benchmark printing a table, not a test.
// Needs pkg/ (scripts/build-pkg.sh), the CLI (CHUNKWISE_BIN, else target/release/chunkwise)
// and the venv (scripts/setup.sh python).
// Usage: node scripts/bench-main-thread.mjs [--runs N] [--latency-ms MS] [--formats b2nd,hdf5,zarr]
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { launchChromium, readNpy, repo, startServer } from "../tests/e2e/lib.mjs";

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : dflt;
};
const runs = Number(opt("--runs", "3"));
const latencyMs = Number(opt("--latency-ms", "0"));
const formats = opt("--formats", "b2nd,hdf5,zarr").split(",");
const SOURCES = {
  b2nd: { file: "big.b2nd" },
  hdf5: { file: "big.h5", path: "/data" },
  zarr: { file: "big.zarr" },
};
const WINDOW = [1000, 1512, 700, 1212];

for (const f of ["pkg/web/chunkwise.js", "pkg/worker/index.js"]) {
  if (!fs.existsSync(path.join(repo, f))) throw new Error(`${f} is missing: run scripts/build-pkg.sh`);
}
const dir = path.join(process.env.CARGO_TARGET_DIR ? path.resolve(process.env.CARGO_TARGET_DIR) : path.join(repo, "target"), "bench-read");
const venv = process.env.CHUNKWISE_VENV || path.join(os.homedir(), ".cache/chunkwise/venv");
const gen = spawnSync(path.join(venv, "bin/python"), [path.join(repo, "scripts/bench_read_fixtures.py"), dir],
  { encoding: "utf8", stdio: ["ignore", "inherit", "inherit"] });
if (gen.status !== 0) throw new Error(`bench_read_fixtures.py failed (${gen.status})`);
const expected = readNpy(path.join(dir, "window.npy")).values;

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const [pages, data] = await Promise.all([startServer({ quiet: true }), startServer({ root: dir, quiet: true, latencyMs })]);
const browser = await launchChromium();
const rows = [];
try {
  // Each run in a new context (its own renderer: no garbage or compiled code of the last run).
  const fresh = async () => {
    const ctx = await browser.newContext();
    const page = await ctx.newPage();
    page.on("pageerror", (e) => console.error("page error:", e.message));
    await page.goto(`${pages.url}scripts/bench-main-thread.html`);
    await page.waitForFunction(() => window.bench !== undefined, null, { timeout: 30000 });
    return { ctx, page };
  };
  for (const format of formats) {
    const s = SOURCES[format];
    if (!s) throw new Error(`unknown format ${format}`);
    const got = { main: [], worker: [] };
    // Alternated, so that both entries see the same machine load.
    for (let i = 0; i < runs; i++) {
      for (const entry of ["main", "worker"]) {
        const { ctx, page } = await fresh();
        const r = await page.evaluate(({ entry, url, p, win }) => window.bench.run(entry, url, p, win),
          { entry, url: data.url + s.file, p: s.path ?? null, win: WINDOW });
        await ctx.close();
        const ok = r.window.length === expected.length && r.window.every((v, k) => v === expected[k]);
        if (!ok) throw new Error(`${format} ${entry}: the window's values differ from window.npy`);
        if (r.bytes !== 64 << 20) throw new Error(`${format} ${entry}: ${r.bytes} bytes read, not 64 MiB`);
        got[entry].push(r);
      }
    }
    for (const entry of ["main", "worker"]) {
      const g = got[entry];
      const m = (k) => median(g.map((r) => r[k]));
      rows.push({ format, entry: entry === "main" ? "main entry" : "chunkwise/worker", ms: m("ms"),
        longest: m("longestTaskMs"), tasks: m("longTasks"), total: m("longTaskMs"), gap: m("longestGapMs") });
    }
  }
} finally {
  await browser.close();
  await Promise.all([pages.stop(), data.stop()]);
}

const chrome = await (async () => {
  const r = spawnSync(process.env.CHROMIUM || "/usr/bin/chromium", ["--version"], { encoding: "utf8" });
  return (r.stdout || "").trim();
})();
console.log(`main-thread responsiveness, whole read of 64 MiB (4096 x 2048 <f8, 512 x 512 chunks), headless ${chrome}, ` +
  `latency ${latencyMs} ms, median of ${runs} runs (each in a new context); values checked; ` +
  `${os.cpus().length} cores, load average ${os.loadavg().map((x) => x.toFixed(1)).join(" ")}`);
const head = ["format", "entry", "read ms", "longest task ms", "long tasks", "long-task total ms", "longest gap ms", "gap vs main"];
console.log(`| ${head.join(" | ")} |`);
console.log(`|${head.map((h, i) => (i < 2 ? "---" : "---:")).join("|")}|`);
for (const r of rows) {
  const main = rows.find((x) => x.format === r.format && x.entry === "main entry");
  const ratio = main.gap > 0 ? (r.gap / main.gap).toFixed(3) : "-";
  console.log(`| ${r.format} | ${r.entry} | ${r.ms.toFixed(0)} | ${r.longest.toFixed(0)} | ${r.tasks} | ` +
    `${r.total.toFixed(0)} | ${r.gap.toFixed(1)} | ${ratio}x |`);
}
