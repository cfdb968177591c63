#!/usr/bin/env node
// Decode speed of the wasm build: Blosc2 chunks decoded with `decodeChunk` of pkg/node.
//
// Usage: node scripts/bench-wasm-decode.mjs [--total-mib N] [--json] [--pkg DIR] [--chromium] CHUNK...
//   CHUNK      a file holding one Blosc2 chunk (or a directory: its *.chunk files, sorted)
//   --total-mib  decoded output per file to time, MiB (default 16, at least), in 5 rounds of
//                at least 40 ms: the fastest round gives MB/s (after 0.3 s of warm-up decodes)
//   --json     one JSON object per file ({file, nbytes, cbytes, mbps, mbps_into, buffer_mbps})
//              instead of a table
//   --pkg      the wasm-pack nodejs build (default pkg/node of this checkout)
//   --chromium also the web build (DIR/../web) in headless Chromium (playwright-core of tests/e2e,
//              $CHROMIUM or /usr/bin/chromium), the same timing in the page: chromium_mbps and
//              chromium_into_mbps and chromium_buffer_mbps (the page and files are served to
//              it by request interception)
// If `X.raw` exists beside `X.chunk`, the decoded bytes must equal it (a benchmark of wrong
// output is void): the script exits with an error otherwise.
// MB/s counts 10^6 bytes of decoded output per second, including the copy of the result out
// of wasm memory into a JS Uint8Array (what a caller of `decodeChunk` gets): a new one per
// chunk for `decodeChunk` (mbps), one reused buffer for `decodeChunkInto` (mbps_into; null
// for a package without it). buffer_mbps times what `decodeChunk` adds to a decode, without
// decoding: the decoded size copied into a new Uint8Array (`slice()`, as its glue copies the
// result out of wasm memory), so its ceiling. In Node that costs 0.6 to 1.1 ms per 4 MiB
// (allocation, page faults, collection) where a copy into a reused buffer (`decodeChunkInto`)
// costs about 0.09 ms.

import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
let totalMiB = 16;
let json = false;
let pkg = path.join(repo, "pkg/node");
let chromium = false;
const inputs = [];
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  if (a === "--total-mib") totalMiB = Number(argv[++i]);
  else if (a === "--json") json = true;
  else if (a === "--pkg") pkg = path.resolve(argv[++i]);
  else if (a === "--chromium") chromium = true;
  else if (a === "-h" || a === "--help") {
    const lines = fs.readFileSync(fileURLToPath(import.meta.url), "utf8").split("\n").slice(1);
    console.log(lines.slice(0, lines.findIndex((l) => !l.startsWith("//"))).join("\n"));
    process.exit(0);
  } else if (a.startsWith("-")) {
    console.error(`bench-wasm-decode: unknown option ${a}`);
    process.exit(2);
  } else inputs.push(a);
}
if (!(totalMiB > 0) || inputs.length === 0) {
  console.error("usage: bench-wasm-decode.mjs [--total-mib N] [--json] [--pkg DIR] [--chromium] CHUNK...");
  process.exit(2);
}
const glue = path.join(pkg, "chunkwise.js");
if (!fs.existsSync(glue)) {
  console.error(`bench-wasm-decode: ${glue} is missing: build it with scripts/build-pkg.sh`);
  process.exit(1);
}
const { decodeChunk, decodeChunkInto } = createRequire(import.meta.url)(glue);

const files = inputs.flatMap((p) => fs.statSync(p).isDirectory()
  ? fs.readdirSync(p).filter((f) => f.endsWith(".chunk")).sort().map((f) => path.join(p, f))
  : [p]);

/** The total is timed in this many rounds; the fastest counts (the machine may be shared). */
const ROUNDS = 5;
const WARMUP_NS = 300_000_000n;
/** The shortest round: with 16 MiB in 5 rounds a round was one 4 MiB decode of a few ms, and
 *  one garbage collection (a new 4 MiB buffer per `decodeChunk` call) moved a row by 2x. */
const MIN_ROUND_NS = 40_000_000n;
/** `src` (the decoded size) copied into a new buffer, as `decodeChunk` returns one per call,
 *  the result dropped as the timed decodes drop theirs: the same text runs in Node and in
 *  the page (`Function`), so both time the same thing. (A `new Uint8Array(n)` that is only
 *  measured is not a ceiling: an optimising compiler may drop or defer its allocation.) */
