// Browser and worker parts of the package's API (see api.ts), compiled against the web
// build's .d.ts with lib dom.
import init, { RemoteArray } from "chunkwise";
import { initSync as initBundler, RemoteArray as BundlerArray } from "chunkwise/bundler";
import * as b2nd from "chunkwise/b2nd";
import wasmModule from "chunkwise/chunkwise_bg.wasm";
import { cacheApiStore } from "chunkwise/stores/cache-api";

await init({ module_or_path: new URL("chunkwise_bg.wasm", import.meta.url) });
initBundler();
b2nd.initSync({ module: wasmModule });
await b2nd.default();
const cacheStore = cacheApiStore("chunkwise", { caches, maxAge: 60 });
const arr = await RemoteArray.open(location.href, { cache: "disk", cacheStore });
const other = await BundlerArray.open(location.href);
console.log(arr.shape, other.shape);
