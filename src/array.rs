//! [`RemoteArray`]: the format-agnostic handle users open and read from.
//!
//! Opening reads the first [`OpenOptions::head_bytes`] of the source in one bounded request,
//! which also reveals the object's size. A source of at most
//! [`OpenOptions::small_source_bytes`] (8 MiB, spec: "Complete source object") is then held
//! whole in memory for the session, so later reads make no request. The format is detected
//! from the first bytes and runs its discovery.
//!
//! Reading plans the selection against the chunk grid ([`crate::selection::Plan`]), looks
//! each touched chunk up in the [`PayloadCache`], coalesces the misses into as few range
//! requests as the gaps allow ([`crate::io::coalesce`]), fetches them concurrently (bounded),
//! keeps the compressed bytes in the cache (MEMORY policy), decodes and assembles.
//!
//! Caching is owned by a [`CacheCoordinator`] ([`RemoteArray::open_with_cache`]; a
//! standalone [`RemoteArray::open_source`] gets its own). Opening first asks it for the
//! discovery record of the source and scope: a warm reopen rebuilds the reader without a
//! request. Chunks of formats that are not Blosc2 are kept converted to Blosc2
//! ([`crate::cache::convert`]).

use crate::cache::discovery::{DiscoveryRecord, DISCOVERY_VERSION};
use crate::cache::{
    convert, CacheCoordinator, CachePolicy, PayloadCache, Seed, SourceKey, DEFAULT_MAX_CACHE_BYTES,
};
use crate::dtype::DType;
use crate::element::Element;
use crate::error::{Error, Result};
use crate::formats::{b2nd::B2ndArray, ArrayFormat, ArrayInfo, FormatError};
use crate::io::memory::MemorySource;
use crate::io::{ByteRange, RangeSource, SourceInfo, Traffic, TrafficSnapshot};
use crate::selection::Selection;
use bytes::Bytes;
use std::sync::Arc;

/// Options for [`RemoteArray::open_source`].
#[derive(Debug, Clone)]
pub struct OpenOptions {
    /// Payload cache policy (default MEMORY).
    pub cache: CachePolicy,
    /// Bound of retained compressed payload in bytes (default 256 MiB).
    pub max_cache_bytes: u64,
    /// Bytes read from the start of the source at open (default 64 KiB): enough for a frame
    /// header and metalayers in one request.
    pub head_bytes: u64,
    /// Sources up to this size are fetched whole once and read from memory (default 8 MiB).
    pub small_source_bytes: u64,
    /// Largest gap (bytes) between two wanted ranges that is read through rather than split
    /// into two requests (default 512 KiB: about one round trip of transfer at 40 ms and
    /// 100 Mbit/s, `../docs` facts on coalescing).
    pub coalesce_gap: u64,
    /// Concurrent range requests per read (default 6, a browser's connections per origin).
    pub concurrency: usize,
    /// Largest result a read may allocate, in bytes (default 2 GiB; 1 GiB on wasm32).
    pub max_result_bytes: u64,
    /// Stored chunks at least this large (bytes) are read block by block when the selection
    /// touches at most half of their blocks (default 256 KiB). Costs one more round trip
    /// (the chunk header and block offsets first), saves the untouched blocks' bytes.
    pub block_read_min_bytes: u64,
    /// Path of the array inside a container (an HDF5 dataset such as `/group/data`); `None`
    /// opens an HDF5 file's only root dataset. Ignored by single-array formats.
    pub path: Option<String>,
    /// A name that identifies the source in the caches instead of its URL (CLI
    /// `--cache-key`, JS `cacheKey`), for a source whose URL rotates such as a signed URL:
    /// see [`crate::cache::SourceKey::named`]. Openers that derive the cache key from a URL
    /// use it ([`CacheCoordinator::key_for`]); functions that take a key ignore it.
    pub cache_key: Option<String>,
}