const NEW_BUFFER = "return src.slice().length;";
const newBuffer = new Function("src", NEW_BUFFER);
const rows = [];
for (const file of files) {
  const chunk = new Uint8Array(fs.readFileSync(file));
  const first = decodeChunk(chunk); // also the warm-up
  const rawFile = file.replace(/\.chunk$/, ".raw");
  if (rawFile !== file && fs.existsSync(rawFile)) {
    const raw = fs.readFileSync(rawFile);
    if (!Buffer.from(first.buffer, first.byteOffset, first.byteLength).equals(raw)) {
      console.error(`bench-wasm-decode: ${file}: decoded bytes differ from ${rawFile}`);
      process.exit(1);
    }
  }
  const nbytes = first.length;
  // Warm-up: V8 runs wasm first as baseline (Liftoff) code and tiers hot functions up to
  // optimised code while they run; decode for a while before timing the steady state.
  const warmEnd = process.hrtime.bigint() + WARMUP_NS;
  for (let i = 0; i < 3 || process.hrtime.bigint() < warmEnd; i++) decodeChunk(chunk);
  const reps = Math.max(ROUNDS, Math.ceil((totalMiB * 1048576) / Math.max(nbytes, 1)));
  const perRound = Math.ceil(reps / ROUNDS);
  /** MB/s of the fastest of ROUNDS rounds of `decode` (returns a length): a round makes at
   *  least perRound calls and lasts at least MIN_ROUND_NS. */
  const time = (decode) => {
    let best = 0;
    for (let r = 0; r < ROUNDS; r++) {
      let sink = 0;
      let calls = 0;
      const t0 = process.hrtime.bigint();
      let elapsed = 0n;
      while (calls < perRound || elapsed < MIN_ROUND_NS) {
        sink += decode();
        calls++;
        elapsed = process.hrtime.bigint() - t0;
      }
      if (sink !== calls * nbytes) throw new Error(`${file}: decoded size changed between runs`);
      best = Math.max(best, (calls * nbytes) / (Number(elapsed) / 1e9) / 1e6);
    }
    return best;
  };
  const mbps = time(() => decodeChunk(chunk).length);
  let mbpsInto = null;
  if (decodeChunkInto) {
    const into = new Uint8Array(nbytes);
    decodeChunkInto(chunk, into);
    if (!Buffer.from(into.buffer).equals(Buffer.from(first.buffer, first.byteOffset, first.byteLength))) {
      console.error(`bench-wasm-decode: ${file}: decodeChunkInto wrote other bytes than decodeChunk`);
      process.exit(1);
    }
    const warm = process.hrtime.bigint() + WARMUP_NS;
    for (let i = 0; i < 3 || process.hrtime.bigint() < warm; i++) decodeChunkInto(chunk, into);
    mbpsInto = time(() => decodeChunkInto(chunk, into));
  }
  const src = new Uint8Array(nbytes).fill(0x5a);
  const bufferMbps = time(() => newBuffer(src));
  rows.push({ file: path.basename(file), nbytes, cbytes: chunk.length, mbps, mbps_into: mbpsInto,
    buffer_mbps: bufferMbps });
}

if (chromium) await inChromium(rows);

/**
 * The same measurement of the web build in a headless Chromium page: its module, the chunks
 * and their .raw files are answered from here (page.route), so no server runs. Fills
 * chromium_mbps and chromium_into_mbps of each row; exits with an error when the page's
 * decoded bytes differ from the .raw file.
 */
