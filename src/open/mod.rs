//! The one opener: from a location (an `http(s)://` URL, or natively a local path), request
//! headers, [`OpenOptions`] and a [`CacheCoordinator`] to a [`RemoteArray`] or a
//! [`RemoteStore`]. The CLI and the JS bindings convert their options, call
//! [`open_array`] or [`open_store`], and convert the result; every decision of opening is
//! made here, where native tests reach it:
//!
//! - the transport stack ([`transport`], [`key_opener`]): `Retrying(Counted(transport))`, so
//!   every attempt counts as a request (`HttpSource` or `FileSource` natively, `FetchSource`
//!   in wasm);
//! - the cache identity ([`source_key`]: [`CacheCoordinator::key_for`], a `cacheKey` name or
//!   the URL as given, a local file's canonical path);
//! - the format, detected once from the first bytes ([`detect`]) for arrays and stores;
//! - the discovery record lookup, and discovery on a miss;
//! - the Zarr fallback ([`is_zarr_root`], [`crate::formats::zarr::or_zarr`]): a URL ending in
//!   `.zarr`, a local directory, a URL with no object of its own (404) or with bytes of no
//!   known format opens as a Zarr store (or array) root.

// A build with neither b2nd nor HDF5 (Zarr alone) refuses every single-object source; the
// code that would discover one is then unreachable.
#![cfg_attr(
    not(any(feature = "b2nd", feature = "hdf5")),
    allow(unreachable_code, unused_variables, unused_imports, unused_assignments)
)]

#[cfg(feature = "b2nd")]
pub mod b2z;
#[cfg(feature = "caterva2")]
pub mod caterva2;
pub mod options;
#[cfg(any(feature = "zarr", feature = "hdf5", feature = "b2nd"))]
pub mod warm_up;
#[cfg(feature = "zarr")]
mod zarr;
#[cfg(not(feature = "zarr"))]
use without_zarr::{open_zarr, open_zarr_store, or_zarr};
#[cfg(feature = "zarr")]
use zarr::or_zarr;
#[cfg(feature = "zarr")]
pub(crate) use zarr::{keep_zarr, ZARR_SCOPE};
#[cfg(feature = "zarr")]
pub use zarr::{key_opener, open_zarr, open_zarr_store, zarr_store};

use crate::array::{OpenOptions, RemoteArray};
use crate::cache::discovery::{DiscoveryRecord, SourceIdentity, DISCOVERY_VERSION};
use crate::cache::{convert, CacheCoordinator, CacheStatus, SourceKey};
use crate::error::Result;
#[cfg(feature = "b2nd")]
use crate::formats::b2nd::{B2ndArray, B2ndSeed};
#[cfg(feature = "hdf5")]
use crate::formats::hdf5::{Hdf5Array, Hdf5ListingSeed, Hdf5Seed};
use crate::formats::{ArrayFormat, FormatError, FormatSeed, Seed};
use crate::io::memory::MemorySource;
use crate::io::{
    ByteRange, Counted, Fetched, RangeSource, RetryConfig, Retrying, SourceInfo, Traffic,
};
use crate::store::{Container, RemoteStore};
use bytes::Bytes;
use std::sync::Arc;

/// Scope under which a container's listing is recorded.
pub(crate) const NODES_SCOPE: &str = "#nodes";

/// What a source's first bytes are (a Zarr store has no object of its own, so it is never
/// detected from bytes: see [`is_zarr_root`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Detected {
    /// A Blosc2 contiguous frame (`b2frame\0` magic at byte 8): a `.b2nd` array.
    B2nd,
    /// An HDF5 file (the superblock signature `\x89HDF\r\n\x1a\n` at 0, 512, 1024, ...).
    Hdf5,
    /// A ZIP archive (a local file header `PK\x03\x04` at 0): a `.b2z` container.
    Zip,
    /// No supported format.
    Unknown,
}

/// The format of a source from its first bytes (at least the first 64 KiB, or all of a
/// smaller source). The one detection: arrays and stores both use it.
pub fn detect(head: &[u8]) -> Detected {
    if crate::formats::signature::is_b2nd_frame(head) {
        Detected::B2nd
    } else if crate::formats::signature::is_hdf5(head) {
        Detected::Hdf5
    } else if head.starts_with(b"PK\x03\x04") {
        Detected::Zip
    } else {
        Detected::Unknown
    }
}

/// The error of a source whose format this build leaves out (cargo features `b2nd`, `hdf5`,
/// `zarr`): `UNSUPPORTED`, naming the feature.
#[cfg_attr(
    all(
        feature = "b2nd",
        feature = "hdf5",
        feature = "zarr",
        feature = "caterva2"
    ),
    allow(dead_code)
)]
pub(crate) fn not_built(location: &str, format: &'static str) -> crate::Error {
    FormatError::Unsupported {
        location: location.to_string(),
        format,
        detail: format!(
            "this build of chunkwise leaves out the {format} reader (cargo feature `{format}`)"
        ),
    }
    .into()
}

/// A build without Zarr: a Zarr root is refused as not built, and nothing falls back to Zarr.
#[cfg(not(feature = "zarr"))]
mod without_zarr {
    use super::*;

    pub async fn open_zarr(
        base: &str,
        _headers: Vec<(String, String)>,
        _options: OpenOptions,
        _coordinator: CacheCoordinator,
    ) -> Result<RemoteArray> {
        Err(not_built(base, "zarr"))
    }

    pub async fn open_zarr_store(
        base: &str,
        _headers: Vec<(String, String)>,
        _options: OpenOptions,
        _coordinator: CacheCoordinator,
    ) -> Result<RemoteStore> {
        Err(not_built(base, "zarr"))
    }

    pub async fn or_zarr<T, F, Fut>(
        first: Result<T>,
        _container_refused: bool,
        _zarr: F,
    ) -> Result<T>
    where
        F: FnOnce() -> Fut,
        Fut: std::future::Future<Output = Result<T>>,
    {
        first
    }
}

/// Bytes of a `.b2nd` frame's end asked together with its head on a cold open: its offsets
/// chunk and trailer live there ([`crate::formats::b2nd`]), so a large frame opens in one
/// round trip rather than two. 16 KiB holds the offsets of about 2,000 chunks stored raw
/// (compressed, many more) and a trailer with a few KiB of vlmeta, and costs about 1.3 ms
/// of transfer at 100 Mbit/s against the 40 ms or more of a round trip; a larger index is
/// completed by one more read of only its missing start. A small frame (held whole) then
/// needs at most the bytes between the two.
pub(crate) const B2ND_TAIL_BYTES: u64 = 16 * 1024;

