// Every public API of the package, typed as a TypeScript user writes it. Compiled (never run)
// by check.mjs under `tsc --strict` against the web build's and the Node build's .d.ts (lib
// es2020: nothing may need Symbol.dispose). `@ts-expect-error` lines are misuses the
// declarations must refuse: a declaration that lets them through fails the check.

import init, {
  initSync,
  ChunkwiseError,
  RemoteArray,
  RemoteStore,
  RemoteTable,
  KeyResolver,
  adviseChunkCache,
  benchChunkTrace,
  cacheUsage,
  chunkTraceExperiment,
  clearCache,
  decodeChunk,
  decodeChunkInto,
  diff,
  partition,
  randomChunkTrace,
  renderPng,
  resolveKey,
  simulateChunkCache,
  wasmMemoryBytes,
} from "chunkwise";
import type {
  ArrayInfo,
  Attrs,
  AttrValue,
  CacheStore,
  CacheUsage,
  ChunkwiseReference,
  DataOf,
  ErrorCode,
  OpenOptions,
  ReadData,
  ReadOptions,
  ReadResult,
  RenderPngOptions,
  Selection,
  SourceIdentity,
  StoreNode,
  StoreOptions,
  TableColumn,
  TableRows,
  Traffic,
} from "chunkwise";

declare const url: string;

