// decodeChunkInto of the Node build (pkg/node): a Blosc2 chunk decoded into the caller's
// Uint8Array (one copy out of wasm memory, no new buffer), on a chunk python-blosc2 wrote
// (cf_lz4_shuffle.b2nd: float32, chunks 16x12 of blocks 8x6, LZ4 + SHUFFLE). Expected bytes
// from the .npy written beside it, laid out as the chunk holds them (blocks in C order, each
// block C-ordered); a target of the wrong length is refused before decoding and left as it
// was; a damaged chunk is a DECODE error. decodeChunk and decodeChunkInto decode chunks of up
// to 16 MiB into one buffer of wasm memory kept between calls: a larger chunk, then a smaller
// one, then a damaged one, then the first again give each its own values and length, and an
// array decodeChunk returned is not changed by later calls. The chunk may be any byte view
// (a Buffer, another realm's Uint8Array); null, a string, a plain array or a Proxy is a
// ChunkwiseError INVALID_ARGUMENT. Chunks of blocks are decoded block by block: every fixture
// of tests/fixtures/blosc2 (chunk 0, against its .npy), also with its blocks stored in reverse
// order, and damaged chunks give the whole-chunk decoder's errors.

import assert from "node:assert/strict";
import { createRequire } from "node:module";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import fs from "node:fs";
import { ensureChunkFixtures } from "./big-fixture.mjs";
import { fixtures, manifest, readNpy, repo, startServer } from "./lib.mjs";

const require = createRequire(import.meta.url);
let cw, server;

before(async () => {
  cw = require(path.join(repo, "pkg/node/chunkwise.js"));
  server = await startServer({ root: fixtures, quiet: true });
});
after(async () => { await server?.stop(); });

/** Chunk [0, 0] of a 2-D float fixture of tests/fixtures/blosc2 as the server gives it, its
 *  values as the chunk holds them (blocks in C order, each block C-ordered) from the .npy,
 *  and its decoded size in bytes. */
async function chunkOf(name) {
  const f = manifest("blosc2")[name];
  const e = readNpy(path.join(fixtures, "blosc2", f.npy));
  const arr = await cw.RemoteArray.open(`${server.url}blosc2/${f.file}`);
  const chunk = await arr.getChunkBytes([0, 0]);
  arr.close();
  const [cr, cc] = f.chunks;
  const [br, bc] = f.blocks;
  const want = [];
  for (let bi = 0; bi < cr / br; bi++) for (let bj = 0; bj < cc / bc; bj++)
    for (let r = 0; r < br; r++) for (let c = 0; c < bc; c++) want.push(e.at(bi * br + r, bj * bc + c));
  return { chunk, want, nbytes: want.length * Number(f.dtype.slice(2)) };
}

/** Chunk 0 of the N-D fixture `f` (tests/fixtures/blosc2) and what each of its bytes must be:
 *  `want[k]` is the value at element k of the chunk as C-Blosc2 lays it out (blocks in C order
 *  over the chunk, each block C-ordered), or undefined for padding (past the chunk or the
 *  array), whose bytes are not compared. */
async function firstChunk(f) {
  const e = readNpy(path.join(fixtures, "blosc2", f.npy));
  const arr = await cw.RemoteArray.open(`${server.url}blosc2/${f.file}`);
  const chunk = await arr.getChunkBytes(f.shape.map(() => 0));
  arr.close();
  const nd = f.shape.length;
  const grid = f.chunks.map((c, d) => Math.ceil(c / f.blocks[d]));
  const want = [];
  const visit = (level, coords) => {
    if (level === 2 * nd) {
      const pos = coords.slice(0, nd).map((b, d) => b * f.blocks[d] + coords[nd + d]);
      const inside = pos.every((p, d) => p < f.chunks[d] && p < f.shape[d]);
      want.push(inside ? e.at(...pos) : undefined);
      return;
    }
    const n = level < nd ? grid[level] : f.blocks[level - nd];
    for (let i = 0; i < n; i++) visit(level + 1, [...coords, i]);
  };
  visit(0, []);
  return { chunk, want, itemsize: Number(f.dtype.slice(2)), little: f.dtype[0] !== ">" };
}

