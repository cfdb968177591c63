// The dedicated worker behind `chunkwise/worker` (./index.js starts it): one instance of the
// web build's wasm module, the arrays, stores and tables opened in it, and the messages that
// drive them. Each call runs as it would on a page (its own AbortController stands for the
// caller's signal; a "cancel" message aborts it), and its result goes back with its typed
// arrays' buffers transferred, not copied. The DISK cache (IndexedDB, OPFS with synchronous
// access handles, Web Locks) runs here as in any dedicated worker; a `cacheStore` of the page
// is reached through messages (the page's object cannot cross).
//
// Messages in:  { id, op, ...args }  and  { op: "cancel", target }  and
//               { op: "storeReply", rid, ok, value | error }
// Messages out: { id, ok: true, value, stats, handles }  or  { id, ok: false, error, stats, handles }
//               (stats: those that changed, by handle; handles: how many are live),
//               { op: "progress", id, done, total },  { op: "store", rid, sid, method, key, bytes }
import init, {
  ChunkwiseError, RemoteArray, RemoteStore, RemoteTable, cacheUsage, clearCache,
} from "../web/chunkwise.js";

let wasm = null;
/** The module's init while it runs (OPS.init): an open that comes meanwhile is started at once
 *  (the main entry's open then sends its first requests while the module loads, and runs
 *  once it is ready: src/io/early.js); every other call waits for it. */
let initializing = null;
/** The calls started while init runs: the main entry's opens that wait for init themselves. */
const EARLY_OPS = new Set(["openArray", "openStore"]);
let nextHandle = 1;
/** handle -> { kind: "array" | "store" | "table", obj } */
const handles = new Map();
/** call id -> AbortController of a call under way */
const controllers = new Map();
/** The page's cacheStore objects, as stand-ins forwarding each method (one per object, so
 *  that opens naming one store share one cache, as on the page). */
const stores = new Map();
const storeCalls = new Map();
let nextStoreCall = 1;

/** The error as plain fields that survive postMessage (an Error subclass loses its class and
 *  own properties in a structured clone); ./index.js makes the same kind of error again. */
function serialiseError(e) {
  if (e instanceof ChunkwiseError) {
    return { kind: "chunkwise", message: e.message, code: e.code, field: e.field };
  }
  if (typeof DOMException === "function" && e instanceof DOMException) {
    const own = Object.prototype.hasOwnProperty.call(e, "code") ? e.code : undefined;
    return { kind: "dom", name: e.name, message: e.message, code: own };
  }
  if (e instanceof Error) return { kind: "error", name: e.name, message: e.message };
  try {
    return { kind: "value", value: structuredClone(e) };
  } catch {
    return { kind: "error", name: "Error", message: String(e) };
  }
}

/** Buffers of the typed arrays in `v` (a result, or a table's columns) to transfer: never the
 *  wasm memory itself, never one twice. */
function transferables(v, out = []) {
  if (ArrayBuffer.isView(v)) {
    const b = v.buffer;
    if (b instanceof ArrayBuffer && b !== wasm?.memory?.buffer && !out.includes(b)) out.push(b);
  } else if (v && typeof v === "object" && !Array.isArray(v)) {
    for (const k of Object.keys(v)) if (k !== "attrs") transferables(v[k], out);
  }
  return out;
}

/** The values of handle `h` that ./index.js mirrors (they change with calls), or undefined
 *  for a handle closed under us. */
function statsOf(h) {
  const entry = handles.get(h);
  if (!entry) return undefined;
  const { kind, obj } = entry;
  try {
    if (kind === "array") return { traffic: obj.traffic, cacheBytes: obj.cacheBytes, cacheErrors: obj.cacheErrors };
    if (kind === "store") return { traffic: obj.traffic, cacheBytes: obj.cacheBytes };
  } catch {
    // closed under us: nothing to report
  }
  return undefined;
}

/** handle -> the JSON of the stats last sent for it. */
const sent = new Map();

// Which handles a call can change the stats of. A handle's `cacheBytes` and `cacheErrors`
// count its cache coordinator, and a store's `traffic` its arrays' and tables': so a call
// changes the stats of the handles that share the caller's coordinator, and no other. By
// default each open has a private MEMORY cache, which a store shares with the arrays and
// tables it opens (one group per opened root); `shareCache: true` puts every such handle in
// the page-wide MEMORY cache, and `cache: "disk"` (or a `cacheStore`) in one of the DISK
// caches, which opens naming the same cache share: those are two groups ("shared",
// "disk"), a superset of what shares (two DISK caches of other names are one group here).
// Looking only at the caller's group keeps a call's cost independent of how many handles
// are live: reading every live handle's stats after every call cost about 18 µs a handle
// (headless Chromium, 1,500 private arrays live: a one-element read 29 ms, an open 36 ms;
// with the groups 0.5 ms and 7.6 ms, the main entry 0.4 ms and 10 ms).
const ALL = Symbol("every group");
const NONE = Symbol("no group");

