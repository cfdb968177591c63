// `chunkwise/stores/cache-api`: a cacheStore for `cache: "disk"` over the Cache API
// (`caches.open(name)`): Cloudflare Workers and workerd, or a browser, service worker or Deno.
//
// Each key is one entry: a 200 Response (the Cache API refuses 206) with the bytes as its body,
// under the synthetic GET request `https://chunkwise.invalid/<encodeURIComponent(key)>` (no
// request is ever sent there: `.invalid` is a reserved name). The store only moves bytes:
// chunkwise checks every blob against its SHA-256 marker, so an entry evicted, expired or
// damaged is a miss (refetched), never a wrong value.
//
// Listing: browsers have `cache.keys()`; Cloudflare's cache (and workerd's) has no listing (its
// `cache.keys()` throws "not implemented"), so there `keys` resolves to []: chunkwise's
// maxCacheBytes then bounds only the entries this isolate wrote, and the platform evicts the
// rest on its own terms (entries stay in the data centre that wrote them). On Cloudflare,
// Cache API calls in *.workers.dev deployments and previews do nothing (every read is then a
// miss): use a custom domain.

/** Origin of the synthetic request URLs. */
const ORIGIN = "https://chunkwise.invalid/";
/** Default lifetime asked of the platform for an entry (s): a year; it may evict sooner. */
const DEFAULT_MAX_AGE = 365 * 24 * 3600;

/**
 * A cacheStore over the Cache API cache `name` (`caches.open(name)`, opened at the first
 * operation), for `RemoteArray.open(url, { cache: "disk", cacheStore: cacheApiStore() })`.
 * Create it once (at module scope) and reuse it: opens given the same store object share one
 * cache coordinator and its budget.
 *
 * `caches` is the CacheStorage to use (default `globalThis.caches`); `maxAge` the
 * `Cache-Control: max-age` of the stored responses in seconds (default a year).
 * Throws a TypeError when there is no CacheStorage.
 *
 * @param {string} [name]
 * @param {{ caches?: CacheStorage, maxAge?: number }} [options]
 */
export function cacheApiStore(name = "chunkwise", { caches: c = globalThis.caches, maxAge = DEFAULT_MAX_AGE } = {}) {
  if (!c || typeof c.open !== "function") {
    throw new TypeError("cacheApiStore: this host has no Cache API (globalThis.caches); pass { caches }");
  }
  if (typeof name !== "string" || name === "") throw new TypeError("cacheApiStore: name must be a non-empty string");
  if (!Number.isInteger(maxAge) || maxAge < 0) throw new TypeError("cacheApiStore: maxAge must be a non-negative integer (seconds)");
  let opening = null;
  /** Whether cache.keys() lists (false once it said it is not implemented). */
  let listable = true;
  const cache = () =>
    (opening ??= Promise.resolve(c.open(name)).catch((e) => {
      opening = null;
      throw e;
    }));
  const url = (key) => ORIGIN + encodeURIComponent(String(key));
  return {
    async get(key) {
      const r = await (await cache()).match(url(key));
      if (!r) return undefined;
      return new Uint8Array(await r.arrayBuffer());
    },
    async put(key, bytes) {
      if (!(bytes instanceof Uint8Array)) throw new TypeError("cacheApiStore: put needs a Uint8Array");
      const res = new Response(bytes, {
        status: 200,
        headers: {
          "content-type": "application/octet-stream",
          "cache-control": `max-age=${maxAge}`,
        },
      });
      await (await cache()).put(url(key), res);
    },
    async delete(key) {
      await (await cache()).delete(url(key));
    },
    async keys(prefix) {
      const k = await cache();
      if (!listable || typeof k.keys !== "function") return [];
      let requests;
      try {
        requests = await k.keys();
      } catch (e) {
        // workerd has the method but no listing: "the method is not implemented".
        if (!/not implemented/i.test(String(e && e.message))) throw e;
        listable = false;
        return [];
      }
      const out = [];
      for (const req of requests) {
        const u = typeof req === "string" ? req : req.url;
        if (!u.startsWith(ORIGIN)) continue;
        let key;
        try {
          key = decodeURIComponent(u.slice(ORIGIN.length));
        } catch {
          continue;
        }
        if (key.startsWith(prefix)) out.push(key);
      }
      return out;
    },
  };
}
