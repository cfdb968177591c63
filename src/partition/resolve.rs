//! Object key to blob instance, by arithmetic (blobmap's `resolve` module; facts.md, "blobmap
//! partition": deepest matching prefix wins, pins win regardless of depth, metadata objects are
//! always hot).

use std::collections::{HashMap, HashSet};

use super::model::{Blob, Bucket, KeyEncoding, Manifest, METADATA_BASENAMES};

/// What a key resolves to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResolutionKind {
    /// Claimed by a blob: archivable.
    Blob,
    /// A metadata object or under a `hot_always` pattern (coordinate, small array).
    Hot,
    /// Under a deliberate pin.
    Pinned,
    /// Nothing claims it (foreign data, a new upload, not a chunk key): stays hot. Not an error.
    Unmanaged,
}

impl ResolutionKind {
    /// `blob`, `hot`, `pinned` or `unmanaged`.
    pub fn as_str(self) -> &'static str {
        match self {
            ResolutionKind::Blob => "blob",
            ResolutionKind::Hot => "hot",
            ResolutionKind::Pinned => "pinned",
            ResolutionKind::Unmanaged => "unmanaged",
        }
    }
}

/// The answer for one key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolution {
    /// Which kind of answer.
    pub kind: ResolutionKind,
    /// The instance name `<id>_<n>` (e.g. `b_tas_2`) when `kind` is `Blob`.
    pub blob_id: Option<String>,
    /// The blob definition's id (e.g. `b_tas`) when `kind` is `Blob`.
    pub definition_id: Option<String>,
    /// The bucket number `n` (0 for an unbucketed blob) when `kind` is `Blob`.
    pub bucket_index: Option<u64>,
}

impl Resolution {
    fn plain(kind: ResolutionKind) -> Resolution {
        Resolution {
            kind,
            blob_id: None,
            definition_id: None,
            bucket_index: None,
        }
    }

    /// Whether the key may move to tape: only when it resolved to a blob.
    pub fn archivable(&self) -> bool {
        self.kind == ResolutionKind::Blob
    }
}

#[derive(Debug, Clone, Copy)]
enum Target {
    Hot,
    Blob(usize),
}

/// Longest-prefix matching over one or more manifests, keyed by absolute prefixes
/// (`<scope>/<prefix>`). Holds one entry per cut, never per object: a bucketed array is one
/// entry however many instances it spans.
#[derive(Debug, Clone, Default)]
pub struct Resolver {
    prefixes: HashMap<String, Target>,
    pins: HashSet<String>,
    hot_basenames: HashSet<String>,
    blobs: Vec<Blob>,
}

impl Resolver {
    /// An empty resolver that knows only the metadata basenames.
    pub fn new() -> Resolver {
        Resolver {
            hot_basenames: METADATA_BASENAMES.iter().map(|s| (*s).to_owned()).collect(),
            ..Resolver::default()
        }
    }

    /// Add one manifest. Its scope is prepended to every prefix; a later declaration of the same
    /// absolute prefix replaces an earlier one, and a deeper scope overrides a parent's subtree.
    pub fn add(&mut self, manifest: &Manifest) {
        let scope = manifest.scope.as_str();
        for pattern in &manifest.hot_always {
            if let Some(base) = pattern.strip_prefix("**/") {
                self.hot_basenames.insert(base.to_owned());
            } else {
                let stem = pattern.trim_end_matches(['*', '/']);
                self.prefixes.insert(join(scope, stem), Target::Hot);
            }
        }
        for blob in &manifest.blobs {
            let i = self.blobs.len();
            self.blobs.push(blob.clone());
            for prefix in &blob.prefixes {
                self.prefixes.insert(join(scope, prefix), Target::Blob(i));
            }
        }
        for pin in &manifest.pinned {
            self.pins.insert(join(scope, &pin.prefix));
        }
    }

    /// Number of prefix entries (hot patterns and blob prefixes): one per cut.
    pub fn len(&self) -> usize {
        self.prefixes.len()
    }

    /// Whether no prefix is known.
    pub fn is_empty(&self) -> bool {
        self.prefixes.is_empty()
    }

