// The worker's safety rules in workerd: the origin allow-list (an empty one refuses every
// source; redirects are followed only to allowed origins; user info is refused), the limits
// (413 naming the limit, before any upstream request), the deadline per upstream operation
// (504), upstream failures (502), credentials per origin from a secret (sent to that origin
// only, never taken from the client, never echoed) and CORS.

import assert from "node:assert/strict";
import http from "node:http";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { boxBytes, fixtures, get, manifest, readNpy, scratchDir, startServer, startWorker, until } from "./harness.mjs";

const blosc2 = manifest("blosc2");
const f = blosc2.cf_lz4_shuffle; // 30 x 25 <f4, chunks 16 x 12
const SECRET_P = "Bearer s3cr3t-for-P-0001";
const SECRET_Q = "key-for-Q-0002";

/**
 * An upstream in front of `target` (a chunkwise serve URL) that logs every request's headers:
 * /proxy/X forwards to target/X (Range kept), /away/X redirects to `away`/X, /in/X to
 * target/X, /to-q/X to `q`/proxy/X.
 */
function startRelay(target, routes) {
  const log = [];
  const server = http.createServer(async (req, res) => {
    log.push({ url: req.url, headers: { ...req.headers } });
    const [, kind, ...rest] = req.url.split("/");
    const file = rest.join("/");
    const redirect = routes()[kind];
    if (redirect) {
      res.writeHead(302, { location: redirect + file }).end();
      return;
    }
    if (kind !== "proxy") { res.writeHead(404).end(); return; }
    const up = await fetch(target + file, { headers: req.headers.range ? { range: req.headers.range } : {} });
    const headers = {};
    for (const k of ["content-range", "content-length", "etag", "last-modified", "accept-ranges", "content-type"]) {
      const v = up.headers.get(k);
      if (v) headers[k] = v;
    }
    res.writeHead(up.status, headers);
    res.end(Buffer.from(await up.arrayBuffer()));
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve({
    url: `http://127.0.0.1:${server.address().port}/`, log,
    stop: () => new Promise((r) => { server.closeAllConnections(); server.close(() => r()); }),
  })));
}

let up, away, silent, failing, relayP, relayQ, worker, closed, scratch;
const origin = (u) => u.replace(/\/$/, "");

before(async () => {
  scratch = scratchDir();
  up = await startServer({ root: fixtures });
  away = await startServer({ root: fixtures });
  silent = await startServer({ root: fixtures, faults: ["never-answer"] });
  failing = await startServer({ root: fixtures, faults: ["status=.b2nd:500"] });
  relayQ = await startRelay(up.url, () => ({}));
  relayP = await startRelay(up.url, () => ({ away: away.url, in: up.url, "to-q": `${relayQ.url}proxy/` }));
  const allowed = [up.url, relayP.url, relayQ.url, silent.url, failing.url].map(origin).join(",");
  worker = await startWorker(path.join(scratch.dir, "w"), {
    vars: {
      ALLOWED_ORIGINS: allowed, CACHE: "memory", CORS_ORIGINS: "http://app.example",
      MAX_SELECTION_BYTES: "4096", MAX_CHUNKS: "4", MAX_PNG_PIXELS: "100", UPSTREAM_TIMEOUT_MS: "1500",
    },
    secrets: { UPSTREAM_HEADERS: JSON.stringify({ [origin(relayP.url)]: { Authorization: SECRET_P }, [origin(relayQ.url)]: { "X-Api-Key": SECRET_Q } }) },
  });
  closed = await startWorker(path.join(scratch.dir, "closed"), { vars: { CACHE: "memory" } });
});
after(async () => {
  await worker?.stop();
  await closed?.stop();
  for (const s of [up, away, silent, failing, relayP, relayQ]) await s?.stop();
  scratch?.remove();
});

const file = `blosc2/${f.file}`;
const npy = () => readNpy(path.join(fixtures, "blosc2", f.npy));

/** Every text a client saw: bodies and header values. */
const seen = [];
async function ask(w, route, q, headers) {
  const r = await get(w, route, q, headers);
  seen.push(r.text(), ...[...r.headers].map(([k, v]) => `${k}: ${v}`));
  return r;
}

