// Every route of the worker in workerd, against `chunkwise serve` over the committed fixtures
// of every format (.b2nd, HDF5, Zarr v2, Zarr v3): values equal the .npy the generators wrote
// (read here, never through chunkwise), metadata equals the generators' manifests and the
// fixtures' own metadata files; unknown routes answer 404 JSON, other methods 405.

import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import {
  box, boxBytes, boxJson, fixtures, get, manifest, parseNpyBody, readNpy, scratchDir, startServer, startWorker,
} from "./harness.mjs";

const blosc2 = manifest("blosc2");
const hdf5 = JSON.parse(fs.readFileSync(path.join(fixtures, "hdf5/manifest.json"), "utf8")).datasets;
const zarr = JSON.parse(fs.readFileSync(path.join(fixtures, "zarr/manifest.json"), "utf8")).arrays;

/** Chunk shape of a Zarr array from its own metadata file. */
function zarrChunks(store, p) {
  const dir = path.join(fixtures, "zarr", store, p);
  if (fs.existsSync(path.join(dir, ".zarray"))) return JSON.parse(fs.readFileSync(path.join(dir, ".zarray"), "utf8")).chunks;
  return JSON.parse(fs.readFileSync(path.join(dir, "zarr.json"), "utf8")).chunk_grid.configuration.chunk_shape;
}

// [label, src under tests/fixtures, path option, dtype written, chunk shape written, .npy,
//  a selection and its box, a chunk's coordinates]
const h = (file, p) => hdf5.find((d) => d.file === file && d.path === p);
const z = (store, p) => zarr.find((a) => a.store === store && a.path === p);
const cases = [
  ["b2nd f4", `blosc2/${blosc2.cf_lz4_shuffle.file}`, undefined, "<f4", blosc2.cf_lz4_shuffle.chunks, `blosc2/${blosc2.cf_lz4_shuffle.npy}`,
    "3:29, 2:20", [[3, 29], [2, 20]], [1, 1]],
  ["b2nd i8", `blosc2/${blosc2.nd1_i8.file}`, undefined, "<i8", blosc2.nd1_i8.chunks, `blosc2/${blosc2.nd1_i8.npy}`,
    "250:1000", [[250, 1000]], [1]],
  ["b2nd >f8", `blosc2/${blosc2.be_f8.file}`, undefined, "<f8", blosc2.be_f8.chunks, `blosc2/${blosc2.be_f8.npy}`,
    "5:19, 10:30", [[5, 19], [10, 30]], [0, 0]],
  ["hdf5 i4 gzip+shuffle", "hdf5/gzip_shuffle.h5", "/ints", "<i4", h("gzip_shuffle.h5", "/ints").chunks, `hdf5/${h("gzip_shuffle.h5", "/ints").npy}`,
    "7:45, 3:31", [[7, 45], [3, 31]], [1, 2]],
  ["hdf5 u1 3-D", "hdf5/byteorder.h5", "/u8_3d", "|u1", h("byteorder.h5", "/u8_3d").chunks, `hdf5/${h("byteorder.h5", "/u8_3d").npy}`,
    "1:4, :, 2:7", [[1, 4], [0, 6], [2, 7]], [1, 1, 0]],
  ["zarr v2 f8 blosc", "zarr/v2.zarr", "/blosc", "<f8", zarrChunks("v2.zarr", "blosc"), `zarr/${z("v2.zarr", "/blosc").npy}`,
    "2:12, 1:10", [[2, 12], [1, 10]], [1, 1]],
  ["zarr v2 >i4", "zarr/v2.zarr", "/big_endian", "<i4", zarrChunks("v2.zarr", "big_endian"), `zarr/${z("v2.zarr", "/big_endian").npy}`,
    "0:13, 3:4", [[0, 13], [3, 4]], [0, 0]],
  ["zarr v3 f8", "zarr/v3.zarr", "/temperature", "<f8", zarrChunks("v3.zarr", "temperature"), `zarr/${z("v3.zarr", "/temperature").npy}`,
    "1:12, 2:9", [[1, 12], [2, 9]], [1, 1]],
  ["zarr v3 i8", "zarr/v3.zarr", "/raw", "<i8", zarrChunks("v3.zarr", "raw"), `zarr/${z("v3.zarr", "/raw").npy}`,
    "2:13, 1:9", [[2, 13], [1, 9]], [0, 1]],
];

let server, worker, scratch;

before(async () => {
  scratch = scratchDir();
  server = await startServer({ root: fixtures });
  worker = await startWorker(scratch.dir, { vars: { ALLOWED_ORIGINS: server.url.replace(/\/$/, ""), CACHE: "memory" } });
});
after(async () => {
  await worker?.stop();
  await server?.stop();
  scratch?.remove();
});

