// The h5wasm side of tests/e2e/bench-first-preview.js: a classic dedicated worker that loads
// h5wasm's IIFE build with importScripts (as h5wasm's README shows for workers), and on
// { url, zero, path, sel } opens url with FS.createLazyFile (a HEAD, then synchronous range
// requests of 1 MiB blocks, Emscripten's lazy file), reads the hyperslab with
// Dataset.slice and posts { data (transferred), shape, marks (ms on this worker's clock),
// timeOrigin, resources (its range requests, to the end of their bodies: synchronous
// requests, one after the other) }, then { local } (ms of the same slice on three fresh
// lazy files of `zero`, the same source without added latency, each after its open).
self.importScripts("../../scripts/bench-hdf5-js/node_modules/h5wasm/dist/iife/h5wasm.js");
const ready = h5wasm.ready;
const marks = {};
const mark = (name) => { marks[name] = performance.now(); };

self.onmessage = async (e) => {
  const { url, zero, path, sel } = e.data;
  try {
    const { FS } = await ready;
    mark("ready");
    FS.createLazyFile("/", "first.h5", url, true, false);
    const f = new h5wasm.File("/first.h5", "r");
    const ds = f.get(path.replace(/^\//, ""));
    mark("opened");
    const data = ds.slice(sel);
    mark("data");
    const shape = sel.map(([a, b]) => b - a);
    const origin = new URL(url).origin;
    const resources = performance.getEntriesByType("resource").filter((r) => r.name.startsWith(origin))
      .map((r) => ({ name: r.name, start: r.startTime, end: r.responseEnd }));
    self.postMessage({ data, shape, marks, timeOrigin: performance.timeOrigin, resources }, [data.buffer]);
    f.close();
    const local = [];
    for (let i = 0; zero && i < 3; i++) {
      FS.createLazyFile("/", `zero${i}.h5`, zero, true, false);
      const g = new h5wasm.File(`/zero${i}.h5`, "r");
      const d = g.get(path.replace(/^\//, ""));
      const t = performance.now();
      d.slice(sel);
      local.push(performance.now() - t);
      g.close();
    }
    self.postMessage({ local });
  } catch (err) {
    self.postMessage({ error: String((err && err.stack) || err) });
  }
};
