// `chunkwise/worker`: the web build's RemoteArray, RemoteStore and RemoteTable, run in a
// dedicated worker (./worker.js, one wasm instance), so that fetching and decoding never
// block the page. The classes here are stand-ins with the same methods and properties; each
// call is a message to the worker, and each result comes back with its typed arrays'
// buffers transferred (no copy on the way back; readInto copies once into the caller's
// buffer, which stays the caller's).
//
// - `signal` stays on the page: when it aborts, the call rejects at once with
//   `signal.reason` (a code "CANCELLED"/"TIMEOUT" added as the main entry adds it) and the
//   worker is told to abort its own controller, which aborts the requests in flight.
// - `onProgress` is called on the page from the worker's progress messages.
// - Errors are the main entry's `ChunkwiseError` (the same class: this module re-exports it
//   from ../web), with the same code and field; timeouts are "TimeoutError" DOMExceptions.
// - `cache: "disk"` runs in the worker (IndexedDB, or OPFS with synchronous access handles,
//   and the Web Locks of the cache); `persist: true` is asked by the page, since only a window
//   may ask; a `cacheStore` object stays on the page and the worker calls it by message.
// - Properties that change (`traffic`, `cacheBytes`, `cacheErrors`, a store's `nodes` after
//   `refresh`) are the values as of the last call that ended, not live.
import { ChunkwiseError } from "../web/chunkwise.js";

export { ChunkwiseError };

/** Workers started when init() is not told otherwise: one (see init). */
const DEFAULT_WORKERS = 1;

let pool = null; // { workers: Worker[], ready: Promise<void> }
let nextId = 1;
/** call id -> { resolve, reject, onProgress, worker } */
const pending = new Map();
/** Ids of opens the page stopped waiting for (aborted): a late answer's handle is closed. */
const abandoned = new Set();
/** The operations whose answer is a new handle. */
const OPENS = new Set(["openArray", "openStore", "openTable"]);
/** The page's cacheStore objects, by identity, and their ids in the workers. */
const storeIds = new WeakMap();
const storesById = new Map();
let nextStoreId = 1;

function argError(message) {
  return new ChunkwiseError(message, "INVALID_ARGUMENT");
}

/** The rejection value a worker sent (see worker.js serialiseError), made again here. */
function deserialiseError(e) {
  if (e.kind === "chunkwise") return new ChunkwiseError(e.message, e.code, e.field);
  if (e.kind === "dom" && typeof DOMException === "function") {
    const d = new DOMException(e.message, e.name);
    if (e.code !== undefined) {
      Object.defineProperty(d, "code", { value: e.code, configurable: true, writable: true });
    }
    return d;
  }
  if (e.kind === "value") return e.value;
  const err = new Error(e.message);
  err.name = e.name;
  return err;
}

/** `signal.reason` as the main entry rejects with it (src/wasm/abort.rs): an own `code`
 *  "CANCELLED" or "TIMEOUT" on an AbortError or TimeoutError DOMException. */
function abortReason(signal) {
  let r = signalGetter("reason").call(signal);
  if (r === undefined) r = new DOMException("the operation was aborted", "AbortError");
  if (typeof DOMException === "function" && r instanceof DOMException &&
      !Object.prototype.hasOwnProperty.call(r, "code")) {
    const code = r.name === "AbortError" ? "CANCELLED" : r.name === "TimeoutError" ? "TIMEOUT" : null;
    if (code) Object.defineProperty(r, "code", { value: code, configurable: true, writable: true });
  }
  return r;
}

function onMessage(worker, ev) {
  const m = ev.data;
  if (m.op === "progress") {
    const p = pending.get(m.id);
    if (p?.onProgress) {
      // What the callback throws, or the promise it returns rejects with, is ignored, as the
      // main entry ignores it (src/wasm/options.js reportProgress).
      try {
        const returned = p.onProgress({ done: m.done, total: m.total });
        if (returned instanceof Promise) Promise.prototype.then.call(returned, undefined, () => {});
      } catch {
        // ignored
      }
    }
    return;
  }
  if (m.op === "store") {
    answerStore(worker, m);
    return;
  }
  for (const [h, s] of Object.entries(m.stats ?? {})) {
    const t = live.get(worker)?.get(Number(h))?.deref();
    if (t) t._stats = s;
  }
  const p = pending.get(m.id);
  if (!p) {
    // Rejected already (aborted). An open the worker finished anyway holds a handle there
    // that no stand-in will ever close: close it now.
    if (abandoned.delete(m.id) && m.ok && m.value?.handle !== undefined) {
      worker.postMessage({ id: nextId++, op: "close", handle: m.value.handle });
    }
    return;
  }
  pending.delete(m.id);
  if (m.ok) p.resolve(m.value);
  else p.reject(deserialiseError(m.error));
}

