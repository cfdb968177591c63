// Caching at the edge in workerd: strong ETags and If-None-Match (304), Cache-Control from
// the source's immutability, a repeated request served with no upstream request, identical
// concurrent requests joined into one upstream fetch (single-flight, counted by the upstream's
// own request log), and the Cache API (tests/e2e/cache-api-service.mjs behind workerd's
// cacheApiOutbound) making a new isolate, a restarted workerd, start warm: zero upstream
// requests, the values written; an entry damaged in the cache is fetched again.

import assert from "node:assert/strict";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import {
  boxBytes, fixtures, get, manifest, readNpy, scratchDir, startCacheService, startServer, startWorker, timing, until,
} from "./harness.mjs";

const blosc2 = manifest("blosc2");
let up, slow, other, cache, scratch;
const origin = (u) => u.replace(/\/$/, "");

before(async () => {
  scratch = scratchDir();
  up = await startServer({ root: fixtures });
  slow = await startServer({ root: fixtures, latencyMs: 300 });
  other = await startServer({ root: fixtures });
  cache = await startCacheService();
});
after(async () => {
  for (const s of [up, slow, other, cache]) await s?.stop();
  scratch?.remove();
});

let n = 0;
function workerWith(vars = {}) {
  return startWorker(path.join(scratch.dir, `w${n++}`), {
    cache: cache.address,
    vars: { ALLOWED_ORIGINS: [up, slow, other].map((s) => origin(s.url)).join(","), MUTABLE_ORIGINS: origin(other.url), ...vars },
  });
}

/** Waits until `server` has logged a request made now, so every earlier one is in its log. */
async function settle(server) {
  const probe = `/settle-${Date.now()}-${Math.random().toString(36).slice(2)}`;
  await fetch(server.url + probe.slice(1)).then((r) => r.arrayBuffer()).catch(() => {});
  await until(() => server.log.some((r) => r.path === probe), 5000, "the server's log");
}

const requests = (server, mark, prefix) => server.log.slice(mark).filter((r) => r.path.startsWith(prefix) && !r.path.startsWith("/settle-")).length;

describe("conditional requests and Cache-Control", () => {
  let w;
  before(async () => { w = await workerWith({ CACHE: "memory" }); });
  after(async () => { await w?.stop(); });

  test("If-None-Match with the ETag: 304, no body, no upstream request", async () => {
    const f = blosc2.cf_lz4_shuffle;
    const q = { src: `${up.url}blosc2/${f.file}`, select: "2:10, 3:9", format: "npy" };
    const first = await get(w, "/v1/slice", q);
    assert.equal(first.status, 200, first.text());
    const etag = first.headers.get("etag");
    assert.match(etag, /^"[A-Za-z0-9_-]{22}"$/, "a strong tag");
    assert.equal(first.headers.get("cache-control"), "public, max-age=31536000, immutable");
    await settle(up);
    const mark = up.log.length;
    for (const inm of [etag, `W/${etag}`, `"other", ${etag}`, "*"]) {
      const again = await get(w, "/v1/slice", q, { "If-None-Match": inm });
      assert.equal(again.status, 304, inm);
      assert.equal(again.body.length, 0);
      assert.equal(again.headers.get("etag"), etag);
      assert.equal(again.headers.get("cache-control"), "public, max-age=31536000, immutable");
      assert.ok(timing(again.headers).total, "Server-Timing on a 304");
    }
    const miss = await get(w, "/v1/slice", q, { "If-None-Match": '"not-it"' });
    assert.equal(miss.status, 200);
    assert.deepEqual(miss.body, first.body);
    await settle(up);
    assert.equal(requests(up, mark, "/blosc2/"), 0);
    // The tag follows the selection, the format and the path of the request.
    const tags = new Set();
    for (const extra of [{}, { select: "2:10, 3:8" }, { format: "json" }, { select: "2:10,3:9" }]) {
      tags.add((await get(w, "/v1/slice", { ...q, ...extra })).headers.get("etag"));
    }
    assert.equal(tags.size, 4);
    const chunkTags = new Set();
    for (const coords of ["0,0", "0,1", "1,0"]) chunkTags.add((await get(w, "/v1/chunk", { src: q.src, coords })).headers.get("etag"));
    assert.equal(chunkTags.size, 3);
  });

  test("a source of MUTABLE_ORIGINS is answered with Cache-Control: no-cache", async () => {
    const r = await get(w, "/v1/slice", { src: `${other.url}blosc2/${blosc2.be_f8.file}`, select: "0:3, 0:3" });
    assert.equal(r.status, 200, r.text());
    assert.equal(r.headers.get("cache-control"), "no-cache");
    assert.ok(r.headers.get("etag"));
  });
});

