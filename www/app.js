// chunkwise viewer: opens a remote HDF5 file, Zarr store or array, or a Caterva2 server's roots,
// with the wasm package, shows its hierarchy as a tree, a node's attributes, and previews an
// array: a 2-D slice as a heatmap, a 1-D selection as a line plot, with the network traffic of
// every step.
//
// The view is in the page's query (url, source, path, sel, t, cmap, scale, vmin, vmax), so a
// link restores it. State for automation: document.body.dataset.state is "loading", "idle",
// "opening", "listed" (a store listed, no array chosen), "reading", "ready", "cancelled" or
// "error"; after each read window.chunkwisePreview holds what was read and drawn.

import * as status from "./status.js";
import { attrText, f32Text, floatText, renderAttrs } from "./attrs-view.js";
import { COLORMAPS } from "./colormaps.js";
import {
  MARGIN, drawAxes, drawColorbar, drawHeatmap, drawLine, drawMarker, fitCanvas,
  indexTicks, numberText, percentiles,
} from "./plot.js";
import {
  SelectionError, boundSteps, defaultItems, formatSelection, parseSelection, sliceAxes, sliceLength,
} from "./selection.js";
import { markSelected, nest, renderTree } from "./tree.js";

/** Largest displayed extent of each axis of a 2-D slice: bigger axes are read with a step (<= 1 Mi elements). */
const MAX_SIDE = 1024;
/** Largest extent of a 1-D selection (a line plot), likewise. */
const MAX_LINE = 1 << 20;
const EXPOSED_VALUES = 65536;   // values of the last read copied into window.chunkwisePreview
const PROGRESS_POLL_MS = 100;   // how often the bytes received are polled during a read
const DEFAULT_SAMPLE = "../tests/fixtures/sample/sample.h5";
const DEFAULT_PATH = "/surface/temperature";

const $ = (id) => document.getElementById(id);
const ui = {
  form: $("open-form"), url: $("url"), source: $("source"), open: $("open"), cancel: $("cancel"),
  status: $("status"), error: $("error"), meta: $("meta"), tree: $("tree"),
  attrs: $("attrs"), attrsPath: $("attrs-path"), title: $("view-title"),
  controls: $("controls"), selInput: $("sel-input"), rowAxis: $("row-axis"), colAxis: $("col-axis"),
  sliders: $("sliders"), selection: $("selection"),
  cmap: $("cmap"), scale: $("scale"), vmin: $("vmin"), vmax: $("vmax"), auto: $("auto"),
  progress: $("progress"), progressText: $("progress-text"), stepNote: $("step-note"),
  plotArea: $("plot-area"), axes: $("axes"), heatmap: $("heatmap"), line: $("line"),
  colorbarBox: $("colorbar-box"), colorbar: $("colorbar"),
  cbMin: $("cb-min"), cbMax: $("cb-max"), cbNan: $("cb-nan"), cbNanText: $("cb-nan-text"),
  hover: $("hover"), hoverPin: $("hover-pin"), valuesText: $("values-text"),
  trafficBody: document.querySelector("#traffic tbody"),
  totalRequests: $("total-requests"), totalBytes: $("total-bytes"), totalRoundTrips: $("total-round-trips"),
};

let wasm = null;          // the package module once initialised
let source = null;        // { url, store (RemoteStore | null), counter (has .traffic), nodes, tree }
let arr = null;           // the RemoteArray previewed
let arrNode = null;       // its node
let arrShape = [];
let items = [];           // the chosen selection, one item per axis (before the preview's step bound)
let transpose = false;    // a 2-D slice shown with its first axis as columns
let fixed = [];           // index remembered per axis, for axes shown as sliders
let current = null;       // { controller, seq } of the read in flight
let seq = 0;              // increases with every read and every node change
let shown = null;         // what the plot shows (for hover and redraws)
let pinned = null;        // the pinned readout cell, { r, k }
let logCount = 0;
let notice = "";          // why the address's path or selection was not shown; joins the next read's notes
const log = { open: null, reads: [] };
const collapsed = new Set();

const fmt = new Intl.NumberFormat("en-US");

function setState(state, message) { status.setState(ui, state, message); }
function showError(err) { status.showError(ui, err); }
function clearError() { status.clearError(ui); }

// ---- values -----------------------------------------------------------------------------------

function halfToFloat(h) {
  const s = h & 0x8000 ? -1 : 1;
  const e = (h >> 10) & 0x1f;
  const f = h & 0x3ff;
  if (e === 0) return s * 2 ** -14 * (f / 1024);
  if (e === 31) return f ? NaN : s * Infinity;
  return s * 2 ** (e - 15) * (1 + f / 1024);
}

const isFloat16Bits = (data, dtype) => dtype[1] === "f" && dtype.slice(2) === "2" && data instanceof Uint16Array;

/** Plain numbers for drawing, one per element, and a note on any conversion; null for non-numeric data. */
function toNumbers(data, dtype) {
  const kind = dtype[1];
  if (!ArrayBuffer.isView(data)) return null;   // strings, compounds: Arrays
  if (kind === "c") {
    const n = data.length / 2;
    const out = new Float64Array(n);
    for (let i = 0; i < n; i++) out[i] = Math.hypot(data[2 * i], data[2 * i + 1]);
    return { values: out, note: "complex values: magnitude shown" };
  }
  if (isFloat16Bits(data, dtype)) return { values: Float64Array.from(data, halfToFloat), note: "" };
  if (typeof data[0] === "bigint") return { values: Float64Array.from(data, Number), note: "" };
  return { values: data, note: "" };
}

function rawText(data, dtype, i) {
  const kind = dtype[1];
  if (kind === "c") return `${data[2 * i]}${data[2 * i + 1] < 0 ? "-" : "+"}${Math.abs(data[2 * i + 1])}j`;
  if (isFloat16Bits(data, dtype)) return String(halfToFloat(data[i]));
  if (kind === "f" && dtype.slice(2) === "4") return f32Text(data[i]);
  if (kind === "f") return floatText(data[i]);
  if (kind === "b") return data[i] ? "True" : "False";
  return String(data[i]);
}

function range(values) {
  let min = Infinity, max = -Infinity, nan = 0;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (Number.isNaN(v)) { nan++; continue; }
    if (!Number.isFinite(v)) continue;
    if (v < min) min = v;
    if (v > max) max = v;
  }
  if (min > max) { min = NaN; max = NaN; }
  return { min, max, nan };
}

