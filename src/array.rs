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

use crate::cache::{CacheKey, CachePolicy, Item, PayloadCache, DEFAULT_MAX_CACHE_BYTES};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::formats::{b2nd::B2ndArray, ArrayFormat, ArrayInfo, ChunkPlace, FormatError};
use crate::io::memory::MemorySource;
use crate::io::{
    read_coalesced, ByteRange, CoalesceOptions, RangeSource, SourceInfo, Traffic, TrafficSnapshot,
};
use crate::selection::{Plan, Selection};
use bytes::Bytes;
use std::collections::HashMap;
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
            max_result_bytes: if cfg!(target_arch = "wasm32") { 1 << 30 } else { 2 << 30 },
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
    /// Element type (as stored, so big-endian arrays give big-endian bytes).
    pub dtype: DType,
    /// `product(shape) * dtype.itemsize` bytes.
    pub data: Vec<u8>,
}

/// A remote (or local) array opened for reading.
pub struct RemoteArray {
    source: Arc<dyn RangeSource>,
    format: Box<dyn ArrayFormat>,
    cache: PayloadCache,
    options: OpenOptions,
    traffic: Traffic,
    identity: Arc<str>,
    info: SourceInfo,
}

impl std::fmt::Debug for RemoteArray {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteArray").field("identity", &self.identity).finish()
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
        let head = transport.read(ByteRange::bounded(0..options.head_bytes.max(16))).await?;
        let info = head.info.clone();
        let len = info.len;
        let (source, head_bytes): (Arc<dyn RangeSource>, Bytes) =
            if len <= options.small_source_bytes {
                let whole = if head.range.end >= len {
                    head.bytes.clone()
                } else {
                    transport.read(ByteRange::bounded(0..len)).await?.bytes
                };
                (Arc::new(MemorySource::with_info(info.clone(), whole.clone())), whole)
            } else {
                (transport, head.bytes.clone())
            };
        let format: Box<dyn ArrayFormat> = if crate::formats::b2nd::is_frame(&head_bytes) {
            Box::new(B2ndArray::open(&*source, head_bytes, len).await?)
        } else {
            let magic: String = head_bytes.iter().take(8).map(|b| format!("{b:02x}")).collect();
            return Err(FormatError::Unrecognised { location: info.location.clone(), magic }.into());
        };
        let identity: Arc<str> = Arc::from(format!(
            "{}#len={};etag={};lm={}",
            info.location,
            info.len,
            info.etag.as_deref().unwrap_or(""),
            info.last_modified.as_deref().unwrap_or("")
        ));
        let cache = PayloadCache::new(match options.cache {
            CachePolicy::Memory => options.max_cache_bytes,
            CachePolicy::None => 0,
        });
        Ok(RemoteArray { source, format, cache, options, traffic, identity, info })
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
    /// What discovery found.
    pub fn info(&self) -> ArrayInfo {
        self.format.info()
    }
    /// Requests and bytes that reached the transport since open.
    pub fn traffic(&self) -> TrafficSnapshot {
        self.traffic.snapshot()
    }
    /// The payload cache.
    pub fn cache(&self) -> &PayloadCache {
        &self.cache
    }
    /// Size and validators of the source.
    pub fn source_info(&self) -> &SourceInfo {
        &self.info
    }

    /// Reads a selection.
    ///
    /// # Errors
    /// Selection errors (syntax, bounds, too large), I/O errors, decode errors, cancellation.
    pub async fn read(&self, selection: &Selection, opts: &ReadOptions<'_>) -> Result<ArrayData> {
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
        for c in &chunks {
            let lin = grid.chunk_linear(&c.coords);
            if payload.contains_key(&lin) || fills.contains_key(&lin) {
                continue;
            }
            match self.format.locate(lin)? {
                ChunkPlace::Fill(v) => {
                    fills.insert(lin, v);
                }
                ChunkPlace::Stored(r) => match self.cache.get(&self.key(lin)) {
                    Some(b) => {
                        payload.insert(lin, b);
                    }
                    None => wanted.push((lin, r)),
                },
            }
        }
        if !wanted.is_empty() {
            let ranges: Vec<Range<u64>> = wanted.iter().map(|(_, r)| r.clone()).collect();
            let copts = CoalesceOptions {
                max_gap: self.options.coalesce_gap,
                max_len: None,
                concurrency: self.options.concurrency,
            };
            let fetched = read_coalesced(&*self.source, &ranges, &copts).await?;
            check_cancel(&opts.cancel)?;
            for ((lin, _), bytes) in wanted.iter().zip(fetched) {
                self.cache.insert(self.key(*lin), bytes.clone());
                payload.insert(*lin, bytes);
            }
        }
        let mut done = 0u64;
        for c in &chunks {
            check_cancel(&opts.cancel)?;
            let lin = grid.chunk_linear(&c.coords);
            if let Some(v) = fills.get(&lin) {
                let n = grid.decoded_chunk_items()? as usize;
                let mut decoded = Vec::with_capacity(n * v.len());
                for _ in 0..n {
                    decoded.extend_from_slice(v);
                }
                plan.copy_chunk(c, &decoded, &mut out)?;
            } else if let Some(stored) = payload.get(&lin) {
                let decoded = self.format.decode(lin, stored)?;
                plan.copy_chunk(c, &decoded, &mut out)?;
            }
            done += 1;
            if let Some(p) = opts.progress {
                p(Progress { done, total });
            }
        }
        Ok(ArrayData { shape: plan.result_shape.clone(), dtype, data: out })
    }

    fn key(&self, chunk: u64) -> CacheKey {
        CacheKey { source: self.identity.clone(), item: Item::Chunk(chunk) }
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
