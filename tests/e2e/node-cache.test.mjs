// cache "disk" in Node with the package's nodeFsStore (chunkwise/stores/node-fs): each read runs
// in a new `node` process requiring the package by name (CommonJS, as users do), against
// `chunkwise serve`. A second process reopens a .b2nd, an HDF5 dataset and a Zarr array with
// zero requests at the server and the values written; a damaged blob file is refetched; two
// arrays of one Zarr store opened separately and read interleaved both reopen so. Also
// the store on its own: directory and file modes, refusals, key encoding, atomic replacement.

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { promisify } from "node:util";
import { after, before, describe, test } from "node:test";
import { fixtures, readNpy, repo, scratchDir, startServer, until } from "./lib.mjs";

const require = createRequire(import.meta.url);
const run = promisify(execFile);
const pkgDir = path.join(repo, "pkg");

// [label, file under tests/fixtures, path option, .npy of the array written]
const cases = [
  ["b2nd", "blosc2/cf_blosclz_nofilter.b2nd", undefined, "blosc2/cf_blosclz_nofilter.npy"],
  ["hdf5", "hdf5/contiguous.h5", "/x", "hdf5/contiguous_x.npy"],
  ["zarr", "zarr/v3.zarr", "/raw", "zarr/v3_raw.npy"],
];

// The child: opens every case with cache "disk" on nodeFsStore(dir), reads it whole, prints
// JSON { label: { shape, dtype, values (decimal strings), traffic } } as its last line.
const CHILD = `
const { RemoteArray } = require("chunkwise");
const { nodeFsStore } = require("chunkwise/stores/node-fs");
const { dir, cases } = JSON.parse(process.argv[2]);
(async () => {
  const cacheStore = nodeFsStore(dir);
  const out = {};
  for (const c of cases) {
    const arr = await RemoteArray.open(c.url, { cache: "disk", cacheStore, path: c.path });
    const { data, shape, dtype } = await arr.read(null, {});
    out[c.label] = { shape: Array.from(shape), dtype, values: Array.from(data, String),
      traffic: { requests: arr.traffic.requests, bytes: arr.traffic.bytes } };
    arr.close();
  }
  console.log(JSON.stringify(out));
})().catch((e) => { console.error(e && e.code, e && e.message); process.exit(1); });
`;

// Two arrays of one Zarr store: opened one after the other, then read interleaved (the first
// array's last read writes the store's record last). Prints JSON { a, b } of { shape, values,
// requests } (requests: of the open and all reads) as its last line.
const STORE_CHILD = `
const { RemoteArray } = require("chunkwise");
const { nodeFsStore } = require("chunkwise/stores/node-fs");
const { dir, url, a, b } = JSON.parse(process.argv[2]);
(async () => {
  const opts = (p) => ({ cache: "disk", cacheStore: nodeFsStore(dir), path: p });
  const arrA = await RemoteArray.open(url, opts(a));
  const arrB = await RemoteArray.open(url, opts(b));
  const rows = arrA.shape[0];
  const top = await arrA.read("0:5, :", {});
  const all = await arrB.read(null, {});
  const rest = await arrA.read("5:" + rows + ", :", {});
  const out = {
    a: { shape: [rows, top.shape[1]].map(Number), values: [...Array.from(top.data, String), ...Array.from(rest.data, String)],
      requests: arrA.traffic.requests },
    b: { shape: Array.from(all.shape), values: Array.from(all.data, String), requests: arrB.traffic.requests },
  };
  arrA.close();
  arrB.close();
  console.log(JSON.stringify(out));
})().catch((e) => { console.error(e && e.code, e && e.message); process.exit(1); });
`;

let server, scratch, cacheDir;