impl Default for OpenOptions {
    fn default() -> Self {
        OpenOptions {
            cache: CachePolicy::Memory,
            max_cache_bytes: DEFAULT_MAX_CACHE_BYTES,
            head_bytes: 64 * 1024,
            small_source_bytes: 8 * 1024 * 1024,
            coalesce_gap: 512 * 1024,
            concurrency: 6,
            max_result_bytes: if cfg!(target_arch = "wasm32") {
                1 << 30
            } else {
                2 << 30
            },
            block_read_min_bytes: 256 * 1024,
            path: None,
            cache_key: None,
        }
    }
}

pub use crate::pipeline::{ArrayData, CancelFlag, Progress, ReadOptions};

/// A remote (or local) array opened for reading.
pub struct RemoteArray {
    source: Arc<dyn RangeSource>,
    format: Box<dyn ArrayFormat>,
    coordinator: CacheCoordinator,
    options: OpenOptions,
    traffic: Traffic,
    /// The source's cache identity (what [`CacheCoordinator::forget_source`] drops when the
    /// source changed under its records).
    key: SourceKey,
    /// Payload identity: source key, scope, size and validators.
    identity: Arc<str>,
    /// Payload identity of converted chunks ([`convert::stamp`]); `None` for Blosc2
    /// formats and when no payload is retained.
    converted: Option<Arc<str>>,
    info: SourceInfo,
    /// Set for a Zarr array, whose chunks are objects of their own (see [`RemoteArray::open_zarr`]).
    zarr: Option<Arc<crate::formats::zarr::ZarrArray>>,
}

