// /v1/preview.png and /v1/chunk?format=blosc2 in workerd, against what other programs make of
// the same data: the PNG's pixels equal those of `chunkwise preview` (the CLI) for the same
// source, selection and colour options; a Blosc2 chunk decoded by python-blosc2 (the venv of
// scripts/setup.sh) equals the .npy the generator wrote. Fixtures: tests/fixtures/preview
// (gen_preview.py: .b2nd, HDF5, Zarr v3) and the Zarr v2 fixtures.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { box, fixtures, get, manifest, readNpy, scratchDir, startServer, startWorker } from "./harness.mjs";

const python = path.join(process.env.CHUNKWISE_VENV || path.join(os.homedir(), ".cache/chunkwise/venv"), "bin/python");
const blosc2 = manifest("blosc2");
let up, worker, scratch;

before(async () => {
  if (!fs.existsSync(python)) throw new Error(`${python} is missing: run scripts/setup.sh python`);
  scratch = scratchDir();
  up = await startServer({ root: fixtures });
  worker = await startWorker(path.join(scratch.dir, "w"), { vars: { ALLOWED_ORIGINS: up.url.replace(/\/$/, ""), CACHE: "memory" } });
});
after(async () => {
  await worker?.stop();
  await up?.stop();
  scratch?.remove();
});

/** RGBA pixels of a PNG (8-bit RGBA or RGB, not interlaced; PNG spec section 9 filters). */
async function pixels(buf) {
  const zlib = await import("node:zlib");
  buf = Buffer.from(buf);
  assert.equal(buf.readUInt32BE(0), 0x89504e47, "a PNG signature");
  let off = 8, width = 0, height = 0, ch = 0;
  const idat = [];
  while (off < buf.length) {
    const len = buf.readUInt32BE(off);
    const type = buf.toString("latin1", off + 4, off + 8);
    const body = buf.subarray(off + 8, off + 8 + len);
    if (type === "IHDR") {
      width = body.readUInt32BE(0); height = body.readUInt32BE(4);
      assert.equal(body[8], 8); assert.equal(body[12], 0);
      ch = body[9] === 6 ? 4 : 3;
    } else if (type === "IDAT") idat.push(body);
    off += 12 + len;
  }
  const raw = zlib.inflateSync(Buffer.concat(idat));
  const stride = width * ch;
  const px = Buffer.alloc(height * stride);
  for (let y = 0; y < height; y++) {
    const f = raw[y * (stride + 1)];
    for (let i = 0; i < stride; i++) {
      const a = i >= ch ? px[y * stride + i - ch] : 0, b = y ? px[(y - 1) * stride + i] : 0;
      const c = i >= ch && y ? px[(y - 1) * stride + i - ch] : 0;
      let v = raw[y * (stride + 1) + 1 + i];
      if (f === 1) v += a; else if (f === 2) v += b; else if (f === 3) v += (a + b) >> 1;
      else if (f === 4) { const p = a + b - c, pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c); v += pa <= pb && pa <= pc ? a : pb <= pc ? b : c; }
      px[y * stride + i] = v & 255;
    }
  }
  return { width, height, channels: ch, px };
}

describe("/v1/preview.png: the CLI's picture", () => {
  // [label, src, path, select, options]
  const cases = [
    ["b2nd f4 with NaN and infinities", "preview/field_f4.b2nd", undefined, "0, :, :", {}],
    ["b2nd f4, magma, vmin/vmax", "preview/field_f4.b2nd", undefined, "1, 5:30, 3:50", { cmap: "magma", vmin: "-5", vmax: "8" }],
    ["hdf5 i2", "preview/grid_i2.h5", "/grid/temp", "2:38, :", { cmap: "viridis" }],
    ["hdf5 bool", "preview/grid_i2.h5", "/grid/mask", ":, :", { cmap: "gray" }],
    ["zarr v3 u1", "preview/grid_u1.zarr", undefined, ":, 4:30", { cmap: "inferno" }],
    ["zarr v2 f8", "zarr/v2.zarr", "/zstd", ":, :", {}],
  ];
  for (const [label, file, p, select, opts] of cases) {
    test(label, async () => {
      const r = await get(worker, "/v1/preview.png", { src: up.url + file, path: p, select, ...opts });
      assert.equal(r.status, 200, r.text());
      assert.equal(r.headers.get("content-type"), "image/png");
      const out = path.join(scratch.dir, `${label.replace(/\W+/g, "_")}.png`);
      const args = ["preview", path.join(fixtures, file), "--select", select, "--out", out];
      if (p) args.push("--path", p);
      for (const k of ["cmap", "vmin", "vmax"]) if (opts[k] !== undefined) args.push(`--${k}`, opts[k]);
      execFileSync(process.env.CHUNKWISE_BIN, args, { stdio: ["ignore", "pipe", "pipe"] });
      const want = await pixels(fs.readFileSync(out));
      const got = await pixels(r.body);
      assert.deepEqual([got.width, got.height, got.channels], [want.width, want.height, want.channels]);
      assert.ok(got.px.equals(want.px), "every pixel equals the CLI's");
      const again = await get(worker, "/v1/preview.png", { src: up.url + file, path: p, select, ...opts }, { "If-None-Match": r.headers.get("etag") });
      assert.equal(again.status, 304);
    });
  }

  test("another colour map or range: another tag and other pixels", async () => {
    const q = { src: up.url + "preview/field_f4.b2nd", select: "0, :, :" };
    const a = await get(worker, "/v1/preview.png", q);
    const b = await get(worker, "/v1/preview.png", { ...q, cmap: "plasma" });
    const c = await get(worker, "/v1/preview.png", { ...q, vmax: "3" });
    assert.equal(new Set([a, b, c].map((r) => r.headers.get("etag"))).size, 3);
    assert.ok(!(await pixels(a.body)).px.equals((await pixels(b.body)).px));
  });

  test("an unknown colour map answers 400 INVALID_ARGUMENT", async () => {
    const r = await get(worker, "/v1/preview.png", { src: up.url + "preview/field_f4.b2nd", select: "0, :, :", cmap: "nope" });
    assert.equal(r.status, 400, r.text());
    assert.equal(r.json().error.code, "INVALID_ARGUMENT");
  });
});

