// .b2z containers (python-blosc2 TreeStore / DictStore, tests/fixtures/gen_b2z.py) through the
// JS API against `chunkwise serve`, in Node (pkg/node) and in headless Chromium (pkg/web):
// the listing equals the generator's manifest, every array (external members and frames
// embedded in embed.b2e) reads the values of the .npy written next to the archive, and a small
// archive costs at most two requests for the open and every read of every member.

import assert from "node:assert/strict";
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { fixtures, launchChromium, readNpy, repo, startServer } from "./lib.mjs";

const require = createRequire(import.meta.url);
const dir = path.join(fixtures, "b2z");
let cw, server, pageServer, browser, page;
const gets = () => server.log.filter((r) => r.method === "GET").length;

before(async () => {
  cw = require(path.join(repo, "pkg/node/chunkwise.js"));
  [server, pageServer] = await Promise.all([
    startServer({ root: dir, quiet: true }),
    startServer({ quiet: true }),
  ]);
});
after(async () => {
  await browser?.close();
  await Promise.all([server?.stop(), pageServer?.stop()]);
});

/** The manifest's arrays with their expected values (.npy under `<name>/`). */
function arrays(name) {
  const m = JSON.parse(fs.readFileSync(path.join(dir, `${name}.json`), "utf8"));
  return m.nodes
    .filter((n) => n.kind === "array")
    .map((n) => {
      const p = n.path ?? n.key;
      const file = path.join(dir, name, `${p.replace(/^\//, "")}.npy`);
      return { path: p, shape: n.shape, dtype: n.dtype, npy: fs.existsSync(file) ? readNpy(file) : null, node: n };
    });
}

/** Element values of a typed array (or Array) as Numbers (bools 0/1, BigInts converted). */
const plain = (v) => Array.from(v, Number);

for (const name of ["tree", "dict"]) {
  describe(`${name}.b2z in Node`, () => {
    test("listing, values of every array, at most two requests for everything", async () => {
      const before = gets();
      const store = await cw.RemoteStore.open(`${server.url}${name}.b2z`);
      for (const a of arrays(name)) {
        const n = store.nodes.find((x) => x.path === a.path);
        assert.ok(n, `${a.path} listed`);
        assert.equal(n.kind, "array");
        assert.deepEqual(n.shape, a.shape, a.path);
        assert.equal(n.dtype, a.dtype, a.path);
        const arr = await store.get(a.path);
        const r = await arr.read();
        assert.deepEqual(r.shape, a.shape, a.path);
        if (a.npy) {
          assert.deepEqual(plain(r.data), a.npy.values, a.path);
        } else {
          const d = Array.from(r.data);
          a.node.first.forEach((f, i) => assert.equal(d[i], f, `${a.path}[${i}]`));
          assert.equal(d[d.length - 1], a.node.last, `${a.path} last`);
        }
        arr.free();
      }
      assert.ok(gets() - before <= 2, `requests: ${gets() - before}`);
      store.free();
    });
  });
}

const tableManifest = () => JSON.parse(fs.readFileSync(path.join(dir, "table.json"), "utf8"));
const tableNpy = (col) => readNpy(path.join(dir, "table", `${col}.npy`));
const TABLE_COLUMNS = ["id", "f64", "u16", "flag"];

describe("table.b2z (a CTable with deleted rows) in Node", () => {
  test("RemoteTable.open: live rows only, the columns asked, a vlstring column refused", async () => {
    const m = tableManifest();
    const table = await cw.RemoteTable.open(`${server.url}table.b2z`);
    assert.equal(table.nrows, m.nrows);
    assert.ok(m.physical_rows > m.nrows, "the fixture keeps deleted rows");
    const rows = await table.readRows(0, table.nrows, { columns: TABLE_COLUMNS });
    assert.deepEqual(Object.keys(rows), TABLE_COLUMNS);
    for (const c of TABLE_COLUMNS) assert.deepEqual(plain(rows[c]), tableNpy(c).values, c);
    const note = table.columns.find((c) => c.name === "note");
    assert.ok(note && note.error && note.error.includes(".b2b"), JSON.stringify(note));
    await assert.rejects(table.readRows(0, 3, { columns: ["note"] }), (e) => e.code === "UNSUPPORTED");
    // Options whose reading throws fail the call (errors.test.mjs has the other calls).
    const throwing = (name) => Object.defineProperty({}, name, { enumerable: true, get() { throw new Error(`getter ${name}`); } });
    const refused = (e) => e.code === "INVALID_ARGUMENT" && e.message.startsWith("options could not be read: ");
    await assert.rejects(table.readRows(0, 3, throwing("columns")), refused);
    await assert.rejects(table.readRows(0, 3, { columns: new Proxy([], { get() { throw new Error("trap"); } }) }), refused);
    await assert.rejects(cw.RemoteTable.open(`${server.url}table.b2z`, throwing("path")), refused);
    assert.deepEqual(plain((await table.readRows(0, table.nrows, { columns: ["id"] })).id), tableNpy("id").values);
  });
});

