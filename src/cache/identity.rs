//! Cache identity of a source: normalised URL plus a non-reversible fingerprint of the request
//! headers (spec: remote cache design, "Identity and ownership"), and keys derived from it.
//!
//! Sources are assumed immutable: an entry found under a source's identity is trusted without
//! a freshness check. Publish changed data at a new URL, or use a new cache.

use sha2::{Digest, Sha256};

/// Lower-case hexadecimal SHA-256 of `bytes` (64 characters).
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// Lower-case hexadecimal of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

/// Bytes of a hexadecimal string, `None` if it is not one.
pub fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

/// The URL as a cache key: scheme and host lower-cased, a default port (`:80` for http,
/// `:443` for https) and any `#fragment` removed; path and query kept as they are (they are
/// case-sensitive). A local path is kept as given.
pub fn normalise_url(url: &str) -> String {
    let url = url.split('#').next().unwrap_or(url);
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let scheme = scheme.to_ascii_lowercase();
    let (authority, tail) = match rest.find(['/', '?']) {
        Some(i) => rest.split_at(i),
        None => (rest, "/"),
    };
    let mut authority = authority.to_ascii_lowercase();
    let default = match scheme.as_str() {
        "http" => Some(":80"),
        "https" => Some(":443"),
        _ => None,
    };
    if let Some(d) = default {
        if let Some(stripped) = authority.strip_suffix(d) {
            authority = stripped.to_string();
        }
    }
    let tail = if tail.is_empty() { "/" } else { tail };
    format!("{scheme}://{authority}{tail}")
}

/// Non-reversible fingerprint of request headers (credentials, tokens): SHA-256 over the
/// headers sorted by lower-cased name, one `name:value\n` line each. Equal header sets give
/// equal fingerprints whatever their order; the values cannot be recovered from it.
pub fn credential_fingerprint(headers: &[(String, String)]) -> String {
    let mut lines: Vec<String> = headers
        .iter()
        .map(|(k, v)| format!("{}:{}\n", k.trim().to_ascii_lowercase(), v.trim()))
        .collect();
    lines.sort();
    sha256_hex(lines.concat().as_bytes())
}

/// Identity of one source for the caches: normalised URL and credential fingerprint.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SourceKey {
    /// [`normalise_url`] of the location.
    pub url: String,
    /// [`credential_fingerprint`] of the request headers.
    pub fingerprint: String,
}

impl SourceKey {
    /// The key of `location` requested with `headers`.
    pub fn new(location: &str, headers: &[(String, String)]) -> SourceKey {
        SourceKey {
            url: normalise_url(location),
            fingerprint: credential_fingerprint(headers),
        }
    }

    /// Key of what belongs to the whole source (a complete copy, its size and validators).
    pub fn source_id(&self) -> String {
        format!("{}\n{}", self.url, self.fingerprint)
    }

    /// Key of what belongs to one scope of the source: a dataset path (`""` for a
    /// single-array source or the default dataset), or a listing.
    pub fn scoped(&self, scope: &str) -> String {
        format!("{}\n{}\n{}", self.url, self.fingerprint, scope)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_normalise() {
        assert_eq!(
            normalise_url("HTTP://Example.ORG:80/A/b.h5?x=1#frag"),
            "http://example.org/A/b.h5?x=1"
        );
        assert_eq!(normalise_url("https://h:443"), normalise_url("https://H/"));
        assert_ne!(
            normalise_url("http://h:8080/a"),
            normalise_url("http://h/a")
        );
        assert_eq!(normalise_url("/tmp/x.b2nd"), "/tmp/x.b2nd");
    }

    #[test]
    fn fingerprints_ignore_order_and_hide_values() {
        let a = vec![
            ("Authorization".to_string(), "Bearer secret".to_string()),
            ("X-A".to_string(), "1".to_string()),
        ];
        let b = vec![
            ("x-a".to_string(), "1".to_string()),
            ("authorization".to_string(), "Bearer secret".to_string()),
        ];
        assert_eq!(credential_fingerprint(&a), credential_fingerprint(&b));
        assert!(!credential_fingerprint(&a).contains("secret"));
        assert_eq!(credential_fingerprint(&a).len(), 64);
        let c = vec![("Authorization".to_string(), "Bearer other".to_string())];
        assert_ne!(credential_fingerprint(&a), credential_fingerprint(&c));
        assert_ne!(credential_fingerprint(&[]), credential_fingerprint(&c));
    }

    #[test]
    fn hex_round_trips() {
        assert_eq!(
            unhex(&hex(&[0, 1, 0xab, 0xff])).unwrap(),
            vec![0, 1, 0xab, 0xff]
        );
        assert!(unhex("abc").is_none());
        assert!(unhex("zz").is_none());
    }
}
