//! Listing a Zarr store that has no consolidated metadata, by walking its directories.
//!
//! Zarr keeps no list of a group's children in the group's own metadata (v3 core
//! specification, "Storage": a store lists its keys; v2 likewise), and plain HTTP has no
//! listing operation. Many servers answer a directory URL (`<group>/`) with an index page,
//! though: Python's `http.server` and `chunkwise serve` (both checked), nginx `autoindex`
//! (HTML links like theirs, or `autoindex_format json`), Apache `mod_autoindex` (HTML links,
//! relative or absolute). When the store's root answers with one, the
//! walk reads each group's listing for its child directories and each child's metadata
//! (v3 `zarr.json`; v2 `.zarray`, `.zgroup` and `.zattrs` together) to learn what it is;
//! a child directory without metadata (a v2 array's chunk directory, any other directory)
//! is no node.
//!
//! Bounded: at most [`MAX_WALK_REQUESTS`] listings and metadata reads in all (remembered
//! ones count too, so a warm walk lists what the cold one did), [`WALK_CONCURRENCY`] at a
//! time, groups to [`MAX_WALK_DEPTH`] below the root, [`MAX_WALK_NODES`] nodes, listings of
//! at most [`MAX_LISTING_BYTES`] and [`MAX_LISTED_CHILDREN`] names. A group whose children
//! were not all listed says why in its `error`, as does the root when the server offers no
//! listing at all. Requests: one round trip per level of the hierarchy for the listings,
//! one for the children's metadata (more when a level has more than
//! [`WALK_CONCURRENCY`] of either).

use super::store::ZarrStore;
use super::{array_listed, group_listed, join, ZarrError};
use crate::formats::Node;
use futures::stream::{self, StreamExt};

/// Largest listing page read, in bytes (1 MiB, some 10,000 entries of an HTML index); a
/// larger one counts as no listing.
pub const MAX_LISTING_BYTES: u64 = 1 << 20;

/// Most listings and metadata reads of one walk (so at most this many listing pages, each
/// at most [`MAX_LISTING_BYTES`], are read).
pub const MAX_WALK_REQUESTS: usize = 1_000;

/// Most child names taken from one listing: one more than a walk can read the metadata of,
/// so a longer listing is always cut by the request budget, and said so.
pub const MAX_LISTED_CHILDREN: usize = MAX_WALK_REQUESTS + 1;

/// Deepest group level listed below the root.
pub const MAX_WALK_DEPTH: usize = 32;

/// Most nodes a walk lists.
pub const MAX_WALK_NODES: usize = 10_000;

/// Listings or metadata reads of a walk in flight at a time (a v2 child's three metadata
/// reads count as one).
pub const WALK_CONCURRENCY: usize = 6;

/// The root's `error` when the store has no consolidated metadata and the server offers no
/// listing of its root.
pub const NO_LISTING: &str = "no consolidated metadata and the server offers no listing: \
                              children not listed (open an array by its path)";