/** The elements of `bytes` as numbers, read as the fixture's dtype. */
function elements(bytes, dtype) {
  const size = Number(dtype.slice(2));
  const little = dtype[0] !== ">";
  const kind = dtype[1];
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const get = {
    f4: (o) => dv.getFloat32(o, little), f8: (o) => dv.getFloat64(o, little),
    i1: (o) => dv.getInt8(o), i2: (o) => dv.getInt16(o, little), i4: (o) => dv.getInt32(o, little),
    i8: (o) => Number(dv.getBigInt64(o, little)), u1: (o) => dv.getUint8(o), b1: (o) => dv.getUint8(o),
    u2: (o) => dv.getUint16(o, little), u4: (o) => dv.getUint32(o, little),
    u8: (o) => Number(dv.getBigUint64(o, little)),
  }[`${kind}${size}`];
  return Array.from({ length: bytes.length / size }, (_, i) => get(i * size));
}

/** Asserts `got` (decoded bytes) holds `want`'s values where they are defined. */
function assertElements(got, want, dtype, what) {
  const values = elements(got, dtype);
  assert.equal(values.length, want.length, `${what}: element count`);
  const same = (a, b) => Object.is(a, b) || (Number.isNaN(a) && Number.isNaN(b));
  const bad = want.findIndex((w, i) => w !== undefined && !same(values[i], Number(w)));
  assert.equal(bad, -1, `${what}: element ${bad} is ${values[bad]}, written ${want[bad]}`);
}

/** `chunk` (a Blosc2 chunk of several blocks) with its blocks stored in reverse order and its
 *  bstarts table rewritten to match: a layout C-Blosc2's threads may write. What lies between
 *  the bstarts table and the first block (a dictionary) stays where it is. */
