// An open's first requests, sent while the wasm module is still being fetched and compiled.
//
// A page that calls `RemoteArray.open` (or `RemoteStore.open`) before `init()` has resolved
// waits for the module anyway; the web entries' `open` (scripts/build-pkg.sh) hands such a
// call to `openWhenReady`, which sends the requests the open will make first, from the
// location's name and options alone (`firstRequests`), and keeps each answer here under its
// URL and `Range` header (`startEarly`). When the module is ready the open runs as always: its
// `FetchSource` (src/io/fetch.rs) takes an answer kept for exactly the URL and range it would
// ask (`takeEarly`) instead of sending the request. The answer is then judged as any other
// (status, Content-Range, validators), so a guess that misses costs a request and never a
// value: a request nobody took is aborted when its open settles. While it waits for the
// module, the open keeps its `signal` and `timeoutMs` as the open itself does (src/wasm/
// abort.rs), and an init that fails fails it.
//
// `firstRequests` mirrors the openers (src/open/mod.rs `open_array` and `open_store`,
// src/formats/zarr `ZarrArray::open`, `ZarrStore`'s key URLs); tests/e2e/early-open.test.mjs
// checks, per format, that an open started before init makes the same requests as one after
// it, none twice. Where the first request cannot be told from the name and options (a cache
// on disk or in a cacheStore may answer without one, request headers, credentials, Caterva2,
// `.b2z`, a Zarr store opened as a store) it returns none, and the open waits as before.

/** What an open reads first (src/open/mod.rs `fetch_head`: the first 64 KiB). */
const HEAD = "bytes=0-65535";
/** With the head, the tail of a name ending `.b2nd` (src/open/mod.rs B2ND_TAIL_BYTES). */
const B2ND_TAIL = "bytes=-16384";
/** A Zarr metadata object's read (src/formats/zarr/store.rs: MAX_METADATA_BYTES + 1). */
const ZARR_METADATA = "bytes=0-67108864";

const kept = new Map();

function field(options, name) {
  try {
    return options == null ? undefined : Reflect.get(Object(options), name);
  } catch {
    return null;
  }
}

// A signal of any realm (a frame's, a worker's), used only through this realm's own getters
// and methods, as src/io/signal.js does: nothing defined on the signal itself runs.
function signalGet(signal, name) {
  return Reflect.apply(Object.getOwnPropertyDescriptor(AbortSignal.prototype, name).get, signal, []);
}
function isSignal(v) {
  if (v === null || typeof v !== "object" || typeof AbortSignal !== "function") return false;
  try {
    signalGet(v, "aborted");
    return true;
  } catch {
    return false;
  }
}
function aborted(signal) {
  try {
    return signalGet(signal, "aborted") === true;
  } catch {
    return false;
  }
}
function listen(signal, listener, add) {
  try {
    const m = add ? EventTarget.prototype.addEventListener : EventTarget.prototype.removeEventListener;
    Reflect.apply(m, signal, ["abort", listener]);
  } catch { /* the open reports a signal that throws */ }
}

/** A DOMException named AbortError or TimeoutError gets the `code` the open gives it
 *  (src/wasm/abort.rs `add_code`): CANCELLED or TIMEOUT, unless it has one. */
function withCode(e) {
  try {
    // A DOMException of any realm: DOMException.prototype's `name` getter checks the brand.
    const name = Reflect.apply(Object.getOwnPropertyDescriptor(DOMException.prototype, "name").get, e, []);
    const code = { AbortError: "CANCELLED", TimeoutError: "TIMEOUT" }[name];
    if (code && !Object.hasOwn(e, "code")) {
      Object.defineProperty(e, "code", { value: code, writable: true, configurable: true });
    }
  } catch { /* as it is */ }
  return e;
}

/** The rejection of an open whose `signal` aborted (src/wasm/abort.rs `abort_reason`). */
function abortReason(signal) {
  let reason;
  try {
    reason = signalGet(signal, "reason");
  } catch { /* none */ }
  if (reason === undefined && typeof DOMException === "function") reason = new DOMException("the operation was aborted", "AbortError");
  return withCode(reason);
}

/** Whether each option the openers read has a type they accept: an open that will refuse
 *  its options sends no request before the module is ready. */
