// The chunkwise edge chunk service: a module worker (workerd, Cloudflare Workers) serving
// discovery, chunks, selections and previews of remote arrays (.b2nd, HDF5, Zarr v2/v3, .b2z)
// read by the wasm core over HTTP range requests from allow-listed origins only.
//
//   GET /v1/info?src=URL[&path=P]                         discovery as JSON
//   GET /v1/chunk?src=URL[&path=P]&coords=i,j[&format=raw|blosc2]
//   GET /v1/slice?src=URL[&path=P][&select=SEL][&format=npy|json|bin]
//   GET /v1/preview.png?src=URL[&path=P][&select=SEL][&cmap=viridis][&vmin=][&vmax=]
//   GET /v1/stats                                         the isolate's counters
//
// Every answer but /v1/stats carries Server-Timing; payload answers carry a strong ETag
// (src/etag.mjs), honour If-None-Match (304) and say Cache-Control from the source's
// immutability. Errors are `{"error":{"code","message"}}` with a 4xx/5xx status. Bindings:
// src/settings.mjs; README.md in this directory.

import * as chunkwise from "chunkwise";
import wasmModule from "chunkwise/chunkwise_bg.wasm";
import { cacheApiStore } from "chunkwise/stores/cache-api";
import { jsonBody, jsonElementBytes, jsonOverheadBytes, npy, rawBytes } from "./src/encode.mjs";
import { notModified, publicUrl, strongEtag } from "./src/etag.mjs";
import { corsHeaders, describe, HttpError, preflight } from "./src/http.mjs";
import { chunksTouched, itemSize, parseSelection, SelectionError } from "./src/selection.mjs";
import { readSettings } from "./src/settings.mjs";
import { arrayHeld, cachedResponse, keepResponse, newLease, openArray, openStore, release, revalidatedAtOpen, singleFlight, storeHeld, useChunkwise } from "./src/sources.mjs";
import { countResponse, serverTiming, snapshot, started, stats } from "./src/stats.mjs";
import { installUpstream, refusal } from "./src/upstream.mjs";
import { busy, coreTurn, quiet, requestScope, setTurns } from "./src/contexts.mjs";

chunkwise.initSync({ module: wasmModule });
useChunkwise({ RemoteArray: chunkwise.RemoteArray, RemoteStore: chunkwise.RemoteStore, cacheApiStore });

const ROUTES = new Set(["/v1/info", "/v1/chunk", "/v1/slice", "/v1/preview.png", "/v1/stats"]);

/** Settings per env object (one per isolate in practice). */
let settingsFor = null;
let settingsCache = null;
function settingsOf(env) {
  if (settingsFor !== env) {
    settingsCache = readSettings(env ?? {});
    settingsFor = env;
  }
  return settingsCache;
}

/** The `src` parameter, checked: an absolute http(s) URL without user info from an allowed origin. */
function sourceOf(q, settings) {
  const src = q.get("src");
  if (!src) throw new HttpError(400, "INVALID_ARGUMENT", "src is required");
  let u;
  try {
    u = new URL(src);
  } catch {
    throw new HttpError(400, "INVALID_ARGUMENT", "src is not an absolute URL");
  }
  if (u.username || u.password) {
    throw new HttpError(400, "INVALID_ARGUMENT", "src must not carry user info: credentials are configured per origin (UPSTREAM_HEADERS), never taken from the client");
  }
  const why = refusal(u, settings);
  if (why) throw new HttpError(403, "ORIGIN_NOT_ALLOWED", `source refused: ${why}`);
  return u.href;
}

function limit(status, name, value, max, what) {
  return new HttpError(status, "LIMIT_EXCEEDED", `${what} ${value} exceeds ${name} (${max})`, { limit: name, value, max });
}

/** Identity of an opened array as it enters ETags. The query of `src` enters too (hashed
 *  with the rest, never shown): URLs differing in it are other resources (`?versionId=`), and
 *  without validators nothing else would tell their answers apart. */
function identityOf(arr, src) {
  const query = new URL(src).search;
  const id = arr.identity;
  if (id) return [publicUrl(id.url ?? src), query, id.len ?? null, id.etag ?? null, id.lastModified ?? null];
  return [publicUrl(src), query, arr.info?.source_bytes ?? null, null, null];
}

/** Typed arrays and BigInts of attributes as JSON can carry them. */
function plain(v) {
  if (typeof v === "bigint") return v.toString();
  if (ArrayBuffer.isView(v)) return Array.from(v, plain);
  if (Array.isArray(v)) return v.map(plain);
  if (v && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x)]));
  return typeof v === "number" && !Number.isFinite(v) ? null : v;
}

