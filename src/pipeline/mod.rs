//! The one read pipeline, shared by every format: selection → plan → fetch → decode →
//! assemble.
//!
//! 1. **Plan.** The selection is resolved against the shape and the selection planner
//!    ([`crate::selection::Plan`]) lists the touched chunks and where each element lands.
//! 2. **Look up.** Each touched chunk is located by its format
//!    ([`crate::formats::ArrayFormat::locate`]) and asked of the payload cache. Fill values,
//!    bytes held in the metadata and cache hits are assembled at once.
//! 3. **Decide.** What is left becomes a [`FetchPlan`]: whole-chunk fetches merged by the one
//!    range coalescer, Blosc2 block reads ([`blocks`]) for large, sparsely touched Blosc2
//!    chunks, and loads by the format for chunks that are objects of their own (Zarr,
//!    [`crate::formats::ChunkLoader`]).
//! 4. **Fetch, decode, keep, assemble**, as each merged fetch arrives: the stored bytes enter
//!    the payload cache (copied, so an entry owns exactly its bytes), or for a format that is
//!    not Blosc2 the decoded chunk enters it re-encoded as Blosc2 ([`crate::cache::convert`];
//!    uncompressed in a memory cache, compressed in a persistent one);
//!    the decoded chunk is copied into the result and dropped ([`assemble`]).
//! 5. **Finish.** Variable-length strings are resolved from the HDF5 global heap
//!    ([`finish`]).
//!
//! Peak memory of a read: the result, plus for each of the at most
//! [`crate::array::OpenOptions::concurrency`] merged fetches in flight its bytes, plus one
//! decoded chunk (for a converted format: up to `CACHE_CONCURRENCY` decoded chunks of one
//! fetch and their Blosc2 re-encodings, while their cache writes run). Blosc2 block reads hold
//! the touched blocks' compressed streams of their batch.

mod assemble;
mod blocks;
#[cfg(feature = "hdf5")]
mod finish;
pub mod plan;

pub use plan::{BlockRule, FetchPlan, Found, PlannedChunk, Step};

use crate::cache::{convert, CacheCoordinator, CacheKey, CachePolicy, Item};
use crate::codec::blosc2::{ChunkHeader, GroupDecoder};
use crate::dtype::DType;
use crate::element::Element;
use crate::error::Result;
use crate::formats::{ArrayFormat, ChunkPlace, ChunkSink};
use crate::io::{fetch_stream, CoalesceOptions, RangeSource};
use crate::selection::{Plan, Selection};
use assemble::Assembler;
use bytes::Bytes;
use futures::StreamExt;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

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
    /// A buffer the read may take for its result instead of allocating one: used when its
    /// capacity holds the result and is at most twice it (contents overwritten). JS
    /// `readInto` hands each read the previous one's result, so that a read in windows keeps
    /// one block of wasm memory rather than freeing and allocating a window each time, which
    /// the allocator may not fit back in the same place (wasm memory never shrinks).
    pub result_buffer: std::sync::Mutex<Option<Vec<u8>>>,
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

pub(crate) fn check_cancel(cancel: &Option<CancelFlag>) -> Result<()> {
    match cancel {
        Some(c) if c.is_cancelled() => Err(crate::io::IoError::Cancelled.into()),
        _ => Ok(()),
    }
}

/// The payload-cache entry of a chunk absent from its store: shorter than any Blosc2
/// chunk header (32 bytes), so it can never be taken for a converted chunk.
const ABSENT_CHUNK: &[u8] = b"chunkwise:absent";

/// Limits of a read, from [`crate::array::OpenOptions`].
#[derive(Debug, Clone)]
pub(crate) struct Limits {
    /// Largest gap bridged by a merge, bytes.
    pub coalesce_gap: u64,
    /// Largest merged request, bytes (`None`: no bound).
    pub max_merged_bytes: Option<u64>,
    /// Requests (or loaded objects) in flight.
    pub concurrency: usize,
    /// Largest result, bytes.
    pub max_result_bytes: u64,
    /// Smallest stored Blosc2 chunk read by blocks, bytes.
    pub block_read_min_bytes: u64,
}

