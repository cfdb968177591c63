// The Node build of the npm package (pkg/node) reading fixtures through `chunkwise serve`:
// values equal the arrays written, traffic equals what the server counted. Also checks that
// the package's conditional exports give Node the Node build.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { after, before, describe, test } from "node:test";
import { ensureBigFixture } from "./big-fixture.mjs";
import { fixtures, manifest, readNpy, repo, scratchDir, startServer, until } from "./lib.mjs";

const require = createRequire(import.meta.url);
const pkgDir = path.join(repo, "pkg");
const blosc2 = manifest("blosc2");
const sample = manifest("sample");

let server, chunkwise;

before(async () => {
  chunkwise = require(path.join(pkgDir, "node/chunkwise.js"));
  server = await startServer();
});
after(async () => { await server?.stop(); });

const url = (urlPath) => server.url + urlPath.slice(1);

/** A numpy unicode `.npy` (`<U{n}` or `>U{n}`, C order): descr, shape and its strings,
 *  UTF-32 code units decoded, trailing NUL characters removed (numpy's `str_`). */
function unicodeNpy(file) {
  const buf = fs.readFileSync(file);
  const hlen = buf.readUInt16LE(8);
  const header = buf.toString("latin1", 10, 10 + hlen);
  const descr = /'descr':\s*'([<>]U\d+)'/.exec(header)[1];
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header)[1].split(",").map((s) => s.trim())
    .filter(Boolean).map(Number);
  const chars = Number(descr.slice(2));
  const n = shape.reduce((a, b) => a * b, 1);
  const values = [];
  for (let i = 0; i < n; i++) {
    const cps = [];
    for (let k = 0; k < chars; k++) {
      const at = 10 + hlen + (i * chars + k) * 4;
      cps.push(descr[0] === ">" ? buf.readUInt32BE(at) : buf.readUInt32LE(at));
    }
    while (cps.length && cps[cps.length - 1] === 0) cps.pop();
    values.push(String.fromCodePoint(...cps));
  }
  return { descr, shape, values };
}

/** Plain numbers of a read result, for comparison with the .npy values. */
const numbers = (data) => Array.from(data, Number);

