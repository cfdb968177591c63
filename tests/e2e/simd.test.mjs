// The web builds need WebAssembly SIMD128 (.cargo/config.toml; no baseline module is built):
// their init and initSync first validate a tiny SIMD module and, on an engine that refuses
// it, throw a ChunkwiseError with code UNSUPPORTED instead of the module's bare CompileError.
// Node has SIMD, so the refusal is shown with WebAssembly.validate stubbed to refuse; with
// it restored the same module instance initialises and decodes.

import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { describe, test } from "node:test";
import { repo } from "./lib.mjs";

const pkgDir = path.join(repo, "pkg");

/** Runs `f` with WebAssembly.validate answering false, then restores it. */
async function withoutSimd(f) {
  const validate = WebAssembly.validate;
  WebAssembly.validate = () => false;
  try {
    await f();
  } finally {
    WebAssembly.validate = validate;
  }
}

describe("SIMD128 check of the web builds' init", () => {
  for (const build of ["web", "b2nd"]) {
    test(`${build}: init and initSync refuse an engine without SIMD128, typed`, async () => {
      const wasm = fs.readFileSync(path.join(pkgDir, build, "chunkwise_bg.wasm"));
      // A fresh instance of the glue (its own module state), not one another test initialised.
      const glue = pathToFileURL(path.join(pkgDir, build, "chunkwise.js")).href + "?simd-check";
      const cw = await import(glue);
      const unsupported = (e) => {
        assert.ok(e instanceof cw.ChunkwiseError, `a ChunkwiseError, got ${e}`);
        assert.equal(e.code, "UNSUPPORTED");
        assert.match(e.message, /SIMD128/);
        return true;
      };
      await withoutSimd(async () => {
        await assert.rejects(cw.default({ module_or_path: wasm }), unsupported);
        assert.throws(() => cw.initSync({ module: wasm }), unsupported);
      });
      // Where the engine has it, the same glue initialises and the module decodes.
      cw.initSync({ module: wasm });
      assert.throws(() => cw.decodeChunk(new Uint8Array(8)), (e) => e instanceof cw.ChunkwiseError);
    });
  }
});