impl std::fmt::Debug for RemoteArray {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteArray")
            .field("identity", &self.identity)
            .finish()
    }
}

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
    /// # Errors
    /// As [`RemoteArray::open_source`].
    pub async fn open_with_cache(
        transport: Arc<dyn RangeSource>,
        traffic: Traffic,
        options: OpenOptions,
        coordinator: CacheCoordinator,
        key: SourceKey,
    ) -> Result<RemoteArray> {
        let coordinator = coordinator.for_source(&key);
        let scope = options.path.clone().unwrap_or_default();
        let record_key = key.scoped(&scope);
        let source_id = key.source_id();
        let copy = coordinator.source_copy(&source_id).await;
        if let Some(rec) = coordinator.discovery(&record_key).await {
            // Records hold the public URL only; the transport knows the one to request.
            let info = SourceInfo {
                location: transport.location().to_string(),
                ..SourceInfo::from(&rec.source)
            };
            let source: Arc<dyn RangeSource> = match &copy {
                Some((ident, bytes)) if *ident == rec.source => {
                    Arc::new(MemorySource::with_info(info.clone(), bytes.clone()))
                }
                _ => Arc::new(crate::io::Validated::new(transport.clone(), info.clone())),
            };
            // A record that no longer builds a reader is a miss: discover afresh.
            if let Ok(format) = rec.seed.rebuild(&info.location, info.len) {
                return Ok(Self::assemble(
                    source,
                    format,
                    coordinator,
                    &key,
                    &scope,
                    options,
                    traffic,
                    info,
                ));
            }
        }
        let (source, head_bytes, info) =
            Self::open_bytes(transport, &options, &coordinator, &source_id, copy).await?;
        let len = info.len;
        let format: Box<dyn ArrayFormat> = if crate::formats::b2nd::is_frame(&head_bytes) {
            Box::new(B2ndArray::open(&*source, head_bytes, len).await?)
        } else if crate::formats::hdf5::is_hdf5(&head_bytes) {
            Box::new(
                crate::formats::hdf5::Hdf5Array::open(
                    &*source,
                    head_bytes,
                    len,
                    options.path.as_deref(),
                )
                .await?,
            )
        } else {
            let magic: String = head_bytes
                .iter()
                .take(8)
                .map(|b| format!("{b:02x}"))
                .collect();
            return Err(FormatError::Unrecognised {
                location: info.location.clone(),
                magic,
            }
            .into());
        };
        if let Some(seed) = format.seed() {
            coordinator
                .put_discovery(
                    &record_key,
                    &DiscoveryRecord {
                        version: DISCOVERY_VERSION,
                        source: (&info).into(),
                        seed,
                    },
                )
                .await;
        }
        Ok(Self::assemble(
            source,
            format,
            coordinator,
            &key,
            &scope,
            options,
            traffic,
            info,
        ))
    }

    /// The source to discover from, its first bytes and its identity: the coordinator's
    /// complete copy `copy` of a small source when held (no request), else
    /// [`RemoteArray::fetch_head`], publishing a small source's bytes as the copy of
    /// `source_id` (spec: remote cache design, "Complete source object").
    pub(crate) async fn open_bytes(
        transport: Arc<dyn RangeSource>,
        options: &OpenOptions,
        coordinator: &CacheCoordinator,
        source_id: &str,
        copy: Option<(crate::cache::discovery::SourceIdentity, Bytes)>,
    ) -> Result<(Arc<dyn RangeSource>, Bytes, SourceInfo)> {
        if let Some((ident, bytes)) = copy {
            let info = SourceInfo::from(&ident);
            return Ok((
                Arc::new(MemorySource::with_info(info.clone(), bytes.clone())),
                bytes,
                info,
            ));
        }
        let (source, head, info) = Self::fetch_head(transport, options).await?;
        if info.len <= options.small_source_bytes {
            coordinator
                .put_source_copy(source_id, &(&info).into(), head.clone())
                .await;
        }
        Ok((source, head, info))
    }

    /// The first read of a cold open: [`OpenOptions::head_bytes`] from the start, and for a
    /// small source the rest of it. Returns the source to read from (a complete copy in
    /// memory for a small source), the first bytes (all of them for a small source) and
    /// the source's identity.
    pub(crate) async fn fetch_head(
        transport: Arc<dyn RangeSource>,
        options: &OpenOptions,
    ) -> Result<(Arc<dyn RangeSource>, Bytes, SourceInfo)> {
        let head = match transport
            .read(ByteRange::bounded(0..options.head_bytes.max(16)))
            .await
        {
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
            return Ok((source, head_bytes, info));
        }
        let (source, head_bytes): (Arc<dyn RangeSource>, Bytes) = if len
            <= options.small_source_bytes
        {
            // Fetch only what the first read did not bring.
            let whole = if head.range.end >= len {
                head.bytes.clone()
            } else {
                let rest = transport
                    .read(ByteRange::bounded(head.range.end..len))
                    .await?;
                if rest.range != (head.range.end..len) {
                    return Err(crate::io::IoError::BadContentRange {
                        location: info.location.clone(),
                        detail: format!("asked {}..{len}, got {:?}", head.range.end, rest.range),
                    }
                    .into());
                }
                let mut v = Vec::with_capacity(len as usize);
                v.extend_from_slice(&head.bytes);
                v.extend_from_slice(&rest.bytes);
                Bytes::from(v)
            };
            (
                Arc::new(MemorySource::with_info(info.clone(), whole.clone())),
                whole,
            )
        } else {
            (transport, head.bytes.clone())
        };
        Ok((source, head_bytes, info))
    }

    #[allow(clippy::too_many_arguments)]
    fn assemble(
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
        RemoteArray {
            source,
            format,
            coordinator,
            options,
            traffic,
            key: key.clone(),
            identity,
            converted,
            info,
            zarr: None,
        }
    }

    /// Array shape (elements).
    pub fn shape(&self) -> &[u64] {
        &self.format.grid().shape
    }
    /// Chunk shape (elements).
    pub fn chunks(&self) -> &[u64] {
        &self.format.grid().chunks
    }
    /// Block shape (elements).
    pub fn blocks(&self) -> &[u64] {
        &self.format.grid().blocks
    }
    /// Element type as stored.
    pub fn dtype(&self) -> DType {
        self.format.dtype()
    }
    /// The full element type when it is not a plain number (see [`ArrayFormat::element`]).
    pub fn element(&self) -> Option<Element> {
        self.format.element()
    }
    /// numpy's `dtype.str` of the elements, or its `dtype.descr` for records (`|S`, unsized,
    /// for variable-length strings, which reads resolve to `|S{n}`).
    pub fn dtype_descr(&self) -> String {
        match self.format.element() {
            Some(e) => e.descr(),
            None => self.format.dtype().to_string(),
        }
    }
    /// What discovery found.
    pub fn info(&self) -> ArrayInfo {
        self.format.info()
    }
    /// Requests and bytes that reached the transport since open.
    pub fn traffic(&self) -> TrafficSnapshot {
        self.traffic.snapshot()
    }
    /// The in-memory payload LRU of the coordinator (empty under DISK and NONE).
    pub fn cache(&self) -> &PayloadCache {
        self.coordinator.memory_cache()
    }
    /// The cache coordinator this array uses.
    pub fn coordinator(&self) -> &CacheCoordinator {
        &self.coordinator
    }
    /// The discovery seed (what rebuilds this reader without I/O), if the format has one.
    pub fn seed(&self) -> Option<Seed> {
        self.format.seed()
    }
    /// Size and validators of the source.
    pub fn source_info(&self) -> &SourceInfo {
        &self.info
    }

    /// Reads a selection.
    ///
    /// # Errors
    /// Selection errors (syntax, bounds, too large), I/O errors, decode errors, cancellation.
    /// `SOURCE_CHANGED` ([`crate::io::IoError::SourceChanged`]) when an answer shows the source is not
    /// the version this array was opened on (size, `ETag` or `Last-Modified` differ): nothing
    /// of the old version is returned mixed with the new, and the coordinator forgets the
    /// source ([`CacheCoordinator::forget_source`]), so reopening reads the new version.
    pub async fn read(&self, selection: &Selection, opts: &ReadOptions<'_>) -> Result<ArrayData> {
        let reader = crate::pipeline::Reader {
            source: &*self.source,
            source_len: self.info.len,
            location: &self.info.location,
            format: &*self.format,
            coordinator: &self.coordinator,
            identity: &self.identity,
            converted: self.converted.as_ref(),
            limits: crate::pipeline::Limits {
                coalesce_gap: self.options.coalesce_gap,
                concurrency: self.options.concurrency,
                max_result_bytes: self.options.max_result_bytes,
                block_read_min_bytes: self.options.block_read_min_bytes,
            },
        };
        let result = crate::pipeline::read(&reader, selection, opts).await;
        // Object versions learnt by this read go into the Zarr store's record, so a later
        // open (another process, under DISK) checks its answers against them.
        if let Some(z) = self.zarr.as_ref().filter(|z| z.store().take_new_versions()) {
            if let Ok(json) = serde_json::to_vec(&z.store().discovery()) {
                self.coordinator
                    .put_record(&zarr_record_key(&self.key), json)
                    .await;
            }
        }
        if let Err(Error::Io(crate::io::IoError::SourceChanged { .. })) = &result {
            self.coordinator.forget_source(&self.key).await;
            if let Some(z) = &self.zarr {
                z.store().forget_objects();
            }
        }
        result
    }
}

