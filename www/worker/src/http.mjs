// Error answers (JSON, typed codes), the mapping of the core's error codes onto statuses, and
// CORS.

import { REFUSED_MARK } from "./upstream.mjs";

/** An answer the worker decides on (a client error, a limit): status, code, message, extra. */
export class HttpError extends Error {
  constructor(status, code, message, extra = {}) {
    super(message);
    this.status = status;
    this.code = code;
    this.extra = extra;
  }
}

/** Statuses of the core's error codes (src/error.rs): what the client asked for is wrong
 *  (4xx), or what upstream did (502; a deadline 504). */
const STATUS = {
  INVALID_ARGUMENT: 400, INVALID_SELECTION: 400, NOT_FOUND: 404, UNRECOGNISED_FORMAT: 422,
  UNSUPPORTED: 422, TIMEOUT: 504, CANCELLED: 504, SOURCE_CHANGED: 502, STALE: 502,
  NETWORK: 502, HTTP_STATUS: 502, RANGE_IGNORED: 502, RANGE_NOT_SATISFIABLE: 502, REDIRECT: 502,
  IO: 502, DECODE: 502, INVALID_DATA: 502, CACHE: 502,
};

/** Removes every secret value (and URL queries and user info) from `text`. */
export function scrub(text, settings) {
  let t = String(text);
  for (const s of settings?.secrets ?? []) t = t.split(s).join("***");
  return t.replace(/(https?:\/\/)[^\s/@]*@/g, "$1***@").replace(/(https?:\/\/[^\s?"']*)\?[^\s"']*/g, "$1?***");
}

/** `{ status, code, message, extra }` of a thrown value. */
export function describe(e, settings) {
  if (e instanceof HttpError) return { status: e.status, code: e.code, message: e.message, extra: e.extra };
  const message = scrub(e?.message ?? e, settings);
  if (message.includes(REFUSED_MARK)) {
    return { status: 403, code: "ORIGIN_NOT_ALLOWED", message, extra: {} };
  }
  if (e?.name === "TimeoutError" && /^waited \d+ ms for the isolate/.test(message)) {
    return { status: 504, code: "TIMEOUT", message, extra: {} };
  }
  if (e?.name === "TimeoutError") {
    return { status: 504, code: "TIMEOUT", message: `upstream did not answer within UPSTREAM_TIMEOUT_MS (${settings?.timeoutMs} ms): ${message}`, extra: {} };
  }
  const code = typeof e?.code === "string" ? e.code : "INTERNAL";
  // No code: an error of the worker itself (a bug), not of upstream: 500.
  return { status: STATUS[code] ?? (code === "INTERNAL" || code === "MISCONFIGURED" ? 500 : 502), code, message, extra: {} };
}

/** Response headers CORS adds for `request`: none when its Origin is not allowed, but
 *  `Vary: Origin` whenever the answer depends on Origin (a list of CORS_ORIGINS), so that an
 *  HTTP cache never hands one origin's answer to another (Fetch standard, "CORS protocol
 *  and HTTP caches"). */
export function corsHeaders(request, settings) {
  const origin = request.headers.get("origin");
  if (!settings) return {};
  const varies = settings.cors !== "*" && settings.cors.size > 0 ? { vary: "Origin" } : {};
  if (!origin) return varies;
  const ok = settings.cors === "*" || settings.cors.has(origin);
  if (!ok) return varies;
  return {
    "access-control-allow-origin": settings.cors === "*" ? "*" : origin,
    "access-control-expose-headers": "ETag, Server-Timing, X-Chunkwise-Shape, X-Chunkwise-Dtype, X-Chunkwise-Missing-Chunks, X-Chunkwise-Blocks",
    ...(settings.cors === "*" ? {} : { vary: "Origin" }),
  };
}

/** The answer to a CORS preflight (OPTIONS). */
export function preflight(request, settings) {
  const origin = request.headers.get("origin");
  const headers = { allow: "GET, HEAD, OPTIONS" };
  if (!origin) return new Response(null, { status: 204, headers });
  const cors = corsHeaders(request, settings);
  if (!cors["access-control-allow-origin"]) {
    return Response.json({ error: { code: "CORS_ORIGIN_NOT_ALLOWED", message: "this origin is not in CORS_ORIGINS" } },
      { status: 403, headers });
  }
  return new Response(null, {
    status: 204,
    headers: {
      ...headers, ...cors,
      "access-control-allow-methods": "GET, HEAD, OPTIONS",
      "access-control-allow-headers": "If-None-Match",
      "access-control-max-age": "86400",
    },
  });
}
