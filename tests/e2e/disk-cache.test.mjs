// `cache: "disk"` in headless Chromium, on IndexedDB and on OPFS, for a .b2nd, an HDF5 dataset
// and a Zarr array served by `chunkwise serve`, whose request log (not only the page's own
// `traffic`) counts what reaches the network:
// - a read, a page reload, and a browser restart on the same profile: the reopen and reread
//   make zero requests, and the values equal the .npy written by the fixture generators;
// - two pages and a dedicated worker filling one cache at once, then read warm;
// - blobs damaged through the page's own IndexedDB / OPFS API are refetched, not returned;
// - the origin's storage cleared while an array is open gives misses, not errors;
// - a quota too small for any entry skips the writes; reads still succeed.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import path from "node:path";
import { chromiumPath, fixtures, readNpy, scratchDir, startServer } from "./lib.mjs";

const SOURCES = {
  b2nd: { file: "/tests/fixtures/blosc2/cf_blosclz_nofilter.b2nd", npy: "blosc2/cf_blosclz_nofilter.npy" },
  hdf5: { file: "/tests/fixtures/hdf5/contiguous.h5", path: "/x", npy: "hdf5/contiguous_x.npy" },
  zarr: { file: "/tests/fixtures/zarr/v3.zarr", path: "/raw", npy: "zarr/v3_raw.npy" },
};
const expected = Object.fromEntries(Object.entries(SOURCES).map(([k, s]) =>
  [k, readNpy(path.join(fixtures, s.npy)).values]));

let pageServer, dataServer;

before(async () => {
  [pageServer, dataServer] = await Promise.all([startServer({ quiet: true }), startServer()]);
});

after(async () => {
  await Promise.all([pageServer?.stop(), dataServer?.stop()]);
});

const ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
  "--disable-background-networking", "--disable-component-update", "--disable-sync"];

/** A persistent Chromium profile in `dir` (its IndexedDB and OPFS survive a restart). */
async function launch(dir) {
  const { chromium } = await import("playwright-core");
  return chromium.launchPersistentContext(dir, {
    executablePath: chromiumPath, headless: true, args: ARGS, timeout: 30000,
  });
}

const pageUrl = () => `${pageServer.url}tests/e2e/cache-page.html`;

async function newPage(ctx) {
  const page = await ctx.newPage();
  page.on("pageerror", (e) => console.error("page error:", e.message));
  await page.goto(pageUrl());
  return page;
}

/** Server requests for `source` since log position `since` (a Zarr store: every key under it). */
function served(source, since) {
  const hits = dataServer.log.slice(since).filter((r) => r.path.startsWith(SOURCES[source].file) && r.method !== "OPTIONS");
  return hits.length;
}

/** Opens `source` in `page` (or in a worker of it) with `opts` and reads all of it. */
function readIn(page, source, opts, { worker = false } = {}) {
  const s = SOURCES[source];
  return page.evaluate(async ({ url, path, opts, worker }) => window.cacheTest.read(url, { ...opts, path }, worker),
    { url: dataServer.url + s.file.slice(1), path: s.path ?? null, opts, worker });
}

function assertValues(got, source, what) {
  assert.equal(got.error, undefined, `${what}: ${got.error}`);
  assert.deepEqual(got.data, expected[source], `${what}: values equal the array written`);
}

