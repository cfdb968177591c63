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
    convert, CacheCoordinator, CacheKey, CachePolicy, Item, PayloadCache, Seed, SourceKey,
    DEFAULT_MAX_CACHE_BYTES,
};
use crate::dtype::DType;
use crate::element::Element;
use crate::error::{Error, Result};
use crate::formats::{b2nd::B2ndArray, ArrayFormat, ArrayInfo, ChunkPlace, FormatError};
use crate::io::memory::MemorySource;
use crate::io::{
    read_coalesced, ByteRange, CoalesceOptions, RangeSource, SourceInfo, Traffic, TrafficSnapshot,
};
use crate::selection::{Plan, Selection};
use bytes::Bytes;
use std::collections::{HashMap, HashSet};
use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};
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

/// Progress of one read: chunks done out of chunks touched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Progress {
    /// Chunks assembled so far.
    pub done: u64,
    /// Chunks the selection touches.
    pub total: u64,
}

/// A cancellation flag shared between a caller and a running read (set by an AbortSignal
/// in JS). Checked between steps: a cancelled read returns [`crate::io::IoError::Cancelled`].
#[derive(Debug, Clone, Default)]
pub struct CancelFlag(Arc<AtomicBool>);

impl CancelFlag {
    /// A flag that is not set.
    pub fn new() -> Self {
        Self::default()
    }
    /// Sets the flag.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::SeqCst)
    }
    /// Whether the flag is set.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

/// Options of one read.
#[derive(Default)]
pub struct ReadOptions<'a> {
    /// Called after each chunk is assembled.
    pub progress: Option<&'a dyn Fn(Progress)>,
    /// Checked between steps.
    pub cancel: Option<CancelFlag>,
}

/// The result of a read: elements in C order, in the array's stored dtype and byte order.
#[derive(Debug, Clone, PartialEq)]
pub struct ArrayData {
    /// Result shape (dimensions selected by an integer are dropped).
    pub shape: Vec<u64>,
    /// Element type (as stored, so big-endian arrays give big-endian bytes); `|S{n}` or
    /// `|V{n}` when [`ArrayData::element`] describes more.
    pub dtype: DType,
    /// `product(shape) * dtype.itemsize` bytes.
    pub data: Vec<u8>,
    /// The element type of `data` when it is not a plain number: fixed-length strings
    /// (`|S{n}`; variable-length strings arrive resolved as these, `n` the longest string
    /// of the selection) or records. `None` for numbers.
    pub element: Option<Element>,
    /// Zarr: how many of the chunks read were absent from the store (HTTP 404 or no such
    /// file) and read as the fill value, as the Zarr specification says a missing chunk
    /// reads. Counted in the planner's chunks: chunk objects, or for a sharded array inner
    /// chunks (every touched inner chunk of an absent shard; an inner chunk that a stored
    /// shard's index marks empty was written so and is not counted). A warm read counts the
    /// absent chunks it serves from the payload cache too (they are cached as absent), so
    /// the count does not depend on the cache. Many missing chunks where data is expected
    /// points at a wrong store URL or prefix. Always 0 for Blosc2 and HDF5 (an unallocated
    /// HDF5 chunk is part of the format, not a missing object).
    pub missing_chunks: u64,
}

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

