// Caterva2 sources: a real Caterva2 server (caterva2[server] 2026.9.2, scripts/caterva2-serve.py)
// on 127.0.0.1 publishing the python-blosc2 datasets of tests/fixtures/gen_caterva2.py, read
// through the JS API (`source: "caterva2"`) in Node (pkg/node) and headless Chromium (pkg/web):
// values equal the .npy the generator wrote, logins and refusals give typed errors, a warm
// reopen with the DISK cache makes no request. The server sits behind a forwarding proxy
// (scripts/latency_proxy.py, 1 ms) that counts every request it answers.

import assert from "node:assert/strict";
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { launchChromium, openInPage, repo, scratchDir, startCaterva2, startServer } from "./lib.mjs";

const require = createRequire(import.meta.url);
let c2, cw;
before(async () => {
  c2 = await startCaterva2({ latencyMs: 1 });
  cw = require(path.join(repo, "pkg/node/chunkwise.js"));
});
after(async () => { await c2?.stop(); });

const stored = () => c2.fixtures.datasets.filter((d) => d.kind === "stored");
const publicPaths = () => c2.fixtures.datasets.map((d) => d.path).filter((p) => p.startsWith("@public/"));

/** The bytes of a read's `data` (a typed array). */
const bytesOf = (data) => Buffer.from(data.buffer, data.byteOffset, data.byteLength);
/** The .npy data bytes of dataset `p` (little-endian, C order, as written). */
const npyBytes = (p) => bytesOf(c2.fixtures.expected(p).raw);

/** The `c2subauth` cookie value of a login made here (the token a client would hold). */
async function loginToken() {
  const r = await fetch(`${c2.urlbase}auth/jwt/login`, {
    method: "POST", body: new URLSearchParams({ username: c2.username, password: c2.password }),
  });
  assert.equal(r.status, 204);
  const cookie = r.headers.getSetCookie().find((c) => c.startsWith("c2subauth="));
  return cookie.split(";")[0].slice("c2subauth=".length);
}

describe("the Caterva2 test server", () => {
  test("serves the fixtures publicly and the private roots after the login", async () => {
    const base = c2.urlbase;
    const j = async (url, init) => {
      const r = await fetch(url, init);
      assert.equal(r.status, 200, url);
      return r.json();
    };
    const want = publicPaths().map((p) => p.slice("@public/".length)).sort();
    assert.deepEqual(await j(`${base}api/list/@public`), want);
    for (const d of c2.fixtures.datasets.filter((x) => x.path.startsWith("@public/"))) {
      const info = await j(`${base}api/info/${d.path}`);
      assert.deepEqual(info.shape, d.shape, d.path);
      if (d.kind === "stored") assert.deepEqual(info.chunks, d.chunks, d.path);
      else assert.equal(info.expression, d.expression, d.path);
    }
    assert.equal((await fetch(`${base}api/list/@personal`)).status, 401);
    const token = await loginToken();
    const headers = { cookie: `c2subauth=${token}` };
    assert.deepEqual(await j(`${base}api/list/@personal`, { headers }), ["secret.b2nd"]);
    assert.deepEqual(await j(`${base}api/list/@shared`, { headers }), ["team.b2nd"]);
    assert.ok(fs.existsSync(c2.statedir));
  });
});