/// Zarr arrays: their chunks are objects of their own (or inner chunks of shards), loaded by
/// [`crate::formats::zarr::ZarrArray::load_chunks`] on a payload-cache miss and kept in the
/// cache re-encoded as Blosc2 ([`crate::cache::convert`]); planning, the cache and assembly
/// are the shared ones.
impl RemoteArray {
    /// Opens the Zarr array at `path` of `store` (`""` when the store root is the array)
    /// with a cache coordinator of its own made from `options.cache` and
    /// `options.max_cache_bytes`. `traffic` must be what the store's
    /// [`crate::formats::zarr::KeyOpener`] counts into; `key` names the store (normalised
    /// URL and credential fingerprint of the request headers).
    ///
    /// Peak memory of a read, besides the result: for each of the at most
    /// [`OpenOptions::concurrency`] objects in flight, its stored bytes and two decoded-chunk
    /// buffers (for a shard, those of its touched inner chunks), plus one Blosc2-encoded copy
    /// of the chunk being converted into the cache. Chunks over
    /// [`crate::formats::zarr::MAX_CHUNK_BYTES`] are refused at open.
    ///
    /// # Errors
    /// As [`crate::formats::zarr::ZarrArray::open`].
    pub async fn open_zarr(
        store: Arc<crate::formats::zarr::ZarrStore>,
        path: &str,
        traffic: Traffic,
        key: SourceKey,
        options: OpenOptions,
    ) -> Result<RemoteArray> {
        let coordinator = CacheCoordinator::new(options.cache, options.max_cache_bytes)?;
        Self::open_zarr_with_cache(store, path, traffic, key, options, coordinator).await
    }

