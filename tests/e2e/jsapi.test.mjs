// The JS read API of the Node build (pkg/node) against `chunkwise serve`, on fixtures written
// by python-blosc2, h5py and zarr-python (expected values from the .npy files written next to
// them, parsed here byte for byte):
// - dtypes: float16 as Float16Array where the runtime has one, else Float32Array (values
//   converted exactly); complex as interleaved pairs with `complex: true`; datetime64 and
//   timedelta64 as BigInt64Array with `unit`; big-endian sources in host order;
// - getChunk (full chunk shape, as zarrita) and getChunkBytes (the stored bytes: b2nd chunk,
//   HDF5 chunk at the address h5py reported, Zarr chunk object; null when not stored);
// - readInto: type and length checked before any request (INVALID_ARGUMENT naming expected
//   and given), values written into the caller's buffer, wasm memory flat over a loop.

import assert from "node:assert/strict";
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { fixtures, repo, startServer } from "./lib.mjs";

const require = createRequire(import.meta.url);
let cw, server;
const served = () => server.log.filter((r) => r.method === "GET").length;

before(async () => {
  cw = require(path.join(repo, "pkg/node/chunkwise.js"));
  server = await startServer({ root: fixtures });
});
after(async () => { await server?.stop(); });

/** A .npy file: { descr, shape, bytes (the data as written, Uint8Array) }. */
export function npyBytes(file) {
  const buf = fs.readFileSync(file);
  assert.equal(buf.toString("latin1", 0, 6), "\x93NUMPY", file);
  const major = buf[6];
  const hlen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const hstart = major === 1 ? 10 : 12;
  const header = buf.toString("latin1", hstart, hstart + hlen);
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header)[1].split(",").map((s) => s.trim())
    .filter(Boolean).map(Number);
  return { descr, shape, bytes: new Uint8Array(buf.buffer, buf.byteOffset + hstart + hlen, buf.length - hstart - hlen) };
}

/** `bytes` with every `unit`-byte group reversed (big-endian to little-endian). */
function swapped(bytes, unit) {
  const out = new Uint8Array(bytes);
  for (let i = 0; i < out.length; i += unit) out.subarray(i, i + unit).reverse();
  return out;
}

/** IEEE binary16 bits as a Number, by the format's definition. */
function half(h) {
  const s = h & 0x8000 ? -1 : 1, e = (h >> 10) & 0x1f, f = h & 0x3ff;
  if (e === 0) return s * f * 2 ** -24;
  if (e === 31) return f ? NaN : s * Infinity;
  return s * (1 + f / 1024) * 2 ** (e - 15);
}

/** The values a .npy holds, as the JS read gives them: { ctor, values, complex, unit }. */
function expected(npy) {
  const order = npy.descr[0], code = npy.descr.slice(1);
  const m = /^([fcMm])(\d+)(?:\[(\w+)\])?$/.exec(code);
  const [, kind, size] = m;
  const unitBytes = kind === "c" ? Number(size) / 2 : Number(size);
  const le = order === ">" ? swapped(npy.bytes, unitBytes) : npy.bytes.slice();
  const buf = le.buffer.slice(le.byteOffset, le.byteOffset + le.byteLength);
  if (kind === "f" && size === "2") {
    const bits = new Uint16Array(buf);
    return { float16: true, values: Array.from(bits, half) };
  }
  if (kind === "M" || kind === "m") return { ctor: BigInt64Array, values: Array.from(new BigInt64Array(buf)), unit: m[3] ?? "" };
  const ctor = unitBytes === 4 ? Float32Array : Float64Array;
  return { ctor, values: Array.from(new ctor(buf)), complex: kind === "c" };
}

const dtypeManifest = JSON.parse(fs.readFileSync(path.join(fixtures, "dtypes/manifest.json"), "utf8")).fixtures;

describe("dtypes in JS (pkg/node)", () => {
  test("float16, complex, datetime64/timedelta64 from Zarr v2/v3 and .b2nd read as documented", async (t) => {
    const hasF16 = typeof globalThis.Float16Array === "function";
    t.diagnostic(`Float16Array in this runtime: ${hasF16} (node ${process.version})`);
    for (const f of dtypeManifest) {
      const what = `${f.format}:${f.source}:${f.name}`;
      const arr = await cw.RemoteArray.open(`${server.url}dtypes/${f.source}`, f.path ? { path: f.path } : {});
      assert.equal(arr.dtype, f.dtype, what);
      const r = await arr.read(null, {});
      const want = expected(npyBytes(path.join(fixtures, "dtypes", f.npy)));
      assert.deepEqual(r.shape, f.shape, what);
      assert.equal(r.dtype, f.dtype.replace(">", "<"), what);
      if (want.float16) {
        const ctor = hasF16 ? globalThis.Float16Array : Float32Array;
        assert.equal(r.data.constructor, ctor, `${what}: ${r.data.constructor.name}`);
      } else {
        assert.equal(r.data.constructor, want.ctor, `${what}: ${r.data.constructor.name}`);
      }
      const got = Array.from(r.data);
      assert.equal(got.length, want.values.length, what);
      got.forEach((v, i) => assert.ok(Object.is(v, want.values[i]), `${what} [${i}]: ${v} != ${want.values[i]}`));
      assert.equal(r.complex, want.complex ? true : undefined, what);
      assert.equal(r.unit, want.unit, what);
      arr.close();
    }
  });
});