describe("pkg/node", () => {
  test("reads fixtures over HTTP: values equal the .npy, traffic equals the server's count", async () => {
    for (const name of ["cf_lz4_bitshuffle", "delta_partial_i4", "nd4_f4", "be_f8", "dtype_int64"]) {
      const f = blosc2[name];
      const e = readNpy(path.join(fixtures, "blosc2", f.npy));
      const urlPath = `/tests/fixtures/blosc2/${f.file}`;
      const mark = server.log.length;
      const arr = await chunkwise.RemoteArray.open(url(urlPath), { cache: "memory" });
      assert.deepEqual(Array.from(arr.shape), f.shape, name);
      assert.equal(arr.dtype, f.dtype, name);
      assert.deepEqual(Array.from(arr.chunks), f.chunks, name);
      assert.deepEqual(Array.from(arr.blocks), f.blocks, name);
      const info = arr.info;
      assert.equal(info.format, "b2nd");
      assert.equal(Number(info.source_bytes), fs.statSync(path.join(fixtures, "blosc2", f.file)).size);

      const opened = { requests: arr.traffic.requests, bytes: arr.traffic.bytes };
      assert.ok(opened.requests > 0 && opened.bytes > 0, name);
      await until(() => server.counted(urlPath, mark).requests >= opened.requests, 3000, "server log");
      assert.deepEqual(opened, server.counted(urlPath, mark), name);

      const all = await arr.read(null, {});
      assert.deepEqual(all.shape, f.shape, name);
      assert.equal(all.dtype, f.dtype.replace(">", "<"), name);
      if (typeof all.data[0] === "bigint") assert.deepEqual(Array.from(all.data), Array.from(e.raw), name);
      else assert.deepEqual(numbers(all.data), e.values, name);

      // a strided selection with an index: first axis 1, every other element of the last axis
      const sel = f.shape.map((n, d) => (d === 0 ? "1" : d === f.shape.length - 1 ? "::2" : ":")).join(", ");
      const part = await arr.read(sel, {});
      const expect = [];
      const rest = f.shape.slice(1);
      const walk = (prefix, d) => {
        if (d === rest.length) { expect.push(e.at(1, ...prefix)); return; }
        const step = d === rest.length - 1 ? 2 : 1;
        for (let i = 0; i < rest[d]; i += step) walk([...prefix, i], d + 1);
      };
      walk([], 0);
      assert.deepEqual(numbers(part.data), expect, `${name} [${sel}]`);

      // small files are held from open: reads add no traffic
      assert.deepEqual({ requests: arr.traffic.requests, bytes: arr.traffic.bytes }, opened, name);
      assert.deepEqual(server.counted(urlPath, mark), opened, name);
      arr.close();
    }
  });

  test("numpy unicode (<U8, >U3) reads as an Array of strings, trailing NULs dropped as numpy does", async () => {
    // tests/fixtures/gen_b2z.py: python-blosc2 frames of non-ASCII text, an emoji, empty strings.
    for (const [name, dtype] of [["unicode_u8", "<U8"], ["unicode_be_u3", ">U3"]]) {
      const want = unicodeNpy(path.join(fixtures, "b2z", `${name}.npy`));
      assert.equal(want.descr, dtype, name);
      const arr = await chunkwise.RemoteArray.open(url(`/tests/fixtures/b2z/${name}.b2nd`));
      assert.equal(arr.dtype, dtype, name);
      const all = await arr.read(null, {});
      assert.deepEqual(all.shape, want.shape, name);
      assert.equal(all.dtype, dtype, name);
      assert.ok(Array.isArray(all.data), name);
      assert.deepEqual(all.data, want.values, name);
      assert.ok(all.data.includes("") && all.data.some((s) => s.includes("😀")), name);
      arr.close();
    }
  });

  test("info: a Zarr array's stored sizes are null (unknown: its chunk objects are not listed), not 0", async () => {
    const arr = await chunkwise.RemoteArray.open(url("/tests/fixtures/zarr/v3.zarr"), { path: "/temperature" });
    const info = arr.info;
    assert.equal(info.format, "zarr3");
    assert.equal(info.cbytes, null);
    assert.equal(info.source_bytes, null);
    assert.ok(Number(info.nbytes) > 0);
    arr.close();
  });

  test("the bundled samples decode to the arrays written (sha256 of the C-order bytes)", async () => {
    for (const f of Object.values(sample)) {
      const arr = await chunkwise.RemoteArray.open(url(`/tests/fixtures/sample/${f.file}`), {});
      assert.deepEqual(Array.from(arr.shape), f.shape);
      const { data, dtype } = await arr.read(":", {});
      assert.equal(dtype, f.dtype);
      const digest = crypto.createHash("sha256")
        .update(Buffer.from(data.buffer, data.byteOffset, data.byteLength)).digest("hex");
      assert.equal(digest, f.sha256, f.name);
      arr.close();
    }
  });

  test("errors carry a code: NOT_FOUND, INVALID_SELECTION, CANCELLED", async () => {
    await assert.rejects(chunkwise.RemoteArray.open(url("/tests/fixtures/blosc2/missing.b2nd"), {}),
      (e) => e.name === "ChunkwiseError" && e.code === "NOT_FOUND");
    const arr = await chunkwise.RemoteArray.open(url(`/tests/fixtures/blosc2/${blosc2.nd3_u2.file}`), {});
    await assert.rejects(async () => arr.read("0, 0, 0, 0", {}), (e) => e.code === "INVALID_SELECTION");
    await assert.rejects(async () => arr.read("99, :, :", {}), (e) => e.code === "INVALID_SELECTION");
    // A syntax error rejects the promise too (no synchronous throw).
    const p = arr.read("0:10,,", {});
    assert.ok(p instanceof Promise);
    await assert.rejects(p, (e) => e.code === "INVALID_SELECTION");
    const ctrl = new AbortController();
    const pending = arr.read(":, :, :", { signal: ctrl.signal });
    ctrl.abort();
    // An abort rejects as the platform does: with signal.reason, the AbortError DOMException
    // (which also carries code CANCELLED).
    await assert.rejects(pending, (e) => e === ctrl.signal.reason && e.name === "AbortError" && e.code === "CANCELLED");
    arr.close();
  });

  test("credentials: messages hide a URL's query and user info; cacheKey names a signed URL", async () => {
    await assert.rejects(
      chunkwise.RemoteArray.open(`${server.url}tests/fixtures/blosc2/missing.b2nd?token=t0ken-123`, {}),
      (e) => {
        assert.equal(e.code, "NOT_FOUND");
        assert.ok(!e.message.includes("t0ken-123"), e.message);
        assert.ok(e.message.includes("missing.b2nd?***"), e.message);
        return true;
      });
    // fetch refuses URLs with user info; whatever the error, the password is not in it.
    const authed = server.url.replace("http://", "http://reader:pa55word@");
    await assert.rejects(
      chunkwise.RemoteArray.open(`${authed}tests/fixtures/blosc2/missing.b2nd`, {}),
      (e) => {
        assert.equal(e.name, "ChunkwiseError");
        assert.ok(!e.message.includes("pa55word"), e.message);
        return true;
      });
    // A header value read from a file keeps its newline: refused before any request, and
    // the token is not repeated in the message.
    for (const [headers, what] of [[{ Authorization: "Bearer S3CRET-TOKEN\n" }, "value"],
                            [{ "Bad Name": "S3CRET-TOKEN" }, "name"]]) {
      await assert.rejects(
        chunkwise.RemoteArray.open(`${server.url}tests/fixtures/blosc2/${blosc2.nd3_u2.file}`, { headers }),
        (e) => {
          assert.equal(e.code, "INVALID_ARGUMENT", `${what}: ${e.message}`);
          assert.ok(!e.message.includes("S3CRET"), e.message);
          return true;
        });
    }
    // Two signatures of one object under one cacheKey share the page-wide cache: the
    // second open makes no request.
    const file = `tests/fixtures/blosc2/${blosc2.nd3_u2.file}`;
    const signed = (sig) => `${server.url}${file}?X-Amz-Expires=60&X-Amz-Signature=${sig}`;
    const opts = { shareCache: true, cacheKey: "node-test-nd3" };
    const a = await chunkwise.RemoteArray.open(signed("aaaa"), opts);
    assert.ok(a.traffic.requests > 0);
    const b = await chunkwise.RemoteArray.open(signed("bbbb"), opts);
    assert.equal(b.traffic.requests, 0, "the cacheKey found the first open's record");
    const [x, y] = [await a.read("0", {}), await b.read("0", {})];
    assert.deepEqual(numbers(y.data), numbers(x.data));
    a.close(); b.close();
    await assert.rejects(chunkwise.RemoteArray.open(signed("cccc"), { cacheKey: "" }),
      (e) => e.code === "INVALID_ARGUMENT");
  });

  test("a large file: reads fetch only the chunks touched, counted like the server counts", async (t) => {
    const big = ensureBigFixture();
    if (!big.ok) { t.skip(big.reason); return; }
    const e = readNpy(big.npy);
    const bigServer = await startServer({ root: path.dirname(big.file) });
    try {
      const urlPath = `/${path.basename(big.file)}`;
      const arr = await chunkwise.RemoteArray.open(bigServer.url + urlPath.slice(1), {});
      const chunks = Array.from(arr.chunks);
      const opened = { requests: arr.traffic.requests, bytes: arr.traffic.bytes };
      assert.ok(opened.bytes < fs.statSync(big.file).size / 4, JSON.stringify(opened));
      const progress = [];
      const r = await arr.read(`0:${chunks[0]}, 0:${chunks[1]}`, { onProgress: (p) => progress.push(p) });
      assert.deepEqual(r.shape, chunks);
      for (const [i, j] of [[0, 0], [3, 7], [chunks[0] - 1, chunks[1] - 1]]) {
        assert.equal(r.data[i * chunks[1] + j], e.at(i, j));
      }
      assert.deepEqual(progress.at(-1), { done: 1, total: 1 });
      const afterRead = { requests: arr.traffic.requests, bytes: arr.traffic.bytes };
      assert.equal(afterRead.requests, opened.requests + 1);
      await until(() => bigServer.counted(urlPath).requests >= afterRead.requests, 3000, "server log");
      assert.deepEqual(afterRead, bigServer.counted(urlPath));
      // the same chunk again: from the payload cache
      await arr.read(`0:10, 0:10`, {});
      assert.deepEqual({ requests: arr.traffic.requests, bytes: arr.traffic.bytes }, afterRead);
      arr.close();
    } finally {
      await bigServer.stop();
    }
  });

  test("the web build initialised synchronously, as a worker does, reads a fixture", async () => {
    const web = await import(pathToFileURL(path.join(pkgDir, "web/chunkwise.js")).href);
    const module = new WebAssembly.Module(fs.readFileSync(path.join(pkgDir, "web/chunkwise_bg.wasm")));
    web.initSync({ module });
    const f = blosc2.cf_zstd_delta;
    const e = readNpy(path.join(fixtures, "blosc2", f.npy));
    const arr = await web.RemoteArray.open(url(`/tests/fixtures/blosc2/${f.file}`), {});
    const { data, shape, dtype } = await arr.read("2:5, 3", {});
    assert.deepEqual(shape, [3]);
    assert.equal(dtype, f.dtype);
    assert.deepEqual(numbers(data), [e.at(2, 3), e.at(3, 3), e.at(4, 3)]);
    arr.close();
  });

  test("the Blosc2-only build (chunkwise/b2nd) reads .b2nd, refuses HDF5 and Zarr as not built, and is smaller", async () => {
    const b2 = await import(pathToFileURL(path.join(pkgDir, "b2nd/chunkwise.js")).href);
    const wasm = path.join(pkgDir, "b2nd/chunkwise_bg.wasm");
    b2.initSync({ module: new WebAssembly.Module(fs.readFileSync(wasm)) });
    const f = blosc2.cf_zstd_delta;
    const e = readNpy(path.join(fixtures, "blosc2", f.npy));
    const arr = await b2.RemoteArray.open(url(`/tests/fixtures/blosc2/${f.file}`), {});
    const { data, shape } = await arr.read("2:5, 3", {});
    assert.deepEqual(shape, [3]);
    assert.deepEqual(numbers(data), [e.at(2, 3), e.at(3, 3), e.at(4, 3)]);
    arr.close();
    for (const [source, reader] of [
      ["/tests/fixtures/hdf5/byteorder.h5", "hdf5"],
      ["/tests/fixtures/zarr/v2.zarr", "zarr"],
    ]) {
      await assert.rejects(b2.RemoteArray.open(url(source), {}), (err) => {
        assert.equal(err.code, "UNSUPPORTED", source);
        assert.match(err.message, new RegExp("cargo feature `" + reader + "`"));
        return true;
      });
    }
    const pj = JSON.parse(fs.readFileSync(path.join(pkgDir, "package.json"), "utf8"));
    assert.equal(pj.exports["./b2nd"].default, "./b2nd/chunkwise.js");
    assert.ok(fs.statSync(wasm).size < fs.statSync(path.join(pkgDir, "web/chunkwise_bg.wasm")).size);
  });

  test("the package's exports give Node the Node build", async () => {
    const pj = JSON.parse(fs.readFileSync(path.join(pkgDir, "package.json"), "utf8"));
    assert.equal(pj.name, "chunkwise");
    assert.equal(pj.exports["."].node.require.default, "./node/chunkwise.js");
    assert.equal(pj.exports["."].node.import.default, "./node/index.mjs");
    const scratch = scratchDir();
    try {
      fs.mkdirSync(path.join(scratch.dir, "node_modules"));
      fs.symlinkSync(pkgDir, path.join(scratch.dir, "node_modules/chunkwise"), "dir");
      const f = blosc2.dtype_int32;
      const script = `
        import { RemoteArray } from "chunkwise";
        import { createRequire } from "node:module";
        const resolved = createRequire(import.meta.url).resolve("chunkwise");
        const arr = await RemoteArray.open(process.argv[1], {});
        const { data, shape } = await arr.read("0, :", {});
        console.log(JSON.stringify({ resolved, shape, first: Array.from(data) }));`;
      // The process must exit once its work is done: a request deadline's timer left
      // pending (60 s) would keep Node alive.
      const started = Date.now();
      const out = execFileSync(process.execPath, ["--input-type=module", "-e", script,
        url(`/tests/fixtures/blosc2/${f.file}`)], { cwd: scratch.dir, encoding: "utf8", timeout: 30000 });
      assert.ok(Date.now() - started < 10000, `the script took ${Date.now() - started} ms to exit`);
      const got = JSON.parse(out.trim().split("\n").at(-1));
      assert.match(got.resolved, /node[\\/]chunkwise\.js$/);
      const e = readNpy(path.join(fixtures, "blosc2", f.npy));
      assert.deepEqual(got.shape, [f.shape[1]]);
      assert.deepEqual(got.first, e.values.slice(0, f.shape[1]));
    } finally {
      scratch.remove();
    }
  });
});
