// Records (HDF5 compound types) as /v1/slice?format=json: every field as JSON carries it,
// 64-bit integer fields as decimal strings (as 64-bit integer elements are), subarray
// fields as arrays. The fixture is h5py's (tests/fixtures/gen_hdf5_types.py); the expected
// records are its .npy, read by numpy in the project's venv (never through chunkwise).

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { fixtures, get, scratchDir, startServer, startWorker } from "./harness.mjs";

let server, worker, scratch;
before(async () => {
  scratch = scratchDir();
  server = await startServer({ root: fixtures });
  worker = await startWorker(scratch.dir, { vars: { ALLOWED_ORIGINS: server.url.replace(/\/$/, ""), CACHE: "memory" } });
});
after(async () => {
  await worker?.stop();
  await server?.stop();
  scratch?.remove();
});

/** The records of `npy` as JSON: numbers, bools, bytes as text, u8/i8 as decimal strings. */
function expected(npy) {
  const python = path.join(process.env.HOME, ".cache/chunkwise/venv/bin/python");
  const code = `
import json, sys, numpy as np
a = np.load(sys.argv[1], allow_pickle=False)
def conv(v, dt):
    if dt.names: return {n: conv(v[n], dt.fields[n][0]) for n in dt.names}
    if dt.subdtype: return [conv(x, dt.subdtype[0]) for x in v]
    if dt.kind in "iu" and dt.itemsize == 8: return str(int(v))
    if dt.kind in "iu": return int(v)
    if dt.kind == "b": return bool(v)
    if dt.kind == "f": return float(v) + 0.0
    if dt.kind == "S": return bytes(v).decode("utf-8")
    raise SystemExit("unhandled " + dt.str)
print(json.dumps([conv(r, a.dtype) for r in a.reshape(-1)]))
`;
  const r = spawnSync(python, ["-c", code, npy], { encoding: "utf8" });
  assert.equal(r.status, 0, r.stderr);
  // JSON has no negative zero: compare -0.0 as 0.
  return JSON.parse(r.stdout, (_k, v) => (Object.is(v, -0) ? 0 : v));
}

describe("records as JSON", () => {
  for (const p of ["/compound_chunked", "/compound_fill"]) {
    test(`${p}: a u8 field beyond 2^53 and a subarray field`, async () => {
      const r = await get(worker, "/v1/slice", { src: `${server.url}hdf5_types/types.h5`, path: p, format: "json" });
      assert.equal(r.status, 200, r.text());
      const body = JSON.parse(r.text(), (_k, v) => (Object.is(v, -0) ? 0 : v));
      assert.deepEqual(body.shape, [10]);
      assert.deepEqual(body.values, expected(path.join(fixtures, `hdf5_types/types_${p.slice(1)}.npy`)));
    });
  }
});
