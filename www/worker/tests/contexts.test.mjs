// Concurrent core operations in one isolate (src/contexts.mjs). 16 concurrent reads of
// different selections of one Zarr array, 9 distinct chunks: the 7 requests whose chunk another
// request is already reading join that read inside the core (one upstream fetch per chunk) and
// issue no fetch of their own. Their answer is settled in the reading request's I/O context.
// Without the compatibility flag handle_cross_request_promise_resolution workerd never runs
// the joiner's continuation (500 "Promise will never complete"); with it, every request is
// answered with its values, no turn-taking needed.

import assert from "node:assert/strict";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { boxBytes, fixtures, get, readNpy, scratchDir, startServer, startWorker } from "./harness.mjs";

let slow, scratch;
before(async () => {
  scratch = scratchDir();
  slow = await startServer({ root: fixtures, latencyMs: 300 });
});
after(async () => {
  await slow?.stop();
  scratch?.remove();
});

let n = 0;
const workerWith = (flags, vars = {}) => startWorker(path.join(scratch.dir, `w${n++}`), {
  vars: { ALLOWED_ORIGINS: slow.url.replace(/\/$/, ""), CACHE: "memory", TRACE_CONTEXTS: "on", ...vars },
  flags,
});

/** 16 concurrent slices of zarr/v3.zarr /blosc (the last 7 repeat a chunk, with another ETag). */
async function sixteen(w) {
  const src = `${slow.url}zarr/v3.zarr`;
  assert.equal((await get(w, "/v1/info", { src, path: "/blosc" })).status, 200);
  const boxes = [];
  for (let i = 0; i < 3; i++) for (let j = 0; j < 3; j++) boxes.push([[i * 5, Math.min(13, i * 5 + 5)], [j * 4, Math.min(11, j * 4 + 4)]]);
  const asked = Array.from({ length: 16 }, (_, k) => boxes[k % boxes.length]).map((b, k) => ({ b, select: `${b[0][0]}:${b[0][1]}, ${b[1][0]}:${b[1][1]}${k >= boxes.length ? "," : ""}` }));
  const answers = await Promise.all(asked.map(({ select }) => get(w, "/v1/slice", { src, path: "/blosc", select, format: "bin" })));
  return { asked, answers, npy: readNpy(path.join(fixtures, "zarr/v3_blosc.npy")) };
}

/** The selections under whose request (TRACE_CONTEXTS) the installed fetch was called. */
const fetchedUnder = (output, array = "blosc") => new Set([...output.matchAll(new RegExp(`trace fetch under \\[#\\d+ /v1/slice ([^\\]]*)\\] /zarr/v3\\.zarr/${array}/c/`, "g"))].map((m) => m[1]));

describe("concurrent core operations in one isolate, no turns", () => {
  test("16 concurrent reads of different chunks: every one answered with its values", async () => {
    const w = await workerWith();
    try {
      const { asked, answers, npy } = await sixteen(w);
      answers.forEach((a, k) => {
        assert.equal(a.status, 200, `${asked[k].select}: ${a.text().slice(0, 300)}`);
        assert.deepEqual(a.body, boxBytes(npy, asked[k].b), asked[k].select);
      });
      // The core still joined the repeated chunks: 9 requests fetched, 7 joined.
      assert.equal(fetchedUnder(w.output()).size, 9, w.output());
    } finally {
      await w.stop();
    }
  });

  test("a read joined to a request whose client went away: still answered with its values", async () => {
    const w = await workerWith(undefined, { UPSTREAM_TIMEOUT_MS: "3000" });
    try {
      const src = `${slow.url}zarr/v3.zarr`;
      assert.equal((await get(w, "/v1/info", { src, path: "/raw" })).status, 200);
      // A's client aborts while A's chunk fetch (300 ms upstream latency) is in flight; B
      // joined that fetch inside the core.
      const gone = new AbortController();
      const a = fetch(`${w.base}/v1/slice?${new URLSearchParams({ src, path: "/raw", select: "0:5, 0:4", format: "bin" })}`, { signal: gone.signal }).catch((e) => e);
      await new Promise((r) => setTimeout(r, 60));
      const t0 = Date.now();
      const b = get(w, "/v1/slice", { src, path: "/raw", select: "0:5, 0:4,", format: "bin" });
      await new Promise((r) => setTimeout(r, 60));
      gone.abort();
      await a;
      const got = await b;
      const ms = Date.now() - t0;
      console.log(`joiner of an aborted request: ${got.status} after ${ms} ms`);
      assert.deepEqual([...fetchedUnder(w.output(), "raw")], ["0:5, 0:4"], "B joined A's chunk fetch");
      assert.equal(got.status, 200, got.text());
      assert.deepEqual(got.body, boxBytes(readNpy(path.join(fixtures, "zarr/v3_raw.npy")), [[0, 5], [0, 4]]));
    } finally {
      await w.stop();
    }
  });

  test("without handle_cross_request_promise_resolution: exactly the joiners of another request's read fail", async () => {
    const w = await workerWith(["nodejs_als"]);
    try {
      const { asked, answers, npy } = await sixteen(w);
      await new Promise((r) => setTimeout(r, 300)); // the log lines of the last answers
      const fetched = fetchedUnder(w.output());
      const joiners = asked.filter(({ select }) => !fetched.has(select)).length;
      assert.ok(joiners > 0, "some request joined another's read");
      answers.forEach((a, k) => {
        if (fetched.has(asked[k].select)) {
          assert.equal(a.status, 200, asked[k].select);
          assert.deepEqual(a.body, boxBytes(npy, asked[k].b), asked[k].select);
        } else {
          assert.equal(a.status, 500, `${asked[k].select} joined another request's read`);
        }
      });
      assert.equal((w.output().match(/Promise will never complete/g) ?? []).length, joiners);
    } finally {
      await w.stop();
    }
  });
});
