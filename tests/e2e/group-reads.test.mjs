// read() of the Node build on .b2nd frames whose chunks hold several groups of blocks
// (tests/fixtures/gen_blosc2.py --reads, written at test time by the pinned python-blosc2):
// chunks of 0.6-1.4 MiB with blocks of 8 KiB to 128 KiB, which the read pipeline decodes a
// group of blocks at a time and copies into the result group by group. LZ4 + SHUFFLE float32,
// ZSTD + DELTA int32 (blocks referring to block 0 of an earlier group), ZLIB + BITSHUFFLE
// float64 3-D, LZ4HC + BYTEDELTA uint16 1-D (runs of the result that cross blocks and groups),
// LZ4 float32 rows of 3 (rows joined into one copy per chunk), ZSTD float32 and LZ4 int16 with
// a dictionary in every chunk (`use_dict`: such chunks are read and decoded whole, also when
// few of their blocks are touched); edge chunks; whole, partial,
// reversed, strided and integer selections. Each result's bytes equal the numpy slice of the
// array written, read cold (from the server) and again from the payload cache. Also a 1-D
// uint8 array of 64 Mi elements, read whole, reversed and strided in the memory of its result.

import assert from "node:assert/strict";
import { createRequire } from "node:module";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { ensureReadFixtures } from "./big-fixture.mjs";
import { readNpy, repo, startServer } from "./lib.mjs";

const require = createRequire(import.meta.url);
let cw, server, fx;

before(async () => {
  cw = require(path.join(repo, "pkg/node/chunkwise.js"));
  fx = ensureReadFixtures();
  assert.ok(fx.ok, fx.reason);
  server = await startServer({ root: fx.dir, quiet: true });
});
after(async () => { await server?.stop(); });

/** The bytes of a typed array. */
const bytesOf = (a) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);

describe("reads of chunks decoded a group of blocks at a time", () => {
  test("every selection equals the numpy slice of the array written, cold and cached", async () => {
    assert.ok(fx.reads.length >= 20, `reads listed: ${fx.reads.length}`);
    const byFile = new Map();
    for (const r of fx.reads) byFile.set(r.file, [...(byFile.get(r.file) ?? []), r]);
    assert.equal(byFile.size, 7);
    for (const [file, reads] of byFile) {
      const arr = await cw.RemoteArray.open(server.url + file);
      try {
        let cold = 0;
        for (const round of ["cold", "cached"]) {
          for (const r of reads) {
            const what = `${file} [${r.selection}] ${round}`;
            const want = readNpy(path.join(fx.dir, r.npy));
            const got = await arr.read(r.selection);
            assert.deepEqual(got.shape, r.shape, `${what}: shape`);
            assert.equal(got.dtype, r.dtype, `${what}: dtype`);
            const [a, b] = [bytesOf(got.data), bytesOf(want.raw)];
            assert.equal(a.length, b.length, `${what}: bytes`);
            if (!a.equals(b)) {
              const k = a.findIndex((v, i) => v !== b[i]);
              assert.fail(`${what}: first differing byte ${k} of ${a.length} (${a[k]} != ${b[k]})`);
            }
          }
          if (round === "cold") {
            cold = arr.traffic.requests;
            assert.ok(cold > 0, `${file}: read from the server`);
          } else {
            assert.equal(arr.traffic.requests, cold, `${file}: the second round from the cache`);
          }
        }
      } finally {
        arr.close();
      }
    }
  });

  test("a long 1-D array reads with memory for its result, not 8 or 16 bytes per element more", async () => {
    const { file, length, spots } = fx.long;
    const arr = await cw.RemoteArray.open(server.url + file);
    try {
      const before = cw.wasmMemoryBytes();
      const got = await arr.read("...");
      assert.equal(got.data.length, length);
      for (const [i, v] of spots) assert.equal(got.data[i], v, `element ${i}`);
      // The result (64 MiB) and the payload cache's stored chunks in wasm memory, and a
      // margin; the planner listed 8 bytes of offset per element before (512 MiB more).
      const grown = cw.wasmMemoryBytes() - before;
      assert.ok(grown <= length + 32 * 2 ** 20, `wasm memory grew by ${grown} bytes`);
      // Reversed, and every third element: one run per block too (16 bytes per element of
      // runs before: 1 GiB more for the reversed read).
      const reversed = await arr.read("::-1");
      for (const [i, v] of spots) assert.equal(reversed.data[length - 1 - i], v, `element ${i} reversed`);
      const third = await arr.read("::3");
      for (const [i, v] of spots) if (i % 3 === 0) assert.equal(third.data[i / 3], v, `element ${i} of ::3`);
      const grownAll = cw.wasmMemoryBytes() - before;
      assert.ok(grownAll <= length + 32 * 2 ** 20, `wasm memory grew by ${grownAll} bytes after ::-1 and ::3`);
      const [a, b] = [20971000, 21271000];
      const part = await arr.read(`${a}:${b}`);
      const inside = spots.filter(([i]) => i >= a && i < b);
      assert.ok(inside.length > 100, `${inside.length} values in the part`);
      for (const [i, v] of inside) assert.equal(part.data[i - a], v, `element ${i} of ${a}:${b}`);
    } finally {
      arr.close();
    }
  });
});