/// The tail to ask with the head of the source at `location` ([`B2ND_TAIL_BYTES`] when its
/// name, without query or fragment, ends in `.b2nd`; else 0, none): the format is known only
/// once the head answers, so the name is the hint.
fn b2nd_tail_bytes(location: &str) -> u64 {
    if cfg!(feature = "b2nd") && name_ends_with(location, ".b2nd") {
        B2ND_TAIL_BYTES
    } else {
        0
    }
}

/// Whether the name of `location` (its path, without query or fragment) ends in `suffix`,
/// ASCII case ignored: the one reading of a name's extension, the hint an open takes from a
/// name before any byte answers (`.b2nd` tail, `.b2z`, the warm-up's format).
pub(crate) fn name_ends_with(location: &str, suffix: &str) -> bool {
    let path = location.split(['?', '#']).next().unwrap_or_default();
    path.len() >= suffix.len()
        && path.as_bytes()[path.len() - suffix.len()..].eq_ignore_ascii_case(suffix.as_bytes())
}

/// The first 8 bytes in hex, for the message of a source of no known format.
fn magic(head: &[u8]) -> String {
    head.iter().take(8).map(|b| format!("{b:02x}")).collect()
}

/// Whether `location` is an `http://` or `https://` URL (the scheme in any case, as RFC 3986
/// section 3.1 says schemes are case-insensitive). In wasm every location is fetched; natively
/// anything else is a local path.
pub fn is_url(location: &str) -> bool {
    let has = |scheme: &str| {
        location
            .get(..scheme.len())
            .is_some_and(|s| s.eq_ignore_ascii_case(scheme))
    };
    has("http://") || has("https://")
}

/// Refuses a location that starts with a URL scheme other than `http` or `https`
/// (`htp://x`, `ftp://host/f`, `s3://bucket/key`): natively it would otherwise be taken as a
/// local path and fail as `NOT_FOUND`, in wasm as a failed fetch, neither naming the cause.
/// A scheme is RFC 3986 section 3.1's `ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )`, here
/// followed by `://` and at least two characters long (so `C://dir` stays a path).
///
/// # Errors
/// [`crate::Error::InvalidArgument`] naming the scheme only (the rest of the location may
/// hold credentials).
pub fn check_scheme(location: &str) -> Result<()> {
    let Some((scheme, _)) = location.split_once("://") else {
        return Ok(());
    };
    let mut chars = scheme.chars();
    let is_scheme = scheme.len() >= 2
        && chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    if is_scheme && !is_url(location) {
        return Err(crate::Error::InvalidArgument(format!(
            "unsupported URL scheme {scheme} (use http, https or a local path)"
        )));
    }
    Ok(())
}

/// Whether `location` is a local path (native hosts only; wasm fetches every location).
fn is_local(location: &str) -> bool {
    !cfg!(target_arch = "wasm32") && !is_url(location)
}

/// Whether `location` names a Zarr store (or array) root without a probe: a URL or path
/// ending in `.zarr` ([`crate::formats::zarr::looks_like_store`]), or natively a local
/// directory.
pub fn is_zarr_root(location: &str) -> bool {
    crate::formats::signature::looks_like_zarr_store(location)
        || (is_local(location) && std::path::Path::new(location).is_dir())
}

/// The transport of `location` sending `headers`, counting into `traffic`: natively an
/// [`crate::io::http::HttpSource`] with retries around the counter for a URL, a counted
/// [`crate::io::file::FileSource`] for a local path.
///
/// # Errors
/// [`crate::io::IoError`] when the URL is invalid or the HTTP client cannot be built, or
/// the local file cannot be opened (a missing one is `NOT_FOUND`); `INVALID_ARGUMENT` for
/// another URL scheme ([`check_scheme`]).
#[cfg(not(target_arch = "wasm32"))]
pub fn transport(
    location: &str,
    headers: Vec<(String, String)>,
    traffic: &Traffic,
) -> Result<Arc<dyn RangeSource>> {
    use crate::io::http::{HttpOptions, HttpSource};
    check_scheme(location)?;
    if is_url(location) {
        let http = HttpSource::with_options(
            location,
            HttpOptions {
                headers,
                ..Default::default()
            },
        )?;
        Ok(counted_and_retried(http, traffic))
    } else {
        Ok(counted_file(location, traffic)?)
    }
}

/// `source` counted into `traffic` with retries around the counter, so every attempt counts
/// as a request: the stack of every HTTP transport, one object or each object of a store.
pub(crate) fn counted_and_retried<S: RangeSource + 'static>(
    source: S,
    traffic: &Traffic,
) -> Arc<dyn RangeSource> {
    Arc::new(Retrying::new(
        Counted::new(source, traffic.clone()),
        RetryConfig::default(),
    ))
}

/// The local file at `path`, counted into `traffic` (no retries: a file read fails for
/// good).
///
/// # Errors
/// As [`crate::io::file::FileSource::open`] (a missing file is `NOT_FOUND`).
#[cfg(not(target_arch = "wasm32"))]
pub(crate) fn counted_file(
    path: &str,
    traffic: &Traffic,
) -> std::result::Result<Arc<dyn RangeSource>, crate::io::IoError> {
    let file = crate::io::file::FileSource::open(path)?;
    Ok(Arc::new(Counted::new(file, traffic.clone())))
}

/// The transport of `location` sending `headers`, counting into `traffic`: a
/// [`crate::io::fetch::FetchSource`] with retries around the counter.
///
/// # Errors
/// None in wasm (a bad URL fails the first request); the `Result` matches native hosts.
#[cfg(target_arch = "wasm32")]
pub fn transport(
    location: &str,
    headers: Vec<(String, String)>,
    traffic: &Traffic,
) -> Result<Arc<dyn RangeSource>> {
    use crate::io::fetch::{FetchOptions, FetchSource};
    let fetch = FetchSource::with_options(
        location,
        FetchOptions {
            headers,
            ..Default::default()
        },
    );
    Ok(counted_and_retried(fetch, traffic))
}