function cacheControl(settings, src) {
  return settings.mutable.has(new URL(src).origin)
    ? "no-cache"
    : `public, max-age=${settings.immutableMaxAge}, immutable`;
}

/**
 * Serves a payload route: open, check, tag, then the cached, joined or fresh body.
 * `plan(arr)` checks the request against the array and the limits and returns
 * `{ tagParts, produce: async () => { body, headers } }`.
 */
async function payload(request, settings, src, path, plan, t0, lease) {
  const mutable = settings.mutable.has(new URL(src).origin);
  // The request that starts the open counts the open's requests as its own.
  const opening = !arrayHeld(src, path);
  const arr = await openArray(settings, src, path, mutable, lease);
  const before = opening ? { requests: 0, bytes: 0 } : arr.traffic;
  const { tagParts, produce } = plan(arr);
  const etag = await strongEtag([...identityOf(arr, src), path ?? null, ...tagParts]);
  const base = { etag, "cache-control": cacheControl(settings, src) };
  // A mutable HDF5 file or Zarr store is read afresh for each request (src/sources.mjs), and
  // its identity cannot see a rewritten chunk (Zarr's is the array's metadata): its tag is
  // that of the body read, and If-None-Match is answered after the read.
  const bodyTagged = mutable && !revalidatedAtOpen(src);
  if (!bodyTagged && notModified(request.headers.get("if-none-match"), etag)) {
    const timing = serverTiming({ cache: "not-modified", requests: 0, bytes: 0, totalMs: performance.now() - t0 });
    return { status: 304, body: null, headers: { ...base, "server-timing": timing }, counted: "notModified" };
  }
  const held = !mutable && cachedResponse(etag);
  if (held) {
    const timing = serverTiming({ cache: "hit-response", requests: 0, bytes: 0, totalMs: performance.now() - t0 });
    return { status: 200, body: held.body, headers: { ...held.headers, ...base, "server-timing": timing }, counted: "response" };
  }
  const { value, joined } = await singleFlight(etag, async () => {
    const r0 = performance.now();
    const out = await produce();
    out.readMs = out.readMs ?? performance.now() - r0;
    const after = arr.traffic;
    out.requests = after.requests - before.requests;
    out.bytes = after.bytes - before.bytes;
    if (!mutable) keepResponse(etag, out, settings.responseCacheBytes);
    return out;
  });
  if (bodyTagged) {
    base.etag = await strongEtag([etag, Array.from(new Uint8Array(await crypto.subtle.digest("SHA-256", value.body)))]);
    if (notModified(request.headers.get("if-none-match"), base.etag)) {
      const timing = serverTiming({ cache: "not-modified", requests: joined ? 0 : value.requests, bytes: joined ? 0 : value.bytes, totalMs: performance.now() - t0 });
      return { status: 304, body: null, headers: { ...base, "server-timing": timing }, counted: "notModified" };
    }
  }
  const timing = serverTiming({
    cache: joined ? "joined" : value.requests === 0 ? "hit-payload" : "miss",
    requests: joined ? 0 : value.requests, bytes: joined ? 0 : value.bytes,
    readMs: value.readMs, encodeMs: value.encodeMs, totalMs: performance.now() - t0,
  });
  return {
    status: 200, body: value.body, headers: { ...value.headers, ...base, "server-timing": timing },
    counted: joined ? null : value.requests === 0 ? "payload" : "miss",
  };
}

function selectionPlan(arr, q, settings, { maxPixels } = {}) {
  const select = q.get("select");
  let parsed;
  try {
    parsed = parseSelection(select, Array.from(arr.shape));
  } catch (e) {
    if (e instanceof SelectionError) throw new HttpError(400, e.code, e.message);
    throw e;
  }
  const n = parsed.shape.reduce((a, b) => a * b, 1);
  const bytes = n * (itemSize(arr.dtype) ?? 8);
  if (bytes > settings.maxSelectionBytes) throw limit(413, "MAX_SELECTION_BYTES", bytes, settings.maxSelectionBytes, "the selection's bytes");
  const touched = chunksTouched(parsed.dims, Array.from(arr.chunks));
  if (touched > settings.maxChunks) throw limit(413, "MAX_CHUNKS", touched, settings.maxChunks, "chunks touched");
  if (maxPixels !== undefined) {
    if (parsed.shape.length !== 2) throw new HttpError(400, "INVALID_SELECTION", `a preview needs a 2-D selection; this one has shape [${parsed.shape}]`);
    if (n > maxPixels) throw limit(413, "MAX_PNG_PIXELS", n, maxPixels, "the preview's pixels");
  }
  return { select: select ?? "", shape: parsed.shape };
}

