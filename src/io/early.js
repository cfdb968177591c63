// An open's first requests, sent while the wasm module is still being fetched and compiled.
//
// A page that calls `RemoteArray.open` (or `RemoteStore.open`) before `init()` has resolved
// waits for the module anyway; the web entries' `open` (scripts/build-pkg.sh) then sends the
// requests the open will make first, from the location's name and options alone
// (`firstRequests`), and keeps each answer here under its URL and `Range` header
// (`startEarly`). When the module is ready the open runs as always: its `FetchSource`
// (src/io/fetch.rs) takes an answer kept for exactly the URL and range it would ask
// (`takeEarly`) instead of sending the request. The answer is then judged as any other
// (status, Content-Range, validators), so a guess that misses costs a request and never a
// value: a request nobody took is aborted when its open settles.
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
 * cannot be told). `kind` is "array" or "store"; `zarr` whether the build reads Zarr.
 */
export function firstRequests(url, options, kind, zarr) {
  if (typeof url !== "string") return [];
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
    const p = field(options, "path");
    if (p !== undefined && typeof p !== "string") return [];
    const path = (p ?? "").replace(/^\/+|\/+$/g, "");
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
 * each kept for one `takeEarly`. A request whose URL and range are already kept is not sent
 * twice. Returns the function that aborts and forgets those still kept (called once the
 * open has settled). `signal`, the caller's, aborts them too.
 */
export function startEarly(requests, signal) {
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
    kept.set(key, { answer, controller });
    mine.push(key);
  }
  const abort = () => { for (const key of mine) kept.get(key)?.controller.abort(); };
  let follows = false;
  if (mine.length && signal instanceof AbortSignal) {
    try {
      if (signal.aborted) abort();
      else { signal.addEventListener("abort", abort, { once: true }); follows = true; }
    } catch { /* a signal that throws: the open reports it */ }
  }
  return () => {
    if (follows) try { signal.removeEventListener("abort", abort); } catch { /* as above */ }
    for (const key of mine) {
      const e = kept.get(key);
      if (e) { kept.delete(key); e.controller.abort(); }
    }
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