describe("allow-list", () => {
  test("an empty ALLOWED_ORIGINS refuses every source (403), fetching nothing", async () => {
    const mark = up.log.length;
    for (const route of ["/v1/info", "/v1/slice", "/v1/chunk", "/v1/preview.png"]) {
      const r = await ask(closed, route, { src: up.url + file, coords: "0,0", select: "0:2, 0:2" });
      assert.equal(r.status, 403, `${route}: ${r.text()}`);
      assert.equal(r.json().error.code, "ORIGIN_NOT_ALLOWED");
      assert.match(r.json().error.message, /ALLOWED_ORIGINS/);
    }
    assert.equal(up.log.length, mark, "the upstream saw no request");
  });

  test("an origin not in the list is refused (403) without a request to it", async () => {
    const r = await ask(worker, "/v1/slice", { src: away.url + file });
    assert.equal(r.status, 403, r.text());
    assert.equal(r.json().error.code, "ORIGIN_NOT_ALLOWED");
    assert.equal(away.log.length, 0);
  });

  test("src with user info is refused (400); so are other schemes (403)", async () => {
    const u = new URL(up.url + file);
    u.username = "alice";
    u.password = "pw";
    const r = await ask(worker, "/v1/slice", { src: u.href });
    assert.equal(r.status, 400, r.text());
    assert.equal(r.json().error.code, "INVALID_ARGUMENT");
    assert.match(r.json().error.message, /user info/);
    assert.ok(!r.text().includes("pw@"), "the password is not echoed");
    const ftp = await ask(worker, "/v1/slice", { src: "ftp://127.0.0.1/x.b2nd" });
    assert.equal(ftp.status, 403, ftp.text());
    const rel = await ask(worker, "/v1/slice", { src: "/blosc2/x.b2nd" });
    assert.equal(rel.status, 400, rel.text());
  });

  test("a redirect to a disallowed origin is refused (403): the other origin sees no request", async () => {
    const r = await ask(worker, "/v1/slice", { src: `${relayP.url}away/${file}`, select: "0:2, 0:2" });
    assert.equal(r.status, 403, r.text());
    assert.equal(r.json().error.code, "ORIGIN_NOT_ALLOWED");
    assert.match(r.json().error.message, /redirect/);
    assert.equal(away.log.length, 0, "the disallowed origin was never contacted");
  });

  test("a redirect to an allowed origin is followed: the values written", async () => {
    const r = await ask(worker, "/v1/slice", { src: `${relayP.url}in/${file}`, select: "3:9, 2:7", format: "bin" });
    assert.equal(r.status, 200, r.text());
    assert.deepEqual(r.body, boxBytes(npy(), [[3, 9], [2, 7]]));
  });
});

describe("limits: refused before any upstream request", () => {
  test("selection bytes over MAX_SELECTION_BYTES: 413 naming it", async () => {
    const big = blosc2.nd1_i8; // 1000 <i8: 8000 bytes
    const mark = up.log.length;
    const r = await ask(worker, "/v1/slice", { src: up.url + `blosc2/${big.file}`, select: "0:1000" });
    assert.equal(r.status, 413, r.text());
    const e = r.json().error;
    assert.deepEqual([e.code, e.limit, e.value, e.max], ["LIMIT_EXCEEDED", "MAX_SELECTION_BYTES", 8000, 4096]);
    // Just under: 512 values, 4096 bytes.
    const ok = await ask(worker, "/v1/slice", { src: up.url + `blosc2/${big.file}`, select: "0:512", format: "bin" });
    assert.equal(ok.status, 200, ok.text());
    assert.equal(ok.body.length, 4096);
    assert.ok(up.log.length > mark);
  });

  test("chunks touched over MAX_CHUNKS: 413 naming it", async () => {
    // 2 x 3 elements, one in each of 2 x 3 chunks.
    const r = await ask(worker, "/v1/slice", { src: up.url + file, select: "::16, ::12" });
    assert.equal(r.status, 413, r.text());
    const e = r.json().error;
    assert.deepEqual([e.limit, e.value, e.max], ["MAX_CHUNKS", 6, 4]);
    const ok = await ask(worker, "/v1/slice", { src: up.url + file, select: "::16, ::13", format: "json" });
    assert.equal(ok.status, 200, ok.text());
    assert.deepEqual(ok.json().values, [npy().at(0, 0), npy().at(0, 13), npy().at(16, 0), npy().at(16, 13)]);
  });

  test("a chunk over MAX_SELECTION_BYTES: 413", async () => {
    const h = "hdf5/gzip_shuffle.h5"; // /f32_fletcher: chunks 20 x 20 <f4, 1600 bytes
    const ok = await ask(worker, "/v1/chunk", { src: up.url + h, path: "/f32_fletcher", coords: "0,0" });
    assert.equal(ok.status, 200, ok.text());
    assert.equal(ok.body.length, 1600);
    const small = await startWorker(path.join(scratch.dir, "small"), { vars: { ALLOWED_ORIGINS: origin(up.url), CACHE: "memory", MAX_SELECTION_BYTES: "1000" } });
    try {
      const r = await ask(small, "/v1/chunk", { src: up.url + h, path: "/f32_fletcher", coords: "0,0" });
      assert.equal(r.status, 413, r.text());
      assert.deepEqual([r.json().error.limit, r.json().error.value, r.json().error.max], ["MAX_SELECTION_BYTES", 1600, 1000]);
    } finally {
      await small.stop();
    }
  });

  test("a preview over MAX_PNG_PIXELS: 413 naming it", async () => {
    const r = await ask(worker, "/v1/preview.png", { src: up.url + file, select: "0:20, 0:20" });
    assert.equal(r.status, 413, r.text());
    assert.deepEqual([r.json().error.limit, r.json().error.value, r.json().error.max], ["MAX_PNG_PIXELS", 400, 100]);
  });
});