describe("getChunk and getChunkBytes (pkg/node)", () => {
  test("HDF5: every chunk whole in the chunk shape; the stored bytes at h5py's address; null when unallocated", async () => {
    const m = JSON.parse(fs.readFileSync(path.join(fixtures, "hdf5/manifest.json"), "utf8"));
    const ds = m.datasets.find((d) => d.file === "sparse_fill.h5" && d.path === "/s");
    const file = fs.readFileSync(path.join(fixtures, "hdf5", ds.file));
    const npy = npyBytes(path.join(fixtures, "hdf5", ds.npy));
    const values = new Int16Array(npy.bytes.slice().buffer);
    const arr = await cw.RemoteArray.open(`${server.url}hdf5/${ds.file}`, { path: ds.path });
    const [cr, cc] = Array.from(arr.chunks);
    let stored = 0, unallocated = 0;
    for (let i = 0; i * cr < ds.shape[0]; i++) {
      for (let j = 0; j * cc < ds.shape[1]; j++) {
        const c = await arr.getChunk([i, j], {});
        assert.deepEqual(c.shape, [cr, cc]);
        assert.ok(c.data instanceof Int16Array);
        for (let r = 0; r < cr && i * cr + r < ds.shape[0]; r++) {
          for (let k = 0; k < cc && j * cc + k < ds.shape[1]; k++) {
            assert.equal(c.data[r * cc + k], values[(i * cr + r) * ds.shape[1] + j * cc + k]);
          }
        }
        const b = await arr.getChunkBytes([i, j], {});
        const entry = ds.chunk_map.find((e) => e.offset[0] === i * cr && e.offset[1] === j * cc);
        if (entry) {
          assert.ok(b instanceof Uint8Array);
          assert.deepEqual(Buffer.from(b), file.subarray(entry.address, entry.address + entry.size));
          stored++;
        } else {
          assert.equal(b, null);
          unallocated++;
        }
      }
    }
    assert.ok(stored > 0 && unallocated > 0, `${stored} stored, ${unallocated} unallocated`);
    for (const bad of [[99, 0], [0], [0, -1], [0, 1.5], "0,0"]) {
      await assert.rejects(arr.getChunk(bad, {}), (e) => e.code === "INVALID_ARGUMENT", String(bad));
      await assert.rejects(arr.getChunkBytes(bad, {}), (e) => e.code === "INVALID_ARGUMENT", String(bad));
    }
    arr.close();
  });

  test("Zarr: an edge chunk in the full chunk shape; an absent chunk is the fill value (missingChunks 1) and null bytes", async () => {
    const arr = await cw.RemoteArray.open(`${server.url}zarr/v2.zarr`, { path: "/partial" });
    // v2_partial: 13 x 11 int32 in 5 x 4 chunks, fill -1, only 5:11, 2:7 written.
    assert.deepEqual(Array.from(arr.chunks), [5, 4]);
    const edge = await arr.getChunk([2, 2], {});
    assert.deepEqual(edge.shape, [5, 4]);
    assert.equal(edge.data.length, 20);
    const absent = await arr.getChunk([0, 0], {});
    assert.equal(absent.missingChunks, 1);
    assert.deepEqual(Array.from(absent.data), new Array(20).fill(-1));
    assert.equal(await arr.getChunkBytes([0, 0], {}), null);
    const b = await arr.getChunkBytes([1, 1], {});
    assert.deepEqual(Buffer.from(b), fs.readFileSync(path.join(fixtures, "zarr/v2.zarr/partial/1.1")));
    arr.close();
  });

  test("b2nd: the chunk as the frame stores it", async () => {
    const file = fs.readFileSync(path.join(fixtures, "blosc2/nd3_u2.b2nd"));
    const arr = await cw.RemoteArray.open(`${server.url}blosc2/nd3_u2.b2nd`, {});
    const b = await arr.getChunkBytes([0, 0, 0], {});
    assert.ok(file.indexOf(Buffer.from(b)) > 0, "not in the frame");
    assert.equal(new DataView(b.buffer, b.byteOffset).getInt32(12, true), b.length, "cbytes");
    const c = await arr.getChunk([0, 0, 0], {});
    assert.deepEqual(c.shape, Array.from(arr.chunks));
    assert.equal(c.dtype, "<u2");
    arr.close();
  });
});

