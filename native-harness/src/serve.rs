//! The loopback range server behind `chunkwise serve`: static files under a root directory,
//! served with single-range support (RFC 9110 §14), validators and CORS, so that the native
//! `HttpSource` and the wasm `FetchSource` (browser, worker, Node) can be tested against a real
//! HTTP server.
//!
//! Behaviour, per request:
//! - `GET`/`HEAD` of a file under the root. The path is percent-decoded; `..` segments, encoded
//!   slashes, dotfiles (any segment starting with `.`, except Zarr v2's `.zarray`, `.zattrs`,
//!   `.zgroup` and `.zmetadata`) and anything resolving outside the root (including through
//!   symlinks) give 404.
//!   A directory redirects to its `/`-terminated form (query kept), then serves `index.html`
//!   if present, else a plain HTML listing.
//! - `Range: bytes=a-b`, `bytes=a-` and `bytes=-n` give `206` with `Content-Range: bytes
//!   a-b/len`; a range starting at or past the end (or `bytes=-0`) gives `416` with
//!   `Content-Range: bytes */len`. Several ranges (`bytes=0-1,5-6`) and malformed values are
//!   answered `200` with the whole body, which RFC 9110 §14.2 allows (a server may ignore
//!   `Range`); this avoids `multipart/byteranges`, which no reader here uses. The unit `bytes`
//!   is matched case-insensitively (§14.1). `If-Range` (§13.1.5) keeps the range only when
//!   it is the current `ETag` (strong comparison) or exactly the current `Last-Modified`;
//!   otherwise the answer is `200` with the whole body.
//! - `ETag` (size and modification time, the same value `chunkwise::io::file` uses),
//!   `Last-Modified`, `Accept-Ranges: bytes`, `Content-Type` by extension, `Cache-Control:
//!   no-store`, and CORS headers on every answer (`Access-Control-Allow-Origin` is
//!   [`ServeOptions::cors_origin`], `*` by default); `OPTIONS` answers preflights, allowing
//!   `Range` and whatever headers the preflight asks for.
//! - File bodies are streamed in 64 KiB pieces, never loaded whole.
//! - Sockets have `TCP_NODELAY` set (small answers on a kept-alive connection otherwise wait
//!   for the client's delayed ACK, Nagle's algorithm); a client has 30 s to send a request's
//!   headers.
//!
//! Test-only faults ([`ServeOptions::fail_first`], [`ServeOptions::ignore_range`],
//! [`ServeOptions::faults`], see [`Fault`]) and an added per-request latency
//! ([`ServeOptions::latency_ms`]) simulate real networks and servers.
//!
//! Log (stderr, unless [`ServeOptions::quiet`]): one line per answer,
//! `METHOD PATH range=RANGE STATUS BODY_LEN` (`range=-` without a `Range` header; `BODY_LEN`
//! is the length announced), printed when the headers are ready; and, for a file body that
//! ended before all of it was sent (the client closed the connection, or the server
//! stopped), one line `cut METHOD PATH range=RANGE sent=N of=BODY_LEN` when it is dropped.

use bytes::Bytes;
use futures::StreamExt;
use http_body_util::{combinators::UnsyncBoxBody, BodyExt, Empty, Full, StreamBody};
use hyper::body::Frame;
use hyper::header::{self, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use std::io::Write;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};
use tokio::io::{AsyncReadExt, AsyncSeekExt};
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinSet;

/// Size of one streamed body piece, in bytes.
const PIECE: usize = 64 * 1024;

/// Request records kept for [`ServerHandle::requests`]: the most recent ones only, so a
/// long-running server does not grow without bound.
const LOG_CAPACITY: usize = 10_000;

/// Time a client has to send the headers of a request.
const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(30);

/// Headers a cross-origin page may read from our answers (fetch hides all others).
const EXPOSE_HEADERS: &str = "Content-Range, Content-Length, ETag, Last-Modified, Accept-Ranges";

/// How to run the range server.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// Directory whose files are served.
    pub root: PathBuf,
    /// TCP port on 127.0.0.1; `0` picks a free (ephemeral) port.
    pub port: u16,
    /// Milliseconds slept before answering each request (simulated round-trip latency).
    pub latency_ms: u64,
    /// Simulated link bandwidth in bytes per second shared by all answers (`0`: unlimited).
    /// Each answer's body reserves `body bytes / bandwidth` seconds of one shared link, first
    /// come first served, and is sent when its turn on the link ends: concurrent answers
    /// share the bandwidth as they would on one access link.
    pub bandwidth: u64,
    /// Test fault: answer `503 Service Unavailable` to the first `fail_first` GET requests.
    pub fail_first: u64,
    /// Test fault: ignore `Range` headers and always answer `200` with the whole body.
    pub ignore_range: bool,
    /// Do not print a log line per request on stderr.
    pub quiet: bool,
    /// Test faults (see [`Fault`]); several may be combined.
    pub faults: Vec<Fault>,
    /// Value of `Access-Control-Allow-Origin` on every answer; default `*` (any origin, as
    /// loopback tests from another port need). Another value also sends `Vary: Origin`.
    pub cors_origin: String,
}

