// The JS coalescing options of pkg/node, `coalesceGap` and `maxMergedBytes` (bytes): they change
// the requests of a read as documented, and only the requests (the values equal the array
// written). The fixture is python-blosc2's 2000 x 2000 float32 frame in 250 x 250 chunks,
// written at test time from a seeded array with its .npy (big-fixture.mjs), over 8 MiB so it
// is read by ranges; the requests are the range server's log.

import assert from "node:assert/strict";
import { createRequire } from "node:module";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { ensureBigFixture } from "./big-fixture.mjs";
import { readNpy, repo, startServer } from "./lib.mjs";

const require = createRequire(import.meta.url);
let server, chunkwise, big, npy;

before(async () => {
  chunkwise = require(path.join(repo, "pkg/node/chunkwise.js"));
  big = ensureBigFixture();
  assert.ok(big.ok, big.reason);
  npy = readNpy(big.npy);
  server = await startServer({ root: path.dirname(big.file) });
});
after(async () => { await server?.stop(); });

// Rows 0..250 of columns 0, 500, 1000, 1500: chunks 0, 2, 4 and 6 of chunk row 0, with one
// chunk's bytes between each two in the frame.
const SELECT = "0:250, ::500";

/** Opens with `options`, reads SELECT and returns the read's requests (after the open). */
async function readWith(options) {
  const arr = await chunkwise.RemoteArray.open(server.url + "big_f4.b2nd", { cache: "none", ...options });
  const since = server.log.length;
  const { data, shape } = await arr.read(SELECT, {});
  arr.close();
  assert.deepEqual(Array.from(shape), [250, 4]);
  for (let r = 0; r < 250; r += 7) {
    for (let c = 0; c < 4; c++) assert.equal(data[r * 4 + c], npy.at(r, c * 500), `value at ${r},${c * 500}`);
  }
  return server.log.slice(since).filter((r) => r.path === "/big_f4.b2nd" && r.method === "GET");
}

describe("coalescing options (pkg/node)", () => {
  test("coalesceGap 0 reads each chunk alone; a gap as large as the chunks' merges them", async () => {
    const alone = await readWith({ coalesceGap: 0 });
    assert.equal(alone.length, 4, `requests: ${alone.map((r) => r.range)}`);
    const merged = await readWith({ coalesceGap: 4 << 20 });
    assert.equal(merged.length, 1, `requests: ${merged.map((r) => r.range)}`);
    const bytes = (reqs) => reqs.reduce((s, r) => s + r.bytes, 0);
    assert.ok(bytes(merged) > bytes(alone), "the merged request also reads the gaps");
  });

  test("maxMergedBytes bounds a merged request", async () => {
    const merged = await readWith({ coalesceGap: 4 << 20 });
    const bound = merged[0].bytes - 1;
    const capped = await readWith({ coalesceGap: 4 << 20, maxMergedBytes: bound });
    assert.ok(capped.length > 1, `requests: ${capped.map((r) => r.range)}`);
    for (const r of capped) assert.ok(r.bytes <= bound, `${r.range}: ${r.bytes} > ${bound}`);
  });

  test("nonsense values are refused as INVALID_ARGUMENT naming the option", async () => {
    for (const [options, name] of [
      [{ coalesceGap: -1 }, "coalesceGap"], [{ coalesceGap: "64k" }, "coalesceGap"],
      [{ coalesceGap: 1.5 }, "coalesceGap"], [{ maxMergedBytes: 0 }, "maxMergedBytes"],
    ]) {
      await assert.rejects(chunkwise.RemoteArray.open(server.url + "big_f4.b2nd", options),
        (e) => e.code === "INVALID_ARGUMENT" && e.message.includes(name), JSON.stringify(options));
    }
  });
});
