// The example edge worker (www/worker) in workerd, from npm: the `web` build of the package
// bundled into a worker, reading fixtures through `chunkwise serve` over loopback. Values equal
// the .npy of the array written; a repeated request is served from the isolate's open array
// without new range requests; a missing source answers with an error JSON.

import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { fixtures, manifest, readNpy, scratchDir, startServer } from "./lib.mjs";
import { expectedJson, freePort, requireWorkerdAndPkg, startWorkerd, writeConfig } from "./workerd.mjs";

const blosc2 = manifest("blosc2");

let server, worker, scratch, base;

before(async () => {
  requireWorkerdAndPkg();
  scratch = scratchDir("chunkwise-workerd-");
  server = await startServer({ root: fixtures });
  const port = await freePort();
  worker = await startWorkerd(writeConfig(scratch.dir, port), port);
  base = `http://127.0.0.1:${port}/`;
});
after(async () => {
  await worker?.stop();
  await server?.stop();
  scratch?.remove();
});

/** GET the worker for `src` (a path under tests/fixtures) and `select`; returns status and JSON. */
async function ask(src, select) {
  const q = new URLSearchParams({ src: server.url + src.replace(/^\//, "") });
  if (select !== undefined) q.set("select", select);
  const res = await fetch(`${base}?${q}`, { signal: AbortSignal.timeout(15000) });
  const text = await res.text();
  try {
    return { status: res.status, body: JSON.parse(text) };
  } catch {
    throw new Error(`worker answered ${res.status} with non-JSON: ${text.slice(0, 500)}\n${worker.output()}`);
  }
}

describe("workerd: www/worker", () => {
  // [fixture, selection, ranges of the selection]: a float, 64-bit integers (decimal strings
  // in JSON) across chunk boundaries, and big-endian data (returned little-endian).
  const cases = [
    ["cf_lz4_shuffle", "3:29, 2:20", [[3, 29], [2, 20]]],
    ["nd4_f4", "1:4, :, 2:7, 5:8", [[1, 4], [0, 6], [2, 7], [5, 8]]],
    ["nd1_i8", "250:1000", [[250, 1000]]],
    ["dtype_int64", ":, :", [[0, 20], [0, 17]]],
    ["be_f8", "5:19, 10:30", [[5, 19], [10, 30]]],
    ["be_i4", "0:20, 3:4", [[0, 20], [3, 4]]],
  ];
  for (const [name, select, ranges] of cases) {
    test(`${name}[${select}]: shape, dtype and values equal the .npy`, async () => {
      const f = blosc2[name];
      const npy = readNpy(path.join(fixtures, "blosc2", f.npy));
      const { status, body } = await ask(`/blosc2/${f.file}`, select);
      assert.equal(status, 200, JSON.stringify(body));
      assert.deepEqual(body.shape, ranges.map(([a, b]) => b - a));
      assert.equal(body.dtype, f.dtype.replace(">", "<"));
      assert.equal(body.truncated, false);
      const want = expectedJson(npy, ranges);
      assert.equal(body.size, want.length);
      assert.deepEqual(body.values, want);
      assert.ok(body.traffic.requests > 0 && body.traffic.bytes > 0, JSON.stringify(body.traffic));
    });
  }

  // Zarr arrays opened by the URL of their directory (no path option): a v3 shard with its
  // index first, a v2 F-order array, big-endian v3 data (returned little-endian).
  const zarrArrays = JSON.parse(fs.readFileSync(path.join(fixtures, "zarr/manifest.json"), "utf8")).arrays;
  const zarrCases = [
    ["v3.zarr", "/sharded_start", "2:14, 1:11", [[2, 14], [1, 11]]],
    ["v2.zarr", "/f_order", "1:10, :, 1:4", [[1, 10], [0, 7], [1, 4]]],
    ["v3.zarr", "/big_endian", "3:9, 0:11", [[3, 9], [0, 11]]],
  ];
  for (const [store, arrayPath, select, ranges] of zarrCases) {
    test(`zarr ${store}${arrayPath}[${select}]: values equal the .npy`, async () => {
      const a = zarrArrays.find((x) => x.store === store && x.path === arrayPath);
      const npy = readNpy(path.join(fixtures, "zarr", a.npy));
      const { status, body } = await ask(`/zarr/${store}${arrayPath}`, select);
      assert.equal(status, 200, JSON.stringify(body));
      assert.deepEqual(body.shape, ranges.map(([lo, hi]) => hi - lo));
      assert.equal(body.dtype, a.dtype.replace(">", "<"));
      assert.deepEqual(body.values, expectedJson(npy, ranges));
    });
  }

  test("a repeated request makes no new range requests (the isolate keeps the array)", async () => {
    const f = blosc2.exact_fit_f8;
    const npy = readNpy(path.join(fixtures, "blosc2", f.npy));
    const first = await ask(`/blosc2/${f.file}`, "4:30, 1:23");
    assert.equal(first.status, 200, JSON.stringify(first.body));
    const mark = server.log.length;
    const second = await ask(`/blosc2/${f.file}`, "4:30, 1:23");
    assert.equal(second.status, 200, JSON.stringify(second.body));
    assert.deepEqual(second.body.values, expectedJson(npy, [[4, 30], [1, 23]]));
    assert.deepEqual(second.body.values, first.body.values);
    assert.deepEqual(second.body.traffic, first.body.traffic);
    assert.equal(server.counted(`/blosc2/${f.file}`, mark).requests, 0, "the server saw no request");
    // Another selection of the same array is read from the same open array.
    const third = await ask(`/blosc2/${f.file}`, "0:32, 0:24");
    assert.deepEqual(third.body.values, expectedJson(npy, [[0, 32], [0, 24]]));
    assert.ok(third.body.traffic.requests >= first.body.traffic.requests);
  });

  test("a large selection is truncated to `limit` values", async () => {
    const f = blosc2.nd1_i8;
    const npy = readNpy(path.join(fixtures, "blosc2", f.npy));
    const q = new URLSearchParams({ src: `${server.url}blosc2/${f.file}`, limit: "10" });
    const body = await (await fetch(`${base}?${q}`)).json();
    assert.equal(body.size, 1000);
    assert.equal(body.truncated, true);
    assert.deepEqual(body.values, expectedJson(npy, [[0, 10]]));
  });

  test("a missing source answers 404 with error code NOT_FOUND", async () => {
    const { status, body } = await ask("/blosc2/no_such_array.b2nd", ":");
    assert.equal(status, 404);
    assert.equal(body.error.code, "NOT_FOUND", JSON.stringify(body));
    assert.match(body.error.message, /no_such_array/);
  });

  test("a request without src answers 400 INVALID_ARGUMENT", async () => {
    const res = await fetch(base);
    assert.equal(res.status, 400);
    assert.equal((await res.json()).error.code, "INVALID_ARGUMENT");
  });
});