fn check_cancel(cancel: &Option<CancelFlag>) -> Result<()> {
    match cancel {
        Some(c) if c.is_cancelled() => Err(crate::io::IoError::Cancelled.into()),
        _ => Ok(()),
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
        let result = match &self.zarr {
            Some(z) => {
                let r = self.read_zarr(z, selection, opts).await;
                // Object versions learnt by this read go into the store's record, so a later
                // open (another process, under DISK) checks its answers against them.
                if z.store().take_new_versions() {
                    if let Ok(json) = serde_json::to_vec(&z.store().discovery()) {
                        self.coordinator
                            .put_record(&zarr_record_key(&self.key), json)
                            .await;
                    }
                }
                r
            }
            None => self.read_chunks(selection, opts).await,
        };
        if let Err(Error::Io(crate::io::IoError::SourceChanged { .. })) = &result {
            self.coordinator.forget_source(&self.key).await;
            if let Some(z) = &self.zarr {
                z.store().forget_objects();
            }
        }
        result
    }

    async fn read_chunks(
        &self,
        selection: &Selection,
        opts: &ReadOptions<'_>,
    ) -> Result<ArrayData> {
        let grid = self.format.grid();
        let dtype = self.format.dtype();
        let dims = selection.resolve(&grid.shape)?;
        let plan = Plan::new(grid, &dims, dtype.itemsize, self.options.max_result_bytes)?;
        let chunks = plan.chunks();
        let total = chunks.len() as u64;
        let mut out = vec![0u8; plan.result_bytes()];
        check_cancel(&opts.cancel)?;

        // Which chunks are cached, which must be fetched, which are fill values.
        let mut payload: HashMap<u64, Bytes> = HashMap::new();
        let mut wanted: Vec<(u64, Range<u64>)> = Vec::new();
        let mut fills: HashMap<u64, Vec<u8>> = HashMap::new();
        let mut decoded: HashMap<u64, Vec<u8>> = HashMap::new();
        let chunk_bytes = grid.decoded_chunk_items()? as usize * dtype.itemsize;
        for c in &chunks {
            let lin = grid.chunk_linear(&c.coords);
            if payload.contains_key(&lin) || fills.contains_key(&lin) || decoded.contains_key(&lin)
            {
                continue;
            }
            match self.format.locate(lin)? {
                ChunkPlace::Fill(v) => {
                    fills.insert(lin, v);
                }
                ChunkPlace::Inline(b) => {
                    payload.insert(lin, b);
                }
                ChunkPlace::Stored(r) => {
                    if let Some(stamp) = &self.converted {
                        let key = CacheKey {
                            source: stamp.clone(),
                            item: Item::Chunk(lin),
                        };
                        // A converted payload that does not decode is a miss.
                        match self
                            .coordinator
                            .get_payload(&key)
                            .await
                            .and_then(|b| convert::decode(&b, chunk_bytes))
                        {
                            Some(d) => {
                                self.coordinator.count_converted_hit();
                                decoded.insert(lin, d);
                            }
                            None => wanted.push((lin, r)),
                        }
                    } else {
                        match self.coordinator.get_payload(&self.key(lin)).await {
                            Some(b) => {
                                payload.insert(lin, b);
                            }
                            None => wanted.push((lin, r)),
                        }
                    }
                }
            }
        }
        // Large chunks of which the selection touches few blocks are read block by block.
        let mut by_block: Vec<(u64, Range<u64>, Vec<u64>)> = Vec::new();
        if self.format.blosc2_blocks() {
            let nblocks: u64 = grid.block_counts().iter().product();
            let mut keep = Vec::with_capacity(wanted.len());
            for (lin, r) in wanted.drain(..) {
                let c = chunks.iter().find(|c| grid.chunk_linear(&c.coords) == lin);
                let touched: Vec<u64> = c
                    .map(|c| {
                        plan.blocks_of(c)
                            .iter()
                            .map(|b| grid.block_linear(b))
                            .collect()
                    })
                    .unwrap_or_default();
                if r.end - r.start >= self.options.block_read_min_bytes
                    && nblocks > 1
                    && (touched.len() as u64) * 2 <= nblocks
                {
                    by_block.push((lin, r, touched));
                } else {
                    keep.push((lin, r));
                }
            }
            wanted = keep;
        }
        if !by_block.is_empty() {
            let fallback = self.read_blocks(&by_block, &mut decoded).await?;
            wanted.extend(fallback);
            check_cancel(&opts.cancel)?;
        }
        let mut fetched_now: HashSet<u64> = HashSet::new();
        if !wanted.is_empty() {
            let ranges: Vec<Range<u64>> = wanted.iter().map(|(_, r)| r.clone()).collect();
            let fetched = read_coalesced(&*self.source, &ranges, &self.coalesce_options()).await?;
            check_cancel(&opts.cancel)?;
            for ((lin, _), bytes) in wanted.iter().zip(fetched) {
                // Converted formats keep the decoded chunk re-encoded, not the stored bytes.
                if self.converted.is_none() {
                    self.coordinator
                        .put_payload(self.key(*lin), bytes.clone())
                        .await;
                }
                fetched_now.insert(*lin);
                payload.insert(*lin, bytes);
            }
        }
        for (i, c) in chunks.iter().enumerate() {
            check_cancel(&opts.cancel)?;
            let lin = grid.chunk_linear(&c.coords);
            if let Some(v) = fills.get(&lin) {
                let n = grid.decoded_chunk_items()? as usize;
                let mut decoded = Vec::with_capacity(n * v.len());
                for _ in 0..n {
                    decoded.extend_from_slice(v);
                }
                plan.copy_chunk(c, &decoded, &mut out)?;
            } else if let Some(d) = decoded.get(&lin) {
                plan.copy_chunk(c, d, &mut out)?;
            } else if let Some(stored) = payload.get(&lin) {
                let d = self.format.decode(lin, stored)?;
                self.coordinator.count_format_decode();
                if let Some(stamp) = &self.converted {
                    if fetched_now.remove(&lin) {
                        if let Some(blosc2) = convert::encode(&d, dtype.itemsize) {
                            let key = CacheKey {
                                source: stamp.clone(),
                                item: Item::Chunk(lin),
                            };
                            self.coordinator.put_payload(key, blosc2).await;
                        }
                    }
                }
                plan.copy_chunk(c, &d, &mut out)?;
            }
            if let Some(p) = opts.progress {
                p(Progress {
                    done: i as u64 + 1,
                    total,
                });
            }
        }
        let element = self.format.element();
        if let Some(e) = element.as_ref().filter(|e| e.has_vlen()) {
            // Variable-length strings (alone or in records): the assembled references point
            // into global heap collections, fetched now as one coalesced batch.
            let heap = HeapCache::load(self, e, &out).await;
            let resolved = crate::formats::hdf5::heap::resolve_strings(
                &*self.source,
                self.info.len,
                e,
                &out,
                &self.coalesce_options(),
                self.options.max_result_bytes,
                &heap,
            )
            .await;
            heap.keep().await;
            let (resolved, data) = resolved.map_err(|err| err.into_format(&self.info.location))?;
            return Ok(ArrayData {
                shape: plan.result_shape.clone(),
                dtype: resolved.storage_dtype(),
                data,
                element: Some(resolved),
                missing_chunks: 0,
            });
        }
        Ok(ArrayData {
            shape: plan.result_shape.clone(),
            dtype,
            data: out,
            element,
            missing_chunks: 0,
        })
    }

    fn key(&self, chunk: u64) -> CacheKey {
        CacheKey {
            source: self.identity.clone(),
            item: Item::Chunk(chunk),
        }
    }

    fn coalesce_options(&self) -> CoalesceOptions {
        CoalesceOptions {
            max_gap: self.options.coalesce_gap,
            max_len: None,
            concurrency: self.options.concurrency,
        }
    }

    /// Reads the touched blocks of Blosc2 chunks: first each chunk's header and block offsets
    /// (one coalesced batch), then the touched blocks' streams plus the blocks they depend on
    /// (DELTA refers to block 0), decoded into a full-size chunk buffer whose untouched blocks
    /// stay zero (the planner copies only touched elements). Compressed prefixes and block
    /// streams enter the payload cache as [`Item::Block`] entries. Returns the chunks that
    /// cannot be split (special-value or otherwise) for a whole-chunk read.
    async fn read_blocks(
        &self,
        chunks: &[(u64, Range<u64>, Vec<u64>)],
        decoded: &mut HashMap<u64, Vec<u8>>,
    ) -> Result<Vec<(u64, Range<u64>)>> {
        use crate::codec::blosc2::{block_dependencies, block_spans, decode_block, ChunkHeader};
        let grid = self.format.grid();
        let nblocks: u64 = grid.block_counts().iter().product();
        let prefix_len = (32 + 4 * nblocks).min(u32::MAX as u64);
        let prefix_key = |lin: u64| CacheKey {
            source: self.identity.clone(),
            item: Item::Block(lin, u64::MAX),
        };
        let block_key = |lin: u64, b: u64| CacheKey {
            source: self.identity.clone(),
            item: Item::Block(lin, b),
        };

        // 1. prefixes
        let mut prefixes: HashMap<u64, Bytes> = HashMap::new();
        let mut missing: Vec<(u64, Range<u64>)> = Vec::new();
        for (lin, r, _) in chunks {
            match self.coordinator.get_payload(&prefix_key(*lin)).await {
                Some(b) => {
                    prefixes.insert(*lin, b);
                }
                None => missing.push((*lin, r.start..(r.start + prefix_len).min(r.end))),
            }
        }
        if !missing.is_empty() {
            let ranges: Vec<Range<u64>> = missing.iter().map(|(_, r)| r.clone()).collect();
            let got = read_coalesced(&*self.source, &ranges, &self.coalesce_options()).await?;
            for ((lin, _), b) in missing.iter().zip(got) {
                self.coordinator
                    .put_payload(prefix_key(*lin), b.clone())
                    .await;
                prefixes.insert(*lin, b);
            }
        }

        // 2. block streams
        let mut whole = Vec::new();
        let mut jobs = Vec::new(); // (lin, header, needed blocks, spans)
        let mut wanted: Vec<(u64, u64, Range<u64>)> = Vec::new();
        let mut streams: HashMap<(u64, u64), Bytes> = HashMap::new();
        for (lin, r, touched) in chunks {
            let prefix = &prefixes[lin];
            let (header, spans) = match (ChunkHeader::parse(prefix), block_spans(prefix)) {
                (Ok(h), Ok(s)) if s.len() as u64 == nblocks => (h, s),
                _ => {
                    whole.push((*lin, r.clone()));
                    continue;
                }
            };
            let mut needed: Vec<u64> = touched.clone();
            for &b in touched {
                needed.extend(
                    block_dependencies(&header, b as usize)
                        .iter()
                        .map(|&d| d as u64),
                );
            }
            needed.sort_unstable();
            needed.dedup();
            for &b in &needed {
                let span = &spans[b as usize];
                let abs = r.start + span.start as u64..r.start + span.end as u64;
                if abs.end > r.end || abs.start >= abs.end {
                    return Err(FormatError::Chunk {
                        location: self.info.location.clone(),
                        chunk: *lin,
                        detail: format!("block {b} spans {span:?}, outside the stored chunk"),
                    }
                    .into());
                }
                match self.coordinator.get_payload(&block_key(*lin, b)).await {
                    Some(s) => {
                        streams.insert((*lin, b), s);
                    }
                    None => wanted.push((*lin, b, abs)),
                }
            }
            jobs.push((*lin, header, needed));
        }
        if !wanted.is_empty() {
            let ranges: Vec<Range<u64>> = wanted.iter().map(|(_, _, r)| r.clone()).collect();
            let got = read_coalesced(&*self.source, &ranges, &self.coalesce_options()).await?;
            for ((lin, b, _), s) in wanted.iter().zip(got) {
                self.coordinator
                    .put_payload(block_key(*lin, *b), s.clone())
                    .await;
                streams.insert((*lin, *b), s);
            }
        }

        // 3. decode block 0 first so DELTA blocks find their reference.
        let chunk_bytes = grid.decoded_chunk_items()? as usize * self.format.dtype().itemsize;
        for (lin, header, needed) in jobs {
            let err = |e: crate::codec::blosc2::CodecError| -> Error {
                FormatError::Chunk {
                    location: self.info.location.clone(),
                    chunk: lin,
                    detail: e.to_string(),
                }
                .into()
            };
            if header.nbytes != chunk_bytes {
                return Err(FormatError::Chunk {
                    location: self.info.location.clone(),
                    chunk: lin,
                    detail: format!(
                        "chunk holds {} bytes, layout needs {chunk_bytes}",
                        header.nbytes
                    ),
                }
                .into());
            }
            let mut buf = vec![0u8; chunk_bytes];
            let bs = header.blocksize;
            let mut have_block0 = false;
            for b in needed {
                let b = b as usize;
                let start = b * bs;
                let n = header.block_nbytes(b);
                let stream = &streams[&(lin, b as u64)];
                let (head, tail) = buf.split_at_mut(start);
                let reference = if b > 0 && have_block0 {
                    Some(&head[..header.block_nbytes(0)])
                } else {
                    None
                };
                decode_block(&header, b, stream, reference, &mut tail[..n]).map_err(err)?;
                have_block0 |= b == 0;
            }
            decoded.insert(lin, buf);
        }
        Ok(whole)
    }
}