before(async () => {
  for (const f of ["node/chunkwise.js", "stores/node-fs.js"]) {
    if (!fs.existsSync(path.join(pkgDir, f))) throw new Error(`pkg/${f} is missing: run scripts/build-pkg.sh`);
  }
  server = await startServer({ root: fixtures });
  scratch = scratchDir("chunkwise-node-cache-");
  // The child resolves "chunkwise" and "chunkwise/stores/node-fs" through the package's exports.
  fs.mkdirSync(path.join(scratch.dir, "node_modules"));
  fs.symlinkSync(pkgDir, path.join(scratch.dir, "node_modules/chunkwise"), "dir");
  fs.writeFileSync(path.join(scratch.dir, "child.cjs"), CHILD);
  fs.writeFileSync(path.join(scratch.dir, "store-child.cjs"), STORE_CHILD);
  cacheDir = path.join(scratch.dir, "cache", "nested");
});
after(async () => {
  await server?.stop();
  scratch?.remove();
});

/** Runs the child in a new process; resolves to its results by label. */
async function child() {
  const arg = JSON.stringify({
    dir: cacheDir,
    cases: cases.map(([label, file, p]) => ({ label, url: server.url + file, path: p })),
  });
  const { stdout } = await run(process.execPath, [path.join(scratch.dir, "child.cjs"), arg],
    { cwd: scratch.dir, encoding: "utf8", timeout: 60000 });
  return JSON.parse(stdout.trim().split("\n").at(-1));
}

/** Requests the server logged since `mark` for paths under /`file` (a Zarr store: its keys). */
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

/** The .npy values as decimal strings (exact for 64-bit integers and floats alike). */
const expected = (npy) => Array.from(readNpy(path.join(fixtures, npy)).raw, String);

function assertValues(got, label) {
  for (const [name, , , npy] of cases) {
    const e = readNpy(path.join(fixtures, npy));
    assert.deepEqual(got[name].shape, e.shape, `${label} ${name}`);
    assert.deepEqual(got[name].values, expected(npy), `${label} ${name}: values differ from the array written`);
  }
}