/** The chunk decoded by python-blosc2 (blosc2.decompress2): its bytes. */
function pyDecode(chunk) {
  return new Uint8Array(execFileSync(python, ["-c", "import blosc2, sys; sys.stdout.buffer.write(blosc2.decompress2(sys.stdin.buffer.read()))"], { input: Buffer.from(chunk) }));
}

/** 2-D chunk bytes in the Blosc2 NDim layout (blocks in C order, each in C order) put in
 *  C order of the chunk. */
function deblock(bytes, chunks, blocks) {
  const out = new Uint8Array(bytes.length);
  const size = bytes.length / (chunks[0] * chunks[1]);
  const nb = [Math.ceil(chunks[0] / blocks[0]), Math.ceil(chunks[1] / blocks[1])];
  let at = 0;
  for (let bi = 0; bi < nb[0]; bi++) for (let bj = 0; bj < nb[1]; bj++) {
    for (let i = 0; i < blocks[0]; i++) for (let j = 0; j < blocks[1]; j++) {
      const r = bi * blocks[0] + i, c = bj * blocks[1] + j;
      if (r < chunks[0] && c < chunks[1]) out.set(bytes.subarray(at, at + size), (r * chunks[1] + c) * size);
      at += size;
    }
  }
  return out;
}

describe("/v1/chunk?format=blosc2: decoded by python-blosc2", () => {
  const zarrNpy = (n) => readNpy(path.join(fixtures, "zarr", n));
  // [label, src, path, coords, chunk shape, .npy, byte order of the chunk]
  const cases = [
    ["b2nd f4", `blosc2/${blosc2.cf_lz4_shuffle.file}`, undefined, [0, 1], blosc2.cf_lz4_shuffle.chunks, () => readNpy(path.join(fixtures, "blosc2", blosc2.cf_lz4_shuffle.npy)), "<f4"],
    ["b2nd >f8 (stored big-endian)", `blosc2/${blosc2.be_f8.file}`, undefined, [0, 0], blosc2.be_f8.chunks, () => readNpy(path.join(fixtures, "blosc2", blosc2.be_f8.npy)), ">f8"],
    ["hdf5 i4", "hdf5/gzip_shuffle.h5", "/ints", [1, 2], [16, 10], () => readNpy(path.join(fixtures, "hdf5/gzip_shuffle_ints.npy")), "<i4"],
    ["zarr v2 f8", "zarr/v2.zarr", "/blosc", [1, 1], [5, 4], () => zarrNpy("v2_blosc.npy"), "<f8"],
    ["zarr v3 >f8", "zarr/v3.zarr", "/big_endian", [0, 1], null, () => zarrNpy("v3_big_endian.npy"), "<f8"],
  ];
  for (const [label, file, p, coords, chunksGiven, npyOf, dtype] of cases) {
    test(label, async () => {
      const info = (await get(worker, "/v1/info", { src: up.url + file, path: p })).json();
      const chunks = chunksGiven ?? info.chunks;
      assert.deepEqual(info.chunks, chunks);
      const r = await get(worker, "/v1/chunk", { src: up.url + file, path: p, coords: coords.join(","), format: "blosc2" });
      assert.equal(r.status, 200, r.text());
      assert.equal(r.headers.get("x-chunkwise-dtype"), dtype);
      assert.equal(r.headers.get("x-chunkwise-shape"), chunks.join(","));
      const blocks = r.headers.get("x-chunkwise-blocks").split(",").map(Number);
      if (file.startsWith("blosc2/")) assert.deepEqual(blocks, blosc2[file.includes("be_f8") ? "be_f8" : "cf_lz4_shuffle"].blocks);
      else assert.deepEqual(blocks, chunks, "other formats: C order of the chunk");
      const bytes = deblock(pyDecode(r.body), chunks, blocks);
      const npy = npyOf();
      const size = npy.raw.BYTES_PER_ELEMENT;
      assert.equal(bytes.length, chunks.reduce((a, b) => a * b, 1) * size);
      const big = dtype.startsWith(">");
      const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
      const getter = { 4: npy.raw instanceof Float32Array ? "getFloat32" : "getInt32", 8: "getFloat64" }[size];
      const lo = coords.map((c, d) => c * chunks[d]);
      const hi = lo.map((l, d) => Math.min(l + chunks[d], npy.shape[d]));
      const got = [];
      for (let i = 0; i < hi[0] - lo[0]; i++) for (let j = 0; j < hi[1] - lo[1]; j++) got.push(view[getter]((i * chunks[1] + j) * size, !big));
      assert.deepEqual(got, box(npy, lo.map((l, d) => [l, hi[d]])).map(Number));
    });
  }
});
