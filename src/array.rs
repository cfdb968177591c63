//! [`RemoteArray`]: the format-agnostic handle users open and read from.
//!
//! Opening reads the first [`OpenOptions::head_bytes`] of the source in one bounded request,
//! which also reveals the object's size (for a name ending in `.b2nd`, with a concurrent
//! suffix request for the frame's index: [`crate::open`]). A source of at most
//! [`OpenOptions::small_source_bytes`] (8 MiB, spec: "Complete source object") is then held
//! whole in memory for the session, so later reads make no request. The format is detected
//! from the first bytes and runs its discovery.
//!
//! Reading goes through the one read pipeline ([`crate::pipeline`]): the selection is
//! planned against the chunk grid, each touched chunk looked up in the payload cache, the
//! misses fetched in as few range requests as the gaps allow (or loaded by the format for
//! Zarr), decoded, kept and assembled as they arrive.
//!
//! Caching is owned by a [`CacheCoordinator`] ([`RemoteArray::open_with_cache`]; a
//! standalone [`RemoteArray::open_source`] gets its own). Opening first asks it for the
//! discovery record of the source and scope: a warm reopen rebuilds the reader without a
//! request. Chunks of formats that are not Blosc2 are kept converted to Blosc2
//! ([`crate::cache::convert`]).

use crate::cache::{
    CacheCoordinator, CachePolicy, CacheStatus, PayloadCache, SourceKey, DEFAULT_MAX_CACHE_BYTES,
};
use crate::dtype::DType;
use crate::element::Element;
use crate::error::{Error, Result};
use crate::formats::{ArrayFormat, ArrayInfo};
use crate::io::{RangeSource, SourceInfo, Traffic, TrafficSnapshot};
use crate::selection::Selection;
use std::sync::atomic::{AtomicU64, Ordering};
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
    /// into two requests (CLI `--coalesce-gap`, JS `coalesceGap`; default
    /// [`crate::io::coalesce::DEFAULT_MAX_GAP`], chosen there from measurements). Part of no
    /// cache identity: it changes the requests, never the bytes.
    pub coalesce_gap: u64,
    /// Largest merged request (bytes): a merge that would make a request longer starts a new
    /// one; a single wanted range longer than this is still read whole (CLI
    /// `--max-merged-bytes`, JS `maxMergedBytes`; default `None`, no bound). Part of no cache
    /// identity.
    pub max_merged_bytes: Option<u64>,
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
    /// Whether the source is trusted not to change at its URL (default true: a held
    /// discovery record is reused without a request, spec: remote cache design, "Freshness
    /// and refresh"). False (CLI `--mutable`) is the mutable-source mode of a standalone
    /// `.b2nd`: the open checks the source's identity once, with the request it makes
    /// anyway on a cold open (the head read) or, when a record is held, one request for the
    /// first byte whose size and validators are compared with the record's (lengths equal,
    /// and an `ETag` or `Last-Modified` both carry equal: the rule of
    /// [`crate::io::Validated`]). The same: the record and cached payload are reused with no
    /// further request ([`crate::cache::CacheStatus::Reused`]); changed: everything held
    /// for the source is dropped ([`CacheCoordinator::forget_source`]) and it is discovered
    /// afresh ([`crate::cache::CacheStatus::Invalidated`]). A Caterva2 dataset supports it
    /// too, checked by one `api/info` (`ETag`, `mtime`, `cbytes`: [`crate::open::caterva2`]).
    /// HDF5, Zarr and stores do not
    /// support this mode (the spec's B2Z, HDF5 and Zarr adapters do not): they are refused
    /// with `INVALID_ARGUMENT` naming the format.
    pub assume_immutable: bool,
    /// Where the array comes from: [`SourceKind::Detected`] (the default) detects the
    /// format from the location's bytes; [`SourceKind::Caterva2`] takes the location as a
    /// Caterva2 server's URL base and [`OpenOptions::path`] as a dataset of it
    /// (`@public/dir/ds.b2nd`; JS `source: "caterva2"`, CLI `--source caterva2`).
    pub source: SourceKind,
    /// Credentials of a Caterva2 server (in memory only, never persisted or printed).
    pub credentials: Option<crate::formats::caterva2::Credentials>,
}

