// Strong entity tags and conditional requests (RFC 9110 §8.8.3, §13.1.2).
//
// An ETag is the SHA-256 (first 128 bits, base64url) of what determines the body: the
// source's identity (its URL without user info, the query hashed with the rest, size, ETag
// and Last-Modified as the core learned them at open), the dataset path, the route, the selection or chunk
// coordinates, the format and the rendering parameters. The same source state and request
// give the same tag in every isolate; a rewritten source (new size or validators) a new one.

/** The tag (quoted) of `parts`, a JSON-serialisable array. */
export async function strongEtag(parts) {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(JSON.stringify(parts)));
  let s = "";
  for (const b of new Uint8Array(digest).subarray(0, 16)) s += String.fromCharCode(b);
  return `"${btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "")}"`;
}

/** Whether If-None-Match `header` matches `etag` (weak comparison, as §13.1.2 asks). */
export function notModified(header, etag) {
  if (!header) return false;
  if (header.trim() === "*") return true;
  return header.split(",").some((t) => t.trim().replace(/^W\//, "") === etag);
}

/** The source's URL as it enters a tag: no query, no fragment, no user info. */
export function publicUrl(src) {
  const u = new URL(src);
  return `${u.origin}${u.pathname}`;
}
