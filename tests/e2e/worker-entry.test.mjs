// `chunkwise/worker` (pkg/worker: RemoteArray, RemoteStore and the cache functions run in a
// dedicated worker) in headless Chromium, against `chunkwise serve`, whose request log counts
// what reaches the network:
// - values of a .b2nd, an HDF5 dataset (through RemoteStore), a Zarr array and a CTable's rows
//   equal the .npy written by the fixture generators; readInto, getChunk, getChunkBytes;
//   progress on the page; results are transferred (a worker script that watches the answers
//   sees their buffers detached);
// - an AbortSignal aborted mid-read rejects with its reason (AbortError, code CANCELLED), the
//   worker aborts the request (the server logs the body cut), and the worker then reads on;
//   timeoutMs rejects with a TimeoutError (code TIMEOUT);
// - errors are the main entry's ChunkwiseError class with the same codes;
// - cache "disk" (IndexedDB, OPFS) from the worker: a new page's open and read make zero
//   requests; the main entry and the worker entry filling one cache at once (the cache's Web
//   Locks across page and worker), then both reading it warm; a cacheStore object of the
//   page, reached by message, likewise.
// (www/worker is the workerd service, not this.)

import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { ensureBigFixture } from "./big-fixture.mjs";
import { chromiumPath, fixtures, launchChromium, readNpy, repo, scratchDir, startServer, until } from "./lib.mjs";

const SOURCES = {
  b2nd: { file: "/tests/fixtures/blosc2/cf_lz4_shuffle.b2nd", npy: "blosc2/cf_lz4_shuffle.npy" },
  hdf5: { file: "/tests/fixtures/hdf5/contiguous.h5", path: "/x", npy: "hdf5/contiguous_x.npy" },
  zarr: { file: "/tests/fixtures/zarr/v3.zarr", path: "/raw", npy: "zarr/v3_raw.npy" },
};
const npy = Object.fromEntries(Object.entries(SOURCES).map(([k, s]) => [k, readNpy(path.join(fixtures, s.npy))]));

const ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
  "--disable-background-networking", "--disable-component-update", "--disable-sync"];

let pageServer, dataServer, browser;

before(async () => {
  assert.ok(fs.existsSync(path.join(repo, "pkg/worker/index.js")), "pkg/worker is missing: run scripts/build-pkg.sh");
  [pageServer, dataServer] = await Promise.all([startServer({ quiet: true }), startServer()]);
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await Promise.all([pageServer?.stop(), dataServer?.stop()]);
});

async function newPage(ctx, workers = 1) {
  const page = await ctx.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto(`${pageServer.url}tests/e2e/worker-entry-page.html?workers=${workers}`);
  await page.waitForFunction(() => window.workerEntry !== undefined, null, { timeout: 20000 });
  page.errors = errors;
  return page;
}

const urlOf = (source) => dataServer.url + SOURCES[source].file.slice(1);

/** Requests the data server answered for `source` since log position `since`. */
function served(source, since) {
  return dataServer.log.slice(since).filter((r) => r.path.startsWith(SOURCES[source].file) && r.method !== "OPTIONS").length;
}

/** The page's read of `source` (an HDF5 or Zarr path through `path`). */
function readIn(page, source, opts = {}) {
  const s = SOURCES[source];
  return page.evaluate(({ url, opts }) => window.workerEntry.readAll(url, opts),
    { url: urlOf(source), opts: { ...opts, ...(s.path ? { path: s.path } : {}) } });
}

function assertValues(got, source, what) {
  assert.equal(got.error, undefined, `${what}: ${got.error}`);
  assert.deepEqual(got.data, npy[source].values, `${what}: values equal the array written`);
  assert.deepEqual(got.shape, npy[source].shape, `${what}: shape`);
}

