// Two sources that differ only in their URL's query are two resources (RFC 3986 §3.4): an
// object store's `?versionId=`, `?generation=`, or a server choosing the object by a
// parameter. The worker must not answer one with the other's cached response or tag them
// alike. The upstream is a small Node range server on 127.0.0.1 that sends no validators
// (no ETag, no Last-Modified), serving for `?v=1` and `?v=2` two python-blosc2 fixtures of
// the same size, shape and dtype; the values come from their .npy.

import assert from "node:assert/strict";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { boxBytes, fixtures, get, readNpy, scratchDir, startWorker } from "./harness.mjs";

const fx = (name) => path.join(fixtures, "blosc2", name);
const files = { 1: "cf_blosclz_shuffle", 2: "cf_blosclz_bytedelta" };
let server, base, scratch, w;

before(async () => {
  const bytes = Object.fromEntries(Object.entries(files).map(([k, f]) => [k, fs.readFileSync(fx(`${f}.b2nd`))]));
  assert.equal(bytes[1].length, bytes[2].length, "the two fixtures have one size");
  server = http.createServer((req, res) => {
    const u = new URL(req.url, "http://127.0.0.1");
    const file = bytes[u.searchParams.get("v")];
    if (u.pathname !== "/a.b2nd" || !file) { res.writeHead(404); res.end(); return; }
    const m = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? "");
    if (!m) { res.writeHead(200, { "content-length": file.length, "accept-ranges": "bytes" }); res.end(req.method === "HEAD" ? undefined : file); return; }
    const s = Number(m[1]), e = Math.min(m[2] === "" ? file.length - 1 : Number(m[2]), file.length - 1);
    res.writeHead(206, { "content-range": `bytes ${s}-${e}/${file.length}`, "content-length": e - s + 1, "accept-ranges": "bytes" });
    res.end(req.method === "HEAD" ? undefined : file.subarray(s, e + 1));
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${server.address().port}`;
  scratch = scratchDir();
  w = await startWorker(path.join(scratch.dir, "w"), { vars: { ALLOWED_ORIGINS: base, CACHE: "memory" } });
});
after(async () => {
  await w?.stop();
  await new Promise((r) => (server ? server.close(r) : r()));
  scratch?.remove();
});

describe("sources differing only in their query", () => {
  test("each is answered with its own values and tag", async () => {
    const tags = {};
    for (const v of [1, 2]) {
      const want = boxBytes(readNpy(fx(`${files[v]}.npy`)), [[0, 30], [0, 25]]);
      for (const route of ["/v1/slice", "/v1/chunk"]) {
        const q = route === "/v1/slice" ? { select: "0:30, 0:25", format: "bin" } : { coords: "1,1" };
        const r = await get(w, route, { src: `${base}/a.b2nd?v=${v}`, ...q });
        assert.equal(r.status, 200, r.text());
        if (route === "/v1/slice") assert.deepEqual(r.body, want, `the values of ?v=${v} (${files[v]}.npy)`);
        tags[`${route} ${v}`] = r.headers.get("etag");
      }
    }
    assert.notEqual(tags["/v1/slice 1"], tags["/v1/slice 2"]);
    assert.notEqual(tags["/v1/chunk 1"], tags["/v1/chunk 2"]);
  });
});
