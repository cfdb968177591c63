// window.workerEntry for worker-entry.test.mjs: the classes of pkg/worker/index.js
// (`chunkwise/worker`, the reader in a dedicated worker) opened and read from this page; every
// answer is plain data for the test to compare with the fixtures' .npy files.
import init, { RemoteArray, RemoteStore, RemoteTable, ChunkwiseError, clearCache, cacheUsage, terminate } from "/pkg/worker/index.js";
import { ChunkwiseError as MainError } from "/pkg/web/chunkwise.js";

const query = new URLSearchParams(location.search);
let ready = init({
  workers: Number(query.get("workers") ?? 1),
  // ?probe=1: the worker script that reports whether each answer's buffers were transferred.
  ...(query.get("probe") ? { workerUrl: new URL("./worker-entry-probe.js", import.meta.url) } : {}),
});
/** What worker-entry-probe.js reported, one entry per answer holding typed arrays. */
const probed = [];
new BroadcastChannel("chunkwise-worker-probe").onmessage = (e) => probed.push(e.data);

/** What a rejection was: its class, name, code and whether it is the main entry's class. */
function describeError(e) {
  return {
    error: String(e?.message ?? e), name: e?.name, code: e?.code,
    chunkwiseError: e instanceof ChunkwiseError, mainClass: e instanceof MainError,
    domException: e instanceof DOMException,
  };
}

/** A typed array's values as Numbers, with its class and whether it owns its buffer. */
function describeData(data) {
  return {
    data: Array.from(data, Number), ctor: data.constructor.name,
    ownBuffer: data.byteOffset === 0 && data.buffer.byteLength === data.byteLength,
  };
}

async function readAll(url, opts = {}, select = "...") {
  await ready;
  try {
    const arr = await RemoteArray.open(url, opts);
    const progress = [];
    const r = await arr.read(select, { onProgress: (p) => progress.push(p) });
    const out = { ...describeData(r.data), shape: r.shape, dtype: r.dtype, traffic: arr.traffic,
      cacheStatus: arr.cacheStatus, cacheErrors: arr.cacheErrors, progress, arrShape: arr.shape,
      info: arr.info };
    arr.close();
    return out;
  } catch (e) {
    return describeError(e);
  }
}

/** Opens every [url, opts] at once and holds them all open before reading any, so that the
 *  pool sees them together whatever the page's timing; then readAll's answer for each. */
async function readTogether(specs) {
  await ready;
  const arrs = await Promise.all(specs.map(([url, opts]) => RemoteArray.open(url, opts).catch((e) => e)));
  const out = [];
  for (const arr of arrs) {
    if (!(arr instanceof RemoteArray)) {
      out.push(describeError(arr));
      continue;
    }
    const r = await arr.read("...").catch((e) => e);
    out.push(r?.data ? { ...describeData(r.data), shape: r.shape } : describeError(r));
  }
  for (const arr of arrs) if (arr instanceof RemoteArray) arr.close();
  return out;
}

/** readInto, getChunk, getChunkBytes and the properties of one array. */
async function api(url) {
  await ready;
  const arr = await RemoteArray.open(url);
  const target = new Float32Array(arr.shape.reduce((a, b) => a * b, 1));
  const into = await arr.readInto(target, "...");
  const chunk = await arr.getChunk([0, 0]);
  const raw = await arr.getChunkBytes([0, 0]);
  const b2 = await arr.getChunkBlosc2([0, 0]);
  const out = {
    blosc2Ctor: b2.constructor.name, blosc2IsStored: b2.length === raw.length && b2.every((v, i) => v === raw[i]),
    identity: arr.identity,
    intoSame: into.data === target, into: Array.from(target), intoShape: into.shape,
    chunk: { ...describeData(chunk.data), shape: chunk.shape }, rawBytes: raw?.length ?? null,
    rawCtor: raw?.constructor.name, chunks: arr.chunks, blocks: arr.blocks, dtype: arr.dtype,
    traffic: arr.traffic,
  };
  arr.close();
  try {
    void arr.shape;
    out.afterClose = "no error";
  } catch (e) {
    out.afterClose = describeError(e);
  }
  out.readAfterClose = await arr.read().then(() => "resolved", describeError);
  return out;
}

/** A store: its nodes, an array got from it and read, its traffic. */
async function store(url, path, opts = {}) {
  await ready;
  try {
    const s = await RemoteStore.open(url, opts);
    const nodes = s.nodes.map((n) => ({ path: n.path, kind: n.kind, shape: n.shape, dtype: n.dtype }));
    const arr = await s.get(path);
    const r = await arr.read();
    const out = { nodes, ...describeData(r.data), shape: r.shape, traffic: s.traffic,
      arrTraffic: arr.traffic, cacheStatus: s.cacheStatus };
    arr.close();
    s.close();
    return out;
  } catch (e) {
    return describeError(e);
  }
}

