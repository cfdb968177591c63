// window.cacheTest for disk-cache.test.mjs: open + read with the web build in this page or in
// a dedicated worker (cache-worker.js), cache usage and clearing, and damage done to stored
// blobs through the page's own IndexedDB / OPFS API.
import init, { RemoteArray, cacheUsage, clearCache } from "/pkg/web/chunkwise.js";

const ready = init();

/** { data (Numbers), shape, traffic } of a whole read, or { error, code }. */
async function readHere(url, opts, select = "...") {
  await ready;
  try {
    const arr = await RemoteArray.open(url, opts);
    const r = await arr.read(select);
    const out = { data: Array.from(r.data, Number), shape: r.shape, traffic: arr.traffic, cacheStatus: arr.cacheStatus, cacheErrors: arr.cacheErrors };
    arr.close();
    return out;
  } catch (e) {
    return { error: `${e.code}: ${e.message}`, code: e.code };
  }
}

function readInWorker(url, opts) {
  return new Promise((resolve) => {
    const w = new Worker(new URL("./cache-worker.js", import.meta.url), { type: "module" });
    w.onmessage = (e) => { resolve(e.data); w.terminate(); };
    w.onerror = (e) => { resolve({ error: `worker: ${e.message}` }); w.terminate(); };
    w.postMessage({ url, opts });
  });
}

let kept = null;

/** Flips one byte of every stored blob (payload and source copies) of the cache `name`. */
async function damage(backend, name) {
  let n = 0;
  const isBlob = (k) => /^(payload|sources)\/b\//.test(k);
  if (backend === "indexeddb") {
    const db = await new Promise((res, rej) => {
      const r = indexedDB.open(name);
      r.onsuccess = () => res(r.result);
      r.onerror = () => rej(r.error);
    });
    const tx = db.transaction("blobs", "readwrite");
    const st = tx.objectStore("blobs");
    const keys = await new Promise((res) => { const q = st.getAllKeys(); q.onsuccess = () => res(q.result); });
    for (const k of keys.filter(isBlob)) {
      const v = await new Promise((res) => { const q = st.get(k); q.onsuccess = () => res(q.result); });
      const b = new Uint8Array(v);
      if (b.length === 0) continue;
      b[b.length >> 1] ^= 0x55;
      st.put(b, k);
      n++;
    }
    await new Promise((res) => { tx.oncomplete = res; });
    db.close();
  } else {
    const dir = await (await navigator.storage.getDirectory()).getDirectoryHandle(name);
    for await (const [file, h] of dir.entries()) {
      if (!isBlob(decodeURIComponent(file))) continue;
      const b = new Uint8Array(await (await h.getFile()).arrayBuffer());
      if (b.length === 0) continue;
      b[b.length >> 1] ^= 0x55;
      const w = await h.createWritable();
      await w.write(b);
      await w.close();
      n++;
    }
  }
  return n;
}

/** Removes every IndexedDB database and OPFS directory of this origin (benchmarks). */
async function clearAll() {
  for (const d of await indexedDB.databases()) {
    await new Promise((res) => { const r = indexedDB.deleteDatabase(d.name); r.onsuccess = r.onerror = r.onblocked = res; });
  }
  const root = await navigator.storage.getDirectory();
  for await (const name of root.keys()) await root.removeEntry(name, { recursive: true });
}

window.cacheTest = {
  /** Milliseconds of open + read of `select` (then close), or { error }. */
  time: async (url, opts, select) => {
    await ready;
    try {
      const t0 = performance.now();
      const arr = await RemoteArray.open(url, opts);
      await arr.read(select);
      const ms = performance.now() - t0;
      arr.close();
      return { ms };
    } catch (e) {
      return { error: `${e.code}: ${e.message}` };
    }
  },
  clearAll,
  read: (url, opts, worker) => (worker ? readInWorker(url, opts) : readHere(url, opts)),
  usage: async (opts) => { await ready; return cacheUsage(opts); },
  clear: async (opts) => { await ready; return clearCache(opts); },
  damage,
  /** Opens an array and keeps it open for readKept. */
  keep: async (url, opts) => { await ready; kept = await RemoteArray.open(url, opts); },
  readKept: async (select) => {
    try {
      const r = await kept.read(select);
      return { data: Array.from(r.data, Number), shape: r.shape, traffic: kept.traffic };
    } catch (e) {
      return { error: `${e.code}: ${e.message}`, code: e.code };
    }
  },
};
