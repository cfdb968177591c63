// Helpers of the worker's tests: the upstream (`chunkwise serve` over tests/fixtures, from
// tests/e2e/lib.mjs, which parses its request log), the Cache API stand-in
// (tests/e2e/cache-api-service.mjs) and the worker in workerd on 127.0.0.1 free ports, each
// stopped by its PID. The CLI is $CHUNKWISE_BIN, else target/debug/chunkwise (built with
// cargo when missing). Missing workerd or package: the tests fail, naming what to run.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { requireWorkerdAndPkg, startWorkerd, writeConfig } from "../config.mjs";

export const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");

if (!process.env.CHUNKWISE_BIN) {
  const target = path.resolve(repo, process.env.CARGO_TARGET_DIR || "target");
  const bin = path.join(target, "debug/chunkwise");
  if (!fs.existsSync(bin)) {
    const r = spawnSync("cargo", ["build", "-p", "native-harness"], { cwd: repo, stdio: "inherit" });
    if (r.status !== 0) throw new Error(`${bin} is missing and cargo build -p native-harness failed`);
  }
  process.env.CHUNKWISE_BIN = bin;
}
const lib = await import("../../../tests/e2e/lib.mjs");
export const { fixtures, manifest, readNpy, startServer, until } = lib;
export const { startCacheService } = await import("../../../tests/e2e/cache-api-service.mjs");

requireWorkerdAndPkg();

/** A port that was free a moment ago on 127.0.0.1. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** A scratch directory, removed by `remove()`. */
export function scratchDir(prefix = "chunkwise-edge-") {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  return { dir, remove: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

/**
 * Starts the worker in workerd with text bindings `vars` and secrets `secrets` ({ NAME:
 * value }, given through workerd's environment), the Cache API behind `cache` (host:port) or
 * a closed port, and compatibility `flags` (default: config.mjs's). Resolves to { base, pid, stop(), output() }.
 */
export async function startWorker(dir, { vars = {}, secrets = {}, cache, flags } = {}) {
  const port = await freePort();
  const config = writeConfig(dir, { port, cache, vars, secrets: Object.keys(secrets), flags });
  const w = await startWorkerd(config, port, { env: secrets });
  return { ...w, base: `http://127.0.0.1:${port}` };
}

/** GET `route` of `worker` with query `q` (an object) and request `headers`. */
export async function get(worker, route, q = {}, headers = {}) {
  const qs = new URLSearchParams(Object.entries(q).filter(([, v]) => v !== undefined));
  const res = await fetch(`${worker.base}${route}?${qs}`, { headers, signal: AbortSignal.timeout(30000) });
  const body = new Uint8Array(await res.arrayBuffer());
  return { status: res.status, headers: res.headers, body, text: () => new TextDecoder().decode(body), json: () => JSON.parse(new TextDecoder().decode(body)) };
}

/** C-order elements of `npy` in the box `ranges` ([start, stop) per dimension). */
export function box(npy, ranges) {
  const out = [];
  const strides = npy.shape.map((_, d) => npy.shape.slice(d + 1).reduce((a, b) => a * b, 1));
  const walk = (d, offset) => {
    if (d === ranges.length) { out.push(npy.raw[offset]); return; }
    for (let i = ranges[d][0]; i < ranges[d][1]; i++) walk(d + 1, offset + i * strides[d]);
  };
  walk(0, 0);
  return out;
}

/** Little-endian bytes of the box (what raw, bin and .npy bodies hold). */
export function boxBytes(npy, ranges) {
  const Ctor = npy.raw.constructor;
  const t = Ctor.from(box(npy, ranges));
  return new Uint8Array(t.buffer);
}

/** The box as the worker's JSON carries it (64-bit integers as strings; NaN as null). */
export function boxJson(npy, ranges) {
  return JSON.parse(JSON.stringify(box(npy, ranges).map((v) => (typeof v === "bigint" ? v.toString() : v))));
}

/** Parses a .npy body: { descr, shape, fortran, data (Uint8Array) }; checks the v1.0 layout. */
export function parseNpyBody(buf) {
  assert.deepEqual(Array.from(buf.subarray(0, 8)), [0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0], "magic and version 1.0");
  const hlen = buf[8] | (buf[9] << 8);
  assert.equal((10 + hlen) % 64, 0, "header padded to a multiple of 64");
  const header = new TextDecoder("latin1").decode(buf.subarray(10, 10 + hlen));
  assert.ok(header.endsWith("\n"), "header ends with a newline");
  const descr = /'descr': '([^']+)'/.exec(header)[1];
  const fortran = /'fortran_order': (True|False)/.exec(header)[1] === "True";
  const shape = /'shape': \(([^)]*)\)/.exec(header)[1].split(",").map((s) => s.trim()).filter(Boolean).map(Number);
  return { descr, shape, fortran, data: buf.subarray(10 + hlen) };
}

/** Server-Timing metrics of a response: { name: { dur, desc } }. */
export function timing(headers) {
  const out = {};
  for (const part of (headers.get("server-timing") ?? "").split(",")) {
    const [name, ...params] = part.trim().split(";");
    const m = { dur: undefined, desc: undefined };
    for (const p of params) {
      const i = p.indexOf("=");
      const k = (i < 0 ? p : p.slice(0, i)).trim(), v = i < 0 ? undefined : p.slice(i + 1).trim();
      m[k] = k === "dur" ? Number(v) : v?.replace(/^"|"$/g, "");
    }
    if (name) out[name] = m;
  }
  return out;
}

/** Requests the upstream's log holds since `mark` (any path under `prefix`). */
export function upstreamSince(server, mark, prefix = "/") {
  return server.log.slice(mark).filter((r) => r.path.startsWith(prefix) && r.method !== "OPTIONS");
}
