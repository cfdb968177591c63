// A stand-in for the cache behind workerd's Cache API: a Node HTTP service that workerd's
// `cacheApiOutbound` points at (an `external` service of the config). workerd sends every
// `caches.open(name)` / `caches.default` operation of a worker to it as HTTP (observed with
// workerd 1.20261117.1, and as Miniflare's cache service answers them):
//
//   match:  GET <key URL path>, Host <key host>, Cache-Control: only-if-cached,
//           CF-Cache-Namespace: <name> (absent for caches.default)
//           -> the stored response with Cf-Cache-Status: HIT, or any status with
//              Cf-Cache-Status: MISS (workerd ignores the rest)
//   put:    PUT <key>, same headers, the body being the response serialised as HTTP/1.1
//           (status line, headers, blank line, body; the body chunked when its length was
//           unknown) -> 204 stored, 413 refused
//   delete: PURGE <key>, same headers, X-Real-IP: 127.0.0.1 -> 200 deleted, 404 absent
//
// Entries live in this process's memory, so they outlast the workerd processes a test starts
// and stops: a second workerd process (a new isolate) finds what the first stored. This is not
// Cloudflare's cache (no tiers, no eviction, no purge by tag); it honours `max-age` only.

import http from "node:http";

/** Parses a response serialised as HTTP/1.1 (as workerd sends it in a PUT). */
function parseResponse(buf) {
  const end = buf.indexOf("\r\n\r\n");
  if (end < 0) throw new Error("no end of headers");
  const [statusLine, ...lines] = buf.subarray(0, end).toString("latin1").split("\r\n");
  const m = /^HTTP\/1\.1 (\d{3})/.exec(statusLine);
  if (!m) throw new Error(`bad status line ${JSON.stringify(statusLine)}`);
  const headers = lines.map((l) => {
    const i = l.indexOf(":");
    return [l.slice(0, i).trim().toLowerCase(), l.slice(i + 1).trim()];
  });
  let body = buf.subarray(end + 4);
  const te = headers.find(([k]) => k === "transfer-encoding");
  if (te && /chunked/i.test(te[1])) {
    const parts = [];
    let at = 0;
    for (;;) {
      const eol = body.indexOf("\r\n", at);
      const size = parseInt(body.subarray(at, eol).toString("latin1"), 16);
      if (!Number.isFinite(size) || eol < 0) throw new Error("bad chunked body");
      if (size === 0) break;
      parts.push(body.subarray(eol + 2, eol + 2 + size));
      at = eol + 2 + size + 2;
    }
    body = Buffer.concat(parts);
  }
  return {
    status: Number(m[1]),
    headers: headers.filter(([k]) => k !== "transfer-encoding" && k !== "content-length"),
    body,
  };
}

/** Seconds of `max-age` in a Cache-Control value, or null. */
const maxAge = (cc) => {
  const m = /(?:^|,)\s*(?:s-maxage|max-age)=(\d+)/i.exec(cc ?? "");
  return m ? Number(m[1]) : null;
};

/**
 * Starts the service on 127.0.0.1 (a free port). Resolves to { address ("127.0.0.1:PORT"),
 * log (every operation: { op: "match"|"put"|"delete", namespace, key, result }), entries
 * (Map of "namespace host/path" -> { status, headers, body, expires }), stop() }.
 */
export function startCacheService() {
  const entries = new Map();
  const log = [];
  const server = http.createServer(async (req, res) => {
    const parts = [];
    for await (const c of req) parts.push(c);
    const namespace = req.headers["cf-cache-namespace"] ?? "";
    const key = `${namespace} ${req.headers.host}${req.url}`;
    const note = (op, result) => log.push({ op, namespace, key: `${req.headers.host}${req.url}`, result });
    try {
      if (req.method === "GET") {
        const e = entries.get(key);
        if (e && e.expires !== null && Date.now() > e.expires) entries.delete(key);
        const hit = entries.get(key);
        note("match", hit ? "HIT" : "MISS");
        if (!hit) {
          res.writeHead(504, { "Cf-Cache-Status": "MISS" }).end();
          return;
        }
        res.writeHead(hit.status, [...hit.headers.flat(), "Cf-Cache-Status", "HIT",
          "Content-Length", String(hit.body.length)]);
        res.end(hit.body);
      } else if (req.method === "PUT") {
        const r = parseResponse(Buffer.concat(parts));
        const cc = r.headers.find(([k]) => k === "cache-control")?.[1];
        if (r.status === 206 || /no-store|private/i.test(cc ?? "")) {
          note("put", 413);
          res.writeHead(413).end();
          return;
        }
        const age = maxAge(cc);
        entries.set(key, { ...r, expires: age === null ? null : Date.now() + age * 1000 });
        note("put", 204);
        res.writeHead(204).end();
      } else if (req.method === "PURGE") {
        const had = entries.delete(key);
        note("delete", had ? 200 : 404);
        res.writeHead(had ? 200 : 404).end();
      } else {
        res.writeHead(405).end();
      }
    } catch (e) {
      note(req.method.toLowerCase(), `error: ${e.message}`);
      res.writeHead(400).end();
    }
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      resolve({
        address: `127.0.0.1:${port}`,
        log,
        entries,
        stop: () => new Promise((r) => { server.closeAllConnections(); server.close(() => r()); }),
      });
    });
  });
}
