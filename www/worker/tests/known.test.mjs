// Known, not fixed: a contract question for the lead, kept as a failing test marked `todo`
// (reported by node --test as TODO, not failing the run). Remove `todo` when it is decided.

import assert from "node:assert/strict";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { boxBytes, fixtures, get, manifest, readNpy, scratchDir, startServer, startWorker } from "./harness.mjs";

const blosc2 = manifest("blosc2");
let server, scratch;
before(async () => {
  scratch = scratchDir();
  server = await startServer({ root: fixtures });
});
after(async () => {
  await server?.stop();
  scratch?.remove();
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