/** Runs a method of the page's cacheStore for the worker and posts the answer back. */
async function answerStore(worker, { rid, sid, method, key, bytes }) {
  const store = storesById.get(sid);
  try {
    const value = method === "put" ? await store.put(key, bytes) : await store[method](key);
    worker.postMessage({ op: "storeReply", rid, ok: true, value });
  } catch (e) {
    worker.postMessage({ op: "storeReply", rid, ok: false, error: String(e?.message ?? e) });
  }
}

/** Ends every call of `worker` with `error` (the worker failed or was terminated). */
function failAll(worker, error) {
  for (const [id, p] of pending) {
    if (p.worker === worker) {
      pending.delete(id);
      p.reject(error);
    }
  }
}

/** worker -> (handle -> WeakRef of its stand-in), to mirror the stats each answer carries
 *  (weak, so that a stand-in the page drops can be collected). */
const live = new WeakMap();

/** A stand-in the page dropped without close() is closed in its worker once collected, as
 *  the main entry's classes free theirs (wasm-bindgen's FinalizationRegistry). */
const collected = typeof FinalizationRegistry === "function"
  ? new FinalizationRegistry(({ worker, handle }) => {
    const m = live.get(worker);
    if (!m?.delete(handle)) return; // closed already, or its worker terminated
    release(worker);
    worker.postMessage({ id: nextId++, op: "close", handle });
  })
  : null;

/**
 * Starts the worker(s) and initialises the wasm module in each. Optional: the first open
 * calls it with the defaults. Resolves once every worker is ready; a second call resolves
 * with the first (its options are then ignored).
 *
 * - `workers`: how many dedicated workers, one wasm instance each (default 1). An array,
 *   store or table lives in one worker (a store's arrays and tables in the store's), opens
 *   going to the worker holding the fewest handles. One is the default because a single
 *   read runs in one worker anyway and one worker is what keeps the page responsive; each
 *   more worker costs a module instantiation and its own memory cache (up to
 *   `maxCacheBytes` each, not shared), and pays off only for pages reading several arrays
 *   at once. At most 64.
 * - `module_or_path`: as the web build's init (a URL of chunkwise_bg.wasm, or a compiled
 *   WebAssembly.Module, sent to each worker); default: the package's module.
 * - `workerUrl`: the worker script (default: this package's worker.js next to this file),
 *   for bundlers that move it.
 *
 * Rejects with `INVALID_ARGUMENT` for a bad `workers`, and with the worker's init error.
 */
export default function init(options = {}) {
  if (pool) return pool.ready;
  const { workers = DEFAULT_WORKERS, module_or_path, workerUrl } = options ?? {};
  if (!Number.isInteger(workers) || workers < 1 || workers > 64) {
    return Promise.reject(argError(`workers must be an integer from 1 to 64, got ${workers}`));
  }
  if (typeof Worker !== "function") {
    return Promise.reject(argError("chunkwise/worker needs Worker (a window or a worker); use the main entry here"));
  }
  const list = [];
  for (let i = 0; i < workers; i++) {
    const w = startWorker(workerUrl, i);
    live.set(w, new Map());
    w.onmessage = (ev) => onMessage(w, ev);
    w.onerror = (ev) => {
      ev.preventDefault?.();
      failAll(w, new ChunkwiseError(`the chunkwise worker failed: ${ev.message ?? "error"}`, "IO"));
    };
    list.push(w);
  }
  const p = { workers: list, ready: null };
  pool = p;
  // A URL reaches the worker absolute: a relative one would resolve against worker.js there.
  let mp = module_or_path;
  if (mp instanceof URL) mp = mp.href;
  else if (typeof mp === "string" && globalThis.location) mp = new URL(mp, globalThis.location.href).href;
  p.ready = Promise.all(list.map((w) => call(w, "init", { module_or_path: mp }))).then(() => {}, (e) => {
    if (pool === p) terminate();
    throw e;
  });
  return p.ready;
}