describe("upstream failures", () => {
  test("an upstream that never answers: 504 TIMEOUT within UPSTREAM_TIMEOUT_MS", async () => {
    const t0 = Date.now();
    const r = await ask(worker, "/v1/slice", { src: silent.url + file, select: "0:2, 0:2" });
    const ms = Date.now() - t0;
    assert.equal(r.status, 504, r.text());
    assert.equal(r.json().error.code, "TIMEOUT");
    assert.ok(ms < 10000, `answered after ${ms} ms`);
  });

  test("a read behind reads of a never-answering upstream is not held by them", async () => {
    // Core operations run concurrently (src/contexts.mjs): five reads stuck until their 1.5 s
    // deadline do not delay a read of another upstream.
    const stuck = Array.from({ length: 5 }, (_, i) => ask(worker, "/v1/slice", { src: `${silent.url}zarr/v3.zarr`, path: `/p${i}`, select: "0" }));
    await new Promise((r) => setTimeout(r, 200));
    const t0 = Date.now();
    const behind = await ask(worker, "/v1/slice", { src: `${up.url}zarr/v2.zarr`, path: "/lz4", select: "0:2", format: "bin" });
    const ms = Date.now() - t0;
    assert.equal(behind.status, 200, behind.text());
    assert.deepEqual(behind.body, boxBytes(readNpy(path.join(fixtures, "zarr/v2_lz4.npy")), [[0, 2], [0, 11]]));
    assert.ok(ms < 1200, `answered after ${ms} ms, before the stuck reads' 1.5 s deadline`);
    const done = await Promise.all(stuck);
    for (const r of done) {
      assert.equal(r.status, 504, r.text());
      assert.equal(r.json().error.code, "TIMEOUT");
    }
  });

  test("CORE_TURNS=on: a request queued behind slow upstreams waits at most 2 x UPSTREAM_TIMEOUT_MS", async () => {
    // Five reads of a never-answering upstream would hold the isolate's core turn 1.5 s each
    // (7.5 s); those still queued after 3 s give up (504), and so would the request behind.
    const turns = await startWorker(path.join(scratch.dir, "turns"), {
      vars: { ALLOWED_ORIGINS: [up.url, silent.url].map(origin).join(","), CACHE: "memory", UPSTREAM_TIMEOUT_MS: "1500", CORE_TURNS: "on" },
    });
    try {
      const stuck = Array.from({ length: 5 }, (_, i) => ask(turns, "/v1/slice", { src: `${silent.url}zarr/v3.zarr`, path: `/p${i}`, select: "0" }));
      await new Promise((r) => setTimeout(r, 200));
      const t0 = Date.now();
      const behind = await ask(turns, "/v1/slice", { src: `${up.url}zarr/v2.zarr`, path: "/lz4", select: "0:2" });
      const ms = Date.now() - t0;
      assert.ok(ms < 4500, `answered after ${ms} ms`);
      if (behind.status !== 200) {
        assert.equal(behind.status, 504, behind.text());
        assert.equal(behind.json().error.code, "TIMEOUT");
      }
      const done = await Promise.all(stuck);
      assert.ok(done.every((r) => r.status === 504));
      assert.ok(done.some((r) => /waited 3000 ms for the isolate's reads/.test(r.json().error.message)), "queued ones gave up");
    } finally {
      await turns.stop();
    }
  });

  test("an upstream answering 500: 502 with a JSON body", async () => {
    const r = await ask(worker, "/v1/slice", { src: failing.url + file, select: "0:2, 0:2" });
    assert.equal(r.status, 502, r.text());
    assert.equal(r.json().error.code, "HTTP_STATUS");
    assert.match(r.json().error.message, /500/);
  });
});

describe("credentials per origin", () => {
  test("the secret's headers go to their origin only, never the client's, never echoed", async () => {
    const mark = relayP.log.length;
    const r = await ask(worker, "/v1/slice", { src: `${relayP.url}proxy/${file}`, select: "1:5, 1:5", format: "bin" },
      { Authorization: "Bearer from-the-client", "X-Api-Key": "client-key" });
    assert.equal(r.status, 200, r.text());
    assert.deepEqual(r.body, boxBytes(npy(), [[1, 5], [1, 5]]));
    const got = relayP.log.slice(mark);
    assert.ok(got.length > 0);
    for (const g of got) {
      assert.equal(g.headers.authorization, SECRET_P, "P gets its own secret, not the client's");
      assert.equal(g.headers["x-api-key"], undefined, "nor Q's, nor the client's");
    }
    // A redirect from P to Q: Q gets Q's header and not P's.
    const qMark = relayQ.log.length;
    const hop = await ask(worker, "/v1/slice", { src: `${relayP.url}to-q/blosc2/${blosc2.be_f8.file}`, select: "0:2, 0:2", format: "json" });
    assert.equal(hop.status, 200, hop.text());
    const atQ = relayQ.log.slice(qMark);
    assert.ok(atQ.length > 0);
    for (const g of atQ) {
      assert.equal(g.headers["x-api-key"], SECRET_Q);
      assert.equal(g.headers.authorization, undefined, "P's secret does not follow the redirect");
    }
    const stats = await ask(worker, "/v1/stats", {});
    assert.equal(stats.status, 200);
    for (const text of seen) {
      assert.ok(!text.includes(SECRET_P) && !text.includes("s3cr3t") && !text.includes(SECRET_Q), `a secret in ${text.slice(0, 200)}`);
    }
  });
});

describe("CORS", () => {
  test("an allowed Origin gets Access-Control-Allow-Origin; another does not", async () => {
    const ok = await ask(worker, "/v1/slice", { src: up.url + file, select: "0:2, 0:2" }, { Origin: "http://app.example" });
    assert.equal(ok.headers.get("access-control-allow-origin"), "http://app.example");
    assert.match(ok.headers.get("access-control-expose-headers"), /ETag/);
    assert.match(ok.headers.get("vary") ?? "", /Origin/);
    const no = await ask(worker, "/v1/slice", { src: up.url + file, select: "0:2, 0:2" }, { Origin: "http://evil.example" });
    assert.equal(no.headers.get("access-control-allow-origin"), null);
    const err = await ask(worker, "/v1/slice", { src: away.url + file }, { Origin: "http://app.example" });
    assert.equal(err.headers.get("access-control-allow-origin"), "http://app.example", "errors are readable cross-origin too");
  });

  // The answers are `public, immutable` for a year: a shared or browser cache that stored the
  // answer to a request without Origin, or from another origin, must not hand it to the
  // allowed origin's request (which then fails CORS). Fetch standard, "CORS protocol and
  // HTTP caches": Vary: Origin whenever Access-Control-Allow-Origin depends on Origin.
  test("with a list of CORS_ORIGINS, every answer says Vary: Origin (with or without an allowed Origin)", async () => {
    for (const headers of [{}, { Origin: "http://evil.example" }, { Origin: "http://app.example" }]) {
      const r = await ask(worker, "/v1/slice", { src: up.url + file, select: "0:2, 0:3" }, headers);
      assert.equal(r.status, 200, r.text());
      assert.match(r.headers.get("vary") ?? "", /Origin/i, `Origin ${headers.Origin ?? "absent"}`);
    }
  });

  test("preflight: 204 with methods for an allowed Origin, 403 for another", async () => {
    const pre = await fetch(`${worker.base}/v1/chunk`, { method: "OPTIONS", headers: { Origin: "http://app.example", "Access-Control-Request-Method": "GET" } });
    assert.equal(pre.status, 204);
    assert.equal(pre.headers.get("access-control-allow-origin"), "http://app.example");
    assert.match(pre.headers.get("access-control-allow-methods"), /GET/);
    const bad = await fetch(`${worker.base}/v1/chunk`, { method: "OPTIONS", headers: { Origin: "http://evil.example", "Access-Control-Request-Method": "GET" } });
    assert.equal(bad.status, 403);
    assert.equal(bad.headers.get("access-control-allow-origin"), null);
    await until(() => true);
  });
});