/// What one read works on: the array's source, format, caches and limits.
pub(crate) struct Reader<'a> {
    /// Where stored ranges are read (a transport, or a complete copy in memory).
    pub source: &'a dyn RangeSource,
    /// Size of the source in bytes.
    #[cfg_attr(not(feature = "hdf5"), allow(dead_code))]
    pub source_len: u64,
    /// The source's location for messages.
    pub location: &'a str,
    /// Locates and decodes chunks.
    pub format: &'a dyn ArrayFormat,
    /// Owns the payload cache.
    pub coordinator: &'a CacheCoordinator,
    /// Payload identity of stored bytes (source key, scope, size, validators).
    pub identity: &'a Arc<str>,
    /// Payload identity of converted chunks; `None` for Blosc2 formats and when no payload
    /// is retained.
    pub converted: Option<&'a Arc<str>>,
    /// Read limits.
    pub limits: Limits,
}

/// Payload cache lookups (and writes) in flight at once in a read: enough to hide the
/// storage round trip of a persistent backend, few enough that the chunks waiting stay small.
const CACHE_CONCURRENCY: usize = 8;

/// What the payload cache holds for a chunk.
enum Cached {
    /// Stored bytes, to decode.
    Stored(Bytes),
    /// A converted chunk's entry: Blosc2 bytes made by [`convert::encode`], checked when
    /// read ([`Reader::assemble_converted`]).
    Converted(Bytes),
    /// A chunk known absent from its store.
    Absent,
}

impl Reader<'_> {
    pub(crate) fn coalesce_options(&self) -> CoalesceOptions {
        CoalesceOptions {
            max_gap: self.limits.coalesce_gap,
            max_len: self.limits.max_merged_bytes,
            concurrency: self.limits.concurrency,
        }
    }

    fn stored_key(&self, chunk: u64) -> CacheKey {
        CacheKey {
            source: self.identity.clone(),
            item: Item::Chunk(chunk),
        }
    }

    fn converted_key(&self, stamp: &Arc<str>, chunk: u64) -> CacheKey {
        CacheKey {
            source: stamp.clone(),
            item: Item::Chunk(chunk),
        }
    }

    /// The payload cache's entry for `chunk`.
    async fn lookup(&self, chunk: u64) -> Option<Cached> {
        match self.converted {
            Some(stamp) => {
                let b = self
                    .coordinator
                    .get_payload(&self.converted_key(stamp, chunk))
                    .await?;
                if b.as_ref() == ABSENT_CHUNK {
                    self.coordinator.count_converted_hit();
                    Some(Cached::Absent)
                } else {
                    Some(Cached::Converted(b))
                }
            }
            None => self
                .coordinator
                .get_payload(&self.stored_key(chunk))
                .await
                .map(Cached::Stored),
        }
    }

    /// Decodes stored bytes by the format.
    fn decode(&self, chunk: u64, stored: &[u8], range: Option<&Range<u64>>) -> Result<Vec<u8>> {
        let d = self
            .format
            .decode(chunk, stored)
            .map_err(|e| e.at_bytes(range))?;
        self.coordinator.count_format_decode();
        Ok(d)
    }

    /// Decodes stored chunk `chunk` (at `range` of the source, when known) and copies its
    /// selected elements into `asm`: a group of blocks at a time when the format's chunks are
    /// Blosc2 and no decoded copy is to be kept ([`Assembler::chunk_by_groups`]), else whole.
    /// Returns the decoded chunk for a converted format, whose cache entry is made from it.
    ///
    /// # Errors
    /// As [`Reader::decode`] and [`Assembler::chunk`].
    fn assemble(
        &self,
        asm: &mut Assembler<'_>,
        chunk: u64,
        stored: &[u8],
        range: Option<&Range<u64>>,
    ) -> Result<Option<Vec<u8>>> {
        if self.converted.is_none() && self.format.payload_is_blosc2() {
            if let Ok(h) = ChunkHeader::parse(stored) {
                let chunk_bytes = self.format.grid().decoded_chunk_items()? as usize
                    * self.format.dtype().itemsize;
                let by_groups = self.format.blosc2_header_error(&h).is_none()
                    && GroupDecoder::with_kept(|groups| {
                        asm.chunk_by_groups(chunk, &h, stored, chunk_bytes, groups)
                    })?;
                if by_groups {
                    self.coordinator.count_format_decode();
                    return Ok(None);
                }
            }
        }
        let d = self.decode(chunk, stored, range)?;
        asm.chunk(chunk, &d)?;
        Ok(self.converted.is_some().then_some(d))
    }

    /// Copies the selected elements of a converted chunk's cache entry (`entry`, Blosc2 bytes
    /// made by [`convert::encode`] from `chunk_bytes` decoded bytes) into `asm`: straight from
    /// the entry when it is stored uncompressed (the memory policy keeps them so), else a
    /// group of blocks at a time ([`Assembler::chunk_by_groups`]), else decoded whole. Before,
    /// every entry was decoded into a buffer of the chunk's size first. Returns `false` when
    /// the entry does not decode to `chunk_bytes` bytes: a miss, never wrong data (the chunk is
    /// then read from the source and assembled again, over anything written here).
    ///
    /// # Errors
    /// As [`Assembler::chunk`].
    fn assemble_converted(
        &self,
        asm: &mut Assembler<'_>,
        chunk: u64,
        entry: &[u8],
        chunk_bytes: usize,
    ) -> Result<bool> {
        let Ok(h) = ChunkHeader::parse(entry) else {
            return Ok(false);
        };
        if h.nbytes != chunk_bytes {
            return Ok(false);
        }
        let raw = h.header_len..h.header_len + chunk_bytes;
        if h.memcpyed && h.cbytes == raw.end && entry.len() >= raw.end {
            asm.chunk(chunk, &entry[raw])?;
        } else if !GroupDecoder::with_kept(|groups| {
            asm.chunk_by_groups(chunk, &h, entry, chunk_bytes, groups)
        })? {
            match convert::decode(entry, chunk_bytes) {
                Some(d) => asm.chunk(chunk, &d)?,
                None => return Ok(false),
            }
        }
        self.coordinator.count_converted_hit();
        Ok(true)
    }

    /// Keeps a chunk just read: its stored bytes, or for a converted format the decoded
    /// chunk re-encoded as Blosc2 (`None`: the chunk is absent from its store).
    async fn keep(&self, chunk: u64, stored: &Bytes, decoded: Option<&[u8]>, itemsize: usize) {
        match self.converted {
            None => {
                self.coordinator
                    .put_payload(self.stored_key(chunk), stored.clone())
                    .await
            }
            Some(stamp) => {
                // In memory a converted chunk is kept uncompressed (see `convert::encode`).
                let compress = self.coordinator.policy() != CachePolicy::Memory;
                let entry = match decoded {
                    Some(d) => match convert::encode(d, itemsize, compress) {
                        Some(enc) => enc,
                        None => return,
                    },
                    None => Bytes::from_static(ABSENT_CHUNK),
                };
                self.coordinator
                    .put_payload(self.converted_key(stamp, chunk), entry)
                    .await;
            }
        }
    }
}