describe("a repeated request and concurrent identical requests", () => {
  let w;
  before(async () => { w = await workerWith({ CACHE: "memory" }); });
  after(async () => { await w?.stop(); });

  test("a second identical request makes no upstream request (Server-Timing says so)", async () => {
    const q = { src: `${up.url}zarr/v3.zarr`, path: "/temperature", select: "1:12, 2:9", format: "bin" };
    const npy = readNpy(path.join(fixtures, "zarr/v3_temperature.npy"));
    await settle(up);
    let mark = up.log.length;
    const first = await get(w, "/v1/slice", q);
    assert.equal(first.status, 200, first.text());
    assert.deepEqual(first.body, boxBytes(npy, [[1, 12], [2, 9]]));
    const t1 = timing(first.headers);
    assert.equal(t1.cache.desc, "miss");
    await settle(up);
    const upstream = requests(up, mark, "/zarr/v3.zarr/");
    assert.ok(upstream > 0);
    // Bytes of the answers' bodies (the core does not count a 404's body).
    assert.equal(t1.upstream.desc, `requests=${upstream} bytes=${up.log.slice(mark).filter((r) => r.path.startsWith("/zarr/v3.zarr/") && r.status < 300).reduce((s, r) => s + r.bytes, 0)}`);
    mark = up.log.length;
    const second = await get(w, "/v1/slice", q);
    assert.deepEqual(second.body, first.body);
    assert.equal(timing(second.headers).cache.desc, "hit-response");
    assert.equal(timing(second.headers).upstream.desc, "requests=0 bytes=0");
    // Another format of the same selection: the core's payload cache, no request either.
    const third = await get(w, "/v1/slice", { ...q, format: "npy" });
    assert.equal(third.status, 200);
    assert.equal(timing(third.headers).cache.desc, "hit-payload");
    assert.ok(timing(third.headers).decode.dur >= 0);
    await settle(up);
    assert.equal(requests(up, mark, "/zarr/"), 0, "the upstream saw no request");
  });

  test("16 identical concurrent requests: one upstream fetch of the chunk (single-flight)", async () => {
    const src = `${slow.url}zarr/v3.zarr`;
    const q = { src, path: "/gzip", select: "0:5, 0:4", format: "bin" }; // one chunk (5 x 4)
    const opened = await get(w, "/v1/info", { src, path: "/gzip" });
    assert.equal(opened.status, 200, opened.text());
    const before0 = (await get(w, "/v1/stats")).json().singleFlight.joins;
    await settle(slow);
    const mark = slow.log.length;
    const answers = await Promise.all(Array.from({ length: 16 }, () => get(w, "/v1/slice", q)));
    await settle(slow);
    const npy = readNpy(path.join(fixtures, "zarr/v3_gzip.npy"));
    for (const a of answers) {
      assert.equal(a.status, 200, a.text() + w.output());
      assert.deepEqual(a.body, boxBytes(npy, [[0, 5], [0, 4]]));
    }
    const chunkRequests = slow.log.slice(mark).filter((r) => r.path.startsWith("/zarr/v3.zarr/gzip/c"));
    assert.equal(chunkRequests.length, 1, JSON.stringify(slow.log.slice(mark)));
    const kinds = answers.map((a) => timing(a.headers).cache.desc).sort();
    assert.deepEqual(kinds, [...Array(15).fill("joined"), "miss"]);
    const s = (await get(w, "/v1/stats")).json();
    assert.equal(s.singleFlight.joins - before0, 15);
  });
});

