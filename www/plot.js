// Drawing for the preview page on plain canvases: the heatmap of a 2-D slice (one canvas pixel
// per element), its colour bar, axes with tick marks around it, and the line plot of a 1-D
// selection. No chart library: a few hundred lines of canvas calls.

import { COLORMAPS, lutIndex } from "./colormaps.js";

/** Colour of NaN, and of values a log scale cannot show (<= 0): outside every colour map. */
export const BAD_RGB = [255, 0, 170];
/** Room around a plot for tick labels and axis labels, in CSS pixels. */
export const MARGIN = { left: 68, right: 12, top: 10, bottom: 46 };

const FONT = "12px ui-monospace, SFMono-Regular, Menlo, monospace";
const LABEL_FONT = "12.5px system-ui, sans-serif";

/**
 * The `p`-th percentile (0..100) of the finite values of `values` (and > 0 when `positive`),
 * numpy's default ("linear": between the two nearest ranks). Arrays of more than 2^20
 * values are sampled with a constant stride first. NaN when there is no such value.
 */
export function percentiles(values, ps, { positive = false } = {}) {
  const n = values.length;
  const stride = Math.max(1, Math.ceil(n / (1 << 20)));
  const kept = new Float64Array(Math.ceil(n / stride));
  let m = 0;
  for (let i = 0; i < n; i += stride) {
    const v = values[i];
    if (Number.isFinite(v) && (!positive || v > 0)) kept[m++] = v;
  }
  const sorted = kept.subarray(0, m).sort();
  return ps.map((p) => {
    if (m === 0) return NaN;
    const x = (p / 100) * (m - 1);
    const lo = Math.floor(x), hi = Math.min(m - 1, lo + 1);
    return sorted[lo] + (sorted[hi] - sorted[lo]) * (x - lo);
  });
}

/**
 * The normaliser of a scale: value -> t in [0, 1] (outside when outside vmin..vmax; NaN when it
 * cannot be shown). Linear: (v - vmin) / (vmax - vmin), 0.5 when vmax <= vmin; when vmax - vmin
 * overflows a double (vmin -1.7e308, vmax 1.7e308) the ratio of the halved values, which cannot
 * overflow (every t was 0 otherwise): the rule of chunkwise's PNG previews (src/render/mod.rs).
 */
export function normaliser(scale, vmin, vmax) {
  if (scale === "log") {
    const a = Math.log10(vmin), span = Math.log10(vmax) - a;
    return (v) => (v > 0 ? (span > 0 ? (Math.log10(v) - a) / span : 0.5) : NaN);
  }
  const h = Math.abs(vmax - vmin) === Infinity ? 0.5 : 1;
  const lo = vmin * h, span = vmax * h - lo;
  return (v) => (span > 0 ? (v * h - lo) / span : 0.5);
}

/**
 * Draws `rows` x `cols` elements into `canvas`, one pixel each: element (r, k) is
 * `values[index(r, k)]`, coloured by the map `cmap` through `scale` between vmin and vmax
 * (clamped at the ends; NaN and, on a log scale, values <= 0 in BAD_RGB).
 * Returns the count of such bad elements.
 */
export function drawHeatmap(canvas, { values, rows, cols, index, vmin, vmax, scale, cmap }) {
  canvas.width = cols; canvas.height = rows;
  const lut = COLORMAPS[cmap];
  const norm = normaliser(scale, vmin, vmax);
  const ctx = canvas.getContext("2d");
  const img = ctx.createImageData(cols, rows);
  const d = img.data;
  let bad = 0;
  for (let r = 0; r < rows; r++) {
    for (let k = 0; k < cols; k++) {
      const v = values[index(r, k)];
      const o = (r * cols + k) * 4;
      const t = Number.isNaN(v) ? NaN : norm(v);
      if (Number.isNaN(t)) {
        bad++;
        d[o] = BAD_RGB[0]; d[o + 1] = BAD_RGB[1]; d[o + 2] = BAD_RGB[2];
      } else {
        const i = lutIndex(t) * 3;
        d[o] = lut[i]; d[o + 1] = lut[i + 1]; d[o + 2] = lut[i + 2];
      }
      d[o + 3] = 255;
    }
  }
  ctx.putImageData(img, 0, 0);
  return bad;
}

