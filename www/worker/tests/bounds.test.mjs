// Bounds of what one isolate holds or sends: a JSON answer is bounded before it is built
// (MAX_JSON_BYTES, and never more than MAX_SELECTION_BYTES), opened sources are bounded in
// count (MAX_OPEN_SOURCES, least recently used closed), and an error of the worker's own
// (no code) is 500 INTERNAL. Values come from the fixtures' .npy (python-blosc2).

import assert from "node:assert/strict";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { describe as describeError } from "../src/http.mjs";
import { boxBytes, boxJson, fixtures, get, manifest, readNpy, scratchDir, startServer, startWorker } from "./harness.mjs";

const blosc2 = manifest("blosc2");
const f = blosc2.cf_lz4_shuffle; // <f4 (30, 25), chunks 16 x 12: 3,000 decoded bytes
const npy = () => readNpy(path.join(fixtures, "blosc2", f.npy));
let server, scratch, sel, few;
before(async () => {
  scratch = scratchDir();
  server = await startServer({ root: fixtures });
  const allowed = server.url.replace(/\/$/, "");
  sel = await startWorker(path.join(scratch.dir, "sel"), { vars: { ALLOWED_ORIGINS: allowed, CACHE: "memory", MAX_SELECTION_BYTES: "3000" } });
  few = await startWorker(path.join(scratch.dir, "few"), { vars: { ALLOWED_ORIGINS: allowed, CACHE: "memory", MAX_JSON_BYTES: "2000", MAX_OPEN_SOURCES: "4" } });
});
after(async () => {
  await sel?.stop();
  await few?.stop();
  await server?.stop();
  scratch?.remove();
});

const src = (q = "") => `${server.url}blosc2/${f.file}${q}`;

describe("JSON answers are bounded before they are built", () => {
  test("format=json of a selection at MAX_SELECTION_BYTES: 413 naming MAX_SELECTION_BYTES (bin of it: 200)", async () => {
    const q = { src: src(), select: "0:30, 0:25" };
    const bin = await get(sel, "/v1/slice", { ...q, format: "bin" });
    assert.equal(bin.status, 200, bin.text());
    assert.deepEqual(bin.body, boxBytes(npy(), [[0, 30], [0, 25]]));
    const json = await get(sel, "/v1/slice", { ...q, format: "json" });
    assert.equal(json.status, 413, `a ${json.body.length}-byte JSON answer under MAX_SELECTION_BYTES=3000`);
    const e = json.json().error;
    assert.equal(e.code, "LIMIT_EXCEEDED");
    assert.equal(e.limit, "MAX_SELECTION_BYTES");
    assert.equal(e.max, 3000);
    assert.ok(e.value > 3000, JSON.stringify(e));
  });

  test("a JSON answer within MAX_JSON_BYTES: 200, its values, its body under the bound", async () => {
    const r = await get(few, "/v1/slice", { src: src(), select: "0:2, 0:25", format: "json" });
    assert.equal(r.status, 200, r.text());
    assert.ok(r.body.length <= 2000, `${r.body.length} bytes`);
    assert.deepEqual(r.json().values, boxJson(npy(), [[0, 2], [0, 25]]));
  });

  test("a JSON answer over MAX_JSON_BYTES (its binary within MAX_SELECTION_BYTES): 413 naming MAX_JSON_BYTES", async () => {
    const r = await get(few, "/v1/slice", { src: src(), select: "0:4, 0:25", format: "json" });
    assert.equal(r.status, 413, r.text());
    const e = r.json().error;
    assert.equal(e.limit, "MAX_JSON_BYTES");
    assert.equal(e.max, 2000);
    const bin = await get(few, "/v1/slice", { src: src(), select: "0:4, 0:25", format: "bin" });
    assert.equal(bin.status, 200, bin.text());
  });
});

describe("errors of the worker's own", () => {
  test("an error with no code is 500 INTERNAL; the core's codes keep their statuses", () => {
    const d = describeError(new TypeError("x is not a function"), null);
    assert.equal(d.status, 500);
    assert.equal(d.code, "INTERNAL");
    assert.equal(describeError(Object.assign(new Error("upstream said 500"), { code: "HTTP_STATUS" }), null).status, 502);
    assert.equal(describeError(Object.assign(new Error("bad"), { code: "MISCONFIGURED" }), null).status, 500);
  });
});

describe("opened sources are bounded by MAX_OPEN_SOURCES", () => {
  test("24 distinct sources, then the first ones again: at most 4 open, every value right", async () => {
    const data = npy();
    const one = async (k) => {
      const row = k % f.shape[0];
      const r = await get(few, "/v1/slice", { src: src(`?n=${k}`), select: String(row), format: "bin" });
      assert.equal(r.status, 200, r.text());
      assert.deepEqual(r.body, boxBytes(data, [[row, row + 1], [0, f.shape[1]]]));
    };
    for (let k = 0; k < 24; k++) await one(k);
    // 8 at a time: opens evicted while others are in use.
    let next = 0;
    await Promise.all(Array.from({ length: 8 }, async () => { while (next < 24) await one(next++); }));
    const s = (await get(few, "/v1/stats")).json();
    assert.ok(s.opens.open <= 4, JSON.stringify(s.opens));
    assert.ok(s.opens.closed >= 40, JSON.stringify(s.opens));
  });
});
