// The Node build's renderPng, RemoteArray.getChunkBlosc2 and RemoteArray.identity, over the
// fixtures of tests/fixtures/gen_preview.py served by `chunkwise serve`:
// - renderPng of a read equals `chunkwise preview` of the same selection byte for byte (and
//   so pixel for pixel), and every page colour map (www/colormaps.js) agrees with it entry
//   for entry;
// - getChunkBlosc2 decoded by python-blosc2 (`blosc2.decompress2`, C-Blosc2) in the venv
//   equals the chunk of the .npy written (a real C-Blosc2 chunk), for .b2nd (its blocks laid
//   out as Blosc2 NDim lays them), HDF5 and Zarr, edge chunks and chunks not stored included;
// - identity names the source without its query, with the size and validators served.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { after, before, test } from "node:test";
import { cli, decodePng, fixtures, readNpy, repo, scratchDir, startServer } from "./lib.mjs";

const require = createRequire(import.meta.url);
const venv = process.env.CHUNKWISE_VENV || path.join(os.homedir(), ".cache/chunkwise/venv");
const dir = path.join(fixtures, "preview");

let server, chunkwise, scratch;

before(async () => {
  chunkwise = require(path.join(repo, "pkg/node/chunkwise.js"));
  server = await startServer({ quiet: true });
  scratch = scratchDir("chunkwise-render-");
});
after(async () => { await server?.stop(); scratch?.remove(); });

const url = (name) => `${server.url}tests/fixtures/preview/${name}`;

/** `chunkwise preview ARGS --out FILE`: the PNG's bytes and the JSON line. */
function cliPreview(args) {
  const out = path.join(scratch.dir, `cli-${Math.random().toString(36).slice(2)}.png`);
  const line = execFileSync(cli, ["preview", ...args, "--out", out], { encoding: "utf8" });
  return { png: fs.readFileSync(out), line: JSON.parse(line) };
}

test("renderPng of a read is the PNG chunkwise preview writes, byte for byte", async () => {
  const cases = [
    { name: "field_f4.b2nd", select: "0, :, :", options: {}, cliArgs: [] },
    { name: "field_f4.b2nd", select: "1:2, 5:30, ::2", options: { cmap: "gray", vmin: -2.5, vmax: 7.25 },
      cliArgs: ["--cmap", "gray", "--vmin", "-2.5", "--vmax", "7.25"] },
    { name: "grid_i2.h5", path: "/grid/temp", select: ":, :", options: { cmap: "magma" }, cliArgs: ["--cmap", "magma"] },
    { name: "grid_i2.h5", path: "/grid/mask", select: "::-1, :", options: { cmap: "inferno" }, cliArgs: ["--cmap", "inferno"] },
    { name: "grid_u1.zarr", select: "3:40, :", options: { cmap: "plasma", vmax: 200 }, cliArgs: ["--cmap", "plasma", "--vmax", "200"] },
  ];
  for (const c of cases) {
    const what = `${c.name} ${c.path ?? ""} [${c.select}] ${JSON.stringify(c.options)}`;
    const arr = await chunkwise.RemoteArray.open(url(c.name), c.path ? { path: c.path } : {});
    const { data, shape } = await arr.read(c.select);
    arr.close();
    const png = chunkwise.renderPng(data, shape, c.options);
    assert.ok(png instanceof Uint8Array, what);
    const fromCli = cliPreview([url(c.name), "--select", c.select, ...(c.path ? ["--path", c.path] : []), ...c.cliArgs]);
    const img = await decodePng(Buffer.from(png));
    const want = await decodePng(fromCli.png);
    assert.deepEqual([img.height, img.width], fromCli.line.shape, what);
    assert.equal(img.channels, 4, what);
    assert.ok(img.pixels.equals(want.pixels), `${what}: pixel for pixel`);
    assert.ok(Buffer.from(png).equals(fromCli.png), `${what}: byte for byte`);
  }
});

