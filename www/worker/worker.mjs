// An edge worker (workerd / Cloudflare Workers) serving array selections as JSON.
//
//   GET /?src=<url of a .b2nd>&select=<numpy-like selection>[&limit=N][&path=P][&cache=disk]
//   -> {"shape":[..],"dtype":"<f4","size":N,"values":[..],"truncated":false,
//       "traffic":{"requests":N,"bytes":N}}
//   -> on failure {"error":{"code":"NOT_FOUND","message":".."}} with a 4xx/5xx status
//
// `values` holds the selection in C order, at most `limit` elements (default 65536; `truncated`
// says whether more were left off). 64-bit integers are decimal strings (JSON numbers would
// lose precision); NaN and infinities become null, as JSON has no such numbers. `traffic`
// counts the range requests and bytes of the array since it was opened in this isolate.
//
// `path` names the dataset of an HDF5 file or the array of a Zarr store. `cache=disk` keeps
// what the array reads in the Cache API (chunkwise's cache "disk" over `cacheApiStore` from
// chunkwise/stores/cache-api, every entry checked against its SHA-256 marker), so a new isolate
// (another instance, a restart) reopens and rereads without range requests; the default keeps
// it in the isolate's memory only. On Cloudflare the Cache API is the data centre's cache (it
// does nothing on *.workers.dev); under plain workerd it is the service the config's
// `cacheApiOutbound` names.
//
// The wasm module is bundled with the worker and instantiated synchronously (workers cannot
// fetch their own modules). Opened arrays are kept per isolate, so repeated selections of the
// same source are served from the payload cache without new range requests.
import { initSync, RemoteArray } from "./chunkwise.js";
import wasmModule from "./chunkwise_bg.wasm";
import { cacheApiStore } from "./cache-api.js";

initSync({ module: wasmModule });
/** Opened arrays by cache mode, path and source URL (promises, so concurrent first requests
 *  share one open). */
const open = new Map();
/** One store for the isolate: opens given the same store share one cache and its budget. */
const cacheStore = cacheApiStore("chunkwise");
const DEFAULT_LIMIT = 65536;

const STATUS = { INVALID_ARGUMENT: 400, INVALID_SELECTION: 400, NOT_FOUND: 404, UNRECOGNISED_FORMAT: 422, UNSUPPORTED: 422 };

function failure(code, message) {
  return Response.json({ error: { code, message } }, { status: STATUS[code] ?? 502 });
}

export default {
  async fetch(request) {
    const u = new URL(request.url);
    const src = u.searchParams.get("src");
    if (!src) return failure("INVALID_ARGUMENT", "src is required");
    const limitParam = u.searchParams.get("limit");
    const limit = limitParam === null ? DEFAULT_LIMIT : Number(limitParam);
    if (!Number.isInteger(limit) || limit < 0) return failure("INVALID_ARGUMENT", "limit must be a non-negative integer");
    const cache = u.searchParams.get("cache") ?? "memory";
    if (cache !== "memory" && cache !== "disk") return failure("INVALID_ARGUMENT", "cache must be \"memory\" or \"disk\"");
    const path = u.searchParams.get("path") ?? undefined;
    const id = JSON.stringify([cache, path ?? null, src]);
    try {
      let opening = open.get(id);
      if (!opening) {
        opening = RemoteArray.open(src, cache === "disk" ? { cache, cacheStore, path } : { cache, path });
        open.set(id, opening);
        // A failed open is not kept: the next request tries again.
        opening.catch(() => open.delete(id));
      }
      const arr = await opening;
      const { data, shape, dtype } = await arr.read(u.searchParams.get("select"), {});
      const values = Array.from(data.length > limit ? data.subarray(0, limit) : data,
        (v) => (typeof v === "bigint" ? v.toString() : v));
      return Response.json({
        shape: Array.from(shape), dtype, size: data.length, values,
        truncated: data.length > limit, traffic: arr.traffic,
      });
    } catch (e) {
      return failure(e?.code ?? "ERROR", String(e?.message ?? e));
    }
  },
};
