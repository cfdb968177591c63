// Shared helpers of the end-to-end tests: the repository layout, `chunkwise serve` as a child
// process with its request log, a small .npy reader, and headless Chromium through playwright-core.

import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
/** The `chunkwise` CLI: $CHUNKWISE_BIN, else release/chunkwise in cargo's target directory. */
export const cli = process.env.CHUNKWISE_BIN ||
  path.join(path.resolve(repo, process.env.CARGO_TARGET_DIR || "target"), "release/chunkwise");
export const fixtures = path.join(repo, "tests/fixtures");
export const chromiumPath = process.env.CHROMIUM || "/usr/bin/chromium";

/** Fixture entries of a manifest.json, by name. */
export function manifest(dir) {
  const m = JSON.parse(fs.readFileSync(path.join(fixtures, dir, "manifest.json"), "utf8"));
  return Object.fromEntries(m.fixtures.map((f) => [f.name, f]));
}

/**
 * Starts `chunkwise serve --root ROOT --port 0` (with `--fault SPEC` for each of `faults`) and
 * resolves once it prints its URL.
 * Every request line it logs on stderr (`METHOD PATH range=R STATUS BODY_LEN`) is parsed into
 * `server.log` unless `quiet`, and every `cut METHOD PATH range=R sent=N of=M` line (a body
 * dropped before its end: the client closed the connection) into `server.cuts` as
 * { method, path, range, sent, of }. `server.stop()` ends it by PID.
 */
export function startServer({ root = repo, latencyMs = 0, quiet = false, timeoutMs = 20000, faults = [] } = {}) {
  const args = ["serve", "--root", root, "--port", "0"];
  if (latencyMs) args.push("--latency-ms", String(latencyMs));
  if (quiet) args.push("--quiet");
  for (const f of faults) args.push("--fault", f);
  if (!fs.existsSync(cli)) {
    throw new Error(`${cli} is missing: build it with cargo build --release -p native-harness`);
  }
  const proc = spawn(cli, args, { stdio: ["ignore", "pipe", "pipe"] });
  const log = [];
  const cuts = [];
  let errText = "";
  let errLine = "";
  proc.stderr.setEncoding("utf8");
  proc.stderr.on("data", (chunk) => {
    errLine += chunk;
    const lines = errLine.split("\n");
    errLine = lines.pop();
    for (const line of lines) {
      const m = /^(\S+) (\S+) range=(\S+) (\d{3}) (\d+)$/.exec(line.trim());
      const c = /^cut (\S+) (\S+) range=(\S+) sent=(\d+) of=(\d+)$/.exec(line.trim());
      if (m) {
        log.push({ method: m[1], path: m[2], range: m[3] === "-" ? null : m[3],
          status: Number(m[4]), bytes: Number(m[5]) });
      } else if (c) {
        cuts.push({ method: c[1], path: c[2], range: c[3] === "-" ? null : c[3],
          sent: Number(c[4]), of: Number(c[5]) });
      } else if (errText.length < 4000) errText += line + "\n";
    }
  });
  return new Promise((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => {
      proc.kill("SIGKILL");
      reject(new Error(`chunkwise serve printed no URL within ${timeoutMs} ms: ${out} ${errText}`));
    }, timeoutMs);
    proc.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`chunkwise serve exited (${code}): ${out} ${errText}`));
    });
    proc.stdout.setEncoding("utf8");
    proc.stdout.on("data", (chunk) => {
      out += chunk;
      const m = /serving .* at (http:\/\/127\.0\.0\.1:\d+\/)/.exec(out);
      if (!m) return;
      clearTimeout(timer);
      proc.removeAllListeners("exit");
      const exited = new Promise((r) => proc.once("exit", r));
      resolve({
        url: m[1],
        pid: proc.pid,
        log,
        cuts,
        /** Requests the server answered for `urlPath` (GET and HEAD), and their body bytes. */
        counted(urlPath, since = 0) {
          const hits = log.slice(since).filter((r) => r.path === urlPath && r.method !== "OPTIONS");
          return { requests: hits.length, bytes: hits.reduce((s, r) => s + (r.method === "HEAD" ? 0 : r.bytes), 0) };
        },
        async stop() {
          if (proc.exitCode === null && proc.signalCode === null) process.kill(proc.pid, "SIGTERM");
          const t = setTimeout(() => { if (proc.exitCode === null) process.kill(proc.pid, "SIGKILL"); }, 3000);
          await exited;
          clearTimeout(t);
        },
      });
    });
  });
}

