// Portable references in the Node build: `store.exportReference()` gives a plain object,
// `RemoteStore.open(reference)` (the object or its JSON text) reopens the store in a new
// process with no request for open, listing and every array's open, and a read's values equal
// the .npy its generator wrote. $CHUNKWISE_NODE_MODULE overrides the module (default
// pkg/node/chunkwise.js, from scripts/build-pkg.sh).

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { fixtures, readNpy, repo, scratchDir, startServer } from "./lib.mjs";

const modulePath = process.env.CHUNKWISE_NODE_MODULE || path.join(repo, "pkg/node/chunkwise.js");

let server;
before(async () => { server = await startServer({ root: fixtures }); });
after(async () => { await server?.stop(); });

/** Runs `body` (a module's text, given `chunkwise`) in a new Node process; its stdout as JSON. */
function inNewProcess(body) {
  const { dir, remove } = scratchDir("chunkwise-ref-");
  const file = path.join(dir, "run.cjs");
  fs.writeFileSync(file, `const chunkwise = require(${JSON.stringify(modulePath)});\n(async () => {\n${body}\n})().catch((e) => { console.log(JSON.stringify({ error: e.code || String(e), message: e.message })); });\n`);
  try {
    return JSON.parse(execFileSync(process.execPath, [file], { encoding: "utf8" }));
  } finally {
    remove();
  }
}

describe("portable references (Node build)", () => {
  test("export, then reopen in another process with zero requests; values as written", () => {
    const h5 = server.url + "sample/sample.h5";
    const exported = inNewProcess(`
      const store = await chunkwise.RemoteStore.open(${JSON.stringify(h5)}, {});
      const ref = await store.exportReference();
      console.log(JSON.stringify(ref));`);
    assert.equal(exported.chunkwise_reference, 1);
    assert.equal(exported.kind, "hdf5");
    assert.equal(exported.url, h5);
    assert.equal(exported.identity.len, fs.statSync(path.join(fixtures, "sample/sample.h5")).size);
    assert.ok(exported.records["/surface/precip"], "a dataset record");
    assert.match(exported.sha256, /^[0-9a-f]{64}$/);

    const mark = server.log.length;
    const got = inNewProcess(`
      const ref = ${JSON.stringify(exported)};
      const store = await chunkwise.RemoteStore.open(ref, { cache: "memory" });
      const paths = store.nodes.filter((n) => n.kind === "array" && n.error === null).map((n) => n.path);
      for (const p of paths) await store.get(p);
      const opened = store.traffic.requests;
      const arr = await store.get("/surface/precip");
      const r = await arr.read();
      const text = await chunkwise.RemoteStore.open(JSON.stringify(ref), {});
      let refresh = null;
      try { await store.refresh(); } catch (e) { refresh = e.code; }
      let tampered = null;
      try { await chunkwise.RemoteStore.open({ ...ref, identity: { ...ref.identity, len: 1 } }, {}); }
      catch (e) { tampered = e.code; }
      console.log(JSON.stringify({ opened, arrays: paths.length, requests: store.traffic.requests,
        textRequests: text.traffic.requests, shape: Array.from(r.shape), data: Array.from(r.data), refresh, tampered }));`);
    assert.equal(got.error, undefined, got.message);
    assert.equal(got.opened, 0, "open, nodes and every get made no request");
    assert.ok(got.arrays >= 8);
    assert.ok(got.requests >= 1, "the read fetched the chunks");
    assert.equal(got.textRequests, 0);
    const want = readNpy(path.join(fixtures, "sample/sample_h5_surface_precip.npy"));
    assert.deepEqual(got.shape, want.shape);
    const expected = want.values;
    assert.equal(got.data.length, expected.length);
    got.data.forEach((v, i) => {
      // JSON carries NaN as null.
      if (v === null) assert.ok(Number.isNaN(expected[i]), `element ${i}`);
      else assert.equal(v, expected[i], `element ${i}`);
    });
    assert.equal(got.refresh, "INVALID_ARGUMENT", "an immutable snapshot does not refresh");
    assert.equal(got.tampered, "INVALID_ARGUMENT", "an edited identity is refused");
    const log = server.log.slice(mark);
    assert.ok(log.every((r) => r.range !== null), "range requests only (no whole-file fetch)");
  });
});