function bytesText(n) {
  n = Number(n);
  if (n < 1024) return `${fmt.format(n)} B`;
  const units = ["KiB", "MiB", "GiB", "TiB"];
  let v = n, u = -1;
  while (v >= 1024 && u < units.length - 1) { v /= 1024; u++; }
  return `${v.toFixed(v < 10 ? 2 : 1)} ${units[u]} (${fmt.format(n)} B)`;
}

// ---- the view in the page's address -----------------------------------------------------------

function viewParams() {
  const q = new URLSearchParams(location.search);
  const num = (k) => (q.has(k) && q.get(k) !== "" && Number.isFinite(Number(q.get(k))) ? Number(q.get(k)) : null);
  return {
    url: q.get("url"), source: q.get("source"), path: q.get("path"), sel: q.get("sel"),
    transpose: q.get("t") === "1",
    cmap: q.get("cmap"), scale: q.get("scale"), vmin: num("vmin"), vmax: num("vmax"),
  };
}

/**
 * A data URL as the page shows it and writes it into its own address: without its query and
 * user info (tokens, signatures), which appear as `?***` and `***@` in text (as the library's
 * messages show them) and are left out of the address. A URL that came from the address
 * itself stays as it was given.
 */
function redacted(url, { forAddress = false } = {}) {
  try {
    const u = new URL(url);
    const hadQuery = u.search !== "", hadUser = u.username !== "" || u.password !== "";
    u.search = ""; u.username = ""; u.password = "";
    if (forAddress) return u.href;
    let t = u.href;
    if (hadUser) t = t.replace("://", "://***@");
    return hadQuery ? `${t}?***` : t;
  } catch {
    return "(invalid URL)";
  }
}

/** Writes the current view into the address (replaceState: no history entry per slider step). */
function saveView() {
  if (!source) return;
  const q = new URLSearchParams();
  q.set("url", source.addressUrl);
  if (source.kind === "caterva2") q.set("source", "caterva2");
  const path = arrNode ? arrNode.path : source.selectedPath;
  if (path) q.set("path", path);
  if (arr) {
    q.set("sel", formatSelection(items, arrShape));
    if (transpose) q.set("t", "1");
  }
  if (ui.cmap.value !== "viridis") q.set("cmap", ui.cmap.value);
  if (ui.scale.value !== "linear") q.set("scale", ui.scale.value);
  if (ui.vmin.value.trim() !== "") q.set("vmin", ui.vmin.value.trim());
  if (ui.vmax.value.trim() !== "") q.set("vmax", ui.vmax.value.trim());
  history.replaceState(null, "", `${location.pathname}?${q}`);
}

// ---- metadata, attributes and controls --------------------------------------------------------

function showMeta(info) {
  // a size the format cannot know: null, or 0 from a Zarr array (its chunk objects are not
  // listed, so stored sizes are unknown; the CLI prints null)
  const unknown = (v) => v == null || (/^zarr/.test(info.format) && Number(v) === 0);
  const rows = [
    ["format", info.format],
    ["shape", `(${info.shape.join(", ")})`],
    ["dtype", info.dtype],
    ["chunks", `(${info.chunks.join(", ")})`],
    ["blocks", `(${info.blocks.join(", ")})`],
    ["codecs", info.codecs],
    // null: 2^64 or more, past what the reader numbers (its reads are refused)
    ["chunk count", info.nchunks == null ? "2^64 or more" : fmt.format(Number(info.nchunks))],
    ["size", info.nbytes == null ? "2^64 bytes or more" : bytesText(info.nbytes)],
    ["compressed", unknown(info.cbytes) ? "unknown (stored chunk sizes are not listed)"
      : `${bytesText(info.cbytes)}${Number(info.cbytes) > 0
        && info.nbytes != null ? ` · ratio ${(Number(info.nbytes) / Number(info.cbytes)).toFixed(2)}` : ""}`],
    ["source", unknown(info.source_bytes) ? "unknown" : bytesText(info.source_bytes)],
  ];
  ui.meta.replaceChildren();
  for (const [k, v] of rows) {
    const dt = document.createElement("dt");
    dt.textContent = k;
    const dd = document.createElement("dd");
    dd.textContent = v;
    dd.dataset.key = k;
    ui.meta.append(dt, dd);
  }
}

function showAttrs(path, attrs, dims) {
  ui.attrsPath.textContent = path;
  renderAttrs(ui.attrs, attrs, dims);
}

/** The label of axis `a` of the array shown: its dimension name, else "axis a". */
function axisLabel(a) {
  const dims = shown?.dims ?? arrDims();
  return (Array.isArray(dims) && dims[a]) || `axis ${a}`;
}

function arrDims() {
  try {
    const d = arr ? arr.dims : null;
    if (Array.isArray(d)) return d;
  } catch { /* closed */ }
  return arrNode && Array.isArray(arrNode.dims) ? arrNode.dims : null;
}

function axisOptionText(a) {
  const dims = arrDims();
  const name = Array.isArray(dims) && dims[a] ? dims[a] : `axis ${a}`;
  return `${name} (${arrShape[a]})`;
}

/** Rebuilds the axis choice and the sliders from `items`. */
function buildControls() {
  const nd = arrShape.length;
  ui.controls.hidden = false;
  ui.selInput.value = formatSelection(items, arrShape);
  for (const sel of [ui.rowAxis, ui.colAxis]) {
    sel.replaceChildren();
    for (let a = 0; a < nd; a++) {
      const o = document.createElement("option");
      o.value = String(a);
      o.textContent = axisOptionText(a);
      sel.append(o);
    }
  }
  const axes = sliceAxes(items);
  const twoD = axes.length === 2;
  ui.rowAxis.parentElement.parentElement.hidden = nd < 2 || !twoD;
  if (twoD) {
    ui.rowAxis.value = String(transpose ? axes[1] : axes[0]);
    ui.colAxis.value = String(transpose ? axes[0] : axes[1]);
  }
  buildSliders();
}