test("every colour map of the preview page agrees with renderPng entry for entry", async () => {
  const { COLORMAPS, lutIndex } = await import(pathToFileURL(path.join(repo, "www/colormaps.js")).href);
  // A ramp 0..255 between vmin 0 and vmax 255: value i has t = i / 255.
  const ramp = Float64Array.from({ length: 256 }, (_, i) => i);
  for (const [name, lut] of Object.entries(COLORMAPS)) {
    const img = await decodePng(Buffer.from(chunkwise.renderPng(ramp, [1, 256], { cmap: name })));
    for (let i = 0; i < 256; i++) {
      const e = lutIndex(i / 255);
      assert.deepEqual(img.rgb(i, 0), Array.from(lut.subarray(3 * e, 3 * e + 3)), `${name} value ${i} (entry ${e})`);
    }
  }
  assert.ok(Object.keys(COLORMAPS).length >= 3);
});

test("renderPng takes every numeric typed array and refuses bad input with a code", async () => {
  // The same 2 x 2 values in each class: one picture.
  const want = await decodePng(Buffer.from(chunkwise.renderPng(new Float64Array([1, 2, 3, 4]), [2, 2])));
  for (const a of [new Int8Array([1, 2, 3, 4]), new Uint8Array([1, 2, 3, 4]), new Int16Array([1, 2, 3, 4]),
    new Uint16Array([1, 2, 3, 4]), new Int32Array([1, 2, 3, 4]), new Uint32Array([1, 2, 3, 4]),
    new Float32Array([1, 2, 3, 4]), new BigInt64Array([1n, 2n, 3n, 4n]), new BigUint64Array([1n, 2n, 3n, 4n])]) {
    const img = await decodePng(Buffer.from(chunkwise.renderPng(a, [1, 2, 2, 1])));
    assert.ok(img.pixels.equals(want.pixels), a.constructor.name);
  }
  // A view into a larger buffer reads only its own elements.
  const big = new Float32Array([9, 9, 1, 2, 3, 4, 9]);
  const img = await decodePng(Buffer.from(chunkwise.renderPng(big.subarray(2, 6), [2, 2])));
  assert.ok(img.pixels.equals(want.pixels), "subarray");
  const refused = (f, code, text) => assert.throws(f, (e) => {
    assert.ok(e instanceof chunkwise.ChunkwiseError, String(e));
    assert.equal(e.code, code, e.message);
    if (text) assert.match(e.message, text);
    return true;
  });
  refused(() => chunkwise.renderPng(new Float32Array(4), [4]), "INVALID_ARGUMENT", /2-D/);
  refused(() => chunkwise.renderPng(new Float32Array(8), [2, 2, 2]), "INVALID_ARGUMENT", /2-D/);
  refused(() => chunkwise.renderPng(new Float32Array(5), [2, 2]), "INVALID_ARGUMENT", /bytes of data/);
  refused(() => chunkwise.renderPng([1, 2, 3, 4], [2, 2]), "INVALID_ARGUMENT", /typed array/);
  refused(() => chunkwise.renderPng(new Float32Array(4), [2, 2], { cmap: "jet" }), "INVALID_ARGUMENT", /jet/);
  refused(() => chunkwise.renderPng(new Float32Array(4), [2, 2], { vmin: 2, vmax: 1 }), "INVALID_ARGUMENT");
  refused(() => chunkwise.renderPng(new Float32Array(6), [2, 3], { maxPixels: 5 }), "INVALID_SELECTION",
    /2 x 3 = 6 pixels exceeds the limit of 5 pixels/);
  // Any integer past 2^64, and Infinity, is no bound: the same image; a bound that is no
  // non-negative integer is refused.
  for (const maxPixels of [6, 2 ** 64, 1e300, Infinity]) {
    const png = await decodePng(Buffer.from(chunkwise.renderPng(new Float32Array([0, 1, 2, 3, 4, 5]), [2, 3], { cmap: "gray", maxPixels })));
    assert.deepEqual([png.width, png.height, png.pixels[0], png.pixels[4 * 5]], [3, 2, 0, 255], String(maxPixels));
  }
  for (const maxPixels of [-1, 1.5, NaN, -Infinity, "6"]) {
    refused(() => chunkwise.renderPng(new Float32Array(6), [2, 3], { maxPixels }), "INVALID_ARGUMENT", /maxPixels/);
  }
  // A side past PNG's 2^31 - 1 is named as such, not as the pixel limit.
  refused(() => chunkwise.renderPng(new Uint8Array(0), [2 ** 31, 1], { maxPixels: 2 ** 60 }), "INVALID_SELECTION",
    /at most 2147483647 rows/);
  // A typed array whose buffer was transferred away holds no bytes (it threw the glue's TypeError).
  const gone = new Float32Array(4);
  structuredClone(gone.buffer, { transfer: [gone.buffer] });
  refused(() => chunkwise.renderPng(gone, [2, 2]), "INVALID_ARGUMENT", /0 bytes of data/);
  // NaN transparent, constant data the middle of the map.
  const nan = await decodePng(Buffer.from(chunkwise.renderPng(new Float32Array([NaN, 5, 5, Infinity]), [2, 2], { cmap: "gray" })));
  assert.deepEqual(Array.from(nan.pixels), [0, 0, 0, 0, 128, 128, 128, 255, 128, 128, 128, 255, 0, 0, 0, 0]);
});

