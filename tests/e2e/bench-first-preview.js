// window.benchFirstPreview for scripts/bench-first-preview.mjs. On load, the reader named by
// ?reader= opens ?url (array ?path), reads the selection ?sel (JSON [[start, stop], ...]) and
// draws it to the canvas as grey levels; every step is a mark in ms since navigation start
// (performance.now() of this page; the h5wasm worker's marks are moved onto that clock).
//   chunkwise  the web build (?module=DIR holding chunkwise.js, default pkg/web) on the main
//              thread
//   chunkwise-early   chunkwise with the module compiled from the page's first line (below)
//   chunkwise-pending chunkwise with open() called while init() is pending (not awaited): the
//              open's first requests go out while the module loads (src/io/early.js)
//   chunkwise-worker  chunkwise/worker (DIR/../worker/index.js): the same reads in a worker
//   chunkwise-worker-pending   the same with open() called while init() is pending
//   zarrita    zarrita's FetchStore on the main thread (Zarr)
//   h5wasm     h5wasm in a dedicated worker with FS.createLazyFile (HDF5): synchronous
//              range requests of 1 MiB blocks, the way h5wasm reads remote files lazily
// After the picture (not timed with it), the same read after an open on ?zero (the same
// source through a server without added latency; omitted: skipped) is timed three times:
// transfer + decode with the engine warm, for the physical limit. window.benchFirstPreview is then
// { marks, resources (data requests: name, start, end of the round trip), sha256 (of the picture's values),
//   shape, local (ms, three reads), localOpen (ms of the open before them: the open's CPU with
//   the engine warm, plus loopback round trips), pageResources (what this page fetched from its own origin,
//   with their times), error }.
const q = new URLSearchParams(location.search);
const reader = q.get("reader");
const url = q.get("url");
const zero = q.get("zero");
const arrayPath = q.get("path") || "";
const sel = JSON.parse(q.get("sel"));
const moduleDir = q.get("module") || "pkg/web";
const marks = {};
const mark = (name) => {
  marks[name] = performance.now();
  performance.mark(`bench:${name}`); // seen by traces (the Performance panel) too
};
mark("script"); // the page's HTML in and this module running: common to every reader
// With ?profile=1, 3 ms of a function of this name, so that a CPU profile's samples can be
// put on this page's clock (its first sample is at marks.script).
function benchClockSync() {
  const end = performance.now() + 3;
  while (performance.now() < end);
}
if (q.get("profile")) benchClockSync();
const selText = sel.map(([a, b]) => `${a}:${b}`).join(",");

// Started before anything else, as a page that knows it will read HDF5 would.
const worker = reader === "h5wasm" ? new Worker("./bench-first-preview-h5wasm.js") : null;