/** Worker `i` of the pool, from `workerUrl` or the package's worker.js. The default is
 *  written as `new Worker(new URL("./worker.js", import.meta.url), { type: "module" })`, one
 *  expression with static options (so one name for all: "chunkwise"): the form Vite and webpack 5 recognise as a worker entry
 *  and bundle with its imports (given a URL from a variable, Vite copies worker.js alone, as
 *  an asset, and its import of ../web/chunkwise.js fails in the build). */
function startWorker(workerUrl, i) {
  if (workerUrl !== undefined) return new Worker(workerUrl, { type: "module", name: `chunkwise-${i}` });
  return new Worker(new URL("./worker.js", import.meta.url), { type: "module", name: "chunkwise" });
}

/** For tests and pages that are done: ends the workers; calls under way reject with
 *  `CANCELLED`, handles become unusable, and a later open starts new workers. */
export function terminate() {
  if (!pool) return;
  generation++;
  for (const w of pool.workers) {
    w.terminate();
    ended.add(w);
    load.delete(w);
    failAll(w, terminated());
    for (const r of live.get(w)?.values() ?? []) {
      const t = r.deref();
      if (t) t._closed = true;
    }
    live.get(w)?.clear();
  }
  pool = null;
}

/** Pools terminated so far: an open started before a terminate() does not go on in the
 *  next pool. */
let generation = 0;
/** Workers terminate() ended: a call to one rejects at once instead of waiting forever. */
const ended = new WeakSet();

function terminated() {
  return new ChunkwiseError("the chunkwise worker was terminated", "CANCELLED");
}

/** The pool once ready, or CANCELLED when terminate() came since generation `gen`. */
async function readyPool(gen = generation) {
  await init();
  if (generation !== gen || !pool) throw terminated();
  return pool;
}

/** worker -> handles it holds or is opening (the measure of pick). */
const load = new WeakMap();

/** The worker taking a new open: the one holding (or opening) the fewest handles, counted
 *  from the pick on so that opens started together spread. `release` gives the place back.
 *  The pool is taken as soon as init() has made it, before its workers are ready: the open
 *  is posted at once, and a worker whose module is still loading sends the open's first
 *  requests meanwhile (worker.js, src/io/early.js). Returns { w, ready }: the worker and
 *  that pool's init. init() refused (no Worker, a bad argument): its error. */
async function pick(gen) {
  const ready = init();
  if (!pool) await ready;
  if (generation !== gen || !pool) throw terminated();
  const ws = pool.workers;
  let best = ws[0];
  for (const w of ws) if ((load.get(w) ?? 0) < (load.get(best) ?? 0)) best = w;
  load.set(best, (load.get(best) ?? 0) + 1);
  return { w: best, ready: pool.ready };
}

function release(w) {
  load.set(w, Math.max(0, (load.get(w) ?? 0) - 1));
}

/** `url` resolved as the main entry's fetch would resolve it here: against the document's
 *  base URL in a window, the location in a worker. In the worker, a relative URL would
 *  resolve against worker.js (another file, or a 404). Other values (a reference object, an
 *  absolute URL) are left as they are. */
function absoluteUrl(url) {
  if (typeof url !== "string" || url.includes("://") || url.startsWith("data:") || url.startsWith("blob:")) return url;
  const base = globalThis.document?.baseURI ?? globalThis.location?.href;
  if (typeof base !== "string") return url;
  try {
    return new URL(url, base).href;
  } catch {
    return url;
  }
}

/** Opens with `op` in a picked worker; the place is given back when the open fails. */
async function openIn(op, url, options, Class, what) {
  const gen = generation;
  const opts = await withPersist(options);
  const { w, ready } = await pick(gen);
  try {
    return new Class(w, await call(w, op, { url: absoluteUrl(url) }, opts), what);
  } catch (e) {
    release(w);
    // The pool's init failed (its workers are then terminated, which cancels this call):
    // init's error, as when the open waited for it.
    await ready;
    throw e;
  }
}

// True for a Headers object of this realm or another (the intrinsic `has` checks its brand).
function isHeaders(v) {
  if (typeof Headers !== "function") return false;
  try {
    Headers.prototype.has.call(v, "a");
    return true;
  } catch {
    return false;
  }
}

