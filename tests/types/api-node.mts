// The Node-only parts of the package's API (see api.ts), compiled against the Node build's
// .d.ts under nodenext resolution.
import init, { RemoteArray, ChunkwiseError } from "chunkwise";
import { nodeFsStore } from "chunkwise/stores/node-fs";
import type { CacheStore } from "chunkwise/stores/node-fs";
import os from "node:os";
import path from "node:path";

await init();
const cacheStore: CacheStore = nodeFsStore(path.join(os.tmpdir(), "chunkwise-types"));
nodeFsStore(new URL("file:///tmp/x"));
const arr = await RemoteArray.open("http://127.0.0.1:1/x.b2nd", { cache: "disk", cacheStore });
const r = await arr.read<Float64Array>();
console.log(r.data[0], new ChunkwiseError("m", "IO").code);