/// Reads `selection` through `r`.
///
/// # Errors
/// Selection errors (syntax, bounds, too large), I/O errors, decode errors, cancellation.
pub(crate) async fn read(
    r: &Reader<'_>,
    selection: &Selection,
    opts: &ReadOptions<'_>,
) -> Result<ArrayData> {
    let grid = r.format.grid();
    let dtype = r.format.dtype();
    let dims = selection.resolve(&grid.shape)?;
    let plan = Plan::new(grid, &dims, dtype.itemsize, r.limits.max_result_bytes)?;
    if let Some(regions) = r.format.region_loader() {
        if let Some(out) = read_region(r, regions, &plan, opts).await? {
            return Ok(out);
        }
    }
    read_planned(r, &plan, opts).await
}

/// Most touched chunks for which a region read is considered (larger selections read by
/// chunks, which then serve later reads from the cache).
const REGION_MAX_CHUNKS: u64 = 4096;

/// Reads `plan` as one region of the format ([`crate::formats::RegionLoader`]): the
/// selection's bounding box fetched as an array of its own and read whole from memory,
/// through [`read_planned`] over that array (no cache), when the format prefers it to the
/// touched chunks the payload cache lacks. The box's answer is kept in the payload cache
/// under the box. `None`: read by chunks.
async fn read_region(
    r: &Reader<'_>,
    regions: &dyn crate::formats::RegionLoader,
    plan: &Plan,
    opts: &ReadOptions<'_>,
) -> Result<Option<ArrayData>> {
    let touched: u64 = plan.parts.iter().map(|p| p.len() as u64).product();
    let only = regions.region_only();
    if touched == 0 || (touched > REGION_MAX_CHUNKS && !only) {
        return Ok(None);
    }
    let mut uncached = if only { touched } else { 0 };
    for c in plan.chunks().iter().filter(|_| !only) {
        let chunk = plan.grid.chunk_linear(&c.coords);
        if r.coordinator
            .get_payload(&r.stored_key(chunk))
            .await
            .is_none()
        {
            uncached += 1;
        }
    }
    // The bounding box of the selection, and the selection within it.
    let (mut lo, mut hi, mut inner) = (Vec::new(), Vec::new(), Vec::new());
    for d in &plan.dims {
        let last = d.start as i128 + (d.count as i128 - 1) * d.step as i128;
        let (a, b) = (d.start.min(last as u64), d.start.max(last as u64) + 1);
        lo.push(a);
        hi.push(b);
        inner.push(crate::selection::DimSelection {
            start: d.start - a,
            ..*d
        });
    }
    if uncached == 0 || !regions.prefers_region(&lo, &hi, uncached) {
        return Ok(None);
    }
    check_cancel(&opts.cancel)?;
    // The box's answer is kept under the box: the same box again makes no request.
    let key = CacheKey {
        source: Arc::from(format!("{}\nregion={lo:?}..{hi:?}", r.identity)),
        item: Item::Chunk(0),
    };
    let held = match r.coordinator.get_payload(&key).await {
        // A held entry that does not read is a miss.
        Some(b) => regions.region_from(b).await.ok(),
        None => None,
    };
    let region = match held {
        Some(region) => region,
        None => {
            let region = regions.load_region(&lo, &hi).await?;
            r.coordinator.put_payload(key, region.bytes.clone()).await;
            region
        }
    };
    let extents: Vec<u64> = lo.iter().zip(&hi).map(|(a, b)| b - a).collect();
    let dtype = r.format.dtype();
    // The answer's own dtype must be the array's: one of the same item size but another kind
    // or byte order would be read as the array's without an error (a single byte has no order).
    let theirs = region.format.dtype();
    let same_dtype = theirs.kind == dtype.kind
        && theirs.itemsize == dtype.itemsize
        && (dtype.itemsize == 1 || theirs.order == dtype.order);
    if region.format.grid().shape != extents || !same_dtype {
        return Err(crate::formats::FormatError::Invalid {
            location: r.location.to_string(),
            format: "region",
            detail: format!(
                "asked a box of shape {extents:?} of {dtype}, got {:?} of {}",
                region.format.grid().shape,
                region.format.dtype()
            ),
        }
        .into());
    }
    let none = CacheCoordinator::none();
    let identity: Arc<str> = Arc::from(r.location);
    let inner_reader = Reader {
        source: &*region.source,
        source_len: 0,
        location: r.location,
        format: &*region.format,
        coordinator: &none,
        identity: &identity,
        converted: None,
        limits: r.limits.clone(),
    };
    let inner_plan = Plan::new(
        region.format.grid(),
        &inner,
        dtype.itemsize,
        r.limits.max_result_bytes,
    )?;
    let mut out = Box::pin(read_planned(&inner_reader, &inner_plan, opts)).await?;
    out.dtype = dtype;
    out.element = r.format.element();
    Ok(Some(out))
}