/// The cache identity of `location` under `coordinator`'s salt
/// ([`CacheCoordinator::key_for`]): `cache_key` when given (CLI `--cache-key`, JS
/// `cacheKey`), else the URL as given (its query and user info only in the salted
/// fingerprint) or, natively, a local path made canonical; with the fingerprint of
/// `headers`.
pub fn source_key(
    location: &str,
    headers: &[(String, String)],
    coordinator: &CacheCoordinator,
    cache_key: Option<&str>,
) -> SourceKey {
    let location = if is_local(location) {
        std::fs::canonicalize(location)
            .map(|p| p.display().to_string())
            .unwrap_or_else(|_| location.to_string())
    } else {
        location.to_string()
    };
    coordinator.key_for(&location, headers, cache_key)
}

/// Opens the array at `location` (a file, an object URL, or a Zarr store or array root;
/// `options.path` picks a dataset of a container) whose caches `coordinator` owns, sending
/// `headers` with every request. A URL ending in `.zarr` or a local directory opens as Zarr;
/// so does a location with no object of its own (404) or with bytes of no known format, when
/// Zarr metadata is found there (else the first error stands).
///
/// # Errors
/// As [`RemoteArray::open_with_cache`] and [`RemoteArray::open_zarr_with_cache`]; the
/// transport's errors ([`transport`]); `INVALID_ARGUMENT` for a URL scheme other than http
/// and https ([`check_scheme`]).
pub async fn open_array(
    location: &str,
    headers: Vec<(String, String)>,
    options: OpenOptions,
    coordinator: CacheCoordinator,
) -> Result<RemoteArray> {
    check_scheme(location)?;
    if options.source == crate::array::SourceKind::Caterva2 {
        #[cfg(not(feature = "caterva2"))]
        return Err(not_built(location, "caterva2"));
        #[cfg(feature = "caterva2")]
        return caterva2::open_caterva2(location, headers, options, coordinator).await;
    }
    if is_zarr_root(location) {
        if !options.assume_immutable {
            refuse_mutable(location, "zarr")?;
        }
        let at_root = options
            .path
            .as_deref()
            .is_none_or(|p| p.trim_matches('/').is_empty());
        let opened = open_zarr(location, headers, options, coordinator).await;
        return if at_root {
            opened.map_err(|e| not_a_store(location, e))
        } else {
            opened
        };
    }
    #[cfg(feature = "b2nd")]
    if b2z::looks_like_b2z(location) {
        return b2z::open_b2z_array(location, headers, options, coordinator).await;
    }
    let (t, traffic, key) = object(location, &headers, &options, &coordinator)?;
    let first =
        RemoteArray::open_with_cache(t, traffic, options.clone(), coordinator.clone(), key).await;
    // A ZIP archive under another name: opened as a `.b2z` (one more request).
    #[cfg(feature = "b2nd")]
    if first.as_ref().err().is_some_and(is_zip) {
        return b2z::open_b2z_array(location, headers, options, coordinator).await;
    }
    or_zarr(first, false, || {
        open_zarr(location, headers, options, coordinator)
    })
    .await
}

/// The detail of [`zip_refused`], which [`is_zip`] recognises.
const ZIP_DETAIL: &str = "a ZIP archive (a .b2z container)";

/// The error a ZIP archive gets from the single-object openers: the callers that can open
/// a `.b2z` ([`open_array`], [`open_store`]) take it as the cue to do so.
fn zip_refused(location: &str) -> crate::Error {
    FormatError::Unsupported {
        location: location.to_string(),
        format: "b2z",
        detail: format!("{ZIP_DETAIL}: open it as a store (a name ending .b2z opens as one)"),
    }
    .into()
}

/// Whether `e` is [`zip_refused`]'s error.
#[cfg_attr(not(feature = "b2nd"), allow(dead_code))]
fn is_zip(e: &crate::Error) -> bool {
    matches!(e, crate::Error::Format(FormatError::Unsupported { format: "b2z", detail, .. }) if detail.starts_with(ZIP_DETAIL))
}

/// Opens the container at `location` (an HDF5 file, or a Zarr store: a URL ending in
/// `.zarr`, a local directory, or a location with no object of its own or holding no
/// container file) as a store whose caches `coordinator` owns, listed once.
/// `options.path` is ignored; `options.cache_key` names the source in the caches; the
/// other options apply to every [`RemoteStore::get`]. [`RemoteStore::refresh`] of the
/// store reads through a new transport (or Zarr store) of `location` and `headers`.
///
/// # Errors
/// As [`RemoteStore::open`] and [`RemoteStore::open_zarr`]; the transport's errors;
/// `INVALID_ARGUMENT` for a URL scheme other than http and https ([`check_scheme`]).
pub async fn open_store(
    location: &str,
    headers: Vec<(String, String)>,
    options: OpenOptions,
    coordinator: CacheCoordinator,
) -> Result<RemoteStore> {
    check_scheme(location)?;
    if options.source == crate::array::SourceKind::Caterva2 {
        #[cfg(not(feature = "caterva2"))]
        return Err(not_built(location, "caterva2"));
        #[cfg(feature = "caterva2")]
        return caterva2::open_store(location, headers, options, coordinator).await;
    }
    let zarr =
        |headers, options, coordinator| open_zarr_store(location, headers, options, coordinator);
    if is_zarr_root(location) {
        return zarr(headers, options, coordinator)
            .await
            .map_err(|e| not_a_store(location, e));
    }
    #[cfg(feature = "b2nd")]
    if b2z::looks_like_b2z(location) {
        return b2z::open_b2z_store(location, headers, options, coordinator).await;
    }
    let (t, traffic, key) = object(location, &headers, &options, &coordinator)?;
    let first = RemoteStore::open(t, traffic, options.clone(), coordinator.clone(), key).await;
    #[cfg(feature = "b2nd")]
    if first.as_ref().err().is_some_and(is_zip) {
        return b2z::open_b2z_store(location, headers, options, coordinator).await;
    }
    // A refresh reads through a new transport, which has seen no earlier answer.
    let (at, sent) = (location.to_string(), headers.clone());
    let first = first.map(|s| {
        s.with_reopen(Box::new(move |traffic: &Traffic| {
            Ok(Container::File(transport(&at, sent.clone(), traffic)?))
        }))
    });
    or_zarr(first, true, || zarr(headers, options, coordinator)).await
}