/** AbortSignal.prototype's getter `name`: the signal's own properties never run (as in the
 *  main entry, src/io/signal.js). */
function signalGetter(name) {
  return Object.getOwnPropertyDescriptor(AbortSignal.prototype, name).get;
}

/** Whether `v` is an AbortSignal of any realm (the intrinsic getter checks its receiver):
 *  a look-alike object is not, as the main entry refuses it. */
function isAbortSignal(v) {
  if (v === null || typeof v !== "object") return false;
  try {
    signalGetter("aborted").call(v);
    return true;
  } catch {
    return false;
  }
}

/** The message of what a getter or a Proxy trap threw. */
function messageOf(e) {
  try {
    return e instanceof Error ? String(e.message) : String(e);
  } catch {
    return "a value that gives no message";
  }
}

/** The options as an object of their own: every name `opts` or its prototypes (short of
 *  Object.prototype) have, read once. The main entry reads each option by name, so a class
 *  instance's getters count there; a spread would copy own enumerable properties only.
 *  Throws what a getter or a Proxy trap throws. */
function readOptions(opts) {
  const o = {};
  const seen = new Set(["__proto__"]);
  for (let p = opts; p !== null && p !== Object.prototype; p = Object.getPrototypeOf(p)) {
    for (const k of Object.getOwnPropertyNames(p)) {
      if (seen.has(k)) continue;
      seen.add(k);
      o[k] = opts[k];
    }
  }
  return o;
}

/**
 * Posts `op` to `worker`. `opts` (a method's options) lose what cannot cross: `signal` is
 * watched here, `onProgress` kept here, `cacheStore` given an id.
 */
function call(worker, op, args, opts, owner) {
  return new Promise((resolve, reject) => {
    if (ended.has(worker)) {
      reject(terminated());
      return;
    }
    const id = nextId++;
    const msg = { id, op, ...args };
    let onProgress = null;
    let signal = null;
    if (opts !== undefined && opts !== null) {
      if (typeof opts !== "object") {
        reject(argError("options must be an object"));
        return;
      }
      let o;
      try {
        o = readOptions(opts);
      } catch (e) {
        reject(argError(`options could not be read: ${messageOf(e)}`));
        return;
      }
      if (typeof o.onProgress === "function") {
        onProgress = o.onProgress;
        o.__progress = true;
      }
      delete o.onProgress;
      // Other functions are no option of the main entry, which ignores them as it ignores
      // every key it does not know; they cannot cross (and a DataCloneError's message would
      // show their source), so they stay here.
      // Symbols cannot cross either; no option takes one.
      for (const k of Object.keys(o)) if (typeof o[k] === "function" || typeof o[k] === "symbol") delete o[k];
      // A Headers object or another iterable of pairs (a generator) cannot cross: its pairs
      // can. The main entry reads them as it reads any HeadersInit.
      const h = o.headers;
      if (h !== null && typeof h === "object" && !Array.isArray(h) && Symbol.iterator in h) {
        try {
          const pairs = [];
          for (const pair of isHeaders(h) ? Headers.prototype.entries.call(h) : h) {
            if (pairs.length === 65536) throw new TypeError("headers has more than 65536 items");
            pairs.push(pair);
          }
          o.headers = pairs;
        } catch (e) {
          reject(argError(`options could not be read: ${e?.message ?? e}`));
          return;
        }
      }
      if (o.signal !== undefined && o.signal !== null) {
        if (!isAbortSignal(o.signal)) {
          reject(argError("signal must be an AbortSignal"));
          return;
        }
        signal = o.signal;
        o.__signal = true;
      }
      delete o.signal;
      if (o.cacheStore && typeof o.cacheStore === "object") {
        let sid = storeIds.get(o.cacheStore);
        if (sid === undefined) {
          sid = nextStoreId++;
          storeIds.set(o.cacheStore, sid);
          storesById.set(sid, o.cacheStore);
        }
        for (const m of ["get", "put", "delete", "keys"]) {
          if (typeof o.cacheStore[m] !== "function") {
            reject(argError(`cacheStore must have the methods get, put, delete and keys (${m} is missing)`));
            return;
          }
        }
        o.__store = sid;
        delete o.cacheStore;
      }
      msg.opts = o;
    }
    if (signal && signalGetter("aborted").call(signal)) {
      reject(abortReason(signal));
      return;
    }
    // `owner`, the stand-in calling, is held while the call is under way: it is not collected
    // (and its handle closed) in the middle of its own read.
    const entry = { resolve, reject, onProgress, worker, owner };
    if (signal) {
      const onAbort = () => {
        if (!pending.has(id)) return;
        pending.delete(id);
        if (OPENS.has(op)) abandoned.add(id);
        worker.postMessage({ op: "cancel", target: id });
        reject(abortReason(signal));
      };
      EventTarget.prototype.addEventListener.call(signal, "abort", onAbort, { once: true });
      const done = () => EventTarget.prototype.removeEventListener.call(signal, "abort", onAbort);
      entry.resolve = (v) => { done(); resolve(v); };
      entry.reject = (e) => { done(); reject(e); };
    }
    pending.set(id, entry);
    try {
      worker.postMessage(msg);
    } catch (e) {
      pending.delete(id);
      reject(argError(`these arguments cannot be sent to the worker: ${e.message}`));
    }
  });
}