function buildSliders() {
  ui.sliders.replaceChildren();
  items.forEach((it, a) => {
    if (it.kind !== "index") return;
    const n = arrShape[a];
    fixed[a] = it.index;
    const row = document.createElement("label");
    row.className = "slider";
    row.textContent = `${axisLabel(a)} `;
    const rangeInput = document.createElement("input");
    rangeInput.type = "range"; rangeInput.min = "0"; rangeInput.max = String(n - 1); rangeInput.value = String(it.index);
    rangeInput.id = `axis-${a}-range`; rangeInput.dataset.axis = String(a);
    const num = document.createElement("input");
    num.type = "number"; num.min = "0"; num.max = String(n - 1); num.value = String(it.index);
    num.id = `axis-${a}-index`; num.dataset.axis = String(a);
    const set = (v) => {
      // a slider removed by an axis change may still send its change event (on blur)
      if (!row.isConnected || items[a].kind !== "index") return;
      v = Math.min(n - 1, Math.max(0, Math.trunc(Number(v)) || 0));
      if (v === items[a].index) return;
      items[a] = { kind: "index", index: v };
      fixed[a] = v;
      rangeInput.value = String(v); num.value = String(v);
      ui.selInput.value = formatSelection(items, arrShape);
      readSlice();
    };
    rangeInput.addEventListener("input", () => set(rangeInput.value));
    num.addEventListener("change", () => set(num.value));
    row.append(rangeInput, num, document.createTextNode(` of ${n}`));
    ui.sliders.append(row);
  });
}

function onAxesChange(changed) {
  const other = changed === ui.rowAxis ? ui.colAxis : ui.rowAxis;
  if (ui.rowAxis.value === ui.colAxis.value) {
    // keep two distinct axes: the other one takes the axis the changed one had (a swap)
    const axes = sliceAxes(items);
    const was = axes.length === 2 ? (changed === ui.rowAxis) !== transpose ? axes[0] : axes[1] : null;
    const free = arrShape.findIndex((_, a) => String(a) !== changed.value);
    other.value = String(was !== null && String(was) !== changed.value ? was : free);
  }
  const row = Number(ui.rowAxis.value), col = Number(ui.colAxis.value);
  items = items.map((it, a) => {
    if (a === row || a === col) return it.kind === "slice" ? it : { kind: "slice", start: 0, stop: arrShape[a], step: 1 };
    return { kind: "index", index: it.kind === "index" ? it.index : (fixed[a] ?? 0) };
  });
  transpose = row > col;
  buildControls();
  readSlice();
}

// ---- traffic log ------------------------------------------------------------------------------

function addLogRow(step, delta, ms, rowStatus) {
  logCount += 1;
  const tr = document.createElement("tr");
  tr.dataset.step = step;
  tr.dataset.requests = String(delta.requests);
  tr.dataset.bytes = String(delta.bytes);
  tr.dataset.roundTrips = String(delta.roundTrips);
  if (rowStatus) tr.dataset.status = rowStatus;
  const cells = [String(logCount), step, fmt.format(delta.requests), fmt.format(delta.bytes),
    fmt.format(delta.roundTrips), ms.toFixed(0)];
  cells.forEach((text, i) => {
    const td = document.createElement("td");
    td.textContent = text;
    if (i === 1) { td.className = "step"; td.title = step; }
    tr.append(td);
  });
  if (rowStatus) tr.classList.add(rowStatus);
  ui.trafficBody.append(tr);
  tr.scrollIntoView({ block: "nearest" });
}

function showTotal(t) {
  ui.totalRequests.textContent = fmt.format(t.requests);
  ui.totalBytes.textContent = fmt.format(t.bytes);
  ui.totalRoundTrips.textContent = fmt.format(t.roundTrips);
  ui.totalRequests.dataset.value = String(t.requests);
  ui.totalBytes.dataset.value = String(t.bytes);
}

/** Traffic since open: the store's counter (its arrays share it), else the array's. */
function trafficNow(counter = source?.counter) {
  const t = counter.traffic;
  return { requests: Number(t.requests), bytes: Number(t.bytes), roundTrips: Number(t.roundTrips ?? 0) };
}

const diff = (a, b) => ({
  requests: a.requests - b.requests, bytes: a.bytes - b.bytes, roundTrips: a.roundTrips - b.roundTrips,
});

// ---- drawing ----------------------------------------------------------------------------------

/** Removes every trace of the last picture: canvases, colour bar labels, readout, title. */
function clearPicture() {
  for (const c of [ui.heatmap, ui.line]) { c.width = 0; c.height = 0; c.style.width = "0px"; c.style.height = "0px"; }
  ui.line.hidden = true;
  fitCanvas(ui.axes, 0, 0);
  ui.plotArea.style.width = "0px"; ui.plotArea.style.height = "0px";
  ui.plotArea.classList.remove("stale");
  ui.colorbarBox.hidden = true;
  ui.cbMin.textContent = ""; ui.cbMax.textContent = ""; ui.cbNan.hidden = true;
  ui.hover.innerHTML = "&nbsp;"; ui.hoverPin.hidden = true; pinned = null;
  ui.valuesText.hidden = true; ui.valuesText.textContent = "";
  ui.title.textContent = "";
  shown = null;
}

/** vmin/vmax typed by the user (null: automatic). */
function typedLimit(input) {
  const t = input.value.trim();
  if (t === "") return null;
  const v = Number(t);
  return Number.isFinite(v) ? v : null;
}

/** The limits in force: typed ones, else the 2nd and 98th percentiles (positive values only on a log scale). */
function limits(values, scale) {
  shown.percentiles ??= {};
  const [p2, p98] = (shown.percentiles[scale] ??= percentiles(values, [2, 98], { positive: scale === "log" }));
  const auto = { vmin: p2, vmax: p98 };
  let vmin = typedLimit(ui.vmin) ?? p2, vmax = typedLimit(ui.vmax) ?? p98;
  if (scale === "log" && !(vmin > 0)) vmin = p2;
  // vmin above vmax maps nothing (matplotlib refuses it): the automatic limits are drawn instead
  const inverted = typedLimit(ui.vmin) !== null && typedLimit(ui.vmax) !== null && typedLimit(ui.vmin) > typedLimit(ui.vmax);
  for (const el of [ui.vmin, ui.vmax]) {
    if (inverted) el.setAttribute("aria-invalid", "true"); else el.removeAttribute("aria-invalid");
  }
  shown.inverted = inverted;
  if (inverted) {
    ui.status.textContent = `vmin ${typedLimit(ui.vmin)} is above vmax ${typedLimit(ui.vmax)}: the automatic limits are drawn.`;
    vmin = p2; vmax = p98;
  }
  ui.vmin.placeholder = Number.isFinite(p2) ? numberText(p2, 7) : "";
  ui.vmax.placeholder = Number.isFinite(p98) ? numberText(p98, 7) : "";
  return { vmin, vmax, auto };
}

