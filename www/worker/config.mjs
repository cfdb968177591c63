// Fills config.capnp.in into a workerd configuration for this worker, and optionally runs it.
//
//   node config.mjs --out DIR [--port 8787] [--cache HOST:PORT] [--var NAME=VALUE ...]
//                   [--secret NAME ...] [--serve]
//
// `--var` sets a text binding (src/settings.mjs lists them); `--secret NAME` binds NAME from
// workerd's environment (`fromEnvironment`), so a secret such as UPSTREAM_HEADERS is never
// written into the config. `--serve` then runs `workerd serve` on it. The tests use
// writeConfig() and startWorkerd() from here.

import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const here = path.dirname(fileURLToPath(import.meta.url));
export const workerdBin = path.join(here, "node_modules/.bin/workerd");

/** The package directory (node_modules/chunkwise: `file:../../pkg`), resolved. */
export function packageDir() {
  const link = path.join(here, "node_modules/chunkwise");
  const wasm = path.join(link, "web/chunkwise_bg.wasm");
  if (!fs.existsSync(link)) throw new Error(`${link} is missing: run npm install in www/worker (it links ../../pkg)`);
  if (!fs.existsSync(wasm)) throw new Error(`${wasm} is missing: build the package with scripts/build-pkg.sh`);
  return fs.realpathSync(link);
}

/** Throws naming what to run when workerd or the package is missing. */
export function requireWorkerdAndPkg() {
  if (!fs.existsSync(workerdBin)) throw new Error(`${workerdBin} is missing: run npm install in www/worker`);
  packageDir();
}

const text = (s) => JSON.stringify(String(s));

/**
 * The worker's compatibility flags. `handle_cross_request_promise_resolution` (workerd's
 * default from compatibility date 2024-10-14; the config's date is older): concurrent core
 * operations resolve each other's promises (src/contexts.mjs). `nodejs_als`: AsyncLocalStorage.
 */
export const COMPATIBILITY_FLAGS = ["handle_cross_request_promise_resolution", "nodejs_als"];

/**
 * Writes DIR/config.capnp; returns its path. `vars` are text bindings ({ NAME: value }),
 * `secrets` names bound from workerd's environment, `flags` the compatibility flags.
 */
export function writeConfig(dir, { port, cache = "127.0.0.1:9", vars = {}, secrets = [], flags = COMPATIBILITY_FLAGS }) {
  const pkg = packageDir();
  const rel = (p) => path.relative(dir, p).split(path.sep).join("/");
  const modules = [`(name = "worker.mjs", esModule = embed ${text(rel(path.join(here, "worker.mjs")))}),`];
  for (const f of fs.readdirSync(path.join(here, "src")).filter((f) => f.endsWith(".mjs")).sort()) {
    modules.push(`(name = "src/${f}", esModule = embed ${text(rel(path.join(here, "src", f)))}),`);
  }
  modules.push(`(name = "chunkwise", esModule = embed ${text(rel(path.join(pkg, "web/chunkwise.js")))}),`);
  modules.push(`(name = "chunkwise/chunkwise_bg.wasm", wasm = embed ${text(rel(path.join(pkg, "web/chunkwise_bg.wasm")))}),`);
  modules.push(`(name = "chunkwise/stores/cache-api", esModule = embed ${text(rel(path.join(pkg, "stores/cache-api.js")))}),`);
  const bindings = [
    ...Object.entries(vars).map(([k, v]) => `(name = ${text(k)}, text = ${text(v)}),`),
    ...secrets.map((k) => `(name = ${text(k)}, fromEnvironment = ${text(k)}),`),
  ];
  const template = fs.readFileSync(path.join(here, "config.capnp.in"), "utf8");
  const config = template.replaceAll("@MODULES@", modules.join("\n    "))
    .replaceAll("@BINDINGS@", bindings.join("\n    "))
    .replaceAll("@FLAGS@", flags.map(text).join(", "))
    .replaceAll("@PORT@", String(port)).replaceAll("@CACHE@", cache);
  if (/@[A-Z]+@/.test(config)) throw new Error("a placeholder of config.capnp.in is left unfilled");
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, "config.capnp");
  fs.writeFileSync(file, config);
  return file;
}

/**
 * Starts `workerd serve CONFIG` (environment `env` added: the secrets) and resolves once it
 * answers HTTP on `port`, to { pid, stop(), output() }. stop() ends it by its PID.
 */
export async function startWorkerd(config, port, { env = {}, timeoutMs = 20000 } = {}) {
  const proc = spawn(workerdBin, ["serve", config], { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...env } });
  let output = "";
  const keep = (d) => { if (output.length < 100000) output += d; };
  proc.stdout.on("data", keep);
  proc.stderr.on("data", keep);
  const exited = new Promise((r) => proc.once("exit", r));
  const stop = async () => {
    if (proc.exitCode === null && proc.signalCode === null) process.kill(proc.pid, "SIGTERM");
    const t = setTimeout(() => { if (proc.exitCode === null && proc.signalCode === null) process.kill(proc.pid, "SIGKILL"); }, 3000);
    await exited;
    clearTimeout(t);
  };
  const end = Date.now() + timeoutMs;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`workerd exited (${proc.exitCode}): ${output}`);
    try {
      await fetch(`http://127.0.0.1:${port}/v1/stats`, { signal: AbortSignal.timeout(1000) });
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

if (process.argv[1] && fs.realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  if (args.includes("--help") || !args.includes("--out")) {
    console.log("usage: node config.mjs --out DIR [--port 8787] [--cache HOST:PORT] [--var NAME=VALUE ...] [--secret NAME ...] [--serve]");
    process.exit(args.includes("--help") ? 0 : 2);
  }
  const opt = { port: 8787, vars: {}, secrets: [] };
  let out, serve = false;
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === "--out") out = path.resolve(args[++i]);
    else if (a === "--port") opt.port = Number(args[++i]);
    else if (a === "--cache") opt.cache = args[++i];
    else if (a === "--var") { const [k, ...v] = args[++i].split("="); opt.vars[k] = v.join("="); }
    else if (a === "--secret") opt.secrets.push(args[++i]);
    else if (a === "--serve") serve = true;
    else { console.error(`unknown argument ${a}`); process.exit(2); }
  }
  requireWorkerdAndPkg();
  const file = writeConfig(out, opt);
  console.log(file);
  if (serve) {
    const w = spawn(workerdBin, ["serve", file], { stdio: "inherit" });
    w.on("exit", (code) => process.exit(code ?? 1));
  }
}
