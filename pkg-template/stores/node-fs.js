// `chunkwise/stores/node-fs`: a cacheStore for `cache: "disk"` in Node, over one directory of
// the local file system, one file per key.
//
// The store only moves bytes: chunkwise checks every blob against its SHA-256 marker, so a
// file lost, truncated or damaged here is a miss (refetched), never a wrong value. What the
// store does guard is the directory itself, as the native cache does (src/cache/backend/fs.rs,
// `private_dir`): it is created mode 0700, and an existing one owned by another user, or
// writable by group or others, is refused, since whoever can write there chooses what is served
// from the cache. Files are written mode 0600 to a temporary name, then renamed into place, so
// a reader sees a value whole or not at all.

import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** Prefix of temporary files; no encoded key starts with "." (see fileName). */
const TEMP_PREFIX = ".tmp-";
/** Age past which a temporary file is taken as left by a writer that died (ms). */
const STALE_TEMP_MS = 10 * 60 * 1000;
/** Longest file name most file systems accept (bytes; NAME_MAX on Linux). */
const MAX_NAME_BYTES = 255;

/**
 * The file name of `key`: encodeURIComponent, with "." and "*" escaped too, so a name is never
 * "." or "..", never starts with ".", and holds no path separator or character Windows refuses.
 * Decoded by decodeURIComponent.
 */
function fileName(key) {
  const name = encodeURIComponent(key).replace(/\./g, "%2E").replace(/\*/g, "%2A");
  if (name.length > MAX_NAME_BYTES) {
    throw new RangeError(`nodeFsStore: the key is too long for a file name (${name.length} > ${MAX_NAME_BYTES} bytes encoded); use a shorter cacheName`);
  }
  return name;
}

/** The key of file `name`, or null for names that are no encoded key (temporary files, others). */
function keyOf(name) {
  if (name.startsWith(".")) return null;
  try {
    const key = decodeURIComponent(name);
    return fileName(key) === name ? key : null;
  } catch {
    return null;
  }
}

/**
 * Creates `dir` (and missing parents) mode 0700, or checks that the existing `dir` is a
 * directory owned by this process's effective user and not writable by group or others.
 * Throws an Error naming the rule broken. Ownership and modes are not checked on Windows.
 */
function privateDir(dir) {
  let st;
  try {
    st = fs.statSync(dir);
  } catch (e) {
    if (e.code !== "ENOENT") throw e;
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    st = fs.statSync(dir);
  }
  if (!st.isDirectory()) throw new Error(`nodeFsStore: ${dir} is not a directory`);
  if (typeof process.geteuid === "function") {
    const ours = process.geteuid();
    if (st.uid !== ours) {
      throw new Error(`nodeFsStore: ${dir} is owned by uid ${st.uid}, not by this process (uid ${ours}): its owner could make it serve entries of their choosing; use a directory you own`);
    }
    const mode = st.mode & 0o7777;
    if (mode & 0o022) {
      throw new Error(`nodeFsStore: ${dir} has mode ${mode.toString(8).padStart(4, "0")}: other users can write to it; use a directory only you can write to (chmod 700)`);
    }
  }
}

/** A name for a temporary file in the directory, unique to this process and call. */
let tempSeq = 0;
const tempName = () =>
  `${TEMP_PREFIX}${process.pid}-${Date.now().toString(36)}-${(tempSeq++).toString(36)}-${Math.random().toString(36).slice(2, 10)}`;

/**
 * A cacheStore over the directory `dir` (a path or a file: URL), for
 * `RemoteArray.open(url, { cache: "disk", cacheStore: nodeFsStore(dir) })`.
 *
 * The directory is created (mode 0700, with its parents) or checked now: this throws an Error
 * when it is not a directory, is owned by another user, or is writable by group or others. Each
 * key is one file (mode 0600) named by its percent-encoding; `get` of a key without a file
 * resolves to undefined. A directory removed while in use is created again at the next write.
 *
 * @param {string | URL} dir
 * @returns {{ get(key: string): Promise<Uint8Array | undefined>, put(key: string, bytes: Uint8Array): Promise<void>, delete(key: string): Promise<void>, keys(prefix: string): Promise<string[]> }}
 */
export function nodeFsStore(dir) {
  if (dir instanceof URL) dir = fileURLToPath(dir);
  if (typeof dir !== "string" || dir === "") throw new TypeError("nodeFsStore: dir must be a non-empty path or file: URL");
  dir = path.resolve(dir);
  privateDir(dir);
  const file = (key) => path.join(dir, fileName(String(key)));

  const write = async (key, bytes) => {
    const target = file(key);
    const temp = path.join(dir, tempName());
    // "wx": a new file, never one already there (a link planted under the name included).
    const h = await fs.promises.open(temp, "wx", 0o600);
    try {
      try {
        await h.writeFile(bytes);
      } finally {
        await h.close();
      }
      await fs.promises.rename(temp, target);
    } catch (e) {
      await fs.promises.unlink(temp).catch(() => {});
      throw e;
    }
  };

  return {
    async get(key) {
      try {
        const b = await fs.promises.readFile(file(key));
        return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
      } catch (e) {
        if (e.code === "ENOENT") return undefined;
        throw e;
      }
    },
    async put(key, bytes) {
      if (!(bytes instanceof Uint8Array)) throw new TypeError("nodeFsStore: put needs a Uint8Array");
      try {
        await write(key, bytes);
      } catch (e) {
        if (e.code !== "ENOENT") throw e;
        // The directory was removed under us: create it again (checked), then once more.
        privateDir(dir);
        await write(key, bytes);
      }
    },
    async delete(key) {
      try {
        await fs.promises.unlink(file(key));
      } catch (e) {
        if (e.code !== "ENOENT") throw e;
      }
    },
    async keys(prefix) {
      let names;
      try {
        names = await fs.promises.readdir(dir);
      } catch (e) {
        if (e.code === "ENOENT") return [];
        throw e;
      }
      const out = [];
      for (const n of names) {
        if (n.startsWith(TEMP_PREFIX)) {
          // Left by a writer that died between write and rename: remove it once old.
          const p = path.join(dir, n);
          const st = await fs.promises.lstat(p).catch(() => null);
          if (st && Date.now() - st.mtimeMs > STALE_TEMP_MS) await fs.promises.unlink(p).catch(() => {});
          continue;
        }
        const k = keyOf(n);
        if (k !== null && k.startsWith(prefix)) out.push(k);
      }
      return out;
    },
  };
}