/// Reads chunk `coords` (its coordinates in the chunk grid) whole, decoded, in the full chunk
/// shape, C order: an edge chunk is not clipped to the array, and its elements past the edge
/// are what the source stores there (Blosc2 and HDF5 pad edge chunks; zarr-python writes the
/// fill value), as zarrita's `getChunk` gives them. A chunk that is not stored reads as the
/// fill value (a Zarr chunk absent from the store is counted in `missing_chunks`). Runs the
/// one read over a grid padded to whole chunks, so caches, coalescing, progress and
/// cancellation are a read's.
///
/// # Errors
/// `INVALID_ARGUMENT` for coordinates of another rank or outside the chunk grid; those of
/// [`read`].
pub(crate) async fn read_chunk(
    r: &Reader<'_>,
    coords: &[u64],
    opts: &ReadOptions<'_>,
) -> Result<ArrayData> {
    let grid = r.format.grid();
    check_chunk_coords(grid, coords)?;
    let padded = crate::selection::Grid::new(
        grid.chunk_counts()
            .iter()
            .zip(&grid.chunks)
            .map(|(n, c)| n * c)
            .collect(),
        grid.chunks.clone(),
        grid.blocks.clone(),
    )?;
    let dims: Vec<_> = coords
        .iter()
        .zip(&grid.chunks)
        .map(|(&c, &n)| crate::selection::DimSelection {
            start: c * n,
            step: 1,
            count: n,
            keep: true,
        })
        .collect();
    let plan = Plan::new(
        &padded,
        &dims,
        r.format.dtype().itemsize,
        r.limits.max_result_bytes,
    )?;
    read_planned(r, &plan, opts).await
}

