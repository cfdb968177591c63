#!/usr/bin/env node
// Read speed of the wasm build: `RemoteArray.read("...")` of whole `.b2nd` arrays, the chunks
// already in the payload cache (MEMORY), so that what is timed is the read pipeline's own work:
// looking the chunks up, decoding them, copying them into the result and the result out of
// wasm memory. Two builds side by side in one run (`--pkg` twice: rounds alternate between
// them), in Node and, with --chromium, in a headless Chromium page.
//
// Each read also into one typed array allocated once (`readInto`: the *_into columns), which
// spares the new result buffer per read.
//
// Usage: node scripts/bench-wasm-read.mjs [--pkg DIR]... [--rounds N] [--chromium] [--json] FILE...
//   FILE       a .b2nd file (served from its directory by the native `chunkwise serve`)
//   --pkg      a package directory holding node/ and web/ (default pkg/ of this checkout);
//              give it twice to compare two builds
//   --rounds   timed rounds per build and file (default 7): each reads the array at least
//              3 times and for at least 150 ms; the fastest round gives MB/s of result
//   --chromium also in headless Chromium (playwright-core of tests/e2e, the web build)
//   --json     one JSON object per row instead of a table
// Every build's result must have the same bytes as the first build's, and as FILE's .npy
// beside it when there is one (a benchmark of wrong output is void): exits with an error
// otherwise.

import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const pkgs = [];
let rounds = 7;
let chromium = false;
let json = false;
const files = [];
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  if (a === "--pkg") pkgs.push(path.resolve(argv[++i]));
  else if (a === "--rounds") rounds = Number(argv[++i]);
  else if (a === "--chromium") chromium = true;
  else if (a === "--json") json = true;
  else if (a === "-h" || a === "--help") {
    const lines = fs.readFileSync(fileURLToPath(import.meta.url), "utf8").split("\n").slice(1);
    console.log(lines.slice(0, lines.findIndex((l) => !l.startsWith("//"))).join("\n"));
    process.exit(0);
  } else if (a.startsWith("-")) {
    console.error(`bench-wasm-read: unknown option ${a}`);
    process.exit(2);
  } else files.push(path.resolve(a));
}
if (pkgs.length === 0) pkgs.push(path.join(repo, "pkg"));
if (!(rounds > 0) || files.length === 0) {
  console.error("usage: bench-wasm-read.mjs [--pkg DIR]... [--rounds N] [--chromium] [--json] FILE...");
  process.exit(2);
}
for (const p of pkgs) {
  for (const sub of chromium ? ["node", "web"] : ["node"]) {
    if (!fs.existsSync(path.join(p, sub, "chunkwise.js"))) {
      console.error(`bench-wasm-read: ${p}/${sub}/chunkwise.js is missing: build it with scripts/build-pkg.sh`);
      process.exit(1);
    }
  }
}

const { startServer, readNpy, launchChromium } = await import("../tests/e2e/lib.mjs");
const MIN_ROUND_MS = 150;
const MIN_READS = 3;
const bytesOf = (a) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);

/** The timing loop, as text so that Node and the page run the same code: `read()` resolves
 *  with a result's byte length; returns the fastest round's MB/s (10^6 bytes of result per
 *  second). Rounds alternate over `reads` (one per build). */
const TIME = `return (async () => {
  const best = reads.map(() => 0);
  for (let r = 0; r < rounds; r++) {
    for (let k = 0; k < reads.length; k++) {
      let n = 0, bytes = 0;
      const t0 = performance.now();
      while (n < minReads || performance.now() - t0 < minRoundMs) { bytes += await reads[k](); n++; }
      best[k] = Math.max(best[k], bytes / ((performance.now() - t0) / 1000) / 1e6);
    }
  }
  return best;
})();`;
const timeReads = new Function("reads", "rounds", "minReads", "minRoundMs", TIME);

const rows = [];
const byDir = new Map();
for (const f of files) byDir.set(path.dirname(f), [...(byDir.get(path.dirname(f)) ?? []), f]);
for (const [dir, list] of byDir) {
  const server = await startServer({ root: dir, quiet: true });
  try {
    for (const file of list) {
      const url = server.url + encodeURIComponent(path.basename(file));
      const npy = file.replace(/\.b2nd$/, ".npy");
      const want = fs.existsSync(npy) ? bytesOf(readNpy(npy).raw) : null;
      // Node: every build opens the array and reads it once (from the server), then rounds.
      const arrays = [];
      let reference = null;
      for (const p of pkgs) {
        const cw = createRequire(import.meta.url)(path.join(p, "node/chunkwise.js"));
        const arr = await cw.RemoteArray.open(url, { cache: "memory" });
        const first = bytesOf((await arr.read("...")).data);
        if (want && !first.equals(want)) fail(`${file}: ${p}'s read differs from ${npy}`);
        if (reference && !first.equals(reference)) fail(`${file}: ${p}'s read differs from ${pkgs[0]}'s`);
        reference ??= Buffer.from(first);
        arrays.push(arr);
      }
      const node = await timeReads(arrays.map((arr) => async () => (await arr.read("...")).data.byteLength),
        rounds, MIN_READS, MIN_ROUND_MS);
      // readInto: the same reads into one array per build, allocated once.
      const targets = arrays.map(() => new Uint8Array(reference.length));
      const into = await timeReads(arrays.map((arr, k) => async () => {
        const t = targetOf(arr, targets[k]);
        return (await arr.readInto(t, "...")).data.byteLength;
      }), rounds, MIN_READS, MIN_ROUND_MS);
      for (const [k, t] of targets.entries()) {
        if (!bytesOf(t).equals(reference)) fail(`${file}: ${pkgs[k]}'s readInto differs from its read`);
      }
      for (const arr of arrays) arr.close();
      const chrome = chromium ? await inChromium(file, reference) : null;
      pkgs.forEach((p, k) => rows.push({
        file: path.basename(file), build: path.relative(process.cwd(), p) || ".", bytes: reference.length,
        node_mbps: node[k], node_into_mbps: into[k], chromium_mbps: chrome ? chrome.read[k] : null,
        chromium_into_mbps: chrome ? chrome.into[k] : null,
      }));
    }
  } finally {
    await server.stop();
  }
}