describe("Caterva2 in Node (pkg/node)", () => {
  test("every public dataset reads the values written, one api/info to open", async () => {
    const paths = stored().map((d) => d.path).filter((p) => p.startsWith("@public/"));
    assert.ok(paths.length >= 8, paths.join());
    for (const p of paths) {
      const d = c2.fixtures.datasets.find((x) => x.path === p);
      await c2.resetCount();
      const arr = await cw.RemoteArray.open(c2.urlbase, { source: "caterva2", path: p });
      const opened = await c2.counted();
      assert.deepEqual(opened.log.map((r) => r.path), [`/api/info/${p}`], p);
      assert.deepEqual(Array.from(arr.shape), d.shape, p);
      assert.equal(arr.dtype, d.dtype, p);
      const got = await arr.read();
      assert.ok(bytesOf(got.data).equals(npyBytes(p)), `${p}: values differ from the .npy`);
      arr.close();
    }
  });

  test("a selection with edge chunks, and the lazy expression, equal the .npy", async () => {
    const p = "@public/ds/sub/i2_3d_blosclz_delta.b2nd";
    const want = c2.fixtures.expected(p);
    const arr = await cw.RemoteArray.open(c2.urlbase, { source: "caterva2", path: p });
    const got = await arr.read("7:9, 3:11, 10:13");
    assert.deepEqual(got.shape, [2, 8, 3]);
    const expect = [];
    for (let i = 7; i < 9; i++) for (let j = 3; j < 11; j++) for (let k = 10; k < 13; k++) expect.push(want.at(i, j, k));
    assert.deepEqual(Array.from(got.data), expect);
    arr.close();
    const lazy = "@public/ds/lazy_a2b.b2nd";
    const la = await cw.RemoteArray.open(c2.urlbase, { source: "caterva2", path: lazy });
    assert.deepEqual(Array.from(la.shape), [37, 53]);
    const all = await la.read();
    assert.ok(bytesOf(all.data).equals(npyBytes(lazy)), "lazy expression values");
    la.close();
  });

  test("logins: the user's own and shared datasets; refusals are typed and never show secrets", async () => {
    const credentials = { username: c2.username, password: c2.password };
    const mine = await cw.RemoteArray.open(c2.urlbase, { source: "caterva2", path: "@personal/secret.b2nd", credentials });
    assert.ok(bytesOf((await mine.read()).data).equals(npyBytes("@personal/secret.b2nd")));
    mine.close();
    const token = await loginToken();
    const shared = await cw.RemoteArray.open(c2.urlbase, { source: "caterva2", path: "@shared/team.b2nd", credentials: { token } });
    assert.ok(bytesOf((await shared.read()).data).equals(npyBytes("@shared/team.b2nd")));
    shared.close();

    await assert.rejects(cw.RemoteArray.open(c2.urlbase, { source: "caterva2", path: "@shared/team.b2nd" }), (e) => {
      assert.equal(e.code, "HTTP_STATUS", e.message);
      assert.match(e.message, /401/);
      return true;
    });
    const wrong = "not-the-password-x9";
    await assert.rejects(cw.RemoteArray.open(c2.urlbase, {
      source: "caterva2", path: "@shared/team.b2nd", credentials: { username: c2.username, password: wrong },
    }), (e) => {
      assert.equal(e.code, "INVALID_ARGUMENT", e.message);
      assert.match(e.message, /login/);
      assert.ok(!e.message.includes(wrong), e.message);
      return true;
    });
    await assert.rejects(cw.RemoteArray.open(c2.urlbase, {
      source: "caterva2", path: "@shared/team.b2nd", credentials: { username: c2.username, pasword: wrong },
    }), (e) => {
      assert.equal(e.code, "INVALID_ARGUMENT", e.message);
      assert.ok(!e.message.includes(wrong), e.message);
      return true;
    });
    await assert.rejects(cw.RemoteArray.open(c2.urlbase, { source: "caterva2", path: "@public/ds/nope.b2nd" }),
      (e) => e.code === "NOT_FOUND");
    await assert.rejects(cw.RemoteArray.open(c2.urlbase, { source: "hdf5", path: "@public/ds/f4_2d_b.b2nd" }),
      (e) => e.code === "INVALID_ARGUMENT" && /unknown source/.test(e.message));
  });

  test("DISK cache: a warm reopen in a new store instance makes no request", async () => {
    const { nodeFsStore } = await import(path.join(repo, "pkg/stores/node-fs.js"));
    const scratch = scratchDir("chunkwise-e2e-caterva2-disk-");
    try {
      const p = "@public/big/grid.b2nd";
      const opts = () => ({ source: "caterva2", path: p, cache: "disk", cacheStore: nodeFsStore(scratch.dir) });
      await c2.resetCount();
      const cold = await cw.RemoteArray.open(c2.urlbase, opts());
      const a = await cold.read("0:128, 0:1280");
      assert.equal(cold.cacheStatus, "created");
      cold.close();
      const coldCount = await c2.counted();
      assert.equal(coldCount.requests, 11, JSON.stringify(coldCount.log.map((r) => r.path)));
      await c2.resetCount();
      const warm = await cw.RemoteArray.open(c2.urlbase, opts());
      const b = await warm.read("0:128, 0:1280");
      assert.equal(warm.cacheStatus, "reused");
      assert.equal(warm.traffic.requests, 0);
      assert.equal((await c2.counted()).requests, 0, "the server saw no request");
      assert.ok(bytesOf(a.data).equals(bytesOf(b.data)));
      const want = c2.fixtures.expected(p);
      assert.equal(b.data[5 * 1280 + 1000], want.at(5, 1000));
      warm.close();
    } finally {
      scratch.remove();
    }
  });

  test("assumeImmutable false: a dataset rewritten on the server is read anew", async () => {
    const { nodeFsStore } = await import(path.join(repo, "pkg/stores/node-fs.js"));
    const scratch = scratchDir("chunkwise-e2e-caterva2-fresh-");
    const served = path.join(c2.publicDir, "ds/changing.b2nd");
    try {
      const v1 = "@public/ds/f4_2d_b.b2nd", v2 = "@public/ds/f8_2d_zstd_bitshuffle.b2nd";
      fs.copyFileSync(path.join(c2.publicDir, "ds/f4_2d_b.b2nd"), served);
      const opts = () => ({ source: "caterva2", path: "@public/ds/changing.b2nd", cache: "disk",
        cacheStore: nodeFsStore(scratch.dir), assumeImmutable: false });
      const a = await cw.RemoteArray.open(c2.urlbase, opts());
      assert.ok(bytesOf((await a.read()).data).equals(npyBytes(v1)));
      a.close();
      // Unchanged: one api/info, the chunks from the cache.
      await c2.resetCount();
      const same = await cw.RemoteArray.open(c2.urlbase, opts());
      assert.equal(same.cacheStatus, "reused");
      assert.ok(bytesOf((await same.read()).data).equals(npyBytes(v1)));
      assert.deepEqual((await c2.counted()).log.map((r) => r.path), ["/api/info/@public/ds/changing.b2nd"]);
      same.close();
      // Rewritten (another dtype and shape): invalidated, the new values.
      fs.copyFileSync(path.join(c2.publicDir, "ds/f8_2d_zstd_bitshuffle.b2nd"), served);
      const b = await cw.RemoteArray.open(c2.urlbase, opts());
      assert.equal(b.cacheStatus, "invalidated");
      assert.equal(b.dtype, "<f8");
      assert.ok(bytesOf((await b.read()).data).equals(npyBytes(v2)));
      b.close();
    } finally {
      fs.rmSync(served, { force: true });
      scratch.remove();
    }
  });

  test("RemoteStore lists the roots and datasets; get(path) reads one", async () => {
    const store = await cw.RemoteStore.open(c2.urlbase, { source: "caterva2" });
    const nodes = Array.from(store.nodes);
    const arrays = nodes.filter((n) => n.kind === "array").map((n) => n.path).sort();
    assert.deepEqual(arrays, publicPaths().map((p) => `/${p}`).sort());
    assert.ok(nodes.some((n) => n.path === "/@public" && n.kind === "group"));
    const arr = await store.get("/@public/ds/f4_1d_lz4_shuffle.b2nd");
    assert.ok(bytesOf((await arr.read()).data).equals(npyBytes("@public/ds/f4_1d_lz4_shuffle.b2nd")));
    arr.close();
    store.close();
    const logged = await cw.RemoteStore.open(c2.urlbase, {
      source: "caterva2", credentials: { username: c2.username, password: c2.password },
    });
    const all = Array.from(logged.nodes).map((n) => n.path);
    assert.ok(all.includes("/@personal/secret.b2nd") && all.includes("/@shared/team.b2nd"), all.join());
    logged.close();
  });
});