describe("chunkwise/worker in Chromium", () => {
  test("headers as a Headers object, a Map, a generator or pairs cross to the worker", async () => {
    // postMessage refuses a Headers object and a generator: the entry sends their pairs.
    const ctx = await browser.newContext();
    try {
      const page = await newPage(ctx);
      for (const form of ["Headers", "Map", "generator", "pairs"]) {
        const since = dataServer.log.length;
        const got = await page.evaluate(({ url, form }) => window.workerEntry.readWithHeaders(url, form),
          { url: urlOf("b2nd"), form });
        assertValues(got, "b2nd", form);
        // X-Form-* is no CORS-safelisted header: its first request was preflighted.
        const preflights = dataServer.log.slice(since).filter((r) => r.method === "OPTIONS");
        assert.ok(preflights.length > 0, `${form}: the X-Form-${form} header was sent (a preflight came first)`);
      }
      assert.deepEqual(page.errors, []);
    } finally {
      await ctx.close();
    }
  });

  test("values of every format, readInto, chunks, a store and a table equal the .npy", async () => {
    const ctx = await browser.newContext();
    try {
      const page = await newPage(ctx);
      for (const source of Object.keys(SOURCES)) {
        const got = await readIn(page, source);
        assertValues(got, source, source);
        assert.equal(got.ownBuffer, true, `${source}: data owns its buffer (${got.ctor})`);
        assert.ok(got.traffic.requests > 0, `${source}: traffic mirrored from the worker`);
        assert.ok(got.progress.length > 0 && got.progress.at(-1).done === got.progress.at(-1).total,
          `${source}: progress reached the page: ${JSON.stringify(got.progress)}`);
      }
      assert.equal((await readIn(page, "b2nd")).ctor, "Float32Array");

      const a = await page.evaluate((url) => window.workerEntry.api(url), urlOf("b2nd"));
      assert.equal(a.intoSame, true, "readInto resolves with the caller's target");
      assert.deepEqual(a.into, npy.b2nd.values, "readInto's values");
      assert.deepEqual(a.intoShape, npy.b2nd.shape);
      // Chunk [0, 0] decoded whole: the array's top-left chunk (chunks within the shape).
      const [c0, c1] = a.chunks;
      const cols = npy.b2nd.shape[1];
      const want = [];
      for (let i = 0; i < c0; i++) for (let j = 0; j < c1; j++) want.push(npy.b2nd.values[i * cols + j]);
      assert.deepEqual(a.chunk.shape, a.chunks);
      assert.deepEqual(a.chunk.data, want, "getChunk([0, 0]) equals the array's first chunk");
      assert.equal(a.rawCtor, "Uint8Array");
      assert.ok(a.rawBytes > 32, `getChunkBytes: ${a.rawBytes} bytes (a Blosc2 chunk)`);
      // A .b2nd's chunk as a C-Blosc2 chunk is the stored one; the identity names the URL.
      assert.equal(a.blosc2Ctor, "Uint8Array");
      assert.equal(a.blosc2IsStored, true, "getChunkBlosc2 gives the stored chunk of a .b2nd");
      assert.equal(a.identity.url, urlOf("b2nd"));
      assert.ok(a.identity.len > 0 && a.identity.etag, JSON.stringify(a.identity));
      assert.equal(a.afterClose.code, "INVALID_ARGUMENT", JSON.stringify(a.afterClose));
      assert.equal(a.readAfterClose.code, "INVALID_ARGUMENT", JSON.stringify(a.readAfterClose));

      const s = await page.evaluate(({ url, p }) => window.workerEntry.store(url, p),
        { url: urlOf("hdf5"), p: SOURCES.hdf5.path });
      assert.equal(s.error, undefined, s.error);
      assert.ok(s.nodes.some((n) => n.path === "/x" && n.kind === "array"), JSON.stringify(s.nodes));
      assert.deepEqual(s.data, npy.hdf5.values, "store.get(path).read() values");
      assert.ok(s.traffic.requests >= 1, JSON.stringify(s.traffic));
      const t = await page.evaluate((url) => window.workerEntry.table(url, 100, -5, ["id", "f64"]),
        `${dataServer.url}tests/fixtures/b2z/table.b2z`);
      assert.equal(t.error, undefined, t.error);
      assert.equal(t.nrows, 1045, "live rows (gen_b2z.py: 1,099 written, 1,045 live)");
      const live = (c) => readNpy(path.join(fixtures, `b2z/table/${c}.npy`)).values.slice(100, 1040);
      assert.deepEqual(t.rows.id.data, live("id"), "readRows id");
      assert.deepEqual(t.rows.f64.data, live("f64"), "readRows f64");
      assert.deepEqual(page.errors, []);
    } finally {
      await ctx.close();
    }
  });

  test("results are transferred: the worker's buffers are detached once sent", async () => {
    const ctx = await browser.newContext();
    try {
      const page = await ctx.newPage();
      await page.goto(`${pageServer.url}tests/e2e/worker-entry-page.html?probe=1`);
      await page.waitForFunction(() => window.workerEntry !== undefined, null, { timeout: 20000 });
      const got = await page.evaluate((url) => window.workerEntry.readProbed(url), urlOf("b2nd"));
      assertValues(got, "b2nd", "read through the probing worker");
      const bytes = npy.b2nd.values.length * 4;
      assert.deepEqual(got.probed.map((p) => p.arrays), [[{ bytes, detached: true }]],
        `the probe's report: ${JSON.stringify(got.probed)}`);
    } finally {
      await ctx.close();
    }
  });

  test("two workers: arrays opened at once go to both and read the right values", async () => {
    const ctx = await browser.newContext();
    try {
      const page = await ctx.newPage();
      await page.goto(`${pageServer.url}tests/e2e/worker-entry-page.html?workers=2&probe=1`);
      await page.waitForFunction(() => window.workerEntry !== undefined, null, { timeout: 20000 });
      // One call opens them all: three page.evaluate calls could each finish (open, read,
      // close) before the next began on a loaded machine, and all go to the first worker.
      const specs = Object.keys(SOURCES).map((s) => [urlOf(s), SOURCES[s].path ? { path: SOURCES[s].path } : {}]);
      const got = await page.evaluate((specs) => window.workerEntry.readTogether(specs), specs);
      Object.keys(SOURCES).forEach((s, i) => assertValues(got[i], s, `${s} (pool of 2)`));
      await page.waitForFunction(() => window.workerEntry.probed().length >= 3, null, { timeout: 3000 });
      const probed = await page.evaluate(() => window.workerEntry.probed());
      const names = [...new Set(probed.map((p) => p.worker))].sort();
      assert.deepEqual(names, ["chunkwise-0", "chunkwise-1"], `workers that answered reads: ${JSON.stringify(probed)}`);
    } finally {
      await ctx.close();
    }
  });

  test("errors are the main entry's ChunkwiseError with the same codes", async () => {
    const ctx = await browser.newContext();
    try {
      const page = await newPage(ctx);
      const e = await page.evaluate((base) => window.workerEntry.errors(base), dataServer.url);
      for (const [what, code] of [["notFound", "NOT_FOUND"], ["selection", "INVALID_SELECTION"],
        ["target", "INVALID_ARGUMENT"], ["chunkCoords", "INVALID_ARGUMENT"]]) {
        assert.equal(e[what].code, code, `${what}: ${JSON.stringify(e[what])}`);
        assert.equal(e[what].name, "ChunkwiseError", what);
        assert.equal(e[what].chunkwiseError && e[what].mainClass, true, `${what}: instanceof both entries' class`);
      }
      assert.match(e.target.error, /Float32Array/, "readInto names the class expected");
      assert.equal(e.preAborted.name, "AbortError", JSON.stringify(e.preAborted));
      assert.equal(e.preAborted.code, "CANCELLED");
      // init after the first: resolves with the first (its options ignored).
      assert.equal(e.badWorkers, "resolved (already initialised)");
    } finally {
      await ctx.close();
    }
  });

  test("abort mid-read: the signal's reason, the request cut, the worker reads on; timeoutMs", async () => {
    const big = ensureBigFixture();
    assert.ok(big.ok, big.reason);
    // GETs past the open's two (header, chunk index) trickle: a whole read takes minutes.
    const slow = await startServer({ root: path.dirname(big.file), faults: ["after=2:trickle-ms=20"] });
    const ctx = await browser.newContext();
    try {
      const page = await newPage(ctx);
      const bigUrl = slow.url + path.basename(big.file);
      const c = await page.evaluate(({ bigUrl, smallUrl }) => window.workerEntry.cancel(bigUrl, smallUrl, 300),
        { bigUrl, smallUrl: urlOf("b2nd") });
      assert.equal(c.rejected?.name, "AbortError", JSON.stringify(c));
      assert.equal(c.rejected.code, "CANCELLED");
      assert.equal(c.rejected.domException, true);
      assert.equal(c.isReason, true, "rejects with signal.reason itself");
      assert.ok(c.ms < 2000, `rejected ${Math.round(c.ms)} ms after the read began`);
      // The worker aborted its own fetch: the server saw the body cut while it ran.
      await until(() => slow.cuts.length > 0, 5000, "a cut body on the server");
      assertValues(c.after, "b2nd", "a read after the abort, in the same worker");

      const t = await page.evaluate(() => window.workerEntry.timeoutKept(400));
      assert.equal(t.rejected?.name, "TimeoutError", JSON.stringify(t));
      assert.equal(t.rejected.code, "TIMEOUT");
      assert.ok(t.ms >= 350 && t.ms < 3000, `timeoutMs 400: ${Math.round(t.ms)} ms`);
      assert.deepEqual(page.errors, []);
    } finally {
      await ctx.close();
      await slow.stop();
    }
  });

  for (const backend of ["indexeddb", "opfs"]) {
    test(`cache "disk" on ${backend} from the worker: a new page reads with zero requests`, async () => {
      const profile = scratchDir("chunkwise-profile-");
      const { chromium } = await import("playwright-core");
      const ctx = await chromium.launchPersistentContext(profile.dir, {
        executablePath: chromiumPath, headless: true, args: ARGS, timeout: 30000,
      });
      const opts = { cache: "disk", cacheBackend: backend, cacheName: `worker-entry-${backend}` };
      try {
        const first = await newPage(ctx);
        for (const source of Object.keys(SOURCES)) {
          const mark = dataServer.log.length;
          const cold = await readIn(first, source, opts);
          assertValues(cold, source, `${source} cold`);
          assert.equal(cold.cacheStatus, "created", source);
          assert.equal(cold.cacheErrors, 0, `${source}: no storage failure`);
          assert.ok(served(source, mark) > 0, `${source}: the cold read reached the server`);
        }
        await first.close();
        const second = await newPage(ctx);
        for (const source of Object.keys(SOURCES)) {
          const mark = dataServer.log.length;
          const warm = await readIn(second, source, opts);
          assertValues(warm, source, `${source} warm, new page`);
          assert.equal(served(source, mark), 0, `${source}: requests the server saw from the new page`);
          assert.equal(warm.traffic.requests, 0, `${source}: traffic`);
          assert.equal(warm.cacheStatus, "reused", source);
        }
        const usage = await second.evaluate((o) => window.workerEntry.usage(o), opts);
        assert.ok(usage.payload.bytes > 0 && usage.discovery.entries >= 3, JSON.stringify(usage));
        const removed = await second.evaluate((o) => window.workerEntry.clear(o), opts);
        assert.ok(removed > 0, `clearCache removed ${removed}`);
        const mark = dataServer.log.length;
        assertValues(await readIn(second, "b2nd", opts), "b2nd", "after clearCache");
        assert.ok(served("b2nd", mark) > 0, "fetched again after clearCache");
      } finally {
        await ctx.close();
        profile.remove();
      }
    });
  }

  test("the main entry and chunkwise/worker fill one IndexedDB cache at once; each reads it warm", async () => {
    const profile = scratchDir("chunkwise-profile-");
    const { chromium } = await import("playwright-core");
    const ctx = await chromium.launchPersistentContext(profile.dir, {
      executablePath: chromiumPath, headless: true, args: ARGS, timeout: 30000,
    });
    const opts = { cache: "disk", cacheName: "worker-entry-shared" };
    // The main entry's page of disk-cache.test.mjs (window.cacheTest, pkg/web on the page).
    const mainPage = async () => {
      const p = await ctx.newPage();
      await p.goto(`${pageServer.url}tests/e2e/cache-page.html`);
      await p.waitForFunction(() => window.cacheTest !== undefined, null, { timeout: 20000 });
      return p;
    };
    const readMain = (p, source) => p.evaluate(({ url, opts }) => window.cacheTest.read(url, opts, false),
      { url: urlOf(source), opts: { ...opts, path: SOURCES[source].path ?? null } });
    try {
      const [m, w] = await Promise.all([mainPage(), newPage(ctx)]);
      const sources = Object.keys(SOURCES);
      const results = await Promise.all(sources.flatMap((s) => [readMain(m, s), readIn(w, s, opts)]));
      results.forEach((r, i) => assertValues(r, sources[i >> 1], `concurrent ${i} (${sources[i >> 1]})`));
      const [m2, w2] = [await mainPage(), await newPage(ctx)];
      for (const source of sources) {
        for (const [what, read] of [["worker entry", () => readIn(w2, source, opts)], ["main entry", () => readMain(m2, source)]]) {
          const mark = dataServer.log.length;
          const warm = await read();
          assertValues(warm, source, `${source} warm (${what})`);
          assert.equal(served(source, mark), 0, `${source}: requests of the warm read (${what})`);
        }
      }
    } finally {
      await ctx.close();
      profile.remove();
    }
  });

  test("a cacheStore of the page, called by the worker: a new worker's open makes no request", async () => {
    const ctx = await browser.newContext();
    try {
      const page = await newPage(ctx);
      let mark = dataServer.log.length;
      const cold = await page.evaluate((u) => window.workerEntry.readWithPageStore(u), urlOf("b2nd"));
      assertValues(cold, "b2nd", "cold");
      assert.ok(cold.storeKeys > 0, `the page's store holds ${cold.storeKeys} keys`);
      assert.ok(served("b2nd", mark) > 0);
      mark = dataServer.log.length;
      const warm = await page.evaluate((u) => window.workerEntry.readWithPageStore(u, { restart: true }), urlOf("b2nd"));
      assertValues(warm, "b2nd", "warm");
      assert.equal(warm.cacheStatus, "reused");
      assert.equal(served("b2nd", mark), 0, "requests of the warm open and read");
    } finally {
      await ctx.close();
    }
  });
});
