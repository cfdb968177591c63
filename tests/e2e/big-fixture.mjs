// The large fixtures (a 2000 x 2000 float32 frame over 8 MiB, so reads go to the network instead
// of the copy held from open, and big_store.b2z, a DictStore holding the same array as "/big").
// They are written at test time by the pinned python-blosc2 (tests/fixtures/gen_blosc2.py
// --big) into a temporary directory and reused afterwards.

import { spawnSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fixtures } from "./lib.mjs";

const dir = path.join(os.tmpdir(), "chunkwise-e2e-big");
const venv = process.env.CHUNKWISE_VENV || path.join(os.homedir(), ".cache/chunkwise/venv");

/** { ok: true, file, npy, store } or { ok: false, reason }. */
export function ensureBigFixture() {
  const file = path.join(dir, "big_f4.b2nd");
  const npy = path.join(dir, "big_f4.npy");
  const store = path.join(dir, "big_store.b2z");
  if (fs.existsSync(file) && fs.existsSync(npy) && fs.existsSync(store) && fs.statSync(file).size > 8 << 20) {
    return { ok: true, file, npy, store };
  }
  const python = path.join(venv, "bin/python");
  const gen = path.join(fixtures, "gen_blosc2.py");
  if (!fs.existsSync(python)) return { ok: false, reason: `no Python venv at ${venv} (scripts/setup.sh python)` };
  if (!fs.existsSync(gen)) return { ok: false, reason: `${gen} is missing` };
  // Written aside, then renamed into place: test files running at once may both get here.
  fs.mkdirSync(dir, { recursive: true });
  const aside = fs.mkdtempSync(path.join(dir, "gen-"));
  try {
    const r = spawnSync(python, [gen, "--big", aside], { encoding: "utf8", timeout: 180000 });
    if (r.status !== 0 || !fs.existsSync(path.join(aside, "big_f4.b2nd"))) {
      throw new Error(`gen_blosc2.py --big failed (${r.status}): ${r.stderr}`);
    }
    fs.renameSync(path.join(aside, "big_f4.npy"), npy);
    fs.renameSync(path.join(aside, "big_store.b2z"), store);
    fs.renameSync(path.join(aside, "big_f4.b2nd"), file);
  } finally {
    fs.rmSync(aside, { recursive: true, force: true });
  }
  return { ok: true, file, npy, store };
}

/** Runs `gen_blosc2.py --MODE DIR` once per version of the script (the directory's name holds
 *  a digest of it, so a changed script writes afresh) and returns DIR, or { ok: false, reason }
 *  without the venv. `listing` is the file the mode writes last. */
function generated(mode, listing) {
  const gen = path.join(fixtures, "gen_blosc2.py");
  const digest = crypto.createHash("sha256").update(fs.readFileSync(gen)).digest("hex").slice(0, 12);
  const out = path.join(os.tmpdir(), `chunkwise-e2e-${mode}-${digest}`);
  if (!fs.existsSync(path.join(out, listing))) {
    const python = path.join(venv, "bin/python");
    if (!fs.existsSync(python)) return { ok: false, reason: `no Python venv at ${venv} (scripts/setup.sh python)` };
    const aside = fs.mkdtempSync(path.join(os.tmpdir(), `chunkwise-e2e-${mode}-`));
    try {
      const r = spawnSync(python, [gen, `--${mode}`, aside], { encoding: "utf8", timeout: 180000 });
      if (r.status !== 0 || !fs.existsSync(path.join(aside, listing))) {
        throw new Error(`gen_blosc2.py --${mode} failed (${r.status}): ${r.stderr}`);
      }
      // Another test process may have put it in place meanwhile: keep the first.
      try { fs.renameSync(aside, out); } catch (e) { if (!fs.existsSync(path.join(out, listing))) throw e; }
    } finally {
      fs.rmSync(aside, { recursive: true, force: true });
    }
  }
  return { ok: true, dir: out };
}

/** Single Blosc2 chunks of 0.5-5 MiB, each beside the bytes it holds (NAME.chunk, NAME.bin,
 *  chunks.json), written at test time by the pinned python-blosc2's `compress2`
 *  (tests/fixtures/gen_blosc2.py --chunks) and reused afterwards.
 *  { ok: true, dir, chunks: [{ name, codec, typesize, blocksize, nbytes }] } or
 *  { ok: false, reason }. */
export function ensureChunkFixtures() {
  const g = generated("chunks", "chunks.json");
  if (!g.ok) return g;
  return { ...g, chunks: JSON.parse(fs.readFileSync(path.join(g.dir, "chunks.json"), "utf8")).chunks };
}

/** Frames whose chunks hold several groups of blocks of 8 KiB and more, and selections of
 *  each with the numpy slice of the array written (tests/fixtures/gen_blosc2.py --reads),
 *  written at test time and reused afterwards.
 *  Also `long`: a 1-D uint8 array of 64 Mi elements and values at some indexes.
 *  { ok: true, dir, reads: [{ file, selection, npy, shape, dtype }], long: { file, length,
 *  spots: [[index, value]] } } or { ok: false, reason }. */
export function ensureReadFixtures() {
  const g = generated("reads", "reads.json");
  if (!g.ok) return g;
  const listing = JSON.parse(fs.readFileSync(path.join(g.dir, "reads.json"), "utf8"));
  return { ...g, reads: listing.reads, long: listing.long };
}