function plausible(options) {
  if (options == null) return true;
  if (typeof options !== "object") return false;
  const num = (v, min) => v === undefined || (typeof v === "number" && v >= min && !Number.isNaN(v));
  const positive = (v) => v === undefined || (typeof v === "number" && v > 0);
  const str = (v) => v === undefined || typeof v === "string";
  const bool = (v) => v === undefined || typeof v === "boolean";
  const signal = field(options, "signal");
  const maxCache = field(options, "maxCacheBytes");
  return positive(field(options, "timeoutMs")) && (maxCache === null || num(maxCache, 0)) &&
    num(field(options, "coalesceGap"), 0) && num(field(options, "maxMergedBytes"), 0) &&
    str(field(options, "path")) && str(field(options, "cacheKey")) &&
    bool(field(options, "assumeImmutable")) && bool(field(options, "shareCache")) && bool(field(options, "persist")) &&
    (signal === undefined || isSignal(signal));
}

/** Zarr's key encoding (src/formats/zarr/store.rs `percent_encode_key`): every byte outside
 *  RFC 3986's unreserved characters and `/` as %XX. */
function encodeKey(key) {
  let out = "";
  for (const b of new TextEncoder().encode(key)) {
    const c = String.fromCharCode(b);
    out += /[A-Za-z0-9\-._~/]/.test(c) ? c : `%${b.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

/**
 * The requests an open of `url` with `options` makes first: [{ url, range }] (none when they
 * cannot be told). `kind` is "array", "store" or "table" (none: a table's first request
 * depends on its container); `zarr` whether the build reads Zarr.
 */
function firstRequests(url, options, kind, zarr) {
  if (kind === "table" || typeof url !== "string" || !plausible(options)) return [];
  // Only a plain first open: no cache that may answer without a request, no request headers.
  for (const name of ["headers", "credentials", "source", "cacheStore", "cacheName", "cacheBackend"]) {
    if (field(options, name) !== undefined) return [];
  }
  const cache = field(options, "cache");
  if (cache !== undefined && cache !== "memory" && cache !== "none") return [];
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(url);
  if (scheme && !/^https?$/i.test(scheme[1])) return [];
  const cut = url.search(/[?#]/);
  const name = cut < 0 ? url : url.slice(0, cut);
  if (/\.b2z$/i.test(name)) return [];
  if (name.replace(/\/+$/, "").endsWith(".zarr")) {
    // src/open/mod.rs `is_zarr_root`; the array's metadata as ZarrArray::open asks it. Its
    // keys are joined to a URL's path, so only for an absolute URL (src/formats/zarr/store.rs).
    if (!zarr || kind !== "array" || !scheme || field(options, "assumeImmutable") === false) return [];
    // (`plausible` above: `path` is a string or absent.)
    const path = (field(options, "path") ?? "").replace(/^\/+|\/+$/g, "");
    if (path && path.split("/").some((s) => s === "" || s === "." || s === "..")) return [];
    const root = name.replace(/\/+$/, "");
    const query = cut < 0 ? "" : url.slice(cut);
    return ["zarr.json", ".zarray", ".zattrs"].map((k) =>
      ({ url: `${root}/${encodeKey(path ? `${path}/${k}` : k)}${query}`, range: ZARR_METADATA }));
  }
  const first = [{ url, range: HEAD }];
  if (kind === "array" && /\.b2nd$/i.test(name)) first.push({ url, range: B2ND_TAIL });
  return first;
}

function inWorkerd() {
  try {
    return String(globalThis.navigator?.userAgent ?? "").startsWith("Cloudflare-Workers");
  } catch {
    return false;
  }
}

/**
 * Sends `requests` ([{ url, range }]) as FetchSource would (GET, `Range`, no HTTP cache),
 * each kept for one `takeEarly`. A request whose URL and range are already kept (by another
 * open) is not sent twice. Returns the function that aborts and forgets those of its own
 * still kept, none taken (called once the open has settled); `signal` (an AbortSignal of any
 * realm, or undefined), the caller's, does the same when it aborts. A request once taken is
 * the taking read's alone: another open that took it is not cancelled by this one's signal.
 */
function startEarly(requests, signal) {
  const mine = [];
  for (const { url, range } of requests) {
    const key = `${range} ${url}`;
    if (kept.has(key)) continue;
    const controller = new AbortController();
    const init = { method: "GET", headers: { Range: range, "Accept-Encoding": "identity" }, signal: controller.signal };
    if (!inWorkerd()) init.cache = "no-store";
    let answer;
    try {
      answer = globalThis.fetch(url, init);
    } catch (e) {
      answer = Promise.reject(e);
    }
    // Nobody may take it: no unhandled rejection for an abort.
    answer.catch(() => {});
    const entry = { answer, controller };
    kept.set(key, entry);
    mine.push([key, entry]);
  }
  const drop = () => {
    for (const [key, entry] of mine) {
      if (kept.get(key) === entry) {
        kept.delete(key);
        entry.controller.abort();
      }
    }
  };
  const follows = mine.length > 0 && signal !== undefined;
  if (follows) listen(signal, drop, true);
  return () => {
    if (follows) listen(signal, drop, false);
    drop();
  };
}


/**
 * The answer (a Promise of a Response) kept for `url` and `range` (the `Range` header's
 * value), handed over once and then forgotten; `undefined` when none is kept. Aborting
 * `signal` (the read's own) aborts the request.
 */
export function takeEarly(url, range, signal) {
  const key = `${range} ${url}`;
  const e = kept.get(key);
  if (!e) return undefined;
  kept.delete(key);
  if (signal.aborted) e.controller.abort();
  else signal.addEventListener("abort", () => e.controller.abort(), { once: true });
  return e.answer;
}

/**
 * An open called while init() is pending (the web entries' RemoteArray.open and
 * RemoteStore.open, scripts/build-pkg.sh): sends its first requests (`firstRequests` with
 * `kind` and `zarr`, see there), waits for `ready` (the pending init), then runs `run` (the
 * generated open) with the options as they were at the call, and returns its promise. While it waits, `options.signal` aborting rejects
 * with its reason and `options.timeoutMs` running out with a TimeoutError DOMException, as
 * the open itself rejects (src/wasm/abort.rs; the open's own timeout starts when it runs),
 * and an init that fails rejects with `error(message, code)` (a ChunkwiseError, code IO; a
 * ChunkwiseError of init, such as the SIMD check's, as it is). Requests sent and not taken
 * are aborted once the open has settled.
 */
export function openWhenReady(ready, run, url, given, kind, zarr, error) {
  const options = snapshot(given);
  const raw = field(options, "signal");
  const signal = isSignal(raw) ? raw : undefined;
  if (signal && aborted(signal)) return Promise.reject(abortReason(signal));
  let release = () => {};
  try {
    release = startEarly(firstRequests(url, options, kind, zarr), signal);
  } catch { /* no early request: the open sends its own */ }
  const timeoutMs = field(options, "timeoutMs");
  let timer, onAbort;
  const waited = new Promise((resolve, reject) => {
    if (signal) {
      onAbort = () => reject(abortReason(signal));
      listen(signal, onAbort, true);
    }
    if (typeof timeoutMs === "number" && timeoutMs > 0 && timeoutMs < 2 ** 31) {
      timer = setTimeout(() => reject(withCode(new DOMException(
        `the deadline of the operation of ${timeoutMs} ms ran out while chunkwise's module loaded`, "TimeoutError"))), timeoutMs);
    }
    ready.then(resolve, (e) => reject(e?.name === "ChunkwiseError" ? e
      : error(`chunkwise's module failed to load: ${e?.message ?? e}`, "IO")));
  });
  const done = () => {
    clearTimeout(timer);
    if (signal) listen(signal, onAbort, false);
  };
  return waited.then(() => { done(); return run(options); }, (e) => { done(); throw e; }).finally(release);
}

/** The options as they are at the call, read once then (the open reads its options when it
 *  starts, and this one starts later): every property name of the object and of its
 *  prototypes short of Object.prototype, as chunkwise/worker reads them. An object that
 *  throws while read is handed on as it is, for the open to report. */
function snapshot(options) {
  if (options === null || typeof options !== "object") return options;
  try {
    const o = {};
    const seen = new Set(["__proto__"]);
    for (let p = options; p !== null && p !== Object.prototype; p = Object.getPrototypeOf(p)) {
      for (const k of Object.getOwnPropertyNames(p)) {
        if (seen.has(k)) continue;
        seen.add(k);
        o[k] = options[k];
      }
    }
    return o;
  } catch {
    return options;
  }
}
