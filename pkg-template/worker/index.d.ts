// `chunkwise/worker`: the web build's RemoteArray, RemoteStore and RemoteTable run in a
// dedicated worker (one wasm instance each), with the same methods and options. Results
// arrive with their typed arrays' buffers transferred from the worker. Properties that change
// (traffic, cacheBytes, cacheErrors, nodes after refresh) are as of the last call that ended.
import type {
  ArrayInfo, Attrs, CacheOptions, CacheUsage, ChunkwiseReference, OpenOptions, ReadData,
  ReadOptions, ReadResult, ReadRowsOptions, Selection, SourceIdentity, StoreNode, StoreOptions,
  TableColumn, TableRows, Traffic,
} from "../web/chunkwise.js";

export type {
  ArrayInfo, Attrs, CacheOptions, CacheUsage, ChunkwiseReference, OpenOptions, ReadData,
  ReadOptions, ReadResult, ReadRowsOptions, Selection, SourceIdentity, StoreNode, StoreOptions,
  TableColumn, TableRows, Traffic,
} from "../web/chunkwise.js";
/** The main entry's error class (the same class: `instanceof` holds across both entries). */
export { ChunkwiseError } from "../web/chunkwise.js";
export type { ErrorCode, DataOf, NumericData } from "../web/chunkwise.js";

/** Options of init. */
export interface WorkerInitOptions {
  /** Dedicated workers to start, one wasm instance each (default 1, at most 64). An array,
   *  store or table lives in one worker; opens go to the worker holding the fewest handles.
   *  Each worker has its own memory cache. */
  workers?: number;
  /** The wasm module: a URL of chunkwise_bg.wasm or a compiled WebAssembly.Module (sent to
   *  every worker). Default: the package's module next to the web build. */
  module_or_path?: string | URL | WebAssembly.Module;
  /** The worker script (default: the package's worker/worker.js). */
  workerUrl?: string | URL;
}

/** Starts the worker(s) and initialises the module in each; optional (the first open calls
 *  it with the defaults). A second call resolves with the first. Rejects with
 *  INVALID_ARGUMENT for a bad `workers` and with the worker's own init error. */
export default function init(options?: WorkerInitOptions): Promise<void>;

/** Ends the workers: calls under way reject with CANCELLED, handles become unusable, and a
 *  later open starts new workers. */
export function terminate(): void;

/** A remote array opened in a worker (see the web build's RemoteArray). */
export class RemoteArray {
  private constructor();
  /** Opens a remote array in a worker; rejects as the web build's RemoteArray.open. */
  static open(url: string, options?: OpenOptions): Promise<RemoteArray>;
  /** Reads a selection (default: the whole array); `data` is transferred from the worker. */
  read<T extends ReadData = ReadData>(selection?: Selection, options?: ReadOptions): Promise<ReadResult<T>>;
  /** Reads into `target` (class and length checked before any request); the values are
   *  copied once into it. */
  readInto(target: ArrayBufferView, selection?: Selection, options?: ReadOptions): Promise<ReadResult>;
  /** One chunk decoded whole, as the web build's getChunk. */
  getChunk(coords: number[], options?: ReadOptions): Promise<ReadResult>;
  /** One chunk's stored bytes, or null when not stored, as the web build's getChunkBytes. */
  getChunkBytes(coords: number[], options?: ReadOptions): Promise<Uint8Array | null>;
  /** One chunk as a C-Blosc2 chunk, as the web build's getChunkBlosc2. */
  getChunkBlosc2(coords: number[], options?: ReadOptions): Promise<Uint8Array>;
  /** Releases this handle, in the worker too. Later calls throw. */
  close(): void;
  /** As the web build's free(): the same as close(). */
  free(): void;
  /** The source's URL (no query, no user info), size and validators, as of the open. */
  readonly identity: SourceIdentity;
  readonly shape: number[];
  readonly dtype: string;
  readonly chunks: number[];
  readonly blocks: number[];
  readonly info: ArrayInfo;
  readonly attrs: Attrs;
  readonly dims: (string | null)[] | null;
  readonly cacheStatus: "created" | "reused" | "invalidated";
  /** As of the last call that ended. */
  readonly traffic: Traffic;
  /** As of the last call that ended. */
  readonly cacheBytes: number;
  /** As of the last call that ended. */
  readonly cacheErrors: number;
}

/** A container opened in a worker (see the web build's RemoteStore); its arrays and tables
 *  live in the same worker and share its caches. */
export class RemoteStore {
  private constructor();
  static open(url: string | ChunkwiseReference, options?: StoreOptions): Promise<RemoteStore>;
  get(path: string): Promise<RemoteArray>;
  table(path: string): Promise<RemoteTable>;
  /** Lists afresh; `nodes` and `cacheStatus` are then the new listing's. */
  refresh(): Promise<void>;
  exportReference(options?: { withPayload?: boolean }): Promise<ChunkwiseReference>;
  exportReferenceText(options?: { withPayload?: boolean }): Promise<string>;
  close(): void;
  /** As the web build's free(): the same as close(). */
  free(): void;
  readonly nodes: StoreNode[];
  readonly cacheStatus: "created" | "reused" | "invalidated";
  /** The store's and its arrays' traffic, as of the last call that ended. */
  readonly traffic: Traffic;
  readonly cacheBytes: number;
}

/** A table opened in a worker (see the web build's RemoteTable). */
export class RemoteTable {
  private constructor();
  static open(url: string, options?: OpenOptions): Promise<RemoteTable>;
  readRows(start?: number, stop?: number, options?: ReadRowsOptions): Promise<TableRows>;
  close(): void;
  /** As the web build's free(): the same as close(). */
  free(): void;
  readonly columns: TableColumn[];
  readonly nrows: number;
}

/** The web build's cacheUsage, run in a worker. */
export function cacheUsage(options?: CacheOptions): Promise<CacheUsage>;
/** The web build's clearCache, run in a worker. */
export function clearCache(options?: CacheOptions): Promise<number>;