/** `persist: true` asked from the page (a worker may not ask), then left out. */
async function withPersist(opts) {
  if (!opts || typeof opts !== "object" || !opts.persist || opts.cache !== "disk") return opts;
  if (typeof window === "undefined" || !navigator.storage?.persist) return opts; // the worker refuses it
  try {
    await navigator.storage.persist();
  } catch {
    // The answer (granted or not) changes nothing: the cache works either way.
  }
  const { persist: _, ...rest } = opts;
  return rest;
}

/** What every stand-in shares: its worker, handle, and closed state. */
class Handle {
  constructor(worker, { handle, props, stats }, what) {
    this._worker = worker;
    this._handle = handle;
    this._props = props;
    this._stats = stats ?? {};
    this._closed = false;
    this._what = what;
    live.get(worker).set(handle, new WeakRef(this));
    collected?.register(this, { worker, handle }, this);
  }

  _check() {
    if (this._closed) throw argError(`the ${this._what} is closed`);
  }

  _call(op, args = {}, opts) {
    if (this._closed) return Promise.reject(argError(`the ${this._what} is closed`));
    return call(this._worker, op, { handle: this._handle, ...args }, opts, this);
  }

  /** Releases this handle (in the worker too). Later calls throw. */
  close() {
    if (this._closed) return;
    this._closed = true;
    collected?.unregister(this);
    release(this._worker);
    live.get(this._worker)?.delete(this._handle);
    call(this._worker, "close", { handle: this._handle }).catch(() => {});
  }

  /** The main entry's free() (wasm-bindgen's): here the same as close(). */
  free() {
    this.close();
  }
}
// `using` releases a handle, as the main entry's classes (where the engine has Symbol.dispose).
if (typeof Symbol.dispose === "symbol") Handle.prototype[Symbol.dispose] = Handle.prototype.close;

/** `selection` if it can cross to the worker; a function or a symbol (which cannot) gets the
 *  main entry's error for it. */
function checkSelection(selection) {
  const bad = (v) => typeof v === "function" || typeof v === "symbol";
  if (bad(selection)) throw argError("selection must be a string or an array");
  if (Array.isArray(selection) && selection.some(bad)) throw argError("selection items must be numbers, strings or null");
  return selection;
}

/** The name of the built-in typed array class `target` is an instance of (a subclass counts
 *  as its base class, as the main entry's `instanceof` checks count it), or "" for none. */
function typedArrayClass(target) {
  for (let C = target.constructor; typeof C === "function"; C = Object.getPrototypeOf(C)) {
    if (/^(Big)?(Int|Uint|Float)\d+(Clamped)?Array$/.test(C.name) && globalThis[C.name] === C) return C.name;
  }
  return "";
}

/**
 * A remote array opened in the worker: the main entry's RemoteArray, by message. Properties
 * are those of the open (traffic, cacheBytes and cacheErrors: as of the last call that ended).
 */
export class RemoteArray extends Handle {
  /** Opens `url` in a worker (see the main entry's RemoteArray.open). */
  static open(url, options) { return openIn("openArray", url, options, RemoteArray, "array"); }