function shapeHeaders(shape, dtype, missing) {
  return { "x-chunkwise-shape": Array.from(shape).join(","), "x-chunkwise-dtype": dtype, "x-chunkwise-missing-chunks": String(missing ?? 0) };
}

function chunkRoute(arr, q, settings) {
  const text = q.get("coords");
  if (!text) throw new HttpError(400, "INVALID_ARGUMENT", "coords is required (chunk grid coordinates, e.g. coords=0,1)");
  const coords = text.split(",").map((s) => s.trim());
  if (!coords.every((c) => /^\d+$/.test(c))) throw new HttpError(400, "INVALID_ARGUMENT", "coords must be non-negative integers separated by commas");
  const c = coords.map(Number);
  const shape = Array.from(arr.shape), chunks = Array.from(arr.chunks);
  if (c.length !== shape.length) throw new HttpError(400, "INVALID_ARGUMENT", `coords has ${c.length} values for an array of ${shape.length} dimensions`);
  c.forEach((v, d) => {
    const grid = Math.ceil(shape[d] / Math.max(1, chunks[d]));
    if (v >= grid) throw new HttpError(400, "INVALID_ARGUMENT", `coords[${d}] = ${v} is outside the chunk grid (${grid} chunks)`);
  });
  const bytes = chunks.reduce((a, b) => a * b, 1) * (itemSize(arr.dtype) ?? 8);
  if (bytes > settings.maxSelectionBytes) throw limit(413, "MAX_SELECTION_BYTES", bytes, settings.maxSelectionBytes, "the chunk's bytes");
  const format = q.get("format") ?? "raw";
  if (format !== "raw" && format !== "blosc2") throw new HttpError(400, "INVALID_ARGUMENT", 'format must be "raw" or "blosc2"');
  if (format === "blosc2" && typeof arr.getChunkBlosc2 !== "function") {
    throw new HttpError(501, "NOT_IMPLEMENTED", "format=blosc2 needs a package with RemoteArray.getChunkBlosc2");
  }
  return {
    tagParts: ["chunk", c.join(","), format],
    produce: async () => {
      const opts = { timeoutMs: settings.timeoutMs };
      if (format === "blosc2") {
        const r0 = performance.now();
        const body = await coreTurn(() => arr.getChunkBlosc2(c, opts), 2 * settings.timeoutMs);
        // A .b2nd chunk is the stored one: elements in the Blosc2 NDim layout (blocks of
        // `blocks` in C order, each in C order) and the frame's byte order; other formats'
        // chunks are encoded from the decoded values, C order, little-endian
        // (RemoteArray.getChunkBlosc2). X-Chunkwise-Blocks says which: the chunk's own shape
        // means plain C order.
        const b2nd = arr.info?.format === "b2nd";
        const dtype = b2nd ? arr.dtype : arr.dtype.replace(/^>/, "<");
        const blocks = b2nd ? Array.from(arr.blocks) : chunks;
        return { body, readMs: performance.now() - r0, encodeMs: 0, headers: { "content-type": "application/x-blosc2-chunk", ...shapeHeaders(chunks, dtype, 0), "x-chunkwise-blocks": blocks.join(",") } };
      }
      const r0 = performance.now();
      const { data, shape: cs, dtype, missingChunks } = await coreTurn(() => arr.getChunk(c, opts), 2 * settings.timeoutMs);
      const readMs = performance.now() - r0;
      const body = rawBytes(data, dtype);
      if (!body) throw new HttpError(422, "UNSUPPORTED", `format=raw needs fixed-size elements; ${dtype} reads as JS values: use /v1/slice?format=json`);
      return { body: body.slice(), readMs, encodeMs: performance.now() - r0 - readMs, headers: { "content-type": "application/octet-stream", ...shapeHeaders(cs, dtype, missingChunks) } };
    },
  };
}

