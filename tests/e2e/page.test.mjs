// The preview page (www/) in headless Chromium, reading fixtures through `chunkwise serve`.
// The page comes from one server and the data from another (a different port, so every data
// request is cross-origin), whose request log gives the traffic the page must report.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import fs from "node:fs";
import path from "node:path";
import {
  fixtures, launchChromium, manifest, openInPage, readNpy, startServer, until, waitSettled,
} from "./lib.mjs";
import { ensureBigFixture } from "./big-fixture.mjs";

const blosc2 = manifest("blosc2");
const fixturePath = (name) => `/tests/fixtures/blosc2/${blosc2[name].file}`;
const npy = (name) => readNpy(path.join(fixtures, "blosc2", blosc2[name].npy));

let pageServer, dataServer, browser;

before(async () => {
  [pageServer, dataServer] = await Promise.all([startServer({ quiet: true }), startServer()]);
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await Promise.all([pageServer?.stop(), dataServer?.stop()]);
});

async function newPage() {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.on("pageerror", (e) => console.error("page error:", e.message));
  return page;
}

const preview = (page) => page.evaluate(() => window.chunkwisePreview);

/** The traffic log table as shown: one { step, requests, bytes, status } per row, and the total. */
const trafficTable = (page) => page.evaluate(() => ({
  rows: Array.from(document.querySelectorAll("#traffic tbody tr"), (tr) => ({
    step: tr.dataset.step,
    requests: Number(tr.cells[2].textContent.replace(/,/g, "")),
    bytes: Number(tr.cells[3].textContent.replace(/,/g, "")),
    roundTrips: Number(tr.cells[4].textContent.replace(/,/g, "")),
    status: tr.dataset.status || "ok",
  })),
  total: {
    requests: Number(document.getElementById("total-requests").textContent.replace(/,/g, "")),
    bytes: Number(document.getElementById("total-bytes").textContent.replace(/,/g, "")),
  },
}));

const meta = (page) => page.evaluate(() => Object.fromEntries(
  Array.from(document.querySelectorAll("#meta dd"), (dd) => [dd.dataset.key, dd.textContent])));

/** Canvas size, distinct colours and the RGB of some pixels, read back with getImageData. */
const canvasPixels = (page, points = []) => page.evaluate((pts) => {
  const c = document.getElementById("heatmap");
  const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
  const colours = new Set();
  for (let i = 0; i < d.length; i += 4) colours.add((d[i] << 16) | (d[i + 1] << 8) | d[i + 2]);
  const px = pts.map(([r, k]) => Array.from(d.slice((r * c.width + k) * 4, (r * c.width + k) * 4 + 3)));
  // the colour bar's end colours (bottom = minimum, top = maximum)
  const b = document.getElementById("colorbar");
  const bd = b.getContext("2d").getImageData(0, 0, b.width, b.height).data;
  const top = Array.from(bd.slice(0, 3));
  const bottom = Array.from(bd.slice((b.height - 1) * b.width * 4, (b.height - 1) * b.width * 4 + 3));
  return { width: c.width, height: c.height, distinct: colours.size, px, top, bottom };
}, points);

/** numpy.percentile(values, q) (method "linear") of the non-NaN values. */
function percentile(values, q) {
  const s = values.filter((v) => !Number.isNaN(v)).sort((a, b) => a - b);
  const x = (q / 100) * (s.length - 1);
  const lo = Math.floor(x), hi = Math.min(s.length - 1, lo + 1);
  return s[lo] + (s[hi] - s[lo]) * (x - lo);
}

function minMax(values) {
  let min = Infinity, max = -Infinity;
  for (const v of values) if (!Number.isNaN(v)) { min = Math.min(min, v); max = Math.max(max, v); }
  return { min, max };
}

