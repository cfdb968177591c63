// Browser storage for cache "disk": IndexedDB and OPFS stores with the cacheStore shape
// ({ get, put, delete, keys }), Web Locks, and the storage questions the Rust side asks.
// They store bytes as given and check nothing: the SHA-256 markers are checked in Rust
// (src/cache/backend/marked.rs), so a store may lose or damage anything and a read is then
// a miss. Each store recovers when the origin's storage is cleared under it (the next
// operation opens a new database or directory).

// Longest wait for an IndexedDB database to open.
const OPEN_WAIT_MS = 3000;

const isNotFound = (e) => e && (e.name === "NotFoundError" || e.name === "NotFoundErr");

/** An IndexedDB database named `name` with one object store, "blobs". */
export function indexedDbStore(name) {
  let opening = null;
  // Rejections of the transactions in flight: a connection the browser closes (storage
  // cleared) may never complete or abort them, so they are failed when it closes.
  const inflight = new Set();
  const closed = () => {
    opening = null;
    for (const fail of inflight) fail(new DOMException("the IndexedDB connection was closed", "InvalidStateError"));
    inflight.clear();
  };
  const open = () =>
    (opening ??= new Promise((resolve, reject) => {
      const r = indexedDB.open(name, 1);
      r.onupgradeneeded = () => r.result.createObjectStore("blobs");
      r.onsuccess = () => {
        const db = r.result;
        // Another page upgrading or deleting the database, or the browser clearing the
        // origin: let go, and open again on the next operation.
        db.onversionchange = () => {
          db.close();
          closed();
        };
        db.onclose = closed;
        resolve(db);
      };
      r.onerror = () => {
        opening = null;
        reject(r.error);
      };
      r.onblocked = () => {
        opening = null;
        reject(new DOMException(`IndexedDB ${name} is blocked by another connection`, "InvalidStateError"));
      };
      // An open queued behind the deletion of the origin's storage can wait without end.
      setTimeout(() => {
        if (r.readyState !== "done") {
          opening = null;
          reject(new DOMException(`IndexedDB ${name} did not open in ${OPEN_WAIT_MS} ms`, "TimeoutError"));
        }
      }, OPEN_WAIT_MS);
    }));
  const run = async (mode, op) => {
    for (let attempt = 0; ; attempt++) {
      const db = await open();
      try {
        return await new Promise((resolve, reject) => {
          const fail = (e) => {
            inflight.delete(fail);
            reject(e);
          };
          inflight.add(fail);
          try {
            const tx = db.transaction("blobs", mode);
            const req = op(tx.objectStore("blobs"));
            tx.oncomplete = () => {
              inflight.delete(fail);
              resolve(req.result);
            };
            tx.onabort = () => fail(tx.error ?? req.error ?? new DOMException("aborted", "AbortError"));
          } catch (e) {
            fail(e);
          }
        });
      } catch (e) {
        // A connection closed under us (storage cleared): one more try on a new one.
        if (attempt === 0 && e && e.name === "InvalidStateError") {
          opening = null;
          continue;
        }
        throw e;
      }
    }
  };
  return {
    get: (key) =>
      run("readonly", (s) => s.get(key)).then((v) => (v === undefined ? undefined : new Uint8Array(v))),
    put: (key, bytes) => run("readwrite", (s) => s.put(bytes, key)).then(() => undefined),
    delete: (key) => run("readwrite", (s) => s.delete(key)).then(() => undefined),
    keys: (prefix) =>
      run("readonly", (s) =>
        s.getAllKeys(prefix === "" ? undefined : IDBKeyRange.bound(prefix, prefix + "\uffff")),
      ).then((ks) => ks.filter((k) => typeof k === "string" && k.startsWith(prefix))),
  };
}

/** Whether this global is a dedicated worker, where OPFS has synchronous access handles. */
function dedicatedWorker() {
  return (
    typeof DedicatedWorkerGlobalScope !== "undefined" &&
    globalThis instanceof DedicatedWorkerGlobalScope &&
    typeof FileSystemFileHandle !== "undefined" &&
    "createSyncAccessHandle" in FileSystemFileHandle.prototype
  );
}