  get shape() { this._check(); return this._props.shape.slice(); }
  get dtype() { this._check(); return this._props.dtype; }
  get chunks() { this._check(); return this._props.chunks.slice(); }
  get blocks() { this._check(); return this._props.blocks.slice(); }
  get info() { this._check(); return structuredClone(this._props.info); }
  get attrs() { this._check(); return structuredClone(this._props.attrs); }
  get dims() { this._check(); return this._props.dims === null ? null : this._props.dims.slice(); }
  get cacheStatus() { this._check(); return this._props.cacheStatus; }
  get identity() { this._check(); return { ...this._props.identity }; }
  get traffic() { this._check(); return { ...(this._stats.traffic ?? { requests: 0, bytes: 0, roundTrips: 0 }) }; }
  get cacheBytes() { this._check(); return this._stats.cacheBytes ?? 0; }
  get cacheErrors() { this._check(); return this._stats.cacheErrors ?? 0; }

  /** Reads a selection; `data` arrives transferred from the worker. */
  read(selection, options) {
    try {
      return this._call("read", { selection: checkSelection(selection) }, options);
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /** Reads a selection into `target` (class and length checked by the worker before any
   *  request, as the main entry checks them); the values arrive transferred and are copied
   *  once into `target`. */
  async readInto(target, selection, options) {
    if (!ArrayBuffer.isView(target)) {
      throw argError("readInto needs a typed array as its target");
    }
    const desc = { ctor: typedArrayClass(target), length: target.length ?? 0, byteLength: target.byteLength };
    const r = await this._call("readInto", { target: desc, selection: checkSelection(selection) }, options);
    // Detached (transferred away) or resized while the worker read: the main entry's error.
    const changed = () => argError("readInto: the target buffer changed size during the read");
    if (target.byteLength !== desc.byteLength) throw changed();
    try {
      target.set(r.data);
    } catch {
      throw changed();
    }
    return { ...r, data: target };
  }

  getChunk(coords, options) { return this._call("getChunk", { coords }, options); }
  getChunkBytes(coords, options) { return this._call("getChunkBytes", { coords }, options); }
  getChunkBlosc2(coords, options) { return this._call("getChunkBlosc2", { coords }, options); }
}

/**
 * A container (HDF5 file, Zarr store, .b2z archive) opened in the worker; its arrays and
 * tables live in the same worker and share its caches.
 */
export class RemoteStore extends Handle {
  /** Opens and lists a container (or reopens a portable reference) in a worker. */
  static open(url, options) { return openIn("openStore", url, options, RemoteStore, "store"); }

  get nodes() { this._check(); return structuredClone(this._props.nodes); }
  get cacheStatus() { this._check(); return this._props.cacheStatus; }
  get traffic() { this._check(); return { ...(this._stats.traffic ?? { requests: 0, bytes: 0, roundTrips: 0 }) }; }
  get cacheBytes() { this._check(); return this._stats.cacheBytes ?? 0; }

  get(path) { return this._child("get", path, RemoteArray, "array"); }
  table(path) { return this._child("table", path, RemoteTable, "table"); }

  /** An array or table of this store, in its worker (counted in the worker's load). */
  async _child(op, path, Class, what) {
    load.set(this._worker, (load.get(this._worker) ?? 0) + 1);
    try {
      return new Class(this._worker, await this._call(op, { path }), what);
    } catch (e) {
      release(this._worker);
      throw e;
    }
  }
  async refresh() { this._props = await this._call("refresh"); }
  exportReference(options) { return this._call("exportReference", { opts: options }); }
  exportReferenceText(options) { return this._call("exportReferenceText", { opts: options }); }
}

/** A table opened in the worker (see the main entry's RemoteTable). */
export class RemoteTable extends Handle {
  static open(url, options) { return openIn("openTable", url, options, RemoteTable, "table"); }

  get columns() { this._check(); return structuredClone(this._props.columns); }
  get nrows() { this._check(); return this._props.nrows; }

  readRows(start, stop, options) { return this._call("readRows", { start, stop }, options); }
}

/** cacheUsage of the main entry (same options, same result), run in the first worker. */
export async function cacheUsage(options) {
  return call((await readyPool()).workers[0], "cacheUsage", {}, options ?? {});
}

/** clearCache of the main entry (same options, same result), run in the first worker. */
export async function clearCache(options) {
  return call((await readyPool()).workers[0], "clearCache", {}, options ?? {});
}
