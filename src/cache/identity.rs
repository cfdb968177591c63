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

pub use crate::io::url::{normalise_url, public_url, split_url, UrlParts};

pub use crate::io::url::{redact_text, redact_url};

/// Whether the query of `url` carries a signature or an expiry (a signed URL: `sig`,
/// `signature`, `signed`, `expires`, `X-Amz-*`, `X-Goog-*`, SAS `se`/`sv`/`sig`). Such a URL
/// changes with each signing, so it names no stable source: the DISK cache keeps it in memory
/// only unless a cache key names it ([`SourceKey::named`]). The parameter names follow
/// python-blosc2's `validate_persistable_url` list, narrowed to the rotating parts (a plain
/// `token` or user info is stable and is kept under the salted fingerprint).
pub fn is_signed_url(url: &str) -> bool {
    let Some(query) = split_url(url).query else {
        return false;
    };
    query.split('&').any(|pair| {
        let name = pair.split('=').next().unwrap_or("").to_ascii_lowercase();
        name.starts_with("x-amz-")
            || name.starts_with("x-goog-")
            || [
                "sig",
                "se",
                "sv",
                "signature",
                "signed",
                "expires",
                "expiry",
                "policy",
            ]
            .contains(&name.as_str())
    })
}

/// A per-cache random salt for [`SourceKey`] fingerprints, so that a weak token cannot be
/// recovered from a cache directory by guessing and hashing offline. DISK keeps it in the
/// cache directory (`salt`, mode 0600); MEMORY and NONE draw a fresh one per coordinator.
#[derive(Clone, PartialEq, Eq)]
pub struct Salt([u8; 32]);

impl std::fmt::Debug for Salt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Salt(..)")
    }
}

impl Salt {
    /// 32 random bytes from the operating system natively. In wasm, where nothing is
    /// persisted yet, `Math.random` fills it: the salt then only keeps fingerprints apart
    /// between coordinators.
    pub fn random() -> Salt {
        let mut b = [0u8; 32];
        #[cfg(not(target_arch = "wasm32"))]
        {
            // A failing entropy source leaves a fixed salt; fingerprints stay keyed by
            // everything else and the cache keeps working.
            let _ = getrandom::fill(&mut b);
        }
        #[cfg(target_arch = "wasm32")]
        for x in b.iter_mut() {
            *x = (js_sys::Math::random() * 256.0) as u8;
        }
        Salt(b)
    }

    /// The salt as 64 hexadecimal characters.
    pub fn to_hex(&self) -> String {
        hex(&self.0)
    }

    /// A salt from [`Salt::to_hex`]'s form; `None` if `s` is not 64 hexadecimal characters.
    pub fn from_hex(s: &str) -> Option<Salt> {
        let b = unhex(s.trim())?;
        Some(Salt(b.try_into().ok()?))
    }
}

/// Salted, non-reversible fingerprint of the credential-bearing parts of a request: the
/// headers (sorted by lower-cased name, one `name:value` line each, so their order does not
/// matter), the URL's user info and its query. SHA-256 over the salt and those lines; equal
/// inputs under one salt give equal fingerprints, and nothing of the values can be read
/// back from it.
pub fn credential_fingerprint(
    salt: &Salt,
    headers: &[(String, String)],
    userinfo: Option<&str>,
    query: Option<&str>,
) -> String {
    let mut lines: Vec<String> = headers
        .iter()
        .map(|(k, v)| format!("header {}:{}\n", k.trim().to_ascii_lowercase(), v.trim()))
        .collect();
    lines.sort();
    if let Some(u) = userinfo {
        lines.push(format!("userinfo {u}\n"));
    }
    if let Some(q) = query {
        lines.push(format!("query {q}\n"));
    }
    let mut h = Sha256::new();
    h.update(salt.0);
    h.update(lines.concat().as_bytes());
    hex(&h.finalize())
}

/// Identity of one source for the caches: the public URL and a salted fingerprint of
/// everything that may carry a credential. Made by the cache coordinator that owns the salt
/// ([`crate::cache::CacheCoordinator::source_key`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SourceKey {
    /// [`public_url`] of the location (a local path as given; `cache-key:NAME` for a
    /// [`SourceKey::named`] key).
    pub url: String,
    /// [`credential_fingerprint`] of the request headers, user info and query.
    pub fingerprint: String,
    /// Whether entries under this key may be written to disk: false for a signed URL
    /// ([`is_signed_url`]) that no cache key names.
    pub persist: bool,
}

impl SourceKey {
    /// The key of `location` requested with `headers`, under `salt`.
    pub fn new(location: &str, headers: &[(String, String)], salt: &Salt) -> SourceKey {
        let parts = split_url(location);
        SourceKey {
            url: parts.public,
            fingerprint: credential_fingerprint(
                salt,
                headers,
                parts.userinfo.as_deref(),
                parts.query.as_deref(),
            ),
            persist: !is_signed_url(location),
        }
    }

