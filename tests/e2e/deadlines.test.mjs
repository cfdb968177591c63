// Deadlines and cancellation of the Node build (pkg/node) against `chunkwise serve` with test
// faults: `timeoutMs` of RemoteArray.open / RemoteArray.read / RemoteStore.open rejects with a
// TimeoutError DOMException (code TIMEOUT) in bounded time; an aborted AbortSignal rejects with
// its `reason` (the platform's AbortError DOMException, code CANCELLED, or the caller's own
// reason as is; AbortSignal.timeout's TimeoutError) and really aborts the HTTP request (the server logs the body as cut while it is still running: a read dropped without
// aborting its fetch would keep the connection open and never be cut); abort listeners are
// removed when each operation ends.
//
// `globalThis.fetch` is wrapped (the package looks it up on every request) to see each
// request's own AbortSignal from the client side too.

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { createRequire } from "node:module";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { ensureBigFixture } from "./big-fixture.mjs";
import { manifest, repo, startServer, until } from "./lib.mjs";

const require = createRequire(import.meta.url);
const blosc2 = manifest("blosc2");
const small = `tests/fixtures/blosc2/${blosc2.nd3_u2.file}`;
const h5 = "tests/fixtures/hdf5/contiguous.h5";

/** Requests the package made: { url, range, signal } each (signal: that request's own). */
const fetches = [];
const realFetch = globalThis.fetch;
let chunkwise, big;

before(() => {
  chunkwise = require(path.join(repo, "pkg/node/chunkwise.js"));
  globalThis.fetch = (input, init) => {
    fetches.push({ url: String(input), range: init?.headers?.get?.("Range") ?? null, signal: init?.signal });
    return realFetch(input, init);
  };
  big = ensureBigFixture();
  // The network reads below need the file over 8 MiB (smaller ones are held whole from open).
  assert.ok(big.ok, big.reason);
});
after(() => { globalThis.fetch = realFetch; });

/** Runs `f(server)` with a server over `root` with `faults`, stopped afterwards. */
async function withServer(opts, f) {
  const server = await startServer(opts);
  try { return await f(server); } finally { await server.stop(); }
}

/** The DOMException name an operation rejects with for each of our codes. */
const DOM_NAME = { CANCELLED: "AbortError", TIMEOUT: "TimeoutError" };

/** Awaits `p`, expecting an error of `code` (for CANCELLED and TIMEOUT a DOMException of the
 *  platform's name, AbortError or TimeoutError, carrying `code` too; else a ChunkwiseError);
 *  returns the milliseconds it took from `t0`. */
async function rejectsWith(p, code, t0 = performance.now()) {
  await assert.rejects(p, (e) => {
    if (DOM_NAME[code]) {
      assert.ok(e instanceof DOMException, `not a DOMException: ${e}`);
      assert.equal(e.name, DOM_NAME[code], String(e));
    } else {
      assert.equal(e.name, "ChunkwiseError", String(e));
    }
    assert.equal(e.code, code, e.message);
    return true;
  });
  return performance.now() - t0;
}

/** GET requests opening the big frame takes (header, then chunk index); past them, reads. */
const OPEN_GETS = 2;
const bigPath = () => `/${path.basename(big.file)}`;

/** Opens the big frame on a server whose GETs past the open's are faulty. */
async function openBigThenTrickle(server) {
  const arr = await chunkwise.RemoteArray.open(server.url + bigPath().slice(1), { timeoutMs: 10000 });
  // The fault spares exactly the open's requests: checked, or the reads below would test nothing.
  assert.equal(arr.traffic.requests, OPEN_GETS, "requests of the open");
  return arr;
}