/** The chunk `coords` of `npy` (chunk shape `chunks`): the elements inside the array, as
 *  { bytes (C order of the valid region), valid (its shape) }. */
function npyChunk(npy, chunks, coords) {
  const itemsize = npy.raw.BYTES_PER_ELEMENT;
  const bytes = Buffer.from(npy.raw.buffer, npy.raw.byteOffset, npy.raw.byteLength);
  const start = coords.map((c, d) => c * chunks[d]);
  const valid = start.map((s, d) => Math.min(chunks[d], npy.shape[d] - s));
  const out = [];
  const strides = npy.shape.map((_, d) => npy.shape.slice(d + 1).reduce((a, b) => a * b, 1));
  const n = valid.reduce((a, b) => a * b, 1);
  for (let k = 0; k < n; k++) {
    let rest = k, lin = 0;
    for (let d = valid.length - 1; d >= 0; d--) {
      const i = rest % valid[d];
      rest = Math.floor(rest / valid[d]);
      lin += (start[d] + i) * strides[d];
    }
    out.push(bytes.subarray(lin * itemsize, (lin + 1) * itemsize));
  }
  return { bytes: Buffer.concat(out), valid };
}

/** A decoded Blosc2 NDim chunk (blocks of shape `blocks` in C order over the chunk, each
 *  block C-ordered inside: the b2nd layout, C-Blosc2's b2nd.c) in C order of the chunk. */
function blocksToC(decoded, chunks, blocks, itemsize) {
  const nb = chunks.map((c, d) => Math.ceil(c / blocks[d]));
  const blockElems = blocks.reduce((a, b) => a * b, 1);
  const n = chunks.reduce((a, b) => a * b, 1);
  const out = Buffer.alloc(n * itemsize);
  for (let k = 0; k < n; k++) {
    let rest = k, b = 0, inner = 0, bstride = 1, istride = 1;
    for (let d = chunks.length - 1; d >= 0; d--) {
      const i = rest % chunks[d];
      rest = Math.floor(rest / chunks[d]);
      b += Math.floor(i / blocks[d]) * bstride;
      inner += (i % blocks[d]) * istride;
      bstride *= nb[d];
      istride *= blocks[d];
    }
    const from = (b * blockElems + inner) * itemsize;
    decoded.copy(out, k * itemsize, from, from + itemsize);
  }
  return out;
}

/** The valid region (`valid`, from the chunk's origin) of a whole decoded chunk of shape
 *  `chunks`, C order. */
function validRegion(decoded, chunks, valid, itemsize) {
  const out = [];
  const strides = chunks.map((_, d) => chunks.slice(d + 1).reduce((a, b) => a * b, 1));
  const n = valid.reduce((a, b) => a * b, 1);
  for (let k = 0; k < n; k++) {
    let rest = k, lin = 0;
    for (let d = valid.length - 1; d >= 0; d--) {
      lin += (rest % valid[d]) * strides[d];
      rest = Math.floor(rest / valid[d]);
    }
    out.push(decoded.subarray(lin * itemsize, (lin + 1) * itemsize));
  }
  return Buffer.concat(out);
}