/// A local directory with no Zarr metadata at its root fails as `NOT_FOUND` saying so
/// ([`FormatError::NoSuchNode`]), not as the missing object `dir/` it was taken for; other
/// errors, and URLs, are returned as they are.
fn not_a_store(location: &str, e: crate::Error) -> crate::Error {
    match e {
        crate::Error::Io(crate::io::IoError::NotFound { .. })
            if is_local(location) && std::path::Path::new(location).is_dir() =>
        {
            FormatError::NoSuchNode {
                location: location.to_string(),
                detail: "a directory without Zarr metadata (no zarr.json, .zarray or .zgroup): \
                         give a file in it, or the directory of a Zarr store"
                    .into(),
            }
            .into()
        }
        other => other,
    }
}

/// What opening one object at `location` starts from: its transport, the traffic it counts
/// into (its own), and its cache identity ([`source_key`], with `options.cache_key`).
///
/// # Errors
/// As [`transport`].
fn object(
    location: &str,
    headers: &[(String, String)],
    options: &OpenOptions,
    coordinator: &CacheCoordinator,
) -> Result<(Arc<dyn RangeSource>, Traffic, SourceKey)> {
    let traffic = Traffic::new();
    let key = source_key(location, headers, coordinator, options.cache_key.as_deref());
    let t = transport(location, headers.to_vec(), &traffic)?;
    Ok((t, traffic, key))
}

/// Refuses the mutable-source mode ([`OpenOptions::assume_immutable`] false) for a source
/// of `format` (a seed tag or a detected format) other than a standalone `.b2nd` (spec:
/// remote cache design, "Freshness and refresh": the B2Z, HDF5 and Zarr adapters do not
/// support it).
///
/// # Errors
/// [`crate::Error::InvalidArgument`] naming the format.
pub(crate) fn refuse_mutable(location: &str, format: &str) -> Result<()> {
    // "b2nd" is the b2nd seed's tag (`B2ndSeed::FORMAT`), present in every build.
    if format == "b2nd" {
        return Ok(());
    }
    Err(crate::Error::InvalidArgument(format!(
        "{location}: assume_immutable = false (CLI --mutable) is supported for standalone \
         .b2nd arrays only; this source is {format}, whose reader assumes an immutable source \
         (publish changed data at a new URL, or refresh a store)"
    )))
}

/// Whether `transport` still serves the version `recorded` describes: one request for the
/// first byte, whose answer's size and validators must match the recorded ones (lengths
/// equal, and an `ETag` or `Last-Modified` carried by both equal: the rule of
/// [`crate::io::Validated`]). An object that became empty has changed.
///
/// # Errors
/// I/O errors of that request other than a change (a source now missing is `NOT_FOUND`).
async fn unchanged(transport: &Arc<dyn RangeSource>, recorded: &SourceInfo) -> Result<bool> {
    let checked = crate::io::Validated::new(transport.clone(), recorded.clone());
    match checked.read(ByteRange::bounded(0..1)).await {
        Ok(_) => Ok(true),
        Err(crate::io::IoError::SourceChanged { .. })
        | Err(crate::io::IoError::RangeNotSatisfiable { .. }) => Ok(false),
        Err(e) => Err(e.into()),
    }
}

/// The discovery record of `seed` for the source `info`.
pub(crate) fn record(info: &SourceInfo, seed: Seed) -> DiscoveryRecord {
    DiscoveryRecord {
        version: DISCOVERY_VERSION,
        source: info.into(),
        format: seed.format,
        seed_version: seed.version,
        seed: seed.value,
    }
}

/// The seed a discovery record holds.
pub(crate) fn seed_of(rec: &DiscoveryRecord) -> Seed {
    Seed {
        format: rec.format.clone(),
        version: rec.seed_version,
        value: rec.seed.clone(),
    }
}

/// The reader `seed` describes, for the source at `location` of `len` bytes, by its tag:
/// `None` for a tag or version no format here owns, or a seed that no longer builds a
/// reader (a miss: discover afresh).
pub fn rebuild(seed: &Seed, location: &str, len: u64) -> Option<Box<dyn ArrayFormat>> {
    match seed.format.as_str() {
        #[cfg(feature = "b2nd")]
        B2ndSeed::FORMAT => B2ndSeed::from_seed(seed)?
            .rebuild(location, len)
            .ok()
            .map(|a| Box::new(a) as Box<dyn ArrayFormat>),
        #[cfg(feature = "hdf5")]
        Hdf5Seed::FORMAT => Hdf5Seed::from_seed(seed)?
            .rebuild(location, len)
            .ok()
            .map(|a| Box::new(a) as Box<dyn ArrayFormat>),
        _ => None,
    }
}

/// A handle on a discovered (or rebuilt) reader: its payload identity is the source key,
/// the scope, and the source's size and validators.
#[allow(clippy::too_many_arguments)]
pub(crate) fn assemble(
    source: Arc<dyn RangeSource>,
    format: Box<dyn ArrayFormat>,
    coordinator: CacheCoordinator,
    key: &SourceKey,
    scope: &str,
    options: OpenOptions,
    traffic: Traffic,
    info: SourceInfo,
) -> RemoteArray {
    let identity: Arc<str> = Arc::from(format!(
        "{}\nlen={};etag={};lm={}",
        key.scoped(scope),
        info.len,
        info.etag.as_deref().unwrap_or(""),
        info.last_modified.as_deref().unwrap_or("")
    ));
    let converted = (!format.payload_is_blosc2() && coordinator.retains_payload())
        .then(|| convert::stamp(&identity, format.grid(), format.dtype()));
    RemoteArray::from_parts(
        source,
        format,
        coordinator,
        options,
        traffic,
        key.clone(),
        identity,
        converted,
        info,
        None,
    )
}

/// Opening from a transport or a Zarr store (the steps [`open_array`] composes).
impl RemoteArray {
    /// Opens an array from a transport. `transport` should already count its requests into
    /// `traffic` (wrap it in [`crate::io::Counted`]); reads served from the cache or from a
    /// complete in-memory copy never reach it.
    ///
    /// # Errors
    /// I/O errors of the first reads; [`FormatError`] when the source is not a supported
    /// array or is malformed.
    pub async fn open_source(
        transport: Arc<dyn RangeSource>,
        traffic: Traffic,
        options: OpenOptions,
    ) -> Result<RemoteArray> {
        let coordinator = CacheCoordinator::new(options.cache, options.max_cache_bytes)?;
        let key = coordinator.source_key(transport.location(), &[]);
        Self::open_with_cache(transport, traffic, options, coordinator, key).await
    }