/// How [`OpenOptions::source`] says a location is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum SourceKind {
    /// A file, an object URL or a Zarr root, its format detected.
    #[default]
    Detected,
    /// A Caterva2 server's URL base ([`crate::formats::caterva2`]).
    Caterva2,
}

impl Default for OpenOptions {
    fn default() -> Self {
        OpenOptions {
            cache: CachePolicy::Memory,
            max_cache_bytes: DEFAULT_MAX_CACHE_BYTES,
            head_bytes: 64 * 1024,
            small_source_bytes: 8 * 1024 * 1024,
            coalesce_gap: crate::io::coalesce::DEFAULT_MAX_GAP,
            max_merged_bytes: None,
            concurrency: 6,
            max_result_bytes: if cfg!(target_arch = "wasm32") {
                1 << 30
            } else {
                2 << 30
            },
            block_read_min_bytes: 256 * 1024,
            path: None,
            cache_key: None,
            assume_immutable: true,
            source: SourceKind::Detected,
            credentials: None,
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
    /// Payload identity of converted chunks ([`crate::cache::convert::stamp`]); `None` for Blosc2
    /// formats and when no payload is retained.
    converted: Option<Arc<str>>,
    info: SourceInfo,
    /// Set for a Zarr array, whose chunks are objects of their own (see [`RemoteArray::open_zarr`]).
    #[cfg_attr(not(feature = "zarr"), allow(dead_code))]
    zarr: Option<ZarrHandle>,
    /// What the open found in the caches ([`RemoteArray::cache_status`]).
    status: CacheStatus,
    /// For an array handed out by [`crate::store::RemoteStore::get`]: the store's
    /// generation counter and the generation the array belongs to; reads fail with
    /// [`Error::Stale`] once they differ (the store was refreshed).
    generation: Option<(Arc<AtomicU64>, u64)>,
}

/// A Zarr array's store-backed reader; in a build without Zarr (cargo feature `zarr`) no
/// value of it exists.
#[cfg(feature = "zarr")]
pub(crate) type ZarrHandle = Arc<crate::formats::zarr::ZarrArray>;
/// A Zarr array's store-backed reader; in a build without Zarr (cargo feature `zarr`) no
/// value of it exists.
#[cfg(not(feature = "zarr"))]
pub(crate) type ZarrHandle = std::convert::Infallible;

impl std::fmt::Debug for RemoteArray {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteArray")
            .field("identity", &self.identity)
            .finish()
    }
}

impl RemoteArray {
    /// The payload identity of this array's stored chunks (the payload cache keys' source).
    #[cfg_attr(not(feature = "b2nd"), allow(dead_code))]
    pub(crate) fn payload_identity(&self) -> Arc<str> {
        self.identity.clone()
    }

    /// A handle from its parts, built by the opener ([`crate::open`]), which decides them:
    /// the source to read, the discovered format, the caches, the cache identity `key`, the
    /// payload identities (`identity`, `converted`: see the fields) and, for a Zarr array,
    /// its store-backed reader.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn from_parts(
        source: Arc<dyn RangeSource>,
        format: Box<dyn ArrayFormat>,
        coordinator: CacheCoordinator,
        options: OpenOptions,
        traffic: Traffic,
        key: SourceKey,
        identity: Arc<str>,
        converted: Option<Arc<str>>,
        info: SourceInfo,
        zarr: Option<ZarrHandle>,
    ) -> RemoteArray {
        RemoteArray {
            source,
            format,
            coordinator,
            options,
            traffic,
            key,
            identity,
            converted,
            info,
            zarr,
            status: CacheStatus::Created,
            generation: None,
        }
    }

    /// This handle with the cache status the opener found (the default is `Created`).
    pub(crate) fn with_cache_status(mut self, status: CacheStatus) -> RemoteArray {
        self.status = status;
        self
    }

    /// This handle bound to generation `number` of a store whose current generation
    /// `counter` holds ([`crate::store::RemoteStore::refresh`]).
    pub(crate) fn with_generation(mut self, counter: Arc<AtomicU64>, number: u64) -> RemoteArray {
        self.generation = Some((counter, number));
        self
    }