/** Rejections: each case's description. */
async function errors(base) {
  await ready;
  const out = {};
  out.notFound = await RemoteArray.open(`${base}tests/fixtures/blosc2/missing.b2nd`).then(() => "opened", describeError);
  const arr = await RemoteArray.open(`${base}tests/fixtures/blosc2/cf_lz4_shuffle.b2nd`);
  out.selection = await arr.read("0:5, 0:5, 0:5").then(() => "resolved", describeError);
  out.target = await arr.readInto(new Int32Array(750)).then(() => "resolved", describeError);
  out.chunkCoords = await arr.getChunk([99, 0]).then(() => "resolved", describeError);
  const pre = new AbortController();
  pre.abort();
  out.preAborted = await arr.read("...", { signal: pre.signal }).then(() => "resolved", describeError);
  out.badWorkers = await import("/pkg/worker/index.js").then((m) => m.default({ workers: 0 }))
    .then(() => "resolved (already initialised)", describeError);
  arr.close();
  return out;
}

/** Starts a read of `bigUrl`, aborts it after `afterMs`, then reads `smallUrl` in the same
 *  worker: the rejection, whether it is the signal's reason, and the later read's values.
 *  The array is kept open for timeoutKept. */
async function cancel(bigUrl, smallUrl, afterMs) {
  await ready;
  const arr = await RemoteArray.open(bigUrl);
  const ctrl = new AbortController();
  const t0 = performance.now();
  const p = arr.read("...", { signal: ctrl.signal });
  setTimeout(() => ctrl.abort(), afterMs);
  const out = {};
  try {
    await p;
    out.rejected = null;
  } catch (e) {
    out.rejected = describeError(e);
    out.isReason = e === ctrl.signal.reason;
  }
  out.ms = performance.now() - t0;
  out.after = await readAll(smallUrl);
  kept = arr;
  return out;
}

let kept = null;

/** The array of `cancel` read again with `timeoutMs` (its GETs trickle as well), then closed. */
async function timeoutKept(timeoutMs) {
  const t1 = performance.now();
  const out = { rejected: await kept.read("...", { timeoutMs }).then(() => null, describeError) };
  out.ms = performance.now() - t1;
  kept.close();
  return out;
}

/** A cacheStore kept in this page (a Map), reached by the worker through messages. */
const pageStore = new Map();
const memoryStore = {
  async get(k) { return pageStore.get(k); },
  async put(k, v) { pageStore.set(k, v.slice()); },
  async delete(k) { pageStore.delete(k); },
  async keys(prefix) { return [...pageStore.keys()].filter((k) => k.startsWith(prefix)); },
};
/** A read through `memoryStore`; `restart` first ends the worker and starts a new one (a new
 *  wasm instance: nothing of the last read is left in memory, only in the page's store). */
async function readWithPageStore(url, { restart = false } = {}) {
  if (restart) {
    terminate();
    ready = init();
  }
  const opts = {};
  return readAll(url, { ...opts, cache: "disk", cacheStore: memoryStore }).then((r) => ({ ...r, storeKeys: pageStore.size }));
}

/** A table of `url` (a .b2z CTable) read through RemoteTable.open. */
async function table(url, start, stop, columns) {
  await ready;
  try {
    const t = await RemoteTable.open(url);
    const rows = await t.readRows(start, stop, { columns });
    const out = { nrows: t.nrows, columns: t.columns.map((c) => c.name),
      rows: Object.fromEntries(Object.entries(rows).map(([k, v]) => [k, { ...describeData(v) }])) };
    t.close();
    return out;
  } catch (e) {
    return describeError(e);
  }
}

/** Reads `url` whole, then waits for the probe's report of that answer. */
async function readProbed(url) {
  const before = probed.length;
  const r = await readAll(url);
  const t0 = performance.now();
  while (probed.length === before && performance.now() - t0 < 3000) await new Promise((res) => setTimeout(res, 10));
  return { ...r, probed: probed.slice(before) };
}

/** readAll with `headers` of `form` ("Headers", "Map", "generator" or "pairs") made here, in
 *  the page (page.evaluate can send none but the pairs). */
async function readWithHeaders(url, form) {
  // A name of each form's own: a preflight is then asked for each (not served from the
  // preflight cache).
  const pairs = [[`X-Form-${form}`, "t1"], [`x-form-${form.toLowerCase()}`, "t2"]];
  const headers = form === "Headers" ? new Headers(pairs)
    : form === "Map" ? new Map(pairs)
      : form === "generator" ? (function* () { yield* pairs; })()
        : pairs;
  return readAll(url, { headers, cache: "none" });
}

window.workerEntry = {
  table, readProbed, probed: () => probed, readWithHeaders,
  readAll, readTogether, api, store, errors, cancel, timeoutKept, readWithPageStore,
  usage: async (o) => { await ready; return cacheUsage(o); },
  clear: async (o) => { await ready; return clearCache(o); },
};
document.body.dataset.state = "ready";