/** The colour bar: the map's 256 entries bottom (minimum) to top (maximum). */
export function drawColorbar(canvas, cmap) {
  const lut = COLORMAPS[cmap];
  const ctx = canvas.getContext("2d");
  const { width, height } = canvas;
  const img = ctx.createImageData(width, height);
  for (let y = 0; y < height; y++) {
    const i = lutIndex(1 - y / (height - 1)) * 3;
    for (let x = 0; x < width; x++) {
      const o = (y * width + x) * 4;
      img.data[o] = lut[i]; img.data[o + 1] = lut[i + 1]; img.data[o + 2] = lut[i + 2];
      img.data[o + 3] = 255;
    }
  }
  ctx.putImageData(img, 0, 0);
}

/** About `count` round tick values covering [lo, hi] (steps of 1, 2 or 5 times a power of ten). */
export function niceTicks(lo, hi, count = 6, { integer = false } = {}) {
  if (!Number.isFinite(lo) || !Number.isFinite(hi)) return [];
  if (hi < lo) [lo, hi] = [hi, lo];
  if (hi === lo) return [lo];
  const raw = (hi - lo) / Math.max(1, count);
  const p = 10 ** Math.floor(Math.log10(raw));
  let step = [1, 2, 5, 10].map((m) => m * p).find((s) => s >= raw) ?? 10 * p;
  if (integer) step = Math.max(1, Math.round(step));
  const out = [];
  // the first multiple of step at or above lo (a tolerance for quotients like -0.3 / 0.1)
  for (let v = Math.ceil(lo / step - 1e-9) * step; v <= hi + step * 1e-9; v += step) {
    out.push(Math.abs(v) < step * 1e-9 ? 0 : Number(v.toPrecision(12)));
  }
  return out;
}

/** Tick values of a log axis: the powers of ten in [lo, hi], or nice linear ticks if fewer than two. */
export function logTicks(lo, hi) {
  const out = [];
  for (let e = Math.ceil(Math.log10(lo)); e <= Math.floor(Math.log10(hi)); e++) out.push(10 ** e);
  return out.length >= 2 ? out : niceTicks(lo, hi, 4);
}

/** A number as a short label (`digits` significant digits; integers below 1e15 in full). */
export function numberText(v, digits = 5) {
  if (typeof v === "bigint") return v.toString();
  if (Number.isNaN(v)) return "NaN";
  if (!Number.isFinite(v)) return String(v);
  if (Number.isInteger(v) && Math.abs(v) < 1e15) return String(v);
  const a = Math.abs(v);
  return a !== 0 && (a < 1e-3 || a >= 1e6) ? v.toExponential(digits - 1) : String(Number(v.toPrecision(digits)));
}

/** Sizes `canvas` to css width x height at the device's pixel ratio; returns its 2-D context in CSS units. */
export function fitCanvas(canvas, width, height) {
  const dpr = window.devicePixelRatio || 1;
  canvas.width = Math.round(width * dpr); canvas.height = Math.round(height * dpr);
  canvas.style.width = `${width}px`; canvas.style.height = `${height}px`;
  const ctx = canvas.getContext("2d");
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, width, height);
  return ctx;
}

/**
 * Axes around the box `box` ({ left, top, width, height } in CSS pixels) on `ctx`: `x` and
 * `y` are `{ label, ticks: [{ at (pixel offset in the box), text }] }`; y ticks run from
 * the box's top.
 */
export function drawAxes(ctx, box, x, y) {
  ctx.save();
  ctx.strokeStyle = "#444"; ctx.fillStyle = "#222"; ctx.lineWidth = 1;
  ctx.strokeRect(box.left - 0.5, box.top - 0.5, box.width + 1, box.height + 1);
  ctx.font = FONT;
  ctx.textAlign = "center"; ctx.textBaseline = "top";
  for (const t of x.ticks) {
    const px = Math.round(box.left + t.at) + 0.5;
    ctx.beginPath(); ctx.moveTo(px, box.top + box.height); ctx.lineTo(px, box.top + box.height + 5); ctx.stroke();
    ctx.fillText(t.text, px, box.top + box.height + 7);
  }
  ctx.textAlign = "right"; ctx.textBaseline = "middle";
  for (const t of y.ticks) {
    const py = Math.round(box.top + t.at) + 0.5;
    ctx.beginPath(); ctx.moveTo(box.left - 5, py); ctx.lineTo(box.left, py); ctx.stroke();
    ctx.fillText(t.text, box.left - 7, py);
  }
  ctx.font = LABEL_FONT; ctx.fillStyle = "#444";
  ctx.textAlign = "center"; ctx.textBaseline = "bottom";
  ctx.fillText(x.label, box.left + box.width / 2, box.top + box.height + MARGIN.bottom - 2);
  ctx.translate(12, box.top + box.height / 2);
  ctx.rotate(-Math.PI / 2);
  ctx.textBaseline = "middle";
  ctx.fillText(y.label, 0, 0);
  ctx.restore();
}