    /// Opens an array whose caches are owned by `coordinator` (shared with other arrays and
    /// stores), under the cache identity `key` (URL and credential fingerprint of the
    /// request headers `transport` sends). `options.cache` and `options.max_cache_bytes`
    /// are the coordinator's business and ignored here.
    ///
    /// Warm (a discovery record for `key` and `options.path` is held): no request; the
    /// recorded size and validators are trusted (sources are assumed immutable), and every
    /// later answer of the transport is checked against them ([`crate::io::Validated`]): a
    /// source rewritten at the same URL fails the read with `SOURCE_CHANGED` and its cached
    /// records and payload are dropped, so the next open discovers it afresh. Cold: as
    /// [`RemoteArray::open_source`] describes, except that a complete copy of a small
    /// source already held by the coordinator replaces the fetch; the discovery record and
    /// a small source's copy are then stored.
    ///
    /// With [`OpenOptions::assume_immutable`] false (a standalone `.b2nd` only), a warm open
    /// first requests the source's first byte and compares the answer's identity with the
    /// record: the same, the record is reused (no further request); changed, the source is
    /// forgotten ([`CacheCoordinator::forget_source`]) and discovered afresh. A cold open's
    /// head read is its check (a held small-source copy is not used unseen).
    /// [`RemoteArray::cache_status`] says which happened.
    ///
    /// # Errors
    /// As [`RemoteArray::open_source`]; [`crate::Error::InvalidArgument`] when
    /// `assume_immutable` is false and the source (its record, or its first bytes) is not a
    /// `.b2nd`.
    pub async fn open_with_cache(
        transport: Arc<dyn RangeSource>,
        traffic: Traffic,
        options: OpenOptions,
        coordinator: CacheCoordinator,
        key: SourceKey,
    ) -> Result<RemoteArray> {
        Self::open_with_cache_and_head(transport, traffic, options, coordinator, key, None).await
    }

    /// [`RemoteArray::open_with_cache`] with the source's first bytes and identity already
    /// read through `transport` (a store's open read them: [`RemoteStore::get`]): a cold
    /// open discovers from them with no head request. `head` must hold the first
    /// [`OpenOptions::head_bytes`] of a source larger than
    /// [`OpenOptions::small_source_bytes`] (a small one is held whole by the coordinator).
    ///
    /// # Errors
    /// As [`RemoteArray::open_with_cache`].
    pub(crate) async fn open_with_cache_and_head(
        transport: Arc<dyn RangeSource>,
        traffic: Traffic,
        options: OpenOptions,
        coordinator: CacheCoordinator,
        key: SourceKey,
        head: Option<(Bytes, SourceInfo)>,
    ) -> Result<RemoteArray> {
        let coordinator = coordinator.for_source(&key);
        let scope = options.path.clone().unwrap_or_default();
        let record_key = key.scoped(&scope);
        let source_id = key.source_id();
        let mutable = !options.assume_immutable;
        let mut copy = coordinator.source_copy(&source_id).await;
        let mut status = CacheStatus::Created;
        match coordinator.discovery_lookup(&record_key).await {
            Ok(rec) => {
                // Records hold the public URL only; the transport knows the one to request.
                let info = SourceInfo {
                    location: transport.location().to_string(),
                    ..SourceInfo::from(&rec.source)
                };
                if mutable {
                    refuse_mutable(&info.location, &rec.format)?;
                }
                if !mutable || unchanged(&transport, &info).await? {
                    let source: Arc<dyn RangeSource> = match &copy {
                        Some((ident, bytes)) if *ident == rec.source => {
                            Arc::new(MemorySource::with_info(info.clone(), bytes.clone()))
                        }
                        _ => Arc::new(crate::io::Validated::new(transport.clone(), info.clone())),
                    };
                    // A record that no longer builds a reader is a miss: discover afresh.
                    if let Some(format) = rebuild(&seed_of(&rec), &info.location, info.len) {
                        return Ok(assemble(
                            source,
                            format,
                            coordinator,
                            &key,
                            &scope,
                            options,
                            traffic,
                            info,
                        )
                        .with_cache_status(CacheStatus::Reused));
                    }
                } else {
                    // Nothing of the recorded version may serve the new one.
                    coordinator.forget_source(&key).await;
                }
                status = CacheStatus::Invalidated;
            }
            Err(true) => status = CacheStatus::Invalidated,
            Err(false) => {}
        }
        if mutable {
            // The head read is the identity check: a held copy is not trusted unseen.
            copy = None;
        }
        let tail = b2nd_tail_bytes(transport.location());
        let (source, head_bytes, info, tail) = match head {
            // The first bytes a store's open read: no request (a held copy is used first).
            Some((head, info)) if copy.is_none() && !mutable => (transport, head, info, None),
            _ => {
                Self::open_bytes(transport, &options, &coordinator, &source_id, copy, tail).await?
            }
        };
        let detected = detect(&head_bytes);
        if mutable && detected != Detected::B2nd {
            let format = match detected {
                Detected::Hdf5 => "hdf5",
                _ => "unknown",
            };
            refuse_mutable(&info.location, format)?;
        }
        let len = info.len;
        let format: Box<dyn ArrayFormat> = match detected {
            #[cfg(feature = "b2nd")]
            Detected::B2nd => {
                let tail = tail.map(|t| (t.range.start, t.bytes));
                Box::new(B2ndArray::open_with_tail(&*source, head_bytes, tail, len).await?)
            }
            #[cfg(feature = "hdf5")]
            Detected::Hdf5 => {
                Box::new(Hdf5Array::open(&*source, head_bytes, len, options.path.as_deref()).await?)
            }
            #[cfg(not(feature = "b2nd"))]
            Detected::B2nd => return Err(not_built(&info.location, "b2nd")),
            #[cfg(not(feature = "hdf5"))]
            Detected::Hdf5 => return Err(not_built(&info.location, "hdf5")),
            Detected::Zip => return Err(zip_refused(&info.location)),
            Detected::Unknown => {
                return Err(FormatError::Unrecognised {
                    location: info.location.clone(),
                    magic: magic(&head_bytes),
                }
                .into())
            }
        };
        if let Some(seed) = format.seed() {
            coordinator
                .put_discovery(&record_key, &record(&info, seed))
                .await;
        }
        Ok(assemble(
            source,
            format,
            coordinator,
            &key,
            &scope,
            options,
            traffic,
            info,
        )
        .with_cache_status(status))
    }

