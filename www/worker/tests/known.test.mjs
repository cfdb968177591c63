// Known, not fixed: a contract question for the lead, kept as a failing test marked `todo`
// (reported by node --test as TODO, not failing the run). Remove `todo` when it is decided.

import assert from "node:assert/strict";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { boxBytes, fixtures, get, manifest, readNpy, scratchDir, startServer, startWorker } from "./harness.mjs";

const blosc2 = manifest("blosc2");
let server, worker, scratch;
before(async () => {
  scratch = scratchDir();
  server = await startServer({ root: fixtures });
  // cf_lz4_shuffle: <f4 (30, 25), 3,000 decoded bytes: exactly the limit.
  worker = await startWorker(scratch.dir, { vars: { ALLOWED_ORIGINS: server.url.replace(/\/$/, ""), CACHE: "memory", MAX_SELECTION_BYTES: "3000" } });
});
after(async () => {
  await worker?.stop();
  await server?.stop();
  scratch?.remove();
});

describe("KNOWN BUG: MAX_SELECTION_BYTES does not bound a JSON answer", () => {
  test("KNOWN BUG: format=json of a selection at MAX_SELECTION_BYTES answers a body several times the limit", { todo: "JSON text is ~5x the decoded bytes (measured: 9.0 MiB of <f4 gave 44.2 MiB of JSON, workerd RSS 80 -> 457 MB); at the default 64 MiB limit a JSON answer is ~300 MiB, over a Workers isolate's 128 MB" }, async () => {
    const q = { src: `${server.url}blosc2/${blosc2.cf_lz4_shuffle.file}`, select: "0:30, 0:25" };
    const bin = await get(worker, "/v1/slice", { ...q, format: "bin" });
    assert.equal(bin.status, 200, bin.text());
    assert.equal(bin.body.length, 3000);
    const json = await get(worker, "/v1/slice", { ...q, format: "json" });
    // Either refused naming the limit, or a body within it.
    if (json.status === 413) assert.equal(json.json().error.limit, "MAX_SELECTION_BYTES");
    else assert.ok(json.body.length <= 3000, `a ${json.body.length}-byte JSON answer under MAX_SELECTION_BYTES=3000`);
  });
});

describe("KNOWN BUG: concurrent first requests of distinct sources in one isolate", () => {
  let w;
  before(async () => {
    w = await startWorker(path.join(scratch.dir, "opens"), { vars: { ALLOWED_ORIGINS: server.url.replace(/\/$/, ""), CACHE: "memory", UPSTREAM_TIMEOUT_MS: "3000" } });
  });
  after(async () => { await w?.stop(); });

  // 400 sources (one file under 400 query strings: the worker opens each apart), 8 at a time.
  // Measured (16 at a time, 3,000 requests): 15 answered 500 by workerd ("Uncaught exception:
  // ... Promise will never complete"), the first at the 256th; in 2 of 4 runs the isolate
  // then stopped answering (no answer within 90 s). One at a time: 400 of 400 answered 200.
  test("KNOWN BUG: 400 first requests of distinct sources, 8 at a time: every one 200 with its values", { todo: "workerd answers some 500 (\"Promise will never complete\") and may stop answering" }, async () => {
    const f = blosc2.split_auto;
    const npy = readNpy(path.join(fixtures, "blosc2", f.npy));
    const statuses = {};
    let next = 0;
    await Promise.all(Array.from({ length: 8 }, async () => {
      while (next < 400) {
        const k = next++;
        const row = k % f.shape[0];
        const r = await get(w, "/v1/slice", { src: `${server.url}blosc2/${f.file}?n=${k}`, select: String(row), format: "bin" }).catch((e) => ({ status: String(e.name) }));
        statuses[r.status] = (statuses[r.status] ?? 0) + 1;
        if (r.status === 200) assert.deepEqual(r.body, boxBytes(npy, [[row, row + 1], [0, f.shape[1]]]));
      }
    }));
    assert.deepEqual(statuses, { 200: 400 });
  });
});