/** A view of `bytes` typed as `arr`'s dtype (readInto wants the typed array of its dtype). */
function targetOf(arr, bytes) {
  const types = { u1: Uint8Array, i1: Int8Array, u2: Uint16Array, i2: Int16Array, u4: Uint32Array,
    i4: Int32Array, f4: Float32Array, f8: Float64Array, i8: BigInt64Array, u8: BigUint64Array };
  const T = types[arr.dtype.slice(1)] ?? Uint8Array;
  return new T(bytes.buffer, bytes.byteOffset, bytes.byteLength / T.BYTES_PER_ELEMENT);
}

function fail(msg) {
  console.error(`bench-wasm-read: ${msg}`);
  process.exit(1);
}

/** The same rounds in a headless Chromium page, every build's web module loaded in it. The
 *  page, the modules and the array come from one loopback server: a scratch directory of
 *  copies (a page of another origin needs a permission to fetch from loopback). */
async function inChromium(file, reference) {
  const os = await import("node:os");
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "chunkwise-bench-read-"));
  const server = await (async () => {
    pkgs.forEach((p, k) => fs.cpSync(path.join(p, "web"), path.join(root, String(k)), { recursive: true }));
    fs.copyFileSync(file, path.join(root, "array.b2nd"));
    fs.writeFileSync(path.join(root, "index.html"), "<!doctype html><title>read</title>");
    return startServer({ root, quiet: true });
  })();
  const browser = await launchChromium();
  try {
    const page = await browser.newPage();
    await page.goto(server.url + "index.html");
    const got = await page.evaluate(async ({ n, rounds, minReads, minRoundMs, time }) => {
      const arrays = [];
      const firsts = [];
      for (let k = 0; k < n; k++) {
        const cw = await import(`./${k}/chunkwise.js`);
        await cw.default();
        const arr = await cw.RemoteArray.open(new URL("array.b2nd", location.href).href, { cache: "memory" });
        const d = (await arr.read("...")).data;
        firsts.push(Array.from(new Uint8Array(d.buffer, d.byteOffset, d.byteLength).subarray(0, 4096)));
        arrays.push(arr);
      }
      const timing = new Function("reads", "rounds", "minReads", "minRoundMs", time);
      const read = await timing(arrays.map((arr) => async () => (await arr.read("...")).data.byteLength),
        rounds, minReads, minRoundMs);
      const types = { u1: Uint8Array, i1: Int8Array, u2: Uint16Array, i2: Int16Array, u4: Uint32Array,
        i4: Int32Array, f4: Float32Array, f8: Float64Array, i8: BigInt64Array, u8: BigUint64Array };
      const targets = arrays.map((arr) => {
        const T = types[arr.dtype.slice(1)] ?? Uint8Array;
        return new T(arr.shape.reduce((a, b) => a * b, 1));
      });
      const into = await timing(arrays.map((arr, k) => async () => (await arr.readInto(targets[k], "...")).data.byteLength),
        rounds, minReads, minRoundMs);
      return { read, into, firsts };
    }, { n: pkgs.length, rounds, minReads: MIN_READS, minRoundMs: MIN_ROUND_MS, time: TIME });
    got.firsts.forEach((f, k) => {
      if (!Buffer.from(f).equals(reference.subarray(0, f.length))) fail(`${file}: build ${pkgs[k]} in Chromium read other bytes`);
    });
    return got;
  } finally {
    await browser.close();
    await server.stop();
    fs.rmSync(root, { recursive: true, force: true });
  }
}

if (json) {
  for (const r of rows) console.log(JSON.stringify(r));
} else {
  const fmt = (v) => (v === null ? "-" : v.toFixed(0));
  const cols = [["node_MB/s", "node_mbps"], ["node_into", "node_into_mbps"], ["chromium_MB/s", "chromium_mbps"],
    ["chromium_into", "chromium_into_mbps"]];
  console.log(`${"file".padEnd(36)} ${"build".padEnd(24)} ${"result_MiB".padStart(10)} ${cols.map(([h]) => h.padStart(13)).join(" ")}`);
  for (const r of rows) {
    console.log(`${r.file.padEnd(36)} ${r.build.padEnd(24)} ${(r.bytes / 1048576).toFixed(1).padStart(10)} ${cols.map(([, k]) => fmt(r[k]).padStart(13)).join(" ")}`);
  }
}