/** Draws `shown` with the current display settings. */
function redraw() {
  if (!shown) return;
  const s = shown;
  const scale = ui.scale.value, cmap = ui.cmap.value;
  const { vmin, vmax, auto } = limits(s.values, scale);
  s.vmin = vmin; s.vmax = vmax; s.auto = auto; s.scale = scale; s.cmap = cmap;
  ui.plotArea.classList.remove("stale");
  s.bad = 0;
  if (s.plot === "heatmap") {
    ui.line.hidden = true;
    ui.heatmap.hidden = false;
    s.bad = drawHeatmap(ui.heatmap, { values: s.values, rows: s.rows, cols: s.cols, index: s.index, vmin, vmax, scale, cmap });
    // CSS size: fit the view, one square per array element; small arrays are enlarged by whole
    // pixels. An axis the preview read with a step (a large array) has cells of that many
    // elements, so the picture keeps the array's aspect.
    const avail = Math.max(240, Math.min(720, ui.plotArea.parentElement.clientWidth - 150));
    const fr = s.factors[s.displayAxes[0]] ?? 1, fc = s.factors[s.displayAxes[1]] ?? 1;
    let cell = Math.min(avail / (s.cols * fc), avail / (s.rows * fr));
    if (cell >= 1) cell = Math.floor(cell);
    const w = Math.max(1, Math.round(s.cols * fc * cell)), h = Math.max(1, Math.round(s.rows * fr * cell));
    s.box = { left: MARGIN.left, top: MARGIN.top, width: w, height: h, cellW: w / s.cols, cellH: h / s.rows };
    ui.heatmap.style.width = `${w}px`; ui.heatmap.style.height = `${h}px`;
    ui.heatmap.style.left = `${MARGIN.left}px`; ui.heatmap.style.top = `${MARGIN.top}px`;
    const W = w + MARGIN.left + MARGIN.right, H = h + MARGIN.top + MARGIN.bottom;
    ui.plotArea.style.width = `${W}px`; ui.plotArea.style.height = `${H}px`;
    const ctx = fitCanvas(ui.axes, W, H);
    const [rowAxis, colAxis] = s.displayAxes;
    const ri = s.sel[rowAxis], ci = s.sel[colAxis];
    drawAxes(ctx, s.box,
      { label: axisLabel(colAxis), ticks: indexTicks(s.cols, s.box.cellW, ci.start, ci.step) },
      { label: axisLabel(rowAxis), ticks: indexTicks(s.rows, s.box.cellH, ri.start, ri.step) });
    ui.colorbarBox.hidden = false;
    drawColorbar(ui.colorbar, cmap);
    ui.colorbar.style.height = `${Math.max(120, h)}px`;
    ui.cbMin.textContent = numberText(vmin, 7);
    ui.cbMax.textContent = numberText(vmax, 7);
    ui.cbNan.hidden = s.bad === 0;
    ui.cbNanText.textContent = scale === "log" ? "NaN or ≤ 0" : "NaN";
  } else if (s.plot === "line") {
    ui.heatmap.hidden = true;
    ui.heatmap.width = 0; ui.heatmap.height = 0;
    ui.line.hidden = false;
    ui.colorbarBox.hidden = true;
    fitCanvas(ui.axes, 0, 0);
    const W = Math.max(360, Math.min(860, ui.plotArea.parentElement.clientWidth - 20)), H = 340;
    ui.plotArea.style.width = `${W}px`; ui.plotArea.style.height = `${H}px`;
    const axis = s.displayAxes[0];
    const it = s.sel[axis];
    let lo = vmin, hi = vmax;
    // a line plot shows every value: its automatic limits are the finite extremes (padded when
    // equal), and the boxes' hints say so
    const r = range(scale === "log" ? s.values.filter((v) => v > 0) : s.values);
    ui.vmin.placeholder = Number.isFinite(r.min) ? numberText(r.min, 7) : "";
    ui.vmax.placeholder = Number.isFinite(r.max) ? numberText(r.max, 7) : "";
    const autoLo = s.inverted || typedLimit(ui.vmin) === null, autoHi = s.inverted || typedLimit(ui.vmax) === null;
    if (autoLo || autoHi) {
      if (autoLo) lo = r.min;
      if (autoHi) hi = r.max;
      if (lo === hi) { lo = scale === "log" ? lo / 2 : lo - 1; hi = scale === "log" ? hi * 2 : hi + 1; }
    }
    s.vmin = lo; s.vmax = hi;
    s.lineMap = drawLine(ui.line, { values: s.values, start: it.start, step: it.step, width: W, height: H,
      vmin: lo, vmax: hi, scale, xLabel: axisLabel(axis), yLabel: s.units ? `value (${s.units})` : "value" });
    ui.line.style.left = "0px"; ui.line.style.top = "0px";
  }
  if (pinned) drawPin();
  exposePreview();
  saveView();
}

// ---- open, list and read ----------------------------------------------------------------------

/** Imports the package and initialises its module, calling `started` (the first open) as
 *  soon as init() is under way: an open called while init is pending sends its first
 *  requests while the module loads (the package's src/io/early.js), one round trip less
 *  before the first picture. */
async function loadWasm(started) {
  try {
    wasm = await import("../pkg/web/chunkwise.js");
    const ready = wasm.default();
    ui.open.disabled = false;
    setState("idle", "Enter the URL of an HDF5 file, a Zarr store, a .b2nd array or a Caterva2 server and press Open.");
    started();
    await ready;
  } catch (e) {
    if (current) current.controller.abort();
    wasm = null;
    ui.open.disabled = true;
    setState("error", "The wasm package is missing or failed to load.");
    showError(new Error(`${e.message || e}. Build it with scripts/build-pkg.sh and serve the ` +
      "repository root so that /pkg/ sits next to /www/."));
    return false;
  }
  return true;
}

function closeAll() {
  if (current) current.controller.abort();
  current = null;
  for (const h of [arr, source?.array, source?.store]) {
    if (h) { try { h.close(); } catch { /* already closed */ } }
  }
  arr = null; arrNode = null; source = null; shown = null;
}

/** The single entry a standalone array source shows: named after its file. */
function arrayNode(url, a) {
  const name = decodeURIComponent(new URL(url).pathname.replace(/\/+$/, "").split("/").pop() || "array");
  let attrs = {}, dims = null;
  try { attrs = a.attrs; dims = a.dims; } catch { /* older package */ }
  return { path: `/${name}`, kind: "array", shape: Array.from(a.shape, Number), dtype: a.dtype, error: null, attrs, dims, standalone: true };
}

