//! HTTP range reads natively, on `reqwest` (rustls).
//!
//! Every read is one `GET` with `Range` and `Accept-Encoding: identity` (a compressed body
//! would make byte positions meaningless). This transport only moves bytes: the answer is
//! judged by the state machine shared with the wasm transport (`answer`): a `206` must carry
//! the `Content-Range` asked for and a body of exactly that length; a `200` means the server
//! ignored `Range`, and its body is read only when it is at most
//! [`HttpOptions::whole_read_limit`] bytes (else [`IoError::RangeIgnored`] before any body
//! byte is read), unless the range asked covers the whole object anyway (`bytes=0-`), which a
//! `200` answers fairly; `416`, `404`/`410` and other statuses map onto [`IoError`] variants.
//! The object's length, `ETag` and `Last-Modified` are learned from the first answer; a later
//! answer that disagrees is [`IoError::SourceChanged`].
//!
//! Time limits: connecting ([`HttpOptions::connect_timeout`], 10 s), waiting for the next byte
//! ([`HttpOptions::read_timeout`], 30 s) and the whole answer, headers and body
//! ([`HttpOptions::request_timeout`], 60 s): a server that never answers or trickles is an
//! [`IoError::Timeout`], retried at most once by [`super::Retrying`]. Redirects are followed
//! at most 10 times per request; a redirect back to a URL already visited or an 11th one is
//! [`IoError::Redirect`], which is final.

use super::answer::{AnswerMachine, Head, Next};
use super::content_range::{Validators, DEFAULT_WHOLE_READ_LIMIT};
use super::{ByteRange, Fetched, IoError, RangeSource, SourceInfo, TimeoutScope};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use std::time::Duration;

/// Options of an [`HttpSource`].
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// Extra request headers sent with every read (for example `Authorization`).
    pub headers: Vec<(String, String)>,
    /// Largest whole body (bytes) read when a server ignores `Range` and answers `200`;
    /// default [`DEFAULT_WHOLE_READ_LIMIT`] (8 MiB).
    pub whole_read_limit: u64,
    /// Time allowed to connect; default 10 s.
    pub connect_timeout: Duration,
    /// Longest wait for the next body or header bytes; default 30 s.
    pub read_timeout: Duration,
    /// Longest time for one request's whole answer (connecting, headers and body); default
    /// 60 s. Applies with a shared client too ([`HttpSource::with_client`]).
    pub request_timeout: Duration,
}

/// Most redirects followed by one request (as browsers' `fetch` bounds them, and reqwest's
/// default).
pub const MAX_REDIRECTS: usize = 10;

impl Default for HttpOptions {
    fn default() -> Self {
        Self {
            headers: Vec::new(),
            whole_read_limit: DEFAULT_WHOLE_READ_LIMIT,
            connect_timeout: Duration::from_secs(10),
            read_timeout: Duration::from_secs(30),
            request_timeout: Duration::from_secs(60),
        }
    }
}

/// An object behind an HTTP(S) URL, read by range requests.
#[derive(Debug)]
pub struct HttpSource {
    url: String,
    client: reqwest::Client,
    headers: HeaderMap,
    limit: u64,
    validators: Validators,
    // Set once the server answered a range request with 200 (see `range_ignored`).
    range_ignored: std::sync::atomic::AtomicBool,
    request_timeout: Duration,
    read_timeout: Duration,
}

impl HttpSource {
    /// A source for `url` with default options.
    ///
    /// # Errors
    /// [`IoError::Network`] if the HTTP client cannot be built (TLS setup).
    pub fn new(url: impl Into<String>) -> Result<Self, IoError> {
        Self::with_options(url, HttpOptions::default())
    }

    /// A source for `url` with `options`.
    ///
    /// # Errors
    /// [`IoError::Network`] if a header name or value is invalid or the client cannot be
    /// built.
    pub fn with_options(url: impl Into<String>, options: HttpOptions) -> Result<Self, IoError> {
        let url = url.into();
        let client = Self::client_for(&options).map_err(|message| IoError::Network {
            location: url.clone(),
            message,
        })?;
        Self::with_client(url, client, options)
    }

    /// A source for `url` sharing `client` (its connection pool and TLS setup) with other
    /// sources, as a store of many objects on one host should. The client's own connect and
    /// read timeouts apply (those of `options` are not used); the request deadline of
    /// `options` does.
    ///
    /// # Errors
    /// [`IoError::Network`] if a header name or value of `options` is invalid.
    pub fn with_client(
        url: impl Into<String>,
        client: reqwest::Client,
        options: HttpOptions,
    ) -> Result<Self, IoError> {
        let url = url.into();
        let net = |message: String| IoError::Network {
            location: url.clone(),
            message,
        };
        let mut headers = HeaderMap::new();
        for (i, (k, v)) in options.headers.iter().enumerate() {
            // Not the name itself: a malformed one may hold a credential.
            let name = HeaderName::from_bytes(k.as_bytes())
                .map_err(|e| net(format!("invalid name of header {}: {e}", i + 1)))?;
            let value = HeaderValue::from_str(v)
                .map_err(|e| net(format!("invalid value for header {k:?}: {e}")))?;
            headers.append(name, value);
        }
        Ok(Self {
            url,
            client,
            headers,
            limit: options.whole_read_limit,
            validators: Validators::default(),
            range_ignored: Default::default(),
            request_timeout: options.request_timeout,
            read_timeout: options.read_timeout,
        })
    }

