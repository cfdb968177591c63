//! Errors of the I/O layer. Each carries the location (URL or path) it concerns.

/// An error while reading bytes from a source.
#[derive(Debug, Clone, thiserror::Error, PartialEq)]
#[non_exhaustive]
pub enum IoError {
    /// The range itself is malformed (empty).
    #[error("invalid byte range {range}")]
    InvalidRange { range: String },
    /// The range starts beyond the object (HTTP 416, or a local read past the end).
    #[error("{location}: range {range} not satisfiable: object has {len} bytes")]
    RangeNotSatisfiable {
        location: String,
        range: String,
        len: u64,
    },
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
    /// No complete answer in time: see [`TimeoutScope`] for which deadline ran out.
    #[error("{location}: {scope} of {millis} ms ran out")]
    Timeout {
        location: String,
        /// The deadline that ran out, in milliseconds.
        millis: u64,
        scope: TimeoutScope,
    },
    /// A redirect loop, or more redirects than allowed (10 per request) before an answer.
    #[error("redirects reading {location}: {message}")]
    Redirect { location: String, message: String },
}

/// Which deadline a [`IoError::Timeout`] is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeoutScope {
    /// No byte (header or body) arrived for this long on one request (native only).
    Idle,
    /// One request's whole answer (headers and body) did not complete in time.
    Request,
    /// The whole operation (an open or a read, with its retries) did not complete in time;
    /// never retried.
    Operation,
}

impl std::fmt::Display for TimeoutScope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            TimeoutScope::Idle => "the idle timeout between bytes",
            TimeoutScope::Request => "the deadline of one request",
            TimeoutScope::Operation => "the deadline of the operation",
        })
    }
}

impl IoError {
    /// Whether a retry may succeed: network errors, 5xx and 429 (idempotent GETs only), and
    /// a request that timed out ([`TimeoutScope::Idle`], [`TimeoutScope::Request`]; the
    /// retry wrapper bounds those separately, see [`super::RetryConfig::max_timeout_retries`]).
    /// A redirect loop and the deadline of an operation are final.
    pub fn is_transient(&self) -> bool {
        match self {
            IoError::Network { .. } => true,
            IoError::Timeout { scope, .. } => *scope != TimeoutScope::Operation,
            IoError::HttpStatus { status, .. } => *status >= 500 || *status == 429,
            _ => false,
        }
    }

    /// Whether this is a timeout of one request (idle or whole-answer deadline).
    pub fn is_request_timeout(&self) -> bool {
        matches!(
            self,
            IoError::Timeout {
                scope: TimeoutScope::Idle | TimeoutScope::Request,
                ..
            }
        )
    }
}