describe("preview page", () => {
  test("2-D fixture: metadata, values, colours, hover and traffic equal the fixture and the server", async () => {
    const name = "delta_partial_i4";   // 37 x 23 int32, DELTA, blocks that do not divide chunks
    const f = blosc2[name];
    const expect = npy(name);
    const urlPath = fixturePath(name);
    const page = await newPage();
    const mark = dataServer.log.length;
    const settled = await openInPage(page, pageServer.url, dataServer.url + urlPath.slice(1));
    assert.equal(settled.state, "ready", settled.error);

    // metadata as shown
    const m = await meta(page);
    assert.equal(m.shape, `(${f.shape.join(", ")})`);
    assert.equal(m.dtype, f.dtype);
    assert.equal(m.chunks, `(${f.chunks.join(", ")})`);
    assert.equal(m.blocks, `(${f.blocks.join(", ")})`);
    assert.match(m.codecs, /ZSTD/);
    assert.match(m.source, new RegExp(`\\(${fs.statSync(path.join(fixtures, "blosc2", f.file)).size.toLocaleString("en-US")} B\\)`));

    // values read equal the array that was written
    const p = await preview(page);
    assert.deepEqual(p.shape, f.shape);
    assert.equal(p.dtype, f.dtype);
    assert.equal(p.selection, ":, :");
    assert.deepEqual(p.values, expect.values);
    assert.deepEqual(p.values.slice(0, f.shape[1]), expect.values.slice(0, f.shape[1]));   // first row
    const { min, max } = minMax(expect.values);
    assert.equal(p.min, min);
    assert.equal(p.max, max);
    // automatic limits: the 2nd and 98th percentiles of the values written (numpy's "linear")
    const [q2, q98] = [2, 98].map((q) => percentile(expect.values, q));
    assert.ok(Math.abs(p.vmin - q2) <= 1e-9 * Math.max(1, Math.abs(q2)), `vmin ${p.vmin} vs ${q2}`);
    assert.ok(Math.abs(p.vmax - q98) <= 1e-9 * Math.max(1, Math.abs(q98)), `vmax ${p.vmax} vs ${q98}`);
    const near = (text, v) => Math.abs(Number(text) - v) <= 1e-6 * Math.max(1, Math.abs(v));   // 7 digits shown
    assert.ok(near(await page.textContent("#cb-min"), q2), await page.textContent("#cb-min"));
    assert.ok(near(await page.textContent("#cb-max"), q98), await page.textContent("#cb-max"));

    // the heatmap: one pixel per element, many colours, minimum and maximum (beyond the
    // percentile limits, so clamped) at the colour bar's ends
    const argmin = expect.values.indexOf(min), argmax = expect.values.indexOf(max);
    const cols = f.shape[1];
    const img = await canvasPixels(page, [[Math.floor(argmin / cols), argmin % cols],
      [Math.floor(argmax / cols), argmax % cols]]);
    assert.equal(img.width, f.shape[1]);
    assert.equal(img.height, f.shape[0]);
    assert.ok(img.distinct > 20, `only ${img.distinct} colours`);
    assert.deepEqual(img.px[0], img.bottom);
    assert.deepEqual(img.px[1], img.top);

    // hovering shows the value under the cursor
    const box = await page.locator("#heatmap").boundingBox();
    const [hr, hk] = [11, 17];
    await page.mouse.move(box.x + (hk + 0.5) * box.width / f.shape[1], box.y + (hr + 0.5) * box.height / f.shape[0]);
    assert.equal(await page.textContent("#hover"), `[${hr}, ${hk}] = ${expect.at(hr, hk)}`);

    // traffic: the table shows what RemoteArray.traffic reported, which is what the server counted
    await until(() => dataServer.counted(urlPath, mark).requests >= p.traffic.open.requests, 3000, "server log");
    const served = dataServer.counted(urlPath, mark);
    assert.ok(p.traffic.open.requests > 0);
    assert.deepEqual(p.traffic.open, served);
    assert.deepEqual(p.traffic.read, { requests: 0, bytes: 0 });   // small file: held from open
    let t = await trafficTable(page);
    assert.deepEqual(t.rows.map((r) => r.step), ["open", "read :, :"]);
    assert.deepEqual({ requests: t.rows[0].requests, bytes: t.rows[0].bytes }, p.traffic.open);
    assert.deepEqual({ requests: t.rows[1].requests, bytes: t.rows[1].bytes }, p.traffic.read);
    assert.deepEqual(t.total, served);
    // one round trip at open: the head (the file is small enough to take whole) and, at the
    // same time, the frame's tail
    assert.equal(served.requests, 2);
    assert.deepEqual(p.roundTrips, { open: 1, read: 0, total: 1 });
    assert.deepEqual(t.rows.map((r) => r.roundTrips), [p.roundTrips.open, 0]);

    // the same slice again, shown transposed: no request, values the same
    await page.selectOption("#row-axis", "1");
    const again = await waitSettled(page, { selection: ":, :" });
    assert.equal(again.state, "ready", again.error);
    const p2 = await preview(page);
    assert.deepEqual(p2.image, { rows: f.shape[1], cols: f.shape[0] });
    assert.deepEqual(p2.values, expect.values);
    assert.deepEqual(p2.traffic.read, { requests: 0, bytes: 0 });
    t = await trafficTable(page);
    assert.equal(t.rows.length, 3);
    assert.deepEqual({ requests: t.rows[2].requests, bytes: t.rows[2].bytes }, { requests: 0, bytes: 0 });
    assert.deepEqual(t.total, served);
    assert.deepEqual(dataServer.counted(urlPath, mark), served);
    const img2 = await canvasPixels(page);
    assert.equal(img2.width, f.shape[0]);
    assert.equal(img2.height, f.shape[1]);
    await page.close();
  });

  test("3-D fixture: the slider and the axis choice re-read the right slice", async () => {
    const name = "nd3_u2";   // 10 x 12 x 14 uint16, edge chunks in every axis
    const f = blosc2[name];
    const e = npy(name);
    const [n0, n1, n2] = f.shape;
    const page = await newPage();
    const settled = await openInPage(page, pageServer.url, dataServer.url + fixturePath(name).slice(1));
    assert.equal(settled.state, "ready", settled.error);
    const slice0 = (i) => Array.from({ length: n1 * n2 }, (_, k) => e.at(i, Math.floor(k / n2), k % n2));
    const slice1 = (j) => Array.from({ length: n0 * n2 }, (_, k) => e.at(Math.floor(k / n2), j, k % n2));

    let p = await preview(page);
    assert.equal(p.selection, "0, :, :");
    assert.deepEqual(p.shape, [n1, n2]);
    assert.equal(p.dtype, f.dtype);
    assert.deepEqual(p.values, slice0(0));

    await page.locator("#axis-0-range").fill("7");
    let s = await waitSettled(page, { selection: "7, :, :" });
    assert.equal(s.state, "ready", s.error);
    p = await preview(page);
    assert.deepEqual(p.values, slice0(7));
    assert.deepEqual(p.traffic.read, { requests: 0, bytes: 0 });
    assert.equal(await page.inputValue("#axis-0-index"), "7");

    // the number box drives the same axis
    await page.locator("#axis-0-index").fill("9");
    await page.locator("#axis-0-index").dispatchEvent("change");
    s = await waitSettled(page, { selection: "9, :, :" });
    assert.equal(s.state, "ready", s.error);
    assert.deepEqual((await preview(page)).values, slice0(9));

    // rows = axis 0, columns = axis 2: axis 1 gets the slider
    await page.selectOption("#row-axis", "0");
    s = await waitSettled(page, { selection: ":, 0, :" });
    assert.equal(s.state, "ready", s.error);
    assert.equal(await page.locator("#axis-1-range").count(), 1);
    await page.locator("#axis-1-range").fill("5");
    s = await waitSettled(page, { selection: ":, 5, :" });
    assert.equal(s.state, "ready", s.error);
    p = await preview(page);
    assert.deepEqual(p.shape, [n0, n2]);
    assert.deepEqual(p.image, { rows: n0, cols: n2 });
    assert.deepEqual(p.values, slice1(5));
    const { min, max } = minMax(slice1(5));
    assert.equal(p.min, min);
    assert.equal(p.max, max);
    await page.close();
  });

  test("NaN values are drawn in their own colour", async () => {
    const name = "nans_f4";
    const f = blosc2[name];
    const e = npy(name);
    const page = await newPage();
    const settled = await openInPage(page, pageServer.url, dataServer.url + fixturePath(name).slice(1));
    assert.equal(settled.state, "ready", settled.error);
    const p = await preview(page);
    assert.equal(p.values.length, e.values.length);
    const nanCount = e.values.filter(Number.isNaN).length;
    assert.ok(nanCount > 0);
    assert.equal(p.nan, nanCount);
    assert.deepEqual(p.values.map(Number.isNaN), e.values.map(Number.isNaN));
    const i = e.values.findIndex(Number.isNaN);
    const img = await canvasPixels(page, [[Math.floor(i / f.shape[1]), i % f.shape[1]]]);
    assert.deepEqual(img.px[0], [255, 0, 170]);
    assert.equal(await page.isVisible("#cb-nan"), true);
    await page.close();
  });

  test("a missing file reports NOT_FOUND", async () => {
    const page = await newPage();
    const s = await openInPage(page, pageServer.url, `${dataServer.url}tests/fixtures/blosc2/no-such-file.b2nd`);
    assert.equal(s.state, "error");
    assert.match(s.error, /^NOT_FOUND: /);
    await page.close();
  });

  test("a large array is previewed with a step; its reads cost what the server counted", async (t) => {
    const big = ensureBigFixture();
    if (!big.ok) { t.skip(big.reason); return; }
    const e = readNpy(big.npy);
    const [n0, n1] = e.shape;
    const server = await startServer({ root: path.dirname(big.file) });
    try {
      const page = await newPage();
      const urlPath = `/${path.basename(big.file)}`;
      const s = await openInPage(page, pageServer.url, server.url + urlPath.slice(1));
      assert.equal(s.state, "ready", s.error);
      const p = await preview(page);
      const step = Math.ceil(Math.max(n0, n1) / 1024);
      assert.equal(p.selection, `::${step}, ::${step}`);
      assert.deepEqual(p.shape, [Math.ceil(n0 / step), Math.ceil(n1 / step)]);
      assert.match(await page.textContent("#step-note"), new RegExp(`step ${step} along axis 0`));
      const cols = p.shape[1];
      for (const i of [0, 1, 7, cols - 1, cols, 5 * cols + 3, p.values.length - 1]) {
        const r = Math.floor(i / cols), k = i % cols;
        assert.equal(p.values[i], e.at(r * step, k * step), `element [${r * step}, ${k * step}]`);
      }
      // open reads the header and the chunk index only; the read fetches chunks
      await until(() => server.counted(urlPath).requests >= p.traffic.total.requests, 3000, "server log");
      assert.deepEqual(p.traffic.total, server.counted(urlPath));
      assert.ok(p.traffic.open.requests >= 1 && p.traffic.open.bytes < 1 << 20, JSON.stringify(p.traffic.open));
      assert.ok(p.traffic.read.requests >= 1 && p.traffic.read.bytes > 8 << 20, JSON.stringify(p.traffic.read));
      const table = await trafficTable(page);
      assert.deepEqual({ requests: table.rows[1].requests, bytes: table.rows[1].bytes }, p.traffic.read);
      assert.deepEqual(table.total, p.traffic.total);
      // open: header and chunk index (the frame's tail) at once; the read's requests run
      // concurrently
      assert.equal(p.traffic.open.requests, 2, JSON.stringify(p.traffic.open));
      assert.equal(p.roundTrips.open, 1);
      assert.ok(p.roundTrips.read >= 1 && p.roundTrips.read <= p.traffic.read.requests, JSON.stringify(p.roundTrips));
      assert.equal(table.rows[1].roundTrips, p.roundTrips.read);
      await page.close();
    } finally {
      await server.stop();
    }
  });

  test("Cancel stops a read in flight on a slow server", async (t) => {
    const big = ensureBigFixture();
    if (!big.ok) { t.skip(big.reason); return; }
    // 1.5 s a request: the read is still in flight when the click lands, even on a loaded
    // machine (at 400 ms a read once ended between "reading" and the click)
    const slow = await startServer({ root: path.dirname(big.file), latencyMs: 1500 });
    try {
      const page = await newPage();
      const urlPath = `/${path.basename(big.file)}`;
      // the page opens its source on load, then reads
      await page.goto(`${pageServer.url}www/?url=${encodeURIComponent(slow.url + urlPath.slice(1))}`);
      await page.waitForFunction(() => document.body.dataset.state === "reading", null, { timeout: 20000 });
      // the step keeps the picture at most 1024 per side
      assert.equal(await page.textContent("#selection"), "::2, ::2");
      assert.equal(await page.isEnabled("#cancel"), true);
      const t0 = Date.now();
      await page.click("#cancel");
      const s = await waitSettled(page, { timeout: 5000 });
      assert.equal(s.state, "cancelled", s.error);
      assert.equal(s.code, "CANCELLED");
      assert.ok(Date.now() - t0 < 2000, "cancel took too long");
      const rows = (await trafficTable(page)).rows;
      assert.equal(rows.at(-1).status, "cancelled");
      assert.equal(rows[0].step, "open");
      assert.ok(rows[0].requests >= 2);   // header, then the chunk index: the file is not fetched whole
      assert.equal(await page.isEnabled("#cancel"), false);
      await page.close();
    } finally {
      await slow.stop();
    }
  });
});
