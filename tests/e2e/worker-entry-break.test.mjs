// `chunkwise/worker` (pkg/worker) next to the main entry (pkg/web) on the same inputs, in
// headless Chromium against `chunkwise serve`: where a user of the main entry would see one
// outcome, the worker entry must show the same one (values, error code), and the worker must
// not keep what the page has let go.
// - arrays the page drops without close() are freed in the worker once collected (the main
//   entry's classes free theirs through a FinalizationRegistry);
// - an open whose signal aborts after the worker has answered leaves no handle in the worker;
// - an option that is a function the main entry does not know is ignored, not refused;
// - free() exists as on the main entry's classes; readInto accepts a subclass of the typed
//   array class the main entry accepts;
// - terminate() while an open waits for the pool rejects it CANCELLED (a ChunkwiseError), not
//   with a TypeError;
// - a table's "<U3" column (RemoteStore.table, readRows) reads as strings equal to the .npy
//   in both entries;
// - a relative URL resolves against the page, not against worker.js;
// - options read as the main entry reads them: a class instance's getters, a getter that
//   throws (INVALID_ARGUMENT), a signal that is no AbortSignal (refused); onProgress failures
//   ignored; `using` (Symbol.dispose); readInto into a buffer detached mid-read; a selection
//   that cannot cross; traffic and a shared cache's cacheBytes after another array's read;
//   the stats of the handles sharing a cache (shareCache, a store's table) after a call on
//   one of them, and of a private cache not changed by others' calls.
// The page (worker-entry-break-page.js) wraps Worker to read the live handles each answer of
// the worker reports (an answer's `handles`).

import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { ensureBigFixture } from "./big-fixture.mjs";
import { chromiumPath, fixtures, readNpy, repo, startServer } from "./lib.mjs";

const INT8 = "tests/fixtures/blosc2/dtype_int8.b2nd";
const int8 = readNpy(path.join(fixtures, "blosc2/dtype_int8.npy"));

/** The strings of a 1-D "<U{n}" .npy (UCS-4 little-endian, trailing NULs dropped as numpy
 *  does), which readNpy (numbers only) does not read. */
function readUnicodeNpy(file) {
  const buf = fs.readFileSync(file);
  const hlen = buf.readUInt16LE(8);
  const header = buf.toString("latin1", 10, 10 + hlen);
  const n = Number(/'descr':\s*'<U(\d+)'/.exec(header)[1]);
  const rows = Number(/'shape':\s*\((\d+),\)/.exec(header)[1]);
  const out = [];
  for (let r = 0; r < rows; r++) {
    let s = "";
    for (let k = 0; k < n; k++) {
      const cp = buf.readUInt32LE(10 + hlen + (r * n + k) * 4);
      s += String.fromCodePoint(cp);
    }
    out.push(s.replace(/\0+$/, ""));
  }
  return out;
}

let pageServer, dataServer, bigServer, big, browser, page;

before(async () => {
  assert.ok(fs.existsSync(path.join(repo, "pkg/worker/index.js")), "pkg/worker is missing: run scripts/build-pkg.sh");
  big = ensureBigFixture();
  assert.ok(big.ok, big.reason);
  [pageServer, dataServer, bigServer] = await Promise.all([startServer({ quiet: true }), startServer({ quiet: true }),
    startServer({ root: path.dirname(big.store), quiet: true })]);
  const { chromium } = await import("playwright-core");
  browser = await chromium.launch({
    executablePath: chromiumPath, headless: true, timeout: 30000,
    // --expose-gc: the leak test collects the dropped handles' stand-ins.
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
      "--disable-component-update", "--disable-sync", "--js-flags=--expose-gc"],
  });
});

after(async () => {
  await browser?.close();
  await Promise.all([pageServer?.stop(), dataServer?.stop(), bigServer?.stop()]);
});