const src = (file) => server.url + file;

describe("routes: values against the fixtures' .npy", () => {
  for (const [label, file, p, dtype, chunks, npyFile, select, ranges, coords] of cases) {
    const npy = () => readNpy(path.join(fixtures, npyFile));

    test(`${label}: /v1/info gives shape, dtype and chunks as written`, async () => {
      const r = await get(worker, "/v1/info", { src: src(file), path: p });
      assert.equal(r.status, 200, r.text());
      const body = r.json();
      assert.equal(body.kind, "array");
      assert.deepEqual(body.shape, npy().shape);
      assert.equal(body.dtype.replace(/^>/, "<"), dtype);
      assert.deepEqual(body.chunks, chunks);
      assert.ok(body.info.format, JSON.stringify(body.info));
      assert.match(r.headers.get("etag"), /^"[A-Za-z0-9_-]{22}"$/);
      assert.ok(r.headers.get("server-timing"));
    });

    test(`${label}: /v1/slice?select=${select} as npy, bin and json`, async () => {
      const want = boxBytes(npy(), ranges);
      const shape = ranges.map(([a, b]) => b - a);
      const n = await get(worker, "/v1/slice", { src: src(file), path: p, select, format: "npy" });
      assert.equal(n.status, 200, n.text());
      assert.equal(n.headers.get("content-type"), "application/x-npy");
      const parsed = parseNpyBody(n.body);
      assert.equal(parsed.descr, dtype);
      assert.equal(parsed.fortran, false);
      assert.deepEqual(parsed.shape, shape);
      assert.deepEqual(parsed.data, want);
      const b = await get(worker, "/v1/slice", { src: src(file), path: p, select, format: "bin" });
      assert.equal(b.status, 200, b.text());
      assert.equal(b.headers.get("x-chunkwise-shape"), shape.join(","));
      assert.equal(b.headers.get("x-chunkwise-dtype"), dtype);
      assert.deepEqual(b.body, want);
      const j = await get(worker, "/v1/slice", { src: src(file), path: p, select, format: "json" });
      assert.equal(j.status, 200, j.text());
      const body = j.json();
      assert.deepEqual(body.shape, shape);
      assert.equal(body.dtype, dtype);
      assert.deepEqual(body.values, boxJson(npy(), ranges));
      // Three formats, three tags.
      assert.equal(new Set([n, b, j].map((r) => r.headers.get("etag"))).size, 3);
    });

    test(`${label}: /v1/chunk?coords=${coords} raw, decoded in the chunk's shape`, async () => {
      const r = await get(worker, "/v1/chunk", { src: src(file), path: p, coords: coords.join(",") });
      assert.equal(r.status, 200, r.text());
      assert.equal(r.headers.get("content-type"), "application/octet-stream");
      assert.equal(r.headers.get("x-chunkwise-shape"), chunks.join(","));
      assert.equal(r.headers.get("x-chunkwise-dtype"), dtype);
      const a = npy();
      const size = a.raw.BYTES_PER_ELEMENT;
      assert.equal(r.body.length, chunks.reduce((x, y) => x * y, 1) * size);
      // Compare the part inside the array, row by row of the chunk's last dimension (edge
      // chunks hold what the source stores past the edge).
      const lo = coords.map((c, d) => c * chunks[d]);
      const hi = lo.map((l, d) => Math.min(l + chunks[d], a.shape[d]));
      const Ctor = a.raw.constructor;
      const got = new Ctor(r.body.buffer, r.body.byteOffset, r.body.length / size);
      const strides = chunks.map((_, d) => chunks.slice(d + 1).reduce((x, y) => x * y, 1));
      const inside = [];
      const walk = (d, off) => {
        if (d === chunks.length) { inside.push(got[off]); return; }
        for (let i = 0; i < hi[d] - lo[d]; i++) walk(d + 1, off + i * strides[d]);
      };
      walk(0, 0);
      assert.deepEqual(inside, box(a, lo.map((l, d) => [l, hi[d]])));
    });
  }

  test("a selection with an integer index and a negative step", async () => {
    const f = blosc2.cf_lz4_shuffle;
    const npy = readNpy(path.join(fixtures, "blosc2", f.npy));
    const r = await get(worker, "/v1/slice", { src: src(`blosc2/${f.file}`), select: "4, 20:2:-3", format: "json" });
    assert.equal(r.status, 200, r.text());
    const body = r.json();
    assert.deepEqual(body.shape, [6]);
    assert.deepEqual(body.values, [20, 17, 14, 11, 8, 5].map((j) => npy.at(4, j)));
  });

  test("a container without path: /v1/info lists the hierarchy", async () => {
    const r = await get(worker, "/v1/info", { src: src("hdf5/groups.h5") });
    assert.equal(r.status, 200, r.text());
    const body = r.json();
    assert.equal(body.kind, "store");
    const arrays = body.nodes.filter((n) => n.kind === "array").map((n) => [n.path, n.shape, n.dtype]);
    assert.deepEqual(arrays, [["/model/run1/values", [10, 10], "<f4"], ["/model/weights", [6, 4], "<i8"], ["/time", [100], "<u4"]]);
  });

  test("/v1/preview.png: 2-D selections only, before any read", async () => {
    const r = await get(worker, "/v1/preview.png", { src: src(`blosc2/${blosc2.nd1_i8.file}`), select: "0:10" });
    assert.equal(r.status, 400, r.text());
    assert.equal(r.json().error.code, "INVALID_SELECTION");
  });

  test("a bad selection answers 400 INVALID_SELECTION", async () => {
    for (const select of ["0:3, 1:2, 5", "a:b", "1:2:0", "99"]) {
      const r = await get(worker, "/v1/slice", { src: src(`blosc2/${blosc2.cf_lz4_shuffle.file}`), select });
      assert.equal(r.status, 400, `${select}: ${r.text()}`);
      assert.equal(r.json().error.code, "INVALID_SELECTION", select);
    }
  });

  test("bad coords answer 400 INVALID_ARGUMENT", async () => {
    for (const coords of ["", "0", "0,9", "0,-1", "x,1"]) {
      const r = await get(worker, "/v1/chunk", { src: src(`blosc2/${blosc2.cf_lz4_shuffle.file}`), coords });
      assert.equal(r.status, 400, `${coords}: ${r.text()}`);
      assert.equal(r.json().error.code, "INVALID_ARGUMENT", coords);
    }
  });

  test("a missing source answers 404 NOT_FOUND naming it", async () => {
    const r = await get(worker, "/v1/slice", { src: src("blosc2/no_such_array.b2nd") });
    assert.equal(r.status, 404, r.text());
    assert.equal(r.json().error.code, "NOT_FOUND");
    assert.match(r.json().error.message, /no_such_array/);
  });

  test("an unknown route answers 404 JSON; another method 405 with Allow", async () => {
    const r = await get(worker, "/v2/chunk", {});
    assert.equal(r.status, 404);
    assert.equal(r.json().error.code, "NOT_FOUND");
    assert.match(r.headers.get("server-timing"), /total;dur=/, "Server-Timing on every answer");
    const root = await get(worker, "/", {});
    assert.equal(root.status, 404);
    for (const method of ["POST", "PUT", "DELETE"]) {
      const res = await fetch(`${worker.base}/v1/slice?src=${encodeURIComponent(src(`blosc2/${blosc2.cf_lz4_shuffle.file}`))}`, { method });
      assert.equal(res.status, 405, method);
      assert.equal(res.headers.get("allow"), "GET, HEAD, OPTIONS");
      assert.equal((await res.json()).error.code, "METHOD_NOT_ALLOWED");
      assert.ok(res.headers.get("server-timing"));
    }
  });

  test("HEAD answers the GET's headers without a body", async () => {
    const q = new URLSearchParams({ src: src(`blosc2/${blosc2.cf_lz4_shuffle.file}`), select: "0:4, 0:4" });
    const g = await fetch(`${worker.base}/v1/slice?${q}`);
    const gb = await g.arrayBuffer();
    const res = await fetch(`${worker.base}/v1/slice?${q}`, { method: "HEAD" });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("etag"), g.headers.get("etag"));
    assert.equal((await res.arrayBuffer()).byteLength, 0);
    assert.ok(gb.byteLength > 0);
  });

  test("/v1/stats counts requests per route and statuses", async () => {
    const r = await get(worker, "/v1/stats");
    assert.equal(r.status, 200);
    assert.ok(r.headers.get("server-timing"));
    const s = r.json();
    assert.ok(s.requests["/v1/slice"] >= cases.length * 3, JSON.stringify(s.requests));
    assert.ok(s.statuses["200"] > 0 && s.statuses["400"] > 0 && s.statuses["404"] > 0 && s.statuses["405"] > 0, JSON.stringify(s.statuses));
    assert.ok(s.upstream.requests > 0 && s.upstream.bytes > 0, JSON.stringify(s.upstream));
    // The isolate started during this test file, not in 1970 (workerd's clock at module load).
    const age = Date.now() - Date.parse(s.startedAt);
    assert.ok(age >= 0 && age < 10 * 60_000, `startedAt ${s.startedAt}`);
    assert.ok(s.uptimeMs >= 0 && s.uptimeMs <= age + 1000, `uptimeMs ${s.uptimeMs}, started ${age} ms ago`);
  });
});
