// Helpers of the workerd tests: the example worker (www/worker) configured in a temporary
// directory and run by `workerd serve` from npm, and the values its JSON carries.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { repo } from "./lib.mjs";

export const workerd = path.join(repo, "tests/e2e/node_modules/.bin/workerd");
export const pkgDir = path.join(repo, "pkg");
export const webPkg = path.join(pkgDir, "web");

/** Throws naming the command to run when workerd or the package is missing. */
export function requireWorkerdAndPkg() {
  for (const [file, how] of [[workerd, "npm ci in tests/e2e"], [path.join(webPkg, "chunkwise_bg.wasm"), "scripts/build-pkg.sh"],
    [path.join(pkgDir, "stores/cache-api.js"), "scripts/build-pkg.sh"]]) {
    if (!fs.existsSync(file)) throw new Error(`${file} is missing: run ${how}`);
  }
}

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

/**
 * Writes config.capnp (from www/worker/config.capnp.in) and worker.mjs into `dir`. workerd
 * resolves `embed` paths relative to the config file (absolute paths are refused), so @PKG@
 * is pkg/ relative to `dir`. `cache` is host:port of the service behind the worker's Cache
 * API (cache-api-service.mjs); by default a closed port: Cache API calls then fail, which only
 * `cache=disk` requests make.
 */
export function writeConfig(dir, port, { cache = "127.0.0.1:9" } = {}) {
  const template = fs.readFileSync(path.join(repo, "www/worker/config.capnp.in"), "utf8");
  const snippets = fs.readdirSync(path.join(webPkg, "snippets"), { recursive: true })
    .filter((f) => f.endsWith(".js")).sort()
    .map((f) => `(name = "snippets/${f}", esModule = embed "@PKG@/web/snippets/${f}"),`);
  const config = template.replaceAll("@SNIPPETS@", snippets.join("\n    "))
    .replaceAll("@PORT@", String(port)).replaceAll("@PKG@", path.relative(dir, pkgDir))
    .replaceAll("@CACHE@", cache);
  assert.ok(!/@[A-Z]+@/.test(config), "every placeholder of the template is filled");
  fs.writeFileSync(path.join(dir, "config.capnp"), config);
  fs.copyFileSync(path.join(repo, "www/worker/worker.mjs"), path.join(dir, "worker.mjs"));
  return path.join(dir, "config.capnp");
}

/** Starts `workerd serve CONFIG` and resolves once it answers HTTP on `port`. */
export async function startWorkerd(config, port, timeoutMs = 20000) {
  const proc = spawn(workerd, ["serve", config], { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  proc.stdout.on("data", (d) => { output += d; });
  proc.stderr.on("data", (d) => { output += d; });
  const exited = new Promise((r) => proc.once("exit", r));
  const stop = async () => {
    if (proc.exitCode === null && proc.signalCode === null) process.kill(proc.pid, "SIGTERM");
    const t = setTimeout(() => { if (proc.exitCode === null) process.kill(proc.pid, "SIGKILL"); }, 3000);
    await exited;
    clearTimeout(t);
  };
  const end = Date.now() + timeoutMs;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`workerd exited (${proc.exitCode}): ${output}`);
    try {
      await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(1000) });
      return { pid: proc.pid, stop, output: () => output };
    } catch {
      if (Date.now() > end) {
        await stop();
        throw new Error(`workerd did not answer within ${timeoutMs} ms: ${output}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/** C-order elements of `npy` in the box `ranges` ([start, stop) per dimension). */
export function box(npy, ranges, elements) {
  const out = [];
  const strides = npy.shape.map((_, d) => npy.shape.slice(d + 1).reduce((a, b) => a * b, 1));
  const walk = (d, offset) => {
    if (d === ranges.length) { out.push(elements[offset]); return; }
    for (let i = ranges[d][0]; i < ranges[d][1]; i++) walk(d + 1, offset + i * strides[d]);
  };
  walk(0, 0);
  return out;
}

/** The values of the box as the worker's JSON carries them. */
export function expectedJson(npy, ranges) {
  if (npy.raw instanceof BigInt64Array || npy.raw instanceof BigUint64Array) {
    return box(npy, ranges, Array.from(npy.raw, (v) => v.toString()));
  }
  // JSON has no NaN, infinities or negative zero: compare with what JSON makes of them.
  return JSON.parse(JSON.stringify(box(npy, ranges, npy.values)));
}