function sliceRoute(arr, q, settings) {
  const format = q.get("format") ?? "npy";
  if (!["npy", "json", "bin"].includes(format)) throw new HttpError(400, "INVALID_ARGUMENT", 'format must be "npy", "json" or "bin"');
  const { select, shape: selShape } = selectionPlan(arr, q, settings);
  // A JSON answer is bounded before it is built: its most bytes per element (the dtype's
  // widest JSON text) times the elements must fit MAX_JSON_BYTES and MAX_SELECTION_BYTES;
  // the refusal names the smaller. A dtype with no bound in its text (records, unsized
  // strings) is checked on the text built.
  const jsonMax = Math.min(settings.maxJsonBytes, settings.maxSelectionBytes);
  const jsonLimit = settings.maxJsonBytes <= settings.maxSelectionBytes ? "MAX_JSON_BYTES" : "MAX_SELECTION_BYTES";
  if (format === "json") {
    const per = jsonElementBytes(arr.dtype);
    const n = selShape.reduce((a, b) => a * b, 1);
    const estimate = per === null ? null : n * per + jsonOverheadBytes(selShape, arr.dtype);
    if (estimate !== null && estimate > jsonMax) throw limit(413, jsonLimit, estimate, jsonMax, "the JSON answer's most bytes");
  }
  return {
    tagParts: ["slice", select, format],
    produce: async () => {
      const r0 = performance.now();
      const { data, shape, dtype, missingChunks } = await coreTurn(() => arr.read(select, { timeoutMs: settings.timeoutMs }), 2 * settings.timeoutMs);
      const readMs = performance.now() - r0;
      const headers = shapeHeaders(shape, dtype, missingChunks);
      let body;
      if (format === "json") {
        body = new TextEncoder().encode(jsonBody(data, shape, dtype, { missingChunks }));
        if (body.byteLength > jsonMax) throw limit(413, jsonLimit, body.byteLength, jsonMax, "the JSON answer's bytes");
        headers["content-type"] = "application/json";
      } else {
        const bytes = rawBytes(data, dtype);
        if (!bytes) throw new HttpError(422, "UNSUPPORTED", `format=${format} needs fixed-size elements; ${dtype} reads as JS values: use format=json`);
        body = format === "npy" ? npy(bytes, Array.from(shape), dtype) : bytes.slice();
        headers["content-type"] = format === "npy" ? "application/x-npy" : "application/octet-stream";
      }
      return { body, readMs, encodeMs: performance.now() - r0 - readMs, headers };
    },
  };
}

function previewRoute(arr, q, settings) {
  const cmap = q.get("cmap") ?? "viridis";
  const num = (k) => {
    const v = q.get(k);
    if (v === null || v === "") return undefined;
    const n = Number(v);
    if (!Number.isFinite(n)) throw new HttpError(400, "INVALID_ARGUMENT", `${k} must be a finite number`);
    return n;
  };
  const vmin = num("vmin"), vmax = num("vmax");
  const { select } = selectionPlan(arr, q, settings, { maxPixels: settings.maxPngPixels });
  if (typeof chunkwise.renderPng !== "function") {
    throw new HttpError(501, "NOT_IMPLEMENTED", "preview.png needs a package with renderPng");
  }
  return {
    tagParts: ["preview", select, "png", cmap, vmin ?? null, vmax ?? null],
    produce: async () => {
      const r0 = performance.now();
      const { data, shape, missingChunks } = await coreTurn(() => arr.read(select, { timeoutMs: settings.timeoutMs }), 2 * settings.timeoutMs);
      const readMs = performance.now() - r0;
      const opts = { cmap, maxPixels: settings.maxPngPixels };
      if (vmin !== undefined) opts.vmin = vmin;
      if (vmax !== undefined) opts.vmax = vmax;
      const body = chunkwise.renderPng(data, Array.from(shape), opts);
      return { body, readMs, encodeMs: performance.now() - r0 - readMs, headers: { "content-type": "image/png", "x-chunkwise-shape": Array.from(shape).join(","), "x-chunkwise-missing-chunks": String(missingChunks ?? 0) } };
    },
  };
}

async function info(request, settings, src, path, t0, lease) {
  let body;
  const mutable = settings.mutable.has(new URL(src).origin);
  let traffic = { requests: 0, bytes: 0 };
  const asArray = async () => {
    const opening = !arrayHeld(src, path);
    const arr = await openArray(settings, src, path, mutable, lease);
    if (opening) traffic = arr.traffic;
    return {
      kind: "array", url: publicUrl(src), path: path ?? null, shape: Array.from(arr.shape), dtype: arr.dtype,
      chunks: Array.from(arr.chunks), blocks: Array.from(arr.blocks), info: plain(arr.info),
      attrs: plain(arr.attrs), dims: plain(arr.dims),
    };
  };
  if (path !== undefined || /\.b2nd$/i.test(new URL(src).pathname)) {
    body = await asArray();
  } else {
    let store;
    try {
      const opening = !storeHeld(src);
      store = await openStore(settings, src, mutable, lease);
      if (opening) traffic = store.traffic;
    } catch (e) {
      // A single array (a Zarr array's own URL): discovered as one.
      if (e?.code !== "UNSUPPORTED" && e?.code !== "INVALID_ARGUMENT" && e?.code !== "NOT_FOUND") throw e;
      body = await asArray();
    }
    if (store) body = { kind: "store", url: publicUrl(src), nodes: plain(store.nodes) };
  }
  const text = JSON.stringify(body);
  const etag = await strongEtag(["info", text]);
  const headers = {
    "content-type": "application/json", etag, "cache-control": cacheControl(settings, src),
    "server-timing": serverTiming({ cache: traffic.requests ? "miss" : "hit-payload", requests: traffic.requests, bytes: traffic.bytes, totalMs: performance.now() - t0 }),
  };
  if (notModified(request.headers.get("if-none-match"), etag)) return { status: 304, body: null, headers };
  return { status: 200, body: new TextEncoder().encode(text), headers };
}

