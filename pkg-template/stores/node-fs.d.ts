/** A persistent key-value store for cache "disk" (the OpenOptions.cacheStore shape). */
export interface CacheStore {
  get(key: string): Promise<Uint8Array | undefined | null>;
  put(key: string, bytes: Uint8Array): Promise<void>;
  delete(key: string): Promise<void>;
  keys(prefix: string): Promise<string[]>;
}

/**
 * A cacheStore over the directory `dir` (a path or file: URL), one file (mode 0600) per key,
 * named by the key's percent-encoding and written through a temporary file and a rename.
 * The directory is created mode 0700 (with its parents) or checked at once: throws an Error
 * when it is not a directory, is owned by another user, or is writable by group or others.
 */
export function nodeFsStore(dir: string | URL): CacheStore;