    /// Resolve an absolute key (scope included). Empty segments are ignored, so leading,
    /// trailing and doubled slashes do not matter.
    ///
    /// Order: a metadata basename is hot; then any pin covering the key wins; then the deepest
    /// declared prefix. A bucketed blob parses the chunk index from the key (`tas/c/137/0/0`,
    /// `tas/137/0/0`, `tas/137.0.0` for index 0) and divides by the width; a key that does not
    /// parse as a chunk key, or a negative index, is unmanaged.
    ///
    /// Unlike blobmap, a prefix that is the empty path (a scope-root blob of a manifest whose
    /// scope is empty) matches every key, rather than none.
    pub fn lookup(&self, key: &str) -> Resolution {
        let parts: Vec<&str> = key.split('/').filter(|p| !p.is_empty()).collect();
        let Some(last) = parts.last() else {
            return Resolution::plain(ResolutionKind::Unmanaged);
        };
        if self.hot_basenames.contains(*last) {
            return Resolution::plain(ResolutionKind::Hot);
        }
        // The key without empty segments; borrowed as is in the common case of a clean key.
        let trimmed = key.trim_matches('/');
        let norm: std::borrow::Cow<str> = if trimmed.contains("//") {
            parts.join("/").into()
        } else {
            trimmed.into()
        };
        // ends[d]: byte length of the prefix made of the first d segments.
        let mut ends = Vec::with_capacity(parts.len() + 1);
        ends.push(0usize);
        ends.extend(norm.match_indices('/').map(|(i, _)| i));
        ends.push(norm.len());
        if !self.pins.is_empty() && ends.iter().any(|&e| self.pins.contains(&norm[..e])) {
            return Resolution::plain(ResolutionKind::Pinned);
        }
        let found = (0..ends.len())
            .rev()
            .find_map(|d| self.prefixes.get(&norm[..ends[d]]).map(|t| (d, *t)));
        match found {
            None => Resolution::plain(ResolutionKind::Unmanaged),
            Some((_, Target::Hot)) => Resolution::plain(ResolutionKind::Hot),
            Some((depth, Target::Blob(i))) => {
                let blob = &self.blobs[i];
                match bucket_index(blob.bucket.as_ref(), &parts, depth) {
                    None => Resolution::plain(ResolutionKind::Unmanaged),
                    Some(n) => Resolution {
                        kind: ResolutionKind::Blob,
                        blob_id: Some(blob.instance(n)),
                        definition_id: Some(blob.id.clone()),
                        bucket_index: Some(n),
                    },
                }
            }
        }
    }
}

/// Resolve one key, relative to the manifest's scope, against one manifest. Builds a throwaway
/// [`Resolver`]; build one once for many keys.
pub fn resolve(manifest: &Manifest, key: &str) -> Resolution {
    let mut r = Resolver::new();
    r.add(manifest);
    r.lookup(&join(&manifest.scope, key))
}

fn bucket_index(bucket: Option<&Bucket>, parts: &[&str], depth: usize) -> Option<u64> {
    let Some(b) = bucket else { return Some(0) };
    let index = usize::try_from(b.index).ok()?;
    let raw = match b.key_encoding {
        KeyEncoding::V2Flat => parts.get(depth)?.split('.').nth(index)?,
        KeyEncoding::V3Slash | KeyEncoding::V2Slash => parts.get(depth.checked_add(index)?)?,
    };
    Some(parse_index(raw)? / b.width.max(1))
}

/// A chunk index as Python's `int()` reads it (optional sign, digits with single `_`
/// separators); `None` for anything else, for a negative value, or beyond `u64`.
fn parse_index(raw: &str) -> Option<u64> {
    let (negative, digits) = match raw.as_bytes().first()? {
        b'+' => (false, &raw[1..]),
        b'-' => (true, &raw[1..]),
        _ => (false, raw),
    };
    if digits.is_empty()
        || digits.starts_with('_')
        || digits.ends_with('_')
        || digits.contains("__")
    {
        return None;
    }
    let mut value: u64 = 0;
    for c in digits.bytes() {
        match c {
            b'0'..=b'9' => {
                value = value.checked_mul(10)?.checked_add(u64::from(c - b'0'))?;
            }
            b'_' => {}
            _ => return None,
        }
    }
    if negative && value != 0 {
        return None;
    }
    Some(value)
}

/// Join path fragments, ignoring empty ones and stray slashes, into non-empty segments.
fn join(scope: &str, path: &str) -> String {
    scope
        .split('/')
        .chain(path.split('/'))
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_indices_like_python_int() {
        assert_eq!(parse_index("137"), Some(137));
        assert_eq!(parse_index("+5"), Some(5));
        assert_eq!(parse_index("1_000"), Some(1000));
        assert_eq!(parse_index("-0"), Some(0));
        assert_eq!(parse_index("-3"), None);
        assert_eq!(parse_index("notanumber"), None);
        assert_eq!(parse_index("1__0"), None);
        assert_eq!(parse_index("99999999999999999999999"), None);
        assert_eq!(parse_index(""), None);
    }

    #[test]
    fn join_normalises_slashes() {
        assert_eq!(join("/a//b/", "c/"), "a/b/c");
        assert_eq!(join("", ""), "");
    }
}
