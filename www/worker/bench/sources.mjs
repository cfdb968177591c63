// Memory of many opened sources: N requests (default 3000), one at a time, for one .b2nd
// fixture under N distinct query strings (each a source the worker opens apart), against
// `chunkwise serve` on 127.0.0.1; prints workerd's VmRSS (/proc/PID/status) before and after,
// the statuses, and /v1/stats' opens. Bindings: CACHE=memory plus any `--var NAME=VALUE`.
//
//   node bench/sources.mjs [--requests 3000] [--sources N] [--var MAX_OPEN_SOURCES=64 ...]
//
// `--sources N` cycles N query strings (default: as many as requests), to tell what grows
// with sources from what grows with requests.

import fs from "node:fs";
import path from "node:path";
import { boxBytes, fixtures, get, manifest, readNpy, scratchDir, startServer, startWorker } from "../tests/harness.mjs";

const args = process.argv.slice(2);
let requests = 3000;
let sources = null;
const vars = { CACHE: "memory" };
for (let i = 0; i < args.length; i++) {
  if (args[i] === "--requests") requests = Number(args[++i]);
  else if (args[i] === "--sources") sources = Number(args[++i]);
  else if (args[i] === "--var") { const [k, ...v] = args[++i].split("="); vars[k] = v.join("="); }
  else throw new Error(`unknown argument ${args[i]}`);
}
const rssKb = (pid) => Number(/VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))[1]);

const f = manifest("blosc2").split_auto;
const npy = readNpy(path.join(fixtures, "blosc2", f.npy));
const scratch = scratchDir();
const server = await startServer({ root: fixtures });
const w = await startWorker(scratch.dir, { vars: { ALLOWED_ORIGINS: server.url.replace(/\/$/, ""), ...vars } });
try {
  await get(w, "/v1/stats");
  const before = rssKb(w.pid);
  const statuses = {};
  let wrong = 0;
  for (let k = 0; k < requests; k++) {
    const row = k % f.shape[0];
    const r = await get(w, "/v1/slice", { src: `${server.url}blosc2/${f.file}?n=${sources ? k % sources : k}`, select: String(row), format: "bin" });
    statuses[r.status] = (statuses[r.status] ?? 0) + 1;
    if (r.status === 200 && Buffer.compare(Buffer.from(r.body), Buffer.from(boxBytes(npy, [[row, row + 1], [0, f.shape[1]]]))) !== 0) wrong++;
  }
  const after = rssKb(w.pid);
  const opens = (await get(w, "/v1/stats")).json().opens;
  console.log("| requests | sources | RSS before (MB) | RSS after (MB) | statuses | wrong values | opens |");
  console.log("| ---: | ---: | ---: | ---: | --- | ---: | --- |");
  console.log(`| ${requests} | ${sources ?? requests} | ${(before / 1024).toFixed(0)} | ${(after / 1024).toFixed(0)} | ${JSON.stringify(statuses)} | ${wrong} | ${JSON.stringify(opens)} |`);
} finally {
  await w.stop();
  await server.stop();
  scratch.remove();
}
