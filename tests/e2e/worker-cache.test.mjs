// The example worker with `cache=disk` (cache "disk" over cacheApiStore) in workerd: a second
// workerd process, a new isolate with nothing in memory, starts warm. workerd's Cache API goes
// to the service its config's cacheApiOutbound names; here that is cache-api-service.mjs, an
// in-memory stand-in for Cloudflare's cache speaking workerd's cache protocol, which outlives
// the workerd processes. A .b2nd region, an HDF5 dataset and a Zarr array: the first process
// fetches them from `chunkwise serve`; the second reads them with zero range requests and the
// values of the .npy; an entry damaged in the cache is refetched by a third.

import assert from "node:assert/strict";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { startCacheService } from "./cache-api-service.mjs";
import { fixtures, manifest, readNpy, scratchDir, startServer, until } from "./lib.mjs";
import { expectedJson, freePort, requireWorkerdAndPkg, startWorkerd, writeConfig } from "./workerd.mjs";

const blosc2 = manifest("blosc2");

// [label, source under tests/fixtures, path option, selection, ranges of the selection, .npy]
const cases = [
  ["b2nd", `blosc2/${blosc2.cf_lz4_shuffle.file}`, undefined, "3:29, 2:20", [[3, 29], [2, 20]],
    `blosc2/${blosc2.cf_lz4_shuffle.npy}`],
  ["hdf5", "hdf5/contiguous.h5", "/x", "1:30, 4:20", [[1, 30], [4, 20]], "hdf5/contiguous_x.npy"],
  ["zarr", "zarr/v3.zarr", "/raw", "2:13, 1:9", [[2, 13], [1, 9]], "zarr/v3_raw.npy"],
];

let server, cache, scratch;

before(async () => {
  requireWorkerdAndPkg();
  server = await startServer({ root: fixtures });
  cache = await startCacheService();
  scratch = scratchDir("chunkwise-workerd-cache-");
});
after(async () => {
  await server?.stop();
  await cache?.stop();
  scratch?.remove();
});

/** Starts a workerd process of the example worker (a new isolate) on a fresh port. */
async function startWorker() {
  const port = await freePort();
  const worker = await startWorkerd(writeConfig(scratch.dir, port, { cache: cache.address }), port);
  return { ...worker, base: `http://127.0.0.1:${port}/` };
}

/** Asks `worker` for every case with cache=disk; resolves to the JSON bodies by label. */
async function askAll(worker) {
  const out = {};
  for (const [label, file, p, select] of cases) {
    const q = new URLSearchParams({ src: server.url + file, select, cache: "disk" });
    if (p) q.set("path", p);
    const res = await fetch(`${worker.base}?${q}`, { signal: AbortSignal.timeout(20000) });
    const text = await res.text();
    let body;
    try {
      body = JSON.parse(text);
    } catch {
      throw new Error(`worker answered ${res.status} with non-JSON: ${text.slice(0, 500)}\n${worker.output()}`);
    }
    assert.equal(res.status, 200, `${label}: ${text.slice(0, 500)}`);
    out[label] = body;
  }
  return out;
}

/** Range requests the server logged since `mark` for /`file` and the keys under it. */
function requestsFor(file, mark) {
  return server.log.slice(mark).filter((r) => r.method !== "OPTIONS" &&
    (r.path === `/${file}` || r.path.startsWith(`/${file}/`))).length;
}

/** Waits until the server has logged a request made now, so every earlier one is in the log. */
async function settle() {
  const probe = `/settle-${Date.now()}-${Math.random().toString(36).slice(2)}`;
  await fetch(server.url + probe.slice(1)).then((r) => r.arrayBuffer()).catch(() => {});
  await until(() => server.log.some((r) => r.path === probe), 5000, "the server's log");
}

