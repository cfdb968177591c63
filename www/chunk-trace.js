// chunkwise HDF5 chunk-cache simulator page: replays a trace of selections through two cache
// settings with the wasm package, plots the cumulative raw chunk reads per selection and lists
// the totals and the advisor's findings.
//
// State for automation: document.body.dataset.state is "loading", "idle", "running", "ready" or
// "error" (the message, prefixed by the error code, is in #error). After each run
// window.chunkTraceView holds { case, selections, settings, totals, cumulative, advice }.

import * as status from "./status.js";
const SERIES = [
  { name: "A", colour: "#3b528b", dash: [] },
  { name: "B", colour: "#d9730d", dash: [7, 4] },
];
const MAX_ADVISED_ACCESSES = 200000;  // the advisor replays the trace many times; skip it above

const $ = (id) => document.getElementById(id);
const ui = {
  form: $("trace-form"), kase: $("case"), run: $("run"), hashForm: $("hash-form"),
  randomFields: $("random-fields"), customFields: $("custom-fields"),
  geometryJson: $("geometry-json"), traceJson: $("trace-json"),
  status: $("status"), error: $("error"), plot: $("plot"),
  totals: document.querySelector("#totals tbody"), traceNote: $("trace-note"),
  advice: $("advice"), adviceRows: document.querySelector("#advice-table tbody"),
};

let wasm = null;
let experiment = null;   // chunkTraceExperiment(): geometry and both traces
const fmt = new Intl.NumberFormat("en-US");

function setState(state, message) { status.setState(ui, state, message); }
function showError(err) { status.showError(ui, err); }
function clearError() { status.clearError(ui); }

/** An Error with a code, for input problems found on the page. */
function inputError(message) {
  const e = new Error(message);
  e.code = "INVALID_INPUT";
  return e;
}

// ---- inputs -----------------------------------------------------------------------------------

function wholeList(id, what) {
  const parts = $(id).value.split(/[\s,x×]+/).filter(Boolean);
  const out = parts.map(Number);
  if (!out.length || out.some((v) => !Number.isSafeInteger(v) || v < 0)) {
    throw inputError(`${what}: expected whole numbers separated by commas, got "${$(id).value}"`);
  }
  return out;
}

function wholeField(id, what, { min = 0, optional = false } = {}) {
  const text = $(id).value.trim();
  if (text === "" && optional) return null;
  const v = Number(text);
  if (text === "" || !Number.isSafeInteger(v) || v < min) {
    throw inputError(`${what}: expected a whole number >= ${min}, got "${text}"`);
  }
  return v;
}

function parseJson(text, what) {
  try {
    return JSON.parse(text);
  } catch (e) {
    throw inputError(`${what} is not valid JSON: ${e.message}`);
  }
}

function settings() {
  return ["a", "b"].map((p, i) => {
    const w0 = Number($(`${p}-w0`).value);
    if ($(`${p}-w0`).value.trim() === "" || !(w0 >= 0 && w0 <= 1)) {
      throw inputError(`cache ${SERIES[i].name}: w0 must be between 0 and 1`);
    }
    return {
      nslots: wholeField(`${p}-nslots`, `cache ${SERIES[i].name} nslots`),
      nbytes: wholeField(`${p}-nbytes`, `cache ${SERIES[i].name} nbytes`),
      w0,
      hashForm: ui.hashForm.value,
    };
  });
}

/** Geometry and trace of the chosen case. */
function chosenCase() {
  const kase = ui.kase.value;
  if (kase === "round-robin" || kase === "grouped") {
    return { geometry: experiment.geometry, trace: experiment.traces[kase] };
  }
  if (kase === "random") {
    const shape = wholeList("r-shape", "shape");
    const chunkShape = wholeList("r-chunks", "chunks");
    const stored = wholeField("r-stored", "stored bytes/chunk", { optional: true });
    const geometry = {
      shape, chunk_shape: chunkShape, filtered: true,
      element_size: wholeField("r-elem", "element bytes", { min: 1 }),
      default_stored_size: stored,
    };
    const trace = wasm.randomChunkTrace(shape, chunkShape,
      wholeField("r-seed", "seed"), wholeField("r-len", "selections", { min: 1 }));
    return { geometry, trace };
  }
  const geometry = parseJson(ui.geometryJson.value, "geometry");
  const trace = parseJson(ui.traceJson.value, "trace");
  if (Array.isArray(trace)) return { geometry, trace: { selections: trace } };
  return { geometry, trace };
}

function showCaseFields() {
  ui.randomFields.hidden = ui.kase.value !== "random";
  ui.customFields.hidden = ui.kase.value !== "custom";
}

// ---- plot -------------------------------------------------------------------------------------

/** About `count` round tick values covering 0..max. */
function ticks(max, count) {
  if (max <= 0) return [0];
  const raw = max / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw);
  const out = [];
  for (let v = 0; v <= max + step * 1e-9; v += step) out.push(Math.round(v * 1e9) / 1e9);
  if (out[out.length - 1] < max) out.push(out[out.length - 1] + step);
  return out;
}

