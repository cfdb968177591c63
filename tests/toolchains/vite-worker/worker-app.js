// ../app.js with `chunkwise/worker` in place of the main entry (the same calls, the same
// outcome expected): a Vite build of it must carry the worker script and what it imports.
import init, { ChunkwiseError, RemoteArray } from "chunkwise/worker";

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