describe("concurrent different requests in one isolate", () => {
  let w;
  before(async () => { w = await workerWith({ CACHE: "memory" }); });
  after(async () => { await w?.stop(); });

  // Each read fetches its own chunks while others are in flight, or joins another's (core
  // operations run concurrently; tests/contexts.test.mjs shows what fails without the
  // compatibility flag handle_cross_request_promise_resolution).
  test("16 concurrent reads of different chunks: every one answered with its values", async () => {
    const src = `${slow.url}zarr/v3.zarr`;
    const npy = readNpy(path.join(fixtures, "zarr/v3_blosc.npy"));
    assert.equal((await get(w, "/v1/info", { src, path: "/blosc" })).status, 200);
    const boxes = [];
    for (let i = 0; i < 3; i++) for (let j = 0; j < 3; j++) boxes.push([[i * 5, Math.min(13, i * 5 + 5)], [j * 4, Math.min(11, j * 4 + 4)]]);
    const asked = Array.from({ length: 16 }, (_, k) => boxes[k % boxes.length]).map((b, k) => ({ b, select: `${b[0][0]}:${b[0][1]}, ${b[1][0]}:${b[1][1]}${k >= boxes.length ? "," : ""}` }));
    const answers = await Promise.all(asked.map(({ select }) => get(w, "/v1/slice", { src, path: "/blosc", select, format: "bin" })));
    answers.forEach((a, k) => {
      assert.equal(a.status, 200, `${asked[k].select}: ${a.text().slice(0, 300)}`);
      assert.deepEqual(a.body, boxBytes(npy, asked[k].b), asked[k].select);
    });
  });

  test("8 concurrent first requests of one source: one open (its metadata fetched once)", async () => {
    const src = `${slow.url}zarr/v3.zarr`;
    const npy = readNpy(path.join(fixtures, "zarr/v3_crc32c.npy"));
    await settle(slow);
    const mark = slow.log.length;
    const before0 = (await get(w, "/v1/stats")).json().opens;
    const rows = Array.from({ length: 8 }, (_, i) => i);
    const answers = await Promise.all(rows.map((i) => get(w, "/v1/slice", { src, path: "/crc32c", select: `${i}, :`, format: "bin" })));
    answers.forEach((a, i) => {
      assert.equal(a.status, 200, a.text());
      assert.deepEqual(a.body, boxBytes(npy, [[i, i + 1], [0, 11]]));
    });
    await settle(slow);
    const meta = slow.log.slice(mark).filter((r) => r.path === "/zarr/v3.zarr/crc32c/zarr.json");
    assert.equal(meta.length, 1, "zarr.json fetched once");
    const opens = (await get(w, "/v1/stats")).json().opens;
    assert.equal(opens.started - before0.started, 1);
    assert.ok(opens.shared - before0.shared >= 7);
  });
});

