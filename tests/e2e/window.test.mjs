// Large arrays in headless Chromium with the web build (pkg/web): a 1 GiB float32 .b2nd
// (written at test time by python-blosc2, tests/fixtures/gen_big_window.py, into a temporary
// directory) read window by window with readInto into one 64 MiB Float32Array. wasm memory
// (which never shrinks, so wasmMemoryBytes() is the high-water mark) stays below the window
// plus the cache budget plus a small margin, and after the first window grows by no more than
// the payload cache filling its budget; elements are
// spot-checked against the generator's formula. Also float16 reads as a Float16Array where the
// browser has one, and aborts reject as the browser's own APIs do (an iframe's signal too).

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { fixtures, launchChromium, startServer } from "./lib.mjs";

const venv = process.env.CHUNKWISE_VENV || path.join(os.homedir(), ".cache/chunkwise/venv");
const dir = path.join(os.tmpdir(), "chunkwise-e2e-window");
const file = path.join(dir, "big_window_f4.b2nd");
const MiB = 1 << 20;

let pageServer, dataServer, browser, page;

before(async () => {
  if (!fs.existsSync(file)) {
    fs.mkdirSync(dir, { recursive: true });
    const aside = fs.mkdtempSync(path.join(dir, "gen-"));
    const r = spawnSync(path.join(venv, "bin/python"), [path.join(fixtures, "gen_big_window.py"), aside],
      { encoding: "utf8", timeout: 300000 });
    assert.equal(r.status, 0, `gen_big_window.py failed: ${r.stderr}`);
    fs.renameSync(path.join(aside, "big_window_f4.b2nd"), file);
    fs.rmSync(aside, { recursive: true, force: true });
  }
  [pageServer, dataServer] = await Promise.all([startServer({ quiet: true }), startServer({ root: dir, quiet: true })]);
  browser = await launchChromium();
  page = await browser.newPage();
  page.on("pageerror", (e) => console.error("page error:", e.message));
  await page.goto(`${pageServer.url}tests/e2e/api-page.html`);
  await page.waitForFunction(() => document.body.dataset.ready === "1", null, { timeout: 60000 });
});

after(async () => {
  await browser?.close();
  await Promise.all([pageServer?.stop(), dataServer?.stop()]);
});

