// Remote tables in the Node build (pkg/node): store.table(...).readRows and RemoteTable.open
// on tables.h5 and cols.zarr, written at test time by tests/fixtures/gen_tables.py (h5py,
// zarr-python) and served by `chunkwise serve`. Values equal the .npy files the generator
// wrote from the arrays it stored.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { readNpy, repo, scratchDir, startServer } from "./lib.mjs";

const require = createRequire(import.meta.url);
const venv = process.env.CHUNKWISE_VENV || path.join(os.homedir(), ".cache/chunkwise/venv");

let server, chunkwise, scratch;

before(async () => {
  chunkwise = require(path.join(repo, "pkg/node/chunkwise.js"));
  scratch = scratchDir("chunkwise-tables-");
  execFileSync(path.join(venv, "bin/python"),
    [path.join(repo, "tests/fixtures/gen_tables.py"), scratch.dir], { stdio: "inherit" });
  server = await startServer({ root: scratch.dir, quiet: true });
});
after(async () => {
  await server?.stop();
  scratch?.remove();
});

const npy = (name) => readNpy(path.join(scratch.dir, name));

describe("RemoteTable", () => {
  test("store.table of a group of columns: readRows gives typed arrays of the rows asked", async () => {
    const store = await chunkwise.RemoteStore.open(server.url + "tables.h5");
    const table = await store.table("/cols");
    assert.deepEqual(table.columns.map((c) => [c.name, c.dtype, c.error]),
      [["a", "<i8", undefined], ["b", "<f8", undefined], ["c", "|S4", undefined]]);
    assert.equal(table.nrows, 500);
    const rows = await table.readRows(250, 480, { columns: ["b", "a"] });
    assert.deepEqual(Object.keys(rows), ["b", "a"]);
    assert.ok(rows.b instanceof Float64Array);
    assert.deepEqual(Array.from(rows.b), npy("cols_b.npy").values.slice(250, 480));
    assert.ok(rows.a instanceof BigInt64Array);
    assert.deepEqual(Array.from(rows.a), Array.from(npy("cols_a.npy").raw.slice(250, 480)));
    // Byte strings come as an Array of strings; negative bounds count from the end.
    const tail = await table.readRows(-2, undefined, { columns: ["c"] });
    assert.deepEqual(tail.c, ["c13", "c14"]);
    await assert.rejects(table.readRows(0, 1, { columns: ["nope"] }),
      (e) => e.code === "INVALID_ARGUMENT" && /a, b, c/.test(e.message));
    await assert.rejects(store.table("/uneven"),
      (e) => e.code === "INVALID_DATA" && /a has 500, b 400/.test(e.message));
    table.close();
    store.close();
  });

  test("a compound dataset's members are columns; RemoteTable.open takes a path", async () => {
    const table = await chunkwise.RemoteTable.open(server.url + "tables.h5", { path: "/run/table" });
    assert.deepEqual(table.columns.map((c) => c.name), ["id", "x", "v", "tag", "w"]);
    assert.equal(table.nrows, 500);
    const rows = await table.readRows(100, 170, { columns: ["v", "w"] });
    // v is big-endian in the file (>i4): the typed array holds its values.
    assert.ok(rows.v instanceof Int32Array);
    assert.deepEqual(Array.from(rows.v), npy("rec_v.npy").values.slice(100, 170));
    // w is a (2,) sub-array member: flattened row by row.
    assert.ok(rows.w instanceof Float64Array);
    assert.deepEqual(Array.from(rows.w), npy("rec_w.npy").values.slice(200, 340));
    await assert.rejects(chunkwise.RemoteTable.open(server.url + "tables.h5"),
      (e) => e.code === "INVALID_ARGUMENT" && /needs options.path/.test(e.message));
    table.free();
  });

  test("a Zarr group at the store root is a table", async () => {
    const table = await chunkwise.RemoteTable.open(server.url + "cols.zarr");
    assert.deepEqual(table.columns.map((c) => c.name), ["p", "q"]);
    const rows = await table.readRows(60, 200);
    assert.deepEqual(Array.from(rows.p), npy("zarr_p.npy").values.slice(60, 200));
    assert.deepEqual(Array.from(rows.q), npy("zarr_q.npy").values.slice(60, 200));
    table.close();
  });
});