/// A test fault of the server (`chunkwise serve --fault SPEC`), for transports' tests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fault {
    /// `never-answer`: read each request and never answer it (the connection stays open).
    NeverAnswer,
    /// `trickle-ms=N`: send headers at once, then the body one byte every N milliseconds.
    TrickleMs(u64),
    /// `etag-per-request`: every answer carries a new `ETag` (as if the file changed between
    /// any two requests).
    EtagPerRequest,
    /// `redirect-loop`: answer every `GET`/`HEAD` with `302` to the same URL.
    RedirectLoop,
    /// `redirect-endless`: answer every `GET`/`HEAD` with `302` to the same path with a new
    /// query (`?hop=N`), an endless chain of distinct URLs.
    RedirectEndless,
    /// `status=SUFFIX:CODE`: answer requests whose path ends with SUFFIX with status CODE
    /// (for example `status=c/0/1:410`).
    Status {
        /// Suffix of the request path (percent-encoded, as received).
        suffix: String,
        /// Status code sent.
        code: u16,
    },
    /// `after=N:SPEC`: the fault SPEC, applied only once N `GET` requests have been received
    /// (from the (N+1)th `GET` on, and to `HEAD` requests from then on), so that an open can
    /// complete before, for example, `after=2:trickle-ms=50` slows the reads that follow.
    After {
        /// `GET` requests answered without the fault.
        gets: u64,
        /// The fault applied after them.
        fault: Box<Fault>,
    },
}

impl Fault {
    /// The fault in effect for a request once `gets_before` `GET` requests came before it
    /// (an [`Fault::After`] unwrapped, or none yet).
    fn in_effect(&self, gets_before: u64) -> Option<&Fault> {
        match self {
            Fault::After { gets, fault } if gets_before >= *gets => fault.in_effect(gets_before),
            Fault::After { .. } => None,
            f => Some(f),
        }
    }
}

impl FromStr for Fault {
    type Err = String;
    fn from_str(spec: &str) -> Result<Self, String> {
        let bad = || {
            format!(
                "unknown fault {spec:?}: expected never-answer, trickle-ms=N, etag-per-request, \
                 redirect-loop, redirect-endless, status=SUFFIX:CODE or after=N:SPEC"
            )
        };
        Ok(match spec.split_once('=') {
            None => match spec {
                "never-answer" => Fault::NeverAnswer,
                "etag-per-request" => Fault::EtagPerRequest,
                "redirect-loop" => Fault::RedirectLoop,
                "redirect-endless" => Fault::RedirectEndless,
                _ => return Err(bad()),
            },
            Some(("trickle-ms", n)) => Fault::TrickleMs(n.parse().map_err(|_| bad())?),
            Some(("status", v)) => {
                let (suffix, code) = v.rsplit_once(':').ok_or_else(bad)?;
                let code: u16 = code.parse().map_err(|_| bad())?;
                if !(100..=999).contains(&code) || suffix.is_empty() {
                    return Err(bad());
                }
                Fault::Status {
                    suffix: suffix.to_string(),
                    code,
                }
            }
            Some(("after", v)) => {
                let (n, spec) = v.split_once(':').ok_or_else(bad)?;
                Fault::After {
                    gets: n.parse().map_err(|_| bad())?,
                    fault: Box::new(spec.parse()?),
                }
            }
            Some(_) => return Err(bad()),
        })
    }
}

impl Default for ServeOptions {
    fn default() -> Self {
        Self {
            root: PathBuf::from("."),
            port: 0,
            latency_ms: 0,
            bandwidth: 0,
            fail_first: 0,
            ignore_range: false,
            quiet: false,
            faults: Vec::new(),
            cors_origin: "*".into(),
        }
    }
}

/// One answered request, as logged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestRecord {
    /// `GET`, `HEAD`, `OPTIONS`, ...
    pub method: String,
    /// Request path as received (still percent-encoded, without the query).
    pub path: String,
    /// The query as received (without the `?`), if any.
    pub query: Option<String>,
    /// The `Range` header, if any.
    pub range: Option<String>,
    /// Status answered.
    pub status: u16,
    /// Body length announced (bytes; 0 for HEAD and empty answers).
    pub body_len: u64,
    /// When the request's head arrived, since the server started (before any added latency).
    pub received: Duration,
    /// When the answer's head was ready to send, since the server started (after the added
    /// latency). A request received after an earlier one was answered may depend on it; one
    /// received before may not: the log's sequential waves.
    pub answered: Duration,
}

/// Counters of the server since it started.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ServerStats {
    /// Requests answered (all methods).
    pub requests: u64,
    /// GET requests received (including those answered with an injected 503).
    pub gets: u64,
    /// TCP connections accepted.
    pub connections: u64,
    /// Body bytes handed to the connection (bytes). For a client that drops a streamed body
    /// early this stays below the announced length.
    pub bytes_sent: u64,
    /// File bodies dropped before all their bytes were sent (each also logs a `cut` line).
    pub bodies_cut: u64,
}

#[derive(Default)]
struct Shared {
    requests: AtomicU64,
    gets: AtomicU64,
    connections: AtomicU64,
    bytes_sent: AtomicU64,
    bodies_cut: AtomicU64,
    etag_serial: AtomicU64,
    log: Mutex<std::collections::VecDeque<RequestRecord>>,
    /// When the simulated link of [`ServeOptions::bandwidth`] is next free.
    link_free: Mutex<Option<tokio::time::Instant>>,
    started: Epoch,
}