/** Waits until `cond()` is true (polling), or fails after `ms`. */
export async function until(cond, ms = 3000, what = "condition") {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const NPY_TYPES = {
  b1: [Uint8Array, 1, "getUint8"], i1: [Int8Array, 1, "getInt8"], u1: [Uint8Array, 1, "getUint8"],
  i2: [Int16Array, 2, "getInt16"], u2: [Uint16Array, 2, "getUint16"],
  i4: [Int32Array, 4, "getInt32"], u4: [Uint32Array, 4, "getUint32"],
  i8: [BigInt64Array, 8, "getBigInt64"], u8: [BigUint64Array, 8, "getBigUint64"],
  f4: [Float32Array, 4, "getFloat32"], f8: [Float64Array, 8, "getFloat64"],
};

/**
 * Reads a C-ordered .npy file (format 1.0 to 3.0) of a plain numeric dtype.
 * Returns { descr, shape, raw (typed array, native order), values (Numbers), at(...idx) }.
 */
export function readNpy(file) {
  const buf = fs.readFileSync(file);
  if (buf.toString("latin1", 0, 6) !== "\x93NUMPY") throw new Error(`${file}: not a .npy file`);
  const major = buf[6];
  const hlen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const hstart = major === 1 ? 10 : 12;
  const header = buf.toString("latin1", hstart, hstart + hlen);
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
  if (/'fortran_order':\s*True/.test(header)) throw new Error(`${file}: Fortran order unsupported`);
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header)[1].split(",").map((s) => s.trim())
    .filter(Boolean).map(Number);
  const type = NPY_TYPES[descr.slice(1)];
  if (!type) throw new Error(`${file}: dtype ${descr} unsupported`);
  const [Ctor, size, getter] = type;
  const n = shape.reduce((a, b) => a * b, 1);
  const view = new DataView(buf.buffer, buf.byteOffset + hstart + hlen, n * size);
  const little = descr[0] !== ">";
  const raw = new Ctor(n);
  for (let i = 0; i < n; i++) raw[i] = view[getter](i * size, little);
  const values = Array.from(raw, Number);
  const strides = shape.map((_, d) => shape.slice(d + 1).reduce((a, b) => a * b, 1));
  return {
    descr, shape, raw, values,
    at: (...idx) => values[idx.reduce((s, v, d) => s + v * strides[d], 0)],
  };
}

/** Launches the system Chromium headless; never downloads a browser. */
export async function launchChromium() {
  const { chromium } = await import("playwright-core");
  return chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    timeout: 30000,
  });
}

/** A fresh scratch directory under the system temp dir, removed by the returned function. */
export function scratchDir(prefix = "chunkwise-e2e-") {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  return { dir, remove: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

/**
 * Opens the viewer for `dataUrl` (it opens the source on load, and previews `path` or its
 * first array) and waits for that to end. `query` adds parameters (path, sel, cmap, ...).
 */
export async function openInPage(page, pageBase, dataUrl, { timeout = 30000, query = {} } = {}) {
  const q = new URLSearchParams({ url: dataUrl, ...query });
  await page.goto(`${pageBase}www/?${q}`);
  return waitSettled(page, { timeout });
}

/** Waits until the page is no longer opening or reading; returns its state. */
export async function waitSettled(page, { timeout = 30000, selection } = {}) {
  await page.waitForFunction(
    (sel) => ["ready", "error", "cancelled", "listed"].includes(document.body.dataset.state) &&
      (sel === undefined || document.body.dataset.state !== "ready" ||
        (window.chunkwisePreview && window.chunkwisePreview.selection === sel)),
    selection, { timeout },
  );
  return page.evaluate(() => ({
    state: document.body.dataset.state,
    error: document.getElementById("error").hidden ? null : document.getElementById("error").textContent,
    code: document.getElementById("error").dataset.code || null,
  }));
}

/**
 * Decodes a PNG (8-bit RGB or RGBA, not interlaced: what Chromium's screenshots are) into
 * { width, height, channels (3 or 4), pixels (the rows, top first, `channels` bytes a pixel),
 * rgb(x, y) -> [r, g, b] }. Filters per the PNG specification, section 9.
 */
export async function decodePng(buf) {
  const zlib = await import("node:zlib");
  if (buf.readUInt32BE(0) !== 0x89504e47) throw new Error("not a PNG");
  let off = 8, width = 0, height = 0, channels = 0;
  const idat = [];
  while (off < buf.length) {
    const len = buf.readUInt32BE(off);
    const type = buf.toString("latin1", off + 4, off + 8);
    const body = buf.subarray(off + 8, off + 8 + len);
    if (type === "IHDR") {
      width = body.readUInt32BE(0); height = body.readUInt32BE(4);
      const depth = body[8], colour = body[9], interlace = body[12];
      if (depth !== 8 || interlace !== 0 || (colour !== 2 && colour !== 6)) {
        throw new Error(`PNG depth ${depth}, colour type ${colour}, interlace ${interlace} unsupported`);
      }
      channels = colour === 6 ? 4 : 3;
    } else if (type === "IDAT") idat.push(body);
    else if (type === "IEND") break;
    off += 12 + len;
  }
  const raw = zlib.inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  const px = Buffer.alloc(height * stride);
  for (let y = 0; y < height; y++) {
    const f = raw[y * (stride + 1)];
    const src = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    const cur = px.subarray(y * stride, (y + 1) * stride);
    const prev = y ? px.subarray((y - 1) * stride, y * stride) : Buffer.alloc(stride);
    for (let i = 0; i < stride; i++) {
      const a = i >= channels ? cur[i - channels] : 0, b = prev[i], c = i >= channels ? prev[i - channels] : 0;
      let v = src[i];
      if (f === 1) v += a;
      else if (f === 2) v += b;
      else if (f === 3) v += (a + b) >> 1;
      else if (f === 4) {
        const p = a + b - c, pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c);
        v += pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      }
      cur[i] = v & 255;
    }
  }
  return { width, height, channels, pixels: px,
    rgb: (x, y) => Array.from(px.subarray(y * stride + x * channels, y * stride + x * channels + 3)) };
}

/** The project venv's python (numpy, python-blosc2, caterva2[server]; scripts/setup.sh python). */
export const venvPython = path.join(process.env.CHUNKWISE_VENV ||
  path.join(os.homedir(), ".cache/chunkwise/venv"), "bin/python");

let caterva2Fixture = null;
/**
 * The datasets of tests/fixtures/gen_caterva2.py, written once per process into a scratch dir:
 * `{ dir, datasets (manifest entries), expected(path) (readNpy of its .npy) }`.
 */
export function caterva2Fixtures() {
  if (caterva2Fixture) return caterva2Fixture;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "chunkwise-e2e-caterva2-fx-"));
  process.once("exit", () => fs.rmSync(dir, { recursive: true, force: true }));
  const gen = spawnSync(venvPython, [path.join(fixtures, "gen_caterva2.py"), dir],
    { stdio: ["ignore", "inherit", "inherit"] });
  if (gen.status !== 0) throw new Error(`gen_caterva2.py failed (${gen.status ?? gen.error})`);
  const datasets = JSON.parse(fs.readFileSync(path.join(dir, "manifest.json"), "utf8")).datasets;
  const expected = (p) => {
    const d = datasets.find((x) => x.path === p);
    if (!d) throw new Error(`${p} is not in the Caterva2 manifest`);
    return readNpy(path.join(dir, d.npy));
  };
  caterva2Fixture = { dir, datasets, expected };
  return caterva2Fixture;
}