describe("large arrays and dtypes in Chromium (pkg/web)", () => {
  test("1 GiB read in 64 MiB windows with readInto: wasm memory below window + cache + margin, flat", { timeout: 600000 }, async (t) => {
    const url = `${dataServer.url}big_window_f4.b2nd`;
    const cacheBudget = 1 * MiB;
    const out = await page.evaluate(async ({ url, cacheBudget }) => {
      const { RemoteArray, wasmMemoryBytes } = window.cw;
      const t0 = performance.now();
      const arr = await RemoteArray.open(url, { maxCacheBytes: cacheBudget });
      const [rows, cols] = arr.shape;
      const winRows = 1024;
      const win = new Float32Array(winRows * cols);
      const opened = wasmMemoryBytes();
      const memory = [];
      let checked = 0;
      const bad = [];
      for (let r0 = 0; r0 < rows; r0 += winRows) {
        const got = await arr.readInto(win, `${r0}:${r0 + winRows}, :`, {});
        if (got.data !== win) bad.push("data is not the target");
        memory.push(wasmMemoryBytes());
        // Spot checks: the window's corners, its middle and a stride through it.
        for (let k = 0; k < win.length; k += 104729) {
          const i = r0 + Math.floor(k / cols), j = k % cols;
          const want = (i % 1000) + (j % 8) / 8;
          if (win[k] !== want) bad.push(`[${i}, ${j}] = ${win[k]}, want ${want}`);
          checked++;
        }
        const last = win.length - 1, i = r0 + winRows - 1, j = cols - 1;
        if (win[last] !== (i % 1000) + (j % 8) / 8) bad.push(`[${i}, ${j}] = ${win[last]}`);
        checked++;
      }
      const info = { shape: arr.shape, traffic: arr.traffic, cacheBytes: arr.cacheBytes };
      arr.close();
      return { opened, memory, checked, bad: bad.slice(0, 5), windowBytes: win.byteLength, ms: performance.now() - t0, info };
    }, { url, cacheBudget });
    assert.deepEqual(out.info.shape, [16384, 16384]);
    assert.deepEqual(out.bad, []);
    assert.ok(out.checked > 16 * 150, `${out.checked} elements checked`);
    const peak = Math.max(...out.memory);
    // The window's result buffer, the cache budget, the source copy held since open (a
    // frame under 8 MiB is fetched whole: 2.6 MB here) and one decoded chunk (4 MiB) with its
    // fetch: 64 + 1 + 16 MiB of margin above the memory the open left.
    const bound = out.opened + out.windowBytes + cacheBudget + 16 * MiB;
    assert.ok(peak <= bound, `wasm memory peaked at ${peak} bytes, bound ${bound} (opened at ${out.opened})`);
    // After the first window, later reads reuse the memory it freed: what grows is at most the
    // payload cache filling up to its budget (compressed chunks, ~40 KB each here).
    const growth = out.memory.at(-1) - out.memory[0];
    assert.ok(growth <= cacheBudget + MiB, `memory per window: ${out.memory}`);
    t.diagnostic(`1 GiB in ${out.memory.length} windows of ${out.windowBytes} bytes: ${Math.round(out.ms)} ms; ` +
      `wasm memory ${out.opened} after open, ${out.memory[0]} after the first window, peak ${peak} ` +
      `(bound ${bound}); cache ${out.info.cacheBytes} bytes; traffic ${JSON.stringify(out.info.traffic)}`);
  });

  test("aborts reject as the browser's own APIs do: signal.reason, AbortSignal.timeout's TimeoutError, timeoutMs", async () => {
    const silent = await startServer({ root: fixtures, quiet: true, faults: ["never-answer"] });
    try {
      const out = await page.evaluate(async (url) => {
        const { RemoteArray } = window.cw;
        const seen = async (p) => p.then(() => ({ resolved: true }), (e) => e);
        const ctrl = new AbortController();
        const reason = { mine: true };
        setTimeout(() => ctrl.abort(reason), 200);
        const custom = await seen(RemoteArray.open(url, { signal: ctrl.signal }));
        const c2 = new AbortController();
        setTimeout(() => c2.abort(), 200);
        const plain = await seen(RemoteArray.open(url, { signal: c2.signal }));
        const signal = AbortSignal.timeout(200);
        const timed = await seen(RemoteArray.open(url, { signal }));
        const deadline = await seen(RemoteArray.open(url, { timeoutMs: 200 }));
        // A signal of another realm (an iframe's) is an AbortSignal all the same; a look-alike
        // that says it is one is refused.
        const frame = document.createElement("iframe");
        document.body.append(frame);
        const c3 = new frame.contentWindow.AbortController();
        setTimeout(() => c3.abort(), 200);
        const foreign = await seen(RemoteArray.open(url, { signal: c3.signal }));
        const fake = await seen(RemoteArray.open(url, { signal: { [Symbol.toStringTag]: "AbortSignal", aborted: false } }));
        // A real signal whose own `aborted` getter throws: never read (the module follows it
        // with a signal of its own), so the open goes on until its controller aborts it.
        const c4 = new AbortController();
        Object.defineProperty(c4.signal, "aborted", { get() { throw new Error("aborted getter"); } });
        const reason4 = { fourth: true };
        setTimeout(() => c4.abort(reason4), 200);
        const sabotaged = await seen(RemoteArray.open(url, { signal: c4.signal }));
        frame.remove();
        const d = (e) => ({ dom: e instanceof DOMException, name: e.name, code: e.code });
        return {
          custom: custom === reason,
          plain: { ...d(plain), same: plain === c2.signal.reason },
          timed: { ...d(timed), same: timed === signal.reason },
          deadline: d(deadline),
          foreign: { name: foreign.name, same: foreign === c3.signal.reason },
          fake: { name: fake.name, code: fake.code, message: fake.message },
          sabotaged: sabotaged === reason4,
        };
      }, `${silent.url}blosc2/nd3_u2.b2nd`);
      assert.deepEqual(out, {
        custom: true,
        plain: { dom: true, name: "AbortError", code: "CANCELLED", same: true },
        timed: { dom: true, name: "TimeoutError", code: "TIMEOUT", same: true },
        deadline: { dom: true, name: "TimeoutError", code: "TIMEOUT" },
        foreign: { name: "AbortError", same: true },
        fake: { name: "ChunkwiseError", code: "INVALID_ARGUMENT", message: "signal must be an AbortSignal" },
        sabotaged: true,
      });
    } finally {
      await silent.stop();
    }
  });

  test("float16 reads as Float16Array where the browser has one; complex and datetime as documented", async (t) => {
    const npy = (name) => {
      const buf = fs.readFileSync(path.join(fixtures, "dtypes", name));
      const hlen = buf.readUInt16LE(8);
      return Array.from(buf.subarray(10 + hlen));
    };
    const out = await page.evaluate(async ({ base }) => {
      const { RemoteArray } = window.cw;
      const res = {};
      for (const [name, path] of [["f2", "/f2"], ["c8", "/c8"], ["M8_ns", "/M8_ns"]]) {
        const arr = await RemoteArray.open(`${base}dtypes/v2.zarr`, { path });
        const r = await arr.read(null, {});
        res[name] = {
          ctor: r.data.constructor.name, complex: r.complex ?? null, unit: r.unit ?? null,
          bytes: Array.from(new Uint8Array(r.data.buffer, r.data.byteOffset, r.data.byteLength)),
        };
        arr.close();
      }
      return { hasF16: typeof Float16Array === "function", res };
    }, { base: pageServer.url.replace(/\/$/, "/") + "tests/fixtures/" });
    t.diagnostic(`Float16Array in Chromium: ${out.hasF16}`);
    assert.equal(out.res.f2.ctor, out.hasF16 ? "Float16Array" : "Float32Array");
    if (out.hasF16) assert.deepEqual(out.res.f2.bytes, npy("zarr2_f2.npy"), "float16 bits as written");
    assert.equal(out.res.c8.ctor, "Float32Array");
    assert.equal(out.res.c8.complex, true);
    assert.deepEqual(out.res.c8.bytes, npy("zarr2_c8.npy"));
    assert.equal(out.res.M8_ns.ctor, "BigInt64Array");
    assert.equal(out.res.M8_ns.unit, "ns");
    assert.deepEqual(out.res.M8_ns.bytes, npy("zarr2_M8_ns.npy"));
  });
});