/**
 * Whether `url` is a Caterva2 server's URL base: its `api/roots` answers a JSON object of
 * roots, each named with a leading "@" ("@public"). One request, made only when `url` opened
 * as neither a file nor a Zarr store; not counted in the library's traffic (logged apart).
 */
async function isCaterva2(url, signal) {
  const t0 = performance.now();
  let ok = false, bytes = 0;
  try {
    const base = url.endsWith("/") ? url : `${url}/`;
    const r = await fetch(new URL("api/roots", base), { signal });
    const text = r.ok ? await r.text() : "";
    bytes = text.length;
    const roots = text ? JSON.parse(text) : null;
    ok = roots !== null && typeof roots === "object" && !Array.isArray(roots) &&
      Object.keys(roots).length > 0 && Object.keys(roots).every((k) => k.startsWith("@"));
  } catch {
    ok = false;
  }
  addLogRow("detect Caterva2 (api/roots)", { requests: 1, bytes, roundTrips: 1 }, performance.now() - t0);
  return ok;
}

/**
 * Opens `url`: with `view.source` "caterva2" as a Caterva2 server (its roots and datasets as
 * a store); a `.b2nd` as an array; anything else as a store (HDF5 file, Zarr store), as an
 * array when the store open says the source is not a container (UNSUPPORTED), and as a
 * Caterva2 server when it is neither but answers `api/roots` ([`isCaterva2`]).
 * Then shows its tree and previews `view.path` (else the first array with two or more axes;
 * for a Caterva2 server, whose listing has no shapes, its first dataset).
 */
async function openSource(url, view = {}) {
  closeAll();
  const mine = ++seq;
  clearError();
  ui.trafficBody.replaceChildren(); logCount = 0;
  log.open = null; log.reads = [];
  ui.meta.replaceChildren(); ui.controls.hidden = true; ui.stepNote.hidden = true;
  ui.tree.replaceChildren(); ui.attrs.replaceChildren(); ui.attrsPath.textContent = "";
  ui.progress.value = 0; ui.progressText.textContent = "";
  showTotal({ requests: 0, bytes: 0, roundTrips: 0 });
  clearPicture();   // nothing of the previous source stays on screen
  window.chunkwisePreview = undefined;
  notice = "";
  setState("opening", `Opening ${redacted(url)} …`);
  ui.open.disabled = true;
  // Cancel aborts a slow open too (its requests in flight)
  const controller = new AbortController();
  current = { controller, seq: mine };
  ui.cancel.disabled = false;
  const t0 = performance.now();
  let opened;
  let kind = view.source === "caterva2" ? "caterva2" : null;
  try {
    const pathname = new URL(url).pathname;
    let store = null, array = null;
    const open = { cache: "memory", signal: controller.signal };
    if (kind === "caterva2") {
      store = await wasm.RemoteStore.open(url, { ...open, source: "caterva2" });
    } else {
      try {
        if (!/\.b2nd$/i.test(pathname)) {
          try {
            store = await wasm.RemoteStore.open(url, open);
          } catch (e) {
            if (!e || e.code !== "UNSUPPORTED") throw e;
          }
        }
        if (!store) array = await wasm.RemoteArray.open(url, open);
      } catch (e) {
        // Neither a file nor a Zarr store here: a Caterva2 server's URL base answers api/roots.
        if (!e || !["UNRECOGNISED_FORMAT", "NOT_FOUND"].includes(e.code) ||
          !(await isCaterva2(url, controller.signal))) throw e;
        kind = "caterva2";
        store = await wasm.RemoteStore.open(url, { ...open, source: "caterva2" });
      }
    }
    opened = { store, array };
  } catch (e) {
    if (mine !== seq) return;
    current = null;
    ui.open.disabled = false;
    ui.cancel.disabled = true;
    if (controller.signal.aborted) {
      setState("cancelled", "Open cancelled.");
      ui.error.hidden = false;
      ui.error.dataset.code = "CANCELLED";
      ui.error.textContent = "CANCELLED: the open was cancelled";
    } else {
      setState("error", "Open failed.");
      showError(e);
    }
    return;
  }
  if (mine !== seq) { for (const h of Object.values(opened)) h?.close(); return; }
  current = null;
  ui.cancel.disabled = true;
  ui.open.disabled = false;
  const ms = performance.now() - t0;
  const counter = opened.store || opened.array;
  const nodes = opened.store ? Array.from(opened.store.nodes) : [arrayNode(url, opened.array)];
  source = { url, store: opened.store, array: opened.array, counter, nodes, selectedPath: null,
    addressUrl: view.addressUrl ?? redacted(url, { forAddress: true }), kind: kind ?? "detected" };
  ui.source.value = kind === "caterva2" ? "caterva2" : "auto";
  const t = trafficNow();
  log.open = { ...t, ms };
  addLogRow("open", t, ms);
  showTotal(t);
  source.tree = opened.store ? nest(nodes) : { node: nodes[0], name: nodes[0].path.slice(1), children: [] };
  if (opened.store && nodes.length === 1 && nodes[0].kind === "array") {
    // a Zarr array as its own store: one entry, named after its URL
    source.tree.name = decodeURIComponent(new URL(url).pathname.replace(/\/+$/, "").split("/").pop() || "/");
  }
  renderTree(ui.tree, source.tree, { onSelect: (n) => selectNode(n, {}), collapsed });

  // A Caterva2 listing names datasets without their shapes (store.get reads them).
  const readable = nodes.filter((n) => n.kind === "array" && !n.error &&
    (Array.isArray(n.shape) || (kind === "caterva2" && n.shape == null)));
  let target = view.path ? nodes.find((n) => n.path === view.path) : null;
  if (!target && !opened.store) target = nodes[0];
  if (!target) target = readable.find((n) => Array.isArray(n.shape) && n.shape.length >= 2) || readable[0] || null;
  if (view.path && (!target || target.path !== view.path)) {
    notice = `${view.path} is not in this source${target ? `; ${target.path} is shown` : ""}.`;
    ui.stepNote.hidden = false;
    ui.stepNote.textContent = notice;
  }
  if (!target) {
    const root = nodes.find((n) => n.path === "/");
    if (root) showAttrs("/", root.attrs, root.dims);
    setState("listed", `Listed ${nodes.length} node${nodes.length === 1 ? "" : "s"}; no readable array.`);
    return;
  }
  await selectNode(target, view);
}

