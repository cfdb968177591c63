// The npm package as users get it: `npm pack` of pkg/, installed from the tarball into fresh
// Vite (the main entry, and `chunkwise/worker`), webpack, esbuild, Vitest and Node projects
// (each here with a pinned package.json and package-lock.json; dependencies from the registry through the npm cache under
// ~/.cache/chunkwise/npm, so warm runs are fast), each built with its own tool and run: the
// Node scripts directly (ES import and require), the Vitest test with `vitest run`, the
// bundles in headless Chromium, all reading
// a Blosc2 fixture from `chunkwise serve` on loopback. Values must equal the .npy the
// generator wrote, and an open of a missing file must reject with a ChunkwiseError
// (instanceof) of code NOT_FOUND. The package README's page without a bundler runs as written
// in Chromium too (a 2-D fixture as its data/field.b2nd). Also checks what the tarball holds
// (LICENSE, one full module).
// Usage: node tests/toolchains/run.mjs [PKG_DIR]   (default pkg/; CHUNKWISE_BIN as in tests/e2e)
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { fixtures, launchChromium, readNpy, startServer } from "../e2e/lib.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, "../..");
const pkg = path.resolve(process.argv[2] ?? path.join(repo, "pkg"));
const npmCache = path.join(os.homedir(), ".cache/chunkwise/npm");
const projects = ["node", "vitest", "vite", "vite-worker", "webpack", "esbuild"];
const started = Date.now();
const step = (what, t0) => console.log(`toolchains: ${what} (${((Date.now() - t0) / 1000).toFixed(1)} s)`);

for (const f of ["package.json", "README.md", "LICENSE", "web/chunkwise_bg.wasm", "node/index.mjs"]) {
  if (!fs.existsSync(path.join(pkg, f))) throw new Error(`${pkg}/${f} is missing: run scripts/build-pkg.sh`);
}

