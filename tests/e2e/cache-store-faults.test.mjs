// cache "disk" with stores that misbehave, in Node (the package's node build, in process):
// a store that never answers cannot hold an open past its deadline or its signal; opens
// started together on a new cache agree on one salt (so the next session finds all they
// wrote); a cacheName of any length or alphabet persists with nodeFsStore.

import assert from "node:assert/strict";
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { fixtures, manifest, readNpy, repo, scratchDir, startServer } from "./lib.mjs";

const require = createRequire(import.meta.url);
let cw, nodeFsStore, server, scratch;
const blosc2 = Object.values(manifest("blosc2"));

before(async () => {
  cw = require(path.join(repo, "pkg/node/chunkwise.js"));
  ({ nodeFsStore } = await import(path.join(repo, "pkg/stores/node-fs.js")));
  server = await startServer({ root: fixtures });
  scratch = scratchDir("chunkwise-store-faults-");
});

after(async () => {
  await server?.stop();
  scratch?.remove();
});

/** A cacheStore over `map`, counting puts per key. */
function mapStore(map, puts = new Map()) {
  return {
    get: async (k) => map.get(k),
    put: async (k, b) => { puts.set(k, (puts.get(k) ?? 0) + 1); map.set(k, b.slice()); },
    delete: async (k) => { map.delete(k); },
    keys: async (p) => [...map.keys()].filter((k) => k.startsWith(p)),
  };
}

const never = () => new Promise(() => {});

describe("cache stores that misbehave", () => {
  test("a store that never answers: the open's deadline and signal still end it", { timeout: 30000 }, async () => {
    const url = `${server.url}blosc2/${blosc2[0].file}`;
    for (const stuck of ["get", "put"]) {
      const store = { ...mapStore(new Map()), [stuck]: never };
      let t0 = Date.now();
      await assert.rejects(cw.RemoteArray.open(url, { cache: "disk", cacheStore: store, timeoutMs: 1500 }),
        (e) => e.code === "TIMEOUT", `${stuck}: TIMEOUT`);
      assert.ok(Date.now() - t0 < 5000, `${stuck}: ended after ${Date.now() - t0} ms`);
      const ctrl = new AbortController();
      setTimeout(() => ctrl.abort(), 300);
      t0 = Date.now();
      await assert.rejects(
        cw.RemoteArray.open(url, { cache: "disk", cacheStore: { ...store }, signal: ctrl.signal }),
        (e) => e.code === "CANCELLED", `${stuck}: CANCELLED`);
      assert.ok(Date.now() - t0 < 5000, `${stuck}: cancelled after ${Date.now() - t0} ms`);
    }
  });

  test("opens started together on a new cache write one salt; the next session finds them all", async () => {
    const map = new Map();
    const puts = new Map();
    const first = mapStore(map, puts);
    const files = blosc2.slice(0, 12);
    await Promise.all(files.map(async (f) => {
      const arr = await cw.RemoteArray.open(`${server.url}blosc2/${f.file}`, { cache: "disk", cacheStore: first });
      await arr.read("...");
      arr.close();
    }));
    assert.equal(puts.get("chunkwise/salt"), 1, "the salt was written once");
    // A new store object over the same entries: a new coordinator, as in a new process.
    const second = mapStore(map);
    const mark = server.log.length;
    for (const f of files) {
      const arr = await cw.RemoteArray.open(`${server.url}blosc2/${f.file}`, { cache: "disk", cacheStore: second });
      assert.equal(arr.cacheStatus, "reused", f.file);
      const { data } = await arr.read("...");
      assert.deepEqual(Array.from(data, Number), readNpy(path.join(fixtures, "blosc2", f.npy)).values, f.file);
      arr.close();
    }
    assert.equal(server.log.length - mark, 0, "the second session made no request");
  });

  test("any cacheName persists with nodeFsStore (long, unicode, slashes, dots)", async () => {
    const f = blosc2[1];
    const url = `${server.url}blosc2/${f.file}`;
    const dir = path.join(scratch.dir, "names");
    for (const cacheName of ["x".repeat(200), "🙂".repeat(60), "a/b", "..", "plain-name_1.0"]) {
      const open = () => cw.RemoteArray.open(url, { cache: "disk", cacheStore: nodeFsStore(dir), cacheName });
      let arr = await open();
      await arr.read("...");
      arr.close();
      const mark = server.log.length;
      arr = await open();
      assert.equal(arr.cacheStatus, "reused", `${cacheName.slice(0, 12)}: reused`);
      await arr.read("...");
      assert.equal(server.log.length - mark, 0, `${cacheName.slice(0, 12)}: no request`);
      arr.close();
    }
    for (const name of fs.readdirSync(dir)) {
      assert.ok(Buffer.byteLength(name) <= 255, name);
    }
  });
});