function drawPlot(cumulative, labels) {
  const canvas = ui.plot;
  const dpr = window.devicePixelRatio || 1;
  const cssW = canvas.clientWidth || 760, cssH = canvas.clientHeight || 380;
  canvas.width = Math.round(cssW * dpr);
  canvas.height = Math.round(cssH * dpr);
  const ctx = canvas.getContext("2d");
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.fillStyle = "#fff";
  ctx.fillRect(0, 0, cssW, cssH);

  const n = cumulative[0].length;
  const yMax = Math.max(1, ...cumulative.map((c) => c[n - 1] || 0));
  const yTicks = ticks(yMax, 6);
  const xTicks = ticks(n, 8).filter((v) => v <= n);
  const top = yTicks[yTicks.length - 1], right = Math.max(1, n);
  const m = { l: 64, r: 18, t: 16, b: 50 };
  const w = cssW - m.l - m.r, h = cssH - m.t - m.b;
  const X = (i) => m.l + (i / right) * w;
  const Y = (v) => m.t + h - (v / top) * h;

  ctx.font = "12px system-ui, sans-serif";
  ctx.strokeStyle = "#e4e4e8";
  ctx.fillStyle = "#444";
  ctx.lineWidth = 1;
  ctx.textAlign = "right"; ctx.textBaseline = "middle";
  for (const v of yTicks) {
    ctx.beginPath(); ctx.moveTo(m.l, Y(v) + 0.5); ctx.lineTo(m.l + w, Y(v) + 0.5); ctx.stroke();
    ctx.fillText(fmt.format(v), m.l - 6, Y(v));
  }
  ctx.textAlign = "center"; ctx.textBaseline = "top";
  for (const v of xTicks) {
    ctx.beginPath(); ctx.moveTo(X(v) + 0.5, m.t); ctx.lineTo(X(v) + 0.5, m.t + h); ctx.stroke();
    ctx.fillText(fmt.format(v), X(v), m.t + h + 5);
  }
  ctx.strokeStyle = "#888";
  ctx.strokeRect(m.l + 0.5, m.t + 0.5, w, h);
  ctx.fillStyle = "#222";
  ctx.font = "13px system-ui, sans-serif";
  ctx.fillText("selections replayed (one H5Dread each)", m.l + w / 2, m.t + h + 26);
  ctx.save();
  ctx.translate(16, m.t + h / 2);
  ctx.rotate(-Math.PI / 2);
  ctx.textBaseline = "middle";
  ctx.fillText("cumulative raw chunk reads", 0, 0);
  ctx.restore();

  // Steps: after selection i (1-based x = i) the count is cumulative[i-1].
  cumulative.forEach((series, s) => {
    ctx.strokeStyle = SERIES[s].colour;
    ctx.lineWidth = 2.25;
    ctx.setLineDash(SERIES[s].dash);
    ctx.beginPath();
    ctx.moveTo(X(0), Y(0));
    let prev = 0;
    for (let i = 0; i < n; i++) {
      ctx.lineTo(X(i), Y(prev));
      ctx.lineTo(X(i), Y(series[i]));
      prev = series[i];
    }
    ctx.lineTo(X(n), Y(prev));
    ctx.stroke();
  });
  ctx.setLineDash([]);

  // Legend, top left inside the axes.
  ctx.font = "12.5px system-ui, sans-serif";
  ctx.textAlign = "left"; ctx.textBaseline = "middle";
  const lw = Math.max(...labels.map((t) => ctx.measureText(t).width)) + 44;
  ctx.fillStyle = "rgba(255,255,255,0.92)";
  ctx.strokeStyle = "#ccc";
  ctx.fillRect(m.l + 10, m.t + 10, lw, 20 * labels.length + 8);
  ctx.strokeRect(m.l + 10.5, m.t + 10.5, lw, 20 * labels.length + 8);
  labels.forEach((t, s) => {
    const y = m.t + 24 + 20 * s;
    ctx.strokeStyle = SERIES[s].colour; ctx.lineWidth = 2.25; ctx.setLineDash(SERIES[s].dash);
    ctx.beginPath(); ctx.moveTo(m.l + 18, y); ctx.lineTo(m.l + 44, y); ctx.stroke();
    ctx.setLineDash([]);
    ctx.fillStyle = "#222";
    ctx.fillText(t, m.l + 50, y);
  });
}

// ---- tables -----------------------------------------------------------------------------------

function cell(tr, text, cls) {
  const td = document.createElement("td");
  td.textContent = text;
  if (cls) td.className = cls;
  tr.append(td);
  return td;
}

function settingText(c) {
  return `nslots ${fmt.format(c.nslots)}, nbytes ${fmt.format(c.nbytes)}, w0 ${c.w0}`;
}

function coordsText(list, max = 12) {
  const shown = list.slice(0, max).map((c) => `(${c.join(",")})`).join(" ");
  return list.length > max ? `${shown} … ${fmt.format(list.length - max)} more` : shown;
}

