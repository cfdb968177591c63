#!/usr/bin/env node
// Loads the viewer page in headless Chromium (which opens its source), waits for the first read and
// prints what was read: metadata, shape, dtype, min/max and the traffic of open and read.
// Usage: node tests/e2e/preview.mjs PAGE_URL [--screenshot FILE] [--timeout MS]
//   PAGE_URL e.g. http://127.0.0.1:8000/www/?url=http://127.0.0.1:8000/tests/fixtures/sample/field2d_f4.b2nd
// Exits 1 when the page reports an error.

import { launchChromium } from "./lib.mjs";

const args = process.argv.slice(2);
let pageUrl = null, screenshot = null, timeout = 60000;
for (let i = 0; i < args.length; i++) {
  if (args[i] === "--screenshot") screenshot = args[++i];
  else if (args[i] === "--timeout") timeout = Number(args[++i]);
  else if (!pageUrl) pageUrl = args[i];
  else { console.error(`preview: unexpected argument ${args[i]}`); process.exit(2); }
}
if (!pageUrl) { console.error("usage: preview.mjs PAGE_URL [--screenshot FILE] [--timeout MS]"); process.exit(2); }

const fmt = new Intl.NumberFormat("en-US");
const browser = await launchChromium();
let code = 0;
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
  page.on("pageerror", (e) => console.error("page error:", e.message));
  await page.goto(pageUrl);
  // the page opens its source on load
  await page.waitForFunction(() => ["ready", "error", "cancelled", "listed"].includes(document.body.dataset.state),
    null, { timeout });
  const r = await page.evaluate(() => ({
    state: document.body.dataset.state,
    error: document.getElementById("error").textContent,
    url: document.getElementById("url").value,
    title: document.getElementById("view-title").textContent,
    tree: Array.from(document.querySelectorAll("#tree li[data-path]"), (li) => li.dataset.path),
    meta: Object.fromEntries(Array.from(document.querySelectorAll("#meta dd"), (dd) => [dd.dataset.key, dd.textContent])),
    note: document.getElementById("step-note").hidden ? "" : document.getElementById("step-note").textContent,
    p: window.chunkwisePreview ? { ...window.chunkwisePreview, values: undefined } : null,
  }));
  if (screenshot) await page.screenshot({ path: screenshot, fullPage: true });
  console.log(`preview of ${r.url}`);
  if (r.state !== "ready") {
    console.log(`  ${r.state}: ${r.error}`);
    code = 1;
  } else {
    const { p, meta } = r;
    console.log(`  tree       ${r.tree.length} node${r.tree.length === 1 ? "" : "s"}; shown ${r.title}`);
    console.log(`  array      ${meta.format}, shape ${meta.shape}, dtype ${meta.dtype}, chunks ${meta.chunks}, blocks ${meta.blocks}`);
    console.log(`  codecs     ${meta.codecs}; ${meta.size} -> ${meta.compressed}`);
    console.log(`  read       [${p.selection}] -> shape (${p.shape.join(", ")}), dtype ${p.dtype}, min ${p.min}, max ${p.max}` +
      (p.nan ? `, ${p.nan} NaN` : ""));
    if (r.note) console.log(`  note       ${r.note}`);
    const t = p.traffic;
    console.log(`  traffic    open: ${fmt.format(t.open.requests)} requests, ${fmt.format(t.open.bytes)} bytes; ` +
      `read: ${fmt.format(t.read.requests)} requests, ${fmt.format(t.read.bytes)} bytes; ` +
      `total ${fmt.format(t.total.requests)} requests, ${fmt.format(t.total.bytes)} bytes`);
  }
} finally {
  await browser.close();
}
process.exit(code);