async function freshPage() {
  await page?.close();
  page = await browser.newPage();
  page.errors = [];
  page.on("pageerror", (e) => page.errors.push(e.message));
  await page.goto(`${pageServer.url}tests/e2e/worker-entry-break-page.html`);
  await page.waitForFunction(() => window.ready === true, null, { timeout: 20000 });
  return page;
}

/** `script` (an async function body of `api`, `url`) run with the main entry and the worker's. */
function both(script, file = INT8) {
  return page.evaluate(({ s, u }) => window.both(s, u), { s: script, u: dataServer.url + file });
}
function inWorker(script, file = INT8) {
  return page.evaluate(({ s, u }) => window.one("worker", s, u), { s: script, u: dataServer.url + file });
}

describe("chunkwise/worker next to the main entry", () => {
  before(freshPage);

  test("arrays dropped without close() are freed in the worker once collected", async () => {
    const r = await inWorker(`
      const warm = await api.RemoteArray.open(url); await warm.read("0"); warm.close();
      for (let i = 0; i < 30; i++) await api.RemoteArray.open(url);
      let n = Infinity;
      for (let i = 0; i < 40 && n > 1; i++) {
        // gc() in a task of its own: a WeakRef deref()ed in this job keeps its target alive to its end.
        await new Promise((r) => setTimeout(r, 0)); gc(); await new Promise((r) => setTimeout(r, 50));
        const a = await api.RemoteArray.open(url); await a.read("0"); n = window.workerHandles(); a.close();
      }
      return n;`);
    assert.equal(r.threw, undefined, r.message);
    // The probe array itself is the one live handle.
    assert.equal(r.value, 1, "handles the worker still holds after 30 dropped arrays were collected");
  });

  test("an open aborted after the worker answered leaves no handle in the worker", async () => {
    const r = await inWorker(`
      const live = async () => {
        const a = await api.RemoteArray.open(url); await a.read("0"); const n = window.workerHandles(); a.close(); return n;
      };
      const base = await live();
      const c = new AbortController();
      const p = api.RemoteArray.open(url, { signal: c.signal });
      await new Promise((r) => setTimeout(r, 0)); // the open is posted
      const t0 = performance.now(); while (performance.now() - t0 < 1500) {} // the answer waits here
      c.abort();
      let rejected;
      try { await p; rejected = "resolved"; } catch (e) { rejected = e.code; }
      await new Promise((r) => setTimeout(r, 100));
      return [rejected, (await live()) - base];`);
    assert.equal(r.threw, undefined, r.message);
    assert.deepEqual(r.value, ["CANCELLED", 0], "the aborted open rejects and leaves no more handles in the worker");
  });

  test("free() exists as on the main entry's classes, and closes", async () => {
    // The main entry's free() is wasm-bindgen's: a later call throws a plain Error ("null
    // pointer passed to rust"); the worker's stand-in is closed instead (INVALID_ARGUMENT).
    const r = await both(`const a = await api.RemoteArray.open(url); a.free();
      try { await a.read("0"); return "read after free"; } catch (e) { return e instanceof Error; }`);
    assert.deepEqual(r.main, { value: true });
    assert.deepEqual(r.worker, { value: true });
    const w = await inWorker(`const a = await api.RemoteArray.open(url); a.free(); a.free();
      try { await a.read("0"); return "read after free"; } catch (e) { return [e instanceof api.ChunkwiseError, e.code]; }`);
    assert.deepEqual(w.value, [true, "INVALID_ARGUMENT"]);
  });

  test("readInto accepts a subclass of the typed array class, as the main entry does", async () => {
    const r = await both(`class Mine extends Int8Array {}
      const a = await api.RemoteArray.open(url);
      const t = new Mine(a.shape.reduce((x, y) => x * y, 1));
      const r = await a.readInto(t);
      return [r.data === t, t.constructor.name, Array.from(t)];`);
    assert.equal(r.main.threw, undefined, r.main.message);
    assert.deepEqual(r.main.value, [true, "Mine", int8.values], "main entry: the values written");
    assert.deepEqual(r.worker, r.main);
  });

  test("an option that is a function, unknown to the main entry, is ignored by both", async () => {
    const r = await both(`const a = await api.RemoteArray.open(url, { fetch: () => "Bearer SECRET" });
      return [a.shape, Array.from((await a.read("0", { onChunk: () => 1 })).data)];`);
    assert.equal(r.main.threw, undefined, r.main.message);
    assert.deepEqual(r.main.value, [int8.shape, int8.values.slice(0, int8.shape[1])], "main entry: the values written");
    assert.deepEqual(r.worker, r.main);
  });

  test("a table's unicode column reads as the strings written, in both entries", async () => {
    // store_with_table.b2z: /tables/t, columns id <i8, x <f8, code <U3 (gen_b2z.py). The main
    // entry gave code as a Float64Array of the UCS-4 bytes (2 rows: 3 tiny floats, no error;
    // 3 rows: an uncaught RangeError and a readRows that never settled).
    const code = readUnicodeNpy(path.join(fixtures, "b2z/store_with_table/tables/t/code.npy"));
    for (const [start, stop] of [[0, 2], [0, 3], [0, 60], [57, 60]]) {
      const r = await both(`const s = await api.RemoteStore.open(url);
        const t = await s.table("/tables/t");
        return await Promise.race([t.readRows(${start}, ${stop}, { columns: ["code"] }),
          new Promise((_, reject) => setTimeout(() => reject(new Error("readRows did not settle in 10 s")), 10000))]);`,
      "tests/fixtures/b2z/store_with_table.b2z");
      assert.equal(r.main.threw, undefined, `main entry, rows ${start}:${stop}: ${r.main.message}`);
      assert.deepEqual(r.main.value.code, code.slice(start, stop), `main entry, rows ${start}:${stop}`);
      assert.deepEqual(r.worker, r.main, `worker entry, rows ${start}:${stop}`);
    }
  });

  test("terminate() while an open waits for the pool rejects it CANCELLED", async () => {
    const r = await inWorker(`
      await api.RemoteArray.open(url);
      const p = api.RemoteArray.open(url);
      Promise.resolve().then(() => api.terminate());
      try { await p; return "opened"; } catch (e) { return [e instanceof api.ChunkwiseError, e.code]; }`);
    assert.equal(r.threw, undefined, r.message);
    assert.deepEqual(r.value, [true, "CANCELLED"]);
    // terminate() called right after open(), before the open reached a worker: the open was
    // under way, so it rejects too (and does not go on in a new pool).
    const sync = await inWorker(`
      await api.RemoteArray.open(url);
      const p = api.RemoteArray.open(url);
      api.terminate();
      try { await p; return "opened"; } catch (e) { return [e instanceof api.ChunkwiseError, e.code]; }`);
    assert.deepEqual(sync.value, [true, "CANCELLED"]);
    // And the entry works on: a later open starts new workers.
    const again = await inWorker(`const a = await api.RemoteArray.open(url); return Array.from((await a.read("0")).data);`);
    assert.deepEqual(again.value, int8.values.slice(0, int8.shape[1]));
  });
  test("a relative URL opens the file next to the page, in both entries", async () => {
    // The page is tests/e2e/worker-entry-break-page.html; worker.js is pkg/worker/worker.js,
    // where the same relative URL names no file (or another one).
    const rel = "../fixtures/blosc2/dtype_int8.b2nd";
    const r = await both(`const a = await api.RemoteArray.open(${JSON.stringify(rel)});
      return [a.shape, Array.from((await a.read()).data)];`);
    assert.equal(r.main.threw, undefined, r.main.message);
    assert.deepEqual(r.main.value, [int8.shape, int8.values], "main entry: the values written");
    assert.deepEqual(r.worker, r.main);
    const s = await both(`const s = await api.RemoteStore.open("../fixtures/b2z/store_with_table.b2z");
      return s.nodes.map((n) => n.path);`);
    assert.equal(s.main.threw, undefined, s.main.message);
    assert.ok(s.main.value.includes("/tables/t"), "main entry: the store's nodes");
    assert.deepEqual(s.worker, s.main);
  });

  test("options are read as the main entry reads them: getters of a class, throwing getters, signals", async () => {
    // A class instance: its getters are options (the worker entry copied own properties only,
    // and opened with an aborted signal given by a getter).
    const cls = await both(`class Opts { constructor(s) { this.s = s; } get signal() { return this.s; } }
      const c = new AbortController(); c.abort();
      try { await api.RemoteArray.open(url, new Opts(c.signal)); return "opened"; } catch (e) { return [e.name, e.code]; }`);
    assert.deepEqual(cls.main, { value: ["AbortError", "CANCELLED"] });
    assert.deepEqual(cls.worker, cls.main);
    const progress = await both(`let n = 0; class P { get onProgress() { return () => { n++; }; } }
      const a = await api.RemoteArray.open(url); await a.read(null, new P()); return n > 0;`);
    assert.deepEqual(progress.main, { value: true });
    assert.deepEqual(progress.worker, progress.main);
    // A getter that throws: INVALID_ARGUMENT naming what it threw.
    for (const opts of ['{ get timeoutMs() { throw new Error("boom"); } }',
      'Object.create({ get onProgress() { throw new Error("boom"); } })']) {
      const r = await both(`try { await api.RemoteArray.open(url, ${opts}); return "opened"; }
        catch (e) { return [e instanceof api.ChunkwiseError, e.code, e.message]; }`);
      assert.deepEqual(r.main, { value: [true, "INVALID_ARGUMENT", "options could not be read: boom"] }, opts);
      assert.deepEqual(r.worker, r.main, opts);
    }
    // A signal that is no AbortSignal is refused, not used.
    for (const signal of ["{ aborted: false }", '"x"', "0", "Object.assign(new EventTarget(), { aborted: false })"]) {
      const r = await both(`try { await api.RemoteArray.open(url, { signal: ${signal} }); return "opened"; }
        catch (e) { return [e instanceof api.ChunkwiseError, e.code, e.message]; }`);
      assert.deepEqual(r.main, { value: [true, "INVALID_ARGUMENT", "signal must be an AbortSignal"] }, signal);
      assert.deepEqual(r.worker, r.main, signal);
    }
  });

  test("what onProgress throws or rejects is ignored, in both entries", async () => {
    page.errors.length = 0;
    const r = await both(`const a = await api.RemoteArray.open(url);
      const x = await a.read(null, { onProgress: () => { throw new Error("callback"); } });
      const y = await a.read(null, { onProgress: async () => { throw new Error("callback"); } });
      await new Promise((r) => setTimeout(r, 200));
      return [Array.from(x.data), Array.from(y.data)];`);
    assert.equal(r.main.threw, undefined, r.main.message);
    assert.deepEqual(r.main.value, [int8.values, int8.values]);
    assert.deepEqual(r.worker, r.main);
    assert.deepEqual(page.errors, [], "no uncaught error or unhandled rejection on the page");
  });

  test("using: Symbol.dispose closes, as on the main entry's classes", async () => {
    const r = await both(`const a = await api.RemoteArray.open(url);
      for (const C of [api.RemoteArray, api.RemoteStore, api.RemoteTable]) {
        if (typeof C.prototype[Symbol.dispose] !== "function") return "no dispose";
      }
      a[Symbol.dispose]();
      try { await a.read("0"); return "read after dispose"; } catch (e) { return e instanceof Error; }`);
    assert.deepEqual(r.main, { value: true });
    assert.deepEqual(r.worker, r.main);
  });

  test("readInto a buffer detached during the read, and selections that cannot cross", async () => {
    const r = await both(`const a = await api.RemoteArray.open(url);
      const t = new Int8Array(a.shape.reduce((x, y) => x * y, 1));
      const p = a.readInto(t);
      structuredClone(t.buffer, { transfer: [t.buffer] });
      try { await p; return "read"; } catch (e) { return [e instanceof api.ChunkwiseError, e.code, e.message]; }`);
    assert.deepEqual(r.main, { value: [true, "INVALID_ARGUMENT", "readInto: the target buffer changed size during the read"] });
    assert.deepEqual(r.worker, r.main);
    for (const sel of ["() => 0", "Symbol()", "[0, () => 0]"]) {
      const s = await both(`const a = await api.RemoteArray.open(url);
        try { await a.read(${sel}); return "read"; } catch (e) { return [e instanceof api.ChunkwiseError, e.code, e.message]; }`);
      assert.equal(s.main.value?.[1], "INVALID_ARGUMENT", `${sel}: ${JSON.stringify(s.main)}`);
      assert.deepEqual(s.worker, s.main, sel);
    }
  });

  test("traffic, and the cacheBytes of a cache two arrays share, after a read", async () => {
    // The worker sends only the stats that changed since its last answer: b's must follow a's
    // read as they do in the main entry.
    const r = await both(`const a = await api.RemoteArray.open(url); const b = await api.RemoteArray.open(url);
      const before = [b.traffic, b.cacheBytes];
      await a.read();
      const x = [before, a.traffic, a.cacheBytes, b.traffic, b.cacheBytes];
      a.close(); b.close(); return x;`);
    assert.equal(r.main.threw, undefined, r.main.message);
    assert.ok(r.main.value[1].requests > 0 && r.main.value[2] > 0, JSON.stringify(r.main));
    assert.deepEqual(r.worker, r.main);
  });

  test("the stats of every handle sharing the caller's cache follow a call, and no other's", async () => {
    // The worker reads after a call only the handles of the caller's cache: the page-wide
    // MEMORY cache (shareCache), a store with the arrays it opened, or the handle alone.
    const r = await both(`const a = await api.RemoteArray.open(url, { shareCache: true });
      const b = await api.RemoteArray.open(url, { shareCache: true });
      const p = await api.RemoteArray.open(url);
      const shared0 = b.cacheBytes, private0 = [p.traffic, p.cacheBytes];
      await a.read();
      const x = { shared0, shared: [a.cacheBytes, b.cacheBytes], private0, private: [p.traffic, p.cacheBytes] };
      // A store over 8 MiB (held whole below that, its arrays' reads would move no byte).
      const s = await api.RemoteStore.open(${JSON.stringify(bigServer.url + "big_store.b2z")});
      const g = await s.get("/big");
      const store0 = [s.traffic, s.cacheBytes];
      x.values = Array.from((await g.read("1000:1002, 5:8")).data);
      x.store0 = store0; x.store = [s.traffic, s.cacheBytes];
      await p.read(); x.afterPrivate = [b.cacheBytes, s.traffic, p.cacheBytes];
      a.close(); b.close(); p.close(); g.close(); s.close(); return x;`);
    assert.equal(r.main.threw, undefined, r.main.message);
    const m = r.main.value;
    assert.ok(m.shared0 === 0 && m.shared[0] > 0 && m.shared[1] === m.shared[0], JSON.stringify(m));
    assert.deepEqual(m.private, m.private0, "a private cache is not changed by another handle's read");
    const npy = readNpy(big.npy);
    const want = [1000, 1001].flatMap((i) => [5, 6, 7].map((j) => npy.values[i * 2000 + j]));
    assert.deepEqual(m.values, want, "the values written");
    assert.ok(m.store[0].requests > m.store0[0].requests && m.store[1] > m.store0[1], JSON.stringify(m));
    assert.ok(m.afterPrivate[2] > 0, JSON.stringify(m));
    assert.deepEqual(r.worker, r.main);
  });
});
