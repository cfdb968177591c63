/** A persistent key-value store for cache "disk" (the OpenOptions.cacheStore shape). */
export interface CacheStore {
  get(key: string): Promise<Uint8Array | undefined | null>;
  put(key: string, bytes: Uint8Array): Promise<void>;
  delete(key: string): Promise<void>;
  keys(prefix: string): Promise<string[]>;
}

/** Options of cacheApiStore. */
export interface CacheApiStoreOptions {
  /** The CacheStorage to use (default globalThis.caches). */
  caches?: CacheStorage;
  /** Cache-Control max-age of the stored responses, in seconds (default a year). */
  maxAge?: number;
}

/**
 * A cacheStore over the Cache API cache `name` (default "chunkwise"; caches.open(name) at the
 * first operation): each key a 200 Response under https://chunkwise.invalid/<encoded key>.
 * Where the cache cannot be listed (Cloudflare Workers, workerd) keys() resolves to [], so
 * maxCacheBytes bounds only what this isolate wrote. Throws a TypeError without a Cache API.
 */
export function cacheApiStore(name?: string, options?: CacheApiStoreOptions): CacheStore;