    /// Opens the Zarr array at `path` of `store` with caches owned by `coordinator`. The
    /// store's remembered metadata ([`crate::formats::zarr::ZarrDiscovery`]) is kept as the
    /// coordinator's discovery record of the store, so a reopen in the same coordinator
    /// (or, under DISK, in the same cache directory) makes no metadata request. Converted
    /// chunks are stamped with the store key, the array path, its metadata
    /// ([`crate::formats::zarr::ZarrArray::stamp`]: geometry, dtype, codecs), and the
    /// conversion layout ([`convert::stamp`]).
    ///
    /// # Errors
    /// As [`crate::formats::zarr::ZarrArray::open`].
    pub async fn open_zarr_with_cache(
        store: Arc<crate::formats::zarr::ZarrStore>,
        path: &str,
        traffic: Traffic,
        key: SourceKey,
        options: OpenOptions,
        coordinator: CacheCoordinator,
    ) -> Result<RemoteArray> {
        let coordinator = coordinator.for_source(&key);
        let record_key = zarr_record_key(&key);
        if let Some(d) = coordinator
            .record(&record_key)
            .await
            .and_then(|b| serde_json::from_slice(&b).ok())
        {
            store.remember(d);
        }
        let z = Arc::new(crate::formats::zarr::ZarrArray::open(store, path).await?);
        if let Ok(json) = serde_json::to_vec(&z.store().discovery()) {
            coordinator.put_record(&record_key, json).await;
        }
        let scope = crate::formats::zarr::normalise_path(path);
        let identity: Arc<str> = Arc::from(format!("{}\n{}", key.scoped(&scope), z.stamp()));
        let converted = coordinator
            .retains_payload()
            .then(|| convert::stamp(&identity, z.grid(), z.meta().dtype));
        let location = z.store().url(z.path());
        let info = SourceInfo {
            location: location.clone(),
            ..Default::default()
        };
        Ok(RemoteArray {
            // Never read: a Zarr array's chunks are objects reached through its store.
            source: Arc::new(MemorySource::new(location, Bytes::new())),
            format: Box::new(z.clone()),
            coordinator,
            options,
            traffic,
            key,
            identity,
            converted,
            info,
            zarr: Some(z),
        })
    }

    /// The Zarr metadata remembered so far (for a cache to restore the store with
    /// [`crate::formats::zarr::ZarrStore::with_discovery`]); `None` for other formats.
    pub fn zarr_discovery(&self) -> Option<crate::formats::zarr::ZarrDiscovery> {
        self.zarr.as_ref().map(|z| z.store().discovery())
    }
}

/// The coordinator's record key of a Zarr store's remembered metadata.
pub(crate) fn zarr_record_key(key: &SourceKey) -> String {
    format!("{}\n#zarr-metadata", key.source_id())
}