    /// A key named by the caller (CLI `--cache-key`, JS `cacheKey`) for a source whose URL
    /// rotates (signed URLs): the name alone identifies it, whatever URL, query or headers
    /// the source is read with. Naming two different sources alike mixes their entries.
    pub fn named(name: &str, salt: &Salt) -> SourceKey {
        SourceKey {
            url: format!("cache-key:{name}"),
            fingerprint: credential_fingerprint(salt, &[], None, None),
            persist: true,
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
    fn fingerprints_ignore_order_hide_values_and_depend_on_the_salt() {
        let salt = Salt::random();
        let a = vec![
            ("Authorization".to_string(), "Bearer secret".to_string()),
            ("X-A".to_string(), "1".to_string()),
        ];
        let b = vec![
            ("x-a".to_string(), "1".to_string()),
            ("authorization".to_string(), "Bearer secret".to_string()),
        ];
        let fp = |h: &[(String, String)]| credential_fingerprint(&salt, h, None, None);
        assert_eq!(fp(&a), fp(&b));
        assert!(!fp(&a).contains("secret"));
        assert_eq!(fp(&a).len(), 64);
        let c = vec![("Authorization".to_string(), "Bearer other".to_string())];
        assert_ne!(fp(&a), fp(&c));
        assert_ne!(fp(&[]), fp(&c));
        // Another salt, another fingerprint: a cache directory's keys cannot be matched
        // against a guessed token's unsalted hash.
        assert_ne!(
            fp(&a),
            credential_fingerprint(&Salt::random(), &a, None, None)
        );
        let s2 = Salt::from_hex(&salt.to_hex()).unwrap();
        assert_eq!(fp(&a), credential_fingerprint(&s2, &a, None, None));
        assert!(Salt::from_hex("abc").is_none());
    }

    #[test]
    fn keys_keep_credentials_out_of_the_url_and_in_the_fingerprint() {
        let salt = Salt::random();
        let k1 = SourceKey::new(
            "https://user:pw@H.org:443/a/b.b2nd?token=sekrit&x=1",
            &[],
            &salt,
        );
        assert_eq!(k1.url, "https://h.org/a/b.b2nd");
        // Neither secret can appear by chance in the fingerprint's hex digits.
        assert!(!k1.source_id().contains("pw") && !k1.source_id().contains("sekrit"));
        assert!(k1.persist);
        let k2 = SourceKey::new("https://h.org/a/b.b2nd?token=other&x=1", &[], &salt);
        assert_eq!(k1.url, k2.url);
        assert_ne!(
            k1.fingerprint, k2.fingerprint,
            "another token, another entry"
        );
        let k3 = SourceKey::new("https://h.org/a/b.b2nd", &[], &salt);
        assert_ne!(k2.fingerprint, k3.fingerprint);
        let signed = "https://b.s3.amazonaws.com/x.h5?X-Amz-Signature=ff&X-Amz-Expires=60";
        assert!(!SourceKey::new(signed, &[], &salt).persist);
        assert!(
            !SourceKey::new(
                "https://a.blob.core.windows.net/c/x.h5?sv=1&se=2&sig=3",
                &[],
                &salt
            )
            .persist
        );
        let named = SourceKey::named("era5-t2m", &salt);
        assert!(named.persist && named.url == "cache-key:era5-t2m");
        assert_eq!(SourceKey::new("/tmp/x.b2nd", &[], &salt).url, "/tmp/x.b2nd");
    }

    #[test]
    fn messages_show_no_user_info_and_no_query() {
        assert_eq!(
            redact_url("https://user:pw@h.org/a.h5?sig=s3cr3t&se=1"),
            "https://***@h.org/a.h5?***"
        );
        assert_eq!(redact_url("http://h/a.b2nd"), "http://h/a.b2nd");
        let text = "not found: http://u:secret@127.0.0.1:9/x.zarr/zarr.json?token=tok (HTTP 404), then HTTPS://h/y?k=v.";
        let r = redact_text(text);
        assert!(
            !r.contains("secret") && !r.contains("tok") && !r.contains("k=v"),
            "{r}"
        );
        assert!(
            r.contains("http://***@127.0.0.1:9/x.zarr/zarr.json?*** (HTTP 404)"),
            "{r}"
        );
        assert_eq!(redact_text("no url here"), "no url here");
    }

    #[test]
    fn an_ipv6_host_keeps_its_url_whole() {
        let r = redact_text(
            "cannot read http://alice:PW6@[::1]:44807/nope.b2nd?token=SECRETTOK (HTTP 404)",
        );
        assert_eq!(
            r,
            "cannot read http://***@[::1]:44807/nope.b2nd?*** (HTTP 404)"
        );
        assert_eq!(
            redact_text("[http://[::1]:9/a?t=SECRET]"),
            "[http://[::1]:9/a?***]"
        );
        // A bracket the URL did not open still ends it.
        assert_eq!(redact_text("(http://h/x?t=SECRET)"), "(http://h/x?***)");
        assert_eq!(
            redact_text("(see http://h/x(1)?t=SECRET) more"),
            "(see http://h/x(1)?***) more"
        );
    }

    #[test]
    fn every_scheme_is_a_url() {
        assert_eq!(
            redact_text("get ftp://u:PW@h/x?token=T failed"),
            "get ftp://***@h/x?*** failed"
        );
        assert_eq!(
            redact_text("s3://bucket/key.zarr?X-Amz-Security-Token=T: denied"),
            "s3://bucket/key.zarr?***: denied"
        );
        assert_eq!(
            redact_text("via git+ssh://me:PW@h/r.git"),
            "via git+ssh://***@h/r.git"
        );
        // `://` after no scheme (a scheme starts with a letter) is left alone.
        assert_eq!(redact_text("odd ://u:p@h?q"), "odd ://u:p@h?q");
        assert_eq!(redact_text("9://u:p@h?q"), "9://u:p@h?q");
    }

    #[test]
    fn punctuation_after_a_url_stays_in_the_sentence() {
        assert_eq!(
            redact_text("reading http://h/h1.h5?x=1: the deadline passed"),
            "reading http://h/h1.h5?***: the deadline passed"
        );
        assert_eq!(
            redact_text("tried http://h/a?k=v, http://h/b?k=v."),
            "tried http://h/a?***, http://h/b?***."
        );
        assert_eq!(redact_text("at http://h/a.b2nd."), "at http://h/a.b2nd.");
        // Inside a URL they are the URL's.
        assert_eq!(
            redact_text("http://h/a.b2nd?x=1:2,3.4 end"),
            "http://h/a.b2nd?*** end"
        );
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
