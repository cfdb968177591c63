// The chunk-cache simulator page (www/chunk-trace.html) in headless Chromium, served by
// `chunkwise serve`. Expected totals are the raw chunk reads real HDF5 (1.10.8 and 2.0.0) made in
// the chunk-cache experiment's round-robin case: with 17 slots and 16,384 bytes each of the four
// stored chunks is read once (1,335 + 1,334 + 1,325 + 1,334 = 5,328 bytes); with one slot every
// one of the 32 selections reads its chunk again (32 reads, 8 x 5,328 = 42,624 bytes).

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { launchChromium, startServer } from "./lib.mjs";

let server, browser;

before(async () => {
  server = await startServer({ quiet: true });
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

async function openPage() {
  const page = await browser.newPage({ viewport: { width: 1360, height: 900 } });
  const pageErrors = [];
  page.on("pageerror", (e) => pageErrors.push(e.message));
  await page.goto(`${server.url}www/chunk-trace.html`);
  await page.waitForFunction(() => ["ready", "error"].includes(document.body.dataset.state),
    null, { timeout: 30000 });
  return { page, pageErrors };
}

/** Pixels of the plot that are not white, and those in each series colour. */
const plotPixels = (page) => page.evaluate(() => {
  const c = document.getElementById("plot");
  const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
  let nonWhite = 0, blue = 0, orange = 0;
  for (let i = 0; i < d.length; i += 4) {
    const [r, g, b] = [d[i], d[i + 1], d[i + 2]];
    if (r < 250 || g < 250 || b < 250) nonWhite++;
    if (Math.abs(r - 0x3b) < 30 && Math.abs(g - 0x52) < 30 && Math.abs(b - 0x8b) < 30) blue++;
    if (Math.abs(r - 0xd9) < 30 && Math.abs(g - 0x73) < 30 && Math.abs(b - 0x0d) < 30) orange++;
  }
  return { width: c.width, height: c.height, nonWhite, blue, orange };
});

const totalsTable = (page) => page.evaluate(() =>
  Array.from(document.querySelectorAll("#totals tbody tr"), (tr) =>
    Array.from(tr.cells, (td) => td.textContent.trim())));

describe("chunk-cache simulator page", () => {
  test("round-robin experiment with the default settings gives HDF5's reads and bytes", async () => {
    const { page, pageErrors } = await openPage();
    try {
      assert.equal(await page.evaluate(() => document.body.dataset.state), "ready",
        await page.textContent("#error"));
      // Defaults: the round-robin case, cache A 17 slots / 16,384 bytes, cache B 1 slot.
      assert.equal(await page.inputValue("#case"), "round-robin");
      await page.click("#run");
      await page.waitForFunction(() => document.body.dataset.state === "ready");
      const view = await page.evaluate(() => window.chunkTraceView);
      assert.equal(view.case, "round-robin");
      assert.equal(view.selections, 32);
      assert.deepEqual(view.settings.map((s) => [s.nslots, s.nbytes, s.w0]), [[17, 16384, 0], [1, 16384, 0]]);
      assert.deepEqual(view.totals.map((t) => t.reads), [4, 32]);
      assert.deepEqual(view.totals.map((t) => t.raw_bytes), [5328, 42624]);
      assert.deepEqual(view.totals.map((t) => t.hits), [28, 0]);
      // Cumulative reads: A reads the four chunks in the first four selections, B every time.
      assert.deepEqual(view.cumulative[0].slice(0, 6), [1, 2, 3, 4, 4, 4]);
      assert.equal(view.cumulative[0][31], 4);
      assert.deepEqual(view.cumulative[1].slice(0, 3), [1, 2, 3]);
      assert.equal(view.cumulative[1][31], 32);
      // The table shows the same totals.
      const rows = await totalsTable(page);
      assert.deepEqual(rows.map((r) => r.slice(1, 5)),
        [["4", "5,328", "28", "0"], ["32", "42,624", "0", "31"]]);
      // 32 reads of 4,096-byte chunks for 32 selected 4-byte values: 1,024 decoded per selected.
      assert.equal(rows[1][5], "1024");
      // The advisor: four chunks reused, all four needed at once.
      assert.equal(view.advice[1].reuse_set.length, 4);
      assert.equal(view.advice[1].min_nslots, 4);
      assert.match(await page.textContent("#advice"), /4 chunks: \(0,0\) \(0,1\) \(1,0\) \(1,1\)/);
      // The plot is drawn: axes, text and both series.
      const px = await plotPixels(page);
      assert.ok(px.width >= 600 && px.height >= 300, JSON.stringify(px));
      assert.ok(px.nonWhite > 2000, `only ${px.nonWhite} non-white pixels`);
      assert.ok(px.blue > 200, `series A: ${px.blue} pixels`);
      assert.ok(px.orange > 200, `series B: ${px.orange} pixels`);
      if (process.env.CHUNK_TRACE_SCREENSHOT) {
        await page.screenshot({ path: process.env.CHUNK_TRACE_SCREENSHOT, fullPage: true });
      }
      assert.deepEqual(pageErrors, []);
    } finally {
      await page.close();
    }
  });

  test("grouped case and changed settings re-run; a random trace runs", async () => {
    const { page, pageErrors } = await openPage();
    try {
      await page.selectOption("#case", "grouped");
      await page.fill("#a-nslots", "1");
      await page.fill("#a-nbytes", "4096");
      await page.fill("#b-nslots", "17");
      await page.fill("#b-nbytes", "2048");
      await page.click("#run");
      await page.waitForFunction(() => window.chunkTraceView?.case === "grouped");
      const view = await page.evaluate(() => window.chunkTraceView);
      // Experiment rows 3 and 5: grouped with 1 slot / 4,096 bytes reads 4 times; with 2,048
      // bytes a 4,096-byte chunk never fits, so all 32 selections read.
      assert.deepEqual(view.totals.map((t) => t.reads), [4, 32]);
      assert.deepEqual(view.totals.map((t) => t.raw_bytes), [5328, 42624]);

      await page.selectOption("#case", "random");
      await page.fill("#r-shape", "500, 400");
      await page.fill("#r-chunks", "50, 40");
      await page.fill("#r-len", "120");
      await page.fill("#r-seed", "5");
      await page.click("#run");
      await page.waitForFunction(() => window.chunkTraceView?.case === "random");
      const r = await page.evaluate(() => window.chunkTraceView);
      assert.equal(r.selections, 120);
      // Chunks are stored at their decoded size (50 x 40 x 4 bytes) when no size is given.
      for (const t of r.totals) assert.equal(t.raw_bytes, t.reads * 8000);
      assert.equal(r.cumulative[0].length, 120);
      assert.deepEqual(pageErrors, []);
    } finally {
      await page.close();
    }
  });

  test("bad JSON and a bad trace show an error instead of throwing", async () => {
    const { page, pageErrors } = await openPage();
    try {
      await page.selectOption("#case", "custom");
      await page.fill("#trace-json", '{"selections": [ {"points": [[1, 2]] ');
      await page.click("#run");
      await page.waitForFunction(() => document.body.dataset.state === "error");
      assert.equal(await page.isVisible("#error"), true);
      assert.match(await page.textContent("#error"), /^INVALID_INPUT: trace is not valid JSON/);
      assert.equal(await page.evaluate(() => window.chunkTraceView), null);

      // Valid JSON, but a point outside the 64 x 64 array: the simulator refuses it.
      await page.fill("#trace-json", '{"selections": [{"points": [[64, 0]]}]}');
      await page.click("#run");
      await page.waitForFunction(() => document.body.dataset.state === "error" &&
        document.getElementById("error").dataset.code === "CHUNK_TRACE");
      assert.match(await page.textContent("#error"), /selection 0: point \[64, 0\] outside shape/);

      // Fixing it clears the error.
      await page.fill("#trace-json", '{"selections": [{"points": [[63, 0]]}, {"points": [[0, 0]]}]}');
      await page.click("#run");
      await page.waitForFunction(() => document.body.dataset.state === "ready");
      assert.equal(await page.isVisible("#error"), false);
      const view = await page.evaluate(() => window.chunkTraceView);
      assert.deepEqual(view.totals.map((t) => t.reads), [2, 2]);
      // Chunk (1,0) is C (1,325 bytes), chunk (0,0) is A (1,335 bytes).
      assert.deepEqual(view.totals.map((t) => t.raw_bytes), [2660, 2660]);
      assert.deepEqual(pageErrors, []);
    } finally {
      await page.close();
    }
  });
});
