// chunkwise preview page: opens a remote array with the wasm package, shows its metadata, draws
// a 2-D slice as a heatmap and logs the network traffic of every step.
//
// State for automation: document.body.dataset.state is "loading", "idle", "opening", "reading",
// "ready", "cancelled" or "error"; after each read window.chunkwisePreview holds what was read.

import * as status from "./status.js";
const MAX_SIDE = 1024;          // largest displayed extent per axis; bigger axes are read with a step
const EXPOSED_VALUES = 65536;   // values of the last read copied into window.chunkwisePreview
const NAN_RGB = [255, 0, 170];  // outside the colour map, so NaN stands out

const $ = (id) => document.getElementById(id);
const ui = {
  form: $("open-form"), url: $("url"), open: $("open"), cancel: $("cancel"),
  status: $("status"), error: $("error"), meta: $("meta"),
  controls: $("controls"), rowAxis: $("row-axis"), colAxis: $("col-axis"), sliders: $("sliders"),
  selection: $("selection"), progress: $("progress"), progressText: $("progress-text"),
  stepNote: $("step-note"), heatmap: $("heatmap"), colorbar: $("colorbar"),
  cbMin: $("cb-min"), cbMax: $("cb-max"), cbNan: $("cb-nan"), hover: $("hover"),
  trafficBody: document.querySelector("#traffic tbody"),
  totalRequests: $("total-requests"), totalBytes: $("total-bytes"), totalRoundTrips: $("total-round-trips"),
};

let wasm = null;          // the package module once initialised
let arr = null;           // the open RemoteArray
let arrShape = [];        // its shape
let fixed = [];           // index per non-displayed axis (by axis number)
let current = null;       // { controller, seq } of the read in flight
let seq = 0;              // increases with every read started
let shown = null;         // what the canvas shows (for hover)
let logCount = 0;
const log = { open: null, reads: [] };

const fmt = new Intl.NumberFormat("en-US");

function setState(state, message) { status.setState(ui, state, message); }
function showError(err) { status.showError(ui, err); }
function clearError() { status.clearError(ui); }

// ---- colour map -------------------------------------------------------------------------------

// A viridis-like map: polynomial fit of matplotlib's viridis, evaluated into a 256-entry table.
const LUT = (() => {
  const c = [
    [0.2777273272234177, 0.005407344544966578, 0.3340998053353061],
    [0.1050930431085774, 1.404613529898575, 1.384590162594685],
    [-0.3308618287255563, 0.214847559468213, 0.09509516302823659],
    [-4.634230498983486, -5.799100973351585, -19.33244095627987],
    [6.228269936347081, 14.17993336680509, 56.69055260068105],
    [4.776384997670288, -13.74514537774601, -65.35303263337234],
    [-5.435455855934631, 4.645852612178535, 26.3124352495832],
  ];
  const lut = new Uint8ClampedArray(256 * 3);
  for (let i = 0; i < 256; i++) {
    const t = i / 255;
    for (let k = 0; k < 3; k++) {
      let v = c[6][k];
      for (let j = 5; j >= 0; j--) v = v * t + c[j][k];
      lut[i * 3 + k] = Math.round(Math.min(1, Math.max(0, v)) * 255);
    }
  }
  return lut;
})();

function drawColorbar() {
  const ctx = ui.colorbar.getContext("2d");
  const { width, height } = ui.colorbar;
  const img = ctx.createImageData(width, height);
  for (let y = 0; y < height; y++) {
    const i = Math.round((1 - y / (height - 1)) * 255);
    for (let x = 0; x < width; x++) {
      const o = (y * width + x) * 4;
      img.data[o] = LUT[i * 3]; img.data[o + 1] = LUT[i * 3 + 1]; img.data[o + 2] = LUT[i * 3 + 2];
      img.data[o + 3] = 255;
    }
  }
  ctx.putImageData(img, 0, 0);
}

// ---- values -----------------------------------------------------------------------------------

function halfToFloat(h) {
  const s = h & 0x8000 ? -1 : 1;
  const e = (h >> 10) & 0x1f;
  const f = h & 0x3ff;
  if (e === 0) return s * 2 ** -14 * (f / 1024);
  if (e === 31) return f ? NaN : s * Infinity;
  return s * 2 ** (e - 15) * (1 + f / 1024);
}

