//! HTTP range reads through `fetch` in wasm (browser main thread, worker, Node, workerd).
//!
//! Same semantics as the native [`super::http`] transport (this transport only moves bytes:
//! the answer is judged by the shared `answer` state machine, tested natively): one `GET` per
//! read with `Range` (and `Accept-Encoding: identity` where the host lets a script set it;
//! browsers add it themselves for range requests), `206` checked against the range asked,
//! `200` meaning the server ignored `Range` (whole body read only up to
//! [`FetchOptions::whole_read_limit`]), `416`, `404`/`410` and other statuses mapped onto
//! [`IoError`], and validators compared between reads.
//!
//! `fetch` is looked up on the global object (`globalThis`), not on `window`, so the same code
//! runs on a page, in a dedicated worker, in Node 20 and in workerd.
//!
//! Cross-origin reads need the server's CORS headers: `Access-Control-Allow-Origin`, and
//! `Access-Control-Expose-Headers: Content-Range` (plus `ETag`, `Last-Modified`), without which
//! a script cannot read `Content-Range` even though the browser received it. Both failures are
//! reported with that hint.
//!
//! Every request has an `AbortController` of its own, aborted when the read is dropped
//! unfinished (an aborted or timed-out operation drops its reads, so the host stops the
//! download rather than finish it unseen), when [`FetchOptions::signal`] aborts, or when
//! [`FetchOptions::request_timeout`] (60 s for the whole answer, headers and body) runs out
//! ([`IoError::Timeout`]). Redirects are the host's business (`fetch` follows at most 20, then
//! rejects with a `TypeError`, reported as a network error).

use super::answer::{AnswerMachine, Head, Next};
use super::content_range::{Validators, DEFAULT_WHOLE_READ_LIMIT};
use super::{ByteRange, Fetched, IoError, RangeSource, SourceInfo, TimeoutScope};
use js_sys::{Function, Promise, Reflect, Uint8Array};
use std::time::Duration;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{AbortController, AbortSignal, Headers, RequestInit, Response};

/// Options of a [`FetchSource`].
#[derive(Debug, Clone)]
pub struct FetchOptions {
    /// Extra request headers sent with every read (for example `Authorization`). Note that a
    /// cross-origin request with such headers needs a CORS preflight the server must allow.
    pub headers: Vec<(String, String)>,
    /// Aborting this signal cancels reads in flight and fails later ones with
    /// [`IoError::Cancelled`].
    pub signal: Option<AbortSignal>,
    /// Largest whole body (bytes) read when a server ignores `Range`; default 8 MiB.
    pub whole_read_limit: u64,
    /// Longest time for one request's whole answer (headers and body); default 60 s.
    pub request_timeout: Duration,
}

impl Default for FetchOptions {
    fn default() -> Self {
        Self {
            headers: Vec::new(),
            signal: None,
            whole_read_limit: DEFAULT_WHOLE_READ_LIMIT,
            request_timeout: Duration::from_secs(60),
        }
    }
}

/// An object behind a URL, read by range requests through the host's `fetch`.
#[derive(Debug)]
pub struct FetchSource {
    url: String,
    options: FetchOptions,
    validators: Validators,
    // Set once the server answered a range request with 200 (see `range_ignored`).
    range_ignored: std::sync::atomic::AtomicBool,
}

impl FetchSource {
    /// A source for `url` with default options.
    pub fn new(url: impl Into<String>) -> Self {
        Self::with_options(url, FetchOptions::default())
    }