describe("the Cache API: a new isolate starts warm", () => {
  const b = blosc2.cf_lz4_shuffle;
  // [label, route, query, expected bytes, upstream path prefix]
  const cases = [
    ["b2nd", "/v1/slice", { src: () => `${up.url}blosc2/${b.file}`, select: "3:29, 2:20", format: "bin" },
      () => boxBytes(readNpy(path.join(fixtures, "blosc2", b.npy)), [[3, 29], [2, 20]]), "/blosc2/"],
    ["hdf5", "/v1/slice", { src: () => `${up.url}hdf5/contiguous.h5`, path: "/x", select: "1:30, 4:20", format: "bin" },
      () => boxBytes(readNpy(path.join(fixtures, "hdf5/contiguous_x.npy")), [[1, 30], [4, 20]]), "/hdf5/"],
    ["zarr v3", "/v1/slice", { src: () => `${up.url}zarr/v3.zarr`, path: "/raw", select: "2:13, 1:9", format: "bin" },
      () => boxBytes(readNpy(path.join(fixtures, "zarr/v3_raw.npy")), [[2, 13], [1, 9]]), "/zarr/v3.zarr/"],
    ["zarr v2", "/v1/slice", { src: () => `${up.url}zarr/v2.zarr`, path: "/zlib", select: "0:13, 0:11", format: "bin" },
      () => boxBytes(readNpy(path.join(fixtures, "zarr/v2_zlib.npy")), [[0, 13], [0, 11]]), "/zarr/v2.zarr/"],
    ["zarr v3 chunk", "/v1/chunk", { src: () => `${up.url}zarr/v3.zarr`, path: "/blosc", coords: "0,0" },
      () => boxBytes(readNpy(path.join(fixtures, "zarr/v3_blosc.npy")), [[0, 5], [0, 4]]), "/zarr/v3.zarr/"],
  ];

  async function askAll(w) {
    const out = {};
    for (const [label, route, q] of cases) {
      const r = await get(w, route, Object.fromEntries(Object.entries(q).map(([k, v]) => [k, typeof v === "function" ? v() : v])));
      assert.equal(r.status, 200, `${label}: ${r.text()}\n${w.output()}`);
      out[label] = r;
    }
    return out;
  }

  test("zero upstream requests after a restart; the same values and tags; damage is refetched", async (t) => {
    const check = (got, when) => {
      for (const [label, , , want] of cases) assert.deepEqual(got[label].body, want(), `${when} ${label}: values differ from the array written`);
    };
    await settle(up);
    let mark = up.log.length;
    const w1 = await workerWith();
    let cold;
    try { cold = await askAll(w1); } finally { await w1.stop(); }
    await settle(up);
    check(cold, "first isolate");
    for (const [label, , , , prefix] of cases.filter(([l]) => l !== "zarr v3 chunk")) {
      assert.ok(requests(up, mark, prefix) > 0, `${label}: the first isolate fetched`);
    }
    assert.ok(cache.log.some((o) => o.op === "put" && o.result === 204), "entries were stored in the Cache API");

    mark = up.log.length;
    const w2 = await workerWith();
    let warm;
    try { warm = await askAll(w2); } finally { await w2.stop(); }
    await settle(up);
    check(warm, "second isolate");
    assert.equal(requests(up, mark, "/"), 0, `the upstream saw no request from the new isolate: ${JSON.stringify(up.log.slice(mark))}`);
    for (const [label] of cases) {
      assert.equal(warm[label].headers.get("etag"), cold[label].headers.get("etag"), `${label}: the same tag in every isolate`);
      assert.equal(timing(warm[label].headers).upstream.desc, "requests=0 bytes=0", label);
      assert.equal(timing(warm[label].headers).cache.desc, "hit-payload", label);
    }

    // Damage one stored payload blob of the Zarr v3 array: a miss, fetched again.
    const zarrUrl = up.url + "zarr/v3.zarr";
    const markerKey = [...cache.entries.keys()].find((k) => k.includes("%2Fpayload%2Fm%2F") &&
      JSON.parse(cache.entries.get(k).body.toString("utf8")).key.startsWith(zarrUrl));
    assert.ok(markerKey, "a payload marker of the Zarr array in the cache");
    const blob = cache.entries.get(markerKey.replace("%2Fpayload%2Fm%2F", "%2Fpayload%2Fb%2F"));
    blob.body = Buffer.from(blob.body);
    blob.body[blob.body.length >> 1] ^= 0x40;
    mark = up.log.length;
    const w3 = await workerWith();
    let healed;
    try { healed = await askAll(w3); } finally { await w3.stop(); }
    await settle(up);
    check(healed, "after damage");
    assert.ok(requests(up, mark, "/zarr/v3.zarr/") > 0, "the damaged chunk was fetched again");
    assert.equal(requests(up, mark, "/blosc2/") + requests(up, mark, "/hdf5/"), 0, "untouched entries still serve");
    t.diagnostic(`upstream requests: first isolate ${cold ? "fetched" : ""}; second 0; after damage ${requests(up, mark, "/")}`);
  });
});