/// Checks chunk coordinates against `grid`: as many as its dimensions, each below the
/// number of chunks along it.
///
/// # Errors
/// `INVALID_ARGUMENT` naming the coordinates and the grid.
pub(crate) fn check_chunk_coords(grid: &crate::selection::Grid, coords: &[u64]) -> Result<()> {
    let counts = grid.chunk_counts();
    if coords.len() != counts.len() || coords.iter().zip(&counts).any(|(c, n)| c >= n) {
        return Err(crate::Error::InvalidArgument(format!(
            "chunk coordinates {coords:?} are outside the chunk grid {counts:?} (chunks per \
             dimension)"
        )));
    }
    Ok(())
}

/// Reads what `plan` (over the format's grid, or one padded to whole chunks) touches.
async fn read_planned(r: &Reader<'_>, plan: &Plan, opts: &ReadOptions<'_>) -> Result<ArrayData> {
    let grid = &plan.grid;
    let dtype = r.format.dtype();
    let chunk_bytes = grid.decoded_chunk_items()? as usize * dtype.itemsize;
    let mut asm = Assembler::new(plan, opts);
    check_cancel(&opts.cancel)?;
    let fill = r.format.loader().map(|l| l.fill_value().to_vec());
    let mut absent = 0u64;

    // Look up; what is at hand is assembled now. Cache lookups run up to
    // `CACHE_CONCURRENCY` at a time (a persistent backend answers each after a storage round
    // trip: IndexedDB, OPFS, files), assembled in chunk order as they come.
    // (position in the plan's order, chunk, what was found)
    let mut found = Vec::new();
    let mut wanted = Vec::new();
    for (pos, chunk) in asm.chunks().into_iter().enumerate() {
        match r.format.locate(chunk)? {
            ChunkPlace::Fill(value) => {
                asm.fill(chunk, &value)?;
                found.push((pos, chunk, Found::Fill));
            }
            ChunkPlace::Inline(stored) => {
                let d = r.decode(chunk, &stored, None)?;
                asm.chunk(chunk, &d)?;
                found.push((pos, chunk, Found::Inline));
            }
            place @ (ChunkPlace::Stored(_) | ChunkPlace::Loaded) => {
                wanted.push((pos, chunk, place))
            }
        }
    }
    let mut looked_up = std::pin::pin!(futures::stream::iter(wanted)
        .map(|(pos, chunk, place)| async move {
            let cached = r.lookup(chunk).await;
            (pos, chunk, place, cached)
        })
        .buffered(CACHE_CONCURRENCY));
    while let Some((pos, chunk, place, cached)) = looked_up.next().await {
        let hit = match cached {
            Some(Cached::Stored(b)) => {
                let stored = match &place {
                    ChunkPlace::Stored(range) => Some(range),
                    _ => None,
                };
                r.assemble(&mut asm, chunk, &b, stored)?;
                true
            }
            Some(Cached::Converted(b)) => r.assemble_converted(&mut asm, chunk, &b, chunk_bytes)?,
            Some(Cached::Absent) => {
                absent += 1;
                asm.fill(chunk, fill.as_deref().unwrap_or_default())?;
                true
            }
            None => false,
        };
        let f = match (hit, place) {
            (true, _) => Found::Hit,
            (false, ChunkPlace::Stored(range)) => Found::Stored(range),
            (false, _) => Found::Loaded,
        };
        found.push((pos, chunk, f));
    }
    crate::sort::sort_by_key(&mut found, |(pos, _, _)| *pos);
    let found: Vec<_> = found.into_iter().map(|(_, chunk, f)| (chunk, f)).collect();

    // Decide.
    let coalesce = r.coalesce_options();
    let rule = r.format.blosc2_blocks().then(|| BlockRule {
        nblocks: grid.block_counts().iter().product(),
        min_chunk_bytes: r.limits.block_read_min_bytes,
    });
    let mut fetch = FetchPlan::new(found, |c| asm.touched_blocks(c), rule, &coalesce)?;

    // Blosc2 block reads; chunks that cannot be split join the whole fetches.
    if !fetch.blocks.is_empty() {
        let blocks = std::mem::take(&mut fetch.blocks);
        let fallback = blocks::read(r, &blocks, &mut asm).await?;
        fetch.add_whole(fallback, &coalesce)?;
        check_cancel(&opts.cancel)?;
    }

    // Whole chunks, handled as each merged fetch arrives.
    if !fetch.whole.is_empty() {
        let mut in_fetch: Vec<Vec<usize>> = vec![Vec::new(); fetch.merged.fetches.len()];
        for (i, p) in fetch.merged.placements.iter().enumerate() {
            in_fetch[p.fetch].push(i);
        }
        let mut arriving =
            std::pin::pin!(fetch_stream(r.source, &fetch.merged, coalesce.concurrency));
        while let Some(next) = arriving.next().await {
            let (k, bytes) = next?;
            check_cancel(&opts.cancel)?;
            // Kept `CACHE_CONCURRENCY` chunks at a time: the writes of a group run
            // together, and at most a group of decoded chunks waits for them (only for a
            // converted format, whose entry is made from the decoded chunk; otherwise each
            // decoded chunk is dropped once assembled, so a read holds one at a time).
            for group in in_fetch[k].chunks(CACHE_CONCURRENCY) {
                let mut decoded = Vec::with_capacity(group.len());
                for &i in group {
                    let (chunk, range) = (fetch.whole[i].0, &fetch.whole[i].1);
                    let within = &fetch.merged.placements[i].within;
                    let stored = bytes.slice(within.start as usize..within.end as usize);
                    let d = r.assemble(&mut asm, chunk, &stored, Some(range))?;
                    decoded.push((chunk, stored, d));
                }
                futures::future::join_all(decoded.iter().map(|(chunk, stored, d)| {
                    r.keep(*chunk, stored, d.as_deref(), dtype.itemsize)
                }))
                .await;
            }
        }
    }

    // Chunks the format loads itself.
    if let (Some(loader), false) = (r.format.loader(), fetch.loads.is_empty()) {
        let mut sink = LoadSink {
            r,
            asm: &mut asm,
            absent: &mut absent,
            fill: loader.fill_value(),
            itemsize: dtype.itemsize,
        };
        loader
            .load_chunks(&fetch.loads, &coalesce, &mut sink)
            .await?;
    }

    let out = asm.finish(r.location)?;
    match r.format.element() {
        // Only HDF5 has variable-length elements.
        #[cfg(feature = "hdf5")]
        Some(e) if e.has_vlen() => finish::resolve_vlen(r, plan, &e, out).await,
        element => Ok(ArrayData {
            shape: plan.result_shape.clone(),
            dtype,
            data: out,
            element,
            missing_chunks: absent,
        }),
    }
}