/// The instant a server's shared state was made: the origin of [`RequestRecord`] times.
struct Epoch(std::time::Instant);

impl Default for Epoch {
    fn default() -> Self {
        Epoch(std::time::Instant::now())
    }
}

struct State {
    root: PathBuf,
    opts: ServeOptions,
    shared: Arc<Shared>,
}

/// A running server (from [`spawn`]). Dropping it stops the server too.
pub struct ServerHandle {
    addr: SocketAddr,
    root: PathBuf,
    shared: Arc<Shared>,
    shutdown: Option<oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl ServerHandle {
    /// The bound address (always 127.0.0.1).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }
    /// The served directory (canonical path).
    pub fn root(&self) -> &Path {
        &self.root
    }
    /// `http://127.0.0.1:PORT/`.
    pub fn base_url(&self) -> String {
        format!("http://{}/", self.addr)
    }
    /// URL of `path` (relative to the root, no leading slash needed).
    pub fn url(&self, path: &str) -> String {
        format!("http://{}/{}", self.addr, path.trim_start_matches('/'))
    }
    /// Counters so far.
    pub fn stats(&self) -> ServerStats {
        ServerStats {
            requests: self.shared.requests.load(Ordering::SeqCst),
            gets: self.shared.gets.load(Ordering::SeqCst),
            connections: self.shared.connections.load(Ordering::SeqCst),
            bytes_sent: self.shared.bytes_sent.load(Ordering::SeqCst),
            bodies_cut: self.shared.bodies_cut.load(Ordering::SeqCst),
        }
    }
    /// The requests answered so far (the most recent 10,000), in the order answered.
    pub fn requests(&self) -> Vec<RequestRecord> {
        self.shared
            .log
            .lock()
            .map(|l| l.iter().cloned().collect())
            .unwrap_or_default()
    }
    /// Stops accepting, closes open connections and waits for the accept loop to end.
    pub async fn shutdown(mut self) {
        self.stop();
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
    fn stop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}

impl Drop for ServerHandle {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Binds 127.0.0.1:`opts.port` and serves in a background task of the current tokio runtime.
///
/// # Errors
/// The root is not a readable directory, or the port cannot be bound.
pub async fn spawn(opts: ServeOptions) -> std::io::Result<ServerHandle> {
    let root = std::fs::canonicalize(&opts.root)?;
    let invalid = |what: String| std::io::Error::new(std::io::ErrorKind::InvalidInput, what);
    HeaderValue::from_str(&opts.cors_origin)
        .map_err(|_| invalid(format!("bad CORS origin {:?}", opts.cors_origin)))?;
    if !root.is_dir() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::NotADirectory,
            format!("{} is not a directory", root.display()),
        ));
    }
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, opts.port)).await?;
    let addr = listener.local_addr()?;
    let shared = Arc::new(Shared::default());
    let state = Arc::new(State {
        root: root.clone(),
        opts,
        shared: shared.clone(),
    });
    let (tx, mut rx) = oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        // Connections live in the set: dropping it at shutdown aborts them all.
        let mut conns = JoinSet::new();
        loop {
            tokio::select! {
                _ = &mut rx => break,
                accepted = listener.accept() => {
                    let Ok((stream, _)) = accepted else {
                        // Out of file descriptors, for example: wait instead of spinning.
                        tokio::time::sleep(Duration::from_millis(10)).await;
                        continue;
                    };
                    state.shared.connections.fetch_add(1, Ordering::SeqCst);
                    // Small answers on a kept-alive connection must not wait for the
                    // client's delayed ACK (Nagle's algorithm).
                    let _ = stream.set_nodelay(true);
                    let state = state.clone();
                    conns.spawn(async move {
                        let service = hyper::service::service_fn(move |req| {
                            let state = state.clone();
                            async move { Ok::<_, std::convert::Infallible>(handle(&state, req).await) }
                        });
                        let _ = hyper::server::conn::http1::Builder::new()
                            .timer(hyper_util::rt::TokioTimer::new())
                            .header_read_timeout(HEADER_READ_TIMEOUT)
                            .serve_connection(TokioIo::new(stream), service)
                            .await;
                    });
                }
                Some(_) = conns.join_next(), if !conns.is_empty() => {}
            }
        }
        conns.shutdown().await;
    });
    Ok(ServerHandle {
        addr,
        root,
        shared,
        shutdown: Some(tx),
        task: Some(task),
    })
}

/// Writes one log line to stderr. A failed write (the reader of the log has gone) is
/// ignored: the log must not take the server down, nor the answer it describes.
fn log(line: std::fmt::Arguments<'_>) {
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

/// Serves until Ctrl-C or SIGTERM. Prints `serving DIR at http://127.0.0.1:PORT/` on stdout
/// (flushed) once the port is bound, so scripts can wait for that line.
///
/// # Errors
/// As [`spawn`], or when the signal handlers cannot be installed.
pub async fn run(opts: ServeOptions) -> std::io::Result<()> {
    let handle = spawn(opts).await?;
    {
        let mut out = std::io::stdout().lock();
        writeln!(
            out,
            "serving {} at {}",
            handle.root().display(),
            handle.base_url()
        )?;
        out.flush()?;
    }
    wait_for_stop_signal().await?;
    handle.shutdown().await;
    Ok(())
}

#[cfg(unix)]
async fn wait_for_stop_signal() -> std::io::Result<()> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut term = signal(SignalKind::terminate())?;
    tokio::select! {
        r = tokio::signal::ctrl_c() => r,
        _ = term.recv() => Ok(()),
    }
}