    /// The source to discover from, its first bytes, its identity and the last bytes read
    /// with them: the coordinator's complete copy `copy` of a small source when held (no
    /// request), else [`RemoteArray::fetch_head_and_tail`] (a suffix of `tail` bytes asked
    /// with the head, 0 for none), publishing a small source's bytes as the copy of
    /// `source_id` (spec: remote cache design, "Complete source object").
    pub(crate) async fn open_bytes(
        transport: Arc<dyn RangeSource>,
        options: &OpenOptions,
        coordinator: &CacheCoordinator,
        source_id: &str,
        copy: Option<(SourceIdentity, Bytes)>,
        tail: u64,
    ) -> Result<(Arc<dyn RangeSource>, Bytes, SourceInfo, Option<Fetched>)> {
        if let Some((ident, bytes)) = copy {
            let info = SourceInfo::from(&ident);
            return Ok((
                Arc::new(MemorySource::with_info(info.clone(), bytes.clone())),
                bytes,
                info,
                None,
            ));
        }
        let (source, head, info, tail) =
            Self::fetch_head_and_tail(transport, options, tail).await?;
        if info.len <= options.small_source_bytes {
            coordinator
                .put_source_copy(source_id, &(&info).into(), head.clone())
                .await;
        }
        Ok((source, head, info, tail))
    }

    /// The first read of a cold open: [`OpenOptions::head_bytes`] from the start, and for a
    /// small source the rest of it. Returns the source to read from (a complete copy in
    /// memory for a small source), the first bytes (all of them for a small source) and
    /// the source's identity.
    pub(crate) async fn fetch_head(
        transport: Arc<dyn RangeSource>,
        options: &OpenOptions,
    ) -> Result<(Arc<dyn RangeSource>, Bytes, SourceInfo)> {
        let (source, head, info, _) = Self::fetch_head_and_tail(transport, options, 0).await?;
        Ok((source, head, info))
    }

    /// [`RemoteArray::fetch_head`], with the last `tail` bytes of the source asked at the
    /// same time (a suffix range, concurrent with the head: no extra round trip) when `tail`
    /// is not 0. A small source's rest is then only what neither read brought. Returns the
    /// tail as read when the source is not held whole; a tail read that failed or whose
    /// answer disagrees with the head's identity is dropped (the bytes are asked again where
    /// needed).
    pub(crate) async fn fetch_head_and_tail(
        transport: Arc<dyn RangeSource>,
        options: &OpenOptions,
        tail: u64,
    ) -> Result<(Arc<dyn RangeSource>, Bytes, SourceInfo, Option<Fetched>)> {
        let head_read = transport.read(ByteRange::bounded(0..options.head_bytes.max(16)));
        let (head, tail) = if tail == 0 {
            (head_read.await, None)
        } else {
            // Both run to the end, also when the head alone brought the whole object (a
            // small one, or a server that ignored `Range`): the tail's bytes are then already
            // on their way, and a dropped read would leave them out of the traffic counters.
            let (head, tail) =
                futures::future::join(head_read, transport.read(ByteRange::Suffix(tail))).await;
            (head, tail.ok())
        };
        let head = match head {
            // An empty object cannot hold any array: say so rather than "range not satisfiable".
            Err(crate::io::IoError::RangeNotSatisfiable { len: 0, .. }) => {
                return Err(FormatError::Unrecognised {
                    location: transport.location().to_string(),
                    magic: "(empty: 0 bytes)".into(),
                }
                .into())
            }
            other => other?,
        };
        let info = head.info.clone();
        let len = info.len;
        // The tail must be of the same object as the head, and end where it ends.
        let tail = tail.filter(|t| {
            t.info == info
                && t.range.end == len
                && t.bytes.len() as u64 == t.range.end - t.range.start
        });
        // A server that ignored `Range` sent the whole object already: keep it rather than
        // ask again (each later read would download it whole too).
        if let Some(whole) = head.whole.filter(|w| w.len() as u64 == len) {
            let source: Arc<dyn RangeSource> =
                Arc::new(MemorySource::with_info(info.clone(), whole.clone()));
            let head_bytes = if len <= options.small_source_bytes {
                whole
            } else {
                head.bytes
            };
            return Ok((source, head_bytes, info, None));
        }
        if len > options.small_source_bytes {
            return Ok((transport, head.bytes, info, tail));
        }
        // Fetch only what the first reads did not bring: the bytes between the head's end
        // and the tail's start (the source's end without a tail).
        let end = tail
            .as_ref()
            .map_or(len, |t| t.range.start.max(head.range.end));
        let whole = if head.range.end >= len {
            head.bytes.clone()
        } else {
            let mut v = Vec::with_capacity(len as usize);
            v.extend_from_slice(&head.bytes);
            if head.range.end < end {
                let rest = transport
                    .read(ByteRange::bounded(head.range.end..end))
                    .await?;
                if rest.range != (head.range.end..end) {
                    return Err(crate::io::IoError::BadContentRange {
                        location: info.location.clone(),
                        detail: format!("asked {}..{end}, got {:?}", head.range.end, rest.range),
                    }
                    .into());
                }
                v.extend_from_slice(&rest.bytes);
            }
            if let Some(t) = &tail {
                v.extend_from_slice(&t.bytes[(end - t.range.start) as usize..]);
            }
            Bytes::from(v)
        };
        Ok((
            Arc::new(MemorySource::with_info(info.clone(), whole.clone())),
            whole,
            info,
            None,
        ))
    }
}

