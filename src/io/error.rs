//! Errors of the I/O layer. Each carries the location (URL or path) it concerns.

/// An error while reading bytes from a source.
#[derive(Debug, Clone, thiserror::Error, PartialEq)]
#[non_exhaustive]
pub enum IoError {
    /// The range itself is malformed (empty).
    #[error("invalid byte range {range}")]
    InvalidRange { range: String },
    /// The range starts beyond the object (HTTP 416, or a local read past the end).
    #[error("range {range} not satisfiable: object has {len} bytes")]
    RangeNotSatisfiable { range: String, len: u64 },
    /// The object does not exist (HTTP 404, missing file; 410 is an [`IoError::HttpStatus`]).
    #[error("not found: {location}")]
    NotFound { location: String },
    /// The server answered with a status we do not accept.
    #[error("HTTP {status} from {location}")]
    HttpStatus { location: String, status: u16 },
    /// The server ignored the `Range` header on an object larger than the whole-read bound.
    #[error(
        "{location} ignored the Range header and would send the whole object ({} bytes, \
         limit {limit} bytes); refusing to download it",
        len.map_or_else(|| "unknown".to_string(), |n| n.to_string())
    )]
    RangeIgnored {
        location: String,
        len: Option<u64>,
        limit: u64,
    },
    /// `Content-Range` is missing, malformed, or disagrees with the request or the body.
    #[error("bad Content-Range from {location}: {detail}")]
    BadContentRange { location: String, detail: String },
    /// The object changed between requests (ETag, Last-Modified or size differ).
    #[error("{location} changed while reading: {detail}")]
    SourceChanged { location: String, detail: String },
    /// A network-level failure (connection refused, reset, DNS, TLS, CORS in browsers).
    #[error("network error reading {location}: {message}")]
    Network { location: String, message: String },
    /// A local file error other than not-found.
    #[error("file error on {location}: {message}")]
    File { location: String, message: String },
    /// The operation was cancelled (AbortSignal in JS).
    #[error("cancelled")]
    Cancelled,
}

impl IoError {
    /// Whether a retry may succeed: network errors, 5xx and 429 (idempotent GETs only).
    pub fn is_transient(&self) -> bool {
        match self {
            IoError::Network { .. } => true,
            IoError::HttpStatus { status, .. } => *status >= 500 || *status == 429,
            _ => false,
        }
    }
}
