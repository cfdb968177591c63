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
/// `url` for messages: user info replaced by `***@`, the query by `?***` (a query is shown
/// as present, never its values). Scheme, host and path are kept so the message still says
/// which object failed.
pub fn redact_url(url: &str) -> String {
    let Some(i) = url.find("://") else {
        return url.to_string();
    };
    let (scheme, rest) = (&url[..i], &url[i + 3..]);
    let end = rest.find(['?', '#']).unwrap_or(rest.len());
    let (before_query, after) = rest.split_at(end);
    let (authority, path) = match before_query.find('/') {
        Some(j) => before_query.split_at(j),
        None => (before_query, ""),
    };
    let authority = match authority.rsplit_once('@') {
        Some((_, host)) => format!("***@{host}"),
        None => authority.to_string(),
    };
    let query = if after.starts_with('?') { "?***" } else { "" };
    format!("{scheme}://{authority}{path}{query}")
}

/// `text` with every URL in it passed through [`redact_url`]. A URL is any `scheme://`
/// (RFC 3986 section 3.1: a letter, then letters, digits, `+`, `-` or `.`; any case) and
/// what follows up to white space, a quote, `<`, `>`, `}`, `` ` ``, or a `)` or `]` that
/// closes nothing opened inside the URL (so `(http://h/x)` and `http://[::1]:80/x` both
/// end where they should). `:`, `,` and `.` at its end, before what ends it, are the
/// sentence's and are kept. Every message chunkwise prints or hands to JS goes through
/// this ([`crate::Error::message`]).
pub fn redact_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    loop {
        let Some(start) = next_url(rest) else {
            out.push_str(rest);
            return out;
        };
        out.push_str(&rest[..start]);
        let tail = &rest[start..];
        let end = url_end(tail);
        let url = tail[..end].trim_end_matches([':', ',', '.']);
        out.push_str(&redact_url(url));
        rest = &tail[url.len()..];
    }
}

/// Where the first URL (`scheme://`, [`redact_text`]) in `text` starts.
fn next_url(text: &str) -> Option<usize> {
    let is_scheme = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.');
    let bytes = text.as_bytes();
    let mut from = 0;
    while let Some(i) = text[from..].find("://").map(|i| i + from) {
        // The longest run of scheme characters before `://`, from its first letter.
        let mut s = i;
        while s > 0 && is_scheme(bytes[s - 1]) {
            s -= 1;
        }
        if let Some(k) = (s..i).find(|&k| bytes[k].is_ascii_alphabetic()) {
            return Some(k);
        }
        from = i + 3;
    }
    None
}

/// The length of the URL at the start of `tail` ([`redact_text`]'s rule for its end,
/// before trailing punctuation is given back).
fn url_end(tail: &str) -> usize {
    let (mut round, mut square) = (0usize, 0usize);
    for (i, c) in tail.char_indices() {
        match c {
            c if c.is_whitespace() => return i,
            '"' | '\'' | '<' | '>' | '}' | '`' => return i,
            '(' => round += 1,
            '[' => square += 1,
            ')' if round == 0 => return i,
            ']' if square == 0 => return i,
            ')' => round -= 1,
            ']' => square -= 1,
            _ => {}
        }
    }
    tail.len()
}