describe("cache disk in Node with nodeFsStore", () => {
  test("a new process reopens every format with zero requests; a damaged blob is refetched", async (t) => {
    let mark = server.log.length;
    const cold = await child();
    await settle();
    assertValues(cold, "cold");
    for (const [name, file] of cases) {
      assert.ok(cold[name].traffic.requests > 0, `${name}: the cold read fetched`);
      assert.equal(requestsFor(file, mark), cold[name].traffic.requests, `${name}: the server counted the requests the array did`);
    }
    assert.equal(fs.statSync(cacheDir).mode & 0o777, 0o700, "the cache directory is private");
    const names = fs.readdirSync(cacheDir);
    assert.ok(names.length > 0);
    for (const n of names) assert.equal(fs.statSync(path.join(cacheDir, n)).mode & 0o777, 0o600, n);
    assert.ok(!names.some((n) => n.startsWith(".")), "no temporary file left behind");

    mark = server.log.length;
    const warm = await child();
    await settle();
    assertValues(warm, "warm");
    for (const [name, file] of cases) {
      assert.deepEqual(warm[name].traffic, { requests: 0, bytes: 0 }, name);
      assert.equal(requestsFor(file, mark), 0, `${name}: the server saw no request from the second process`);
    }

    // Damage the blob of one Zarr chunk (found by its marker, which names the source).
    const decoded = fs.readdirSync(cacheDir).map((n) => [n, decodeURIComponent(n)]);
    const zarrUrl = server.url + "zarr/v3.zarr";
    const marker = decoded.find(([n, k]) => k.startsWith("chunkwise/payload/m/") &&
      JSON.parse(fs.readFileSync(path.join(cacheDir, n), "utf8")).key.startsWith(zarrUrl));
    assert.ok(marker, "a payload marker of the Zarr array");
    const blobKey = marker[1].replace("/payload/m/", "/payload/b/");
    const blob = decoded.find(([, k]) => k === blobKey);
    assert.ok(blob, `the blob of ${marker[1]}`);
    const blobFile = path.join(cacheDir, blob[0]);
    const bytes = fs.readFileSync(blobFile);
    bytes[Math.floor(bytes.length / 2)] ^= 0x40;
    fs.writeFileSync(blobFile, bytes);

    mark = server.log.length;
    const healed = await child();
    await settle();
    assertValues(healed, "after damage");
    const traffic = (r) => Object.fromEntries(cases.map(([n]) => [n, r[n].traffic.requests]));
    t.diagnostic(`requests cold ${JSON.stringify(traffic(cold))} warm ${JSON.stringify(traffic(warm))} after damage ${JSON.stringify(traffic(healed))}`);
    assert.ok(healed.zarr.traffic.requests > 0, "the damaged chunk was fetched again");
    assert.equal(requestsFor("zarr/v3.zarr", mark), healed.zarr.traffic.requests);
    for (const name of ["b2nd", "hdf5"]) {
      assert.equal(healed[name].traffic.requests, 0, `${name}: untouched entries still serve`);
    }
    assert.notDeepEqual(fs.readFileSync(blobFile), bytes, "the damaged blob was replaced");
  });

  test("arrays of one Zarr store opened separately: a new process reopens both with zero requests", async (t) => {
    for (const [store, a, b] of [["zarr/v2.zarr", "/blosc", "/zstd"], ["zarr/v3.zarr", "/blosc", "/gzip"]]) {
      const dir = path.join(scratch.dir, "store-cache", store.replace(/\W/g, "_"));
      const arg = JSON.stringify({ dir, url: server.url + store, a, b });
      const runChild = async () => {
        const { stdout } = await run(process.execPath, [path.join(scratch.dir, "store-child.cjs"), arg],
          { cwd: scratch.dir, encoding: "utf8", timeout: 60000 });
        return JSON.parse(stdout.trim().split("\n").at(-1));
      };
      const tag = store.slice("zarr/".length, -".zarr".length);
      const check = (got, label) => {
        for (const [k, p] of [["a", a], ["b", b]]) {
          const npy = `zarr/${tag}_${p.slice(1)}.npy`;
          assert.deepEqual(got[k].shape, readNpy(path.join(fixtures, npy)).shape, `${label} ${store}${p}`);
          assert.deepEqual(got[k].values, expected(npy), `${label} ${store}${p}: values differ from the array written`);
        }
      };
      const cold = await runChild();
      check(cold, "cold");
      assert.ok(cold.a.requests > 0 && cold.b.requests > 0, "the cold reads fetched");
      await settle();
      const mark = server.log.length;
      const warm = await runChild();
      await settle();
      check(warm, "warm");
      const seen = server.log.slice(mark).filter((r) => r.method !== "OPTIONS" && r.path.startsWith(`/${store}/`));
      t.diagnostic(`${store}: cold requests ${cold.a.requests} + ${cold.b.requests}, warm ${warm.a.requests} + ${warm.b.requests}, server saw ${seen.map((r) => r.path).join(" ") || "none"}`);
      assert.deepEqual(seen.map((r) => r.path), [], `${store}: the second process made requests`);
      assert.equal(warm.a.requests + warm.b.requests, 0);
    }
  });

  test("without cacheStore, cache disk is refused with INVALID_ARGUMENT naming nodeFsStore", async () => {
    const { RemoteArray } = require(path.join(pkgDir, "node/chunkwise.js"));
    const mark = server.log.length;
    await assert.rejects(RemoteArray.open(server.url + cases[0][1], { cache: "disk" }), (e) => {
      assert.equal(e.name, "ChunkwiseError");
      assert.equal(e.code, "INVALID_ARGUMENT", e.message);
      assert.match(e.message, /nodeFsStore/);
      assert.match(e.message, /chunkwise\/stores\/node-fs/);
      return true;
    });
    await settle();
    assert.equal(requestsFor(cases[0][1], mark), 0, "refused before any request");
  });
});