function assertValues(got, label) {
  for (const [name, , , , ranges, npy] of cases) {
    const e = readNpy(path.join(fixtures, npy));
    assert.deepEqual(got[name].shape, ranges.map(([a, b]) => b - a), `${label} ${name}`);
    assert.deepEqual(got[name].values, expectedJson(e, ranges), `${label} ${name}: values differ from the array written`);
  }
}

const ops = (since) => cache.log.slice(since).reduce((m, o) => {
  const k = `${o.op} ${o.result}`;
  m[k] = (m[k] ?? 0) + 1;
  return m;
}, {});

describe("workerd: www/worker with cache=disk over the Cache API", () => {
  test("a second workerd process starts warm: zero range requests, the values written", async (t) => {
    let mark = server.log.length;
    let opMark = cache.log.length;
    const first = await startWorker();
    let cold;
    try {
      cold = await askAll(first);
    } finally {
      await first.stop();
    }
    await settle();
    assertValues(cold, "first process");
    for (const [name, file] of cases) {
      assert.ok(cold[name].traffic.requests > 0, `${name}: the first process fetched`);
      assert.equal(requestsFor(file, mark), cold[name].traffic.requests, `${name}: the server counted what the array did`);
    }
    const coldOps = ops(opMark);
    assert.ok(coldOps["put 204"] > 0, `the first process stored entries: ${JSON.stringify(coldOps)}`);
    assert.ok(cache.log.slice(opMark).every((o) => o.namespace === "chunkwise" && o.key.startsWith("chunkwise.invalid/chunkwise%2F")),
      "every operation is on the cache \"chunkwise\", under the synthetic origin");

    mark = server.log.length;
    opMark = cache.log.length;
    const second = await startWorker();
    let warm;
    try {
      warm = await askAll(second);
    } finally {
      await second.stop();
    }
    await settle();
    assertValues(warm, "second process");
    for (const [name, file] of cases) {
      assert.deepEqual(warm[name].traffic, { requests: 0, bytes: 0, roundTrips: 0 }, name);
      assert.equal(requestsFor(file, mark), 0, `${name}: the range server saw no request from the second process`);
    }
    const warmOps = ops(opMark);
    assert.ok(warmOps["match HIT"] > 0, JSON.stringify(warmOps));

    // Damage the body of one stored payload blob of the Zarr array (its marker names the source).
    const zarrUrl = server.url + "zarr/v3.zarr";
    const markerKey = [...cache.entries.keys()].find((k) => k.includes("%2Fpayload%2Fm%2F") &&
      JSON.parse(cache.entries.get(k).body.toString("utf8")).key.startsWith(zarrUrl));
    assert.ok(markerKey, "a payload marker of the Zarr array in the cache");
    const blob = cache.entries.get(markerKey.replace("%2Fpayload%2Fm%2F", "%2Fpayload%2Fb%2F"));
    assert.ok(blob, "its blob");
    blob.body = Buffer.from(blob.body);
    blob.body[blob.body.length >> 1] ^= 0x40;

    mark = server.log.length;
    opMark = cache.log.length;
    const third = await startWorker();
    let healed;
    try {
      healed = await askAll(third);
    } finally {
      await third.stop();
    }
    await settle();
    assertValues(healed, "after damage");
    assert.ok(healed.zarr.traffic.requests > 0, "the damaged chunk was fetched again");
    assert.equal(requestsFor("zarr/v3.zarr", mark), healed.zarr.traffic.requests);
    for (const name of ["b2nd", "hdf5"]) assert.equal(healed[name].traffic.requests, 0, `${name}: untouched entries still serve`);
    const healedOps = ops(opMark);
    const traffic = (r) => Object.fromEntries(cases.map(([n]) => [n, r[n].traffic.requests]));
    t.diagnostic(`range requests: first ${JSON.stringify(traffic(cold))} second ${JSON.stringify(traffic(warm))} after damage ${JSON.stringify(traffic(healed))}`);
    t.diagnostic(`cache operations: first ${JSON.stringify(coldOps)} second ${JSON.stringify(warmOps)} after damage ${JSON.stringify(healedOps)}`);
  });
});