test("getChunkBlosc2 gives C-Blosc2 chunks: python-blosc2 decodes them to the chunks of the .npy", async (t) => {
  const python = path.join(venv, "bin/python");
  assert.ok(fs.existsSync(python), `no Python venv at ${venv} (scripts/setup.sh python): python-blosc2 is the oracle`);
  const cases = [
    { name: "field_f4.b2nd", npy: "field_f4.npy", coords: [[0, 0, 0], [1, 1, 2], [1, 2, 2]] },
    { name: "grid_i2.h5", path: "/grid/temp", npy: "grid_temp.npy", coords: [[0, 0], [2, 1]] },
    // (2, 1) was never written: an unallocated chunk, the fill value False.
    { name: "grid_i2.h5", path: "/grid/mask", npy: "grid_mask.npy", coords: [[1, 0], [2, 1]] },
    // (0, 1) holds only the fill value: zarr-python did not write it.
    { name: "grid_u1.zarr", npy: "grid_u1.npy", coords: [[0, 0], [0, 1], [2, 1]] },
  ];
  const jobs = [];
  for (const c of cases) {
    const arr = await chunkwise.RemoteArray.open(url(c.name), c.path ? { path: c.path } : {});
    const npy = readNpy(path.join(dir, c.npy));
    for (const coords of c.coords) {
      const chunk = await arr.getChunkBlosc2(coords);
      assert.ok(chunk instanceof Uint8Array);
      const file = path.join(scratch.dir, `chunk-${jobs.length}.b2`);
      fs.writeFileSync(file, chunk);
      jobs.push({ c, coords, file, chunks: arr.chunks, blocks: arr.blocks, npy });
      if (c.name.endsWith(".b2nd")) {
        const stored = await arr.getChunkBytes(coords);
        assert.ok(Buffer.from(chunk).equals(Buffer.from(stored)), `${c.name} ${coords}: the stored chunk as it is`);
      } else {
        // Our decoder reads it too, to the same bytes as getChunk.
        const { data } = await arr.getChunk(coords);
        const decoded = Buffer.from(chunkwise.decodeChunk(chunk));
        assert.ok(decoded.equals(Buffer.from(data.buffer, data.byteOffset, data.byteLength)), `${c.name} ${coords}`);
      }
    }
    arr.close();
  }
  execFileSync(python, ["-c", `
import sys, blosc2
for f in sys.argv[1:]:
    open(f + ".raw", "wb").write(blosc2.decompress2(open(f, "rb").read()))
`, ...jobs.map((j) => j.file)]);
  for (const j of jobs) {
    const what = `${j.c.name} ${j.c.path ?? ""} chunk ${j.coords}`;
    let decoded = fs.readFileSync(j.file + ".raw");
    const itemsize = j.npy.raw.BYTES_PER_ELEMENT;
    assert.equal(decoded.length, j.chunks.reduce((a, b) => a * b, 1) * itemsize, `${what}: the full chunk shape`);
    // A .b2nd chunk as stored holds its blocks one after another (here (1, 8, 10) blocks of
    // (1, 16, 20) chunks); converted chunks are in C order of the chunk.
    if (j.c.name.endsWith(".b2nd")) {
      assert.notDeepEqual(j.blocks, j.chunks, "blocks smaller than chunks, so the layout is tested");
      decoded = blocksToC(decoded, j.chunks, j.blocks, itemsize);
    }
    const want = npyChunk(j.npy, j.chunks, j.coords);
    assert.ok(validRegion(decoded, j.chunks, want.valid, itemsize).equals(want.bytes), `${what}: values`);
  }
  assert.equal(jobs.length, 10);
  t.diagnostic(`${jobs.length} chunks decoded by python-blosc2 ${execFileSync(python, ["-c", "import blosc2; print(blosc2.__version__)"], { encoding: "utf8" }).trim()}`);
});

test("identity: the URL without its query, the size and validators served", async () => {
  const arr = await chunkwise.RemoteArray.open(`${url("field_f4.b2nd")}?token=secret`);
  const head = await fetch(url("field_f4.b2nd"), { method: "HEAD" });
  const id = arr.identity;
  assert.deepEqual(id, {
    url: url("field_f4.b2nd"),
    len: fs.statSync(path.join(dir, "field_f4.b2nd")).size,
    etag: head.headers.get("etag"),
    lastModified: head.headers.get("last-modified"),
  });
  assert.ok(id.etag, "chunkwise serve sends an ETag");
  assert.ok(!JSON.stringify(id).includes("secret"));
  arr.close();
  assert.throws(() => arr.identity, (e) => e.code === "INVALID_ARGUMENT");
});