    /// A source for `url` with `options`.
    pub fn with_options(url: impl Into<String>, options: FetchOptions) -> Self {
        Self {
            url: url.into(),
            options,
            validators: Validators::default(),
            range_ignored: Default::default(),
        }
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

    fn aborted(&self) -> bool {
        self.options
            .signal
            .as_ref()
            .is_some_and(super::signal::aborted)
    }

    /// Maps a rejection of `fetch` or of a body read onto an [`IoError`].
    fn js_error(&self, e: JsValue) -> IoError {
        let name = Reflect::get(&e, &"name".into())
            .ok()
            .and_then(|n| n.as_string());
        if self.aborted() || name.as_deref() == Some("AbortError") {
            return IoError::Cancelled;
        }
        let message = Reflect::get(&e, &"message".into())
            .ok()
            .and_then(|m| m.as_string())
            .or_else(|| e.as_string())
            .unwrap_or_else(|| format!("{e:?}"));
        let message = if name.as_deref() == Some("TypeError") {
            format!(
                "{message} (fetch rejects with a TypeError when the network fails or when a \
                 cross-origin server does not allow the request: check that it sends \
                 Access-Control-Allow-Origin, answers the preflight for the Range header, and \
                 sends Access-Control-Expose-Headers: Content-Range)"
            )
        } else {
            message
        };
        IoError::Network {
            location: self.url.clone(),
            message,
        }
    }

    fn js(&self, what: &str, e: JsValue) -> IoError {
        match self.js_error(e) {
            IoError::Network { location, message } => IoError::Network {
                location,
                message: format!("{what}: {message}"),
            },
            other => other,
        }
    }

    async fn send(&self, range: &ByteRange, signal: &AbortSignal) -> Result<Response, IoError> {
        // The request sent before the module was ready, by an open called while `init()` was
        // pending (early.js): the same GET of the same URL and range, without headers.
        if self.options.headers.is_empty() {
            let early = take_early(&self.url, &range.to_header(), signal);
            if !early.is_undefined() {
                return self.response(Promise::from(early)).await;
            }
        }
        let headers = Headers::new().map_err(|e| self.js("Headers", e))?;
        headers
            .set("Range", &range.to_header())
            .map_err(|e| self.js("Range header", e))?;
        // Browsers forbid scripts to set Accept-Encoding (and add `identity` to range requests
        // themselves); Node and workerd accept it. Ignore a refusal.
        let _ = headers.set("Accept-Encoding", "identity");
        for (i, (k, v)) in self.options.headers.iter().enumerate() {
            // The host's message repeats the value (a token): name the header's position only.
            headers.append(k, v).map_err(|_| IoError::Network {
                location: self.url.clone(),
                message: format!(
                    "header {} was refused by fetch (invalid name or value)",
                    i + 1
                ),
            })?;
        }
        let init = RequestInit::new();
        init.set_method("GET");
        init.set_headers_headers(&headers);
        init.set_signal(Some(signal));
        let global = js_sys::global();
        if !in_workerd(&global) {
            // Chromium's HTTP cache keeps range answers and has later answered a full GET
            // of the same URL from them: range fetches bypass it (chunkwise caches payload
            // itself). workerd refuses the `cache` field without a compatibility flag.
            let _ = Reflect::set(&init, &"cache".into(), &"no-store".into());
        }
        let fetch = Reflect::get(&global, &"fetch".into())
            .ok()
            .and_then(|f| f.dyn_into::<Function>().ok())
            .ok_or_else(|| IoError::Network {
                location: self.url.clone(),
                message: "this host has no global fetch".into(),
            })?;
        let promise = fetch
            .call2(&global, &JsValue::from_str(&self.url), &init)
            .map_err(|e| self.js_error(e))?;
        self.response(Promise::from(promise)).await
    }

    /// The Response `promise` (of `fetch`, or kept by early.js) resolves to.
    async fn response(&self, promise: Promise) -> Result<Response, IoError> {
        let resp = JsFuture::from(promise)
            .await
            .map_err(|e| self.js_error(e))?;
        resp.dyn_into::<Response>().map_err(|_| IoError::Network {
            location: self.url.clone(),
            message: "fetch did not resolve to a Response".into(),
        })
    }

    /// Feeds the body of `resp` to `answer` and ends it. On any error the stream is
    /// cancelled, so the host stops downloading the rest.
    async fn read_body(
        &self,
        resp: &Response,
        answer: &mut AnswerMachine<'_>,
    ) -> Result<Fetched, IoError> {
        let Some(body) = resp.body() else {
            return answer.end();
        };
        let reader = body.get_reader();
        let read = match Reflect::get(&reader, &"read".into())
            .ok()
            .and_then(|f| f.dyn_into::<Function>().ok())
        {
            Some(read) => read,
            None => {
                cancel(&body);
                let e = self.js("body reader", JsValue::from_str("no read()"));
                return Err(answer.fail(e));
            }
        };
        let result = self.pump(&reader, &read, answer).await;
        match result {
            Ok(()) => answer.end(),
            Err(e) => {
                cancel(&reader);
                Err(match e {
                    IoError::Cancelled => answer.cancel(),
                    e => answer.fail(e),
                })
            }
        }
    }
}

impl FetchSource {
    /// Moves the chunks of `reader` into `answer` until the body ends.
    async fn pump(
        &self,
        reader: &JsValue,
        read: &Function,
        answer: &mut AnswerMachine<'_>,
    ) -> Result<(), IoError> {
        loop {
            let p = read.call0(reader).map_err(|e| self.js("body read", e))?;
            let step = JsFuture::from(Promise::from(p))
                .await
                .map_err(|e| self.js("body read", e))?;
            let done = Reflect::get(&step, &"done".into())
                .ok()
                .and_then(|d| d.as_bool());
            if done != Some(false) {
                return Ok(());
            }
            let value = Reflect::get(&step, &"value".into())
                .ok()
                .and_then(|v| v.dyn_into::<Uint8Array>().ok())
                .ok_or_else(|| self.js("body read", JsValue::from_str("chunk is not bytes")))?;
            value.copy_to(answer.room(value.length() as usize)?);
        }
    }
}

/// An `abort` listener on a signal, removed when dropped (a listener left behind keeps its
/// closure, and what it holds, alive as long as the signal lives).
pub(crate) struct AbortListener {
    signal: AbortSignal,
    callback: Closure<dyn FnMut()>,
}

impl AbortListener {
    /// Calls `on_abort` when `signal` aborts, until the listener is dropped.
    pub(crate) fn new(signal: &AbortSignal, on_abort: impl FnMut() + 'static) -> Self {
        let callback = Closure::<dyn FnMut()>::new(on_abort);
        super::signal::listen_abort(signal, callback.as_ref().unchecked_ref(), true);
        Self {
            signal: signal.clone(),
            callback,
        }
    }
}

impl Drop for AbortListener {
    fn drop(&mut self) {
        super::signal::listen_abort(&self.signal, self.callback.as_ref().unchecked_ref(), false);
    }
}

/// The `AbortController` of one request: aborts it when dropped before the read finished
/// (timeout, dropped read), and follows the source's own signal while alive.
struct InFlight {
    controller: AbortController,
    finished: bool,
    _follow: Option<AbortListener>,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        if !self.finished {
            self.controller.abort();
        }
    }
}

