//! Plain HTTP requests for the REST APIs of array servers (Caterva2): a `GET` without
//! `Range` (a server that builds its answer refuses a range with 416, so none is sent) or a
//! `POST` of form fields (a login), with the answer's status, body (bounded) and cookies.
//! Range reads of objects stay [`super::RangeSource`]'s; this is the other kind of request,
//! on the same clients: `reqwest` natively, the host's `fetch` in wasm.
//!
//! [`Requests`] is the stack every caller uses: it counts each attempt into a [`Traffic`]
//! at the transport edge and retries transient failures of `GET`s only (network errors,
//! 5xx, 429, a request timeout), as [`super::Retrying`] does for range reads; a `POST` is
//! never repeated. Every request has the 60 s deadline of a range read.

use super::retry::{Backoff, RetryConfig};
use super::{IoError, MaybeSend, MaybeSync, TimeoutScope, Traffic};
use bytes::Bytes;
use std::sync::Arc;
use std::time::Duration;

/// The method and body of a [`Request`].
#[derive(Clone, PartialEq, Eq)]
pub enum Method {
    /// `GET`, no body.
    Get,
    /// `POST` of `application/x-www-form-urlencoded` fields (names and values as given;
    /// encoded here). The values may be secret (a password): never printed.
    PostForm(Vec<(String, String)>),
}

impl std::fmt::Debug for Method {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Method::Get => f.write_str("GET"),
            Method::PostForm(fields) => {
                let names: Vec<&str> = fields.iter().map(|(k, _)| k.as_str()).collect();
                write!(f, "POST form {names:?} (values redacted)")
            }
        }
    }
}

/// One request: URL, method, extra headers (secret values allowed: never printed).
#[derive(Clone)]
pub struct Request {
    /// The URL asked.
    pub url: String,
    /// Method and body.
    pub method: Method,
    /// Extra headers (`Cookie`, `Authorization`, ...).
    pub headers: Vec<(String, String)>,
    /// Largest body read, bytes: a longer one is refused ([`IoError::RangeIgnored`] names
    /// the limit) before it is held whole.
    pub limit: u64,
}

impl std::fmt::Debug for Request {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Request")
            .field("url", &super::url::redact_url(&self.url))
            .field("method", &self.method)
            .field("headers", &format!("{} (redacted)", self.headers.len()))
            .field("limit", &self.limit)
            .finish()
    }
}

/// What a server answered.
#[derive(Clone, PartialEq, Eq)]
pub struct Answer {
    /// HTTP status.
    pub status: u16,
    /// The body (at most the request's limit).
    pub body: Bytes,
    /// `name=value` of each `Set-Cookie` the answer carried (attributes dropped). Browsers
    /// hide `Set-Cookie` from scripts, so there it is empty and the browser keeps the cookie
    /// itself; Node and workerd show it.
    pub cookies: Vec<(String, String)>,
    /// The `ETag` header, if any.
    pub etag: Option<String>,
}

impl std::fmt::Debug for Answer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.cookies.iter().map(|(k, _)| k.as_str()).collect();
        f.debug_struct("Answer")
            .field("status", &self.status)
            .field("body_len", &self.body.len())
            .field("cookies", &names)
            .field("etag", &self.etag)
            .finish()
    }
}

/// A transport of plain requests (natively [`HttpRequester`], in wasm the host's `fetch`).
#[cfg_attr(target_arch = "wasm32", async_trait::async_trait(?Send))]
#[cfg_attr(not(target_arch = "wasm32"), async_trait::async_trait)]
pub trait Requester: MaybeSend + MaybeSync {
    /// Sends `request` once and reads its answer, whatever the status.
    ///
    /// # Errors
    /// [`IoError::Network`] (connection, TLS, CORS), [`IoError::Timeout`], a body longer
    /// than `request.limit` ([`IoError::RangeIgnored`] with that limit).
    async fn send(&self, request: &Request) -> Result<Answer, IoError>;
}