/**
 * Ticks of an index axis of `n` cells, `cellPx` CSS pixels each, showing array indices
 * start, start + step, ...: round index values placed at their cells' centres.
 */
export function indexTicks(n, cellPx, start, step) {
  const last = start + (n - 1) * step;
  const want = Math.max(2, Math.min(8, Math.floor((n * cellPx) / 70)));
  return niceTicks(start, last, want, { integer: true })
    .map((v) => ({ at: ((v - start) / step + 0.5) * cellPx, text: String(v) }))
    .filter((t) => t.at >= 0 && t.at <= n * cellPx);
}

/**
 * The line plot of `values` (numbers; NaN leaves a gap) at array indices start + i * step, on
 * `canvas` sized width x height CSS pixels, with axes; y from vmin to vmax on `scale`.
 * Returns the plot box and the x mapping for hover lookups.
 */
export function drawLine(canvas, { values, start, step, width, height, vmin, vmax, scale, xLabel, yLabel }) {
  const ctx = fitCanvas(canvas, width, height);
  const box = { left: MARGIN.left, top: MARGIN.top, width: width - MARGIN.left - MARGIN.right,
    height: height - MARGIN.top - MARGIN.bottom };
  const n = values.length;
  const xAt = (i) => (n > 1 ? (i / (n - 1)) * box.width : box.width / 2);
  const norm = normaliser(scale, vmin, vmax);
  const yAt = (v) => box.height * (1 - norm(v));
  ctx.fillStyle = "#fff"; ctx.fillRect(box.left, box.top, box.width, box.height);
  // ticks
  const last = start + (n - 1) * step;
  const xt = niceTicks(start, last, Math.max(2, Math.floor(box.width / 80)), { integer: true })
    .map((v) => ({ at: n > 1 ? ((v - start) / (last - start || 1)) * box.width : box.width / 2, text: String(v) }));
  const yv = scale === "log" ? logTicks(vmin, vmax) : niceTicks(vmin, vmax, Math.max(2, Math.floor(box.height / 50)));
  const yt = yv.filter((v) => v >= Math.min(vmin, vmax) && v <= Math.max(vmin, vmax))
    .map((v) => ({ at: yAt(v), text: numberText(v) }));
  ctx.save();
  ctx.strokeStyle = "#eee";
  for (const t of yt) { ctx.beginPath(); ctx.moveTo(box.left, box.top + t.at); ctx.lineTo(box.left + box.width, box.top + t.at); ctx.stroke(); }
  ctx.beginPath();
  ctx.rect(box.left, box.top, box.width, box.height);
  ctx.clip();
  ctx.strokeStyle = "#3b528b"; ctx.lineWidth = 1.5; ctx.lineJoin = "round";
  ctx.beginPath();
  let pen = false;
  for (let i = 0; i < n; i++) {
    const v = values[i];
    const t = Number.isNaN(v) ? NaN : norm(v);
    if (Number.isNaN(t)) { pen = false; continue; }
    const px = box.left + xAt(i), py = box.top + yAt(v);
    if (pen) ctx.lineTo(px, py); else ctx.moveTo(px, py);
    pen = true;
  }
  ctx.stroke();
  if (n <= 64) {   // few points: mark each
    ctx.fillStyle = "#3b528b";
    for (let i = 0; i < n; i++) {
      if (Number.isNaN(norm(values[i]))) continue;
      ctx.beginPath(); ctx.arc(box.left + xAt(i), box.top + yAt(values[i]), 2.2, 0, 2 * Math.PI); ctx.fill();
    }
  }
  ctx.restore();
  drawAxes(ctx, box, { label: xLabel, ticks: xt }, { label: yLabel, ticks: yt });
  return { box, xAt, yAt, n };
}

/** A small marker (ring) on `ctx` at CSS pixel (x, y): where the readout points. */
export function drawMarker(ctx, x, y) {
  ctx.save();
  ctx.lineWidth = 2; ctx.strokeStyle = "#fff";
  ctx.beginPath(); ctx.arc(x, y, 5, 0, 2 * Math.PI); ctx.stroke();
  ctx.lineWidth = 1; ctx.strokeStyle = "#d00";
  ctx.beginPath(); ctx.arc(x, y, 5, 0, 2 * Math.PI); ctx.stroke();
  ctx.restore();
}
