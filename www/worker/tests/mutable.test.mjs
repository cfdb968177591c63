// A source of MUTABLE_ORIGINS rewritten at its URL while the worker holds it open: the worker
// must never answer the old values, nor 304 to the old ETag. The upstream is `chunkwise
// serve` over a scratch root; the file at one URL is replaced by another fixture of the same
// shape, dtype and chunks (python-blosc2 wrote both from different seeded arrays), and each
// answer is compared with the .npy written next to the fixture now at the URL.

import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { spawnSync } from "node:child_process";
import { after, before, describe, test } from "node:test";
import { boxBytes, fixtures, get, readNpy, repo, scratchDir, startServer, startWorker } from "./harness.mjs";

let up, scratch, root;
const origin = (u) => u.replace(/\/$/, "");
const fx = (name) => path.join(fixtures, "blosc2", name);

before(async () => {
  scratch = scratchDir();
  root = path.join(scratch.dir, "root");
  fs.mkdirSync(root);
  up = await startServer({ root });
});
after(async () => {
  await up?.stop();
  scratch?.remove();
});

describe("a mutable source rewritten at its URL", () => {
  for (const cache of ["memory", "disk"]) {
    test(`CACHE=${cache}: after the rewrite, neither a 304 to the old ETag nor the old values`, async () => {
      const name = `m-${cache}.b2nd`;
      fs.copyFileSync(fx("cf_lz4_nofilter.b2nd"), path.join(root, name));
      const w = await startWorker(path.join(scratch.dir, `w-${cache}`), {
        vars: { ALLOWED_ORIGINS: origin(up.url), MUTABLE_ORIGINS: origin(up.url), CACHE: cache },
      });
      try {
        const q = { src: `${up.url}${name}`, select: "0:20, 0:25", format: "bin" };
        const a = readNpy(fx("cf_lz4_nofilter.npy"));
        const b = readNpy(fx("cf_zstd_nofilter.npy"));
        const first = await get(w, "/v1/slice", q);
        assert.equal(first.status, 200, first.text());
        assert.deepEqual(first.body, boxBytes(a, [[0, 20], [0, 25]]));
        const etag = first.headers.get("etag");
        // Rewrite: another file (other size) at the same URL, a later mtime.
        const tmp = path.join(root, `${name}.tmp`);
        fs.copyFileSync(fx("cf_zstd_nofilter.b2nd"), tmp);
        const later = new Date(Date.now() + 5000);
        fs.utimesSync(tmp, later, later);
        fs.renameSync(tmp, path.join(root, name));
        const newValues = boxBytes(b, [[0, 20], [0, 25]]);
        const cond = await get(w, "/v1/slice", q, { "If-None-Match": etag });
        assert.notEqual(cond.status, 304, "a 304 to the ETag of the old content");
        assert.equal(cond.status, 200, cond.text());
        assert.deepEqual(cond.body, newValues, "the values now at the URL");
        const again = await get(w, "/v1/slice", q);
        assert.equal(again.status, 200, again.text());
        assert.deepEqual(again.body, newValues, "the values now at the URL");
        const etag2 = again.headers.get("etag");
        assert.notEqual(etag2, etag, "a strong ETag changes with the content");
        // Unchanged since: the new tag is honoured.
        assert.equal((await get(w, "/v1/slice", q, { "If-None-Match": etag2 })).status, 304);
        // A region not read before the rewrite: the new values too.
        const rest = await get(w, "/v1/slice", { ...q, select: "20:30, 0:25" });
        assert.equal(rest.status, 200, rest.text());
        assert.deepEqual(rest.body, boxBytes(b, [[20, 30], [0, 25]]));
      } finally {
        await w.stop();
      }
    });
  }
});

/** gen_versions.py's sources (pinned python-blosc2, zarr, h5py) written into `dir`. */
function versions(dir) {
  const python = path.join(process.env.HOME, ".cache/chunkwise/venv/bin/python");
  const r = spawnSync(python, [path.join(repo, "tests/fixtures/gen_versions.py"), dir], { encoding: "utf8" });
  assert.equal(r.status, 0, `gen_versions.py: ${r.stderr}`);
  return dir;
}