describe("deadlines and cancellation (pkg/node)", () => {
  test("open with timeoutMs against a server that never answers: TIMEOUT, request aborted", async (t) => {
    await withServer({ faults: ["never-answer"] }, async (server) => {
      for (const [what, open] of [
        ["RemoteArray", () => chunkwise.RemoteArray.open(server.url + small, { timeoutMs: 500 })],
        ["RemoteStore", () => chunkwise.RemoteStore.open(server.url + h5, { timeoutMs: 500 })],
      ]) {
        const mark = fetches.length;
        const took = await rejectsWith(open(), "TIMEOUT");
        assert.ok(took >= 450 && took < 3000, `${what}: ${took} ms`);
        t.diagnostic(`${what}.open timeoutMs 500: TIMEOUT after ${Math.round(took)} ms`);
        const mine = fetches.slice(mark);
        assert.ok(mine.length >= 1, `${what}: no request was made`);
        assert.ok(mine.every((r) => r.signal?.aborted), `${what}: a request outlived the timeout`);
      }
    });
  });

  test("read with timeoutMs against a trickling server: TIMEOUT, and the server sees the body cut", async (t) => {
    await withServer({ root: path.dirname(big.file), faults: [`after=${OPEN_GETS}:trickle-ms=100`] }, async (server) => {
      const arr = await openBigThenTrickle(server);
      const mark = fetches.length;
      const took = await rejectsWith(arr.read("0:10, 0:10", { timeoutMs: 500 }), "TIMEOUT");
      assert.ok(took >= 450 && took < 3000, `${took} ms`);
      const read = fetches.slice(mark);
      assert.equal(read.length, 1, "one chunk request");
      // While the server still runs (stopping it cuts every body), it sees the client go.
      await until(() => server.cuts.some((c) => c.range === read[0].range), 3000, "the cut body");
      const cut = server.cuts.find((c) => c.range === read[0].range);
      assert.equal(cut.path, bigPath());
      assert.ok(cut.sent < cut.of && cut.of > 100, JSON.stringify(cut));
      assert.ok(read[0].signal.aborted, "the request was not aborted on timeout");
      t.diagnostic(`read timeoutMs 500: TIMEOUT after ${Math.round(took)} ms; server: ${JSON.stringify(cut)}`);
      arr.close();
    });
  });

  test("an AbortSignal during a trickling read: CANCELLED at once, and the HTTP request is aborted", async (t) => {
    await withServer({ root: path.dirname(big.file), faults: [`after=${OPEN_GETS}:trickle-ms=50`] }, async (server) => {
      const arr = await openBigThenTrickle(server);
      // Control: a fetch whose body is left unread (as a read dropped without aborting its
      // request left it) keeps its connection: the server does not see it cut...
      const control = new AbortController();
      const range = "bytes=100-100099";
      const resp = await realFetch(server.url + bigPath().slice(1), { headers: { Range: range }, signal: control.signal });
      assert.equal(resp.status, 206);
      await new Promise((r) => setTimeout(r, 1500));
      assert.equal(server.cuts.length, 0, "a body left unread was cut: the check below would prove nothing");
      // ... until the request is aborted.
      control.abort();
      await until(() => server.cuts.some((c) => c.range === range), 3000, "the control's cut body");

      const ctrl = new AbortController();
      const mark = fetches.length;
      const cutsBefore = server.cuts.length;
      const pending = arr.read("0:10, 0:10", { signal: ctrl.signal });
      // Abort once the server answered the chunk request and its body is trickling.
      await until(() => fetches.length > mark &&
        server.log.some((r) => r.range === fetches[mark].range && r.status === 206), 3000, "the chunk request");
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(server.cuts.length, cutsBefore, "cut before the abort");
      const t0 = performance.now();
      ctrl.abort();
      const took = await rejectsWith(pending, "CANCELLED", t0);
      // Prompt, not after the trickling body (minutes); 2 s leaves room for a loaded machine.
      assert.ok(took < 2000, `${took} ms from abort to rejection`);
      const read = fetches.slice(mark);
      assert.equal(read.length, 1, "one chunk request");
      await until(() => server.cuts.some((c) => c.range === read[0].range), 3000, "the cut body");
      const cut = server.cuts.find((c) => c.range === read[0].range);
      assert.ok(cut.sent < cut.of, JSON.stringify(cut));
      assert.ok(read[0].signal.aborted, "the request's own signal was not aborted");
      t.diagnostic(`abort: CANCELLED ${Math.round(took)} ms after abort(); server: ${JSON.stringify(cut)}`);
      arr.close();
    });
  });

  test("abort(reason) rejects with that reason as is; AbortSignal.timeout rejects with its TimeoutError; both abort the request", async (t) => {
    await withServer({ root: path.dirname(big.file), faults: [`after=${OPEN_GETS}:trickle-ms=50`] }, async (server) => {
      const arr = await openBigThenTrickle(server);
      // A custom reason, identity kept, nothing added to it.
      const reason = { why: "user closed the panel" };
      const ctrl = new AbortController();
      let mark = fetches.length;
      const pending = arr.read("0:10, 0:10", { signal: ctrl.signal });
      await until(() => fetches.length > mark, 3000, "the chunk request");
      ctrl.abort(reason);
      await assert.rejects(pending, (e) => {
        assert.equal(e, reason, `rejected with ${e}, not the reason`);
        assert.deepEqual(Object.keys(e), ["why"]);
        return true;
      });
      assert.ok(fetches[mark].signal.aborted, "the request was not aborted");
      await until(() => server.cuts.some((c) => c.range === fetches[mark].range), 3000, "the cut body");
      // A primitive reason too.
      const c2 = new AbortController();
      c2.abort("stop");
      await assert.rejects(arr.read("0:10, 0:10", { signal: c2.signal }), (e) => e === "stop");
      // AbortSignal.timeout(ms): its own TimeoutError, the same object as signal.reason.
      mark = fetches.length;
      const signal = AbortSignal.timeout(400);
      const t0 = performance.now();
      await assert.rejects(arr.read("0:10, 0:10", { signal }), (e) => {
        assert.equal(e, signal.reason);
        assert.ok(e instanceof DOMException && e.name === "TimeoutError", String(e));
        assert.equal(e.code, "TIMEOUT");
        return true;
      });
      const took = performance.now() - t0;
      assert.ok(took >= 350 && took < 3000, `${took} ms`);
      assert.ok(fetches[mark].signal.aborted, "the request was not aborted on AbortSignal.timeout");
      await until(() => server.cuts.some((c) => c.range === fetches[mark].range), 3000, "the cut body");
      t.diagnostic(`AbortSignal.timeout(400): TimeoutError after ${Math.round(took)} ms`);
      arr.close();
    });
    // The open, on a server that never answers.
    await withServer({ faults: ["never-answer"] }, async (server) => {
      const mark = fetches.length;
      const reason = new Error("mine");
      const ctrl = new AbortController();
      setTimeout(() => ctrl.abort(reason), 200);
      await assert.rejects(chunkwise.RemoteArray.open(server.url + small, { signal: ctrl.signal }), (e) => e === reason);
      await assert.rejects(chunkwise.RemoteStore.open(server.url + h5, { signal: AbortSignal.timeout(200) }),
        (e) => e instanceof DOMException && e.name === "TimeoutError");
      assert.ok(fetches.length > mark && fetches.slice(mark).every((r) => r.signal?.aborted));
    });
  });

  test("a finished read leaves its request alone; an already aborted signal makes no request", async () => {
    await withServer({}, async (server) => {
      const arr = await chunkwise.RemoteArray.open(server.url + small, {});
      const mark = fetches.length;
      const ctrl = new AbortController();
      await arr.read(":, :, :", { signal: ctrl.signal, timeoutMs: 5000 });
      ctrl.abort();
      assert.ok(fetches.slice(mark).every((r) => !r.signal.aborted));
      const before = fetches.length;
      await rejectsWith(arr.read(":, :, :", { signal: ctrl.signal }), "CANCELLED");
      await rejectsWith(chunkwise.RemoteArray.open(server.url + small, { signal: ctrl.signal }), "CANCELLED");
      assert.equal(fetches.length, before, "requests made under an aborted signal");
      arr.close();
    });
  });

  test("a Node script that read exits at once: no deadline timer keeps the process alive", async (t) => {
    await withServer({}, async (server) => {
      const script = `
        const { RemoteArray, RemoteStore } = require(${JSON.stringify(path.join(repo, "pkg/node/chunkwise.js"))});
        (async () => {
          const arr = await RemoteArray.open(process.argv[1], { timeoutMs: 30000 });
          const { shape } = await arr.read("0", { timeoutMs: 30000 });
          const store = await RemoteStore.open(process.argv[2], { timeoutMs: 30000 });
          console.log(JSON.stringify({ shape, nodes: store.nodes.length, t: performance.now() }));
        })();`;
      const t0 = performance.now();
      const out = await new Promise((resolve, reject) => {
        execFile(process.execPath, ["-e", script, server.url + small, server.url + h5],
          { encoding: "utf8", timeout: 90000 }, (e, stdout) => (e ? reject(e) : resolve(stdout)));
      });
      const took = performance.now() - t0;
      const got = JSON.parse(out.trim());
      assert.deepEqual(got.shape, blosc2.nd3_u2.shape.slice(1));
      assert.ok(got.nodes > 0);
      // The work itself takes well under a second; a pending 30 s or 60 s timer would show.
      assert.ok(took < 10000, `the process exited ${Math.round(took)} ms after start`);
      t.diagnostic(`the script exited ${Math.round(took)} ms after start`);
    });
  });

  test("abort listeners are removed when each open and read ends", async (t) => {
    await withServer({}, async (server) => withServer({ root: path.dirname(big.file) }, async (bigServer) => {
      // A real AbortSignal; the module adds and removes its listeners with
      // EventTarget.prototype's methods (src/io/signal.js, never the signal's own properties),
      // so those are counted, for this signal, while the test runs.
      const ctrl = new AbortController();
      const signal = ctrl.signal;
      const live = new Set();
      let added = 0;
      const proto = EventTarget.prototype;
      const { addEventListener: add, removeEventListener: remove } = proto;
      proto.addEventListener = function (type, fn, o) {
        if (this === signal && type === "abort") { added++; live.add(fn); }
        return Reflect.apply(add, this, [type, fn, o]);
      };
      proto.removeEventListener = function (type, fn, o) {
        if (this === signal && type === "abort") live.delete(fn);
        return Reflect.apply(remove, this, [type, fn, o]);
      };
      const restore = () => { proto.addEventListener = add; proto.removeEventListener = remove; };
      t.after(restore);

      const n = 10;
      for (let i = 0; i < n; i++) {
        const arr = await chunkwise.RemoteArray.open(server.url + small, { signal });
        await arr.read(":, :, :", { signal });
        await assert.rejects(arr.read("99, :, :", { signal }), (e) => e.code === "INVALID_SELECTION");
        arr.close();
        const store = await chunkwise.RemoteStore.open(server.url + h5, { signal });
        store.close();
      }
      const bigArr = await chunkwise.RemoteArray.open(bigServer.url + bigPath().slice(1), { signal });
      const chunks = Array.from(bigArr.chunks);
      const perColumn = Math.ceil(bigArr.shape[0] / chunks[0]);
      const opened = bigArr.traffic.requests;
      for (let i = 0; i < n; i++) {
        // A new chunk each time, over the network (not from a copy held since open).
        const at = [(i % perColumn) * chunks[0], Math.floor(i / perColumn) * chunks[1]];
        await bigArr.read(`${at[0]}:${at[0] + 1}, ${at[1]}:${at[1] + 1}`, { signal, timeoutMs: 10000 });
      }
      assert.equal(bigArr.traffic.requests, opened + n, "one request per read");
      bigArr.close();
      // Operations that time out drop their listener too.
      await withServer({ faults: ["never-answer"] }, async (silent) => {
        for (let i = 0; i < 3; i++) {
          await rejectsWith(chunkwise.RemoteArray.open(silent.url + small, { signal, timeoutMs: 200 }), "TIMEOUT");
          await rejectsWith(chunkwise.RemoteStore.open(silent.url + h5, { signal, timeoutMs: 200 }), "TIMEOUT");
        }
      });
      restore();
      assert.ok(added >= 4 * n + n + 6, `${added} listeners added: the count sees nothing`);
      assert.equal(live.size, 0, `${live.size} of ${added} abort listeners left on the signal`);
      t.diagnostic(`${added} abort listeners added, ${live.size} left`);
    }));
  });
});