async function inChromium(rows) {
  const web = path.join(path.dirname(pkg), "web");
  if (!fs.existsSync(path.join(web, "chunkwise.js"))) {
    console.error(`bench-wasm-decode: ${web}/chunkwise.js is missing: build it with scripts/build-pkg.sh`);
    process.exit(1);
  }
  const { launchChromium } = await import("../tests/e2e/lib.mjs");
  const browser = await launchChromium();
  try {
    const page = await browser.newPage();
    const base = "http://bench.invalid/";
    const types = { ".js": "text/javascript", ".wasm": "application/wasm", ".html": "text/html" };
    const byName = new Map(files.map((f) => [path.basename(f), f]));
    await page.route(`${base}**`, (route) => {
      const rel = decodeURIComponent(new URL(route.request().url()).pathname.slice(1));
      let file = null;
      if (rel === "") return route.fulfill({ body: "<!doctype html><title>decode</title>", contentType: "text/html" });
      if (rel.startsWith("chunks/")) {
        const name = rel.slice("chunks/".length);
        const chunk = byName.get(name.replace(/\.raw$/, ".chunk"));
        if (chunk) file = name.endsWith(".raw") ? chunk.replace(/\.chunk$/, ".raw") : chunk;
      } else if (rel.startsWith("web/")) {
        const f = path.resolve(web, rel.slice("web/".length));
        if (f.startsWith(web + path.sep)) file = f;
      }
      if (!file || !fs.existsSync(file)) return route.fulfill({ status: 404, body: "" });
      return route.fulfill({ body: fs.readFileSync(file), contentType: types[path.extname(file)] ?? "application/octet-stream" });
    });
    await page.goto(base);
    const got = await page.evaluate(async ({ base, names, totalMiB, rounds, warmupMs, minRoundMs, newBufferText }) => {
      const cw = await import(`${base}web/chunkwise.js`);
      const newBuffer = new Function("src", newBufferText);
      await cw.default();
      const bytes = async (u) => new Uint8Array(await (await fetch(u)).arrayBuffer());
      const out = [];
      for (const name of names) {
        const chunk = await bytes(`${base}chunks/${name}`);
        const first = cw.decodeChunk(chunk);
        const raw = await bytes(`${base}chunks/${name.replace(/\.chunk$/, ".raw")}`);
        if (raw.length && (raw.length !== first.length || raw.some((b, i) => b !== first[i])))
          return { error: `${name}: decoded bytes differ from its .raw file` };
        const nbytes = first.length;
        const perRound = Math.ceil(Math.max(rounds, Math.ceil((totalMiB * 1048576) / Math.max(nbytes, 1))) / rounds);
        const time = (decode) => {
          const warmEnd = performance.now() + warmupMs;
          for (let i = 0; i < 3 || performance.now() < warmEnd; i++) decode();
          let best = 0;
          for (let r = 0; r < rounds; r++) {
            let calls = 0;
            const t0 = performance.now();
            let ms = 0;
            while (calls < perRound || ms < minRoundMs) {
              decode();
              calls++;
              ms = performance.now() - t0;
            }
            best = Math.max(best, (calls * nbytes) / (ms / 1e3) / 1e6);
          }
          return best;
        };
        const into = new Uint8Array(nbytes);
        const src = new Uint8Array(nbytes).fill(0x5a);
        out.push({
          name,
          mbps: time(() => cw.decodeChunk(chunk).length),
          mbps_into: time(() => cw.decodeChunkInto(chunk, into)),
          buffer_mbps: time(() => newBuffer(src)),
        });
      }
      return { out };
    }, { base, names: rows.map((r) => r.file), totalMiB, rounds: ROUNDS, warmupMs: Number(WARMUP_NS) / 1e6,
      minRoundMs: Number(MIN_ROUND_NS) / 1e6, newBufferText: NEW_BUFFER });
    if (got.error) {
      console.error(`bench-wasm-decode: in Chromium: ${got.error}`);
      process.exit(1);
    }
    for (const o of got.out) {
      const r = rows.find((x) => x.file === o.name);
      r.chromium_mbps = o.mbps;
      r.chromium_into_mbps = o.mbps_into;
      r.chromium_buffer_mbps = o.buffer_mbps;
    }
  } finally {
    await browser.close();
  }
}

if (json) {
  for (const r of rows) console.log(JSON.stringify(r));
} else {
  const c = chromium ? " Chromium MB/s | Chromium into MB/s | Chromium new buffer MB/s |" : "";
  console.log(`| chunk | decoded bytes | cratio | wasm MB/s | wasm into MB/s | new buffer MB/s |${c}\n|---|---:|---:|---:|---:|---:|${chromium ? "---:|---:|---:|" : ""}`);
  for (const r of rows) {
    const into = r.mbps_into === null ? "-" : r.mbps_into.toFixed(0);
    const cc = chromium
      ? ` ${r.chromium_mbps.toFixed(0)} | ${r.chromium_into_mbps.toFixed(0)} | ${r.chromium_buffer_mbps.toFixed(0)} |`
      : "";
    console.log(`| ${r.file} | ${r.nbytes} | ${(r.nbytes / r.cbytes).toFixed(2)} | ${r.mbps.toFixed(0)} | ${into} | ${r.buffer_mbps.toFixed(0)} |${cc}`);
  }
}
