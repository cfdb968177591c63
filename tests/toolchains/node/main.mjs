// The README start in Node, as an ES module: default init, named exports, the error class.
import init, { ChunkwiseError, RemoteArray, initSync } from "chunkwise";
import { createRequire } from "node:module";

const [src, select, missingUrl] = process.argv.slice(2);
await init();
initSync();
const arr = await RemoteArray.open(src);
const { data, shape, dtype } = await arr.read(select);
let missing = null;
try {
  await RemoteArray.open(missingUrl);
} catch (e) {
  missing = { isClass: e instanceof ChunkwiseError, isError: e instanceof Error, code: e.code, name: e.name };
}
arr.close();
// require() gives the same instance: its class is the one the ES import saw.
const cjs = createRequire(import.meta.url)("chunkwise");
const same = cjs.RemoteArray === RemoteArray && cjs.ChunkwiseError === ChunkwiseError && typeof cjs.default === "function";
console.log(JSON.stringify({ shape, dtype, values: Array.from(data, Number), missing, same }));
