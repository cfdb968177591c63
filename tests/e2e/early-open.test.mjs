// An open called while init() is pending (not awaited) sends its first requests while the
// wasm module loads (src/io/early.js, the web entries' open in scripts/build-pkg.sh), and the
// open takes their answers once the module is ready. In headless Chromium, per format, on a
// fresh page each: the values equal the .npy the fixture's library wrote; a data request
// started before the module was downloaded; and the data server saw exactly the requests (method, path,
// Range) of the same open made after init, so no request was sent twice and none for nothing.
// Opens whose first request cannot be told from their options (request headers) wait for the
// module as before, and a signal aborted meanwhile rejects the open as fetch would. The same
// opens through chunkwise/worker, whose workers start an open while their module loads.

import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { fixtures, launchChromium, readNpy, startServer } from "./lib.mjs";

let pageServer, dataServer, slowModule, laterModule, browser;

before(async () => {
  // slowModule: the package again, each answer 1.5 s late: an init() that takes that long.
  // laterModule: 200 ms late, the module of the opens made while init is pending: from
  // loopback the download could end before the page had even sent a request.
  [pageServer, dataServer, slowModule, laterModule] = await Promise.all([startServer({ quiet: true }),
    startServer({ root: fixtures }), startServer({ quiet: true, latencyMs: 1500 }),
    startServer({ quiet: true, latencyMs: 200 })]);
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await Promise.all([pageServer?.stop(), dataServer?.stop(), slowModule?.stop(), laterModule?.stop()]);
});

/**
 * On a fresh page: imports /pkg/BUILD/chunkwise.js, opens `file` of the data server with
 * `options` (by `kind`: RemoteArray, or RemoteStore then `get(dataset)`) either while init()
 * is pending (`pending`; the web entries' module then comes from `laterModule`) or after it,
 * and reads `sel`. Returns the values, shape, when init
 * resolved, when the module's download ended and when the first data request started (page
 * ms), and the data server's log of
 * the case.
 */
async function openOnPage({ build = "web", file, options = {}, kind = "array", dataset, sel, pending, abort = false }) {
  const page = await browser.newPage();
  page.on("pageerror", (e) => console.error("page error:", e.message));
  const since = dataServer.log.length;
  try {
    await page.goto(`${pageServer.url}tests/e2e/early-open.test.mjs`);
    const got = await page.evaluate(async ({ build, url, options, kind, dataset, sel, pending, abort, later }) => {
      const starts = [];
      const pageFetch = window.fetch;
      window.fetch = function (input, init) {
        starts.push({ url: String(input && input.url !== undefined ? input.url : input), at: performance.now() });
        return pageFetch.call(this, input, init);
      };
      const worker = build === "worker";
      const cw = await import(worker ? "/pkg/worker/index.js" : `/pkg/${build}/chunkwise.js`);
      const C = kind === "store" ? cw.RemoteStore : cw.RemoteArray;
      const controller = new AbortController();
      const opts = abort ? { ...options, signal: controller.signal } : options;
      let opening, readyAt;
      if (pending) {
        const module = worker ? undefined : `${later}pkg/${build}/chunkwise_bg.wasm`;
        const ready = cw.default(module).then(() => { readyAt = performance.now(); });
        opening = C.open(url, opts);
        opening.catch(() => {});   // awaited below, after init
        if (abort) controller.abort();
        await ready;
      } else {
        await cw.default();
        readyAt = performance.now();
        opening = C.open(url, opts);
      }
      let handle;
      try {
        handle = await opening;
      } catch (e) {
        return { error: { name: e?.name, code: e?.code, message: String(e?.message) } };
      }
      const arr = kind === "store" ? await handle.get(dataset) : handle;
      const r = await arr.read(sel);
      handle.close();
      // chunkwise/worker: its requests are the worker's, unseen here.
      if (worker) {
        cw.terminate();
        return { data: Array.from(r.data, Number), shape: r.shape };
      }
      const data = starts.filter((s) => s.url.startsWith(new URL(url).origin));
      // The module's download ended before it was compiled and init resolved: a data request
      // before then was sent by the open while init was pending.
      const wasm = performance.getEntriesByType("resource").find((e) => e.name.endsWith("/chunkwise_bg.wasm"));
      return { data: Array.from(r.data, Number), shape: r.shape, readyAt, wasmEnd: wasm.responseEnd,
        firstData: Math.min(...data.map((s) => s.at)) };
    }, { build, url: `${dataServer.url}${file}`, options, kind, dataset, sel, pending, abort, later: laterModule.url });
    const log = dataServer.log.slice(since).map((r) => `${r.method} ${r.path} ${r.range}`).sort();
    return { ...got, log };
  } finally {
    await page.close();
  }
}