export async function everything(): Promise<void> {
  // The same start in every build: the web build fetches its module, Node's init does nothing.
  await init();
  initSync({ module: new Uint8Array(8) });

  // Options are optional.
  const arr: RemoteArray = await RemoteArray.open(url);
  const opts: OpenOptions = {
    cache: "memory",
    maxCacheBytes: null,
    headers: { Authorization: "Bearer x" },
    path: "/group/data",
    cacheKey: "k",
    assumeImmutable: true,
    shareCache: false,
    signal: new AbortController().signal,
    timeoutMs: 1000,
  };
  await RemoteArray.open(url, opts);
  // Headers as fetch takes them.
  await RemoteArray.open(url, { headers: new Headers({ Authorization: "Bearer x" }) });
  await RemoteArray.open(url, { headers: [["Authorization", "Bearer x"]] });
  await RemoteArray.open(url, { headers: new Map([["Authorization", "Bearer x"]]) });
  // @ts-expect-error: a pair of three
  await RemoteArray.open(url, { headers: [["Authorization", "Bearer", "x"]] });
  // @ts-expect-error: not a cache policy
  await RemoteArray.open(url, { cache: "ram" });
  // A Caterva2 dataset, with a login or a token.
  await RemoteArray.open(url, { source: "caterva2", path: "@public/ds.b2nd" });
  await RemoteArray.open(url, {
    source: "caterva2", path: "@personal/ds.b2nd", credentials: { username: "u", password: "p" },
  });
  await RemoteArray.open(url, { source: "caterva2", path: "@shared/ds.b2nd", credentials: { token: "t" } });
  // @ts-expect-error: not a source
  await RemoteArray.open(url, { source: "hdf5" });
  // @ts-expect-error: a login has a password
  await RemoteArray.open(url, { source: "caterva2", path: "@x/y", credentials: { username: "u" } });

  const shape: number[] = arr.shape;
  const dtype: string = arr.dtype;
  const chunks: number[] = arr.chunks;
  const blocks: number[] = arr.blocks;
  const attrs: Attrs = arr.attrs;
  const units: AttrValue | undefined = attrs["units"];
  const dims: (string | null)[] | null = arr.dims;
  const info: ArrayInfo = arr.info;
  const format: "b2nd" | "b2z" | "hdf5" | "zarr2" | "zarr3" | "caterva2" = info.format;
  // Stored sizes are null where unknown (a Zarr store lists no chunk objects); the chunk and
  // byte counts are null from 2^64 up.
  const sizes: number = (info.nbytes ?? 0) + (info.cbytes ?? 0) + (info.source_bytes ?? 0) + (info.nchunks ?? 0);
  // @ts-expect-error: cbytes may be null
  const storedBytes: number = info.cbytes;
  // @ts-expect-error: nchunks may be null
  const chunkCount: number = info.nchunks;
  const codecs: string = info.codecs;
  const status: "created" | "reused" | "invalidated" = arr.cacheStatus;
  const held: number = arr.cacheBytes + arr.cacheErrors;
  const traffic: Traffic = arr.traffic;
  const moved: number = traffic.requests + traffic.bytes + traffic.roundTrips;
  console.log(shape, dtype, chunks, blocks, units, dims, format, sizes, storedBytes, chunkCount, codecs, status, held, moved);

  // Reads: a selection and options are optional; data is one of the read types.
  const all: ReadResult = await arr.read();
  const anyData: ReadData = all.data;
  const sel: Selection = [0, null, "::2"];
  const ropts: ReadOptions = {
    signal: new AbortController().signal,
    timeoutMs: 500,
    onProgress: ({ done, total }) => console.log(done / total),
  };
  const part = await arr.read(sel, ropts);
  const missing: number = part.missingChunks + part.shape.length + part.dtype.length;
  // @ts-expect-error: without a type argument data may be any of the read types
  const notYet: Float32Array = part.data;
  // The caller who knows the dtype says so.
  const f4 = await arr.read<Float32Array>("0:10");
  const first: number = f4.data[0];
  const i8 = await arr.read<DataOf<"<i8">>("0:10");
  const big: bigint = i8.data[0];
  const strings: DataOf<"|S8"> = ["a"];
  const records: DataOf<"[('id', '<i4')]"> = [{ id: 1 }];
  // float16: Float16Array where the lib has it, else Float32Array (values converted).
  const u2: Float32Array = new Float32Array(1) satisfies DataOf<"<f2">;
  console.log(anyData, missing, notYet, first, big, strings, records, u2);
  // Chunks and caller-owned buffers: options (and readInto's selection) are optional.
  const chunk: ReadResult = await arr.getChunk([0, 0]);
  const stored: Uint8Array | null = await arr.getChunkBytes([0, 0]);
  const into = new Float32Array(10);
  await arr.readInto(into);
  await arr.readInto(into, "0:10", { timeoutMs: 500 });
  console.log(chunk.shape, stored?.length);
  // A chunk as a C-Blosc2 chunk, the source's identity, a PNG preview of a 2-D read.
  const b2: Uint8Array = await arr.getChunkBlosc2([0, 0], { timeoutMs: 500 });
  const id: SourceIdentity = arr.identity;
  const etag: string | null = id.etag;
  const plane = await arr.read<Float32Array>("0:10, 0:10");
  const pngOptions: RenderPngOptions = { cmap: "magma", vmin: 0, vmax: 1, maxPixels: 1 << 20 };
  const pngFile: Uint8Array = renderPng(plane.data, plane.shape, pngOptions);
  renderPng(new BigInt64Array(4), [2, 2]);
  console.log(b2.length, id.url, id.len, id.lastModified, etag, pngFile.length);
  arr.close();

  // Tables: from a store, or opened at a path; rows as a column-name map.
  const tableStore = await RemoteStore.open(url);
  const table: RemoteTable = await tableStore.table("/run/table");
  const columns: TableColumn[] = table.columns;
  const nrows: number = table.nrows;
  const rows: TableRows = await table.readRows(0, 10, {
    columns: ["id", "x"],
    timeoutMs: 500,
    signal: new AbortController().signal,
    onProgress: (p) => console.log(p.done, p.total),
  });
  await table.readRows();
  // @ts-expect-error: columns are names
  await table.readRows(0, 10, { columns: [1] });
  const opened: RemoteTable = await RemoteTable.open(url, { path: "/cols", cache: "none" });
  console.log(columns[0].name, columns[0].dtype, columns[0].error, nrows, rows["id"]);
  table.close();
  opened.free();
  tableStore.close();

  // Stores: nodes narrow by kind.
  const storeOpts: StoreOptions = { cache: "none" };
  const store = await RemoteStore.open(url);
  await RemoteStore.open(url, storeOpts);
  // @ts-expect-error: a store has no path option
  await RemoteStore.open(url, { path: "/x" });
  await RemoteStore.open(url, { source: "caterva2", credentials: { username: "u", password: "p" } });
  for (const n of store.nodes as StoreNode[]) {
    if (n.kind === "link") {
      const why: string = n.error;
      // @ts-expect-error: a link has no shape
      const s: number[] = n.shape;
      console.log(why, s);
    } else if (n.kind === "array") {
      const s: number[] | null = n.shape;
      const d: (string | null)[] | null = n.dims;
      if (n.error === null && n.shape !== null) {
        const ds = await store.get(n.path);
        console.log(s, d, ds.shape, n.attrs);
      }
    } else if (n.kind === "table") {
      // A CTable of a .b2z: shape [live rows], opened with store.table.
      const live: number[] = n.shape;
      const t: RemoteTable = await store.table(n.path);
      console.log(live, t.nrows);
    } else {
      const g: "group" = n.kind;
      const none: null = n.shape;
      console.log(g, none, n.attrs);
    }
  }
  await store.refresh();
  console.log(store.cacheStatus, store.cacheBytes, store.traffic.requests);
  // Portable references: a plain object (or its JSON text) opens where a URL does.
  const ref: ChunkwiseReference = await store.exportReference();
  const kind: "hdf5" | "zarr" | "b2z" = ref.kind;
  const len: number = ref.identity.len;
  const again = await RemoteStore.open(ref, storeOpts);
  const warm: ChunkwiseReference = await store.exportReference({ withPayload: true });
  const text: string = await store.exportReferenceText();
  await RemoteStore.open(text);
  console.log(warm.payload?.chunks.length);
  await RemoteStore.open(JSON.stringify(ref));
  // @ts-expect-error: a reference is not any object
  await RemoteStore.open({ url });
  console.log(kind, len, ref.mutable, ref.sha256, Object.keys(ref.records), again.nodes);
  store.close();

  // Errors: a real class, its code one of ErrorCode.
  try {
    await RemoteArray.open(url, { timeoutMs: 1 });
  } catch (e) {
    if (e instanceof ChunkwiseError) {
      const code: ErrorCode = e.code;
      const name: "ChunkwiseError" = e.name;
      const message: string = e.message;
      switch (code) {
        case "NOT_FOUND":
        case "TIMEOUT":
          break;
        // @ts-expect-error: not a code
        case "NOPE":
          break;
      }
      console.log(name, message, e.field, e instanceof Error);
    }
  }
  const made = new ChunkwiseError("m", "INVALID_ARGUMENT");
  console.log(made.code);

  // Persistent caches.
  const cacheStore: CacheStore = {
    get: async (key: string) => (key ? new Uint8Array(0) : undefined),
    put: async () => {},
    delete: async () => {},
    keys: async () => [],
  };
  await RemoteArray.open(url, { cache: "disk", cacheStore, cacheName: "c", persist: false });
  await RemoteArray.open(url, { cache: "disk", cacheBackend: "opfs" });
  const usage: CacheUsage = await cacheUsage();
  const usage2 = await cacheUsage({ cacheName: "c", cacheStore });
  const removed: number = await clearCache();
  await clearCache({ cacheBackend: "indexeddb" });
  console.log(usage.payload.bytes, usage2.perSource.map((s) => s.source), removed);

  // Tools.
  const bytes: Uint8Array = decodeChunk(new Uint8Array(32));
  const written: number = decodeChunkInto(new Uint8Array(32), new Uint8Array(bytes.length));
  const mem: number = wasmMemoryBytes();
  const { geometry, traces } = chunkTraceExperiment();
  const report = simulateChunkCache(geometry, traces["round-robin"], { nslots: 17, nbytes: 16384, w0: 0 });
  const reads: number = report.total.reads;
  const advice = adviseChunkCache(geometry, traces.grouped, { nslots: 1, maxCacheBytes: 1 << 20 });
  const trace = randomChunkTrace([64, 64], [32, 32], 1, 10);
  const bench = benchChunkTrace(1000, 1);
  console.log(bytes, written, mem, reads, advice.reuse_set, trace.selections.length, bench.ms);
  const result = partition([{ path: "tas", shape: [10], chunks: [5], itemsize: 4 }], { scope: "s" });
  const d = diff(null, result.manifest);
  const k = resolveKey(result.manifest, "tas/c/0");
  const resolver = new KeyResolver();
  resolver.add(result.manifest);
  console.log(d.describe, k.kind, resolver.resolve("s/tas/c/0").blob_id, resolver.isArchivable("x"), resolver.size);
  resolver.free();
}
