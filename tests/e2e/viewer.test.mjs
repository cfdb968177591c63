// The viewer (www/) in headless Chromium on the HDF5 and Zarr samples that
// tests/fixtures/gen_sample_stores.py wrote: the tree against the hierarchy written, plots
// against the values written (canvas pixels and screenshot pixels), the attribute panel
// against the attributes written, a shared address restoring the view, and a cancelled or
// failed read clearing the picture. Pages come from one server and data from another
// (cross-origin), as in page.test.mjs.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import fs from "node:fs";
import path from "node:path";
import {
  decodePng, fixtures, launchChromium, openInPage, readNpy, startServer, waitSettled,
} from "./lib.mjs";
import { ensureBigFixture } from "./big-fixture.mjs";

const sampleDir = path.join(fixtures, "sample");
const written = JSON.parse(fs.readFileSync(path.join(sampleDir, "sample_stores.json"), "utf8"));
const h5 = written.hdf5, zr = written.zarr;

let pageServer, dataServer, browser;

before(async () => {
  [pageServer, dataServer] = await Promise.all([startServer({ quiet: true }), startServer({ quiet: true })]);
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await Promise.all([pageServer?.stop(), dataServer?.stop()]);
});

async function newPage() {
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  page.on("pageerror", (e) => console.error("page error:", e.message));
  return page;
}

const h5Url = () => `${dataServer.url}tests/fixtures/sample/${h5.file}`;
const zarrUrl = () => `${dataServer.url}tests/fixtures/sample/${zr.store}`;
const preview = (page) => page.evaluate(() => window.chunkwisePreview);

/** The tree as shown: one { path, kind, meta, reason, name } per entry, in document order. */
const treeEntries = (page) => page.evaluate(() => Array.from(document.querySelectorAll("#tree li[data-path]"), (li) => ({
  path: li.dataset.path,
  kind: li.dataset.kind,
  name: li.querySelector(":scope > .line .name").dataset.name,
  meta: li.querySelector(":scope > .line .meta")?.textContent ?? null,
  reason: li.querySelector(":scope > .reason")?.textContent ?? null,
  visible: li.offsetParent !== null,
})));

/** The attribute panel: { path, attrs: { name: text }, dims: text | null }. */
const attrPanel = (page) => page.evaluate(() => ({
  path: document.getElementById("attrs-path").textContent,
  attrs: Object.fromEntries(Array.from(document.querySelectorAll("#attrs dd[data-name]"), (dd) => [dd.dataset.name, dd.textContent])),
  dims: document.querySelector("#attrs dd[data-dims]")?.textContent ?? null,
}));

/** RGB of heatmap canvas pixels (one per element) at [row, col] cells. */
const canvasAt = (page, cells) => page.evaluate((cs) => {
  const c = document.getElementById("heatmap");
  const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
  return cs.map(([r, k]) => Array.from(d.slice((r * c.width + k) * 4, (r * c.width + k) * 4 + 3)));
}, cells);

/** RGB at the centres of [row, col] cells in a screenshot of the heatmap as displayed. */
async function screenAt(page, rows, cols, cells) {
  const box = await page.locator("#heatmap").boundingBox();
  const png = await decodePng(await page.screenshot({ clip: box }));
  return cells.map(([r, k]) => png.rgb(Math.floor(((k + 0.5) * png.width) / cols), Math.floor(((r + 0.5) * png.height) / rows)));
}

/** Colour bar end colours: [top (maximum), bottom (minimum)]. */
const colorbarEnds = (page) => page.evaluate(() => {
  const b = document.getElementById("colorbar");
  const d = b.getContext("2d").getImageData(0, 0, b.width, b.height).data;
  return [Array.from(d.slice(0, 3)), Array.from(d.slice((b.height - 1) * b.width * 4, (b.height - 1) * b.width * 4 + 3))];
});

/** Node kinds and array metadata as the generator wrote them, by path. */
const expectedTree = (nodes) => nodes.map((n) => ({ path: n.path, kind: n.kind }));
const shapeText = (s) => `(${s.join(", ")}${s.length === 1 ? "," : ""})`;