const cases = [
  { name: ".b2nd (web)", file: "blosc2/nd3_u2.b2nd", npy: "blosc2/nd3_u2.npy", sel: ":, :, :" },
  { name: ".b2nd (b2nd entry)", build: "b2nd", file: "blosc2/be_f8.b2nd", npy: "blosc2/be_f8.npy", sel: ":, :" },
  { name: "HDF5", file: "hdf5/gzip_shuffle.h5", options: { path: "/ints" }, npy: "hdf5/gzip_shuffle_ints.npy", sel: ":, :" },
  { name: "HDF5 store", kind: "store", dataset: "/ints", file: "hdf5/gzip_shuffle.h5", npy: "hdf5/gzip_shuffle_ints.npy", sel: ":, :" },
  { name: "Zarr v3", file: "zarr/v3.zarr", options: { path: "/temperature" }, npy: "zarr/v3_temperature.npy", sel: ":, :" },
  { name: "Zarr v2", file: "zarr/v2.zarr/", options: { path: "gzip/" }, npy: "zarr/v2_gzip.npy", sel: ":, :" },
];

describe("open() while init() is pending", () => {
  for (const c of cases) {
    test(`${c.name}: first requests sent before init resolved, the same requests as after init, values as written`, async () => {
      const want = readNpy(path.join(fixtures, c.npy));
      const early = await openOnPage({ ...c, pending: true });
      const control = await openOnPage({ ...c, pending: false });
      for (const r of [early, control]) {
        assert.equal(r.error, undefined, JSON.stringify(r.error));
        assert.deepEqual(r.shape, want.shape);
        assert.deepEqual(r.data, want.values);
      }
      assert.ok(early.firstData < early.wasmEnd,
        `a data request before the module was even downloaded (first at ${early.firstData} ms, module at ${early.wasmEnd} ms)`);
      assert.ok(control.firstData > control.readyAt);
      assert.ok(early.log.length > 0);
      assert.deepEqual(early.log, control.log);
    });
  }

  // chunkwise/worker posts the open while its workers load their module; each worker starts
  // it at once (pkg-template/worker/worker.js), so the same early requests go out from there.
  for (const c of cases.filter((c) => !c.build)) {
    test(`chunkwise/worker, ${c.name}: the same requests as an open after init, values as written`, async () => {
      const want = readNpy(path.join(fixtures, c.npy));
      const early = await openOnPage({ ...c, build: "worker", pending: true });
      const control = await openOnPage({ ...c, build: "worker", pending: false });
      for (const r of [early, control]) {
        assert.equal(r.error, undefined, JSON.stringify(r.error));
        assert.deepEqual(r.shape, want.shape);
        assert.deepEqual(r.data, want.values);
      }
      assert.ok(early.log.length > 0);
      assert.deepEqual(early.log, control.log);
    });
  }

  test("request headers: no request before the module is ready, values as written", async () => {
    const want = readNpy(path.join(fixtures, "blosc2/nd3_u2.npy"));
    const r = await openOnPage({ file: "blosc2/nd3_u2.b2nd", options: { headers: { "X-Trace": "1" } }, sel: ":, :, :", pending: true });
    assert.equal(r.error, undefined, JSON.stringify(r.error));
    assert.deepEqual(r.data, want.values);
    assert.ok(r.firstData > r.wasmEnd, `first data request at ${r.firstData} ms, module downloaded at ${r.wasmEnd} ms`);
  });

  test("a signal aborted while init is pending rejects the open with AbortError", async () => {
    const r = await openOnPage({ file: "hdf5/gzip_shuffle.h5", options: { path: "/ints" }, sel: ":, :", pending: true, abort: true });
    assert.equal(r.error?.name, "AbortError", JSON.stringify(r.error));
  });
});