describe("nodeFsStore", () => {
  let nodeFsStore;
  before(async () => {
    ({ nodeFsStore } = await import(path.join(pkgDir, "stores/node-fs.js")));
  });

  test("get, put, delete and keys; a missing key is undefined; keys cannot leave the directory", async () => {
    const s = scratchDir("chunkwise-node-fs-");
    try {
      const dir = path.join(s.dir, "a", "b");
      const store = nodeFsStore(dir);
      assert.equal(fs.statSync(dir).mode & 0o777, 0o700);
      assert.equal(fs.statSync(path.join(s.dir, "a")).mode & 0o777, 0o700, "parents created private too");
      assert.equal(await store.get("x/payload/b/00"), undefined);
      const keys = ["x/payload/b/00", "x/payload/m/00", "..", ".", "../escape", "a\\b", "*?:<>|\"", "x/é"];
      for (const [i, k] of keys.entries()) await store.put(k, new Uint8Array([i, 1, 2, 3]));
      for (const [i, k] of keys.entries()) assert.deepEqual(await store.get(k), new Uint8Array([i, 1, 2, 3]), k);
      const files = fs.readdirSync(dir);
      assert.equal(files.length, keys.length, "one file per key, all inside the directory");
      assert.deepEqual(fs.readdirSync(s.dir).sort(), ["a"], "nothing written beside it");
      for (const f of files) {
        assert.ok(!f.startsWith(".") && !/[/\\*?:<>|"]/.test(f), f);
        assert.equal(fs.statSync(path.join(dir, f)).mode & 0o777, 0o600, f);
      }
      assert.deepEqual((await store.keys("")).sort(), [...keys].sort());
      assert.deepEqual((await store.keys("x/payload/")).sort(), ["x/payload/b/00", "x/payload/m/00"]);
      await store.put("x/payload/b/00", new Uint8Array([9]));
      assert.deepEqual(await store.get("x/payload/b/00"), new Uint8Array([9]), "replaced");
      await store.delete("x/payload/b/00");
      await store.delete("x/payload/b/00");
      assert.equal(await store.get("x/payload/b/00"), undefined);
      // A file that is no encoded key is not listed.
      fs.writeFileSync(path.join(dir, "not%zzencoded"), "x");
      assert.equal((await store.keys("")).length, keys.length - 1);
      // The directory removed under the store: a write creates it again.
      fs.rmSync(dir, { recursive: true });
      assert.deepEqual(await store.keys(""), []);
      await store.put("k", new Uint8Array([7]));
      assert.deepEqual(await store.get("k"), new Uint8Array([7]));
      await assert.rejects(store.put("k", "text"), TypeError);
      await assert.rejects(store.put("k".repeat(300), new Uint8Array(1)), /too long/);
    } finally {
      s.remove();
    }
  });

  test("a reader sees a value whole or not at all while it is replaced", async () => {
    const s = scratchDir("chunkwise-node-fs-");
    try {
      const store = nodeFsStore(s.dir);
      const a = new Uint8Array(1 << 20).fill(0xaa);
      const b = new Uint8Array(3 << 19).fill(0xbb);
      await store.put("v", a);
      const writes = [];
      for (let i = 0; i < 40; i++) {
        writes.push(store.put("v", i % 2 ? a : b));
        const got = await store.get("v");
        assert.ok(got, "never missing while replaced");
        const whole = (got.length === a.length && got.every((x) => x === 0xaa)) ||
          (got.length === b.length && got.every((x) => x === 0xbb));
        assert.ok(whole, `a torn value of ${got.length} bytes`);
      }
      await Promise.all(writes);
      assert.deepEqual(fs.readdirSync(s.dir), ["v"], "no temporary file left");
    } finally {
      s.remove();
    }
  });

  test("refuses a directory others can write to, or that another user owns", async (t) => {
    const s = scratchDir("chunkwise-node-fs-");
    try {
      const open = path.join(s.dir, "open");
      fs.mkdirSync(open);
      fs.chmodSync(open, 0o777);
      assert.throws(() => nodeFsStore(open), /has mode 0777: other users can write to it/);
      fs.chmodSync(open, 0o770);
      assert.throws(() => nodeFsStore(open), /has mode 0770/);
      fs.chmodSync(open, 0o755);
      nodeFsStore(open);
      const file = path.join(s.dir, "file");
      fs.writeFileSync(file, "");
      assert.throws(() => nodeFsStore(file), /is not a directory/);
      assert.throws(() => nodeFsStore(""), TypeError);
      if (process.getuid() !== 0) {
        t.diagnostic("not root: the other-owner case needs chown (checked when run as root)");
        return;
      }
      const theirs = path.join(s.dir, "theirs");
      fs.mkdirSync(theirs, { mode: 0o700 });
      fs.chownSync(theirs, 65534, 65534);
      assert.throws(() => nodeFsStore(theirs), /is owned by uid 65534, not by this process \(uid 0\)/);
    } finally {
      s.remove();
    }
  });
});