/// `name=value` of a `Set-Cookie` header value (its attributes dropped).
pub fn cookie_pair(set_cookie: &str) -> Option<(String, String)> {
    let first = set_cookie.split(';').next()?.trim();
    let (name, value) = first.split_once('=')?;
    Some((name.trim().to_string(), value.trim().to_string()))
}

/// `application/x-www-form-urlencoded` of `fields` (WHATWG URL standard: unreserved bytes as
/// they are, space as `+`, the rest percent-encoded).
pub fn form_body(fields: &[(String, String)]) -> String {
    fn enc(s: &str, out: &mut String) {
        for &b in s.as_bytes() {
            match b {
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'*' | b'-' | b'.' | b'_' => {
                    out.push(b as char)
                }
                b' ' => out.push('+'),
                _ => out.push_str(&format!("%{b:02X}")),
            }
        }
    }
    let mut out = String::new();
    for (i, (k, v)) in fields.iter().enumerate() {
        if i > 0 {
            out.push('&');
        }
        enc(k, &mut out);
        out.push('=');
        enc(v, &mut out);
    }
    out
}

/// A body longer than the request's limit.
fn too_long(request: &Request, len: Option<u64>) -> IoError {
    IoError::RangeIgnored {
        location: request.url.clone(),
        len,
        limit: request.limit,
    }
}

/// The deadline of one request (as a range read's: 60 s for the whole answer).
const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

/// Plain requests natively, on a `reqwest` client (redirects and timeouts as
/// [`super::http::HttpSource`]'s).
#[cfg(not(target_arch = "wasm32"))]
#[derive(Debug, Clone)]
pub struct HttpRequester {
    client: reqwest::Client,
}

#[cfg(not(target_arch = "wasm32"))]
impl HttpRequester {
    /// A requester on a client of the default [`super::http::HttpOptions`].
    ///
    /// # Errors
    /// [`IoError::Network`] when the TLS backend cannot be set up.
    pub fn new(location: &str) -> Result<Self, IoError> {
        let client =
            super::http::HttpSource::client_for(&Default::default()).map_err(|message| {
                IoError::Network {
                    location: location.to_string(),
                    message,
                }
            })?;
        Ok(Self { client })
    }

    async fn send_once(&self, request: &Request) -> Result<Answer, IoError> {
        use reqwest::header::{ACCEPT_ENCODING, CONTENT_TYPE, ETAG, SET_COOKIE};
        let net = |e: reqwest::Error| {
            let mut message = e.to_string();
            let mut cur = std::error::Error::source(&e);
            while let Some(inner) = cur {
                message.push_str(": ");
                message.push_str(&inner.to_string());
                cur = inner.source();
            }
            IoError::Network {
                location: request.url.clone(),
                message,
            }
        };
        let mut builder = match &request.method {
            Method::Get => self.client.get(&request.url),
            Method::PostForm(fields) => self
                .client
                .post(&request.url)
                .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
                .body(form_body(fields)),
        };
        builder = builder.header(ACCEPT_ENCODING, "identity");
        for (i, (k, v)) in request.headers.iter().enumerate() {
            let name = reqwest::header::HeaderName::from_bytes(k.as_bytes());
            let value = reqwest::header::HeaderValue::from_str(v);
            match (name, value) {
                (Ok(n), Ok(v)) => builder = builder.header(n, v),
                _ => {
                    return Err(IoError::Network {
                        location: request.url.clone(),
                        message: format!("header {} is invalid (name or value)", i + 1),
                    })
                }
            }
        }
        let mut resp = builder.send().await.map_err(net)?;
        let status = resp.status().as_u16();
        let h = resp.headers();
        let cookies = h
            .get_all(SET_COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok().and_then(cookie_pair))
            .collect();
        let etag = h
            .get(ETAG)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        if let Some(len) = resp.content_length().filter(|&n| n > request.limit) {
            return Err(too_long(request, Some(len)));
        }
        let mut body = Vec::new();
        while let Some(chunk) = resp.chunk().await.map_err(net)? {
            if (body.len() + chunk.len()) as u64 > request.limit {
                return Err(too_long(request, None));
            }
            body.extend_from_slice(&chunk);
        }
        Ok(Answer {
            status,
            body: Bytes::from(body),
            cookies,
            etag,
        })
    }
}

