// What the isolate keeps between requests: opened arrays and stores (shared per source and
// path), requests in flight (single-flight: identical concurrent requests share one read),
// and encoded responses (a least-recently-used map bounded in bytes).

import { coreTurn, trackStore } from "./contexts.mjs";
import { stats } from "./stats.mjs";

/** The package's classes, given by worker.mjs (workerd resolves a bare `chunkwise` import
 *  only from a module at the root of the bundle, so this module does not import it). */
let lib = null;

/** Gives this module the package: `{ RemoteArray, RemoteStore, cacheApiStore }`. */
export function useChunkwise(classes) {
  lib = classes;
}

/** Opens in progress or done, by kind, source and path, least recently used first: entries
 *  `{ p, value, users }` (`p` the open's promise, so concurrent first requests share one
 *  open; `value` once opened; `users` the requests holding it). A failed open is dropped so
 *  the next request tries again. Beyond MAX_OPEN_SOURCES the least recently used entry no
 *  request holds is dropped and closed (`close()`: its handle and MEMORY cache released). */
const opens = new Map();
/** Most entries `opens` keeps (settings.maxOpenSources; set by each open). */
let maxOpen = 64;
/** One Cache API store per cache name: opens given the same store share one coordinator. */
const stores = new Map();

function openOptions(settings, path, mutable, src) {
  const o = { timeoutMs: settings.timeoutMs };
  if (path !== undefined) o.path = path;
  if (settings.cache === "disk" && !(mutable && !revalidatedAtOpen(src))) {
    let s = stores.get(settings.cacheName);
    if (!s) stores.set(settings.cacheName, (s = trackStore(lib.cacheApiStore(settings.cacheName))));
    Object.assign(o, { cache: "disk", cacheStore: s });
  }
  // The core checks a standalone frame's identity at open when told it may change; HDF5,
  // Zarr and containers are always checked against their record at each answer instead
  // (SOURCE_CHANGED), and refuse the option.
  if (mutable && revalidatedAtOpen(src)) o.assumeImmutable = false;
  // Each MEMORY cache is its open's own (shareCache's page-wide one is 256 MiB, over a
  // Workers isolate's 128 MB): MAX_CACHE_BYTES split over the MAX_OPEN_SOURCES opens kept.
  if (o.cache !== "disk") o.maxCacheBytes = Math.floor(settings.maxCacheBytes / settings.maxOpenSources);
  return o;
}

/** Whether the array at (`src`, `path`) is opened or being opened in this isolate. */
export function arrayHeld(src, path) {
  return opens.has(JSON.stringify(["array", src, path ?? null]));
}

/** Whether the store at `src` is opened or being opened in this isolate. */
export function storeHeld(src) {
  return opens.has(JSON.stringify(["store", src]));
}

/** Whether the core revalidates `src` at each open: a standalone `.b2nd` opened with
 *  `assumeImmutable: false` (one request for the first byte, its size, ETag and
 *  Last-Modified compared with the record; changed, the cached entries are dropped). */
export function revalidatedAtOpen(src) {
  return /\.b2nd$/i.test(new URL(src).pathname);
}

/** Whether opens of `src` must be repeated for every request: any source of a
 *  MUTABLE_ORIGINS origin, since a held open keeps answering, and tagging, the content it
 *  first saw. A `.b2nd` is revalidated at the reopen (its caches kept while unchanged); an
 *  HDF5 file or Zarr store, which the core cannot revalidate, is opened with a cache of its
 *  own (no "disk", nothing shared): discovered and read afresh. */
export function reopenEachRequest(mutable) {
  return mutable;
}

/** The array at (`src`, `path`), opened once per isolate (for a source that
 *  `reopenEachRequest`, once per request: concurrent requests still share one open). */
export function openArray(settings, src, path, mutable, lease) {
  maxOpen = settings.maxOpenSources;
  return shared(["array", src, path ?? null], () => coreTurn(() => lib.RemoteArray.open(src, openOptions(settings, path, mutable, src)), 2 * settings.timeoutMs), { keep: !reopenEachRequest(mutable), lease });
}