// Plain numbers for display, one per element, and a description of any conversion.
function toNumbers(data, dtype) {
  const kind = dtype[1];
  const size = Number(dtype.slice(2));
  if (kind === "c") {
    const n = data.length / 2;
    const out = new Float64Array(n);
    for (let i = 0; i < n; i++) out[i] = Math.hypot(data[2 * i], data[2 * i + 1]);
    return { values: out, note: "complex values: magnitude shown" };
  }
  if (kind === "f" && size === 2) return { values: Float64Array.from(data, halfToFloat), note: "" };
  if (typeof data[0] === "bigint") return { values: Float64Array.from(data, Number), note: "" };
  return { values: data, note: "" };
}

function rawText(data, dtype, i) {
  const kind = dtype[1];
  if (kind === "c") return `${data[2 * i]}${data[2 * i + 1] < 0 ? "-" : "+"}${Math.abs(data[2 * i + 1])}j`;
  if (kind === "f" && dtype.slice(2) === "2") return String(halfToFloat(data[i]));
  if (kind === "f" && dtype.slice(2) === "4") return f32Text(data[i]);
  if (kind === "b") return data[i] ? "True" : "False";
  return String(data[i]);
}

// Shortest decimal text that reads back as the same float32.
function f32Text(v) {
  if (!Number.isFinite(v)) return String(v);
  for (let p = 1; p < 9; p++) {
    const t = Number(v.toPrecision(p));
    if (Math.fround(t) === v) return String(t);
  }
  return String(v);
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

// ---- metadata and controls --------------------------------------------------------------------

function bytesText(n) {
  n = Number(n);
  if (n < 1024) return `${fmt.format(n)} B`;
  const units = ["KiB", "MiB", "GiB", "TiB"];
  let v = n, u = -1;
  while (v >= 1024 && u < units.length - 1) { v /= 1024; u++; }
  return `${v.toFixed(v < 10 ? 2 : 1)} ${units[u]} (${fmt.format(n)} B)`;
}

function showMeta(info) {
  const rows = [
    ["format", info.format],
    ["shape", `(${info.shape.join(", ")})`],
    ["dtype", info.dtype],
    ["chunks", `(${info.chunks.join(", ")})`],
    ["blocks", `(${info.blocks.join(", ")})`],
    ["codecs", info.codecs],
    ["chunk count", fmt.format(Number(info.nchunks))],
    ["size", bytesText(info.nbytes)],
    ["compressed", `${bytesText(info.cbytes)}${Number(info.cbytes) > 0
      ? ` · ratio ${(Number(info.nbytes) / Number(info.cbytes)).toFixed(2)}` : ""}`],
    ["source", bytesText(info.source_bytes)],
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

function buildControls() {
  const nd = arrShape.length;
  fixed = arrShape.map(() => 0);
  ui.controls.hidden = nd === 0;
  for (const sel of [ui.rowAxis, ui.colAxis]) {
    sel.replaceChildren();
    for (let a = 0; a < nd; a++) {
      const o = document.createElement("option");
      o.value = String(a);
      o.textContent = `axis ${a} (${arrShape[a]})`;
      sel.append(o);
    }
  }
  ui.rowAxis.parentElement.parentElement.hidden = nd < 2;
  ui.rowAxis.value = String(Math.max(0, nd - 2));
  ui.colAxis.value = String(Math.max(0, nd - 1));
  buildSliders();
}

function displayedAxes() {
  const nd = arrShape.length;
  if (nd === 0) return [];
  if (nd === 1) return [0];
  return [Number(ui.rowAxis.value), Number(ui.colAxis.value)];
}

function buildSliders() {
  ui.sliders.replaceChildren();
  const shown = displayedAxes();
  arrShape.forEach((n, a) => {
    if (shown.includes(a)) return;
    const row = document.createElement("label");
    row.className = "slider";
    row.textContent = `axis ${a} `;
    const range = document.createElement("input");
    range.type = "range"; range.min = "0"; range.max = String(n - 1); range.value = String(fixed[a]);
    range.id = `axis-${a}-range`; range.dataset.axis = String(a);
    const num = document.createElement("input");
    num.type = "number"; num.min = "0"; num.max = String(n - 1); num.value = String(fixed[a]);
    num.id = `axis-${a}-index`; num.dataset.axis = String(a);
    const set = (v) => {
      v = Math.min(n - 1, Math.max(0, Math.trunc(Number(v)) || 0));
      if (v === fixed[a]) return;
      fixed[a] = v; range.value = String(v); num.value = String(v);
      readSlice();
    };
    range.addEventListener("input", () => set(range.value));
    num.addEventListener("change", () => set(num.value));
    row.append(range, num, document.createTextNode(` of ${n}`));
    ui.sliders.append(row);
  });
}

function onAxesChange(changed) {
  const other = changed === ui.rowAxis ? ui.colAxis : ui.rowAxis;
  if (ui.rowAxis.value === ui.colAxis.value) {
    // keep two distinct axes: move the other one to the first free axis
    const free = arrShape.findIndex((_, a) => String(a) !== changed.value);
    other.value = String(free);
  }
  buildSliders();
  readSlice();
}

// The selection for the current controls: a step on displayed axes larger than MAX_SIDE.
function currentSelection() {
  const axes = displayedAxes();
  const steps = arrShape.map((n, a) => (axes.includes(a) ? Math.max(1, Math.ceil(n / MAX_SIDE)) : 1));
  const items = arrShape.map((n, a) => {
    if (!axes.includes(a)) return String(fixed[a]);
    return steps[a] > 1 ? `::${steps[a]}` : ":";
  });
  return { text: items.join(", "), axes, steps };
}

// ---- traffic log ------------------------------------------------------------------------------

function addLogRow(step, delta, ms, status) {
  logCount += 1;
  const tr = document.createElement("tr");
  tr.dataset.step = step;
  tr.dataset.requests = String(delta.requests);
  tr.dataset.bytes = String(delta.bytes);
  tr.dataset.roundTrips = String(delta.roundTrips);
  if (status) tr.dataset.status = status;
  const cells = [String(logCount), step, fmt.format(delta.requests), fmt.format(delta.bytes),
    fmt.format(delta.roundTrips), ms.toFixed(0)];
  cells.forEach((text, i) => {
    const td = document.createElement("td");
    td.textContent = text;
    if (i === 1) { td.className = "step"; td.title = step; }
    tr.append(td);
  });
  if (status) tr.classList.add(status);
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

function trafficNow(a = arr) {
  const t = a.traffic;
  return { requests: Number(t.requests), bytes: Number(t.bytes), roundTrips: Number(t.roundTrips ?? 0) };
}

const diff = (a, b) => ({
  requests: a.requests - b.requests, bytes: a.bytes - b.bytes, roundTrips: a.roundTrips - b.roundTrips,
});

// ---- drawing ----------------------------------------------------------------------------------

function clearPicture() {
  ui.heatmap.width = 0; ui.heatmap.height = 0;
  ui.heatmap.style.width = "0px"; ui.heatmap.style.height = "0px";
  ui.cbMin.textContent = ""; ui.cbMax.textContent = ""; ui.cbNan.hidden = true;
}

function draw(values, rows, cols, index, min, max) {
  const c = ui.heatmap;
  if (!rows || !cols) { clearPicture(); return; }   // an empty selection has no picture
  c.width = cols; c.height = rows;
  const ctx = c.getContext("2d");
  const img = ctx.createImageData(cols, rows);
  const span = max - min;
  for (let r = 0; r < rows; r++) {
    for (let k = 0; k < cols; k++) {
      const v = values[index(r, k)];
      const o = (r * cols + k) * 4;
      let rgb;
      if (Number.isNaN(v)) rgb = NAN_RGB;
      else {
        let t = span > 0 ? (v - min) / span : 0.5;
        if (!(t >= 0)) t = 0; else if (t > 1) t = 1;   // also clamps infinities
        const i = Math.round(t * 255) * 3;
        rgb = [LUT[i], LUT[i + 1], LUT[i + 2]];
      }
      img.data[o] = rgb[0]; img.data[o + 1] = rgb[1]; img.data[o + 2] = rgb[2]; img.data[o + 3] = 255;
    }
  }
  ctx.putImageData(img, 0, 0);
  // CSS size: fit in the view box, keep square pixels; small arrays are enlarged crisply.
  const box = Math.min(640, Math.max(240, ui.heatmap.parentElement.clientWidth - 120));
  const scale = Math.min(box / cols, box / rows);
  c.style.width = `${Math.max(1, Math.round(cols * scale))}px`;
  // a single row (1-D arrays) is drawn as a band, not a hairline
  c.style.height = `${Math.max(rows === 1 ? 32 : 1, Math.round(rows * scale))}px`;
}

function labelText(v) {
  if (Number.isNaN(v)) return "NaN";
  if (Number.isInteger(v)) return String(v);
  const a = Math.abs(v);
  return a !== 0 && (a < 1e-3 || a >= 1e6) ? v.toExponential(4) : String(Number(v.toPrecision(6)));
}

// ---- open and read ----------------------------------------------------------------------------

async function loadWasm() {
  try {
    wasm = await import("../pkg/web/chunkwise.js");
    await wasm.default();
  } catch (e) {
    setState("error", "The wasm package is missing or failed to load.");
    showError(new Error(`${e.message || e}. Build it with scripts/build-pkg.sh and serve the ` +
      "repository root so that /pkg/ sits next to /www/."));
    return;
  }
  ui.open.disabled = false;
  setState("idle", "Enter the URL of a .b2nd array and press Open.");
}

async function openArray(url) {
  if (current) current.controller.abort();
  if (arr) { try { arr.close(); arr.free(); } catch { /* already closed */ } }
  arr = null; shown = null;
  clearError();
  ui.trafficBody.replaceChildren(); logCount = 0;
  log.open = null; log.reads = [];
  ui.meta.replaceChildren(); ui.controls.hidden = true; ui.stepNote.hidden = true;
  showTotal({ requests: 0, bytes: 0, roundTrips: 0 });
  clearPicture();   // nothing of the previous array stays on screen
  window.chunkwisePreview = undefined;
  setState("opening", `Opening ${url} …`);
  ui.open.disabled = true;
  const t0 = performance.now();
  let opened;
  try {
    opened = await wasm.RemoteArray.open(url, { cache: "memory" });
  } catch (e) {
    ui.open.disabled = false;
    setState("error", "Open failed.");
    showError(e);
    return;
  }
  ui.open.disabled = false;
  arr = opened;
  const ms = performance.now() - t0;
  arrShape = Array.from(arr.shape, Number);
  const info = arr.info;
  showMeta(info);
  const t = trafficNow();
  log.open = { ...t, ms };
  addLogRow("open", t, ms);
  showTotal(t);
  buildControls();
  await readSlice();
}

async function readSlice() {
  if (!arr) return;
  const a = arr;
  if (current) current.controller.abort();
  const controller = new AbortController();
  const mine = ++seq;
  current = { controller, seq: mine };
  const sel = currentSelection();
  ui.selection.textContent = sel.text || "(scalar)";
  clearError();
  ui.cancel.disabled = false;
  ui.progress.max = 1; ui.progress.value = 0; ui.progressText.textContent = "";
  setState("reading", `Reading [${sel.text}] …`);
  const before = trafficNow(a);
  const t0 = performance.now();
  let result;
  try {
    result = await a.read(sel.text, {
      signal: controller.signal,
      onProgress: ({ done, total }) => {
        if (mine !== seq) return;
        ui.progress.max = Math.max(1, total); ui.progress.value = done;
        ui.progressText.textContent = `${done} / ${total} chunks`;
      },
    });
  } catch (e) {
    const ms = performance.now() - t0;
    const cancelled = e && e.code === "CANCELLED";
    if (a === arr) {   // not closed by a newer open
      addLogRow(`read ${sel.text}`, diff(trafficNow(a), before), ms, cancelled ? "cancelled" : "error");
      showTotal(trafficNow(a));
    }
    if (mine !== seq) return;   // superseded by a newer read: that one reports
    current = null;
    ui.cancel.disabled = true;
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
  const ms = performance.now() - t0;
  if (a !== arr) return;
  const after = trafficNow(a);
  const delta = diff(after, before);
  addLogRow(`read ${sel.text}`, delta, ms);
  showTotal(after);
  log.reads.push({ selection: sel.text, ...delta, ms });
  if (mine !== seq) return;
  current = null;
  ui.cancel.disabled = true;
  render(result, sel, delta, after);
}

function render(result, sel, delta, total) {
  const { data, dtype } = result;
  const shape = Array.from(result.shape, Number);
  const { values, note } = toNumbers(data, dtype);
  let { min, max, nan } = range(values);
  // 64-bit integers: colours and labels from exact differences to the minimum, since plain
  // numbers lose the low digits of large values
  let drawn = values, drawMin = min, drawMax = max, minText = labelText(min), maxText = labelText(max);
  if (data.length && typeof data[0] === "bigint") {
    let bmin = data[0], bmax = data[0];
    for (const v of data) { if (v < bmin) bmin = v; if (v > bmax) bmax = v; }
    drawn = Float64Array.from(data, (v) => Number(v - bmin));
    drawMin = 0; drawMax = Number(bmax - bmin);
    minText = bmin.toString(); maxText = bmax.toString();
  }

  // rows x cols of the picture and the flat index of (row, col) in the C-ordered result
  let rows = 1, cols = 1, index = () => 0;
  if (shape.length === 1) { cols = shape[0]; index = (r, k) => k; }
  if (shape.length === 2) {
    const [rowAxis, colAxis] = sel.axes;
    if (rowAxis < colAxis) { rows = shape[0]; cols = shape[1]; index = (r, k) => r * shape[1] + k; }
    else { rows = shape[1]; cols = shape[0]; index = (r, k) => k * shape[1] + r; }
  }
  const notes0 = [];
  draw(drawn, rows, cols, index, drawMin, drawMax);
  if (values.length) {
    ui.cbMin.textContent = minText;
    ui.cbMax.textContent = maxText;
    ui.cbNan.hidden = nan === 0;
  } else {
    notes0.push("The selection is empty (an axis of length 0): nothing to draw.");
  }

  const stepped = sel.axes.filter((a) => sel.steps[a] > 1);
  const notes = notes0;
  if (stepped.length) {
    notes.push(`Large array: read with ${stepped.map((a) => `step ${sel.steps[a]} along axis ${a}`).join(" and ")}` +
      ` (${rows} × ${cols} shown of ${sel.axes.map((a) => arrShape[a]).join(" × ")}).`);
  }
  if (note) notes.push(note);
  if (nan) notes.push(`${fmt.format(nan)} NaN value${nan > 1 ? "s" : ""} shown in magenta.`);
  ui.stepNote.hidden = notes.length === 0;
  ui.stepNote.textContent = notes.join(" ");

  shown = { data, dtype, values, rows, cols, index, sel, shape };
  window.chunkwisePreview = {
    url: ui.url.value,
    arrayShape: arrShape.slice(),
    selection: sel.text,
    shape,
    dtype,
    size: values.length,
    values: Array.from(values.subarray(0, EXPOSED_VALUES)),
    min, max, nan,
    image: { rows, cols },
    // requests and bytes of open, of this read and since open (what RemoteArray.traffic said)
    traffic: {
      open: { requests: log.open.requests, bytes: log.open.bytes },
      read: { requests: delta.requests, bytes: delta.bytes },
      reads: log.reads.map((r) => ({ selection: r.selection, requests: r.requests, bytes: r.bytes })),
      total: { requests: total.requests, bytes: total.bytes },
    },
    // sequential round trips of the same steps
    roundTrips: { open: log.open.roundTrips, read: delta.roundTrips, total: total.roundTrips },
  };
  setState("ready", `Read ${shape.length ? shape.join(" × ") : "one"} ${dtype} value${values.length === 1 ? "" : "s"} ` +
    `in ${fmt.format(delta.requests)} request${delta.requests === 1 ? "" : "s"} ` +
    `(${fmt.format(delta.bytes)} bytes).`);
}

function onHover(ev) {
  if (!shown) return;
  const rect = ui.heatmap.getBoundingClientRect();
  const k = Math.floor(((ev.clientX - rect.left) / rect.width) * shown.cols);
  const r = Math.floor(((ev.clientY - rect.top) / rect.height) * shown.rows);
  if (r < 0 || k < 0 || r >= shown.rows || k >= shown.cols) { ui.hover.innerHTML = "&nbsp;"; return; }
  const i = shown.index(r, k);
  // position in the full array
  const pos = fixed.slice();
  const axes = shown.sel.axes;
  if (axes.length === 1) pos[axes[0]] = k * shown.sel.steps[axes[0]];
  if (axes.length === 2) {
    pos[axes[0]] = r * shown.sel.steps[axes[0]];
    pos[axes[1]] = k * shown.sel.steps[axes[1]];
  }
  ui.hover.textContent = `[${pos.join(", ")}] = ${rawText(shown.data, shown.dtype, i)}`;
}

// ---- wiring -----------------------------------------------------------------------------------

function defaultUrl() {
  const q = new URLSearchParams(location.search).get("url");
  if (q) return new URL(q, location.href).href;
  return new URL("../tests/fixtures/sample/field2d_f4.b2nd", location.href).href;
}

ui.url.value = defaultUrl();
ui.form.addEventListener("submit", (ev) => {
  ev.preventDefault();
  if (!wasm) return;
  const url = ui.url.value.trim();
  const next = new URL(location.href);
  next.searchParams.set("url", url);
  history.replaceState(null, "", next);
  openArray(url);
});
ui.cancel.addEventListener("click", () => { if (current) current.controller.abort(); });
ui.rowAxis.addEventListener("change", () => onAxesChange(ui.rowAxis));
ui.colAxis.addEventListener("change", () => onAxesChange(ui.colAxis));
ui.heatmap.addEventListener("mousemove", onHover);
ui.heatmap.addEventListener("mouseleave", () => { ui.hover.innerHTML = "&nbsp;"; });
drawColorbar();
loadWasm();