/// Cancels a body reader or stream so the host stops downloading (the promise is not awaited:
/// there is nothing left to learn from it).
fn cancel(stream_or_reader: &JsValue) {
    if let Some(f) = Reflect::get(stream_or_reader, &"cancel".into())
        .ok()
        .and_then(|f| f.dyn_into::<Function>().ok())
    {
        if let Ok(p) = f.call0(stream_or_reader) {
            // Swallow a rejection so hosts do not report it as unhandled.
            let noop = wasm_bindgen::closure::Closure::once_into_js(|_: JsValue| {});
            if let Some(catch) = Reflect::get(&p, &"catch".into())
                .ok()
                .and_then(|c| c.dyn_into::<Function>().ok())
            {
                let _ = catch.call1(&p, &noop);
            }
        }
    }
}

fn header(h: &Headers, name: &str) -> Option<String> {
    h.get(name).ok().flatten()
}

#[async_trait::async_trait(?Send)]
impl RangeSource for FetchSource {
    fn location(&self) -> &str {
        &self.url
    }

    async fn read(&self, range: ByteRange) -> Result<Fetched, IoError> {
        range.validate()?;
        if self.aborted() {
            return Err(IoError::Cancelled);
        }
        let controller = AbortController::new().map_err(|e| self.js("AbortController", e))?;
        let mut in_flight = InFlight {
            controller: controller.clone(),
            finished: false,
            _follow: self.options.signal.as_ref().map(|s| {
                let c = controller.clone();
                AbortListener::new(s, move || c.abort())
            }),
        };
        let signal = controller.signal();
        let result = super::deadline::within(
            self.options.request_timeout,
            TimeoutScope::Request,
            &self.url,
            self.read_once(range, &signal),
        )
        .await;
        // On a timeout the request is still open: dropping `in_flight` unfinished aborts it.
        in_flight.finished = !matches!(result, Err(IoError::Timeout { .. }));
        result?
    }
}

impl FetchSource {
    /// One request for `range` under `signal`, without the request deadline.
    async fn read_once(&self, range: ByteRange, signal: &AbortSignal) -> Result<Fetched, IoError> {
        let resp = self.send(&range, signal).await?;
        let h = resp.headers();
        let (content_range, content_length) =
            (header(&h, "Content-Range"), header(&h, "Content-Length"));
        let (content_encoding, etag) = (header(&h, "Content-Encoding"), header(&h, "ETag"));
        let last_modified = header(&h, "Last-Modified");
        let mut answer = AnswerMachine::new(
            &self.url,
            range,
            self.options.whole_read_limit,
            &self.validators,
        );
        let next = answer.head(&Head {
            status: resp.status(),
            content_range: content_range.as_deref(),
            content_length: content_length.as_deref(),
            content_encoding: content_encoding.as_deref(),
            etag: etag.as_deref(),
            last_modified: last_modified.as_deref(),
        });
        if answer.range_ignored() {
            self.range_ignored
                .store(true, std::sync::atomic::Ordering::Relaxed);
        }
        match next {
            Ok(Next::Done(fetched)) => Ok(fetched),
            Ok(Next::ReadBody) => self.read_body(&resp, &mut answer).await,
            Err(e) => {
                // Refused before the body: the host must not download it.
                if let Some(b) = resp.body() {
                    cancel(&b);
                }
                Err(e)
            }
        }
    }
}

#[wasm_bindgen::prelude::wasm_bindgen(module = "/src/io/early.js")]
extern "C" {
    /// The answer kept for `url` and `range` by an open started before the module was ready
    /// (a Promise of a Response, handed over once), or `undefined`; aborting `signal` aborts
    /// it. See early.js.
    #[wasm_bindgen(js_name = takeEarly)]
    fn take_early(url: &str, range: &str, signal: &AbortSignal) -> JsValue;
}

/// Whether this host is workerd (Cloudflare Workers), by `navigator.userAgent`.
fn in_workerd(global: &js_sys::Object) -> bool {
    Reflect::get(global, &"navigator".into())
        .ok()
        .filter(|n| n.is_object())
        .and_then(|n| Reflect::get(&n, &"userAgent".into()).ok())
        .and_then(|ua| ua.as_string())
        .is_some_and(|ua| ua.starts_with("Cloudflare-Workers"))
}