/** The store (HDF5 file, Zarr store, .b2z) at `src`, opened once per isolate (of a mutable
 *  origin, once per request with a cache of its own, as arrays are). */
export function openStore(settings, src, mutable, lease) {
  maxOpen = settings.maxOpenSources;
  return shared(["store", src], () => coreTurn(() => lib.RemoteStore.open(src, openOptions(settings, undefined, mutable, src)), 2 * settings.timeoutMs), { keep: !reopenEachRequest(mutable), lease });
}

/** A request's hold on the opens it uses: give it to openArray/openStore, and to
 *  `release` once the answer is built, so that no open is closed while a request uses it. */
export function newLease() {
  return [];
}

/** Ends the holds of `lease`: an entry no longer kept (evicted, or of a mutable origin)
 *  that no request holds is closed; then the least recently used beyond MAX_OPEN_SOURCES. */
export function release(lease) {
  for (const e of lease.splice(0)) {
    e.users--;
    if (e.users === 0 && opens.get(e.key) !== e) closeEntry(e);
  }
  evict();
}

function closeEntry(e) {
  if (!e.value || e.closed) return;
  e.closed = true;
  stats.opens.open--;
  stats.opens.closed++;
  try {
    e.value.close();
  } catch {
    // Already closed: nothing held.
  }
}

/** Drops and closes the least recently used entries no request holds, beyond maxOpen. */
function evict() {
  for (const [k, e] of opens) {
    if (opens.size <= maxOpen) break;
    if (e.users === 0 && e.value) {
      opens.delete(k);
      closeEntry(e);
    }
  }
}

/** The open of `keyParts`, started by `open()` unless one is held or in progress, held by
 *  `lease` until released; `keep: false` drops it once settled, so that only concurrent
 *  requests share it (closed when the last of them releases it). */
function shared(keyParts, open, { keep = true, lease = null } = {}) {
  const key = JSON.stringify(keyParts);
  let e = opens.get(key);
  if (e) {
    stats.opens.shared++;
    opens.delete(key);
    opens.set(key, e); // now the most recently used
  } else {
    stats.opens.started++;
    e = { key, p: open(), value: null, users: 0, closed: false };
    opens.set(key, e);
    const entry = e;
    const drop = () => {
      if (opens.get(key) === entry) opens.delete(key);
    };
    entry.p.then((v) => {
      entry.value = v;
      stats.opens.open++;
      if (!keep) drop();
      if (entry.users === 0 && opens.get(key) !== entry) closeEntry(entry);
      evict();
    }, () => {
      stats.opens.failed++;
      drop();
    });
  }
  if (lease) {
    e.users++;
    lease.push(e);
  }
  return e.p;
}

/** Reads in flight by response tag. */
const flights = new Map();

/**
 * Runs `make()` for `key` unless an identical request is in flight, which is then joined.
 * Resolves to `{ value, joined }`.
 */
export async function singleFlight(key, make) {
  const running = flights.get(key);
  if (running) {
    stats.singleFlight.joins++;
    return { value: await running, joined: true };
  }
  stats.singleFlight.leaders++;
  const p = make();
  flights.set(key, p);
  try {
    return { value: await p, joined: false };
  } finally {
    flights.delete(key);
  }
}

/** Encoded responses by tag: `{ body: Uint8Array, headers }`, least recently used first. */
const responses = new Map();
let responseBytes = 0;

/** The response held for `tag` (now the most recently used), or undefined. */
export function cachedResponse(tag) {
  const hit = responses.get(tag);
  if (hit) {
    responses.delete(tag);
    responses.set(tag, hit);
  }
  return hit;
}

/** Keeps `entry` for `tag`, dropping the least recently used beyond `limit` bytes. */
export function keepResponse(tag, entry, limit) {
  const size = entry.body.byteLength;
  if (size > limit / 4) return; // one response never takes over the cache
  if (responses.has(tag)) return;
  responses.set(tag, entry);
  responseBytes += size;
  for (const [k, v] of responses) {
    if (responseBytes <= limit) break;
    responses.delete(k);
    responseBytes -= v.body.byteLength;
  }
}

/** Bytes of encoded responses held. */
export const responseCacheBytes = () => responseBytes;
