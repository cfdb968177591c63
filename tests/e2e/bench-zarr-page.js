// window.benchZarr for scripts/bench-zarr-js.mjs: a whole read by chunkwise (web build, from
// ?pkg=DIR, default pkg) or by zarrita; the first call of a page opens (cold), the next ones
// read again on the same handle (warm), or with `fresh` on a new handle (reopen).
const pkg = new URLSearchParams(location.search).get("pkg") || "pkg";
const handles = new Map();

async function sha256(data) {
  const d = await crypto.subtle.digest("SHA-256", new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
  return Array.from(new Uint8Array(d), (b) => b.toString(16).padStart(2, "0")).join("");
}

async function read(reader, url, array, fresh = false) {
  try {
    if (fresh) {
      if (reader === "chunkwise") handles.get(reader)?.close();
      handles.delete(reader);
    }
    let cw = null;
    const t0 = performance.now();
    let data;
    if (reader === "chunkwise") {
      cw = await import(`/${pkg}/web/chunkwise.js`);
      if (!handles.has(reader)) {
        await cw.default();
        const start = performance.now();
        handles.set(reader, await cw.RemoteArray.open(url, { path: array }));
        // Module initialisation is not part of the read.
        data = (await handles.get(reader).read("...")).data;
        return done(performance.now() - start, data, cw);
      }
      data = (await handles.get(reader).read("...")).data;
    } else {
      const zarr = await import("zarrita");
      if (!handles.has(reader)) {
        const start = performance.now();
        handles.set(reader, await zarr.open(zarr.root(new zarr.FetchStore(url)).resolve(array.replace(/^\//, "")), { kind: "array" }));
        data = (await zarr.get(handles.get(reader), null)).data;
        return done(performance.now() - start, data, null);
      }
      data = (await zarr.get(handles.get(reader), null)).data;
    }
    return done(performance.now() - t0, data, cw);
  } catch (e) {
    return { error: String((e && e.stack) || e) };
  }
}

async function done(ms, data, cw) {
  return {
    ms,
    sha: await sha256(data),
    wasm: cw ? cw.wasmMemoryBytes() : null,
    js: performance.memory ? performance.memory.usedJSHeapSize : 0,
  };
}

window.benchZarr = { read };