/// The child directory names a listing page names: an HTML index (the `href` of each link
/// to a child directory of the page: relative `name/`, or absolute `<dir_path>name/`), or
/// nginx's JSON index (`[{"name": ..., "type": "directory"}, ...]`). Links with a query or
/// fragment (sort links), to the parent, to other hosts or to files are skipped; names are
/// percent-decoded; `.`-names skipped. `None` when `body` is neither.
pub fn parse_listing(body: &[u8], dir_path: &str) -> Option<Vec<String>> {
    let text = String::from_utf8_lossy(body);
    let t = text.trim_start();
    let mut names: Vec<String> = Vec::new();
    let mut add = |name: String| {
        let ok = !name.is_empty()
            && !name.starts_with('.')
            && !name.contains(['/', '\\', '\0'])
            && names.len() < MAX_LISTED_CHILDREN
            && !names.contains(&name);
        if ok {
            names.push(name);
        }
    };
    if t.starts_with('[') {
        let v: serde_json::Value = serde_json::from_slice(t.as_bytes()).ok()?;
        for e in v.as_array()? {
            if e.get("type").and_then(|t| t.as_str()) == Some("directory") {
                if let Some(n) = e.get("name").and_then(|n| n.as_str()) {
                    add(n.to_string());
                }
            }
        }
        return Some(names);
    }
    let lower = t.to_ascii_lowercase();
    if !(lower.starts_with("<!doctype html") || lower.contains("<html") || lower.contains("<a ")) {
        return None;
    }
    let dir_path = if dir_path.ends_with('/') {
        dir_path.to_string()
    } else {
        format!("{dir_path}/")
    };
    let mut at = 0;
    while let Some(i) = lower[at..].find("href") {
        let start = at + i + 4;
        at = start;
        let rest = text[start..].trim_start();
        let Some(rest) = rest.strip_prefix('=') else {
            continue;
        };
        let rest = rest.trim_start();
        let value = match rest.chars().next() {
            Some(q @ ('"' | '\'')) => rest[1..].split(q).next().unwrap_or_default(),
            _ => rest
                .split(|c: char| c.is_whitespace() || c == '>')
                .next()
                .unwrap_or_default(),
        };
        let href = unescape_html(value);
        if href.contains(['?', '#']) || href.contains("://") {
            continue;
        }
        let relative = if href.starts_with('/') {
            match href.strip_prefix(&dir_path) {
                Some(r) => r.to_string(),
                None => continue,
            }
        } else {
            href.strip_prefix("./").unwrap_or(&href).to_string()
        };
        if let Some(name) = relative.strip_suffix('/') {
            if let Some(name) = percent_decode(name) {
                add(name);
            }
        }
    }
    Some(names)
}