/** The group of a handle opened with the page's options `opts` (as posted), or null for a
 *  private cache (the handle's own group). */
function groupOfOptions(opts) {
  if (!opts || typeof opts !== "object") return null;
  const cache = typeof opts.cache === "string" ? opts.cache.toLowerCase() : opts.cache;
  if (opts.__store !== undefined || (cache !== undefined && cache !== null && cache !== "memory" && cache !== "none")) {
    return "disk";
  }
  if (opts.shareCache !== undefined && opts.shareCache !== null && opts.shareCache !== false) return "shared";
  return null;
}

/** Operations that answer with a new handle. */
const OPENS = new Set(["openArray", "openStore", "openTable", "get", "table"]);

/** The group whose stats the call `m` (answered with `value`, undefined when it failed) can
 *  have changed. */
function scopeOf(m, value) {
  if (m.op === "close") return NONE;
  if (OPENS.has(m.op) && value !== undefined) return handles.get(value.handle)?.group ?? NONE;
  if (m.handle !== undefined) return handles.get(m.handle)?.group ?? NONE;
  // A failed open: a private cache went with it.
  if (OPENS.has(m.op)) return groupOfOptions(m.opts) ?? NONE;
  return ALL; // init, cacheUsage, clearCache
}

/** The stats that changed since they were last sent, by handle, of the handles of `scope`
 *  (a group, ALL or NONE): only what changed is sent, so that an answer does not carry
 *  every handle's stats (with them all, a page holding 1,500 handles spent 30 ms per read
 *  and about 20 s closing them). */
function changedStats(scope) {
  const out = {};
  if (scope === NONE) return out;
  for (const [h, entry] of handles) {
    if (scope !== ALL && entry.group !== scope) continue;
    const s = statsOf(h);
    if (s === undefined) continue;
    const json = JSON.stringify(s);
    if (sent.get(h) === json) continue;
    sent.set(h, json);
    out[h] = s;
  }
  return out;
}

/** A stand-in for the page's cacheStore `sid`: each method asks the page and awaits it. */
function storeProxy(sid) {
  let s = stores.get(sid);
  if (s) return s;
  const call = (method, key, bytes) => new Promise((resolve, reject) => {
    const rid = nextStoreCall++;
    storeCalls.set(rid, { resolve, reject });
    const transfer = bytes ? [bytes.buffer] : [];
    // The cache hands over a copy it no longer needs; transferring spares a copy.
    postMessage({ op: "store", rid, sid, method, key, bytes }, transfer.filter((b) => b !== wasm?.memory?.buffer));
  });
  s = {
    get: (key) => call("get", key),
    put: (key, bytes) => call("put", key, bytes instanceof Uint8Array ? bytes.slice() : bytes),
    delete: (key) => call("delete", key),
    keys: (prefix) => call("keys", prefix),
  };
  stores.set(sid, s);
  return s;
}

/** Options as the page gave them, with the parts that could not cross put back: the call's
 *  own signal, a progress callback that posts messages, the cacheStore stand-in. */
function options(id, opts, ctrl) {
  const o = { ...(opts ?? {}) };
  if (o.__progress) o.onProgress = ({ done, total }) => postMessage({ op: "progress", id, done, total });
  if (o.__store !== undefined) o.cacheStore = storeProxy(o.__store);
  delete o.__progress;
  delete o.__store;
  if (o.__signal) o.signal = ctrl.signal;
  delete o.__signal;
  return o;
}

function describeArray(obj) {
  return { shape: obj.shape, dtype: obj.dtype, chunks: obj.chunks, blocks: obj.blocks, info: obj.info,
    attrs: obj.attrs, dims: obj.dims, cacheStatus: obj.cacheStatus, identity: obj.identity };
}
function describeStore(obj) {
  return { nodes: obj.nodes, cacheStatus: obj.cacheStatus };
}
function describeTable(obj) {
  return { columns: obj.columns, nrows: obj.nrows };
}

/** Keeps `obj` under a new handle, in `group` (null: a group of its own). */
function keep(kind, obj, group) {
  const handle = nextHandle++;
  handles.set(handle, { kind, obj, group: group ?? `h${handle}` });
  const describe = kind === "array" ? describeArray : kind === "store" ? describeStore : describeTable;
  const stats = statsOf(handle);
  if (stats !== undefined) sent.set(handle, JSON.stringify(stats));
  return { handle, props: describe(obj), stats };
}

