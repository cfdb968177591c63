// Every failure the package makes is a ChunkwiseError, the class each entry point exports
// (aborts aside: they reject with the signal's reason, see deadlines.test.mjs)
// (src/wasm/error.js): `instanceof` holds for rejections of open and read, for throws of the
// tools (decodeChunk, partition, the chunk-cache simulator), and for a closed handle; the
// Node build's ES and CommonJS faces and the web build export the class their own errors use.

import assert from "node:assert/strict";
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { after, before, describe, test } from "node:test";
import { fixtures, manifest, readNpy, repo, startServer } from "./lib.mjs";

const require = createRequire(import.meta.url);
const pkgDir = path.join(repo, "pkg");
const blosc2 = manifest("blosc2");
let server;

before(async () => {
  if (!fs.existsSync(path.join(pkgDir, "node/index.mjs"))) throw new Error("pkg/ is missing: run scripts/build-pkg.sh");
  server = await startServer({ root: fixtures, quiet: true });
});
after(async () => { await server?.stop(); });

/** Asserts that `p` (a promise or a function) fails with a `cw.ChunkwiseError` of `code`. */
async function failsWith(cw, p, code, what) {
  let err;
  try {
    await (typeof p === "function" ? p() : p);
  } catch (e) {
    err = e;
  }
  assert.ok(err !== undefined, `${what}: fails`);
  assert.ok(err instanceof cw.ChunkwiseError, `${what}: instanceof ChunkwiseError (${err && err.name}: ${err && err.message})`);
  assert.ok(err instanceof Error, `${what}: instanceof Error`);
  assert.equal(err.name, "ChunkwiseError", what);
  assert.equal(err.code, code, what);
  return err;
}

async function everyKind(cw) {
  const file = `blosc2/${blosc2.cf_zstd_delta.file}`;
  await failsWith(cw, cw.RemoteArray.open(`${server.url}blosc2/absent.b2nd`), "NOT_FOUND", "open of a missing file");
  await failsWith(cw, cw.RemoteArray.open(`${server.url}${file}`, { cache: "bogus" }), "INVALID_ARGUMENT", "a bad option");
  await failsWith(cw, cw.RemoteStore.open(`${server.url}${file}`), "UNSUPPORTED", "a store of a .b2nd");
  // A URL or path that is not a string (JavaScript has no compiler to refuse it): a rejection
  // with INVALID_ARGUMENT, not a synchronous TypeError or a trap of the module.
  const store = await cw.RemoteStore.open(`${server.url}hdf5/groups.h5`);
  for (const [what, call] of [["RemoteArray.open()", () => cw.RemoteArray.open()],
    ["RemoteArray.open(42)", () => cw.RemoteArray.open(42)],
    ["RemoteArray.open(a URL object)", () => cw.RemoteArray.open(new URL(`${server.url}${file}`))],
    ["RemoteStore.open(null)", () => cw.RemoteStore.open(null)],
    // Node has no page address: a relative URL is refused at once, not a NETWORK error later.
    ["RemoteArray.open(a relative URL)", () => cw.RemoteArray.open(file)],
    ["RemoteStore.open(a relative URL)", () => cw.RemoteStore.open("hdf5/groups.h5")],
    ["store.get(7)", () => store.get(7)]]) {
    let p;
    assert.doesNotThrow(() => { p = call(); }, `${what}: no synchronous throw`);
    await failsWith(cw, p, "INVALID_ARGUMENT", what);
  }
  assert.deepEqual((await store.get("/time")).shape, [100], "the store still works after them");
  store.close();
  const arr = await cw.RemoteArray.open(`${server.url}${file}`);
  await failsWith(cw, arr.read("0:1, 0:1, 0"), "INVALID_SELECTION", "a selection of too many dimensions");
  arr.close();
  await failsWith(cw, () => arr.shape, "INVALID_ARGUMENT", "a closed array");
  await failsWith(cw, () => cw.decodeChunk(new Uint8Array([1, 2, 3])), "DECODE", "decodeChunk of garbage");
  const e = await failsWith(cw, () => cw.partition([{ path: "a", shape: [1], chunks: [0], itemsize: 4 }]),
    "PARTITION_INVALID", "partition with a zero chunk extent");
  assert.equal(typeof e.field, "string");
  await failsWith(cw, () => cw.simulateChunkCache(null, { selections: [] }), "INVALID_ARGUMENT", "simulateChunkCache without geometry");
}