#[cfg(not(unix))]
async fn wait_for_stop_signal() -> std::io::Result<()> {
    tokio::signal::ctrl_c().await
}

type Body = UnsyncBoxBody<Bytes, std::io::Error>;

fn empty() -> Body {
    Empty::<Bytes>::new()
        .map_err(|never| match never {})
        .boxed_unsync()
}

fn full(text: impl Into<Bytes>) -> Body {
    Full::new(text.into())
        .map_err(|never| match never {})
        .boxed_unsync()
}

async fn handle(state: &State, req: Request<hyper::body::Incoming>) -> Response<Body> {
    let received = state.shared.started.0.elapsed();
    if state.opts.latency_ms > 0 {
        tokio::time::sleep(Duration::from_millis(state.opts.latency_ms)).await;
    }
    let method = req.method().clone();
    let path = req.uri().path().to_string();
    let query = req.uri().query().map(str::to_string);
    let range = req
        .headers()
        .get(header::RANGE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let (mut resp, body_len) = answer(state, &req, range.as_deref()).await;
    if state.opts.bandwidth > 0 && body_len > 0 {
        let turn = Duration::from_secs_f64(body_len as f64 / state.opts.bandwidth as f64);
        let done = state.shared.link_free.lock().ok().map(|mut free| {
            let now = tokio::time::Instant::now();
            let end = free.map_or(now, |f| f.max(now)) + turn;
            *free = Some(end);
            end
        });
        if let Some(end) = done {
            tokio::time::sleep_until(end).await;
        }
    }
    let h = resp.headers_mut();
    if let Ok(origin) = HeaderValue::from_str(&state.opts.cors_origin) {
        if origin != "*" {
            h.insert(header::VARY, HeaderValue::from_static("Origin"));
        }
        h.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
    }
    h.insert(
        header::ACCESS_CONTROL_EXPOSE_HEADERS,
        HeaderValue::from_static(EXPOSE_HEADERS),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    let record = RequestRecord {
        method: method.to_string(),
        path,
        query,
        range,
        status: resp.status().as_u16(),
        body_len,
        received,
        answered: state.shared.started.0.elapsed(),
    };
    if !state.opts.quiet {
        log(format_args!(
            "{} {} range={} {} {}",
            record.method,
            record.path,
            record.range.as_deref().unwrap_or("-"),
            record.status,
            record.body_len
        ));
    }
    state.shared.requests.fetch_add(1, Ordering::SeqCst);
    if let Ok(mut log) = state.shared.log.lock() {
        if log.len() == LOG_CAPACITY {
            log.pop_front();
        }
        log.push_back(record);
    }
    resp
}

fn status(code: StatusCode, text: &'static str) -> (Response<Body>, u64) {
    let mut r = Response::new(full(text));
    *r.status_mut() = code;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    (r, text.len() as u64)
}

async fn answer(
    state: &State,
    req: &Request<hyper::body::Incoming>,
    range: Option<&str>,
) -> (Response<Body>, u64) {
    let head = match *req.method() {
        Method::GET => false,
        Method::HEAD => true,
        Method::OPTIONS => return (preflight(req), 0),
        _ => {
            let (mut r, n) = status(StatusCode::METHOD_NOT_ALLOWED, "method not allowed\n");
            r.headers_mut().insert(
                header::ALLOW,
                HeaderValue::from_static("GET, HEAD, OPTIONS"),
            );
            return (r, n);
        }
    };
    let gets_before = if head {
        state.shared.gets.load(Ordering::SeqCst)
    } else {
        let n = state.shared.gets.fetch_add(1, Ordering::SeqCst);
        if n < state.opts.fail_first {
            return status(StatusCode::SERVICE_UNAVAILABLE, "injected failure\n");
        }
        n
    };
    let faults: Vec<&Fault> = state
        .opts
        .faults
        .iter()
        .filter_map(|f| f.in_effect(gets_before))
        .collect();
    if let Some(r) = injected(&faults, req).await {
        return r;
    }
    let url_path = req.uri().path();
    let Some(path) = resolve_path(&state.root, url_path) else {
        return status(StatusCode::NOT_FOUND, "not found\n");
    };
    let Ok(meta) = tokio::fs::metadata(&path).await else {
        return status(StatusCode::NOT_FOUND, "not found\n");
    };
    if meta.is_dir() {
        if !url_path.ends_with('/') {
            let mut r = Response::new(empty());
            *r.status_mut() = StatusCode::MOVED_PERMANENTLY;
            // The query stays on the redirect (as common servers keep it).
            let query = req
                .uri()
                .query()
                .map(|q| format!("?{q}"))
                .unwrap_or_default();
            if let Ok(v) = HeaderValue::from_str(&format!("{url_path}/{query}")) {
                r.headers_mut().insert(header::LOCATION, v);
            }
            return (r, 0);
        }
        let index = path.join("index.html");
        return match tokio::fs::metadata(&index).await {
            Ok(m) if m.is_file() => serve_file(state, &faults, &index, &m, req, range, head).await,
            _ => listing(&path, url_path, head).await,
        };
    }
    serve_file(state, &faults, &path, &meta, req, range, head).await
}

/// The answer of a [`Fault`] in effect (`faults`) that replaces the normal one, if any
/// applies to `req`.
async fn injected(
    faults: &[&Fault],
    req: &Request<hyper::body::Incoming>,
) -> Option<(Response<Body>, u64)> {
    let path = req.uri().path();
    for &fault in faults {
        match fault {
            Fault::NeverAnswer => std::future::pending::<()>().await,
            Fault::RedirectLoop | Fault::RedirectEndless => {
                let to = if *fault == Fault::RedirectLoop {
                    req.uri()
                        .path_and_query()
                        .map_or(path.to_string(), |p| p.to_string())
                } else {
                    let hop = req
                        .uri()
                        .query()
                        .and_then(|q| q.strip_prefix("hop="))
                        .and_then(|n| n.parse::<u64>().ok())
                        .unwrap_or(0);
                    format!("{path}?hop={}", hop + 1)
                };
                let mut r = Response::new(empty());
                *r.status_mut() = StatusCode::FOUND;
                if let Ok(v) = HeaderValue::from_str(&to) {
                    r.headers_mut().insert(header::LOCATION, v);
                }
                return Some((r, 0));
            }
            Fault::Status { suffix, code } if path.ends_with(suffix.as_str()) => {
                let code = StatusCode::from_u16(*code).unwrap_or(StatusCode::IM_A_TEAPOT);
                return Some(status(code, "injected status\n"));
            }
            _ => {}
        }
    }
    None
}

fn preflight(req: &Request<hyper::body::Incoming>) -> Response<Body> {
    let mut r = Response::new(empty());
    *r.status_mut() = StatusCode::NO_CONTENT;
    let h = r.headers_mut();
    h.insert(
        header::ACCESS_CONTROL_ALLOW_METHODS,
        HeaderValue::from_static("GET, HEAD, OPTIONS"),
    );
    let asked = req
        .headers()
        .get(header::ACCESS_CONTROL_REQUEST_HEADERS)
        .cloned()
        .unwrap_or_else(|| HeaderValue::from_static("Range"));
    h.insert(header::ACCESS_CONTROL_ALLOW_HEADERS, asked);
    h.insert(
        header::ACCESS_CONTROL_MAX_AGE,
        HeaderValue::from_static("600"),
    );
    r
}

/// Zarr v2 metadata keys (Zarr storage specification v2), the dotfiles that are served.
const ZARR_V2_KEYS: [&str; 4] = [".zarray", ".zattrs", ".zgroup", ".zmetadata"];

/// Whether a path segment or file name is a dotfile not served (`..` included).
fn hidden(name: &str) -> bool {
    name.starts_with('.') && !ZARR_V2_KEYS.contains(&name)
}

/// Maps a URL path onto a file under `root`, or `None` if it would leave the root.
fn resolve_path(root: &Path, url_path: &str) -> Option<PathBuf> {
    let mut out = root.to_path_buf();
    for raw in url_path.split('/') {
        let seg = percent_encoding::percent_decode_str(raw)
            .decode_utf8()
            .ok()?;
        match seg.as_ref() {
            "" | "." => continue,
            // `..` and dotfiles (`.git`, `.env`, ...), but Zarr v2 metadata.
            s if hidden(s) => return None,
            s if s.contains(['/', '\\', '\0']) => return None,
            s => out.push(s),
        }
    }
    // Symlinks may point anywhere: only serve what really lies under the root.
    let real = std::fs::canonicalize(&out).ok()?;
    real.starts_with(root).then_some(real)
}

/// `Content-Type` by file extension.
fn content_type(path: &Path) -> &'static str {
    match path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        Some("html") | Some("htm") => "text/html; charset=utf-8",
        Some("js") | Some("mjs") => "text/javascript; charset=utf-8",
        Some("wasm") => "application/wasm",
        Some("json") => "application/json",
        Some("css") => "text/css; charset=utf-8",
        Some("svg") => "image/svg+xml",
        Some("png") => "image/png",
        Some("txt") => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

/// The `Range` header of a request, as this server understands it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RangeSpec {
    /// No usable range: answer 200 with the whole body.
    Whole,
    /// One satisfiable range, `start..end` (end exclusive).
    Part(u64, u64),
    /// A syntactically valid range that does not overlap the body: 416.
    Unsatisfiable,
}

/// Parses a `Range` header against a body of `len` bytes (RFC 9110 §14.1.2). Several ranges
/// and malformed values give [`RangeSpec::Whole`] (the header is ignored).
fn parse_range(value: &str, len: u64) -> RangeSpec {
    let value = value.trim();
    // The range unit is case-insensitive (RFC 9110 §14.1).
    let Some(spec) = value
        .get(..6)
        .filter(|unit| unit.eq_ignore_ascii_case("bytes="))
        .map(|_| &value[6..])
    else {
        return RangeSpec::Whole;
    };
    let spec = spec.trim();
    if spec.contains(',') {
        return RangeSpec::Whole;
    }
    let Some((a, b)) = spec.split_once('-') else {
        return RangeSpec::Whole;
    };
    let (a, b) = (a.trim(), b.trim());
    let num = |s: &str| -> Option<u64> {
        (!s.is_empty() && s.bytes().all(|c| c.is_ascii_digit())).then(|| s.parse().ok())?
    };
    if a.is_empty() {
        // Suffix: the last n bytes.
        let Some(n) = num(b) else {
            return RangeSpec::Whole;
        };
        if n == 0 || len == 0 {
            return RangeSpec::Unsatisfiable;
        }
        return RangeSpec::Part(len.saturating_sub(n), len);
    }
    let Some(start) = num(a) else {
        return RangeSpec::Whole;
    };
    let last = if b.is_empty() {
        None
    } else {
        match num(b) {
            Some(l) if l >= start => Some(l),
            _ => return RangeSpec::Whole,
        }
    };
    if start >= len {
        return RangeSpec::Unsatisfiable;
    }
    let end = last.map_or(len, |l| l.saturating_add(1).min(len));
    RangeSpec::Part(start, end)
}

/// Whether `If-Range: value` lets a range through (RFC 9110 §13.1.5): an entity tag must be
/// strong and equal to the current `etag`; a date must equal the current `last_modified`.
fn if_range_holds(value: &str, etag: &str, last_modified: &str) -> bool {
    let value = value.trim();
    if value.starts_with('"') || value.starts_with("W/") {
        !value.starts_with("W/") && value == etag
    } else {
        value == last_modified
    }
}

async fn serve_file(
    state: &State,
    faults: &[&Fault],
    path: &Path,
    meta: &std::fs::Metadata,
    req: &Request<hyper::body::Incoming>,
    range: Option<&str>,
    head: bool,
) -> (Response<Body>, u64) {
    let len = meta.len();
    let mtime = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
    let mut etag = chunkwise::io::file::etag_for(len, mtime);
    if faults.contains(&&Fault::EtagPerRequest) {
        let n = state.shared.etag_serial.fetch_add(1, Ordering::SeqCst);
        etag = format!("\"r{n}-{}", &etag[1..]);
    }
    let last_modified = httpdate::fmt_http_date(mtime);
    let if_range = req.headers().get(header::IF_RANGE).map(|v| {
        v.to_str()
            .is_ok_and(|v| if_range_holds(v, &etag, &last_modified))
    });
    let spec = match range {
        Some(v) if !state.opts.ignore_range && if_range != Some(false) => parse_range(v, len),
        _ => RangeSpec::Whole,
    };
    let mut builder = Response::builder()
        .header(header::ACCEPT_RANGES, "bytes")
        .header(header::ETAG, etag)
        .header(header::LAST_MODIFIED, last_modified)
        .header(header::CONTENT_TYPE, content_type(path));
    let (start, end) = match spec {
        RangeSpec::Unsatisfiable => {
            let r = builder
                .status(StatusCode::RANGE_NOT_SATISFIABLE)
                .header(header::CONTENT_RANGE, format!("bytes */{len}"))
                .body(empty());
            return (r.unwrap_or_else(|_| Response::new(empty())), 0);
        }
        RangeSpec::Whole => {
            builder = builder.status(StatusCode::OK);
            (0, len)
        }
        RangeSpec::Part(a, b) => {
            builder = builder
                .status(StatusCode::PARTIAL_CONTENT)
                .header(header::CONTENT_RANGE, format!("bytes {a}-{}/{len}", b - 1));
            (a, b)
        }
    };
    let n = end - start;
    builder = builder.header(header::CONTENT_LENGTH, n);
    let body = if head || n == 0 {
        empty()
    } else {
        let trickle = faults.iter().find_map(|f| match f {
            Fault::TrickleMs(ms) => Some(Duration::from_millis(*ms)),
            _ => None,
        });
        let cut = CutLog {
            shared: state.shared.clone(),
            line: (!state.opts.quiet).then(|| {
                format!(
                    "{} {} range={}",
                    req.method(),
                    req.uri().path(),
                    range.unwrap_or("-")
                )
            }),
            sent: 0,
            of: n,
        };
        match file_body(cut, path, start, n, trickle).await {
            Ok(b) => b,
            Err(_) => return status(StatusCode::INTERNAL_SERVER_ERROR, "cannot read file\n"),
        }
    };
    let r = builder
        .body(body)
        .unwrap_or_else(|_| Response::new(empty()));
    (r, if head { 0 } else { n })
}

/// The record of one file body being sent: counts its bytes, and when dropped before all
/// `of` bytes were sent, counts a cut body and logs `cut {line} sent=N of=M` (`line` is
/// `METHOD PATH range=RANGE`; `None` when quiet).
struct CutLog {
    shared: Arc<Shared>,
    line: Option<String>,
    sent: u64,
    of: u64,
}

impl CutLog {
    fn sent(&mut self, n: u64) {
        self.sent += n;
        self.shared.bytes_sent.fetch_add(n, Ordering::SeqCst);
    }
}

impl Drop for CutLog {
    fn drop(&mut self) {
        if self.sent < self.of {
            self.shared.bodies_cut.fetch_add(1, Ordering::SeqCst);
            if let Some(line) = &self.line {
                log(format_args!("cut {line} sent={} of={}", self.sent, self.of));
            }
        }
    }
}

/// Streams `n` bytes of `path` from `start` in [`PIECE`]-sized frames, counting what is sent
/// into `cut`; with `trickle`, one byte per frame, each after that pause.
async fn file_body(
    cut: CutLog,
    path: &Path,
    start: u64,
    n: u64,
    trickle: Option<Duration>,
) -> std::io::Result<Body> {
    let mut file = tokio::fs::File::open(path).await?;
    file.seek(std::io::SeekFrom::Start(start)).await?;
    let stream = futures::stream::unfold((file, n, cut), move |(mut file, left, mut cut)| {
        async move {
            if left == 0 {
                return None;
            }
            let piece = if trickle.is_some() { 1 } else { PIECE as u64 };
            if let Some(pause) = trickle {
                tokio::time::sleep(pause).await;
            }
            let want = left.min(piece) as usize;
            let mut buf = vec![0u8; want];
            match file.read_exact(&mut buf).await {
                Ok(_) => {
                    cut.sent(want as u64);
                    Some((
                        Ok(Frame::data(Bytes::from(buf))),
                        (file, left - want as u64, cut),
                    ))
                }
                // The file shrank under us: end the body with an error (the client sees a
                // truncated body rather than wrong bytes).
                Err(e) => Some((Err(e), (file, 0, cut))),
            }
        }
    });
    Ok(BodyExt::boxed_unsync(StreamBody::new(stream.boxed())))
}

async fn listing(dir: &Path, url_path: &str, head: bool) -> (Response<Body>, u64) {
    let mut names = Vec::new();
    if let Ok(mut rd) = tokio::fs::read_dir(dir).await {
        while let Ok(Some(e)) = rd.next_entry().await {
            let mut name = e.file_name().to_string_lossy().into_owned();
            if hidden(&name) {
                continue; // not served
            }
            if e.file_type().await.map(|t| t.is_dir()).unwrap_or(false) {
                name.push('/');
            }
            names.push(name);
        }
    }
    names.sort();
    let esc = |s: &str| {
        s.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('"', "&quot;")
    };
    let mut html = format!(
        "<!doctype html><meta charset=\"utf-8\"><title>{0}</title><h1>{0}</h1><ul>\n",
        esc(url_path)
    );
    for n in &names {
        let href: String =
            percent_encoding::utf8_percent_encode(n, percent_encoding::NON_ALPHANUMERIC)
                .to_string()
                .replace("%2F", "/")
                .replace("%2E", ".")
                .replace("%2D", "-")
                .replace("%5F", "_");
        html.push_str(&format!("<li><a href=\"{href}\">{}</a></li>\n", esc(n)));
    }
    html.push_str("</ul>\n");
    let n = html.len() as u64;
    let body = if head { empty() } else { full(html) };
    let r = Response::builder()
        .header(header::CONTENT_TYPE, "text/html; charset=utf-8")
        .header(header::CONTENT_LENGTH, n)
        .body(body)
        .unwrap_or_else(|_| Response::new(empty()));
    (r, if head { 0 } else { n })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_ranges() {
        assert_eq!(parse_range("bytes=0-9", 100), RangeSpec::Part(0, 10));
        assert_eq!(parse_range("bytes=90-200", 100), RangeSpec::Part(90, 100));
        assert_eq!(parse_range("bytes=10-", 100), RangeSpec::Part(10, 100));
        assert_eq!(parse_range("bytes=-30", 100), RangeSpec::Part(70, 100));
        assert_eq!(parse_range("bytes=-300", 100), RangeSpec::Part(0, 100));
        assert_eq!(parse_range("bytes=100-", 100), RangeSpec::Unsatisfiable);
        assert_eq!(parse_range("bytes=-0", 100), RangeSpec::Unsatisfiable);
        assert_eq!(parse_range("bytes=-5", 0), RangeSpec::Unsatisfiable);
        assert_eq!(parse_range("bytes=0-1,5-6", 100), RangeSpec::Whole);
        assert_eq!(parse_range("bytes=5-1", 100), RangeSpec::Whole);
        assert_eq!(parse_range("items=0-1", 100), RangeSpec::Whole);
        assert_eq!(parse_range("bytes=x-1", 100), RangeSpec::Whole);
        assert_eq!(parse_range("bytes=+1-2", 100), RangeSpec::Whole);
        assert_eq!(parse_range("Bytes=0-9", 100), RangeSpec::Part(0, 10));
        assert_eq!(parse_range(" BYTES=-30", 100), RangeSpec::Part(70, 100));
        assert_eq!(parse_range("bytes", 100), RangeSpec::Whole);
    }

    #[test]
    fn if_range_compares_strongly() {
        let (etag, lm) = ("\"a-1\"", "Sun, 06 Nov 1994 08:49:37 GMT");
        assert!(if_range_holds("\"a-1\"", etag, lm));
        assert!(!if_range_holds("\"a-2\"", etag, lm));
        assert!(!if_range_holds("W/\"a-1\"", etag, lm));
        assert!(if_range_holds(lm, etag, lm));
        assert!(!if_range_holds("Sun, 06 Nov 1994 08:49:38 GMT", etag, lm));
        assert!(!if_range_holds("garbage", etag, lm));
    }

    #[test]
    fn faults_parse() {
        assert_eq!("never-answer".parse(), Ok(Fault::NeverAnswer));
        assert_eq!("trickle-ms=5000".parse(), Ok(Fault::TrickleMs(5000)));
        assert_eq!("etag-per-request".parse(), Ok(Fault::EtagPerRequest));
        assert_eq!("redirect-loop".parse(), Ok(Fault::RedirectLoop));
        assert_eq!("redirect-endless".parse(), Ok(Fault::RedirectEndless));
        assert_eq!(
            "status=c/0/1:410".parse(),
            Ok(Fault::Status {
                suffix: "c/0/1".into(),
                code: 410
            })
        );
        assert_eq!(
            "after=2:trickle-ms=50".parse(),
            Ok(Fault::After {
                gets: 2,
                fault: Box::new(Fault::TrickleMs(50))
            })
        );
        assert_eq!(
            "after=0:status=a:5:404".parse(),
            Ok(Fault::After {
                gets: 0,
                fault: Box::new(Fault::Status {
                    suffix: "a:5".into(),
                    code: 404
                })
            })
        );
        for bad in [
            "",
            "trickle-ms=x",
            "status=:404",
            "status=a:99",
            "status=a",
            "nope=1",
            "after=2",
            "after=x:never-answer",
            "after=2:nope",
        ] {
            assert!(bad.parse::<Fault>().is_err(), "{bad}");
        }
    }

    #[test]
    fn after_applies_from_the_next_get_on() {
        let f: Fault = "after=2:never-answer".parse().unwrap();
        assert_eq!(f.in_effect(0), None);
        assert_eq!(f.in_effect(1), None);
        assert_eq!(f.in_effect(2), Some(&Fault::NeverAnswer));
        assert_eq!(f.in_effect(3), Some(&Fault::NeverAnswer));
        // Nested, the larger count wins.
        let f: Fault = "after=1:after=3:never-answer".parse().unwrap();
        assert_eq!(f.in_effect(2), None);
        assert_eq!(f.in_effect(3), Some(&Fault::NeverAnswer));
        assert_eq!(Fault::NeverAnswer.in_effect(0), Some(&Fault::NeverAnswer));
    }

    /// Sends `GET /{path}` on a new connection; returns the connection and the status line.
    async fn get(addr: SocketAddr, path: &str) -> (tokio::net::TcpStream, String) {
        use tokio::io::AsyncWriteExt;
        let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
        s.write_all(format!("GET /{path} HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes())
            .await
            .unwrap();
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n") {
            s.read_exact(&mut byte).await.unwrap();
            head.push(byte[0]);
        }
        (s, String::from_utf8(head).unwrap().trim_end().to_string())
    }

    #[tokio::test]
    async fn after_spares_the_first_gets_and_a_dropped_body_is_counted_cut() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.bin"), vec![7u8; 1000]).unwrap();
        let server = spawn(ServeOptions {
            root: dir.path().into(),
            quiet: true,
            faults: vec!["after=1:trickle-ms=20".parse().unwrap()],
            ..Default::default()
        })
        .await
        .unwrap();
        // The first GET is answered whole at once.
        let (mut s, status) = get(server.addr(), "a.bin").await;
        assert_eq!(status, "HTTP/1.1 200 OK");
        let mut all = Vec::new();
        let mut buf = [0u8; 4096];
        while !all.ends_with(&[7u8; 1000]) {
            let n = s.read(&mut buf).await.unwrap();
            assert!(n > 0, "closed early");
            all.extend_from_slice(&buf[..n]);
        }
        drop(s);
        // The second trickles; closing the connection cuts its body.
        let (s, status) = get(server.addr(), "a.bin").await;
        assert_eq!(status, "HTTP/1.1 200 OK");
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert_eq!(server.stats().bodies_cut, 0);
        drop(s);
        let t = std::time::Instant::now();
        while server.stats().bodies_cut == 0 {
            assert!(
                t.elapsed() < Duration::from_secs(5),
                "the cut body was not noticed"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let stats = server.stats();
        assert_eq!(stats.bodies_cut, 1);
        assert!(
            stats.bytes_sent > 1000 && stats.bytes_sent < 1100,
            "{stats:?}"
        );
    }

    #[test]
    fn paths_stay_under_root() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::write(root.join("a b.bin"), b"x").unwrap();
        assert_eq!(
            resolve_path(&root, "/a%20b.bin"),
            Some(root.join("a b.bin"))
        );
        assert_eq!(resolve_path(&root, "/../etc/passwd"), None);
        assert_eq!(resolve_path(&root, "/%2e%2e/etc/passwd"), None);
        assert_eq!(resolve_path(&root, "/x%2F..%2F..%2Fetc"), None);
        assert_eq!(resolve_path(&root, "/missing"), None);
        std::fs::write(root.join(".env"), b"secret").unwrap();
        assert_eq!(resolve_path(&root, "/.env"), None);
        assert_eq!(resolve_path(&root, "/%2eenv"), None);
        std::fs::write(root.join(".zarray"), b"{}").unwrap();
        assert_eq!(resolve_path(&root, "/.zarray"), Some(root.join(".zarray")));
        assert_eq!(resolve_path(&root, "/"), Some(root.clone()));
    }

    #[test]
    fn content_types() {
        assert_eq!(content_type(Path::new("a.wasm")), "application/wasm");
        assert_eq!(
            content_type(Path::new("a.MJS")),
            "text/javascript; charset=utf-8"
        );
        assert_eq!(
            content_type(Path::new("a.b2nd")),
            "application/octet-stream"
        );
    }
}