describe("readInto (pkg/node)", () => {
  test("checks type and length before any request, fills the caller's buffer, keeps wasm memory flat", async (t) => {
    const arr = await cw.RemoteArray.open(`${server.url}dtypes/v2.zarr`, { path: "/c16" });
    const npy = npyBytes(path.join(fixtures, "dtypes/zarr2_c16.npy"));
    const want = new Float64Array(npy.bytes.slice().buffer);
    const n = npy.shape[0] * npy.shape[1];
    const before = served();
    for (const [bad, text] of [
      [new Float32Array(2 * n), "Float64Array of length " + 2 * n],
      [new Float64Array(n), "given Float64Array of length " + n],
      [new ArrayBuffer(16 * n), "not a typed array"],
      [new DataView(new ArrayBuffer(16 * n)), "not a typed array"],
      [[1, 2, 3], "not a typed array"],
    ]) {
      await assert.rejects(arr.readInto(bad, null, {}), (e) => {
        assert.equal(e.code, "INVALID_ARGUMENT", e.message);
        assert.ok(e.message.includes(text), e.message);
        return true;
      });
    }
    assert.equal(served(), before, "a request for a refused target");
    const out = new Float64Array(2 * n);
    const r = await arr.readInto(out, null, {});
    assert.equal(r.data, out);
    assert.equal(r.complex, true);
    assert.deepEqual(Array.from(out), Array.from(want));
    // A window of it, into a subarray of a larger buffer.
    const big = new Float64Array(100).fill(7);
    const sub = big.subarray(10, 10 + 2 * 3);
    await arr.readInto(sub, "2, 1:4", {});
    const row = 2 * npy.shape[1]; // floats per row: re, im per element
    assert.deepEqual(Array.from(sub), Array.from(want.subarray(2 * row + 2, 2 * row + 8)));
    assert.equal(big[9], 7); assert.equal(big[16], 7);
    arr.close();
    // float16 into the class the runtime reads it as, datetimes into a BigInt64Array.
    for (const [name, file] of [["f2", "zarr2_f2.npy"], ["M8_ns", "zarr2_M8_ns.npy"]]) {
      const a = await cw.RemoteArray.open(`${server.url}dtypes/v2.zarr`, { path: `/${name}` });
      const w = expected(npyBytes(path.join(fixtures, "dtypes", file)));
      const Ctor = w.float16 ? (globalThis.Float16Array ?? Float32Array) : BigInt64Array;
      const into = new Ctor(w.values.length);
      const res = await a.readInto(into, null, {});
      assert.equal(res.data, into);
      Array.from(into).forEach((v, i) => assert.ok(Object.is(v, w.values[i]), `${name} [${i}]`));
      if (!w.float16) assert.equal(res.unit, "ns");
      await assert.rejects(a.readInto(new Float64Array(w.values.length), null, {}),
        (e) => e.code === "INVALID_ARGUMENT" && e.message.includes(Ctor.name));
      a.close();
    }
    // Strings have no typed array.
    const strings = await cw.RemoteArray.open(`${server.url}hdf5_types/types.h5`, { path: "/fs_nullpad_ascii" });
    await assert.rejects(strings.readInto(new Uint8Array(1 << 16), null, {}), (e) => {
      assert.equal(e.code, "INVALID_ARGUMENT");
      assert.ok(e.message.includes("|S8"), e.message);
      return true;
    });
    strings.close();

    // A loop of reads of a 16 MB result: after the first, wasm memory does not grow.
    const bigArr = await cw.RemoteArray.open(`${server.url}sample/field2d_f4.b2nd`, {});
    const shape = Array.from(bigArr.shape);
    const buf = new Float32Array(shape[0] * shape[1]);
    await bigArr.readInto(buf, null, {});
    await bigArr.read(null, {});
    const mem = cw.wasmMemoryBytes();
    for (let i = 0; i < 8; i++) {
      await bigArr.readInto(buf, null, {});
      const { data } = await bigArr.read(null, {});
      assert.equal(data.length, buf.length);
    }
    assert.equal(cw.wasmMemoryBytes(), mem, `wasm memory grew from ${mem}`);
    t.diagnostic(`wasm memory over 16 reads of ${buf.byteLength} bytes: ${mem} bytes, flat`);
    bigArr.close();
  });
});