/**
 * Starts a Caterva2 server (scripts/caterva2-serve.py, caterva2[server] 2026.9.2) on
 * 127.0.0.1 with a fresh state dir, publishing the gen_caterva2.py datasets (`@public`,
 * `@shared`, the test user's `@personal`), login on. Resolves once it answers, with
 * `{ urlbase, port, username, password, publicDir, statedir, pid (the server's), fixtures,
 * stop() }`; `stop()` closes the launcher's stdin (it stops the server and removes the state
 * dir) and ends the launcher by PID if it has not exited within 10 s.
 * With `latencyMs`, `urlbase` is a forwarding proxy (scripts/latency_proxy.py) holding each
 * request that long and counting them: `await server.counted()` gives `{ requests, bytes,
 * log: [{ method, path, status, bytes }] }` since the last `await server.resetCount()`.
 */
export function startCaterva2({ timeoutMs = 60000, latencyMs = 0 } = {}) {
  const fx = caterva2Fixtures();
  const args = [path.join(repo, "scripts/caterva2-serve.py"), "--roots", path.join(fx.dir, "roots")];
  if (latencyMs) args.push("--latency-ms", String(latencyMs));
  const proc = spawn(venvPython, args, { stdio: ["pipe", "pipe", "pipe"] });
  let errText = "";
  proc.stderr.setEncoding("utf8");
  proc.stderr.on("data", (c) => { if (errText.length < 8000) errText += c; });
  const exited = new Promise((r) => proc.once("exit", r));
  return new Promise((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => {
      proc.kill("SIGKILL");
      reject(new Error(`caterva2-serve printed nothing within ${timeoutMs} ms: ${errText}`));
    }, timeoutMs);
    const early = (code) => { clearTimeout(timer); reject(new Error(`caterva2-serve exited (${code}): ${errText}`)); };
    proc.once("exit", early);
    proc.stdout.setEncoding("utf8");
    proc.stdout.on("data", (chunk) => {
      out += chunk;
      const nl = out.indexOf("\n");
      if (nl < 0) return;
      clearTimeout(timer);
      proc.removeListener("exit", early);
      const info = JSON.parse(out.slice(0, nl));
      resolve({
        urlbase: info.urlbase, port: info.port, username: info.username, password: info.password,
        publicDir: info.public_dir, statedir: info.statedir, pid: info.pid, fixtures: fx,
        serverUrlbase: info.server_urlbase,
        async counted() {
          if (!info.stats_url) throw new Error("startCaterva2: counted() needs latencyMs");
          return (await fetch(info.stats_url)).json();
        },
        async resetCount() {
          if (!info.stats_url) throw new Error("startCaterva2: resetCount() needs latencyMs");
          await fetch(info.stats_url.replace(/stats$/, "reset"), { method: "POST" });
        },
        async stop() {
          if (proc.exitCode === null && proc.signalCode === null) {
            proc.stdin.end();
            const t = setTimeout(() => { if (proc.exitCode === null) process.kill(proc.pid, "SIGKILL"); }, 10000);
            await exited;
            clearTimeout(t);
          }
        },
      });
    });
  });
}