#[cfg(not(target_arch = "wasm32"))]
#[async_trait::async_trait]
impl Requester for HttpRequester {
    async fn send(&self, request: &Request) -> Result<Answer, IoError> {
        super::deadline::within(
            REQUEST_TIMEOUT,
            TimeoutScope::Request,
            &request.url,
            self.send_once(request),
        )
        .await?
    }
}

/// Plain requests in wasm through the host's global `fetch` (page, worker, Node, workerd).
/// A browser sends and keeps cookies itself (`credentials: "include"`), and hides
/// `Set-Cookie` from the answer.
#[cfg(target_arch = "wasm32")]
#[derive(Debug, Clone, Default)]
pub struct FetchRequester;

#[cfg(target_arch = "wasm32")]
impl FetchRequester {
    async fn send_once(&self, request: &Request) -> Result<Answer, IoError> {
        use js_sys::{Function, Promise, Reflect, Uint8Array};
        use wasm_bindgen::{JsCast, JsValue};
        use wasm_bindgen_futures::JsFuture;
        let net = |what: &str, e: JsValue| IoError::Network {
            location: request.url.clone(),
            message: format!(
                "{what}: {}",
                Reflect::get(&e, &"message".into())
                    .ok()
                    .and_then(|m| m.as_string())
                    .unwrap_or_else(|| "fetch failed (network or CORS)".into())
            ),
        };
        let headers = web_sys::Headers::new().map_err(|e| net("Headers", e))?;
        for (i, (k, v)) in request.headers.iter().enumerate() {
            headers.append(k, v).map_err(|_| IoError::Network {
                location: request.url.clone(),
                message: format!("header {} was refused by fetch", i + 1),
            })?;
        }
        let init = web_sys::RequestInit::new();
        match &request.method {
            Method::Get => init.set_method("GET"),
            Method::PostForm(fields) => {
                init.set_method("POST");
                let _ = headers.set("Content-Type", "application/x-www-form-urlencoded");
                init.set_body(&JsValue::from_str(&form_body(fields)));
            }
        }
        init.set_headers_headers(&headers);
        let global = js_sys::global();
        let fetch = Reflect::get(&global, &"fetch".into())
            .ok()
            .and_then(|f| f.dyn_into::<Function>().ok())
            .ok_or_else(|| IoError::Network {
                location: request.url.clone(),
                message: "this host has no global fetch".into(),
            })?;
        let promise = fetch
            .call2(&global, &JsValue::from_str(&request.url), &init)
            .map_err(|e| net("fetch", e))?;
        let resp: web_sys::Response = JsFuture::from(Promise::from(promise))
            .await
            .map_err(|e| net("fetch", e))?
            .dyn_into()
            .map_err(|_| IoError::Network {
                location: request.url.clone(),
                message: "fetch did not resolve to a Response".into(),
            })?;
        let h = resp.headers();
        let len = h
            .get("Content-Length")
            .ok()
            .flatten()
            .and_then(|s| s.parse::<u64>().ok());
        if let Some(len) = len.filter(|&n| n > request.limit) {
            return Err(too_long(request, Some(len)));
        }
        let cookies = h
            .get("Set-Cookie")
            .ok()
            .flatten()
            .and_then(|v| cookie_pair(&v))
            .into_iter()
            .collect();
        let etag = h.get("ETag").ok().flatten();
        let status = resp.status();
        let buf = resp.array_buffer().map_err(|e| net("body", e))?;
        let buf = JsFuture::from(buf).await.map_err(|e| net("body", e))?;
        let bytes = Uint8Array::new(&buf);
        if bytes.length() as u64 > request.limit {
            return Err(too_long(request, None));
        }
        Ok(Answer {
            status,
            body: Bytes::from(bytes.to_vec()),
            cookies,
            etag,
        })
    }
}