/**
 * On a fresh page: init({ module_or_path: `module` }) not awaited, `RemoteArray.open` of `file`
 * with `options` (made in the page by `makeOptions`, given a controller), then `act(controller)`;
 * returns how the open settled (error name, code, class) and whether that came before init
 * settled, and the data server's log of the case.
 */
async function whilePending({ module, file, options = "{}", act = "" }) {
  const page = await browser.newPage();
  const since = dataServer.log.length;
  try {
    await page.goto(`${pageServer.url}tests/e2e/early-open.test.mjs`);
    const got = await page.evaluate(async ({ module, url, options, act }) => {
      const cw = await import("/pkg/web/chunkwise.js");
      const controller = new AbortController();
      let initDone = null;
      const ready = cw.default(module ? { module_or_path: module } : undefined)
        .then(() => { initDone = "resolved"; }, () => { initDone = "rejected"; });
      const opts = new Function("controller", `return (${options});`)(controller);
      const settled = cw.RemoteArray.open(url, opts).then((a) => { a.close(); return { ok: true }; },
        (e) => ({ name: e?.name, code: e?.code, isClass: e instanceof cw.ChunkwiseError, message: String(e?.message) }));
      new Function("controller", act)(controller);
      const r = await settled;
      r.beforeInit = initDone === null;
      await ready;
      return r;
    }, { module, url: `${dataServer.url}${file}`, options, act });
    return { ...got, log: dataServer.log.slice(since) };
  } finally {
    await page.close();
  }
}

describe("open() while init() is pending: signal, timeoutMs, init's failure", () => {
  const slow = () => `${slowModule.url}pkg/web/chunkwise_bg.wasm`;

  test("a signal aborted before the call: rejected with its AbortError (CANCELLED), no request", async () => {
    const r = await whilePending({ file: "blosc2/nd3_u2.b2nd", options: "{ signal: AbortSignal.abort() }" });
    assert.equal(r.name, "AbortError");
    assert.equal(r.code, "CANCELLED");
    assert.deepEqual(r.log, []);
  });

  test("a signal aborted while init is slow: rejected then, before init resolved", async () => {
    const r = await whilePending({ module: slow(), file: "blosc2/nd3_u2.b2nd", options: "{ signal: controller.signal }",
      act: "setTimeout(() => controller.abort(), 100);" });
    assert.equal(r.name, "AbortError", JSON.stringify(r));
    assert.equal(r.code, "CANCELLED");
    assert.equal(r.beforeInit, true);
  });

  test("a signal of another realm (an iframe's) aborted while init is slow: rejected then", async () => {
    const r = await whilePending({ module: slow(), file: "blosc2/nd3_u2.b2nd",
      options: "{ signal: (() => { const f = document.createElement('iframe'); document.body.append(f); " +
        "globalThis.frameController = new f.contentWindow.AbortController(); return frameController.signal; })() }",
      act: "setTimeout(() => frameController.abort(), 100);" });
    assert.equal(r.name, "AbortError", JSON.stringify(r));
    assert.equal(r.code, "CANCELLED");
    assert.equal(r.beforeInit, true);
  });

  test("timeoutMs running out while init is slow: TimeoutError (TIMEOUT), before init resolved", async () => {
    const r = await whilePending({ module: slow(), file: "blosc2/nd3_u2.b2nd", options: "{ timeoutMs: 200 }" });
    assert.equal(r.name, "TimeoutError", JSON.stringify(r));
    assert.equal(r.code, "TIMEOUT");
    assert.equal(r.beforeInit, true);
  });

  test("init failing (no module at the URL): the open rejects with a ChunkwiseError, code IO", async () => {
    const r = await whilePending({ module: `${pageServer.url}pkg/web/no-such-module.wasm`, file: "blosc2/nd3_u2.b2nd" });
    assert.equal(r.isClass, true, JSON.stringify(r));
    assert.equal(r.code, "IO");
    assert.match(r.message, /module failed to load/);
  });

  test("options the open refuses: no request before the module is ready, the open's INVALID_ARGUMENT", async () => {
    for (const options of ['{ timeoutMs: "soon" }', "{ maxCacheBytes: -1 }", "{ path: 3 }", '{ signal: "no" }']) {
      const r = await whilePending({ file: "hdf5/gzip_shuffle.h5", options });
      assert.equal(r.code, "INVALID_ARGUMENT", `${options}: ${JSON.stringify(r)}`);
      assert.deepEqual(r.log, [], options);
    }
  });
});