function draw(data, shape) {
  const [h, w] = shape;
  let lo = Infinity, hi = -Infinity;
  for (let i = 0; i < data.length; i++) {
    const v = data[i];
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  const canvas = document.getElementById("picture");
  canvas.width = w;
  canvas.height = h;
  const ctx = canvas.getContext("2d");
  const img = ctx.createImageData(w, h);
  const px = img.data;
  const scale = hi > lo ? 255 / (hi - lo) : 0;
  for (let i = 0; i < data.length; i++) {
    const g = (data[i] - lo) * scale;
    px[4 * i] = g; px[4 * i + 1] = g; px[4 * i + 2] = g; px[4 * i + 3] = 255;
  }
  ctx.putImageData(img, 0, 0);
}

async function sha256(data) {
  const d = await crypto.subtle.digest("SHA-256", new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
  return Array.from(new Uint8Array(d), (b) => b.toString(16).padStart(2, "0")).join("");
}

// Every fetch of the page, from the call to its response (headers in: the round trip), by a
// wrapper around window.fetch installed before any reader loads (chunkwise's glue and
// zarrita's FetchStore call it at request time). Resource timing would miss requests whose
// body is never read (zarrita's 404 probes) and queues entries late.
const fetches = [];
const pageFetch = window.fetch;
window.fetch = function (input, init) {
  const rec = { name: String(input && input.url !== undefined ? input.url : input), start: performance.now(), end: null };
  fetches.push(rec);
  // The first request after the library is ready: the end of its CPU before a request.
  if (marks.ready !== undefined && marks.request === undefined) mark("request");
  const p = pageFetch.call(this, input, init);
  p.then(() => { rec.end = performance.now(); }, () => { rec.end = performance.now(); });
  return p;
};

function dataResources(origins) {
  return fetches.filter((e) => e.end !== null && origins.some((o) => e.name.startsWith(o))).map((e) => ({ ...e }));
}

async function timed(fn, n = 3) {
  const ms = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await fn();
    ms.push(performance.now() - t);
  }
  return ms;
}

// chunkwise-early: the same, with the wasm module's download and compilation started by
// this page's first line (WebAssembly.compileStreaming) instead of by init() once the JS glue
// is imported, and the compiled module handed to init; what a page can do today.
const early = reader === "chunkwise-early"
  ? WebAssembly.compileStreaming(fetch(`/${moduleDir}/chunkwise_bg.wasm`)) : null;

async function withChunkwise() {
  const cw = await import(`/${moduleDir}/chunkwise.js`);
  mark("imported");
  let opening = null;
  if (early) await cw.default({ module_or_path: await early });
  else if (reader === "chunkwise-pending") {
    const ready = cw.default();
    opening = cw.RemoteArray.open(url, arrayPath ? { path: arrayPath } : {});
    await ready;
  } else await cw.default();
  mark("ready");
  const wasm = performance.getEntriesByType("resource").find((e) => e.name.endsWith("_bg.wasm"));
  if (wasm) {
    marks.wasmRequested = wasm.startTime;
    marks.wasmFetched = wasm.responseEnd;
  }
  const options = arrayPath ? { path: arrayPath } : {};
  const arr = await (opening ?? cw.RemoteArray.open(url, options));
  mark("opened");
  const r = await arr.read(selText);
  mark("data");
  draw(r.data, r.shape);
  mark("drawn");
  const resources = dataResources([new URL(url).origin]);
  if (!zero) return { data: r.data, shape: r.shape, resources, local: [] };
  const t = performance.now();
  const local = await cw.RemoteArray.open(zero, { ...options, cache: "none" });
  const localOpen = performance.now() - t;
  const ms = await timed(() => local.read(selText));
  return { data: r.data, shape: r.shape, resources, local: ms, localOpen };
}

// chunkwise/worker: the package's worker entry (DIR/../worker/index.js), the reader in a
// dedicated worker behind the same RemoteArray API; "ready" is its init() resolved (worker
// started, module initialised in it).
async function withChunkwiseWorker() {
  const cw = await import(`/${moduleDir}/../worker/index.js`);
  mark("imported");
  const options = arrayPath ? { path: arrayPath } : {};
  let opening = null;
  if (reader === "chunkwise-worker-pending") {
    const ready = cw.default();
    opening = cw.RemoteArray.open(url, options);
    await ready;
  } else await cw.default();
  mark("ready");
  const arr = await (opening ?? cw.RemoteArray.open(url, options));
  mark("opened");
  const r = await arr.read(selText);
  mark("data");
  draw(r.data, r.shape);
  mark("drawn");
  // Its requests are the worker's: not seen by this page's fetch.
  if (!zero) return { data: r.data, shape: r.shape, resources: null, local: [] };
  const local = await cw.RemoteArray.open(zero, { ...options, cache: "none" });
  const ms = await timed(() => local.read(selText));
  return { data: r.data, shape: r.shape, resources: null, local: ms };
}

async function withZarrita() {
  const zarr = await import("zarrita");
  mark("imported");
  mark("ready");
  const open = (u) => zarr.open(zarr.root(new zarr.FetchStore(u)).resolve(arrayPath.replace(/^\//, "")), { kind: "array" });
  const slices = sel.map(([a, b]) => zarr.slice(a, b));
  const arr = await open(url);
  mark("opened");
  const r = await zarr.get(arr, slices);
  mark("data");
  draw(r.data, r.shape);
  mark("drawn");
  const resources = dataResources([new URL(url).origin]);
  if (!zero) return { data: r.data, shape: r.shape, resources, local: [] };
  const t = performance.now();
  const local = await open(zero);
  const localOpen = performance.now() - t;
  const ms = await timed(() => zarr.get(local, slices));
  return { data: r.data, shape: r.shape, resources, local: ms, localOpen };
}

async function withH5wasm() {
  const replies = [];
  let wake = null;
  worker.onmessage = (e) => { replies.push(e.data); wake?.(); };
  worker.onerror = (e) => { replies.push({ error: `worker: ${e.message}` }); wake?.(); };
  const next = async () => {
    while (!replies.length) await new Promise((r) => { wake = r; });
    const m = replies.shift();
    if (m.error) throw new Error(m.error);
    return m;
  };
  worker.postMessage({ url, zero, path: arrayPath, sel });
  const reply = await next();
  mark("received");
  draw(reply.data, reply.shape);
  mark("drawn");
  // The worker's clock starts at its own time origin.
  const shift = reply.timeOrigin - performance.timeOrigin;
  for (const [k, v] of Object.entries(reply.marks)) marks[k] = v + shift;
  const resources = reply.resources.map((e) => ({ ...e, start: e.start + shift, end: e.end + shift }));
  const { local } = await next();
  return { data: reply.data, shape: reply.shape, resources, local };
}

async function run() {
  const readers = { chunkwise: withChunkwise, "chunkwise-early": withChunkwise, "chunkwise-pending": withChunkwise, "chunkwise-worker": withChunkwiseWorker, "chunkwise-worker-pending": withChunkwiseWorker, zarrita: withZarrita, h5wasm: withH5wasm };
  try {
    if (!readers[reader]) throw new Error(`unknown reader ${reader}`);
    const r = await readers[reader]();
    const own = performance.getEntriesByType("resource").filter((e) => e.name.startsWith(location.origin))
      .map((e) => ({ name: e.name.slice(location.origin.length), start: e.startTime, end: e.responseEnd }));
    window.benchFirstPreview = { marks, resources: r.resources, local: r.local, localOpen: r.localOpen ?? null, shape: r.shape,
      sha256: await sha256(r.data), pageResources: own };
  } catch (e) {
    window.benchFirstPreview = { error: String((e && e.stack) || e), marks };
  }
}

run();