function get(handle) {
  const h = handles.get(handle);
  if (!h) throw new ChunkwiseError("the handle is closed", "INVALID_ARGUMENT");
  return h.obj;
}

/** A typed array of the class and length of the page's target (a DataView when the class is
 *  no typed array), so that this module's readInto checks it exactly as the page's would. */
function targetLike({ ctor, length, byteLength }) {
  const C = /^(Big)?(Int|Uint|Float)\d+(Clamped)?Array$/.test(ctor) ? globalThis[ctor] : undefined;
  if (typeof C === "function") return new C(length);
  return new DataView(new ArrayBuffer(byteLength));
}

const OPS = {
  async init({ module_or_path }) {
    initializing = init(module_or_path === undefined ? undefined : { module_or_path });
    try {
      wasm = await initializing;
    } finally {
      initializing = null;
    }
    return null;
  },
  async openArray({ url, opts }, o) { return keep("array", await RemoteArray.open(url, o(opts)), groupOfOptions(opts)); },
  async openStore({ url, opts }, o) { return keep("store", await RemoteStore.open(url, o(opts)), groupOfOptions(opts)); },
  async openTable({ url, opts }, o) { return keep("table", await RemoteTable.open(url, o(opts)), groupOfOptions(opts)); },
  async read({ handle, selection, opts }, o) { return get(handle).read(selection, o(opts)); },
  async readInto({ handle, target, selection, opts }, o) {
    return get(handle).readInto(targetLike(target), selection, o(opts));
  },
  async getChunk({ handle, coords, opts }, o) { return get(handle).getChunk(coords, o(opts)); },
  async getChunkBytes({ handle, coords, opts }, o) { return get(handle).getChunkBytes(coords, o(opts)); },
  async getChunkBlosc2({ handle, coords, opts }, o) { return get(handle).getChunkBlosc2(coords, o(opts)); },
  // What a store opens reads through the store's cache: the store's group.
  async get({ handle, path }) { return keep("array", await get(handle).get(path), handles.get(handle)?.group); },
  async table({ handle, path }) { return keep("table", await get(handle).table(path), handles.get(handle)?.group); },
  async refresh({ handle }) {
    const s = get(handle);
    await s.refresh();
    return describeStore(s);
  },
  async exportReference({ handle, opts }) { return get(handle).exportReference(opts); },
  async exportReferenceText({ handle, opts }) { return get(handle).exportReferenceText(opts); },
  async readRows({ handle, start, stop, opts }, o) { return get(handle).readRows(start, stop, o(opts)); },
  async close({ handle }) {
    const h = handles.get(handle);
    handles.delete(handle);
    sent.delete(handle);
    h?.obj.close();
    return null;
  },
  async cacheUsage({ opts }, o) { return cacheUsage(o(opts)); },
  async clearCache({ opts }, o) { return clearCache(o(opts)); },
};

self.onmessage = async (ev) => {
  const m = ev.data;
  if (m.op === "cancel") {
    controllers.get(m.target)?.abort();
    return;
  }
  if (m.op === "storeReply") {
    const c = storeCalls.get(m.rid);
    storeCalls.delete(m.rid);
    if (!c) return;
    if (m.ok) c.resolve(m.value);
    else c.reject(new Error(m.error));
    return;
  }
  const run = OPS[m.op];
  const ctrl = new AbortController();
  controllers.set(m.id, ctrl);
  try {
    if (!run) throw new ChunkwiseError(`unknown operation ${m.op}`, "INVALID_ARGUMENT");
    if (m.op !== "init" && !wasm) {
      if (!initializing) throw new ChunkwiseError("the worker's module is not initialised", "INVALID_ARGUMENT");
      if (!EARLY_OPS.has(m.op)) await initializing;
    }
    const value = await run(m, (opts) => options(m.id, opts, ctrl));
    const stats = changedStats(scopeOf(m, value));
    try {
      postMessage({ id: m.id, ok: true, value, stats, handles: handles.size }, transferables(value));
    } catch (e) {
      // A value the structured clone refuses (it should not happen): say so, typed.
      postMessage({ id: m.id, ok: false, error: serialiseError(new ChunkwiseError(
        `the worker's result could not be sent to the page: ${e.message}`, "INVALID_DATA")), stats, handles: handles.size });
    }
  } catch (e) {
    postMessage({ id: m.id, ok: false, error: serialiseError(e), stats: changedStats(scopeOf(m)), handles: handles.size });
  } finally {
    controllers.delete(m.id);
  }
};