describe("ChunkwiseError", () => {
  test("the Node build (require): every failure is an instance of its exported class", async () => {
    const cw = require(path.join(pkgDir, "node/chunkwise.js"));
    assert.equal(typeof cw.ChunkwiseError, "function");
    await everyKind(cw);
  });

  test("the Node build (import) exports the same class, a no-op init and initSync", async () => {
    const esm = await import(pathToFileURL(path.join(pkgDir, "node/index.mjs")).href);
    const cjs = require(path.join(pkgDir, "node/chunkwise.js"));
    assert.equal(esm.ChunkwiseError, cjs.ChunkwiseError);
    assert.equal(esm.RemoteArray, cjs.RemoteArray);
    assert.equal(await esm.default(), undefined);
    assert.equal(esm.initSync(), undefined);
    await everyKind(esm);
  });

  test("the b2nd build in Node, instantiated from its module file as the package README says", async () => {
    const b2nd = await import(pathToFileURL(path.join(pkgDir, "b2nd/chunkwise.js")).href);
    b2nd.initSync({ module: fs.readFileSync(path.join(pkgDir, "b2nd/chunkwise_bg.wasm")) });
    const f = blosc2.nd3_u2;
    const e = readNpy(path.join(fixtures, "blosc2", f.npy));
    const arr = await b2nd.RemoteArray.open(`${server.url}blosc2/${f.file}`);
    const { shape, data } = await arr.read("1, 2:4, ::5");
    assert.deepEqual(shape, [2, 3]);
    assert.deepEqual(Array.from(data), [2, 3].flatMap((j) => [0, 5, 10].map((k) => e.at(1, j, k))));
    arr.close();
    const err = await failsWith(b2nd, b2nd.RemoteArray.open(`${server.url}hdf5/groups.h5`, { path: "/time" }),
      "UNSUPPORTED", "an HDF5 file with the b2nd build");
    assert.ok(!(err instanceof require(path.join(pkgDir, "node/chunkwise.js")).ChunkwiseError),
      "its own class, not the full build's");
  });

  test("options whose reading throws fail the call with INVALID_ARGUMENT, and the module still reads", async () => {
    // A throwing getter, a Proxy whose trap throws, a cyclic or a huge value: each call
    // settles (within 5 s here: before the options were read once in JS, an open's promise
    // never settled and the exception escaped uncaught), and later calls read the values.
    const cw = require(path.join(pkgDir, "node/chunkwise.js"));
    const f = blosc2.nd3_u2;
    const url = `${server.url}blosc2/${f.file}`;
    const e = readNpy(path.join(fixtures, "blosc2", f.npy));
    const throwing = (name) => Object.defineProperty({}, name, { enumerable: true, get() { throw new Error(`getter ${name}`); } });
    const trap = new Proxy({}, { get() { throw new Error("trap"); } });
    const cyclic = {};
    cyclic.self = cyclic;
    const settles = (p, what) => Promise.race([p, new Promise((_, reject) =>
      setTimeout(() => reject(new Error(`${what}: not settled after 5 s`)), 5000).unref())]);
    const arr = await cw.RemoteArray.open(url);
    const store = await cw.RemoteStore.open(`${server.url}hdf5/groups.h5`);
    const cases = [
      ["open: a getter", () => cw.RemoteArray.open(url, throwing("coalesceGap")), "getter coalesceGap"],
      ["open: a getter inside headers", () => cw.RemoteArray.open(url, { headers: throwing("x-a") }), "getter x-a"],
      ["open: a Proxy", () => cw.RemoteArray.open(url, trap), "trap"],
      ["open: a getter of signal", () => cw.RemoteArray.open(url, throwing("signal")), "getter signal"],
      ["open: cyclic headers", () => cw.RemoteArray.open(url, { headers: cyclic }), "nests deeper than 16 levels"],
      ["open: a huge credentials array", () => cw.RemoteArray.open(url, { credentials: new Array(2 ** 32 - 1) }), "more than 65536 items"],
      ["RemoteStore.open: a getter", () => cw.RemoteStore.open(`${server.url}hdf5/groups.h5`, throwing("timeoutMs")), "getter timeoutMs"],
      ["read: a getter", () => arr.read("0, 0, 0", throwing("timeoutMs")), "getter timeoutMs"],
      ["read: a getter of onProgress", () => arr.read("0, 0, 0", throwing("onProgress")), "getter onProgress"],
      ["getChunk: a Proxy", () => arr.getChunk([0, 0, 0], trap), "trap"],
      ["exportReference: a getter", () => store.exportReference(throwing("withPayload")), "getter withPayload"],
      ["clearCache: a getter", () => cw.clearCache(throwing("cacheName")), "getter cacheName"],
      ["renderPng: a getter", () => cw.renderPng(new Float32Array(4), [2, 2], throwing("cmap")), "getter cmap"],
    ];
    for (const [what, call, message] of cases) {
      const err = await failsWith(cw, settles(Promise.resolve().then(call), what), "INVALID_ARGUMENT", what);
      assert.match(err.message, /^options could not be read: /, what);
      assert.ok(err.message.includes(message), `${what}: ${err.message}`);
    }
    // A signal that is no AbortSignal is refused, as fetch refuses it (its `aborted` and
    // `addEventListener` were called as if it were one); so is an onProgress that is no function.
    const fakeSignal = { aborted: false, addEventListener() {}, removeEventListener() {} };
    // One that also says it is an AbortSignal, and whose members throw (they were called
    // outside any catch: the exception went through the module, and the call never settled).
    const taggedSignal = {
      [Symbol.toStringTag]: "AbortSignal",
      get aborted() { throw new Error("aborted refused"); },
      addEventListener() { throw new Error("addEventListener refused"); },
    };
    for (const [what, call, message] of [
      ["open: signal {}", () => cw.RemoteArray.open(url, { signal: {} }), "signal must be an AbortSignal"],
      ["open: signal 5", () => cw.RemoteArray.open(url, { signal: 5 }), "signal must be an AbortSignal"],
      ["RemoteStore.open: a look-alike signal", () => cw.RemoteStore.open(`${server.url}hdf5/groups.h5`, { signal: fakeSignal }), "signal must be an AbortSignal"],
      ["read: a look-alike signal", () => arr.read("0, 0, 0", { signal: fakeSignal }), "signal must be an AbortSignal"],
      ["open: a signal that fakes its toStringTag", () => cw.RemoteArray.open(url, { signal: taggedSignal }), "signal must be an AbortSignal"],
      ["read: a signal that fakes its toStringTag", () => arr.read("0, 0, 0", { signal: taggedSignal }), "signal must be an AbortSignal"],
      ["read: a real signal behind a throwing Proxy", () => arr.read("0, 0, 0", {
        signal: new Proxy(new AbortController().signal, { get() { throw new Error("signal trap"); } }),
      }), "signal must be an AbortSignal"],
      ["read: onProgress 5", () => arr.read("0, 0, 0", { onProgress: 5 }), "onProgress must be a function"],
    ]) {
      const err = await failsWith(cw, settles(Promise.resolve().then(call), what), "INVALID_ARGUMENT", what);
      assert.equal(err.message, message, what);
    }
    assert.equal((await arr.read("0, 0, 0", { signal: new AbortController().signal, onProgress: null })).data[0], e.at(0, 0, 0));
    // A real signal with an own `aborted` getter that throws: it was read outside any catch
    // (an uncaught exception, and the call never settled). The module reads a signal only by
    // AbortSignal.prototype's getters and EventTarget.prototype's methods (src/io/signal.js),
    // so that getter never runs: the call goes on, and an aborted one rejects with its reason.
    for (const [what, call] of [["open", (signal) => cw.RemoteArray.open(url, { signal })],
      ["read", (signal) => arr.read("1, 2:4, ::5", { signal })]]) {
      const ctrl = new AbortController();
      let ran = 0;
      Object.defineProperty(ctrl.signal, "aborted", { get() { ran++; throw new Error("aborted getter"); } });
      ctrl.signal.addEventListener = () => { ran++; throw new Error("addEventListener refused"); };
      const got = await settles(call(ctrl.signal), `${what} with a sabotaged signal`);
      if (what === "read") assert.deepEqual(Array.from(got.data), [2, 3].flatMap((j) => [0, 5, 10].map((k) => e.at(1, j, k))));
      else got.close();
      const reason = new Error("mine");
      ctrl.abort(reason);
      const rejected = await settles(call(ctrl.signal).then(() => null, (err) => err), `${what} with an aborted sabotaged signal`);
      assert.equal(rejected, reason, `${what}: rejects with the signal's reason`);
      assert.equal(ran, 0, `${what}: the signal's own members ran`);
    }
    // A selection, chunk coordinates or a shape whose reading throws: the same, named.
    const listTrap = new Proxy([0, 0, 0], { get() { throw new Error("list trap"); } });
    for (const [what, call, message] of [
      ["read: a Proxy selection", () => arr.read(listTrap), "the selection could not be read: list trap"],
      ["readInto: a Proxy selection", () => arr.readInto(new Uint16Array(1), listTrap), "the selection could not be read: list trap"],
      ["getChunk: Proxy coordinates", () => arr.getChunk(listTrap), "chunk coordinates could not be read: list trap"],
      ["getChunk: 2^32 - 1 coordinates", () => arr.getChunk(new Array(2 ** 32 - 1)), "chunk coordinates could not be read: chunk coordinates has more than 65536 items"],
      ["renderPng: a Proxy shape", () => cw.renderPng(new Float32Array(4), listTrap), "renderPng: shape could not be read: list trap"],
    ]) {
      const err = await failsWith(cw, settles(Promise.resolve().then(call), what), "INVALID_ARGUMENT", what);
      assert.equal(err.message, message, what);
    }
    // An async onProgress that rejects (and one that throws, one returning a Promise subclass
    // whose `then` throws: it threw through the module, and the read never settled; and
    // rejected promises whose own `then` throws)
    // does not fail the read, nor leave an unhandled rejection, which ends a Node process.
    const unhandled = [];
    const onUnhandled = (reason) => unhandled.push(reason);
    process.on("unhandledRejection", onUnhandled);
    class ThrowingThen extends Promise {
      then() { throw new Error("then refused"); }
    }
    try {
      for (const onProgress of [async () => { throw new Error("async progress"); }, () => { throw new Error("progress"); },
        () => new ThrowingThen(() => {}),
        // Rejected promises whose own `then` throws: their rejection was left unhandled.
        () => Object.assign(Promise.reject(new Error("rejected")), { then() { throw new Error("own then"); } }),
        () => ThrowingThen.reject(new Error("rejected subclass"))]) {
        const { data } = await settles(arr.read("1, 2:4, ::5", { onProgress }), `onProgress ${onProgress}`);
        assert.deepEqual(Array.from(data), [2, 3].flatMap((j) => [0, 5, 10].map((k) => e.at(1, j, k))));
      }
      await new Promise((r) => setTimeout(r, 50));
      assert.deepEqual(unhandled.map(String), [], "no unhandled rejection");
    } finally {
      process.off("unhandledRejection", onUnhandled);
    }
    const long = Object.defineProperty({}, "cache", { get() { throw new Error("y".repeat(1 << 20)); } });
    const err = await failsWith(cw, cw.RemoteArray.open(url, long), "INVALID_ARGUMENT", "a getter throwing 1 MiB");
    assert.ok(err.message.length < 300, `the thrown message is cut (${err.message.length} characters)`);
    // The same values as before, through the same module instance.
    const { shape, data } = await arr.read("1, 2:4, ::5", { timeoutMs: 10000 });
    assert.deepEqual(shape, [2, 3]);
    assert.deepEqual(Array.from(data), [2, 3].flatMap((j) => [0, 5, 10].map((k) => e.at(1, j, k))));
    const again = await cw.RemoteArray.open(url, { headers: { "x-a": "1" }, cache: "none" });
    assert.deepEqual(Array.from((await again.read("1, 2:4, ::5")).data), Array.from(data));
    assert.deepEqual((await store.get("/time")).shape, [100]);
    again.close();
    arr.close();
    store.close();
  });

  test("free() is close(): calls after either throw the ChunkwiseError of a closed handle", async () => {
    for (const cw of [require(path.join(pkgDir, "node/chunkwise.js")),
      await import(pathToFileURL(path.join(pkgDir, "b2nd/chunkwise.js")).href).then((b2nd) => {
        b2nd.initSync({ module: fs.readFileSync(path.join(pkgDir, "b2nd/chunkwise_bg.wasm")) });
        return b2nd;
      })]) {
      const url = `${server.url}blosc2/${blosc2.nd3_u2.file}`;
      for (const order of [["free", "free"], ["free", "close"], ["close", "free"], ["close", "close"]]) {
        const arr = await cw.RemoteArray.open(url);
        for (const m of order) assert.doesNotThrow(() => arr[m](), `${order}: ${m}`);
        const err = await failsWith(cw, () => arr.read("0, 0, 0"), "INVALID_ARGUMENT", `${order}: read`);
        assert.equal(err.message, "the array is closed");
        await failsWith(cw, () => arr.shape, "INVALID_ARGUMENT", `${order}: shape`);
      }
      if (Symbol.dispose) {
        const arr = await cw.RemoteArray.open(url);
        arr[Symbol.dispose]();
        await failsWith(cw, () => arr.shape, "INVALID_ARGUMENT", "Symbol.dispose");
      }
    }
    const cw = require(path.join(pkgDir, "node/chunkwise.js"));
    const store = await cw.RemoteStore.open(`${server.url}hdf5/groups.h5`);
    store.free();
    await failsWith(cw, () => store.get("/time"), "INVALID_ARGUMENT", "store.get after free");
  });

  test("a grid of 2^64 chunks or more (h5py's and zarr-python's (2^53, 2^53) in chunks of (5, 4)): info has null counts, a read is UNSUPPORTED", async () => {
    const cw = require(path.join(pkgDir, "node/chunkwise.js"));
    for (const [url, options] of [[`${server.url}zarr/huge_grid.zarr`, {}], [`${server.url}hdf5/huge_grid.h5`, { path: "/d" }]]) {
      const arr = await cw.RemoteArray.open(url, options);
      const info = arr.info;
      assert.deepEqual(info.shape, [2 ** 53, 2 ** 53], url);
      // They were 0 (HDF5) or 2^64 - 1 (Zarr) chunks, and 0 bytes (the product wrapped).
      assert.equal(info.nchunks, null, url);
      assert.equal(info.nbytes, null, url);
      const e = await failsWith(cw, arr.read("0:2, 0:3"), "UNSUPPORTED", url);
      assert.match(e.message, /2\^64 chunks or more/, url);
      arr.close();
    }
  });

  test("the web build exports the class its errors use", async () => {
    const web = await import(pathToFileURL(path.join(pkgDir, "web/chunkwise.js")).href);
    web.initSync({ module: fs.readFileSync(path.join(pkgDir, "web/chunkwise_bg.wasm")) });
    await everyKind(web);
    const made = new web.ChunkwiseError("m", "IO");
    assert.ok(made instanceof Error && made.code === "IO" && made.name === "ChunkwiseError");
  });
});