const npm = (args, cwd, env = {}) => execFileSync("npm", [...args, "--cache", npmCache, "--no-audit", "--no-fund",
  "--loglevel", "error"], { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...env } });

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "chunkwise-toolchains-"));
let server, browser;
try {
  // The tarball, and what it holds.
  let t0 = Date.now();
  const packed = JSON.parse(npm(["pack", pkg, "--pack-destination", tmp, "--json"], tmp))[0];
  const tarball = path.join(tmp, packed.filename);
  const files = packed.files.map((f) => f.path);
  for (const f of ["LICENSE", "README.md", "package.json", "web/chunkwise.js", "web/bundler.js",
    "web/chunkwise_bg.wasm", "node/chunkwise.js", "node/index.mjs", "b2nd/chunkwise_bg.wasm",
    "stores/node-fs.js", "stores/cache-api.js"]) {
    assert.ok(files.includes(f), `the tarball holds ${f}`);
  }
  const wasm = files.filter((f) => f.endsWith(".wasm"));
  assert.deepEqual(wasm.sort(), ["b2nd/chunkwise_bg.wasm", "web/chunkwise_bg.wasm"], "one full module and the b2nd one");
  assert.match(fs.readFileSync(path.join(pkg, "LICENSE"), "utf8"), /^MIT License/);
  step(`packed ${packed.filename}: ${files.length} files, ${packed.size} bytes (${packed.unpackedSize} unpacked)`, t0);

  // Fresh projects: pinned dependencies, then the tarball.
  for (const p of projects) {
    t0 = Date.now();
    const dir = path.join(tmp, p);
    fs.cpSync(path.join(here, p), dir, { recursive: true, filter: (s) => !/node_modules|dist/.test(path.relative(here, s)) });
    fs.copyFileSync(path.join(here, "app.js"), path.join(dir, "app.js"));
    // One install: the locked tree plus the tarball (package.json and the lock unchanged).
    npm(["install", "--no-save", "--prefer-offline", tarball], dir);
    assert.ok(fs.existsSync(path.join(dir, "node_modules/chunkwise/web/chunkwise_bg.wasm")), `${p}: installed`);
    const pinned = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8")).devDependencies ?? {};
    for (const [dep, version] of Object.entries(pinned)) {
      const got = JSON.parse(fs.readFileSync(path.join(dir, "node_modules", dep, "package.json"), "utf8")).version;
      assert.equal(got, version, `${p}: ${dep} as pinned`);
    }
    step(`${p}: installed`, t0);
    if (!["node", "vitest"].includes(p)) {
      t0 = Date.now();
      npm(["run", "build"], dir);
      if (p === "webpack") fs.copyFileSync(path.join(dir, "index.html"), path.join(dir, "dist/index.html"));
      const out = fs.readdirSync(path.join(dir, "dist"), { recursive: true });
      assert.ok(out.some((f) => f.endsWith(".wasm")), `${p}: the build emits the module (${out.join(", ")})`);
      if (p === "vite-worker") {
        // The worker script is bundled with what it imports (copied alone, as an asset, its
        // import of ../web/chunkwise.js fails in the build and init rejects).
        const workers = out.filter((f) => /worker[^/]*\.js$/.test(f));
        assert.ok(workers.length > 0, `${p}: the build emits the worker script (${out.join(", ")})`);
        for (const f of workers) {
          assert.doesNotMatch(fs.readFileSync(path.join(dir, "dist", f), "utf8"), /from\s*["']\.\.\/web\//,
            `${p}: ${f} is bundled, not copied`);
        }
      }
      step(`${p}: built (${out.length} files)`, t0);
    }
  }

  // The fixture, next to the builds on one loopback server.
  const name = "cf_zstd_delta";
  fs.mkdirSync(path.join(tmp, "data"));
  fs.copyFileSync(path.join(fixtures, `blosc2/${name}.b2nd`), path.join(tmp, `data/${name}.b2nd`));
  const e = readNpy(path.join(fixtures, `blosc2/${name}.npy`));
  const select = "2:5, 3:7";
  const expected = {
    shape: [3, 4],
    dtype: "<i4",
    values: [2, 3, 4].flatMap((i) => [3, 4, 5, 6].map((j) => e.at(i, j))),
    missing: { isClass: true, isError: true, code: "NOT_FOUND", name: "ChunkwiseError" },
  };
  server = await startServer({ root: tmp, quiet: true });
  const src = `${server.url}data/${name}.b2nd`;
  const missing = `${server.url}data/absent.b2nd`;

  for (const script of ["main.mjs", "main.cjs"]) {
    t0 = Date.now();
    const out = execFileSync(process.execPath, [script, src, select, missing],
      { cwd: path.join(tmp, "node"), encoding: "utf8", timeout: 30000 });
    const got = JSON.parse(out.trim().split("\n").at(-1));
    assert.deepEqual(got, { ...expected, same: true }, `node ${script}`);
    step(`node ${script}: values and error class as written`, t0);
  }

  t0 = Date.now();
  npm(["test"], path.join(tmp, "vitest"), {
    CHUNKWISE_TOOLCHAIN_CASE: JSON.stringify({ src, select, missing,
      expected: { shape: expected.shape, dtype: expected.dtype, values: expected.values } }),
  });
  step("vitest: values and error class as written", t0);

  browser = await launchChromium();
  for (const p of ["vite", "vite-worker", "webpack", "esbuild"]) {
    t0 = Date.now();
    const page = await browser.newPage();
    const errors = [];
    page.on("pageerror", (err) => errors.push(String(err)));
    const q = new URLSearchParams({ src, select, missing });
    await page.goto(`${server.url}${p}/dist/index.html?${q}`);
    await page.waitForFunction(() => window.toolchainResult !== undefined, null, { timeout: 30000 });
    const got = await page.evaluate(() => window.toolchainResult);
    assert.deepEqual(errors, [], `${p}: no page error`);
    assert.deepEqual(got, expected, `${p} in Chromium`);
    await page.close();
    step(`${p} bundle in Chromium: values and error class as written`, t0);
  }
  // The package README's page without a bundler, its <script type="module"> as written, served
  // next to node_modules/chunkwise (the tarball's install) and data/field.b2nd; the test only
  // appends a line putting what it read on window.toolchainResult.
  t0 = Date.now();
  const readme = fs.readFileSync(path.join(pkg, "README.md"), "utf8");
  const block = /```html\n([\s\S]*?)```/.exec(readme);
  assert.ok(block && block[1].includes("</script>"), "the package README has a page without a bundler");
  const page = path.join(tmp, "nobundler");
  fs.mkdirSync(path.join(page, "data"), { recursive: true });
  fs.cpSync(path.join(tmp, "node/node_modules/chunkwise"), path.join(page, "node_modules/chunkwise"), { recursive: true });
  fs.copyFileSync(path.join(fixtures, `blosc2/${name}.b2nd`), path.join(page, "data/field.b2nd"));
  const exposed = "  window.toolchainResult = { shape, values: Array.from(data, Number) };\n</script>";
  fs.writeFileSync(path.join(page, "index.html"),
    `<!doctype html>\n<html><body>\n${block[1].replace("</script>", exposed)}</body></html>\n`);
  {
    const p = await browser.newPage();
    const errors = [];
    const failed = new Promise((resolve) => p.on("pageerror", (err) => { errors.push(String(err)); resolve(); }));
    await p.goto(`${server.url}nobundler/index.html`);
    await Promise.race([failed, p.waitForFunction(() => window.toolchainResult !== undefined, null, { timeout: 30000 })]);
    const got = await p.evaluate(() => window.toolchainResult);
    assert.deepEqual(errors, [], "the package README's page: no page error");
    const cols = e.shape[1];
    assert.deepEqual(got, { shape: [Math.ceil(cols / 2)], values: Array.from({ length: Math.ceil(cols / 2) }, (_, k) => e.at(0, 2 * k)) },
      "the package README's page in Chromium");
    await p.close();
  }
  step("the package README's page without a bundler in Chromium: values as written", t0);
  console.log(`toolchains: all passed in ${((Date.now() - started) / 1000).toFixed(1)} s`);
} finally {
  await browser?.close();
  await server?.stop();
  fs.rmSync(tmp, { recursive: true, force: true });
}