function renderTotals(reports) {
  ui.totals.replaceChildren();
  reports.forEach((r, s) => {
    const tr = document.createElement("tr");
    tr.dataset.series = String(s);
    const name = cell(tr, "", "name");
    name.innerHTML = `<i class="swatch s${s}"></i> ${SERIES[s].name}`;
    name.title = settingText(r.config);
    cell(tr, fmt.format(r.total.reads));
    cell(tr, fmt.format(r.total.raw_bytes));
    cell(tr, fmt.format(r.total.hits));
    cell(tr, fmt.format(r.total.evictions));
    cell(tr, r.decode_ratio.toFixed(r.decode_ratio >= 100 ? 0 : 2));
    ui.totals.append(tr);
  });
}

function renderAdvice(advice, skippedReason) {
  ui.advice.replaceChildren();
  ui.adviceRows.replaceChildren();
  const add = (k, v) => {
    const dt = document.createElement("dt"); dt.textContent = k;
    const dd = document.createElement("dd"); dd.textContent = v;
    ui.advice.append(dt, dd);
  };
  if (!advice) {
    add("advisor", skippedReason);
    return;
  }
  const a = advice[0];
  add("fewest reads", `${fmt.format(a.min_reads)} (distinct chunks touched)`);
  add("reuse set", a.reuse_set.length ? `${fmt.format(a.reuse_set.length)} chunks: ${coordsText(a.reuse_set)}`
    : "none: no chunk is accessed twice");
  add("needed at once", `${fmt.format(a.peak_live_reuse)} chunks`);
  const opt = (v) => (v === null ? "not found" : fmt.format(v));
  advice.forEach((x, s) => {
    const tr = document.createElement("tr");
    const name = cell(tr, "", "name");
    name.innerHTML = `<i class="swatch s${s}"></i> ${SERIES[s].name}`;
    cell(tr, opt(x.min_nslots));
    cell(tr, opt(x.min_nbytes));
    cell(tr, fmt.format(x.grouped_reads));
    cell(tr, fmt.format(x.lru.reads));
    ui.adviceRows.append(tr);
  });
}

// ---- run --------------------------------------------------------------------------------------

function simulate() {
  clearError();
  setState("running", "Simulating…");
  try {
    const { geometry, trace } = chosenCase();
    const configs = settings();
    const t0 = performance.now();
    const reports = configs.map((c) => wasm.simulateChunkCache(geometry, trace, c));
    const ms = performance.now() - t0;
    const cumulative = reports.map((r) => {
      let sum = 0;
      return r.selections.map((s) => (sum += s.reads));
    });
    const accesses = reports[0].total.hits + reports[0].total.reads + reports[0].total.direct_reads;
    let advice = null, skipped = "";
    if (accesses <= MAX_ADVISED_ACCESSES) {
      advice = configs.map((c) => wasm.adviseChunkCache(geometry, trace, { ...c, maxCacheBytes: c.nbytes }));
    } else {
      skipped = `skipped: ${fmt.format(accesses)} chunk accesses (limit ${fmt.format(MAX_ADVISED_ACCESSES)})`;
    }
    drawPlot(cumulative, reports.map((r, s) =>
      `${SERIES[s].name}: ${settingText(r.config)} · ${fmt.format(r.total.reads)} reads`));
    renderTotals(reports);
    renderAdvice(advice, skipped);
    const n = reports[0].selections.length;
    ui.traceNote.textContent = `${fmt.format(n)} selections, ${fmt.format(accesses)} chunk accesses, ` +
      `${fmt.format(reports[0].chunk_bytes)} decoded bytes per chunk; simulated in ${ms.toFixed(1)} ms.`;
    window.chunkTraceView = {
      case: ui.kase.value,
      selections: n,
      settings: reports.map((r) => r.config),
      totals: reports.map((r) => ({ ...r.total, decode_ratio: r.decode_ratio })),
      cumulative,
      advice,
    };
    setState("ready", "Done.");
  } catch (e) {
    window.chunkTraceView = null;
    showError(e);
    setState("error", "The simulation did not run.");
  }
}

async function main() {
  try {
    wasm = await import("../pkg/web/chunkwise.js");
    await wasm.default();
    experiment = wasm.chunkTraceExperiment();
  } catch (e) {
    setState("error", "The wasm package is missing or failed to load.");
    showError(new Error(`${e.message || e}. Build it with scripts/build-pkg.sh and serve the ` +
      "repository root so that /pkg/ sits next to /www/."));
    return;
  }
  ui.geometryJson.value = JSON.stringify(experiment.geometry);
  ui.traceJson.value = JSON.stringify(experiment.traces["round-robin"]);
  ui.kase.addEventListener("change", showCaseFields);
  ui.form.addEventListener("submit", (e) => { e.preventDefault(); simulate(); });
  showCaseFields();
  ui.run.disabled = false;
  setState("idle");
  simulate();
}

main();