describe("tree.b2z in Chromium", () => {
  test("an embedded and an external leaf read as written", { timeout: 120000 }, async () => {
    browser = await launchChromium();
    page = await browser.newPage();
    page.on("pageerror", (e) => console.error("page error:", e.message));
    await page.goto(`${pageServer.url}tests/e2e/api-page.html`);
    await page.waitForFunction(() => document.body.dataset.ready === "1", null, { timeout: 60000 });
    const want = arrays("tree").filter((a) => a.npy);
    const got = await page.evaluate(async ({ url, paths }) => {
      const store = await window.cw.RemoteStore.open(url);
      const out = {};
      for (const p of paths) {
        const arr = await store.get(p);
        const r = await arr.read();
        out[p] = { shape: r.shape, data: Array.from(r.data, Number) };
      }
      return { out, kinds: store.nodes.map((n) => [n.path, n.kind]) };
    }, { url: `${server.url}tree.b2z`, paths: want.map((a) => a.path) });
    for (const a of want) {
      assert.deepEqual(got.out[a.path].shape, a.shape, a.path);
      assert.deepEqual(got.out[a.path].data, a.npy.values, a.path);
    }
    assert.ok(want.some((a) => a.node.embedded) && want.some((a) => !a.node.embedded),
      "the fixture has embedded and external leaves");
  });

  test("a CTable's live rows through RemoteTable in the page", { timeout: 60000 }, async () => {
    const m = tableManifest();
    const got = await page.evaluate(async ({ url, columns }) => {
      const store = await window.cw.RemoteStore.open(url);
      const table = await store.table("/");
      const rows = await table.readRows(0, table.nrows, { columns });
      const out = {};
      for (const c of columns) out[c] = Array.from(rows[c], Number);
      return { nrows: table.nrows, out };
    }, { url: `${server.url}table.b2z`, columns: TABLE_COLUMNS });
    assert.equal(got.nrows, m.nrows);
    for (const c of TABLE_COLUMNS) assert.deepEqual(got.out[c], tableNpy(c).values, c);
  });
});

describe("references of a .b2z whose attributes hold integers past 2^53 (Node)", () => {
  test("exportReferenceText keeps them: the reopen makes no request and gives them exactly", async () => {
    const url = `${server.url}bigint_attrs.b2z`;
    const store = await cw.RemoteStore.open(url);
    const root = store.nodes.find((n) => n.path === "/");
    assert.equal(root.attrs.big, 2n ** 63n - 1n);
    // The object form rounds them: refused at reopen (never read wrong).
    const lossy = await store.exportReference();
    await assert.rejects(cw.RemoteStore.open(lossy), (e) => e.code === "INVALID_ARGUMENT");
    const text = await store.exportReferenceText();
    assert.ok(text.includes(String(2n ** 63n - 1n)), "the text keeps every digit");
    const before = gets();
    const again = await cw.RemoteStore.open(text);
    const r = again.nodes.find((n) => n.path === "/");
    assert.equal(r.attrs.big, 2n ** 63n - 1n);
    assert.equal(r.attrs.int54, 2n ** 53n + 1n);
    assert.equal(r.attrs.neg, -(2n ** 62n) - 3n);
    assert.equal(gets(), before, "the reopen makes no request");
    const a = await again.get("/a");
    assert.deepEqual(Array.from((await a.read()).data), [0, 1, 2, 3, 4]);
  });
});

describe("attributes at the ends of int64 (Node)", () => {
  test("-2^63 and 2^63 - 1 come as BigInt like every integer past 2^53; -2^53 as a number", async () => {
    const want = JSON.parse(fs.readFileSync(path.join(dir, "names.json"), "utf8")).root_attrs;
    const store = await cw.RemoteStore.open(`${server.url}names.b2z`);
    const root = store.nodes.find((n) => n.path === "/");
    assert.equal(root.attrs.min, BigInt(want.min));
    assert.equal(root.attrs.max, BigInt(want.max));
    assert.equal(root.attrs.safe, Number(want.safe));
  });
});
