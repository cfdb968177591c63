// Freshness in JS (the Node build, in process): `assumeImmutable: false` on a .b2nd rewritten
// at the same URL, `cacheStatus`, and `RemoteStore.refresh()` with old handles failing with
// code STALE. The sources are copies of committed fixtures in a scratch directory served by
// `chunkwise serve`, replaced between opens; expected values are the .npy written with them.

import assert from "node:assert/strict";
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { fixtures, readNpy, repo, scratchDir, startServer } from "./lib.mjs";

const require = createRequire(import.meta.url);
let cw, nodeFsStore, server, scratch;

const npy = (f) => readNpy(path.join(fixtures, f)).values;
const values = (r) => Array.from(r.data, Number);
/** Copies a fixture to `name` in the served directory (a new size, so a new ETag). */
const publish = (fixture, name) => {
  const tmp = path.join(scratch.dir, "data", `.${name}.tmp`);
  fs.copyFileSync(path.join(fixtures, fixture), tmp);
  fs.renameSync(tmp, path.join(scratch.dir, "data", name));
};

before(async () => {
  cw = require(path.join(repo, "pkg/node/chunkwise.js"));
  ({ nodeFsStore } = await import(path.join(repo, "pkg/stores/node-fs.js")));
  scratch = scratchDir("chunkwise-freshness-");
  fs.mkdirSync(path.join(scratch.dir, "data"));
  server = await startServer({ root: path.join(scratch.dir, "data") });
});

after(async () => {
  await server?.stop();
  scratch?.remove();
});

describe("freshness", () => {
  test("assumeImmutable false: one identity check per open, a rewrite is read as the new version", async () => {
    publish("blosc2/cf_blosclz_nofilter.b2nd", "a.b2nd");
    const url = `${server.url}a.b2nd`;
    const dir = path.join(scratch.dir, "cache");
    // A new store object each time: a new cache coordinator, as after a reload.
    const open = (extra = {}) => cw.RemoteArray.open(url, { cache: "disk", cacheStore: nodeFsStore(dir), ...extra });
    const count = (since) => server.log.slice(since).filter((r) => r.path === "/a.b2nd").length;

    let arr = await open({ assumeImmutable: false });
    assert.equal(arr.cacheStatus, "created");
    assert.deepEqual(values(await arr.read("...")), npy("blosc2/cf_blosclz_nofilter.npy"));
    assert.ok(arr.cacheBytes > 0, `cacheBytes ${arr.cacheBytes}`);
    arr.close();

    let mark = server.log.length;
    arr = await open({ assumeImmutable: false });
    assert.equal(arr.cacheStatus, "reused");
    assert.deepEqual(values(await arr.read("...")), npy("blosc2/cf_blosclz_nofilter.npy"));
    assert.equal(count(mark), 1, "one request: the identity check");
    assert.equal(server.log.at(-1).range, "bytes=0-0");
    arr.close();

    publish("blosc2/be_i4.b2nd", "a.b2nd");
    arr = await open({ assumeImmutable: false });
    assert.equal(arr.cacheStatus, "invalidated");
    assert.deepEqual(values(await arr.read("...")), npy("blosc2/be_i4.npy"), "the new version's values");
    arr.close();

    // Immutable (the default): the record is trusted, no request.
    mark = server.log.length;
    arr = await open();
    assert.equal(arr.cacheStatus, "reused");
    assert.deepEqual(values(await arr.read("...")), npy("blosc2/be_i4.npy"));
    assert.equal(count(mark), 0);
    arr.close();

    // Other formats do not support the mutable mode.
    publish("hdf5/contiguous.h5", "b.h5");
    await assert.rejects(
      cw.RemoteArray.open(`${server.url}b.h5`, { path: "/x", assumeImmutable: false }),
      (e) => e.code === "INVALID_ARGUMENT" && /hdf5/i.test(e.message),
    );
    await assert.rejects(cw.RemoteArray.open(url, { assumeImmutable: "no" }),
      (e) => e.code === "INVALID_ARGUMENT" && e.message === "assumeImmutable must be a boolean");
  });

  test("RemoteStore.refresh: new listing and values; handles from before fail with STALE", async () => {
    publish("hdf5/contiguous.h5", "s.h5");
    const store = await cw.RemoteStore.open(`${server.url}s.h5`);
    assert.equal(store.cacheStatus, "created");
    const x = await store.get("/x");
    assert.deepEqual(values(await x.read("...")), npy("hdf5/contiguous_x.npy"));

    publish("hdf5/gzip_shuffle.h5", "s.h5");
    await store.refresh();
    assert.equal(store.cacheStatus, "invalidated");
    assert.ok(store.nodes.some((n) => n.path === "/ints"), JSON.stringify(store.nodes));
    await assert.rejects(x.read("..."), (e) => e.code === "STALE" && /refresh/.test(e.message));
    const ints = await store.get("/ints");
    assert.deepEqual(values(await ints.read("...")), npy("hdf5/gzip_shuffle_ints.npy"));

    // A refresh that fails leaves the store and its arrays as they were.
    fs.rmSync(path.join(scratch.dir, "data", "s.h5"));
    await assert.rejects(store.refresh(), (e) => e.code === "NOT_FOUND");
    assert.deepEqual(values(await ints.read("...")), npy("hdf5/gzip_shuffle_ints.npy"));
    assert.ok(store.nodes.some((n) => n.path === "/ints"));
    store.close();
  });
});