/// Opening a container from a transport or a Zarr store (the steps [`open_store`] composes).
impl RemoteStore {
    /// Opens the container at `transport` (counting into `traffic`) and lists it. `key` is
    /// the cache identity (URL and fingerprint of the headers `transport` sends).
    /// `options.path` is ignored; the other options apply to every [`RemoteStore::get`].
    ///
    /// Warm (the coordinator holds the listing): no request. A store made here refreshes
    /// ([`RemoteStore::refresh`]) through `transport` itself, which, if it checks its
    /// answers as the HTTP transport does, fails with `SOURCE_CHANGED` once the file was
    /// rewritten; [`open_store`]'s stores refresh through a new transport.
    ///
    /// # Errors
    /// I/O errors; [`FormatError::Unsupported`] when the source is not a container read
    /// here (HDF5 only for now; a `.b2nd` is a single array: open it with
    /// [`RemoteArray::open_with_cache`]); [`FormatError::Invalid`] when the root group
    /// cannot be read; [`crate::Error::InvalidArgument`] for
    /// [`OpenOptions::assume_immutable`] false (stores assume an immutable source; see
    /// [`RemoteStore::refresh`]).
    pub async fn open(
        transport: Arc<dyn RangeSource>,
        traffic: Traffic,
        options: OpenOptions,
        coordinator: CacheCoordinator,
        key: SourceKey,
    ) -> Result<RemoteStore> {
        if !options.assume_immutable {
            refuse_mutable(transport.location(), "a store (HDF5)")?;
        }
        let coordinator = coordinator.for_source(&key);
        let options = OpenOptions {
            path: None,
            ..options
        };
        let store = |info: SourceInfo, nodes: Vec<crate::formats::Node>, status| {
            RemoteStore::from_parts(
                Container::File(transport.clone()),
                traffic.clone(),
                coordinator.clone(),
                key.clone(),
                options.clone(),
                info,
                nodes,
                status,
            )
        };
        #[cfg(feature = "hdf5")]
        let status = match coordinator.discovery_lookup(&key.scoped(NODES_SCOPE)).await {
            Ok(rec) => {
                // A listing of another seed version is a miss: list afresh.
                if let Some(listing) = Hdf5ListingSeed::from_seed(&seed_of(&rec)) {
                    let info = SourceInfo {
                        location: transport.location().to_string(),
                        ..SourceInfo::from(&rec.source)
                    };
                    return Ok(store(info, listing.nodes, CacheStatus::Reused));
                }
                CacheStatus::Invalidated
            }
            Err(true) => CacheStatus::Invalidated,
            Err(false) => CacheStatus::Created,
        };
        #[cfg(not(feature = "hdf5"))]
        let status = CacheStatus::Created;
        let source_id = key.source_id();
        let copy = coordinator.source_copy(&source_id).await;
        let (source, head, info, _) = RemoteArray::open_bytes(
            transport.clone(),
            &options,
            &coordinator,
            &source_id,
            copy,
            0,
        )
        .await?;
        let large = info.len > options.small_source_bytes;
        let nodes = list_container(&*source, head.clone(), &info).await?;
        #[cfg(feature = "hdf5")]
        put_listing(&coordinator, &key, &info, &nodes).await;
        let store = store(info, nodes, status);
        // A large file's first bytes serve the first `get` too (a small one is held whole).
        Ok(if large { store.with_head(head) } else { store })
    }
}

/// The listing of the container whose first bytes (all of them for a small source) are
/// `head`, read from `source` of identity `info`: an HDF5 file's groups and datasets, with
/// shapes and dtypes from object headers, no chunk index read (chunk maps wait until a
/// dataset is opened).
///
/// # Errors
/// [`FormatError::Unsupported`] for a source that is no HDF5 file (or a build without
/// `hdf5`); the listing's errors.
async fn list_container(
    source: &dyn RangeSource,
    head: Bytes,
    info: &SourceInfo,
) -> Result<Vec<crate::formats::Node>> {
    let detected = detect(&head);
    if detected == Detected::Zip {
        return Err(zip_refused(&info.location));
    }
    if detected != Detected::Hdf5 {
        let what = if detected == Detected::B2nd {
            "a Blosc2 frame (a single array: open it as an array)".to_string()
        } else {
            format!("first bytes {}", magic(&head))
        };
        return Err(FormatError::Unsupported {
            location: info.location.clone(),
            format: "store",
            detail: format!("stores list HDF5 files and Zarr stores; this source is {what}"),
        }
        .into());
    }
    #[cfg(not(feature = "hdf5"))]
    {
        let _ = source;
        Err(not_built(&info.location, "hdf5"))
    }
    #[cfg(feature = "hdf5")]
    {
        // The batched listing: one round per depth of the hierarchy.
        crate::formats::hdf5::list(source, head, info.len).await
    }
}

/// Records the listing `nodes` of the HDF5 file `info` under `key`.
#[cfg(feature = "hdf5")]
async fn put_listing(
    coordinator: &CacheCoordinator,
    key: &SourceKey,
    info: &SourceInfo,
    nodes: &[crate::formats::Node],
) {
    let listing = Hdf5ListingSeed {
        nodes: crate::formats::redact_node_errors(nodes.to_vec()),
    };
    coordinator
        .put_discovery(&key.scoped(NODES_SCOPE), &record(info, listing.to_seed()))
        .await;
}

/// A store's generation prepared by [`fresh_generation`], not yet published.
pub(crate) struct FreshGeneration {
    /// What the generation's arrays read from (a small file's bytes in memory).
    pub container: Container,
    /// The container's identity at this discovery.
    pub info: SourceInfo,
    /// Its listing.
    pub nodes: Vec<crate::formats::Node>,
    /// A small file's complete bytes, to become the source copy.
    pub copy: Option<Bytes>,
}

