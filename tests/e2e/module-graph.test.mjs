// The browser entries (`chunkwise` = pkg/web/chunkwise.js, `chunkwise/b2nd` =
// pkg/b2nd/chunkwise.js) are one ES module each: their JS snippets are inlined by
// scripts/build-pkg.sh (scripts/wasm-tools/inline-snippets.mjs), so a page importing one asks
// for that file and then the wasm module, with no second wave of script requests in between.
// In headless Chromium, each entry imported by a fresh page: the package files the page
// fetched are exactly the glue and its module; the entry then reads a fixture python-blosc2
// wrote, values equal to the .npy written with it, and its errors are its exported
// ChunkwiseError (the inlined error snippet is the class the module's errors are made with).

import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { fixtures, launchChromium, manifest, readNpy, repo, startServer } from "./lib.mjs";

const blosc2 = manifest("blosc2");
let server, browser;

before(async () => {
  server = await startServer({ quiet: true });
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

describe("the browser entries are one module each", () => {
  test("static: no import statement is left in either glue", () => {
    for (const build of ["web", "b2nd"]) {
      const glue = fs.readFileSync(path.join(repo, "pkg", build, "chunkwise.js"), "utf8");
      assert.doesNotMatch(glue, /^\s*(import|export)\s[^;]*\bfrom\s/m, `${build}/chunkwise.js imports a file`);
    }
  });

  for (const build of ["web", "b2nd"]) {
    test(`${build}: the page fetches chunkwise.js and chunkwise_bg.wasm only; values and errors`, async () => {
      const f = blosc2.nd3_u2;
      const want = readNpy(path.join(fixtures, "blosc2", f.npy));
      const page = await browser.newPage();
      try {
        // Any document of the server's origin: the entry is imported by the test.
        await page.goto(`${server.url}tests/e2e/module-graph.test.mjs`);
        const got = await page.evaluate(async ({ build, file }) => {
          const cw = await import(`/pkg/${build}/chunkwise.js`);
          await cw.default();
          const arr = await cw.RemoteArray.open(`/tests/fixtures/blosc2/${file}`);
          const r = await arr.read(":, 2:9, ::3");
          arr.close();
          let error;
          try {
            cw.decodeChunk(new Uint8Array(8));
          } catch (e) {
            error = { isClass: e instanceof cw.ChunkwiseError, name: e.name, code: e.code };
          }
          const files = performance.getEntriesByType("resource").map((e) => new URL(e.name).pathname)
            .filter((p) => p.startsWith("/pkg/"));
          return { shape: r.shape, data: Array.from(r.data), error, files };
        }, { build, file: f.file });
        assert.deepEqual(got.files.sort(), [`/pkg/${build}/chunkwise.js`, `/pkg/${build}/chunkwise_bg.wasm`]);
        // [:, 2:9, ::3] of the (10, 12, 14) array written.
        const [n0, n1, n2] = f.shape;
        const expect = [];
        for (let i = 0; i < n0; i++) for (let j = 2; j < 9; j++) for (let k = 0; k < n2; k += 3) expect.push(want.at(i, j, k));
        assert.deepEqual(got.shape, [n0, 7, Math.ceil(n2 / 3)]);
        assert.deepEqual(got.data, expect);
        assert.equal(got.error?.isClass, true, `decodeChunk's error is the entry's ChunkwiseError: ${JSON.stringify(got.error)}`);
        assert.equal(got.error.name, "ChunkwiseError");
      } finally {
        await page.close();
      }
    });
  }
});