describe("viewer", () => {
  test("HDF5 sample: the tree is the hierarchy written; groups collapse; refused nodes show why", async () => {
    const page = await newPage();
    const s = await openInPage(page, pageServer.url, h5Url());
    assert.equal(s.state, "ready", s.error);
    const entries = await treeEntries(page);
    assert.deepEqual(entries.map(({ path: p, kind }) => ({ path: p, kind })).sort((a, b) => (a.path < b.path ? -1 : 1)),
      expectedTree(h5.nodes));
    for (const n of h5.nodes.filter((x) => x.kind === "array")) {
      const e = entries.find((x) => x.path === n.path);
      assert.equal(e.meta, `${shapeText(n.shape)} ${n.dtype}`, n.path);
      assert.equal(e.name, n.path.split("/").pop());
    }
    const ext = entries.find((e) => e.path === "/external");
    assert.match(ext.reason, /missing\.h5/);
    assert.equal(entries.filter((e) => e.reason).length, 1);
    // no path in the address: the first array of two or more axes, in path order
    const first = h5.nodes.find((n) => n.kind === "array" && n.shape.length >= 2);
    assert.equal((await preview(page)).path, first.path);
    // collapse and expand a group
    const toggle = page.locator('#tree li[data-path="/surface"] > .line button.toggle');
    await toggle.click();
    assert.equal((await treeEntries(page)).find((e) => e.path === "/surface/precip").visible, false);
    assert.equal(await toggle.getAttribute("aria-expanded"), "false");
    await toggle.click();
    assert.equal((await treeEntries(page)).find((e) => e.path === "/surface/precip").visible, true);
    await page.close();
  });

  test("a .b2nd and a Zarr array root show one entry", async () => {
    const page = await newPage();
    let s = await openInPage(page, pageServer.url, `${dataServer.url}tests/fixtures/sample/field2d_f4.b2nd`);
    assert.equal(s.state, "ready", s.error);
    let entries = await treeEntries(page);
    assert.equal(entries.length, 1);
    assert.deepEqual([entries[0].kind, entries[0].name, entries[0].meta], ["array", "field2d_f4.b2nd", "(512, 512) <f4"]);
    s = await openInPage(page, pageServer.url, `${zarrUrl()}/temperature`);
    assert.equal(s.state, "ready", s.error);
    entries = await treeEntries(page);
    assert.equal(entries.length, 1);
    const t = zr.nodes.find((n) => n.path === "/temperature");
    assert.deepEqual([entries[0].kind, entries[0].name, entries[0].meta], ["array", "temperature", `${shapeText(t.shape)} ${t.dtype}`]);
    // the title names it as the tree does, not as the store's root "/"
    assert.match(await page.textContent("#view-title"), /^temperature \[/);
    await page.close();
  });

  test("clicking arrays draws them: a 1-D line plot and a 2-D heatmap with the values written", async () => {
    const page = await newPage();
    const s = await openInPage(page, pageServer.url, h5Url());
    assert.equal(s.state, "ready", s.error);
    const station = h5.nodes.find((n) => n.path === "/profiles/station_a");
    const e1 = readNpy(path.join(sampleDir, station.npy));
    await page.click('#tree li[data-path="/profiles/station_a"] > .line button.node');
    let r = await waitSettled(page, { selection: ":" });
    assert.equal(r.state, "ready", r.error);
    let p = await preview(page);
    assert.equal(p.path, "/profiles/station_a");
    assert.equal(p.plot, "line");
    assert.deepEqual(p.values, e1.values);
    // the line is drawn: the plot canvas holds the line colour
    const lineColoured = await page.evaluate(() => {
      const c = document.getElementById("line");
      const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
      let n = 0;
      for (let i = 0; i < d.length; i += 4) if (d[i] === 59 && d[i + 1] === 82 && d[i + 2] === 139) n++;
      return { n, width: c.width, hidden: c.hidden };
    });
    assert.equal(lineColoured.hidden, false);
    assert.ok(lineColoured.n > 200, `line pixels: ${lineColoured.n}`);
    // the limit boxes' hints are the limits the line takes: the extremes of the values written
    const finite = e1.values.filter(Number.isFinite);
    const hint = await page.evaluate(() => [document.getElementById("vmin").placeholder, document.getElementById("vmax").placeholder]);
    const near = (t, v) => Math.abs(Number(t) - v) <= 1e-6 * Math.max(1, Math.abs(v));
    assert.ok(near(hint[0], Math.min(...finite)) && near(hint[1], Math.max(...finite)), `${hint} vs ${Math.min(...finite)} ${Math.max(...finite)}`);

    const precip = h5.nodes.find((n) => n.path === "/surface/precip");
    const e2 = readNpy(path.join(sampleDir, precip.npy));
    await page.click('#tree li[data-path="/surface/precip"] > .line button.node');
    r = await waitSettled(page, { selection: ":, :" });
    assert.equal(r.state, "ready", r.error);
    p = await preview(page);
    assert.equal(p.path, "/surface/precip");
    assert.equal(p.plot, "heatmap");
    assert.deepEqual(p.image, { rows: precip.shape[0], cols: precip.shape[1] });
    assert.deepEqual(p.values.map((v) => (Number.isNaN(v) ? "NaN" : v)), e2.values.map((v) => (Number.isNaN(v) ? "NaN" : v)));
    const i = e2.values.findIndex(Number.isNaN);
    const [px] = await canvasAt(page, [[Math.floor(i / precip.shape[1]), i % precip.shape[1]]]);
    assert.deepEqual(px, [255, 0, 170]);
    // the readout stays after the pointer leaves, and a click pins it
    const box = await page.locator("#heatmap").boundingBox();
    const [hr, hk] = [20, 30];
    const at = (rr, kk) => [box.x + (kk + 0.5) * box.width / precip.shape[1], box.y + (rr + 0.5) * box.height / precip.shape[0]];
    await page.mouse.move(...at(hr, hk));
    const text = `[${hr}, ${hk}] = ${e2.at(hr, hk)}`;
    assert.equal(await page.textContent("#hover"), text);
    await page.mouse.move(box.x + box.width + 200, box.y - 50);
    assert.equal(await page.textContent("#hover"), text);
    await page.mouse.click(...at(3, 4));
    assert.equal(await page.isVisible("#hover-pin"), true);
    await page.mouse.move(...at(10, 10));
    assert.equal(await page.textContent("#hover"), `[3, 4] = ${e2.at(3, 4)}`);
    await page.mouse.click(...at(3, 4));   // release
    assert.equal(await page.isVisible("#hover-pin"), false);
    await page.close();
  });

  test("gradient: grey levels, viridis, RdBu and log scale at known cells, in the canvas and on screen", async () => {
    const g = written.gradient;   // value[r, k] = r * 32 + k
    const [rows, cols] = g.shape;
    const value = (r, k) => r * 32 + k;
    const page = await newPage();
    const s = await openInPage(page, pageServer.url, h5Url(),
      { query: { path: g.path, cmap: "gray", vmin: "0", vmax: "511" } });
    assert.equal(s.state, "ready", s.error);
    const p = await preview(page);
    assert.deepEqual([p.path, p.cmap, p.vmin, p.vmax, p.scale], [g.path, "gray", 0, 511, "linear"]);
    assert.deepEqual(p.labels, { x: "axis 1", y: "axis 0" });   // no dimension scales
    const cells = [[0, 0], [0, 1], [3, 7], [8, 0], [15, 30], [15, 31]];
    // matplotlib's rule: entry = min(255, floor(t * 256)), t = (v - vmin) / (vmax - vmin); gray entry i = (i, i, i)
    const grey = (v) => Math.min(255, Math.floor((v / 511) * 256));
    const want = cells.map(([r, k]) => [grey(value(r, k)), grey(value(r, k)), grey(value(r, k))]);
    assert.deepEqual(await canvasAt(page, cells), want);
    assert.deepEqual(await screenAt(page, rows, cols, cells), want);
    assert.deepEqual(await colorbarEnds(page), [[255, 255, 255], [0, 0, 0]]);

    // viridis: matplotlib's table ends, #440154 and #fde725
    await page.selectOption("#cmap", "viridis");
    await page.waitForFunction(() => window.chunkwisePreview?.cmap === "viridis");
    assert.deepEqual(await canvasAt(page, [[0, 0], [15, 31]]), [[68, 1, 84], [253, 231, 37]]);
    assert.deepEqual(await screenAt(page, rows, cols, [[0, 0], [15, 31]]), [[68, 1, 84], [253, 231, 37]]);
    assert.deepEqual(await colorbarEnds(page), [[253, 231, 37], [68, 1, 84]]);
    // RdBu: ColorBrewer's ends, #67001f (low) and #053061 (high)
    await page.selectOption("#cmap", "RdBu");
    await page.waitForFunction(() => window.chunkwisePreview?.cmap === "RdBu");
    assert.deepEqual(await canvasAt(page, [[0, 0], [15, 31]]), [[103, 0, 31], [5, 48, 97]]);
    // limits typed narrower: values beyond them take the end colours
    await page.selectOption("#cmap", "gray");
    await page.fill("#vmin", "100");
    await page.fill("#vmax", "200");
    await page.locator("#vmax").dispatchEvent("change");
    await page.waitForFunction(() => window.chunkwisePreview?.vmin === 100 && window.chunkwisePreview?.vmax === 200);
    const g2 = (v) => (v <= 100 ? 0 : Math.min(255, Math.floor(((v - 100) / 100) * 256)));
    const c2 = [[0, 0], [3, 10], [4, 20], [5, 10], [10, 0]];
    assert.deepEqual(await canvasAt(page, c2), c2.map(([r, k]) => Array(3).fill(g2(value(r, k)))));
    // log scale from 1 to 511: 0 cannot be shown (the NaN colour), 1 is the bottom, 511 the top
    await page.fill("#vmin", "1");
    await page.fill("#vmax", "511");
    await page.selectOption("#scale", "log");
    await page.waitForFunction(() => window.chunkwisePreview?.scale === "log" && window.chunkwisePreview?.vmin === 1);
    const lg = (v) => Math.min(255, Math.floor((Math.log10(v) / Math.log10(511)) * 256));
    const c3 = [[0, 1], [0, 9], [3, 4], [15, 31]];
    const got = await canvasAt(page, [[0, 0], ...c3]);
    assert.deepEqual(got[0], [255, 0, 170]);
    assert.deepEqual(got.slice(1), c3.map(([r, k]) => Array(3).fill(lg(value(r, k)))));
    assert.equal((await preview(page)).bad, 1);
    await page.close();
  });

  test("vmin typed above vmax is refused: automatic limits are drawn and the inputs say why", async () => {
    const g = written.gradient;   // value[r, k] = r * 32 + k
    const page = await newPage();
    const s = await openInPage(page, pageServer.url, h5Url(), { query: { path: g.path, cmap: "gray" } });
    assert.equal(s.state, "ready", s.error);
    const auto = (await preview(page)).auto;
    await page.fill("#vmin", "300");
    await page.fill("#vmax", "100");
    await page.locator("#vmax").dispatchEvent("change");
    await page.waitForFunction(() => document.getElementById("vmax").getAttribute("aria-invalid") === "true");
    const p = await preview(page);
    assert.deepEqual([p.vmin, p.vmax], [auto.vmin, auto.vmax]);
    assert.match(await page.textContent("#status"), /vmin 300 is above vmax 100/);
    // the picture is the automatic one (not one colour): the first and last cells differ
    const [a, b] = await canvasAt(page, [[0, 0], [g.shape[0] - 1, g.shape[1] - 1]]);
    assert.deepEqual([a, b], [[0, 0, 0], [255, 255, 255]]);
    // fixed: the typed pair is used again
    await page.fill("#vmin", "50");
    await page.locator("#vmin").dispatchEvent("change");
    await page.waitForFunction(() => window.chunkwisePreview?.vmin === 50);
    assert.equal(await page.getAttribute("#vmax", "aria-invalid"), null);
    assert.equal((await preview(page)).vmax, 100);
    await page.close();
  });

  test("the traffic table fits its panel, long step names elided", async () => {
    const page = await newPage();
    const s = await openInPage(page, pageServer.url, h5Url(), { query: { path: "/surface/temperature" } });
    assert.equal(s.state, "ready", s.error);
    await page.click('#tree li[data-path="/profiles/station_a"] > .line button.node');
    assert.equal((await waitSettled(page, { selection: ":" })).state, "ready");
    const fit = await page.evaluate(() => {
      const t = document.getElementById("traffic"), sec = t.closest("section"), cs = getComputedStyle(sec);
      const inner = sec.getBoundingClientRect().right - parseFloat(cs.paddingRight) - parseFloat(cs.borderRightWidth);
      const step = Array.from(t.querySelectorAll("td.step")).find((td) => td.textContent === "get /profiles/station_a");
      return { right: t.getBoundingClientRect().right, inner, elided: step.scrollWidth > step.clientWidth };
    });
    assert.ok(fit.right <= fit.inner + 0.5, `table right ${fit.right} > panel ${fit.inner}`);
    assert.equal(fit.elided, true);
    await page.close();
  });

  test("automatic limits are the 2nd and 98th percentiles of the values, NaN ignored", async () => {
    const precip = h5.nodes.find((n) => n.path === "/surface/precip");
    const e = readNpy(path.join(sampleDir, precip.npy));
    const page = await newPage();
    const s = await openInPage(page, pageServer.url, h5Url(), { query: { path: precip.path } });
    assert.equal(s.state, "ready", s.error);
    const p = await preview(page);
    const sorted = e.values.filter((v) => !Number.isNaN(v)).sort((a, b) => a - b);
    const pct = (q) => {
      const x = (q / 100) * (sorted.length - 1), lo = Math.floor(x), hi = Math.min(sorted.length - 1, lo + 1);
      return sorted[lo] + (sorted[hi] - sorted[lo]) * (x - lo);
    };
    assert.ok(Math.abs(p.vmin - pct(2)) < 1e-9 && Math.abs(p.vmax - pct(98)) < 1e-9, `${p.vmin} ${p.vmax} vs ${pct(2)} ${pct(98)}`);
    assert.ok(p.nan > 0 && p.vmin > sorted[0] && p.vmax < sorted.at(-1));
    await page.close();
  });

  test("HDF5 attributes and dimension names in the panel and on the axes, as written", async () => {
    const page = await newPage();
    const s = await openInPage(page, pageServer.url, h5Url(), { query: { path: "/surface/temperature" } });
    assert.equal(s.state, "ready", s.error);
    let a = await attrPanel(page);
    const want = h5.attrs["/surface/temperature"];
    assert.equal(a.path, "/surface/temperature");
    assert.equal(a.attrs.units, want.units);
    assert.equal(a.attrs.long_name, want.long_name);
    assert.equal(a.attrs.valid_range, `[${want.valid_range.values.join(", ")}] (2 × float32)`);
    // a long array: elided, float elements to 6 significant digits; all of them in the tooltip
    const w = want.weights.values, six = (x) => String(Number(x.toPrecision(6)));
    assert.equal(a.attrs.weights, `[${w.slice(0, 6).map(six).join(", ")}, …, ${w.slice(-2).map(six).join(", ")}] (20 × float64)`);
    assert.equal(await page.getAttribute('#attrs dd[data-name="weights"]', "title"), `[${w.join(", ")}] (20 × float64)`);
    assert.equal(a.dims, `(${h5.dims["/surface/temperature"].join(", ")})`);
    const p = await preview(page);
    assert.deepEqual(p.labels, { x: "lon", y: "lat" });
    assert.equal(await page.textContent("#axis-0-range >> xpath=..").then((t) => t.trim().split(" ")[0]), "time");
    // a group's attributes: the root
    await page.click('#tree li[data-path="/"] > .line button.node');
    await page.waitForFunction(() => document.getElementById("attrs-path").textContent === "/");
    a = await attrPanel(page);
    const root = h5.attrs["/"];
    assert.equal(a.attrs.title, root.title);
    assert.equal(a.attrs.Conventions, root.Conventions);
    assert.equal(a.attrs.version, String(root.version));
    for (const tag of root.tags) assert.ok(a.attrs.tags.includes(tag), a.attrs.tags);
    // the picture stays: a group is not an array
    assert.equal((await preview(page)).path, "/surface/temperature");
    await page.click('#tree li[data-path="/surface"] > .line button.node');
    await page.waitForFunction(() => document.getElementById("attrs-path").textContent === "/surface");
    a = await attrPanel(page);
    assert.equal(a.attrs.description, h5.attrs["/surface"].description);
    assert.equal(a.attrs.level_m, String(h5.attrs["/surface"].level_m));
    await page.close();
  });

  test("Zarr v3 attributes and dimension_names in the panel and on the axes, as written", async () => {
    const page = await newPage();
    const s = await openInPage(page, pageServer.url, zarrUrl(), { query: { path: "/temperature" } });
    assert.equal(s.state, "ready", s.error);
    const entries = await treeEntries(page);
    assert.deepEqual(entries.map(({ path: p, kind }) => ({ path: p, kind })).sort((x, y) => (x.path < y.path ? -1 : 1)),
      expectedTree(zr.nodes));
    let a = await attrPanel(page);
    const want = zr.attrs["/temperature"];
    assert.equal(a.attrs.units, want.units);
    assert.equal(a.attrs.long_name, want.long_name);
    assert.equal(a.attrs.valid_range, `[${want.valid_range.join(", ")}]`);
    assert.equal(a.dims, `(${zr.dims["/temperature"].join(", ")})`);
    assert.deepEqual((await preview(page)).labels, { x: "lon", y: "lat" });
    await page.click('#tree li[data-path="/"] > .line button.node');
    await page.waitForFunction(() => document.getElementById("attrs-path").textContent === "/");
    a = await attrPanel(page);
    assert.equal(a.attrs.title, zr.attrs["/"].title);
    assert.equal(a.attrs.version, String(zr.attrs["/"].version));
    assert.equal(a.attrs.history, JSON.stringify(zr.attrs["/"].history).replace(/,/g, ", "));
    await page.close();
  });

  test("a Zarr array's unknown stored size is shown as unknown, not 0 B", async () => {
    const page = await newPage();
    const s = await openInPage(page, pageServer.url, zarrUrl(), { query: { path: "/temperature" } });
    assert.equal(s.state, "ready", s.error);
    const meta = await page.evaluate(() => Object.fromEntries(Array.from(document.querySelectorAll("#meta dd[data-key]"),
      (dd) => [dd.dataset.key, dd.textContent])));
    // zarr chunk objects are not listed: the library reports cbytes and source_bytes as null
    assert.match(meta.compressed, /^unknown/);
    assert.match(meta.source, /^unknown/);
    const t = zr.nodes.find((n) => n.path === "/temperature");
    const nbytes = t.shape.reduce((a, b) => a * b, 1) * Number(t.dtype.slice(2));
    assert.ok(meta.size.includes(`(${nbytes.toLocaleString("en-US")} B)`), meta.size);
    await page.close();
  });

  test("a path or selection in the address that cannot be shown says so", async () => {
    const page = await newPage();
    // a path the file does not hold: the first array is shown, with a note naming the path
    let s = await openInPage(page, pageServer.url, h5Url(), { query: { path: "/surface/nothing" } });
    assert.equal(s.state, "ready", s.error);
    let note = await page.evaluate(() => (document.getElementById("step-note").hidden ? null : document.getElementById("step-note").textContent));
    assert.ok(note && note.includes("/surface/nothing is not in this source"), String(note));
    // h5py's spelling without the leading slash, and a trailing slash, name the same dataset
    for (const spelt of ["surface/temperature", "/surface/temperature/"]) {
      s = await openInPage(page, pageServer.url, h5Url(), { query: { path: spelt } });
      assert.equal(s.state, "ready", s.error);
      assert.equal((await preview(page)).path, "/surface/temperature", spelt);
    }
    // a selection out of range: the default is read, and the reason stays shown
    s = await openInPage(page, pageServer.url, h5Url(), { query: { path: "/surface/temperature", sel: "99, :, :" } });
    assert.equal(s.state, "ready", s.error);
    assert.equal((await preview(page)).selection, "0, :, :");
    note = await page.evaluate(() => (document.getElementById("step-note").hidden ? null : document.getElementById("step-note").textContent));
    assert.ok(note && note.includes("99, :, :") && /out of range/.test(note), String(note));
    await page.close();
  });

  test("a shared address restores the array, the selection and the display", async () => {
    const page = await newPage();
    let s = await openInPage(page, pageServer.url, h5Url(), { query: { path: "/surface/temperature" } });
    assert.equal(s.state, "ready", s.error);
    await page.locator("#axis-0-index").fill("5");
    await page.locator("#axis-0-index").dispatchEvent("change");
    s = await waitSettled(page, { selection: "5, :, :" });
    assert.equal(s.state, "ready", s.error);
    await page.selectOption("#cmap", "gray");
    await page.fill("#vmin", "280");
    await page.locator("#vmin").dispatchEvent("change");
    await page.waitForFunction(() => window.chunkwisePreview?.vmin === 280);
    const first = await preview(page);
    const shared = page.url();
    const q = new URL(shared).searchParams;
    assert.deepEqual([q.get("path"), q.get("sel"), q.get("cmap"), q.get("vmin")], ["/surface/temperature", "5, :, :", "gray", "280"]);
    await page.close();

    const again = await newPage();
    await again.goto(shared);
    s = await waitSettled(again);
    assert.equal(s.state, "ready", s.error);
    const p = await preview(again);
    assert.deepEqual([p.path, p.selection, p.cmap, p.vmin, p.vmax], ["/surface/temperature", "5, :, :", "gray", 280, first.vmax]);
    assert.deepEqual(p.values, first.values);
    assert.equal(await again.inputValue("#axis-0-index"), "5");
    assert.equal(await again.inputValue("#sel-input"), "5, :, :");
    assert.equal(await again.inputValue("#cmap"), "gray");
    assert.deepEqual(await canvasAt(again, [[0, 0], [11, 17], [23, 35]]), canvasFromValues(p, [[0, 0], [11, 17], [23, 35]]));

    // a selection typed by hand, shown transposed, also travels in the address
    await again.fill("#sel-input", "2, 3:20:2, ::3");
    await again.press("#sel-input", "Enter");
    s = await waitSettled(again, { selection: "2, 3:20:2, ::3" });
    assert.equal(s.state, "ready", s.error);
    await again.selectOption("#row-axis", "2");
    s = await waitSettled(again, { selection: "2, 3:20:2, ::3" });
    await again.waitForFunction(() => window.chunkwisePreview?.image.rows === 12);
    const t = await preview(again);
    assert.deepEqual(t.image, { rows: 12, cols: 9 });
    const link = again.url();
    await again.goto(link);
    s = await waitSettled(again);
    assert.equal(s.state, "ready", s.error);
    const t2 = await preview(again);
    assert.deepEqual([t2.selection, t2.image], ["2, 3:20:2, ::3", { rows: 12, cols: 9 }]);
    assert.deepEqual(t2.values, t.values);

    // a URL typed with a token: it is read with it, but kept out of the address and the status
    await again.fill("#url", `${h5Url()}?token=s3cret`);
    await again.click("#open");
    s = await waitSettled(again);
    assert.equal(s.state, "ready", s.error);
    assert.equal(new URL(again.url()).searchParams.get("url"), h5Url());
    assert.ok(!again.url().includes("s3cret"));
    assert.ok(!(await again.textContent("#status")).includes("s3cret"));
    await again.close();
  });

  test("a large array read with a step keeps the aspect of the array on screen", async () => {
    const big = ensureBigFixture();
    assert.ok(big.ok, big.reason);   // a missing fixture fails the test, never skips it
    const srv = await startServer({ root: path.dirname(big.file), quiet: true });
    try {
      const page = await newPage();
      // 1024 rows read whole, 2000 columns read with step 2: 1024 x 1000 cells of 1 x 2 elements
      const s = await openInPage(page, pageServer.url, `${srv.url}${path.basename(big.file)}`,
        { query: { sel: "0:1024, :" }, timeout: 60000 });
      assert.equal(s.state, "ready", s.error);
      const p = await preview(page);
      assert.deepEqual(p.image, { rows: 1024, cols: 1000 });
      const box = await page.locator("#heatmap").boundingBox();
      const ratio = box.height / box.width, want = 1024 / 2000;
      assert.ok(Math.abs(ratio - want) < 0.01, `height / width ${ratio}, array ${want}`);
      // the readout still names whole-array indices: cell (r, k) is element [r, 2 k]
      const e = readNpy(big.npy);
      const [x, y] = [Math.round(box.x + box.width * 0.4), Math.round(box.y + box.height * 0.3)];
      await page.mouse.move(x, y);
      const r = Math.floor(((y - box.y) / box.height) * 1024), k = Math.floor(((x - box.x) / box.width) * 1000);
      const m = /^\[(\d+), (\d+)\] = (\S+)$/.exec(await page.textContent("#hover"));
      assert.ok(m, await page.textContent("#hover"));
      assert.ok(Math.abs(Number(m[1]) - r) <= 1 && Math.abs(Number(m[2]) - 2 * k) <= 2, `${m[0]} vs cell ${r}, ${k}`);
      assert.equal(Number(m[2]) % 2, 0);
      assert.equal(Math.fround(Number(m[3])), Math.fround(e.at(Number(m[1]), Number(m[2]))));
      await page.close();
    } finally {
      await srv.stop();
    }
  });

  test("Cancel aborts a slow open", async () => {
    const slow = await startServer({ root: sampleDir, quiet: true, latencyMs: 3000 });
    try {
      const page = await newPage();
      await page.goto(`${pageServer.url}www/?${new URLSearchParams({ url: `${slow.url}${h5.file}` })}`);
      await page.waitForFunction(() => document.body.dataset.state === "opening");
      const t0 = Date.now();
      await page.click("#cancel", { timeout: 2000 });
      const s = await waitSettled(page, { timeout: 2000 });
      assert.equal(s.state, "cancelled", s.error);
      assert.equal(s.code, "CANCELLED");
      assert.ok(Date.now() - t0 < 2000);
      assert.equal(await page.isDisabled("#cancel"), true);
      assert.equal(await page.isDisabled("#open"), false);
      await page.close();
    } finally {
      await slow.stop();
    }
  });

  test("a cancelled read clears the picture and reports bytes while it runs; a failed read clears it with its code", async () => {
    const big = ensureBigFixture();
    assert.ok(big.ok, big.reason);   // a missing fixture fails the test, never skips it
    // A read of chunks far apart in the file (several requests) on a server that answers the
    // first of them and never the others: bytes arrive while the read cannot end. The GETs of
    // open and of the first read are counted on a plain server first.
    const root = path.dirname(big.file), name = path.basename(big.file);
    const query = { sel: "0:20, 0:30" };
    const gets = (srv) => srv.log.filter((r) => r.method === "GET").length;
    const plain = await startServer({ root });
    let before;
    try {
      const page = await newPage();
      const s = await openInPage(page, pageServer.url, `${plain.url}${name}`, { query, timeout: 60000 });
      assert.equal(s.state, "ready", s.error);
      await page.close();
      before = gets(plain);
    } finally {
      await plain.stop();
    }
    const stuck = await startServer({ root, faults: [`after=${before + 1}:never-answer`] });
    try {
      const page = await newPage();
      const url = `${stuck.url}${name}`;
      let s = await openInPage(page, pageServer.url, url, { query, timeout: 60000 });
      assert.equal(s.state, "ready", s.error);
      assert.equal((await preview(page)).image.cols, 30);
      assert.equal(await page.evaluate(() => document.getElementById("heatmap").width), 30);
      await page.fill("#sel-input", "::1000, ::1000");
      await page.press("#sel-input", "Enter");
      await page.waitForFunction(() => document.body.dataset.state === "reading");
      // bytes counted while the read runs: the first answer's body, before any chunk is decoded
      await page.waitForFunction(() => Number(document.getElementById("progress-text").dataset.bytes) > 0, null, { timeout: 20000 });
      assert.match(await page.textContent("#progress-text"), /B\) received/);
      assert.equal(await page.evaluate(() => document.body.dataset.state), "reading");
      assert.equal(gets(stuck), before + 1);   // the one answer (the server logs a request once answered)
      await page.click("#cancel");
      s = await waitSettled(page, { timeout: 10000 });
      assert.equal(s.state, "cancelled", s.error);
      assert.equal(s.code, "CANCELLED");
      const cleared = await page.evaluate(() => ({
        w: document.getElementById("heatmap").width, h: document.getElementById("heatmap").height,
        title: document.getElementById("view-title").textContent, preview: window.chunkwisePreview,
        cb: document.getElementById("cb-max").textContent,
      }));
      assert.deepEqual(cleared, { w: 0, h: 0, title: "", preview: undefined, cb: "" });
      // one read, cancelled (pressing Cancel blurs the selection box: that is no second read)
      const rows = await page.evaluate(() => Array.from(document.querySelectorAll("#traffic tbody tr"),
        (tr) => [tr.dataset.step, tr.dataset.status || "ok"]));
      assert.deepEqual(rows.filter(([step]) => step === "read ::1000, ::1000"), [["read ::1000, ::1000", "cancelled"]]);
      await page.close();
    } finally {
      await stuck.stop();
    }

    // a chunk answered 500: the read fails, the old picture goes, the code is shown
    const broken = await startServer({ root: sampleDir, quiet: true, faults: ["status=temperature/c/1/0/0:500"] });
    try {
      const page = await newPage();
      let s = await openInPage(page, pageServer.url, `${broken.url}${zr.store}`, { query: { path: "/temperature" } });
      assert.equal(s.state, "ready", s.error);
      await page.locator("#axis-0-index").fill("7");   // time 7 lives in the second chunk
      await page.locator("#axis-0-index").dispatchEvent("change");
      s = await waitSettled(page, { timeout: 30000 });
      assert.equal(s.state, "error");
      assert.ok(s.code, "an error code is shown");
      assert.match(s.error, new RegExp(`^${s.code}: `));
      const w = await page.evaluate(() => document.getElementById("heatmap").width);
      assert.equal(w, 0);
      assert.equal(await page.textContent("#view-title"), "");
      await page.close();
    } finally {
      await broken.stop();
    }
  });
});

/** The gray colours the page must show for `p`'s values at cells (gray map, its vmin/vmax). */
function canvasFromValues(p, cells) {
  return cells.map(([r, k]) => {
    const v = p.values[r * p.image.cols + k];
    const t = (v - p.vmin) / (p.vmax - p.vmin);
    const i = !(t > 0) ? 0 : t >= 1 ? 255 : Math.min(255, Math.floor(t * 256));
    return [i, i, i];
  });
}
