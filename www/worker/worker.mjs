// An edge worker (workerd / Cloudflare Workers) serving array selections as JSON.
//
//   GET /?src=<url of a .b2nd>&select=<numpy-like selection>
//   -> {"shape":[..],"dtype":"<f4","values":[..first 64..],"traffic":{"requests":N,"bytes":N}}
//
// The wasm module is bundled with the worker and instantiated synchronously (workers cannot
// fetch their own modules). Opened arrays are kept per isolate, so repeated selections of the
// same source are served from the payload cache without new range requests.
import { initSync, RemoteArray } from "./chunkwise.js";
import wasmModule from "./chunkwise_bg.wasm";

initSync({ module: wasmModule });
const open = new Map();

export default {
  async fetch(request) {
    const u = new URL(request.url);
    const src = u.searchParams.get("src");
    if (!src) return Response.json({ error: { code: "INVALID_ARGUMENT", message: "src is required" } }, { status: 400 });
    try {
      let arr = open.get(src);
      if (!arr) {
        arr = await RemoteArray.open(src, { cache: "memory" });
        open.set(src, arr);
      }
      const { data, shape, dtype } = await arr.read(u.searchParams.get("select") ?? "", {});
      const values = Array.from(data.slice(0, 64), (v) => (typeof v === "bigint" ? v.toString() : v));
      return Response.json({ shape, dtype, values, traffic: arr.traffic });
    } catch (e) {
      return Response.json({ error: { code: e.code ?? "ERROR", message: String(e.message ?? e) } }, { status: 500 });
    }
  },
};
