// The worker's settings, read from its environment bindings (wrangler `[vars]` and secrets,
// workerd `bindings` of the worker). Every binding is optional but ALLOWED_ORIGINS, without
// which every source is refused (no open proxy).
//
// | binding | kind | meaning (default) |
// | --- | --- | --- |
// | ALLOWED_ORIGINS | text | comma-separated origins sources may be fetched from (`http://127.0.0.1:8000`); empty refuses all |
// | UPSTREAM_HEADERS | secret (JSON) | `{ "<origin>": { "<header>": "<value>" } }`: request headers sent to that origin only |
// | MUTABLE_ORIGINS | text | origins whose objects may change at their URL: `Cache-Control: no-cache` (others are immutable) |
// | CORS_ORIGINS | text | `*` or comma-separated origins answered with Access-Control-Allow-Origin (none) |
// | MAX_SELECTION_BYTES | text | largest decoded selection or chunk, bytes (67108864) |
// | MAX_JSON_BYTES | text | largest `format=json` answer, bytes of its text, bounded from the dtype's widest element before the read (16777216); a JSON answer is also bounded by MAX_SELECTION_BYTES |
// | MAX_OPEN_SOURCES | text | most arrays and stores the isolate keeps open; the least recently used one is closed once no request uses it (64) |
// | MAX_CACHE_BYTES | text | the isolate's MEMORY payload caches together, bytes: each open array or store not on the DISK cache gets MAX_CACHE_BYTES / MAX_OPEN_SOURCES (67108864) |
// | MAX_CHUNKS | text | most chunks one request may touch (1024) |
// | MAX_PNG_PIXELS | text | largest preview, pixels (4194304) |
// | UPSTREAM_TIMEOUT_MS | text | deadline of each open and read from upstream, ms (15000) |
// | MAX_REDIRECTS | text | redirects followed per upstream fetch, each to an allowed origin (5) |
// | CACHE | text | `disk`: chunkwise's persistent cache over the Cache API (default); `memory`: the isolate only |
// | CACHE_NAME | text | name of the Cache API cache (`chunkwise`) |
// | RESPONSE_CACHE_BYTES | text | bound of the isolate's cache of encoded responses, bytes (33554432) |
// | IMMUTABLE_MAX_AGE | text | `max-age` of responses from immutable sources, s (31536000) |

export const DEFAULTS = {
  MAX_SELECTION_BYTES: 64 << 20,
  MAX_JSON_BYTES: 16 << 20,
  MAX_OPEN_SOURCES: 64,
  MAX_CACHE_BYTES: 64 << 20,
  MAX_CHUNKS: 1024,
  MAX_PNG_PIXELS: 2048 * 2048,
  UPSTREAM_TIMEOUT_MS: 15000,
  MAX_REDIRECTS: 5,
  RESPONSE_CACHE_BYTES: 32 << 20,
  IMMUTABLE_MAX_AGE: 365 * 24 * 3600,
};

/** A binding that cannot be used: the worker answers 500 naming it (never its value). */
export class SettingsError extends Error {
  constructor(message) {
    super(message);
    this.code = "MISCONFIGURED";
  }
}

/** The origin (`scheme://host[:port]`) of `text`, or throws naming the binding. */
function origin(text, binding) {
  try {
    const u = new URL(text);
    if (u.protocol !== "http:" && u.protocol !== "https:") throw new Error("not http(s)");
    return u.origin;
  } catch {
    throw new SettingsError(`${binding}: ${JSON.stringify(text)} is not an http(s) origin`);
  }
}

const list = (v) => String(v ?? "").split(",").map((s) => s.trim()).filter(Boolean);

function positive(env, name) {
  const raw = env[name];
  if (raw === undefined || raw === null || String(raw).trim() === "") return DEFAULTS[name];
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < 0) throw new SettingsError(`${name} must be a non-negative integer`);
  return n;
}

/**
 * Settings from `env`. Throws SettingsError for a malformed binding; the message names the
 * binding and never repeats a secret's value.
 */
export function readSettings(env = {}) {
  const allowed = new Set(list(env.ALLOWED_ORIGINS).map((o) => origin(o, "ALLOWED_ORIGINS")));
  const mutable = new Set(list(env.MUTABLE_ORIGINS).map((o) => origin(o, "MUTABLE_ORIGINS")));
  const corsList = list(env.CORS_ORIGINS);
  const cors = corsList.includes("*") ? "*" : new Set(corsList.map((o) => origin(o, "CORS_ORIGINS")));
  /** @type {Map<string, [string, string][]>} */
  const credentials = new Map();
  if (env.UPSTREAM_HEADERS) {
    let parsed;
    try {
      parsed = typeof env.UPSTREAM_HEADERS === "string" ? JSON.parse(env.UPSTREAM_HEADERS) : env.UPSTREAM_HEADERS;
    } catch {
      throw new SettingsError("UPSTREAM_HEADERS is not JSON");
    }
    if (!parsed || typeof parsed !== "object") throw new SettingsError("UPSTREAM_HEADERS must be an object of origins");
    for (const [o, headers] of Object.entries(parsed)) {
      if (!headers || typeof headers !== "object") throw new SettingsError("UPSTREAM_HEADERS: each origin maps to an object of headers");
      credentials.set(origin(o, "UPSTREAM_HEADERS"), Object.entries(headers).map(([k, v]) => [k, String(v)]));
    }
  }
  const cache = String(env.CACHE ?? "disk");
  if (cache !== "disk" && cache !== "memory") throw new SettingsError('CACHE must be "disk" or "memory"');
  return {
    allowed, mutable, cors, credentials, cache,
    cacheName: String(env.CACHE_NAME ?? "chunkwise"),
    maxSelectionBytes: positive(env, "MAX_SELECTION_BYTES"),
    maxJsonBytes: positive(env, "MAX_JSON_BYTES"),
    maxOpenSources: Math.max(1, positive(env, "MAX_OPEN_SOURCES")),
    maxCacheBytes: positive(env, "MAX_CACHE_BYTES"),
    maxChunks: positive(env, "MAX_CHUNKS"),
    maxPngPixels: positive(env, "MAX_PNG_PIXELS"),
    timeoutMs: positive(env, "UPSTREAM_TIMEOUT_MS"),
    maxRedirects: positive(env, "MAX_REDIRECTS"),
    responseCacheBytes: positive(env, "RESPONSE_CACHE_BYTES"),
    immutableMaxAge: positive(env, "IMMUTABLE_MAX_AGE"),
    /** Every secret value, so that error texts can be scrubbed of them. */
    secrets: [...credentials.values()].flat().map(([, v]) => v).filter((v) => v.length >= 4),
  };
}
