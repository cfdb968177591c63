// The app every bundler builds (copied into each project by tests/toolchains/run.mjs): the package's README start, a read
// of ?src= with ?select=, and an open that must fail with a ChunkwiseError; the outcome is
// put on window.toolchainResult as JSON-friendly values for the test to compare. The
// top-level await is the README's: every bundler here must take it.
import init, { ChunkwiseError, RemoteArray } from "chunkwise";

await init();

async function main() {
  const q = new URLSearchParams(location.search);
  const arr = await RemoteArray.open(q.get("src"));
  const { data, shape, dtype } = await arr.read(q.get("select"));
  const values = Array.from(data, Number);
  let missing = null;
  try {
    await RemoteArray.open(q.get("missing"));
  } catch (e) {
    missing = { isClass: e instanceof ChunkwiseError, isError: e instanceof Error, code: e.code, name: e.name };
  }
  arr.close();
  return { shape, dtype, values, missing };
}

main().then(
  (r) => { window.toolchainResult = r; },
  (e) => { window.toolchainResult = { failed: String(e && e.stack || e), code: e && e.code }; },
);