/// A generation of a store prepared from `container` (a fresh transport or Zarr store)
/// without reading or writing any cache: an HDF5 file's head read (for a small file, the
/// whole file) and listing, or a Zarr store's listing.
///
/// # Errors
/// Those of the reads and of the listing.
pub(crate) async fn fresh_generation(
    container: Container,
    options: &OpenOptions,
    b2z: bool,
) -> Result<FreshGeneration> {
    #[cfg(feature = "b2nd")]
    if let (true, Container::File(transport)) = (b2z, &container) {
        let (store, whole) = crate::formats::b2z::B2zStore::discover(
            transport.clone(),
            options.small_source_bytes,
            options.concurrency,
        )
        .await?;
        return Ok(FreshGeneration {
            info: store.info().clone(),
            nodes: store.nodes().to_vec(),
            container: Container::B2z(Arc::new(store)),
            copy: whole,
        });
    }
    let _ = b2z;
    match container {
        Container::File(transport) => {
            let (source, head, info) = RemoteArray::fetch_head(transport, options).await?;
            let small = info.len <= options.small_source_bytes;
            let copy = small.then(|| head.clone());
            let nodes = list_container(&*source, head, &info).await?;
            // Arrays of the new generation read through `source`: a small file's complete
            // copy in memory, else the new transport, whose HTTP answers are checked against
            // the first one it saw (this version).
            Ok(FreshGeneration {
                container: Container::File(source),
                info,
                nodes,
                copy,
            })
        }
        #[cfg(feature = "zarr")]
        Container::Zarr(store) => {
            let nodes = crate::formats::zarr::list_nodes(&store).await?;
            let info = SourceInfo {
                location: store.base().to_string(),
                ..Default::default()
            };
            Ok(FreshGeneration {
                container: Container::Zarr(store),
                info,
                nodes,
                copy: None,
            })
        }
        #[cfg(feature = "b2nd")]
        Container::B2z(_) => Err(crate::Error::InvalidArgument(
            "a .b2z store refreshes through a new transport of its URL".into(),
        )),
        #[cfg(feature = "caterva2")]
        Container::Caterva2(client) => {
            let nodes = caterva2::list(&client).await?;
            let info = SourceInfo {
                location: client.base().to_string(),
                ..Default::default()
            };
            Ok(FreshGeneration {
                container: Container::Caterva2(client),
                info,
                nodes,
                copy: None,
            })
        }
    }
}

/// Replaces what `coordinator` holds for the source `key` by the generation `fresh`:
/// everything of the old version is dropped ([`CacheCoordinator::forget_source`]: records
/// of every scope, the source copy, payload), then the new one is recorded (HDF5: the
/// listing record and a small file's copy; Zarr: the store's remembered metadata).
pub(crate) async fn publish_generation(
    fresh: &FreshGeneration,
    coordinator: &CacheCoordinator,
    key: &SourceKey,
) {
    let coordinator = coordinator.for_source(key);
    coordinator.forget_source(key).await;
    if let Some(bytes) = &fresh.copy {
        coordinator
            .put_source_copy(&key.source_id(), &(&fresh.info).into(), bytes.clone())
            .await;
    }
    match &fresh.container {
        Container::File(_) => {
            #[cfg(feature = "hdf5")]
            put_listing(&coordinator, key, &fresh.info, &fresh.nodes).await;
        }
        #[cfg(feature = "zarr")]
        Container::Zarr(store) => zarr::keep_zarr(store, &coordinator, key).await,
        #[cfg(feature = "b2nd")]
        Container::B2z(store) => b2z::publish(store, None, &coordinator, key).await,
        // The listing is not recorded; datasets keep records under keys of their own.
        #[cfg(feature = "caterva2")]
        Container::Caterva2(_) => {}
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;

    fn fixture(rel: &str) -> String {
        format!("{}/tests/fixtures/{rel}", env!("CARGO_MANIFEST_DIR"))
    }

    fn coordinator() -> CacheCoordinator {
        CacheCoordinator::memory(1 << 20)
    }

    /// Whether `e` is the refusal of a format this build leaves out.
    fn not_built_error(e: &crate::Error, feature: &str) -> bool {
        e.code() == "UNSUPPORTED"
            && e.to_string()
                .contains(&format!("cargo feature `{feature}`"))
    }

    #[tokio::test]
    async fn formats_left_out_of_the_build_are_unsupported_naming_the_feature() {
        let (h5, zarr) = ("hdf5/byteorder.h5", "zarr/v2.zarr");
        let array = |rel: &str| {
            let path = fixture(rel);
            async move { open_array(&path, vec![], OpenOptions::default(), coordinator()).await }
        };
        let store = |rel: &str| {
            let path = fixture(rel);
            async move { open_store(&path, vec![], OpenOptions::default(), coordinator()).await }
        };
        let (h5_store, zarr_store) = (store(h5).await, store(zarr).await);
        let (h5, zarr) = (array(h5).await, array(zarr).await);
        assert_eq!(
            h5.as_ref()
                .err()
                .is_some_and(|e| not_built_error(e, "hdf5")),
            !cfg!(feature = "hdf5"),
            "{h5:?}"
        );
        assert_eq!(
            h5_store
                .as_ref()
                .err()
                .is_some_and(|e| not_built_error(e, "hdf5")),
            !cfg!(feature = "hdf5")
        );
        // A Zarr root without the feature: refused, not probed as another format.
        assert_eq!(
            zarr.as_ref()
                .err()
                .is_some_and(|e| not_built_error(e, "zarr")),
            !cfg!(feature = "zarr")
        );
        assert_eq!(
            zarr_store
                .as_ref()
                .err()
                .is_some_and(|e| not_built_error(e, "zarr")),
            !cfg!(feature = "zarr")
        );
    }

    /// Without the `caterva2` feature a Caterva2 source is refused before any request
    /// (port 9 of loopback: nothing is asked of it).
    #[cfg(not(feature = "caterva2"))]
    #[tokio::test]
    async fn caterva2_left_out_of_the_build_is_unsupported_naming_the_feature() {
        let options = || OpenOptions {
            source: crate::array::SourceKind::Caterva2,
            path: Some("@public/ds.b2nd".into()),
            ..Default::default()
        };
        let base = "http://127.0.0.1:9/";
        let array = open_array(base, vec![], options(), coordinator()).await;
        assert!(
            array
                .as_ref()
                .err()
                .is_some_and(|e| not_built_error(e, "caterva2")),
            "{:?}",
            array.err()
        );
        let store = open_store(base, vec![], options(), coordinator()).await;
        assert!(store
            .as_ref()
            .err()
            .is_some_and(|e| not_built_error(e, "caterva2")));
    }

    #[cfg(feature = "b2nd")]
    #[tokio::test]
    async fn a_b2nd_build_reads_b2nd_values_as_written() {
        let arr = open_array(
            &fixture("blosc2/be_i4.b2nd"),
            vec![],
            OpenOptions::default(),
            coordinator(),
        )
        .await
        .unwrap();
        let got = arr
            .read(&crate::selection::Selection::all(), &Default::default())
            .await
            .unwrap();
        let want =
            crate::npy::read_npy(&std::fs::read(fixture("blosc2/be_i4.npy")).unwrap()).unwrap();
        assert_eq!(got.shape, want.shape);
        assert_eq!(got.data, want.data);
    }
}