#[cfg(target_arch = "wasm32")]
#[async_trait::async_trait(?Send)]
impl Requester for FetchRequester {
    async fn send(&self, request: &Request) -> Result<Answer, IoError> {
        super::deadline::within(
            REQUEST_TIMEOUT,
            TimeoutScope::Request,
            &request.url,
            self.send_once(request),
        )
        .await?
    }
}

/// The requester of this host: [`HttpRequester`] natively, the host's `fetch` in wasm.
///
/// # Errors
/// As [`HttpRequester::new`] natively; none in wasm.
pub fn host_requester(location: &str) -> Result<Arc<dyn Requester>, IoError> {
    #[cfg(not(target_arch = "wasm32"))]
    {
        Ok(Arc::new(HttpRequester::new(location)?))
    }
    #[cfg(target_arch = "wasm32")]
    {
        let _ = location;
        Ok(Arc::new(FetchRequester))
    }
}

/// Plain requests counted and retried: each attempt counts into `traffic` as one request
/// (with the body's bytes), and a transient failure of a `GET` is retried with the backoff
/// of [`RetryConfig::default`] (a `POST` never is).
#[derive(Clone)]
pub struct Requests {
    inner: Arc<dyn Requester>,
    traffic: Traffic,
    config: RetryConfig,
}

impl Requests {
    /// `inner`, counted into `traffic`.
    pub fn new(inner: Arc<dyn Requester>, traffic: Traffic) -> Self {
        Self {
            inner,
            traffic,
            config: RetryConfig::default(),
        }
    }

    /// The counters.
    pub fn traffic(&self) -> &Traffic {
        &self.traffic
    }

    /// Sends `request`; a `5xx` or `429` answer to a `GET` is retried and, if it persists,
    /// returned as it is (the caller maps statuses).
    ///
    /// # Errors
    /// The transport's errors, after the retries.
    pub async fn send(&self, request: &Request) -> Result<Answer, IoError> {
        let mut backoff: Option<Backoff> = None;
        let (mut retries, mut timeouts) = (0u32, 0u32);
        loop {
            self.traffic.start();
            let r = self.inner.send(request).await;
            self.traffic.finish();
            match &r {
                Ok(a) => self.traffic.record(a.body.len() as u64),
                Err(IoError::Cancelled) => {}
                Err(_) => self.traffic.record(0),
            }
            let transient = match &r {
                Ok(a) => a.status >= 500 || a.status == 429,
                Err(e) => e.is_transient(),
            };
            let timeout = matches!(&r, Err(e) if e.is_request_timeout());
            let again = transient
                && request.method == Method::Get
                && retries < self.config.max_retries
                && (!timeout || timeouts < self.config.max_timeout_retries);
            if !again {
                return r;
            }
            retries += 1;
            timeouts += u32::from(timeout);
            let delay = backoff
                .get_or_insert_with(|| Backoff::new(&self.config))
                .next_delay();
            super::sleep::sleep(delay).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn form_bodies_are_urlencoded_and_debug_hides_values() {
        let fields = vec![
            ("username".to_string(), "a b@c.d".to_string()),
            ("password".to_string(), "p&=ss/é".to_string()),
        ];
        assert_eq!(
            form_body(&fields),
            "username=a+b%40c.d&password=p%26%3Dss%2F%C3%A9"
        );
        let shown = format!("{:?}", Method::PostForm(fields));
        assert!(
            !shown.contains("p&=ss") && shown.contains("password"),
            "{shown}"
        );
        assert_eq!(
            cookie_pair("c2subauth=abc.def; HttpOnly; Path=/; SameSite=lax"),
            Some(("c2subauth".into(), "abc.def".into()))
        );
    }
}
