// `chunkwise/worker` (the classes run in a dedicated worker), compiled against its .d.ts with
// lib dom: every method and property, the error class shared with the main entry.
import initWorker, {
  ChunkwiseError, RemoteArray, RemoteStore, RemoteTable, cacheUsage, clearCache, terminate,
  type ReadResult, type SourceIdentity, type StoreNode,
} from "chunkwise/worker";
import { ChunkwiseError as MainError } from "chunkwise";

await initWorker({ workers: 2, module_or_path: new URL("chunkwise_bg.wasm", import.meta.url) });
const ctrl = new AbortController();
const arr = await RemoteArray.open(location.href, { cache: "disk", cacheBackend: "opfs", persist: true });
const r: ReadResult<Float32Array> = await arr.read<Float32Array>("0:10", {
  signal: ctrl.signal, timeoutMs: 1000, onProgress: ({ done, total }) => console.log(done, total),
});
const f: Float32Array = r.data;
const into = await arr.readInto(new Float32Array(10), [null, "0:10"]);
const chunk = await arr.getChunk([0, 0]);
const raw: Uint8Array | null = await arr.getChunkBytes([0, 0], { signal: ctrl.signal });
const b2: Uint8Array = await arr.getChunkBlosc2([0, 0], { timeoutMs: 1000 });
const identity: SourceIdentity = arr.identity;
console.log(b2.length, identity.url, identity.len, identity.etag, identity.lastModified);
console.log(f.length, into.shape, chunk.dtype, raw?.length, arr.shape, arr.dtype, arr.chunks, arr.blocks,
  arr.info.format, arr.attrs, arr.dims, arr.cacheStatus, arr.traffic.requests, arr.cacheBytes, arr.cacheErrors);
arr.close();

const store = await RemoteStore.open(location.href, { cache: "memory" });
const nodes: StoreNode[] = store.nodes;
const ds: RemoteArray = await store.get(nodes[0].path);
const table: RemoteTable = await store.table("/t");
const rows = await table.readRows(0, 10, { columns: ["a"] });
console.log(ds.shape, table.columns, table.nrows, rows.a, store.traffic.roundTrips, store.cacheBytes, store.cacheStatus);
await store.refresh();
const text: string = await store.exportReferenceText({ withPayload: false });
const again = await RemoteStore.open(await store.exportReference());
console.log(text.length, again.nodes.length);
store.close();
const t2 = await RemoteTable.open(location.href, { path: "/" });
t2.close();
const usage = await cacheUsage({ cacheName: "chunkwise" });
const removed: number = await clearCache({ cacheName: "chunkwise" });
console.log(usage.payload.bytes, removed);
try {
  await arr.read();
} catch (e) {
  if (e instanceof ChunkwiseError && e instanceof MainError) console.log(e.code, e.field);
}
terminate();