/**
 * Shows node `n`: its attributes; for an array, opens it (store.get) and previews the
 * selection `view.sel` (else the default: last two axes, leading indices 0).
 */
async function selectNode(n, view = {}) {
  if (!source) return;
  const mine = ++seq;
  if (current) current.controller.abort();
  current = null;
  source.selectedPath = n.path;
  markSelected(ui.tree, n.path);
  showAttrs(n.path, n.attrs, n.dims);
  if (n.kind !== "array") {   // a group, a table or a link: its attributes (a link's reason is in the tree)
    const message = n.error ? `${n.path}: ${n.error}`
      : n.kind === "table" ? `${n.path}: a table of ${n.shape[0]} rows; choose a column (under _cols) to preview it.`
      : `${n.path}: a group; choose an array to preview it.`;
    setState(arr ? document.body.dataset.state : "listed", message);
    if (!arr) saveView();
    return;
  }
  // a different array: nothing of the previous one stays on screen
  if (arr && arr !== source.array) { try { arr.close(); } catch { /* closed */ } }
  arr = null; arrNode = null;
  clearPicture();
  ui.meta.replaceChildren(); ui.controls.hidden = true; ui.stepNote.hidden = true;
  window.chunkwisePreview = undefined;
  clearError();
  let a;
  if (source.array) a = source.array;
  else {
    setState("opening", `Opening ${n.path} …`);
    const before = trafficNow();
    const t0 = performance.now();
    try {
      a = await source.store.get(n.path);
    } catch (e) {
      if (mine !== seq) return;
      addLogRow(`get ${n.path}`, diff(trafficNow(), before), performance.now() - t0, "error");
      setState("error", `${n.path} cannot be read.`);
      showError(e);
      saveView();
      return;
    }
    if (mine !== seq) { a.close(); return; }
    addLogRow(`get ${n.path}`, diff(trafficNow(), before), performance.now() - t0);
    showTotal(trafficNow());
  }
  arr = a; arrNode = n;
  arrShape = Array.from(a.shape, Number);
  showMeta(a.info);
  let attrs = n.attrs, dims = n.dims;
  try { attrs = a.attrs; dims = a.dims ?? n.dims; } catch { /* older package */ }
  showAttrs(n.path, attrs, dims);
  items = defaultItems(arrShape);
  transpose = false;
  if (view.sel != null) {
    try {
      items = parseSelection(view.sel, arrShape);
      transpose = Boolean(view.transpose) && sliceAxes(items).length === 2;
    } catch (e) {
      // the default is read instead; the reason stays shown with that read's notes
      notice = `The selection "${view.sel}" in the address cannot be shown (${e.message}); the default is shown.`;
    }
  }
  fixed = items.map((it) => (it.kind === "index" ? it.index : 0));
  buildControls();
  await readSlice();
}

async function readSlice() {
  if (!arr || !source) return;
  const a = arr, node = arrNode;
  if (current) current.controller.abort();
  const controller = new AbortController();
  const mine = ++seq;
  current = { controller, seq: mine };
  const axes = sliceAxes(items);
  const bounded = boundSteps(items, axes.length === 1 ? MAX_LINE : MAX_SIDE);
  const text = formatSelection(bounded.items, arrShape);
  ui.selection.textContent = text || "(scalar)";
  clearError();
  saveView();
  if (axes.length > 2) {
    current = null;
    clearPicture();
    setState("error", "Choose at most two axes to display.");
    showError(new SelectionError(`[${text}] selects ${axes.length} axes: give an index for all but one or two`));
    return;
  }
  ui.cancel.disabled = false;
  ui.plotArea.classList.add("stale");   // the old picture is dimmed until the new one replaces it
  setState("reading", `Reading ${node.path} [${text}] …`);
  const before = trafficNow();
  const t0 = performance.now();
  const info = a.info;
  const meanChunk = Number(info.nchunks) > 0 && Number(info.cbytes) > 0 ? Number(info.cbytes) / Number(info.nchunks) : 0;
  const prog = { done: 0, total: 0 };
  const showProgress = () => {
    if (mine !== seq) return;
    const bytes = trafficNow().bytes - before.bytes;
    // the bar: bytes received against the expected compressed size of the chunks to fetch
    // (mean stored chunk size x chunks), else the fraction of chunks decoded
    const expected = prog.total * meanChunk;
    const frac = expected > 0 ? Math.min(1, bytes / expected) : (prog.total ? prog.done / prog.total : 0);
    ui.progress.max = 1; ui.progress.value = Math.max(frac, prog.total ? prog.done / prog.total : 0);
    ui.progress.dataset.bytes = String(bytes);
    ui.progressText.dataset.bytes = String(bytes);
    ui.progressText.textContent = `${bytesText(bytes)} received` +
      (prog.total ? ` · ${prog.done} / ${prog.total} chunks` : "");
  };
  ui.progress.value = 0; ui.progressText.textContent = "";
  showProgress();
  const timer = setInterval(showProgress, PROGRESS_POLL_MS);
  let result;
  try {
    result = await a.read(text, {
      signal: controller.signal,
      onProgress: ({ done, total }) => { prog.done = done; prog.total = total; showProgress(); },
    });
  } catch (e) {
    clearInterval(timer);
    const ms = performance.now() - t0;
    const cancelled = controller.signal.aborted || (e && (e.code === "CANCELLED" || e.name === "AbortError"));
    if (a === arr) {   // not closed by a newer open
      addLogRow(`read ${text}`, diff(trafficNow(), before), ms, cancelled ? "cancelled" : "error");
      showTotal(trafficNow());
    }
    if (mine !== seq) return;   // superseded by a newer read: that one reports
    showProgress();
    current = null;
    ui.cancel.disabled = true;
    clearPicture();   // no stale picture under a title it no longer matches
    window.chunkwisePreview = undefined;
    if (cancelled) {
      setState("cancelled", "Read cancelled.");
      ui.error.hidden = false;
      ui.error.dataset.code = "CANCELLED";
      ui.error.textContent = "CANCELLED: the read was cancelled";
    } else {
      setState("error", "Read failed.");
      showError(e);
    }
    return;
  }
  clearInterval(timer);
  const ms = performance.now() - t0;
  if (a !== arr) return;
  const after = trafficNow();
  const delta = diff(after, before);
  addLogRow(`read ${text}`, delta, ms);
  showTotal(after);
  log.reads.push({ selection: text, ...delta, ms });
  if (mine !== seq) return;
  prog.done = prog.total; showProgress();
  current = null;
  ui.cancel.disabled = true;
  render(result, { items: bounded.items, stepped: bounded.stepped, text, axes }, delta, after);
}

