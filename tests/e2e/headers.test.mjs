// The `headers` option takes what fetch takes (HeadersInit): a record, a Headers object, or
// [name, value] pairs from an array or any other iterable (a Map, a generator). Each form
// reaches every request of the open and the read, a name given twice is sent once with its
// values joined by ", " (as Headers joins them), and what is no HeadersInit is refused with
// INVALID_ARGUMENT in bounded time. `globalThis.fetch` is wrapped (the package looks it up on
// every request) to see the headers each request carries.

import assert from "node:assert/strict";
import { createRequire } from "node:module";
import path from "node:path";
import { after, before, test } from "node:test";
import { fixtures, manifest, readNpy, repo, startServer } from "./lib.mjs";

const require = createRequire(import.meta.url);
const blosc2 = manifest("blosc2");
const realFetch = globalThis.fetch;
/** The headers of each request the package made, as a plain record of lowercased names. */
let seen = [];
let server, cw;

before(async () => {
  cw = require(path.join(repo, "pkg/node/chunkwise.js"));
  server = await startServer({ root: fixtures, quiet: true });
  globalThis.fetch = (input, init) => {
    seen.push(Object.fromEntries(new Headers(init?.headers)));
    return realFetch(input, init);
  };
});
after(async () => {
  globalThis.fetch = realFetch;
  await server?.stop();
});

const f = blosc2.nd3_u2;
const url = () => `${server.url}blosc2/${f.file}`;
const written = () => readNpy(path.join(fixtures, "blosc2", f.npy));

/** Opens and reads with `headers`; returns the values read and the headers of each request. */
async function readWith(headers) {
  seen = [];
  const arr = await cw.RemoteArray.open(url(), { headers, cache: "none" });
  const { shape, data } = await arr.read("1, 2:4, ::5");
  arr.close();
  return { shape, data: Array.from(data), requests: seen };
}

function* generated() {
  yield ["X-Token", "t1"];
  yield ["Authorization", "Bearer abc"];
}

test("a record, a Headers object, an array of pairs, a Map and a generator reach every request", async () => {
  const e = written();
  const expected = [2, 3].flatMap((j) => [0, 5, 10].map((k) => e.at(1, j, k)));
  const forms = [
    ["a record", { "X-Token": "t1", Authorization: "Bearer abc" }],
    ["a Headers object", new Headers({ "X-Token": "t1", Authorization: "Bearer abc" })],
    ["an array of pairs", [["X-Token", "t1"], ["Authorization", "Bearer abc"]]],
    ["a Map", new Map([["X-Token", "t1"], ["Authorization", "Bearer abc"]])],
    ["a generator", generated()],
  ];
  for (const [what, headers] of forms) {
    const r = await readWith(headers);
    assert.deepEqual(r.shape, [2, 3], what);
    assert.deepEqual(r.data, expected, what);
    assert.ok(r.requests.length >= 1, `${what}: requests made`);
    for (const h of r.requests) {
      assert.equal(h["x-token"], "t1", `${what}: X-Token of every request`);
      assert.equal(h.authorization, "Bearer abc", `${what}: Authorization of every request`);
    }
  }
});

test("a name given twice, in any case, is sent once with its values joined by \", \"", async () => {
  for (const [what, headers] of [
    ["pairs", [["X-Token", "a"], ["x-token", "b"], ["X-TOKEN", "c"]]],
    ["a Headers object", (() => { const h = new Headers(); h.append("X-Token", "a"); h.append("x-token", "b"); h.append("X-TOKEN", "c"); return h; })()],
  ]) {
    const r = await readWith(headers);
    for (const h of r.requests) assert.equal(h["x-token"], "a, b, c", what);
  }
});

test("a Headers object is read through the intrinsic entries: its own members never run", async () => {
  const h = new Headers({ "X-Token": "t1" });
  const ran = [];
  for (const m of ["entries", "forEach", "get", "has", "keys", "values", Symbol.iterator]) {
    Object.defineProperty(h, m, { value() { ran.push(String(m)); throw new Error(`own ${String(m)}`); } });
  }
  const r = await readWith(h);
  assert.deepEqual(ran, []);
  for (const req of r.requests) assert.equal(req["x-token"], "t1");
});

test("what is no HeadersInit is refused with INVALID_ARGUMENT, in bounded time", async () => {
  function* endless() { for (;;) yield ["X-A", "1"]; }
  const cases = [
    ["a pair of three", [["X-A", "1", "2"]], "headers: item 1 is not a [name, value] pair"],
    ["an item that is no array", [["X-A", "1"], "X-B: 2"], "headers: item 2 is not a [name, value] pair"],
    ["a name that is no string", [[1, "1"]], "headers: the name of item 1 is not a string"],
    ["a value that is no string", [["X-A", 1]], "header 1 must be a string"],
    ["an endless generator", endless(), "headers has more than 65536 items"],
    ["a string", "X-A: 1", "headers must be an object"],
  ];
  for (const [what, headers, message] of cases) {
    seen = [];
    const t0 = performance.now();
    await assert.rejects(cw.RemoteArray.open(url(), { headers }), (e) => {
      assert.equal(e.name, "ChunkwiseError", `${what}: ${e}`);
      assert.equal(e.code, "INVALID_ARGUMENT", what);
      assert.ok(e.message.includes(message), `${what}: ${e.message}`);
      return true;
    });
    assert.ok(performance.now() - t0 < 5000, `${what}: refused within 5 s`);
    assert.equal(seen.length, 0, `${what}: refused before any request`);
  }
});