/** An error answer; its Server-Timing counts the isolate's upstream requests during the
 *  request (`up0`: the counters at its start), as no array may have been opened. */
function errorAnswer(e, settings, t0, up0) {
  const d = describe(e, settings);
  const requests = stats.upstream.requests - up0.requests, bytes = stats.upstream.bytes - up0.bytes;
  return {
    status: d.status,
    body: new TextEncoder().encode(JSON.stringify({ error: { code: d.code, message: d.message, ...d.extra } })),
    headers: { "content-type": "application/json", "cache-control": "no-store", "server-timing": serverTiming({ cache: "n/a", requests, bytes, totalMs: performance.now() - t0 }) },
  };
}

async function handle(request, env) {
  started();
  const t0 = performance.now();
  const up0 = { requests: stats.upstream.requests, bytes: stats.upstream.bytes };
  const url = new URL(request.url);
  const route = ROUTES.has(url.pathname) ? url.pathname : "other";
  let settings = null;
  let answer;
  // The opens this request uses, released once its answer is built (src/sources.mjs).
  const lease = newLease();
  try {
    settings = settingsOf(env);
    installUpstream(settings);
    if (route === "other") throw new HttpError(404, "NOT_FOUND", `no route ${url.pathname}: /v1/info, /v1/chunk, /v1/slice, /v1/preview.png, /v1/stats`);
    if (request.method === "OPTIONS") {
      const r = preflight(request, settings);
      r.headers.set("server-timing", serverTiming({ cache: "n/a", requests: 0, bytes: 0, totalMs: performance.now() - t0 }));
      countResponse(route, r.status);
      return r;
    }
    if (request.method !== "GET" && request.method !== "HEAD") {
      throw new HttpError(405, "METHOD_NOT_ALLOWED", `${request.method} is not allowed: GET, HEAD, OPTIONS`);
    }
    const q = url.searchParams;
    if (route === "/v1/stats") {
      answer = { status: 200, body: new TextEncoder().encode(JSON.stringify({ ...snapshot(), busy: busy() })), headers: { "content-type": "application/json", "cache-control": "no-store", "server-timing": serverTiming({ cache: "n/a", requests: 0, bytes: 0, totalMs: performance.now() - t0 }) } };
    } else {
      const src = sourceOf(q, settings);
      const path = q.get("path") ?? undefined;
      if (route === "/v1/info") answer = await info(request, settings, src, path, t0, lease);
      else {
        const plan = route === "/v1/chunk" ? chunkRoute : route === "/v1/slice" ? sliceRoute : previewRoute;
        answer = await payload(request, settings, src, path, (arr) => plan(arr, q, settings), t0, lease);
      }
    }
  } catch (e) {
    answer = errorAnswer(e, settings, t0, up0);
    if (answer.status === 405) answer.headers.allow = "GET, HEAD, OPTIONS";
  } finally {
    release(lease);
  }
  countResponse(route, answer.status);
  if (answer.counted) stats.cache[answer.counted]++;
  const headers = new Headers({ ...answer.headers, ...corsHeaders(request, settings) });
  const body = request.method === "HEAD" || answer.status === 304 ? null : answer.body;
  return new Response(body, { status: answer.status, headers });
}

let traced = 0;

export default {
  /**
   * @param {Request} request
   * @param {Record<string, string>} env
   * @param {{ waitUntil(p: Promise<unknown>): void }} [ctx]
   */
  async fetch(request, env, ctx) {
    setTurns(env?.CORE_TURNS === "on");
    try {
      if (env?.TRACE_CONTEXTS === "on") {
        const u = new URL(request.url);
        const tag = `#${++traced} ${u.pathname} ${u.searchParams.get("select") ?? u.searchParams.get("coords") ?? ""}`;
        return await requestScope.run(tag, () => handle(request, env));
      }
      return await handle(request, env);
    } finally {
      ctx?.waitUntil(quiet(2 * (settingsCache?.timeoutMs ?? 15000)));
    }
  },
};