function render(result, sel, delta, total) {
  const { data, dtype } = result;
  const shape = Array.from(result.shape, Number);
  const nums = toNumbers(data, dtype);
  clearPicture();
  const notes = notice ? [notice] : [];
  notice = "";
  const dims = arrDims();
  let units = null;
  try { const u = arr.attrs?.units; if (typeof u === "string") units = u; } catch { /* none */ }
  shown = { data, dtype, shape, sel: sel.items, selText: sel.text, dims, units, plot: "none",
    factors: Object.fromEntries(sel.stepped.map((st) => [st.axis, st.factor])),
    values: nums ? nums.values : [], rows: 0, cols: 0, index: () => 0, displayAxes: sel.axes };
  // a Zarr array opened as its own store is its root "/": named as the tree names it
  const name = arrNode.path === "/" && source.tree?.node === arrNode ? source.tree.name : arrNode.path;
  ui.title.textContent = `${name} [${sel.text || "()"}]`;
  if (!nums) {
    shown.plot = "text";
    ui.valuesText.hidden = false;
    const list = Array.from(data).slice(0, 200).map((v) => attrText(v, 1));
    ui.valuesText.textContent = list.join("\n") + (data.length > 200 ? `\n… (${fmt.format(data.length)} values)` : "");
    notes.push(`${dtype} values are listed, not plotted.`);
  } else if (shape.length === 0 || nums.values.length === 0) {
    shown.plot = shape.length === 0 ? "scalar" : "none";
    if (shape.length === 0) ui.hover.textContent = `[${items.map((it) => it.index).join(", ")}] = ${rawText(data, dtype, 0)}`;
    else notes.push("The selection is empty (an axis of length 0): nothing to draw.");
  } else if (shape.length === 1) {
    shown.plot = "line";
    shown.rows = 1; shown.cols = shape[0]; shown.index = (r, k) => k;
  } else if (shape.length === 2) {
    shown.plot = "heatmap";
    const [a0, a1] = sel.axes;
    if (!transpose) {
      shown.rows = shape[0]; shown.cols = shape[1]; shown.index = (r, k) => r * shape[1] + k;
      shown.displayAxes = [a0, a1];
    } else {
      shown.rows = shape[1]; shown.cols = shape[0]; shown.index = (r, k) => k * shape[1] + r;
      shown.displayAxes = [a1, a0];
    }
  }
  const { min, max, nan } = nums ? range(nums.values) : { min: NaN, max: NaN, nan: 0 };
  Object.assign(shown, { min, max, nan, delta, total });
  if (sel.stepped.length) {
    notes.push(`Large array: read with ${sel.stepped.map((s) => `step ${sel.items[s.axis].step} along axis ${s.axis}`).join(" and ")}` +
      ` (${shape.join(" × ")} shown of ${sel.axes.map((a) => sliceLength(items[a])).join(" × ")}).`);
  }
  if (nums && nums.note) notes.push(nums.note);
  if (nan) notes.push(`${fmt.format(nan)} NaN value${nan > 1 ? "s" : ""} shown in magenta${shown.plot === "line" ? " (gaps)" : ""}.`);
  ui.stepNote.hidden = notes.length === 0;
  ui.stepNote.textContent = notes.join(" ");
  redraw();
  if (shown.plot !== "line" && shown.plot !== "heatmap") { exposePreview(); saveView(); }
  const n = nums ? nums.values.length : data.length;
  setState("ready", `Read ${shape.length ? shape.join(" × ") : "one"} ${dtype} value${n === 1 ? "" : "s"} ` +
    `in ${fmt.format(delta.requests)} request${delta.requests === 1 ? "" : "s"} ` +
    `(${fmt.format(delta.bytes)} bytes).`);
}

/** window.chunkwisePreview: what was read and how it is drawn. */
function exposePreview() {
  const s = shown;
  if (!s || !log.open) return;
  const values = s.values && s.values.subarray ? s.values.subarray(0, EXPOSED_VALUES) : [];
  window.chunkwisePreview = {
    url: source.url,
    path: arrNode ? arrNode.path : null,
    arrayShape: arrShape.slice(),
    selection: s.selText,
    shape: s.shape,
    dtype: s.dtype,
    size: s.values.length ?? 0,
    values: Array.from(values),
    min: s.min, max: s.max, nan: s.nan,
    plot: s.plot,
    image: { rows: s.rows, cols: s.cols },
    cmap: s.cmap ?? ui.cmap.value, scale: s.scale ?? ui.scale.value,
    vmin: s.vmin ?? null, vmax: s.vmax ?? null, auto: s.auto ?? null, bad: s.bad ?? 0,
    dims: s.dims ?? null,
    // the axis labels drawn (dimension names, else "axis N")
    labels: s.plot === "heatmap" ? { x: axisLabel(s.displayAxes[1]), y: axisLabel(s.displayAxes[0]) }
      : s.plot === "line" ? { x: axisLabel(s.displayAxes[0]), y: s.units ? `value (${s.units})` : "value" } : null,
    // requests and bytes of open, of this read and since open (what .traffic said)
    traffic: {
      open: { requests: log.open.requests, bytes: log.open.bytes },
      read: { requests: s.delta.requests, bytes: s.delta.bytes },
      reads: log.reads.map((r) => ({ selection: r.selection, requests: r.requests, bytes: r.bytes })),
      total: { requests: s.total.requests, bytes: s.total.bytes },
    },
    // sequential round trips of the same steps
    roundTrips: { open: log.open.roundTrips, read: s.delta.roundTrips, total: s.total.roundTrips },
  };
}

// ---- readout ----------------------------------------------------------------------------------

/** The element under a pointer event: { r, k } in the plot's cells, or null. */
function cellAt(ev) {
  const s = shown;
  if (!s) return null;
  if (s.plot === "heatmap") {
    const rect = ui.heatmap.getBoundingClientRect();
    const k = Math.floor(((ev.clientX - rect.left) / rect.width) * s.cols);
    const r = Math.floor(((ev.clientY - rect.top) / rect.height) * s.rows);
    return r < 0 || k < 0 || r >= s.rows || k >= s.cols ? null : { r, k };
  }
  if (s.plot === "line" && s.lineMap) {
    const rect = ui.line.getBoundingClientRect();
    const x = ev.clientX - rect.left - s.lineMap.box.left;
    if (x < -4 || x > s.lineMap.box.width + 4) return null;
    const n = s.lineMap.n;
    const k = n > 1 ? Math.round((x / s.lineMap.box.width) * (n - 1)) : 0;
    return { r: 0, k: Math.min(n - 1, Math.max(0, k)) };
  }
  return null;
}