    /// What the open found in the caches: `Created` when no discovery record of this source
    /// and scope was held (it was discovered and recorded), `Reused` when one was used,
    /// `Invalidated` when one was held but dropped (the source changed under the
    /// mutable-source check of [`OpenOptions::assume_immutable`], or the record was of
    /// another version) and the source discovered afresh. python-blosc2's names.
    pub fn cache_status(&self) -> CacheStatus {
        self.status
    }

    /// Bytes of compressed payload held by this array's cache coordinator (every source it
    /// caches, not this array's alone): `coordinator().stats().payload.bytes`; under DISK
    /// the bytes in `payload/`.
    pub fn cache_bytes(&self) -> u64 {
        self.coordinator.stats().payload.bytes
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
    /// The array's attributes (HDF5 attributes, Zarr `.zattrs` / v3 `attributes`, Blosc2
    /// vlmeta), read at discovery: no request.
    pub fn attrs(&self) -> crate::attrs::Attrs {
        self.format.attrs()
    }
    /// Dimension names, one per dimension (`None` for an unnamed one), or `None` when the
    /// source names none (see [`crate::formats::Node::dims`]).
    pub fn dims(&self) -> Option<Vec<Option<String>>> {
        self.format.dims()
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
    pub fn seed(&self) -> Option<crate::formats::Seed> {
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
    /// `STALE` ([`Error::Stale`]), before any request, for an array obtained from a store's
    /// [`crate::store::RemoteStore::get`] before the store was refreshed.
    pub async fn read(&self, selection: &Selection, opts: &ReadOptions<'_>) -> Result<ArrayData> {
        self.check_generation()?;
        let result = crate::pipeline::read(&self.reader(), selection, opts).await;
        self.after_read(&result).await;
        result
    }

    /// Reads chunk `coords` (its coordinates in the chunk grid of [`RemoteArray::chunks`])
    /// decoded, whole: `shape` is the full chunk shape even for an edge chunk (zarrita's
    /// `getChunk` rule), its elements past the array's edge being what the source stores
    /// there; C order, stored dtype. A chunk that is not stored reads as the fill value (a
    /// Zarr chunk absent from its store: `missing_chunks` is 1). Goes through the caches like
    /// [`RemoteArray::read`].
    ///
    /// # Errors
    /// `INVALID_ARGUMENT` for coordinates of another rank or outside the chunk grid; those of
    /// [`RemoteArray::read`].
    pub async fn read_chunk(&self, coords: &[u64], opts: &ReadOptions<'_>) -> Result<ArrayData> {
        self.check_generation()?;
        let result = crate::pipeline::read_chunk(&self.reader(), coords, opts).await;
        self.after_read(&result).await;
        result
    }

    /// The stored bytes of chunk `coords` (chunk-grid coordinates, as for
    /// [`RemoteArray::read_chunk`]) as the source holds them, before any decoding: a Blosc2
    /// chunk of a `.b2nd` frame, an HDF5 chunk as its filters left it (compact data as
    /// stored), a Zarr chunk object or the inner chunk's bytes of a shard, a Caterva2 chunk from `api/chunk`. One request (for a
    /// shard: its index first, remembered), never cached. `None` for a chunk that is not
    /// stored: a Blosc2 special-value chunk, an unallocated HDF5 chunk, a Zarr chunk absent
    /// from its store (or marked empty in its shard's index).
    ///
    /// # Errors
    /// `INVALID_ARGUMENT` for coordinates outside the chunk grid; I/O errors
    /// (`SOURCE_CHANGED` as for a read); `STALE` as for a read.
    pub async fn chunk_bytes(&self, coords: &[u64]) -> Result<Option<bytes::Bytes>> {
        self.check_generation()?;
        let grid = self.format.grid();
        crate::pipeline::check_chunk_coords(grid, coords)?;
        let chunk = grid.chunk_linear(coords);
        let result = match self.format.locate(chunk)? {
            crate::formats::ChunkPlace::Stored(range) => self
                .source
                .read(crate::io::ByteRange::bounded(range.clone()))
                .await
                .map_err(Error::from)
                .and_then(|f| match f.range == range {
                    true => Ok(Some(f.bytes)),
                    false => Err(crate::io::IoError::BadContentRange {
                        location: self.info.location.clone(),
                        detail: format!("asked {range:?}, got {:?}", f.range),
                    }
                    .into()),
                }),
            crate::formats::ChunkPlace::Inline(b) => Ok(Some(b)),
            crate::formats::ChunkPlace::Fill(_) => Ok(None),
            crate::formats::ChunkPlace::Loaded => self.loaded_chunk_bytes(chunk).await,
        };
        self.after_read(&result).await;
        result
    }

    #[cfg(feature = "zarr")]
    async fn loaded_chunk_bytes(&self, chunk: u64) -> Result<Option<bytes::Bytes>> {
        match (&self.zarr, self.format.loader()) {
            (Some(z), _) => Ok(z.encoded_chunk(chunk).await?.map(bytes::Bytes::from)),
            // A Caterva2 dataset's chunk as the server stores it.
            (None, Some(l)) => l.stored_chunk(chunk).await,
            (None, None) => Err(Error::InvalidArgument(
                "this format places no chunk to load".into(),
            )),
        }
    }

    #[cfg(not(feature = "zarr"))]
    async fn loaded_chunk_bytes(&self, chunk: u64) -> Result<Option<bytes::Bytes>> {
        match self.format.loader() {
            Some(l) => l.stored_chunk(chunk).await,
            None => Err(Error::InvalidArgument(
                "this format places no chunk to load".into(),
            )),
        }
    }

    /// `STALE` for an array of a store refreshed since it was got.
    fn check_generation(&self) -> Result<()> {
        if let Some((counter, mine)) = &self.generation {
            let now = counter.load(Ordering::Acquire);
            if now != *mine {
                return Err(Error::Stale {
                    location: self.info.location.clone(),
                    detail: format!("store generation {mine}, now {now}"),
                });
            }
        }
        Ok(())
    }

    fn reader(&self) -> crate::pipeline::Reader<'_> {
        crate::pipeline::Reader {
            source: &*self.source,
            source_len: self.info.len,
            location: &self.info.location,
            format: &*self.format,
            coordinator: &self.coordinator,
            identity: &self.identity,
            converted: self.converted.as_ref(),
            limits: crate::pipeline::Limits {
                coalesce_gap: self.options.coalesce_gap,
                max_merged_bytes: self.options.max_merged_bytes,
                concurrency: self.options.concurrency,
                max_result_bytes: self.options.max_result_bytes,
                block_read_min_bytes: self.options.block_read_min_bytes,
            },
        }
    }

    /// What every read does after it: records the Zarr object versions it learnt, and
    /// forgets the source when it changed.
    async fn after_read<T>(&self, result: &Result<T>) {
        // Object versions learnt by this read go into the Zarr store's record, so a later
        // open (another process, under DISK) checks its answers against them.
        #[cfg(feature = "zarr")]
        if let Some(z) = self.zarr.as_ref().filter(|z| z.store().take_new_versions()) {
            crate::open::keep_zarr(z.store(), &self.coordinator, &self.key).await;
        }
        if let Err(Error::Io(crate::io::IoError::SourceChanged { .. })) = &result {
            self.coordinator.forget_source(&self.key).await;
            #[cfg(feature = "zarr")]
            if let Some(z) = &self.zarr {
                z.store().forget_objects();
            }
        }
    }
}

/// Zarr arrays: their chunks are objects of their own (or inner chunks of shards), loaded by
/// [`crate::formats::zarr::ZarrArray::load_chunks`] on a payload-cache miss and kept in the
/// cache re-encoded as Blosc2 ([`crate::cache::convert`]); planning, the cache and assembly
/// are the shared ones.
#[cfg(feature = "zarr")]
impl RemoteArray {
    /// The Zarr metadata remembered so far (for a cache to restore the store with
    /// [`crate::formats::zarr::ZarrStore::with_discovery`]); `None` for other formats.
    pub fn zarr_discovery(&self) -> Option<crate::formats::zarr::ZarrDiscovery> {
        self.zarr.as_ref().map(|z| z.store().discovery())
    }
}