describe("a mutable HDF5 file or Zarr shard rewritten at its URL", () => {
  let v;
  before(() => { v = versions(path.join(scratch.dir, "versions")); });

  // [what, URL under root, path, selection, npy before, npy after, rewrite(root)]
  const cases = [
    ["HDF5 file", "h.h5", "/group/b", [[0, 10], [0, 4]], "h5_v1_group_b.npy", "h5_v2_group_b.npy",
      (dir) => { fs.copyFileSync(path.join(dir, "h5_v1.h5"), path.join(root, "h.h5")); },
      (dir) => { fs.copyFileSync(path.join(dir, "h5_v2.h5"), path.join(root, "h.h5.tmp")); fs.renameSync(path.join(root, "h.h5.tmp"), path.join(root, "h.h5")); }],
    ["Zarr shard", "z.zarr", "/", [[0, 20], [0, 20]], "zarr_v1.npy", "zarr_v2.npy",
      (dir) => { fs.cpSync(path.join(dir, "zarr_v1/shards.zarr"), path.join(root, "z.zarr"), { recursive: true }); },
      (dir) => { fs.copyFileSync(path.join(dir, "zarr_v2/shards.zarr/c/0/0"), path.join(root, "z.zarr/c/0/0")); }],
  ];
  for (const [what, rel, p, ranges, before_, after_, write, rewrite] of cases) {
    test(`${what}: after the rewrite, no 304 to the old ETag and never the old values`, async () => {
      write(v);
      const w = await startWorker(path.join(scratch.dir, `w-${rel}`), {
        vars: { ALLOWED_ORIGINS: origin(up.url), MUTABLE_ORIGINS: origin(up.url), CACHE: "memory" },
      });
      try {
        const q = { src: `${up.url}${rel}`, path: p, select: ranges.map(([a, b]) => `${a}:${b}`).join(","), format: "bin" };
        const old = boxBytes(readNpy(path.join(v, before_)), ranges);
        const now = boxBytes(readNpy(path.join(v, after_)), ranges);
        const first = await get(w, "/v1/slice", q);
        assert.equal(first.status, 200, first.text());
        assert.deepEqual(first.body, old);
        const etag = first.headers.get("etag");
        await new Promise((r) => setTimeout(r, 1100)); // a later Last-Modified second
        rewrite(v);
        const answers = [];
        for (const headers of [{ "If-None-Match": etag }, {}, {}]) {
          const r = await get(w, "/v1/slice", q, headers);
          answers.push(r.status);
          assert.notEqual(r.status, 304, "a 304 to the ETag of the old content");
          if (r.status === 200) assert.deepEqual(r.body, now, "the values now at the URL");
          else assert.equal(r.status, 502, r.text());
        }
        assert.equal(answers.at(-1), 200, `answers ${answers}: the rewritten source is read again`);
        // The tag of what is there now is honoured, and differs from the old one.
        const cur = await get(w, "/v1/slice", q);
        assert.notEqual(cur.headers.get("etag"), etag, "a strong ETag changes with the content");
        assert.equal((await get(w, "/v1/slice", q, { "If-None-Match": cur.headers.get("etag") })).status, 304);
      } finally {
        await w.stop();
      }
    });
  }
});

describe("a mutable HDF5 file's hierarchy after a rewrite", () => {
  test("/v1/info without path lists what the file holds now (h5_v2.h5 adds /extra)", async () => {
    const v = versions(path.join(scratch.dir, "versions-info"));
    fs.copyFileSync(path.join(v, "h5_v1.h5"), path.join(root, "tree.h5"));
    const w = await startWorker(path.join(scratch.dir, "w-info"), {
      vars: { ALLOWED_ORIGINS: origin(up.url), MUTABLE_ORIGINS: origin(up.url), CACHE: "memory" },
    });
    try {
      const q = { src: `${up.url}tree.h5` };
      const names = (r) => JSON.stringify(r.json().nodes);
      const first = await get(w, "/v1/info", q);
      assert.equal(first.status, 200, first.text());
      assert.ok(!names(first).includes("extra"), names(first));
      fs.copyFileSync(path.join(v, "h5_v2.h5"), path.join(root, "tree.h5.tmp"));
      fs.renameSync(path.join(root, "tree.h5.tmp"), path.join(root, "tree.h5"));
      const again = await get(w, "/v1/info", q);
      assert.equal(again.status, 200, again.text());
      assert.ok(names(again).includes("extra"), `the rewritten file's /extra: ${names(again).slice(0, 300)}`);
      assert.notEqual(again.headers.get("etag"), first.headers.get("etag"));
    } finally {
      await w.stop();
    }
  });
});