/** The readout of cell (r, k): its position in the whole array and its value. */
function readoutText({ r, k }) {
  const s = shown;
  const pos = s.sel.map((it) => (it.kind === "index" ? it.index : it.start));
  const [rowAxis, colAxis] = s.displayAxes;
  if (s.plot === "line") pos[rowAxis] = s.sel[rowAxis].start + k * s.sel[rowAxis].step;
  else {
    pos[rowAxis] = s.sel[rowAxis].start + r * s.sel[rowAxis].step;
    pos[colAxis] = s.sel[colAxis].start + k * s.sel[colAxis].step;
  }
  return `[${pos.join(", ")}] = ${rawText(s.data, s.dtype, s.index(r, k))}`;
}

function drawPin() {
  const s = shown;
  if (!s || !pinned) return;
  if (s.plot === "heatmap") {
    redrawAxesOnly();
    const ctx = ui.axes.getContext("2d");
    drawMarker(ctx, s.box.left + (pinned.k + 0.5) * s.box.cellW, s.box.top + (pinned.r + 0.5) * s.box.cellH);
  } else if (s.plot === "line" && s.lineMap) {
    const v = s.values[pinned.k];
    if (Number.isFinite(v)) {
      const ctx = ui.line.getContext("2d");
      drawMarker(ctx, s.lineMap.box.left + s.lineMap.xAt(pinned.k), s.lineMap.box.top + s.lineMap.yAt(v));
    }
  }
}

function redrawAxesOnly() {
  const s = shown;
  const W = s.box.width + MARGIN.left + MARGIN.right, H = s.box.height + MARGIN.top + MARGIN.bottom;
  const ctx = fitCanvas(ui.axes, W, H);
  const [rowAxis, colAxis] = s.displayAxes;
  const ri = s.sel[rowAxis], ci = s.sel[colAxis];
  drawAxes(ctx, s.box,
    { label: axisLabel(colAxis), ticks: indexTicks(s.cols, s.box.cellW, ci.start, ci.step) },
    { label: axisLabel(rowAxis), ticks: indexTicks(s.rows, s.box.cellH, ri.start, ri.step) });
}

function onHover(ev) {
  if (!shown || pinned) return;   // a pinned readout stays until released
  const c = cellAt(ev);
  if (c) ui.hover.textContent = readoutText(c);   // kept when the pointer stops or leaves
}

function onClick(ev) {
  if (!shown) return;
  const c = cellAt(ev);
  if (pinned && (!c || (c.r === pinned.r && c.k === pinned.k))) {
    pinned = null;
    ui.hoverPin.hidden = true;
    redraw();
    if (c) ui.hover.textContent = readoutText(c);
    return;
  }
  if (!c) return;
  pinned = c;
  ui.hover.textContent = readoutText(c);
  ui.hoverPin.hidden = false;
  if (shown.plot === "line") redraw(); else drawPin();
}

// ---- wiring -----------------------------------------------------------------------------------

/** Reads the selection typed in the box (`force`: even when it is the current one, as Enter does). */
function applySelectionText({ force = false } = {}) {
  if (!arr) return;
  try {
    const next = parseSelection(ui.selInput.value, arrShape);
    // the box's change event also fires on blur (pressing Cancel, say) after Enter read it
    if (!force && formatSelection(next, arrShape) === formatSelection(items, arrShape)) return;
    items = next;
    const axes = sliceAxes(items);
    transpose = transpose && axes.length === 2;
    fixed = items.map((it, a) => (it.kind === "index" ? it.index : fixed[a] ?? 0));
    buildControls();
    readSlice();
  } catch (e) {
    showError(e);
  }
}

/** A node path as the listing spells it: one leading "/", no trailing one ("entry/data/" is "/entry/data", as h5py takes it). */
function normalPath(p) {
  const t = `/${p.trim()}`.replace(/\/{2,}/g, "/");
  return t.length > 1 ? t.replace(/\/+$/, "") : t;
}

function startFromAddress() {
  const view = viewParams();
  const url = view.url ? new URL(view.url, location.href).href : new URL(DEFAULT_SAMPLE, location.href).href;
  if (!view.url && !view.path) view.path = DEFAULT_PATH;
  if (view.path) view.path = normalPath(view.path);
  if (view.cmap && COLORMAPS[view.cmap]) ui.cmap.value = view.cmap;
  if (view.scale === "log" || view.scale === "linear") ui.scale.value = view.scale;
  ui.vmin.value = view.vmin ?? "";
  ui.vmax.value = view.vmax ?? "";
  ui.url.value = url;
  ui.source.value = view.source === "caterva2" ? "caterva2" : "auto";
  if (view.url) view.addressUrl = view.url;   // given in the address: kept as given
  openSource(url, view);
}

ui.form.addEventListener("submit", (ev) => {
  ev.preventDefault();
  if (!wasm) return;
  openSource(ui.url.value.trim(), { source: ui.source.value });
});
ui.cancel.addEventListener("click", () => { if (current) current.controller.abort(); });
ui.rowAxis.addEventListener("change", () => onAxesChange(ui.rowAxis));
ui.colAxis.addEventListener("change", () => onAxesChange(ui.colAxis));
ui.selInput.addEventListener("keydown", (ev) => { if (ev.key === "Enter") { ev.preventDefault(); applySelectionText({ force: true }); } });
ui.selInput.addEventListener("change", () => applySelectionText());
for (const el of [ui.cmap, ui.scale]) el.addEventListener("change", redraw);
for (const el of [ui.vmin, ui.vmax]) el.addEventListener("change", redraw);
ui.auto.addEventListener("click", () => { ui.vmin.value = ""; ui.vmax.value = ""; redraw(); });
for (const c of [ui.heatmap, ui.line]) {
  c.addEventListener("mousemove", onHover);
  c.addEventListener("click", onClick);
}
drawColorbar(ui.colorbar, ui.cmap.value);
clearPicture();
loadWasm(startFromAddress);
