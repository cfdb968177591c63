// The JavaScript HDF5 readers on the files of `chunkwise bench remote`, through the same
// loopback server: `node bench.mjs http://127.0.0.1:PORT/`. For each file, in a fresh
// module state per reader: fetch, open, read /data[0:250, 0:500] (the first chunk), and
// print requests, bytes and the time to the first preview's values.
//
// What each reader needs: h5wasm in Node reads from its in-memory file system, so the whole
// file is fetched and written there (its lazy range reads need a worker with synchronous
// requests); jsfive parses an ArrayBuffer of the whole file and reads whole datasets.
import h5wasm from "h5wasm/node";
import * as jsfive from "jsfive";

const base = process.argv[2];
if (!base) {
  console.error("usage: node bench.mjs http://127.0.0.1:PORT/");
  process.exit(2);
}

async function fetchWhole(url) {
  const r = await fetch(url);
  if (!r.ok) throw new Error(`${url}: HTTP ${r.status}`);
  const buf = await r.arrayBuffer();
  return { buf, requests: 1, bytes: buf.byteLength };
}

async function withH5wasm(url) {
  const t0 = performance.now();
  const { buf, requests, bytes } = await fetchWhole(url);
  const { FS } = await h5wasm.ready;
  const name = `bench-${Math.random().toString(36).slice(2)}.h5`;
  FS.writeFile(name, new Uint8Array(buf));
  const f = new h5wasm.File(name, "r");
  const v = f.get("data").slice([[0, 250], [0, 500]]);
  const ms = performance.now() - t0;
  if (v.length !== 250 * 500) throw new Error(`h5wasm returned ${v.length} values`);
  f.close();
  FS.unlink(name);
  return { requests, bytes, ms, first: v[0] };
}

async function withJsfive(url) {
  const t0 = performance.now();
  const { buf, requests, bytes } = await fetchWhole(url);
  const f = new jsfive.File(buf, "bench.h5");
  const ds = f.get("data");
  // jsfive has no partial read: the whole dataset is decoded, then the chunk is cut out.
  const all = ds.value;
  const cols = ds.shape[1];
  const v = new Float32Array(250 * 500);
  for (let i = 0; i < 250; i++) {
    for (let j = 0; j < 500; j++) v[i * 500 + j] = all[i * cols + j];
  }
  const ms = performance.now() - t0;
  return { requests, bytes, ms, first: v[0] };
}

const pad = (s, n) => String(s).padStart(n);
// The wasm module is compiled once per process, before any timing (about a second here).
const tInit = performance.now();
await h5wasm.ready;
const initMs = performance.now() - tInit;
const lines = [
  "JavaScript readers, same files and server (whole file fetched: neither reads ranges in Node)",
  `${"case".padEnd(40)} ${pad("requests", 8)} ${pad("bytes", 10)} ${pad("1st preview ms", 14)}`,
];
for (const file of ["bench_small.h5", "bench_large.h5"]) {
  for (const [name, run] of [
    ["h5wasm 0.10.3", withH5wasm],
    ["jsfive 0.4.2", withJsfive],
  ]) {
    const label = `${name}: ${file}`;
    try {
      const r = await run(new URL(file, base).href);
      lines.push(`${label.padEnd(40)} ${pad(r.requests, 8)} ${pad(r.bytes, 10)} ${pad(r.ms.toFixed(1), 14)}`);
    } catch (e) {
      lines.push(`${label.padEnd(40)} failed: ${e.message}`);
    }
  }
}
lines.push(`(h5wasm module start-up, ${initMs.toFixed(0)} ms, paid once per process before the rows)`);
console.log(lines.join("\n"));