describe("Caterva2 in the Blosc2-only package (pkg/b2nd, cargo feature caterva2)", () => {
  test("a dataset, a store listing and a login read as in the full package", async () => {
    const b2nd = await import(path.join(repo, "pkg/b2nd/chunkwise.js"));
    b2nd.initSync({ module: fs.readFileSync(path.join(repo, "pkg/b2nd/chunkwise_bg.wasm")) });
    const p = "@public/ds/sub/i2_3d_blosclz_delta.b2nd";
    const arr = await b2nd.RemoteArray.open(c2.urlbase, { source: "caterva2", path: p });
    assert.ok(bytesOf((await arr.read()).data).equals(npyBytes(p)), `${p}: values differ from the .npy`);
    arr.close();
    const store = await b2nd.RemoteStore.open(c2.urlbase, {
      source: "caterva2", credentials: { username: c2.username, password: c2.password },
    });
    const secret = await store.get("/@personal/secret.b2nd");
    assert.ok(bytesOf((await secret.read()).data).equals(npyBytes("@personal/secret.b2nd")));
    secret.close();
    store.close();
  });
});

describe("Caterva2 in headless Chromium (pkg/web)", () => {
  let browser, pageServer, media;
  before(async () => {
    browser = await launchChromium();
    // A page of another origin (chunkwise serve of the repository, another port) ...
    pageServer = await startServer({ quiet: true });
    // ... and one of the server's own origin: Caterva2 serves <statedir>/media at /media.
    media = path.join(c2.statedir, "media");
    fs.cpSync(path.join(repo, "pkg/web"), path.join(media, "pkg/web"), { recursive: true });
    fs.writeFileSync(path.join(media, "c2page.html"), `<!doctype html><meta charset="utf-8">
<script type="module">
  import init, * as cw from "./pkg/web/chunkwise.js";
  await init();
  window.cw = cw;
  document.body.dataset.ready = "1";
</script><body></body>`);
  });
  after(async () => {
    await browser?.close();
    await pageServer?.stop();
  });

  async function pageAt(url) {
    const page = await browser.newPage();
    await page.goto(url);
    await page.waitForSelector("body[data-ready='1']", { state: "attached", timeout: 30000 });
    return page;
  }

  /** Runs in the page: opens `path` with `opts`, reads it whole; { data: number[] } or
   *  { code, message }. */
  const readIn = (page, args) => page.evaluate(async ({ base, p, opts }) => {
    try {
      const arr = await window.cw.RemoteArray.open(base, { source: "caterva2", path: p, ...opts });
      const r = await arr.read();
      const out = { data: Array.from(r.data, Number), requests: arr.traffic.requests, status: arr.cacheStatus };
      arr.close();
      return out;
    } catch (e) {
      return { code: e.code, message: e.message };
    }
  }, args);

  test("a page of another origin reads @public; credentials there are refused, typed", async () => {
    const page = await pageAt(`${pageServer.url}tests/e2e/api-page.html`);
    for (const p of ["@public/ds/f8_2d_zstd_bitshuffle.b2nd", "@public/ds/bool_2d_lz4_bitshuffle.b2nd",
      "@public/ds/lazy_a2b.b2nd"]) {
      const got = await readIn(page, { base: c2.urlbase, p, opts: {} });
      assert.ok(got.data, JSON.stringify(got).slice(0, 300));
      assert.deepEqual(got.data, c2.fixtures.expected(p).values, p);
    }
    const unauth = await readIn(page, { base: c2.urlbase, p: "@shared/team.b2nd", opts: {} });
    assert.equal(unauth.code, "HTTP_STATUS", JSON.stringify(unauth));
    const login = await readIn(page, { base: c2.urlbase, p: "@shared/team.b2nd",
      opts: { credentials: { username: c2.username, password: c2.password } } });
    assert.equal(login.code, "INVALID_ARGUMENT", JSON.stringify(login));
    assert.match(login.message, /origin/);
    assert.ok(!login.message.includes(c2.password));
    const token = await readIn(page, { base: c2.urlbase, p: "@shared/team.b2nd",
      opts: { credentials: { token: "abc.def.ghi" } } });
    assert.equal(token.code, "INVALID_ARGUMENT", JSON.stringify(token));
    assert.match(token.message, /Cookie/);
    assert.ok(!token.message.includes("abc.def.ghi"));
    await page.close();
  });

  test("a page of the server's origin logs in; DISK (IndexedDB) reopens with no request", async () => {
    const page = await pageAt(`${c2.urlbase}media/c2page.html`);
    const credentials = { username: c2.username, password: c2.password };
    for (const p of ["@personal/secret.b2nd", "@shared/team.b2nd"]) {
      const got = await readIn(page, { base: c2.urlbase, p, opts: { credentials } });
      assert.ok(got.data, JSON.stringify(got));
      assert.deepEqual(got.data, c2.fixtures.expected(p).values, p);
    }
    const p = "@public/ds/u8_2d_zlib_shuffle.b2nd";
    const disk = { cache: "disk", cacheName: "caterva2-e2e" };
    const cold = await readIn(page, { base: c2.urlbase, p, opts: disk });
    assert.equal(cold.status, "created", JSON.stringify(cold).slice(0, 300));
    assert.ok(cold.requests > 0);
    await c2.resetCount();
    const warm = await readIn(page, { base: c2.urlbase, p, opts: disk });
    assert.equal(warm.status, "reused");
    assert.equal(warm.requests, 0);
    assert.equal((await c2.counted()).requests, 0, "the server saw no request");
    assert.deepEqual(warm.data, c2.fixtures.expected(p).values);
    await page.close();
  });

  test("the viewer page browses a Caterva2 server's roots and previews a dataset", async () => {
    const page = await browser.newPage();
    const p = "@public/ds/f8_2d_zstd_bitshuffle.b2nd";
    const want = c2.fixtures.expected(p);
    // Given as a Caterva2 source, and detected from the URL base alone (its api/roots).
    for (const query of [{ source: "caterva2", path: `/${p}` }, { path: `/${p}` }]) {
      const settled = await openInPage(page, pageServer.url, c2.urlbase, { query });
      assert.equal(settled.state, "ready", JSON.stringify(settled));
      const got = await page.evaluate(() => ({
        preview: window.chunkwisePreview,
        tree: Array.from(document.querySelectorAll("#tree li[data-path]"), (li) => li.dataset.path),
        source: document.getElementById("source").value,
        address: location.search,
        steps: Array.from(document.querySelectorAll("#traffic tbody tr"), (tr) => tr.dataset.step),
      }));
      assert.equal(got.preview.path, `/${p}`);
      assert.deepEqual(got.preview.arrayShape, [37, 53]);
      assert.deepEqual(got.preview.values, want.values, "the preview's values are the .npy's");
      for (const d of publicPaths()) assert.ok(got.tree.includes(`/${d}`), `${d} is in the tree: ${got.tree}`);
      assert.ok(got.tree.includes("/@public/ds/sub"), got.tree.join());
      assert.equal(got.source, "caterva2");
      assert.match(got.address, /source=caterva2/);
      assert.equal(got.steps.includes("detect Caterva2 (api/roots)"), query.source === undefined, got.steps.join());
    }
    // Another dataset from the tree: a click opens and previews it.
    const q = "@public/ds/u8_2d_zlib_shuffle.b2nd";
    await page.click(`#tree li[data-path="/${q}"] > div button.node`);
    await page.waitForFunction((path) => window.chunkwisePreview?.path === path &&
      document.body.dataset.state === "ready", `/${q}`, { timeout: 30000 });
    const values = await page.evaluate(() => window.chunkwisePreview.values);
    assert.deepEqual(values, c2.fixtures.expected(q).values);
    await page.close();
  });
});