    /// A client with the timeouts of `options` and the redirect rule of the module
    /// documentation, to share between sources with [`HttpSource::with_client`].
    ///
    /// # Errors
    /// The TLS backend cannot be set up (message of the underlying error).
    pub fn client_for(options: &HttpOptions) -> Result<reqwest::Client, String> {
        reqwest::Client::builder()
            .connect_timeout(options.connect_timeout)
            .read_timeout(options.read_timeout)
            .redirect(redirect_policy())
            .build()
            .map_err(|e| error_chain(&e))
    }

    /// The HTTP client this source uses (cheap to clone; clones share connections).
    pub fn client(&self) -> &reqwest::Client {
        &self.client
    }

    /// Whether the server answered a range request with `200` and the whole body (RFC 9110
    /// §14.2 allows it). Each such read downloads the whole object (at most the whole-read
    /// limit), so a caller with many reads to do should then read the object once
    /// (`ByteRange::Offset(0)`) and serve itself from a `MemorySource`.
    pub fn range_ignored(&self) -> bool {
        self.range_ignored
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Size and validators learned from the first successful read, if any.
    pub fn info(&self) -> Option<SourceInfo> {
        self.validators.get()
    }

    fn network(&self, e: &reqwest::Error) -> IoError {
        if e.is_redirect() {
            return IoError::Redirect {
                location: self.url.clone(),
                message: error_chain(e),
            };
        }
        // A connect timeout stays a network error (nothing was sent yet).
        if e.is_timeout() && !e.is_connect() {
            return IoError::Timeout {
                location: self.url.clone(),
                millis: self.read_timeout.as_millis().min(u64::MAX as u128) as u64,
                scope: TimeoutScope::Idle,
            };
        }
        IoError::Network {
            location: self.url.clone(),
            message: error_chain(e),
        }
    }
}

/// Follows at most [`MAX_REDIRECTS`] redirects, and none back to a URL this request already
/// visited (a loop).
fn redirect_policy() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        if attempt.previous().contains(attempt.url()) {
            let msg = format!("redirect loop back to {}", attempt.url().path());
            attempt.error(msg)
        } else if attempt.previous().len() > MAX_REDIRECTS {
            attempt.error(format!("more than {MAX_REDIRECTS} redirects"))
        } else {
            attempt.follow()
        }
    })
}

/// A reqwest error with its sources (the top level alone often just says "error sending
/// request").
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(inner) = cur {
        s.push_str(": ");
        s.push_str(&inner.to_string());
        cur = inner.source();
    }
    s
}

fn header_str(h: &HeaderMap, name: reqwest::header::HeaderName) -> Option<&str> {
    h.get(name).and_then(|v| v.to_str().ok())
}

#[async_trait::async_trait]
impl RangeSource for HttpSource {
    fn location(&self) -> &str {
        &self.url
    }

    async fn read(&self, range: ByteRange) -> Result<Fetched, IoError> {
        range.validate()?;
        // Dropping the unfinished request on timeout closes its connection.
        super::deadline::within(
            self.request_timeout,
            TimeoutScope::Request,
            &self.url,
            self.read_once(range),
        )
        .await?
    }
}

impl HttpSource {
    /// One request for `range`, without the request deadline.
    async fn read_once(&self, range: ByteRange) -> Result<Fetched, IoError> {
        use reqwest::header::{
            ACCEPT_ENCODING, CONTENT_ENCODING, CONTENT_LENGTH, CONTENT_RANGE, ETAG, LAST_MODIFIED,
            RANGE,
        };
        let mut resp = self
            .client
            .get(&self.url)
            .headers(self.headers.clone())
            .header(RANGE, range.to_header())
            .header(ACCEPT_ENCODING, "identity")
            .send()
            .await
            .map_err(|e| self.network(&e))?;
        let h = resp.headers();
        let mut answer = AnswerMachine::new(&self.url, range, self.limit, &self.validators);
        let next = answer.head(&Head {
            status: resp.status().as_u16(),
            content_range: header_str(h, CONTENT_RANGE),
            content_length: header_str(h, CONTENT_LENGTH),
            content_encoding: header_str(h, CONTENT_ENCODING),
            etag: header_str(h, ETAG),
            last_modified: header_str(h, LAST_MODIFIED),
        });
        if answer.range_ignored() {
            self.range_ignored
                .store(true, std::sync::atomic::Ordering::Relaxed);
        }
        // On an error the response is dropped unread, which closes its connection.
        if let Next::Done(fetched) = next? {
            return Ok(fetched);
        }
        loop {
            match resp.chunk().await {
                Ok(Some(chunk)) => answer.chunk(&chunk)?,
                Ok(None) => return answer.end(),
                Err(e) => return Err(answer.fail(self.network(&e))),
            }
        }
    }
}
