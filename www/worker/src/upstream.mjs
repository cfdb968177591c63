// The only way the wasm core reaches the network: a `fetch` installed on `globalThis` (the
// core looks `fetch` up there for every request, src/io/fetch.rs) that
// - refuses any URL whose origin is not in ALLOWED_ORIGINS, and any URL with user info;
// - follows redirects itself (`redirect: "manual"`), each hop checked against the allow-list
//   (at most MAX_REDIRECTS), so a source cannot redirect the worker to another origin;
// - sends the request headers UPSTREAM_HEADERS configures for the origin of each hop, and only
//   those (a hop to another allowed origin gets that origin's headers, never the first one's);
// - counts upstream requests and bytes (Content-Length of the answers) for /v1/stats.
// A refused URL rejects with an Error whose message starts with REFUSED_MARK; the core reports
// it as a NETWORK error carrying that text, which the worker answers with 403.

import { requestScope } from "./contexts.mjs";
import { stats } from "./stats.mjs";

export const REFUSED_MARK = "upstream origin refused:";

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** Settings the installed fetch applies (set by the first request of the isolate). */
let current = null;
const hostFetch = globalThis.fetch.bind(globalThis);

/** Whether `url` (a URL) may be fetched under `settings`; else the reason. */
export function refusal(url, settings) {
  if (url.username || url.password) return "a URL with user info";
  if (url.protocol !== "http:" && url.protocol !== "https:") return `the scheme ${url.protocol}`;
  if (!settings.allowed.has(url.origin)) return `${url.origin} is not in ALLOWED_ORIGINS`;
  return null;
}

async function guardedFetch(input, init = {}) {
  const settings = current;
  let url = new URL(typeof input === "string" ? input : input.url);
  let method = init.method ?? "GET";
  for (let hop = 0; ; hop++) {
    const why = settings ? refusal(url, settings) : "no settings yet";
    if (why) {
      stats.upstream.refused++;
      throw new Error(`${REFUSED_MARK} ${why}${hop ? ` (after ${hop} redirect${hop > 1 ? "s" : ""})` : ""}`);
    }
    const headers = new Headers(init.headers ?? {});
    for (const [k, v] of settings.credentials.get(url.origin) ?? []) headers.set(k, v);
    const tag = requestScope.getStore();
    if (tag !== undefined) console.log(`trace fetch under [${tag}] ${url.pathname} ${headers.get("range") ?? ""}`);
    const res = await hostFetch(url.href, { ...init, method, headers, redirect: "manual" });
    if (tag !== undefined) console.log(`trace answer under [${requestScope.getStore()}] for [${tag}] ${url.pathname} ${res.status}`);
    stats.upstream.requests++;
    const location = res.headers.get("location");
    if (REDIRECTS.has(res.status) && location) {
      await res.body?.cancel().catch(() => {});
      if (hop >= settings.maxRedirects) {
        throw new Error(`more than ${settings.maxRedirects} redirects (MAX_REDIRECTS)`);
      }
      stats.upstream.redirects++;
      url = new URL(location, url);
      if (res.status === 303) method = "GET";
      continue;
    }
    stats.upstream.bytes += Number(res.headers.get("content-length") ?? 0) || 0;
    return res;
  }
}

/** Installs the guarded fetch (once per isolate) with `settings`. */
export function installUpstream(settings) {
  current = settings;
  if (globalThis.fetch !== guardedFetch) globalThis.fetch = guardedFetch;
}

/** The host's own fetch, for the worker's non-upstream needs (none today). */
export { hostFetch };