for (const backend of ["indexeddb", "opfs"]) {
  describe(`cache "disk" on ${backend}`, () => {
    test("read, reload, restart: the reopen makes zero requests for every format", async () => {
      const profile = scratchDir("chunkwise-profile-");
      const opts = { cache: "disk", cacheBackend: backend, cacheName: `reload-${backend}` };
      let ctx = await launch(profile.dir);
      try {
        let page = await newPage(ctx);
        for (const source of Object.keys(SOURCES)) {
          const mark = dataServer.log.length;
          const cold = await readIn(page, source, opts);
          assertValues(cold, source, `${source} cold`);
          assert.equal(cold.cacheStatus, "created", source);
          assert.ok(served(source, mark) > 0, `${source}: the cold read reached the server`);
          assert.equal(cold.cacheErrors, 0, `${source}: no storage failure`);
        }
        await page.reload();
        for (const source of Object.keys(SOURCES)) {
          const mark = dataServer.log.length;
          const warm = await readIn(page, source, opts);
          assertValues(warm, source, `${source} after reload`);
          assert.equal(served(source, mark), 0, `${source}: requests after a reload`);
          assert.equal(warm.traffic.requests, 0, `${source}: traffic after a reload`);
          assert.equal(warm.cacheStatus, "reused", source);
        }
        const usage = await page.evaluate((o) => window.cacheTest.usage(o), opts);
        assert.equal(usage.perSource.length >= 2, true, JSON.stringify(usage));
        assert.ok(usage.payload.bytes > 0 && usage.discovery.entries >= 3, JSON.stringify(usage));
        await ctx.close();
        ctx = await launch(profile.dir);
        page = await newPage(ctx);
        for (const source of Object.keys(SOURCES)) {
          const mark = dataServer.log.length;
          const warm = await readIn(page, source, opts);
          assertValues(warm, source, `${source} after a browser restart`);
          assert.equal(served(source, mark), 0, `${source}: requests after a restart`);
        }
        // clearCache empties it: the next open fetches again.
        const removed = await page.evaluate((o) => window.cacheTest.clear(o), opts);
        assert.ok(removed > 0, `removed ${removed}`);
        const mark = dataServer.log.length;
        assertValues(await readIn(page, "b2nd", opts), "b2nd", "after clearCache");
        assert.ok(served("b2nd", mark) > 0, "fetched again after clearCache");
      } finally {
        await ctx.close();
        profile.remove();
      }
    });

    test("two pages and a worker fill one cache at once; a new page then reads it warm", async () => {
      const profile = scratchDir("chunkwise-profile-");
      const ctx = await launch(profile.dir);
      const opts = { cache: "disk", cacheBackend: backend, cacheName: `many-${backend}` };
      try {
        const [a, b] = await Promise.all([newPage(ctx), newPage(ctx)]);
        const results = await Promise.all([
          readIn(a, "b2nd", opts), readIn(b, "hdf5", opts), readIn(a, "zarr", opts, { worker: true }),
          readIn(b, "b2nd", opts), readIn(a, "hdf5", opts, { worker: true }), readIn(a, "zarr", opts),
        ]);
        const order = ["b2nd", "hdf5", "zarr", "b2nd", "hdf5", "zarr"];
        results.forEach((r, i) => assertValues(r, order[i], `concurrent ${i} (${order[i]})`));
        const c = await newPage(ctx);
        for (const source of Object.keys(SOURCES)) {
          const mark = dataServer.log.length;
          assertValues(await readIn(c, source, opts), source, `${source} warm`);
          assert.equal(served(source, mark), 0, `${source}: requests when warm`);
        }
        const w = await readIn(c, "zarr", opts, { worker: true });
        assertValues(w, "zarr", "warm in a worker");
        assert.equal(w.traffic.requests, 0, "worker: requests when warm");
      } finally {
        await ctx.close();
        profile.remove();
      }
    });

    test("a blob damaged through the page's own storage API is refetched, never returned", async () => {
      const profile = scratchDir("chunkwise-profile-");
      const ctx = await launch(profile.dir);
      const opts = { cache: "disk", cacheBackend: backend, cacheName: `tamper-${backend}` };
      try {
        const page = await newPage(ctx);
        for (const source of Object.keys(SOURCES)) assertValues(await readIn(page, source, opts), source, "cold");
        const damaged = await page.evaluate(({ backend, name }) => window.cacheTest.damage(backend, name),
          { backend, name: opts.cacheName });
        assert.ok(damaged >= 3, `damaged ${damaged} blobs`);
        await page.reload();
        for (const source of Object.keys(SOURCES)) {
          const mark = dataServer.log.length;
          assertValues(await readIn(page, source, opts), source, `${source} after damage`);
          assert.ok(served(source, mark) > 0, `${source}: refetched after damage`);
        }
      } finally {
        await ctx.close();
        profile.remove();
      }
    });

    test("the origin's storage cleared while an array is open: misses, not errors", async () => {
      const profile = scratchDir("chunkwise-profile-");
      const ctx = await launch(profile.dir);
      const opts = { cache: "disk", cacheBackend: backend, cacheName: `cleared-${backend}` };
      try {
        const page = await newPage(ctx);
        const s = SOURCES.hdf5;
        const url = dataServer.url + s.file.slice(1);
        await page.evaluate(({ url, opts }) => window.cacheTest.keep(url, opts), { url, opts: { ...opts, path: s.path } });
        const first = await page.evaluate(() => window.cacheTest.readKept("0:5"));
        assert.equal(first.error, undefined, first.error);
        const cdp = await ctx.newCDPSession(page);
        await cdp.send("Storage.clearDataForOrigin", { origin: new URL(pageServer.url).origin, storageTypes: "all" });
        const again = await page.evaluate(() => window.cacheTest.readKept("..."));
        assertValues(again, "hdf5", "read of the open array after the storage was cleared");
        // After a reload (nothing left in memory), the discovery written before the clear is
        // gone: the open fetches again, and the cache, on a storage made anew, keeps it.
        await page.reload();
        const mark = dataServer.log.length;
        assertValues(await readIn(page, "hdf5", opts), "hdf5", "reopen after the clear");
        assert.ok(served("hdf5", mark) > 0, "rediscovered after the clear");
        await page.reload();
        const mark2 = dataServer.log.length;
        assertValues(await readIn(page, "hdf5", opts), "hdf5", "second reopen after the clear");
        assert.equal(served("hdf5", mark2), 0, "cached again after the clear");
      } finally {
        await ctx.close();
        profile.remove();
      }
    });

    test("cache names of any alphabet persist (slashes, dots, unicode, 200 bytes)", async () => {
      const profile = scratchDir("chunkwise-profile-");
      const ctx = await launch(profile.dir);
      try {
        const page = await newPage(ctx);
        for (const cacheName of ["a/b", "..", "名前 🙂", "x".repeat(200)]) {
          const opts = { cache: "disk", cacheBackend: backend, cacheName };
          assertValues(await readIn(page, "b2nd", opts), "b2nd", `${cacheName.slice(0, 10)} cold`);
          await page.reload();
          const mark = dataServer.log.length;
          const warm = await readIn(page, "b2nd", opts);
          assertValues(warm, "b2nd", `${cacheName.slice(0, 10)} warm`);
          assert.equal(served("b2nd", mark), 0, `${cacheName.slice(0, 10)}: requests after a reload`);
        }
      } finally {
        await ctx.close();
        profile.remove();
      }
    });

    test("the origin's storage cleared in the middle of a read: the read ends promptly", async () => {
      const slow = await startServer({ latencyMs: 150 });
      const profile = scratchDir("chunkwise-profile-");
      const ctx = await launch(profile.dir);
      try {
        const page = await newPage(ctx);
        const cdp = await ctx.newCDPSession(page);
        const url = slow.url + SOURCES.zarr.file.slice(1);
        for (let round = 0; round < 3; round++) {
          const opts = { cache: "disk", cacheBackend: backend, cacheName: `midread-${round}`, path: SOURCES.zarr.path };
          const t0 = Date.now();
          const reading = page.evaluate(({ url, opts }) => window.cacheTest.read(url, opts), { url, opts });
          await new Promise((r) => setTimeout(r, 100 + 150 * round));
          await cdp.send("Storage.clearDataForOrigin", { origin: new URL(pageServer.url).origin, storageTypes: "all" });
          const got = await reading;
          assertValues(got, "zarr", `round ${round}`);
          // At most one store wait (10 s) and the read itself: a stuck storage costs a read
          // no more than that, never a wait per lookup.
          assert.ok(Date.now() - t0 < 15000, `round ${round}: the read took ${Date.now() - t0} ms`);
        }
      } finally {
        await ctx.close();
        profile.remove();
        await slow.stop();
      }
    });

    test("a quota too small for any entry: writes are skipped, reads succeed", async () => {
      const profile = scratchDir("chunkwise-profile-");
      const ctx = await launch(profile.dir);
      const opts = { cache: "disk", cacheBackend: backend, cacheName: `quota-${backend}` };
      try {
        const page = await newPage(ctx);
        const cdp = await ctx.newCDPSession(page);
        await cdp.send("Storage.overrideQuotaForOrigin", { origin: new URL(pageServer.url).origin, quotaSize: 1 });
        for (const source of Object.keys(SOURCES)) {
          const r = await readIn(page, source, opts);
          assertValues(r, source, `${source} with no quota`);
          assert.ok(r.cacheErrors > 0, `${source}: the refused writes are counted (${r.cacheErrors})`);
        }
        const mark = dataServer.log.length;
        await page.reload();
        assertValues(await readIn(page, "b2nd", opts), "b2nd", "reopen with no quota");
        assert.ok(served("b2nd", mark) > 0, "nothing was kept, so the reopen fetches");
        await cdp.send("Storage.overrideQuotaForOrigin", { origin: new URL(pageServer.url).origin });
      } finally {
        await ctx.close();
        profile.remove();
      }
    });
  });
}
