//! The parts of a URL that may carry credentials (user info, query), split from the public
//! rest that records, markers and messages may hold. Used by the caches' identity
//! ([`crate::cache::identity`]) and by formats whose records name a URL (a Zarr store's base).

/// The URL as a cache key: scheme and host lower-cased, a default port (`:80` for http,
/// `:443` for https) and any `#fragment` removed; path and query kept as they are (they are
/// case-sensitive). A local path is kept as given. User info is kept: use [`public_url`]
/// for anything persisted or shown.
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

/// The parts of a URL that may carry credentials, split from the rest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UrlParts {
    /// [`normalise_url`] without user info and without the query: safe to persist and print.
    pub public: String,
    /// `user:password` before the host, if any (as written, percent-encoding kept).
    pub userinfo: Option<String>,
    /// The query after `?`, if any (as written).
    pub query: Option<String>,
}

/// Splits `url` into its public part and the parts that may carry credentials (user info,
/// query): signed URLs put tokens and signatures in the query (`token`, `sig`, `X-Amz-*`,
/// SAS `sv`/`sig`/`se`), and `user:password@host` puts a password in the authority. A local
/// path has neither.
pub fn split_url(url: &str) -> UrlParts {
    let normalised = normalise_url(url);
    let Some((scheme, rest)) = normalised.split_once("://") else {
        return UrlParts {
            public: normalised,
            userinfo: None,
            query: None,
        };
    };
    let (rest, query) = match rest.split_once('?') {
        Some((r, q)) => (r, Some(q.to_string())),
        None => (rest, None),
    };
    let (authority, path) = match rest.find('/') {
        Some(i) => rest.split_at(i),
        None => (rest, "/"),
    };
    let (userinfo, host) = match authority.rsplit_once('@') {
        Some((u, h)) => (Some(u.to_string()), h),
        None => (None, authority),
    };
    UrlParts {
        public: format!("{scheme}://{host}{path}"),
        userinfo,
        query,
    }
}

/// The public part of `url` ([`split_url`]): what persisted records and markers hold.
pub fn public_url(url: &str) -> String {
    split_url(url).public
}