/// `s` with the character references an index page uses for link text decoded.
fn unescape_html(s: &str) -> String {
    s.replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&#x27;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// `s` percent-decoded (RFC 3986 §2.1) as UTF-8; `None` for a malformed escape or bytes
/// that are not UTF-8.
fn percent_decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// The child names of one directory, or the failure reading its listing.
type Listing = Result<Option<Vec<String>>, ZarrError>;

/// What a child directory turned out to be.
enum Probe {
    Array(Node),
    Group(Node),
    Nothing,
}

/// The child at `path` (no leading `/`): its metadata read through the store.
async fn probe(store: &ZarrStore, path: &str, v3: bool) -> Result<Probe, ZarrError> {
    let abs = format!("/{path}");
    if v3 {
        let key = join(path, "zarr.json");
        let Some(raw) = store.metadata(&key).await? else {
            return Ok(Probe::Nothing);
        };
        let url = store.url(&key);
        return Ok(match super::attrs::parse_json(&raw) {
            Err(e) => Probe::Array(super::array_node(
                &abs,
                Err(ZarrError::Invalid {
                    key: url,
                    detail: format!("not JSON: {e}"),
                }),
            )),
            Ok(doc) => match doc.get("node_type").and_then(|t| t.as_str()) {
                Some("array") => {
                    let attrs = Ok(super::attrs::attrs(doc.get("attributes")));
                    Probe::Array(array_listed(&abs, &url, true, &doc, attrs))
                }
                Some("group") => Probe::Group(group_listed(
                    &abs,
                    Ok(super::attrs::attrs(doc.get("attributes"))),
                )),
                _ => Probe::Nothing,
            },
        });
    }
    let (za, zg, zt) = (
        join(path, ".zarray"),
        join(path, ".zgroup"),
        join(path, ".zattrs"),
    );
    let (array, group, attrs) = futures::join!(
        store.metadata(&za),
        store.metadata(&zg),
        store.metadata(&zt)
    );
    let attrs = super::v2_attrs(&store.url(&zt), attrs?.as_deref());
    if let Some(raw) = array? {
        let key = store.url(&za);
        return Ok(Probe::Array(match super::attrs::parse_json(&raw) {
            Ok(doc) => array_listed(&abs, &key, false, &doc, attrs),
            Err(e) => super::array_node(
                &abs,
                Err(ZarrError::Invalid {
                    key,
                    detail: format!("not JSON: {e}"),
                }),
            ),
        }));
    }
    if group?.is_some() {
        return Ok(Probe::Group(group_listed(&abs, attrs)));
    }
    Ok(Probe::Nothing)
}

/// What a failed listing or metadata read of the walk says on its group's node (no URL:
/// a key's request URL may carry a credential in its query); `Err` for the failures that end
/// the walk instead: a cancel, the operation's deadline.
fn failure(e: ZarrError) -> Result<String, ZarrError> {
    use crate::io::{IoError, TimeoutScope};
    Ok(match e {
        ZarrError::Io(IoError::Cancelled)
        | ZarrError::Io(IoError::Timeout {
            scope: TimeoutScope::Operation,
            ..
        }) => return Err(e),
        ZarrError::Io(IoError::HttpStatus { status, .. }) => format!("HTTP {status}"),
        ZarrError::Io(IoError::Network { .. }) => "network error".into(),
        ZarrError::Io(IoError::Timeout { .. }) => "timed out".into(),
        ZarrError::Io(other) => match other {
            IoError::RangeIgnored { .. } => "the server ignored Range",
            IoError::BadContentRange { .. } => "a bad Content-Range",
            IoError::SourceChanged { .. } => "changed while reading",
            IoError::Redirect { .. } => "redirects",
            IoError::File { .. } => "a file error",
            _ => "an I/O error",
        }
        .into(),
        other => other.to_string(),
    })
}

/// Sets `error` on the node at `path` (absolute), unless it already has one.
fn mark(nodes: &mut [Node], path: &str, error: String) {
    if let Some(n) = nodes.iter_mut().find(|n| n.path == path) {
        n.error.get_or_insert(error);
    }
}

/// Lists the children of the root group `nodes[0]` (a v3 store when `v3`, else v2) by
/// walking directory listings (see the module documentation), appending them to `nodes`.
///
/// # Errors
/// A cancel or the operation's deadline ([`crate::io::TimeoutScope::Operation`]). A listing
/// or a child's metadata that fails otherwise (after the transport's retries), or metadata
/// that is not valid, is said in the `error` of its group or node instead.
pub async fn walk(store: &ZarrStore, v3: bool, nodes: &mut Vec<Node>) -> Result<(), ZarrError> {
    let abs = |p: &str| format!("/{p}");
    let mut budget = MAX_WALK_REQUESTS;
    let mut frontier: Vec<String> = vec![String::new()];
    let per_child = if v3 { 1 } else { 3 };
    let cut =
        format!("listing stopped after {MAX_WALK_REQUESTS} requests: children not all listed");
    for depth in 0.. {
        if frontier.is_empty() {
            break;
        }
        if depth > MAX_WALK_DEPTH {
            for g in &frontier {
                mark(
                    nodes,
                    &abs(g),
                    format!("groups nested deeper than {MAX_WALK_DEPTH}: children not listed"),
                );
            }
            break;
        }
        let take = frontier.len().min(budget);
        for g in &frontier[take..] {
            mark(nodes, &abs(g), cut.clone());
        }
        budget -= take;
        let listed: Vec<(String, Listing)> = stream::iter(frontier[..take].iter().cloned())
            .map(|g| async move {
                let names = store.children(&g).await;
                (g, names)
            })
            .buffered(WALK_CONCURRENCY)
            .collect()
            .await;
        // Children whose metadata the budget can read; past that, their groups are cut.
        let room = budget / per_child;
        let mut candidates = Vec::new();
        for (g, names) in listed {
            let names = match names {
                Ok(n) => n,
                Err(e) => {
                    mark(
                        nodes,
                        &abs(&g),
                        format!("its listing failed ({}): children not listed", failure(e)?),
                    );
                    continue;
                }
            };
            match names {
                None if g.is_empty() => mark(nodes, "/", NO_LISTING.into()),
                None => mark(
                    nodes,
                    &abs(&g),
                    "the server offers no listing of this group: children not listed".into(),
                ),
                Some(names) => {
                    let fit = names.len().min(room - candidates.len().min(room));
                    if fit < names.len() {
                        mark(nodes, &abs(&g), cut.clone());
                    }
                    candidates.extend(names[..fit].iter().map(|n| (g.clone(), join(&g, n))));
                }
            }
        }
        budget -= candidates.len() * per_child;
        let probed: Vec<(String, Result<Probe, ZarrError>)> = stream::iter(candidates)
            .map(|(parent, child)| async move {
                let p = probe(store, &child, v3).await;
                (parent, p)
            })
            .buffered(WALK_CONCURRENCY)
            .collect()
            .await;
        frontier.clear();
        for (parent, p) in probed {
            let node = match p {
                Err(e) => {
                    let why = format!(
                        "a child's metadata failed ({}): children not all listed",
                        failure(e)?
                    );
                    mark(nodes, &abs(&parent), why);
                    continue;
                }
                Ok(Probe::Nothing) => continue,
                Ok(Probe::Array(n)) => n,
                Ok(Probe::Group(n)) => {
                    frontier.push(n.path.trim_start_matches('/').to_string());
                    n
                }
            };
            if nodes.len() >= MAX_WALK_NODES {
                mark(
                    nodes,
                    &abs(&parent),
                    format!("more than {MAX_WALK_NODES} nodes: children not all listed"),
                );
                frontier.retain(|g| abs(g) != node.path);
                continue;
            }
            nodes.push(node);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listings_of_common_servers() {
        // Python's http.server (3.11).
        let py = br#"<!DOCTYPE HTML>
<html lang="en"><head><title>Directory listing for /s.zarr/</title></head>
<body><h1>Directory listing for /s.zarr/</h1><hr><ul>
<li><a href="group/">group/</a></li>
<li><a href="s%20p/">s p/</a></li>
<li><a href="zarr.json">zarr.json</a></li>
<li><a href="a%26b/">a&amp;b/</a></li>
</ul><hr></body></html>"#;
        assert_eq!(
            parse_listing(py, "/s.zarr/"),
            Some(vec!["group".into(), "s p".into(), "a&b".into()])
        );
        // nginx autoindex (HTML): a parent link; Apache: sort links and an absolute parent.
        let nginx = br#"<html><head><title>Index of /s.zarr/</title></head><body>
<a href="../">../</a>
<a href="t/">t/</a>   01-Jan-2026 00:00   -
<a href="/s.zarr/abs/">abs/</a>
<a href="/other/x/">x/</a>
<a href="?C=N;O=D">Name</a> <a href='q/'>q/</a> <a href=u/>u/</a>
<a href="http://h/s.zarr/far/">far/</a>
</body></html>"#;
        assert_eq!(
            parse_listing(nginx, "/s.zarr/"),
            Some(vec!["t".into(), "abs".into(), "q".into(), "u".into()])
        );
        // nginx autoindex_format json.
        let json = br#"[{"name":"g","type":"directory","mtime":"x"},
            {"name":"zarr.json","type":"file","size":3}]"#;
        assert_eq!(parse_listing(json, "/s.zarr/"), Some(vec!["g".into()]));
        // Not a listing: a JSON object, plain text, an XML bucket listing.
        assert_eq!(parse_listing(b"{\"a\": 1}", "/"), None);
        assert_eq!(parse_listing(b"not found", "/"), None);
        assert_eq!(
            parse_listing(b"<?xml version=\"1.0\"?><ListBucketResult/>", "/"),
            None
        );
        // An empty directory's page is a listing with no children.
        assert_eq!(
            parse_listing(b"<html><body><ul></ul></body></html>", "/"),
            Some(vec![])
        );
    }
}