/** A directory `name` of the origin private file system, one file per key (the key
 *  percent-encoded). In a dedicated worker, files are read and written through synchronous
 *  access handles: a "readwrite" handle is exclusive, so reads open "read-only" handles,
 *  which many readers may hold at once. On the main thread, reads use getFile() and writes
 *  createWritable(), which publishes the file whole when closed. */
export function opfsStore(name) {
  let dir = null;
  const directory = () =>
    (dir ??= navigator.storage.getDirectory().then((root) => root.getDirectoryHandle(encodeURIComponent(name), { create: true })));
  const sync = dedicatedWorker();
  const file = (key) => encodeURIComponent(key);
  // The directory was removed under us (storage cleared): one more try on a new one.
  const again = async (op) => {
    try {
      return await op(await directory());
    } catch (e) {
      if (!isNotFound(e) && !(e && e.name === "InvalidStateError")) throw e;
      dir = null;
      return await op(await directory());
    }
  };
  const readFile = async (h) => {
    if (sync) {
      const a = await h.createSyncAccessHandle({ mode: "read-only" });
      try {
        const out = new Uint8Array(a.getSize());
        a.read(out, { at: 0 });
        return out;
      } finally {
        a.close();
      }
    }
    return new Uint8Array(await (await h.getFile()).arrayBuffer());
  };
  const writeFile = async (h, bytes) => {
    if (sync) {
      const a = await h.createSyncAccessHandle();
      try {
        a.truncate(0);
        a.write(bytes, { at: 0 });
        a.flush();
      } finally {
        a.close();
      }
      return;
    }
    const w = await h.createWritable();
    try {
      await w.write(bytes);
      await w.close();
    } catch (e) {
      await w.abort().catch(() => {});
      throw e;
    }
  };
  return {
    get: async (key) => {
      try {
        const d = await directory();
        return await readFile(await d.getFileHandle(file(key)));
      } catch (e) {
        if (isNotFound(e)) return undefined;
        throw e;
      }
    },
    put: (key, bytes) => again(async (d) => writeFile(await d.getFileHandle(file(key), { create: true }), bytes)),
    delete: (key) =>
      again(async (d) => {
        try {
          await d.removeEntry(file(key));
        } catch (e) {
          if (!isNotFound(e)) throw e;
        }
      }),
    keys: (prefix) =>
      again(async (d) => {
        const out = [];
        for await (const n of d.keys()) {
          let k;
          try {
            k = decodeURIComponent(n);
          } catch {
            continue;
          }
          if (k.startsWith(prefix)) out.push(k);
        }
        return out;
      }),
  };
}

export function hasIndexedDb() {
  return typeof indexedDB !== "undefined";
}

export function hasOpfs() {
  return typeof navigator !== "undefined" && !!navigator.storage && typeof navigator.storage.getDirectory === "function";
}

export function isWindow() {
  return typeof window !== "undefined" && typeof document !== "undefined";
}

/** navigator.storage.persist() (a window only); resolves to whether storage is persistent. */
export async function persistStorage() {
  return !!(navigator.storage && navigator.storage.persist && (await navigator.storage.persist()));
}

/** Takes the Web Lock `name` (exclusive), waiting at most `waitMs`; resolves to a function
 *  releasing it, or to null where there are no Web Locks (Node, workerd); rejects when the
 *  lock was not had in time. */
export async function webLock(name, waitMs) {
  const locks = typeof navigator !== "undefined" ? navigator.locks : undefined;
  if (!locks || typeof locks.request !== "function") return null;
  let release;
  const held = new Promise((r) => (release = r));
  await new Promise((acquired, failed) => {
    const options = typeof AbortSignal.timeout === "function" ? { signal: AbortSignal.timeout(waitMs) } : {};
    locks.request(name, options, () => {
      acquired();
      return held;
    }).catch(failed);
  });
  return release;
}
