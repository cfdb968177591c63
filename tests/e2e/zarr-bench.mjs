// zarrita.js on the Zarr bench stores, for `chunkwise bench remote`: the same cases as the
// Rust side (cold open + read, then the same read again), counting fetches and body bytes.
// Usage: node tests/e2e/zarr-bench.mjs CASES_JSON
//   CASES_JSON: [{"case": "...", "store": "<url>", "path": "/temperature",
//                 "select": [[0,128],[0,128]]}, ...]   (null for a whole axis)
// Prints one JSON line per case and variant: plain FetchStore (with useSuffixRequest, so a
// shard index costs one request, as chunkwise's suffix read) and FetchStore with
// withRangeCoalescing.
import * as zarr from "zarrita";

const cases = JSON.parse(process.argv[2]);

function counter() {
  const c = { requests: 0, bytes: 0 };
  c.fetch = async (request) => {
    c.requests += 1;
    const r = await fetch(request);
    const body = new Uint8Array(await r.arrayBuffer());
    c.bytes += body.length;
    return new Response(r.status === 204 || r.status === 304 ? null : body, {
      status: r.status,
      statusText: r.statusText,
      headers: r.headers,
    });
  };
  return c;
}

async function one(kase, coalesce) {
  const c = counter();
  let store = new zarr.FetchStore(kase.store, { fetch: c.fetch, useSuffixRequest: true });
  if (coalesce) store = zarr.withRangeCoalescing(store);
  const t0 = performance.now();
  const arr = await zarr.open(zarr.root(store).resolve(kase.path.replace(/^\//, "")), {
    kind: "array",
  });
  const sel = kase.select.map((s) => (s === null ? null : zarr.slice(s[0], s[1])));
  await zarr.get(arr, sel);
  const cold_ms = performance.now() - t0;
  const cold = { requests: c.requests, bytes: c.bytes };
  const t1 = performance.now();
  await zarr.get(arr, sel);
  const warm_ms = performance.now() - t1;
  return {
    case: `${kase.case} [zarrita${coalesce ? " + coalescing" : ""}]`,
    requests: cold.requests,
    bytes: cold.bytes,
    cold_ms,
    warm_requests: c.requests - cold.requests,
    warm_ms,
  };
}

for (const kase of cases) {
  for (const coalesce of [false, true]) {
    try {
      console.log(JSON.stringify(await one(kase, coalesce)));
    } catch (e) {
      console.log(JSON.stringify({ case: kase.case, error: String(e) }));
    }
  }
}