/// Receives the chunks a format loads: keeps, assembles, counts the absent ones.
struct LoadSink<'r, 'a, 'b> {
    r: &'r Reader<'r>,
    asm: &'b mut Assembler<'a>,
    absent: &'b mut u64,
    fill: &'b [u8],
    itemsize: usize,
}

#[async_trait::async_trait(?Send)]
impl ChunkSink for LoadSink<'_, '_, '_> {
    async fn chunk(&mut self, chunk: u64, decoded: Option<Vec<u8>>) -> Result<()> {
        // Loaded chunks are kept converted (their stored bytes never reach the pipeline).
        // Absent chunks are kept too (as absent), so a warm read never asks for them again
        // and still counts them.
        if self.r.converted.is_some() {
            self.r
                .keep(chunk, &Bytes::new(), decoded.as_deref(), self.itemsize)
                .await;
        }
        match decoded {
            Some(d) => self.asm.chunk(chunk, &d),
            None => {
                *self.absent += 1;
                self.asm.fill(chunk, self.fill)
            }
        }
    }

    async fn stored(&mut self, chunk: u64, stored: Bytes) -> Result<()> {
        // Stored bytes of a Blosc2 format (Caterva2): decoded here, kept as they are.
        let converted = self.r.assemble(self.asm, chunk, &stored, None)?;
        self.r
            .keep(chunk, &stored, converted.as_deref(), self.itemsize)
            .await;
        Ok(())
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use crate::formats::{ArrayInfo, ChunkLoader, FormatError};
    use crate::io::memory::MemorySource;
    use crate::selection::Grid;

    /// A format whose chunks are loaded as a set, by a loader that skips `skip` and hands
    /// `twice` over two times: every element of chunk `c` is `c + 1`.
    struct Loaded {
        grid: Grid,
        skip: Option<u64>,
        twice: Option<u64>,
    }

    impl ArrayFormat for Loaded {
        fn grid(&self) -> &Grid {
            &self.grid
        }
        fn dtype(&self) -> DType {
            DType::parse("|u1").unwrap()
        }
        fn info(&self) -> ArrayInfo {
            unreachable!("not asked by a read")
        }
        fn locate(&self, _chunk: u64) -> std::result::Result<ChunkPlace, FormatError> {
            Ok(ChunkPlace::Loaded)
        }
        fn decode(&self, _: u64, _: &[u8]) -> std::result::Result<Vec<u8>, FormatError> {
            unreachable!("loaded chunks arrive decoded")
        }
        fn loader(&self) -> Option<&dyn ChunkLoader> {
            Some(self)
        }
    }

    #[async_trait::async_trait(?Send)]
    impl ChunkLoader for Loaded {
        async fn load_chunks(
            &self,
            chunks: &[u64],
            _: &CoalesceOptions,
            sink: &mut dyn ChunkSink,
        ) -> Result<()> {
            let n = self.grid.decoded_chunk_items()? as usize;
            for &c in chunks {
                if Some(c) == self.skip {
                    continue;
                }
                let times = if Some(c) == self.twice { 2 } else { 1 };
                for _ in 0..times {
                    sink.chunk(c, Some(vec![c as u8 + 1; n])).await?;
                }
            }
            Ok(())
        }
        fn fill_value(&self) -> &[u8] {
            &[0]
        }
    }

    async fn read_all(format: &Loaded, progress: &dyn Fn(Progress)) -> Result<ArrayData> {
        let source = MemorySource::new("mem://loaded", Bytes::new());
        let coordinator = CacheCoordinator::none();
        let identity: Arc<str> = Arc::from("mem://loaded");
        let reader = Reader {
            source: &source,
            source_len: 0,
            location: "mem://loaded",
            format,
            coordinator: &coordinator,
            identity: &identity,
            converted: None,
            limits: Limits {
                coalesce_gap: 0,
                max_merged_bytes: None,
                concurrency: 2,
                max_result_bytes: 1 << 20,
                block_read_min_bytes: 1 << 20,
            },
        };
        let opts = ReadOptions {
            progress: Some(progress),
            cancel: None,
            ..Default::default()
        };
        read(&reader, &Selection::all(), &opts).await
    }

    #[tokio::test]
    async fn a_chunk_no_step_served_is_an_error_not_zeros() {
        // 4 x 4 in 2 x 2 chunks; the loader skips chunk 2.
        let grid = Grid::new(vec![4, 4], vec![2, 2], vec![2, 2]).unwrap();
        let format = Loaded {
            grid: grid.clone(),
            skip: Some(2),
            twice: None,
        };
        let err = read_all(&format, &|_| {}).await.unwrap_err();
        assert_eq!(err.code(), "DECODE", "{err}");
        assert!(err.to_string().contains("chunk 2"), "{err}");
        // Served whole, the values are the loader's; a chunk handed over twice counts once.
        let format = Loaded {
            grid,
            skip: None,
            twice: Some(1),
        };
        let seen = std::sync::Mutex::new(Vec::new());
        let got = read_all(&format, &|p| seen.lock().unwrap().push(p))
            .await
            .unwrap();
        assert_eq!(
            got.data,
            vec![1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4]
        );
        let seen = seen.into_inner().unwrap();
        assert_eq!(seen.len(), 4);
        assert!(seen
            .iter()
            .enumerate()
            .all(|(i, p)| p.done == i as u64 + 1 && p.total == 4));
    }
}
