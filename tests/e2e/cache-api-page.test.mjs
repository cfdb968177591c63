// cacheApiStore (chunkwise/stores/cache-api) over Chromium's own Cache API, which can be listed:
// a page opens a .b2nd, an HDF5 dataset and a Zarr array with cache "disk" on it; a new page of
// the same origin (a new wasm instance, nothing in memory) rereads them with zero requests and
// the values written; cacheUsage sees the entries through cache.keys() and clearCache removes
// them. The page comes from one `chunkwise serve`, the data from another (cross-origin).

import assert from "node:assert/strict";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { fixtures, launchChromium, readNpy, startServer, until } from "./lib.mjs";

const cases = [
  ["b2nd", "blosc2/cf_blosclz_nofilter.b2nd", undefined, "blosc2/cf_blosclz_nofilter.npy"],
  ["hdf5", "hdf5/contiguous.h5", "/x", "hdf5/contiguous_x.npy"],
  ["zarr", "zarr/v3.zarr", "/raw", "zarr/v3_raw.npy"],
];

let pageServer, dataServer, browser, context;

before(async () => {
  [pageServer, dataServer] = await Promise.all([startServer({ quiet: true }), startServer({ root: fixtures })]);
  browser = await launchChromium();
  context = await browser.newContext();
});
after(async () => {
  await browser?.close();
  await Promise.all([pageServer?.stop(), dataServer?.stop()]);
});

/** A new page of the page server's origin with the web build and the store imported. */
async function newPage() {
  const page = await context.newPage();
  page.on("pageerror", (e) => console.error("page error:", e.message));
  await page.goto(`${pageServer.url}tests/e2e/cache-api-page.html`);
  await page.evaluate(async (base) => {
    const cw = await import(`${base}pkg/web/chunkwise.js`);
    await cw.default();
    const { cacheApiStore } = await import(`${base}pkg/stores/cache-api.js`);
    window.t = { cw, cacheApiStore };
  }, pageServer.url);
  return page;
}

/** Opens and reads every case in `page` with cache "disk" on cacheApiStore(name). */
const readAll = (page, name) => page.evaluate(async ({ name, cases }) => {
  const cacheStore = window.t.cacheApiStore(name);
  const out = {};
  for (const c of cases) {
    const arr = await window.t.cw.RemoteArray.open(c.url, { cache: "disk", cacheStore, path: c.path });
    const { data, shape } = await arr.read(null, {});
    out[c.label] = { shape: Array.from(shape), values: Array.from(data, String),
      traffic: { requests: arr.traffic.requests, bytes: arr.traffic.bytes } };
    arr.close();
  }
  return out;
}, { name, cases: cases.map(([label, file, p]) => ({ label, url: dataServer.url + file, path: p })) });

function requestsFor(file, mark) {
  return dataServer.log.slice(mark).filter((r) => r.method !== "OPTIONS" &&
    (r.path === `/${file}` || r.path.startsWith(`/${file}/`))).length;
}

async function settle() {
  const probe = `/settle-${Date.now()}-${Math.random().toString(36).slice(2)}`;
  await fetch(dataServer.url + probe.slice(1)).then((r) => r.arrayBuffer()).catch(() => {});
  await until(() => dataServer.log.some((r) => r.path === probe), 5000, "the server's log");
}

function assertValues(got, label) {
  for (const [name, , , npy] of cases) {
    const e = readNpy(path.join(fixtures, npy));
    assert.deepEqual(got[name].shape, e.shape, `${label} ${name}`);
    assert.deepEqual(got[name].values, Array.from(e.raw, String), `${label} ${name}: values differ from the array written`);
  }
}

describe("cacheApiStore in Chromium", () => {
  test("a new page reopens every format from the Cache API with zero requests; usage lists, clear empties", async (t) => {
    const name = `chunkwise-test-${Date.now()}`;
    let mark = dataServer.log.length;
    const first = await newPage();
    const cold = await readAll(first, name);
    await first.close();
    await settle();
    assertValues(cold, "first page");
    for (const [label, file] of cases) {
      assert.ok(cold[label].traffic.requests > 0, label);
      assert.equal(requestsFor(file, mark), cold[label].traffic.requests, label);
    }

    mark = dataServer.log.length;
    const second = await newPage();
    const warm = await readAll(second, name);
    await settle();
    assertValues(warm, "second page");
    for (const [label, file] of cases) {
      assert.deepEqual(warm[label].traffic, { requests: 0, bytes: 0 }, label);
      assert.equal(requestsFor(file, mark), 0, `${label}: the server saw no request from the second page`);
    }

    const listed = await second.evaluate(async (name) => {
      const keys = (await (await caches.open(name)).keys()).map((r) => r.url);
      const cacheStore = window.t.cacheApiStore(name);
      const storeKeys = await cacheStore.keys("chunkwise/payload/");
      const usage = await window.t.cw.cacheUsage({ cacheStore });
      const removed = await window.t.cw.clearCache({ cacheStore });
      const left = (await (await caches.open(name)).keys()).map((r) => r.url)
        .filter((u) => !u.endsWith("chunkwise%2Fsalt"));
      return { keys, storeKeys, usage, removed, left };
    }, name);
    await second.close();
    assert.ok(listed.keys.length > 0);
    assert.ok(listed.keys.every((u) => u.startsWith("https://chunkwise.invalid/chunkwise%2F")), listed.keys[0]);
    assert.ok(listed.storeKeys.length > 0 && listed.storeKeys.every((k) => k.startsWith("chunkwise/payload/")));
    assert.ok(listed.usage.payload.entries > 0 && listed.usage.payload.bytes > 0, JSON.stringify(listed.usage));
    assert.equal(listed.removed, listed.usage.entries, JSON.stringify(listed));
    assert.deepEqual(listed.left, [], "clearCache removed every entry");
    t.diagnostic(`requests first ${JSON.stringify(Object.fromEntries(cases.map(([n]) => [n, cold[n].traffic.requests])))} second 0; ` +
      `usage ${JSON.stringify({ entries: listed.usage.entries, bytes: listed.usage.bytes })}, removed ${listed.removed}`);
  });
});
