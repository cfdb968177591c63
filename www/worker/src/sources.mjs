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

/** Opens in progress or done, by kind, source and path: promises, so concurrent first
 *  requests share one open; a failed open is dropped so the next request tries again. */
const opens = new Map();
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
export function openArray(settings, src, path, mutable) {
  return shared(["array", src, path ?? null], () => coreTurn(() => lib.RemoteArray.open(src, openOptions(settings, path, mutable, src)), 2 * settings.timeoutMs), { keep: !reopenEachRequest(mutable) });
}

/** The store (HDF5 file, Zarr store, .b2z) at `src`, opened once per isolate (of a mutable
 *  origin, once per request with a cache of its own, as arrays are). */
export function openStore(settings, src, mutable) {
  return shared(["store", src], () => coreTurn(() => lib.RemoteStore.open(src, openOptions(settings, undefined, mutable, src)), 2 * settings.timeoutMs), { keep: !reopenEachRequest(mutable) });
}

/** The open of `keyParts`, started by `open()` unless one is held or in progress; `keep:
 *  false` drops it once settled, so that only concurrent requests share it. */
function shared(keyParts, open, { keep = true } = {}) {
  const key = JSON.stringify(keyParts);
  let p = opens.get(key);
  if (p) {
    stats.opens.shared++;
    return p;
  }
  stats.opens.started++;
  p = open();
  opens.set(key, p);
  const drop = () => {
    if (opens.get(key) === p) opens.delete(key);
  };
  p.then(() => {
    if (!keep) drop();
  }, () => {
    stats.opens.failed++;
    drop();
  });
  return p;
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
