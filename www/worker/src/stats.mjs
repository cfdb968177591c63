// The isolate's counters (`GET /v1/stats`) and each response's Server-Timing header.
// Counters live as long as the isolate: a new isolate (another instance, a restart) starts at
// zero. Nothing secret is counted: no URL query, no header value.

export const stats = {
  /** Set by the first request: workerd's clock reads 1970 while a module loads. */
  startedAt: null,
  requests: {},
  statuses: {},
  upstream: { requests: 0, bytes: 0, refused: 0, redirects: 0 },
  cache: { response: 0, payload: 0, miss: 0, notModified: 0 },
  singleFlight: { leaders: 0, joins: 0 },
  /** `open`: arrays and stores held open now (at most MAX_OPEN_SOURCES, more only while
   *  requests use them); `closed`: closed since the start (evicted, or a mutable origin's). */
  opens: { started: 0, shared: 0, failed: 0, open: 0, closed: 0 },
};

const bump = (o, k) => { o[k] = (o[k] ?? 0) + 1; };

/** Counts one answered request of `route` with `status`. */
export function countResponse(route, status) {
  started();
  bump(stats.requests, route);
  bump(stats.statuses, String(status));
}

let startedMs = null;
/** Marks the isolate's start at its first request (once). */
export function started() {
  if (startedMs === null) {
    startedMs = Date.now();
    stats.startedAt = new Date(startedMs).toISOString();
  }
}

/** The counters as `/v1/stats` answers them; `uptimeMs` since the first request. */
export function snapshot() {
  started();
  return { ...structuredClone(stats), uptimeMs: Date.now() - startedMs };
}

/**
 * A Server-Timing value (W3C Server Timing; `desc` carries the counts, `dur` milliseconds):
 * `cache;desc=hit-response|hit-payload|miss|joined`, `upstream;desc="requests=N bytes=M"`,
 * `read;dur=` (the core's open and read: fetch and decode), `decode;dur=` (the read when it
 * made no upstream request: decoding alone), `encode;dur=` (the worker's serialisation),
 * `total;dur=`.
 */
export function serverTiming(t) {
  const parts = [`cache;desc=${t.cache}`, `upstream;desc="requests=${t.requests} bytes=${t.bytes}"`];
  if (t.readMs !== undefined) parts.push(`read;dur=${t.readMs.toFixed(1)}`);
  if (t.readMs !== undefined && t.requests === 0 && t.cache !== "hit-response") parts.push(`decode;dur=${t.readMs.toFixed(1)}`);
  if (t.encodeMs !== undefined) parts.push(`encode;dur=${t.encodeMs.toFixed(1)}`);
  parts.push(`total;dur=${t.totalMs.toFixed(1)}`);
  return parts.join(", ");
}
