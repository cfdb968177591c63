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
const workerWith = (flags) => startWorker(path.join(scratch.dir, `w${n++}`), {
  vars: { ALLOWED_ORIGINS: slow.url.replace(/\/$/, ""), CACHE: "memory", TRACE_CONTEXTS: "on" },
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
const fetchedUnder = (output) => new Set([...output.matchAll(/trace fetch under \[#\d+ \/v1\/slice ([^\]]*)\] \/zarr\/v3\.zarr\/blosc\/c\//g)].map((m) => m[1]));

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