function reverseBlocks(chunk) {
  const dv = new DataView(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  const nbytes = dv.getInt32(4, true);
  const blocksize = dv.getInt32(8, true);
  const cbytes = dv.getInt32(12, true);
  const nblocks = Math.ceil(nbytes / blocksize);
  const starts = Array.from({ length: nblocks }, (_, i) => dv.getInt32(32 + 4 * i, true));
  const sorted = [...starts].sort((a, b) => a - b);
  const spans = starts.map((s) => [s, sorted.find((x) => x > s) ?? cbytes]);
  const out = new Uint8Array(cbytes);
  out.set(chunk.subarray(0, sorted[0]));
  const odv = new DataView(out.buffer);
  let at = sorted[0];
  for (let i = nblocks - 1; i >= 0; i--) {
    const [s, e] = spans[i];
    out.set(chunk.subarray(s, e), at);
    odv.setInt32(32 + 4 * i, at, true);
    at += e - s;
  }
  return out;
}

describe("decodeChunkInto (pkg/node)", () => {
  test("every fixture's first chunk decodes to the values written, with both calls and with its blocks stored in reverse", async () => {
    // The codec x filter matrix, DELTA with partial blocks, memcpyed, special-value (zeros,
    // NaN, a repeated value), split modes, 1-D to 4-D and byte orders: chunks of blocks are
    // decoded block by block, the others whole.
    const all = manifest("blosc2");
    const fixtureList = Object.values(all).filter((f) => f && f.npy && f.shape.every((n) => n > 0));
    assert.ok(fixtureList.length >= 50, `only ${fixtureList.length} fixtures found`);
    let reversed = 0;
    let stored = 0;
    for (const f of fixtureList) {
      const { chunk, want } = await firstChunk(f);
      if (chunk === null) continue; // no chunk stored (blosc2.zeros' frame holds none)
      stored++;
      const nbytes = want.length * Number(f.dtype.slice(2));
      assertElements(cw.decodeChunk(chunk), want, f.dtype, `${f.name} decodeChunk`);
      const into = new Uint8Array(nbytes).fill(0xa5);
      assert.equal(cw.decodeChunkInto(chunk, into), nbytes, f.name);
      assertElements(into, want, f.dtype, `${f.name} decodeChunkInto`);
      const dv = new DataView(chunk.buffer, chunk.byteOffset, chunk.byteLength);
      const special = (chunk[31] & 0x70) !== 0 || (chunk[2] & 0x02) !== 0;
      if (chunk[0] >= 3 && !special && Math.ceil(dv.getInt32(4, true) / dv.getInt32(8, true)) > 1) {
        const r = reverseBlocks(chunk);
        assert.notDeepEqual(r, chunk, f.name);
        assertElements(cw.decodeChunk(r), want, f.dtype, `${f.name} reversed, decodeChunk`);
        const into2 = new Uint8Array(nbytes);
        cw.decodeChunkInto(r, into2);
        assertElements(into2, want, f.dtype, `${f.name} reversed, decodeChunkInto`);
        reversed++;
      }
    }
    assert.ok(stored >= fixtureList.length - 3, `only ${stored} of ${fixtureList.length} fixtures store chunk 0`);
    assert.ok(reversed >= 20, `only ${reversed} chunks of several blocks`);
  });

  test("chunks of 0.5-5 MiB from compress2 decode to the bytes compressed: blocks of 2 KiB to 5 MiB, DELTA across groups of blocks, in order or reversed", () => {
    // Decoded a group of up to 256 KiB of blocks at a time when blocks are 4 KiB to 4 MiB
    // (src/wasm/decode.rs), whole otherwise (the 2 KiB and 5 MiB ones); under DELTA every
    // block refers to block 0, which decodeChunkInto keeps past the first group.
    const fx = ensureChunkFixtures();
    assert.ok(fx.ok, fx.reason);
    assert.equal(fx.chunks.length, 13);
    for (const c of fx.chunks) {
      const chunk = new Uint8Array(fs.readFileSync(path.join(fx.dir, `${c.name}.chunk`)));
      const want = new Uint8Array(fs.readFileSync(path.join(fx.dir, `${c.name}.bin`)));
      assert.equal(want.length, c.nbytes, c.name);
      const variants = [["as written", chunk], ["blocks reversed", reverseBlocks(chunk)]];
      for (const [how, bytes] of variants) {
        const got = cw.decodeChunk(bytes);
        assert.ok(Buffer.from(got).equals(want), `${c.name} ${how}: decodeChunk`);
        // Into a target that holds other bytes, then into the same target again.
        const into = new Uint8Array(c.nbytes).fill(0x5a);
        for (let k = 0; k < 2; k++) {
          assert.equal(cw.decodeChunkInto(bytes, into), c.nbytes, c.name);
          assert.ok(Buffer.from(into).equals(want), `${c.name} ${how}: decodeChunkInto (${k})`);
        }
      }
    }
  });

  test("a damaged chunk of one large block takes no more wasm memory than decoding it whole", () => {
    // A compress2 chunk whose header claims one 128 MiB block and whose first stream size is
    // past the end: a DECODE error. Decoded whole, the result and the unshuffle's scratch
    // block take twice the block; decoded block by block first, the block buffer (kept
    // between calls) and the stream buffer came on top: memory grew by four times the block.
    const fx = ensureChunkFixtures();
    assert.ok(fx.ok, fx.reason);
    const chunk = new Uint8Array(fs.readFileSync(path.join(fx.dir, "zstd_shuffle_f4_256k.chunk")));
    const n = 128 << 20;
    const dv = new DataView(chunk.buffer);
    dv.setInt32(4, n, true);
    dv.setInt32(8, n, true);
    dv.setInt32(dv.getInt32(32, true), 2147483000, true);
    const before = cw.wasmMemoryBytes();
    assert.throws(() => cw.decodeChunkInto(chunk, new Uint8Array(n)),
      (err) => err instanceof cw.ChunkwiseError && err.code === "DECODE" && /truncated/.test(err.message));
    const grown = cw.wasmMemoryBytes() - before;
    assert.ok(grown < 2.5 * n, `wasm memory grew by ${grown} bytes for a ${n}-byte block`);
    // And the module decodes on.
    const ok = new Uint8Array(fs.readFileSync(path.join(fx.dir, "zstd_shuffle_f4_256k.chunk")));
    const want = fs.readFileSync(path.join(fx.dir, "zstd_shuffle_f4_256k.bin"));
    assert.ok(Buffer.from(cw.decodeChunk(ok)).equals(want));
  });

  test("a damaged block or a chunk cut short is the same DECODE error from both calls, naming the block", async () => {
    const f = manifest("blosc2").cf_lz4_delta; // DELTA: blocks 1-3 refer to block 0
    const { chunk, want } = await firstChunk(f);
    const nbytes = want.length * 4;
    const dv = new DataView(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const start2 = dv.getInt32(32 + 4 * 2, true);
    const messages = [];
    for (const [what, bad, re] of [
      ["block 2's stream size", (() => { const c = chunk.slice(); new DataView(c.buffer).setInt32(start2, 1 << 20, true); return c; })(), /block 2|stream/],
      ["cut short", chunk.subarray(0, chunk.length - 10), /cbytes|truncated|short/i],
      ["a bstart past the end", (() => { const c = chunk.slice(); new DataView(c.buffer).setInt32(32 + 4, 1 << 24, true); return c; })(), /block 1|start/i],
    ]) {
      let m1, m2;
      assert.throws(() => cw.decodeChunk(bad), (err) => {
        assert.ok(err instanceof cw.ChunkwiseError, what);
        assert.equal(err.code, "DECODE", `${what}: ${err.message}`);
        m1 = err.message;
        return true;
      });
      assert.throws(() => cw.decodeChunkInto(bad, new Uint8Array(nbytes)), (err) => {
        assert.equal(err.code, "DECODE", `${what}: ${err.message}`);
        m2 = err.message;
        return true;
      });
      assert.equal(m2, m1, what);
      assert.match(m1, re, what);
      messages.push(m1);
    }
    assert.equal(new Set(messages).size, messages.length, "one message for different damage");
    // The module still decodes afterwards (no buffer left borrowed).
    assertElements(cw.decodeChunk(chunk), want, f.dtype, "after the errors");
  });


  test("writes a python-blosc2 chunk's values into the caller's buffer", async () => {
    const { chunk, want, nbytes } = await chunkOf("cf_lz4_shuffle");
    const target = new Uint8Array(nbytes);
    assert.equal(cw.decodeChunkInto(chunk, target), target.length);
    assert.deepEqual(Array.from(new Float32Array(target.buffer)), want);
    // The wrong length: refused before decoding, the buffer untouched.
    for (const len of [target.length - 1, target.length + 4]) {
      const bad = new Uint8Array(len).fill(9);
      assert.throws(() => cw.decodeChunkInto(chunk, bad), (err) => {
        assert.ok(err instanceof cw.ChunkwiseError);
        assert.equal(err.code, "INVALID_ARGUMENT", err.message);
        assert.ok(err.message.includes(String(target.length)), err.message);
        return true;
      });
      assert.ok(bad.every((b) => b === 9), "a refused target was written");
    }
    // A chunk cut short: a typed decode error.
    assert.throws(() => cw.decodeChunkInto(chunk.subarray(0, chunk.length - 10), target),
      (err) => err instanceof cw.ChunkwiseError && err.code === "DECODE");
  });

  test("decodes chunks of different sizes one after another through the reused buffer", async () => {
    const big = await chunkOf("exact_fit_f8"); // 16x12 float64: 1536 bytes
    const small = await chunkOf("cf_lz4_shuffle"); // 16x12 float32: 768 bytes
    const f64 = (u8) => Array.from(new Float64Array(u8.buffer, u8.byteOffset, u8.length / 8));
    const f32 = (u8) => Array.from(new Float32Array(u8.buffer, u8.byteOffset, u8.length / 4));
    const first = cw.decodeChunk(big.chunk);
    assert.equal(first.length, big.nbytes);
    assert.deepEqual(f64(first), big.want);
    const second = cw.decodeChunk(small.chunk);
    assert.equal(second.length, small.nbytes);
    assert.deepEqual(f32(second), small.want);
    assert.deepEqual(f64(first), big.want, "a later call changed an earlier result");
    assert.throws(() => cw.decodeChunk(big.chunk.subarray(0, big.chunk.length - 10)),
      (err) => err instanceof cw.ChunkwiseError && err.code === "DECODE");
    const into = new Uint8Array(small.nbytes);
    assert.equal(cw.decodeChunkInto(small.chunk, into), small.nbytes);
    assert.deepEqual(f32(into), small.want);
    const again = cw.decodeChunk(big.chunk);
    assert.deepEqual(f64(again), big.want);
    assert.deepEqual(f32(second), small.want);
  });

  test("the chunk is a byte view of any realm; anything else is INVALID_ARGUMENT, not the glue's TypeError", async () => {
    const { chunk, want, nbytes } = await chunkOf("cf_lz4_shuffle");
    const f32 = (u8) => Array.from(new Float32Array(u8.buffer, u8.byteOffset, u8.length / 4));
    const vm = await import("node:vm");
    // The same bytes as a Node Buffer, a Uint8Array of another realm and a view into a larger
    // buffer at an offset: each decodes to the values written.
    const padded = new Uint8Array(chunk.length + 7);
    padded.set(chunk, 3);
    for (const [what, view] of [["a Buffer", Buffer.from(chunk)],
      ["another realm's Uint8Array", vm.runInNewContext("new Uint8Array(bytes)", { bytes: Array.from(chunk) })],
      ["a view at an offset", padded.subarray(3, 3 + chunk.length)]]) {
      assert.deepEqual(f32(cw.decodeChunk(view)), want, what);
      const into = new Uint8Array(nbytes);
      assert.equal(cw.decodeChunkInto(view, into), nbytes, what);
      assert.deepEqual(f32(into), want, what);
    }
    const throwingView = new Uint8Array(chunk);
    Object.defineProperty(throwingView, "buffer", { get() { throw new Error("buffer refused"); } });
    for (const [what, bad] of [["null", null], ["undefined", undefined], ["a string", "abc"],
      ["a plain array", Array.from(chunk)], ["a Float32Array", new Float32Array(chunk.length)],
      ["a Proxy of the chunk", new Proxy(chunk, {})], ["a view whose buffer getter throws", throwingView]]) {
      for (const [name, call] of [["decodeChunk", () => cw.decodeChunk(bad)],
        ["decodeChunkInto", () => cw.decodeChunkInto(bad, new Uint8Array(nbytes))]]) {
        assert.throws(call, (err) => {
          assert.ok(err instanceof cw.ChunkwiseError, `${name}(${what}): ${err && err.name}: ${err && err.message}`);
          assert.equal(err.code, "INVALID_ARGUMENT", `${name}(${what})`);
          assert.match(err.message, /chunk could not be read/, `${name}(${what})`);
          return true;
        });
      }
    }
    assert.deepEqual(f32(cw.decodeChunk(chunk)), want, "the module still decodes");
  });

  test("a target's own getters and methods are never called: the bytes go to its memory, checked by its real length", async () => {
    const big = await chunkOf("exact_fit_f8");
    const f64 = (u8) => Array.from(new Float64Array(u8.buffer, u8.byteOffset, u8.length / 8));
    const vm = await import("node:vm");
    const refused = (target, what) => assert.throws(() => cw.decodeChunkInto(big.chunk, target), (err) => {
      assert.ok(err instanceof cw.ChunkwiseError, `${what}: ${err && err.name}: ${err && err.message}`);
      assert.equal(err.code, "INVALID_ARGUMENT", `${what}: ${err.message}`);
      return true;
    });
    // Not a byte view: refused before decoding.
    refused(new Array(big.nbytes).fill(0), "a plain array");
    refused(new Float32Array(big.nbytes), "a Float32Array");
    // A Uint8Array behind a Proxy (its `set` threw through the module, a bare TypeError else).
    const inner = new Uint8Array(big.nbytes);
    refused(new Proxy(inner, { get(t, k) {
      if (k === "set") return () => { throw new Error("set refused"); };
      const v = Reflect.get(t, k);
      return typeof v === "function" ? v.bind(t) : v;
    } }), "a Proxy");
    assert.ok(inner.every((b) => b === 0), "a refused target was written");
    // Subclasses whose `length` lies or throws, or whose `set` calls back into the module:
    // the real length is checked and the bytes are copied without calling them (a lying
    // length gave a RangeError, a throwing one the caller's own Error, `set` was called).
    let called = 0;
    class Lies extends Uint8Array { get length() { called++; return big.nbytes; } }
    class Throws extends Uint8Array { get length() { called++; throw new Error("length refused"); } }
    class CallsBack extends Uint8Array { set(src, offset) { called++; cw.decodeChunk(big.chunk); return super.set(src, offset); } }
    refused(new Lies(10), "a length that lies");
    for (const target of [new Throws(big.nbytes), new CallsBack(big.nbytes), new Lies(big.nbytes),
      vm.runInNewContext(`new Uint8Array(${big.nbytes})`), new Uint8Array(big.nbytes + 16).subarray(8, 8 + big.nbytes)]) {
      assert.equal(cw.decodeChunkInto(big.chunk, target), big.nbytes, target.constructor.name);
      assert.deepEqual(f64(new Uint8Array(target.buffer, target.byteOffset, big.nbytes)), big.want, target.constructor.name);
    }
    assert.equal(called, 0, "a getter or method of the target ran");
    assert.deepEqual(f64(cw.decodeChunk(big.chunk)), big.want);
  });
});