/// Global heap collections kept in the array's payload cache. The format's cache hook is
/// synchronous and a backend may have to wait, so the collections a read references are
/// looked up before it ([`HeapCache::load`]) and those it fetched are stored after
/// ([`HeapCache::keep`]).
struct HeapCache<'a> {
    array: &'a RemoteArray,
    /// Collections found in the payload cache, by address.
    held: HashMap<u64, Bytes>,
    /// Collections the read fetched, to store.
    fetched: std::sync::Mutex<Vec<(u64, Bytes)>>,
}

impl crate::formats::hdf5::heap::CollectionCache for HeapCache<'_> {
    fn get(&self, address: u64) -> Option<Bytes> {
        self.held.get(&address).cloned()
    }
    fn put(&self, address: u64, bytes: Bytes) {
        self.fetched
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((address, bytes));
    }
}

impl<'a> HeapCache<'a> {
    /// Looks up the collections that the references in `data` (elements of `element`) point
    /// to. References that do not decode are left to the resolver, which reports them.
    async fn load(array: &'a RemoteArray, element: &Element, data: &[u8]) -> HeapCache<'a> {
        let mut held = HashMap::new();
        if array.coordinator.retains_payload() {
            let refs = crate::formats::hdf5::heap::references(element, data).unwrap_or_default();
            let addrs: std::collections::BTreeSet<u64> = refs
                .iter()
                .filter(|r| r.len > 0)
                .map(|r| r.collection)
                .collect();
            for a in addrs {
                if let Some(b) = array.coordinator.get_payload(&Self::key_of(array, a)).await {
                    held.insert(a, b);
                }
            }
        }
        HeapCache {
            array,
            held,
            fetched: std::sync::Mutex::new(Vec::new()),
        }
    }

    /// Stores the collections the read fetched.
    async fn keep(self) {
        let fetched = self.fetched.into_inner().unwrap_or_else(|e| e.into_inner());
        for (a, b) in fetched {
            self.array
                .coordinator
                .put_payload(Self::key_of(self.array, a), b)
                .await;
        }
    }

    fn key_of(array: &RemoteArray, address: u64) -> CacheKey {
        CacheKey {
            source: array.identity.clone(),
            item: Item::HeapCollection(address),
        }
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

    async fn read_zarr(
        &self,
        z: &crate::formats::zarr::ZarrArray,
        selection: &Selection,
        opts: &ReadOptions<'_>,
    ) -> Result<ArrayData> {
        let grid = z.grid();
        let dtype = z.meta().dtype;
        let dims = selection.resolve(&grid.shape)?;
        let plan = Plan::new(grid, &dims, dtype.itemsize, self.options.max_result_bytes)?;
        let chunks = plan.chunks();
        let total = chunks.len() as u64;
        let chunk_len = grid.decoded_chunk_items()? as usize * dtype.itemsize;
        let mut out = vec![0u8; plan.result_bytes()];
        let mut done = 0u64;
        let progress = |done: &mut u64| {
            *done += 1;
            if let Some(p) = opts.progress {
                p(Progress { done: *done, total });
            }
        };
        check_cancel(&opts.cancel)?;
        let fill_chunk = || z.meta().fill.repeat(chunk_len / dtype.itemsize);
        // Chunks absent from the store (read as fill values), counted per read-grid chunk.
        let mut absent = 0u64;
        // Warm chunks first; a corrupt entry is a miss. An absent chunk is cached as
        // `ABSENT_CHUNK` so a warm read still counts it.
        let mut missing: HashMap<u64, Vec<usize>> = HashMap::new();
        for (i, c) in chunks.iter().enumerate() {
            let lin = grid.chunk_linear(&c.coords);
            let warm = match &self.converted {
                Some(stamp) => match self
                    .coordinator
                    .get_payload(&converted_key(stamp, lin))
                    .await
                {
                    Some(b) if b.as_ref() == ABSENT_CHUNK => Some(None),
                    Some(b) => convert::decode(&b, chunk_len).map(Some),
                    None => None,
                },
                None => None,
            };
            match warm {
                Some(d) => {
                    self.coordinator.count_converted_hit();
                    let d = d.unwrap_or_else(|| {
                        absent += 1;
                        fill_chunk()
                    });
                    plan.copy_chunk(c, &d, &mut out)?;
                    progress(&mut done);
                }
                None => missing.entry(lin).or_default().push(i),
            }
        }
        if missing.is_empty() {
            return Ok(ArrayData {
                shape: plan.result_shape.clone(),
                dtype,
                data: out,
                element: None,
                missing_chunks: absent,
            });
        }
        let mut lins: Vec<u64> = missing.keys().copied().collect();
        lins.sort_unstable();
        // Entries to keep, stored once the chunks are loaded (the callback cannot await).
        let mut keep: Vec<(CacheKey, Bytes)> = Vec::new();
        let mut on_chunk = |lin: u64, decoded: Option<Vec<u8>>| -> Result<()> {
            check_cancel(&opts.cancel)?;
            // Absent chunks are cached too (as absent), so a warm read never asks for them
            // again and still counts them.
            let d = match decoded {
                Some(d) => {
                    if let Some(stamp) = &self.converted {
                        if let Some(enc) = convert::encode(&d, dtype.itemsize) {
                            keep.push((converted_key(stamp, lin), enc));
                        }
                    }
                    d
                }
                None => {
                    absent += 1;
                    if let Some(stamp) = &self.converted {
                        keep.push((converted_key(stamp, lin), Bytes::from_static(ABSENT_CHUNK)));
                    }
                    fill_chunk()
                }
            };
            for &i in missing.get(&lin).into_iter().flatten() {
                plan.copy_chunk(&chunks[i], &d, &mut out)?;
                progress(&mut done);
            }
            Ok(())
        };
        let loaded = z
            .load_chunks(&lins, &self.coalesce_options(), &mut on_chunk)
            .await;
        for (key, bytes) in keep {
            self.coordinator.put_payload(key, bytes).await;
        }
        loaded?;
        Ok(ArrayData {
            shape: plan.result_shape.clone(),
            dtype,
            data: out,
            element: None,
            missing_chunks: absent,
        })
    }
}

/// The payload-cache entry of a Zarr chunk absent from its store: shorter than any Blosc2
/// chunk header (32 bytes), so it can never be taken for a converted chunk.
const ABSENT_CHUNK: &[u8] = b"chunkwise:absent";

/// The coordinator's record key of a Zarr store's remembered metadata.
pub(crate) fn zarr_record_key(key: &SourceKey) -> String {
    format!("{}\n#zarr-metadata", key.source_id())
}

fn converted_key(stamp: &Arc<str>, chunk: u64) -> CacheKey {
    CacheKey {
        source: stamp.clone(),
        item: Item::Chunk(chunk),
    }
}

impl From<crate::selection::SelectionError> for Error {
    fn from(e: crate::selection::SelectionError) -> Self {
        Error::Selection(e)
    }
}

impl From<FormatError> for Error {
    fn from(e: FormatError) -> Self {
        match e {
            FormatError::Io(io) => Error::Io(io),
            other => Error::Format(other),
        }
    }
}