describe("open() while init() is pending: several opens, options, tables", () => {
  /** Runs `body` (an async function body given `cw` and `url(file)`) on a fresh page that has
   *  imported the web entry without initialising it; returns its result. */
  async function onPage(body) {
    const page = await browser.newPage();
    try {
      await page.goto(`${pageServer.url}tests/e2e/early-open.test.mjs`);
      return await page.evaluate(async ({ body, base }) => {
        const cw = await import("/pkg/web/chunkwise.js");
        const url = (f) => `${base}${f}`;
        return new Function("cw", "url", `return (async () => { ${body} })();`)(cw, url);
      }, { body, base: dataServer.url });
    } finally {
      await page.close();
    }
  }
  const settle = `(p) => p.then((v) => ({ ok: v }), (e) => ({ name: e?.name, code: e?.code, message: String(e?.message) }))`;

  test("two opens of one URL, the first aborted while init is pending: the second opens and reads the values", async () => {
    const want = readNpy(path.join(fixtures, "blosc2/nd3_u2.npy"));
    for (const file of ["blosc2/nd3_u2.b2nd", "zarr/v3.zarr"]) {
      const r = await onPage(`
        const settle = ${settle};
        const ready = cw.default();
        const c = new AbortController();
        const opts = ${file.endsWith(".zarr") ? '{ path: "/temperature" }' : "{}"};
        const a = settle(cw.RemoteArray.open(url("${file}"), { ...opts, signal: c.signal }));
        const b = settle(cw.RemoteArray.open(url("${file}"), opts));
        c.abort();
        await ready;
        const [ra, rb] = [await a, await b];
        const got = rb.ok ? await rb.ok.read() : null;
        return { a: ra.name, b: rb.ok ? "opened" : rb, data: got && Array.from(got.data, Number), shape: got?.shape };`);
      assert.equal(r.a, "AbortError", `${file}: ${JSON.stringify(r)}`);
      assert.equal(r.b, "opened", `${file}: ${JSON.stringify(r.b)}`);
      if (file.endsWith(".b2nd")) assert.deepEqual(r.data, want.values);
      else assert.deepEqual(r.shape, readNpy(path.join(fixtures, "zarr/v3_temperature.npy")).shape);
    }
  });

  test("options changed after the call: the open uses them as they were at the call", async () => {
    const want = readNpy(path.join(fixtures, "hdf5/gzip_shuffle_ints.npy"));
    const r = await onPage(`
      const ready = cw.default();
      const opts = { path: "/ints" };
      const p = cw.RemoteArray.open(url("hdf5/gzip_shuffle.h5"), opts);
      opts.path = "/no-such-dataset";
      await ready;
      const a = await p;
      const got = await a.read();
      return { shape: got.shape, data: Array.from(got.data, Number) };`);
    assert.deepEqual(r.shape, want.shape);
    assert.deepEqual(r.data, want.values);
  });

  test("RemoteTable.open while init is pending: waits, then the rows as written", async () => {
    const m = JSON.parse(fs.readFileSync(path.join(fixtures, "b2z/table.json"), "utf8"));
    const want = readNpy(path.join(fixtures, "b2z/table/id.npy"));
    const r = await onPage(`
      const ready = cw.default();
      const p = cw.RemoteTable.open(url("b2z/table.b2z"));
      await ready;
      const t = await p;
      const rows = await t.readRows(0, t.nrows, { columns: ["id"] });
      return { nrows: t.nrows, id: Array.from(rows.id, Number) };`);
    assert.equal(r.nrows, m.nrows);
    assert.deepEqual(r.id, want.values);
  });

  test("after init, an iframe's signal aborting an open or a read: its AbortError with code CANCELLED", async () => {
    const r = await onPage(`
      const settle = ${settle};
      await cw.default();
      const f = document.createElement("iframe");
      document.body.append(f);
      const c1 = new f.contentWindow.AbortController();
      const opening = settle(cw.RemoteArray.open(url("blosc2/nd3_u2.b2nd"), { signal: c1.signal }));
      c1.abort();
      const a = await cw.RemoteArray.open(url("blosc2/nd3_u2.b2nd"));
      const c2 = new f.contentWindow.AbortController();
      c2.abort();
      const reading = settle(a.read(":, :, :", { signal: c2.signal }));
      return [await opening, await reading];`);
    for (const e of r) {
      assert.equal(e.name, "AbortError", JSON.stringify(e));
      assert.equal(e.code, "CANCELLED", JSON.stringify(e));
    }
  });

  test("open before any init() call: a ChunkwiseError INVALID_ARGUMENT that says to call init", async () => {
    const r = await onPage(`
      const settle = ${settle};
      return [await settle(cw.RemoteArray.open(url("blosc2/nd3_u2.b2nd"))), await settle(cw.RemoteStore.open(url("hdf5/gzip_shuffle.h5"))),
        await settle(cw.RemoteTable.open(url("b2z/table.b2z")))];`);
    for (const e of r) {
      assert.equal(e.code, "INVALID_ARGUMENT", JSON.stringify(e));
      assert.match(e.message, /call init\(\) first/);
    }
  });

  test("the other functions before init() resolved: a ChunkwiseError INVALID_ARGUMENT, thrown or as the promise's rejection; after it, they work", async () => {
    // Each threw the glue's bare TypeError ("Cannot read properties of undefined").
    const r = await onPage(`
      const settle = ${settle};
      const caught = (f) => { try { return { ok: f() }; } catch (e) {
        return { name: e?.name, code: e?.code, message: String(e?.message), typed: e instanceof cw.ChunkwiseError }; } };
      const before = {
        decodeChunk: caught(() => cw.decodeChunk(new Uint8Array(64))),
        decodeChunkInto: caught(() => cw.decodeChunkInto(new Uint8Array(64), new Uint8Array(8))),
        renderPng: caught(() => cw.renderPng(new Float32Array(4), [2, 2])),
        partition: caught(() => cw.partition([])),
        wasmMemoryBytes: caught(() => cw.wasmMemoryBytes()),
      };
      const usage = cw.cacheUsage();
      const clear = cw.clearCache();
      const promises = usage instanceof Promise && clear instanceof Promise;
      before.cacheUsage = await settle(usage);
      before.clearCache = await settle(clear);
      const pending = cw.default();
      before.whilePending = caught(() => cw.wasmMemoryBytes());
      await pending;
      return { before, promises, after: cw.wasmMemoryBytes(), usage: await cw.cacheUsage() };`);
    assert.ok(r.promises, "cacheUsage and clearCache return promises before init too");
    for (const [name, e] of Object.entries(r.before)) {
      assert.equal(e.code, "INVALID_ARGUMENT", `${name}: ${JSON.stringify(e)}`);
      if ("typed" in e) assert.ok(e.typed, `${name}: not a ChunkwiseError`);
      assert.match(e.message, /not initialised: await init\(\) before calling \w+/, name);
    }
    assert.match(r.before.decodeChunk.message, /calling decodeChunk$/);
    assert.ok(r.after > 0, `wasmMemoryBytes after init: ${r.after}`);
    assert.equal(typeof r.usage, "object");
  });
});
