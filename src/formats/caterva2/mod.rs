//! Caterva2 datasets: Blosc2 arrays served by a Caterva2 server's REST API (caterva2
//! 2026.9.2 `services/server.py`; python-blosc2's `blosc2/c2array.py` is the client it
//! mirrors).
//!
//! - Discovery: `GET {base}/api/info/{root}/{path}` ([`api::Info`]): shape, chunks, blocks,
//!   dtype, mtime and the super-chunk (cbytes, nchunks, cparams); a lazy expression answers
//!   `expression` and `operands` instead.
//! - Chunks: `GET {base}/api/chunk/{root}/{path}?nchunk=N`, the chunk as stored (a Blosc2
//!   chunk: C-Blosc2's `blosc2_schunk_get_chunk`), decoded by chunkwise's Blosc2 decoder and
//!   kept in the payload cache as it is. Each chunk is an object of its own, so this format
//!   places chunks as [`ChunkPlace::Loaded`] and loads them itself ([`ChunkLoader`]), at
//!   most [`CONCURRENCY`] at a time by default (python-blosc2's client default), handing the
//!   stored bytes to the read pipeline ([`crate::formats::ChunkSink::stored`]).
//! - Small selections of large chunks and lazy expressions: `GET api/fetch/{path}?slice_=`
//!   ([`Caterva2Array::load_region`]), answered with a Blosc2 frame of the selection.
//!
//! The client side (URLs, login, status mapping) is [`client`].

pub mod api;
pub mod client;

use crate::codec::blosc2::{decode_chunk, ChunkHeader};
use crate::dtype::DType;
use crate::formats::{
    ArrayFormat, ArrayInfo, ChunkDecodeError, ChunkLoader, ChunkPlace, ChunkSink, FormatError,
    FormatSeed, Region, RegionLoader,
};
use crate::io::CoalesceOptions;
use crate::selection::Grid;
use client::Client;
use futures::stream::{self, StreamExt};
use std::sync::Arc;

pub use client::Credentials;

/// Chunk requests in flight by default (python-blosc2's `C2Array` fetches 8 at a time).
pub const CONCURRENCY: usize = 8;

/// What rebuilds a [`Caterva2Array`] without a request: the dataset path, its `api/info`
/// and the `ETag` that answer carried. Tag `caterva2`.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Caterva2Seed {
    /// The dataset path, `@public/dir/ds.b2nd`.
    pub path: String,
    /// Its `api/info`.
    pub info: api::Info,
    /// The `ETag` of that answer (caterva2's dataset validator).
    pub etag: Option<String>,
}

impl FormatSeed for Caterva2Seed {
    const FORMAT: &'static str = "caterva2";
    const VERSION: u32 = 1;
}

/// One Caterva2 dataset: its `api/info` and how its chunks are fetched and decoded.
pub struct Caterva2Array {
    client: Arc<Client>,
    path: String,
    info: api::Info,
    etag: Option<String>,
    grid: Grid,
    dtype: DType,
    /// `{base}/api/info/{path}`, for messages.
    location: String,
    /// Bytes of one decoded chunk.
    chunk_bytes: u64,
    /// One element of zeros (the fill of nothing: chunks are never absent).
    zero: Vec<u8>,
    concurrency: usize,
    /// Read by `api/fetch` boxes only ([`Caterva2Array::fetch_only`]).
    fetch_only: bool,
}

impl std::fmt::Debug for Caterva2Array {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Caterva2Array")
            .field("client", &self.client)
            .field("path", &self.path)
            .finish()
    }
}

/// `path` without leading or trailing `/`.
pub fn normalise_path(path: &str) -> String {
    path.trim_matches('/').to_string()
}

impl Caterva2Array {
    /// Discovers the dataset at `path` of the server `client` talks to: one `GET api/info`.
    ///
    /// # Errors
    /// `NOT_FOUND` naming the dataset (404); `HTTP_STATUS` for 401/403 (a dataset of a root
    /// the credentials do not open); [`FormatError::Invalid`] for an answer that is not the
    /// JSON of [`api::Info`] or whose geometry fails [`api::stored_grid`];
    /// [`FormatError::Unsupported`] for a dtype chunkwise does not read.
    pub async fn discover(client: Arc<Client>, path: &str) -> crate::Result<Caterva2Array> {
        let path = normalise_path(path);
        let url = client.url("info", &path, "");
        let (info, answer): (api::Info, _) = client.get_json(&url, &url).await?;
        Ok(Self::from_info(client, &path, info, answer.etag)?)
    }

    /// The array that `info` (an `api/info` of `path`) describes.
    ///
    /// # Errors
    /// As [`Caterva2Array::discover`]'s format errors.
    pub fn from_info(
        client: Arc<Client>,
        path: &str,
        info: api::Info,
        etag: Option<String>,
    ) -> Result<Caterva2Array, FormatError> {
        let path = normalise_path(path);
        let location = client.url("info", &path, "");
        match info.kind.as_deref() {
            Some("group") => {
                return Err(FormatError::NoSuchNode {
                    location,
                    detail: format!("{path} is a group (a directory), not a dataset"),
                })
            }
            Some("ctable") => {
                return Err(FormatError::Unsupported {
                    location,
                    format: "caterva2",
                    detail: format!("{path} is a CTable (a table of columns), not an array"),
                })
            }
            _ => {}
        }
        let dtype_name = info.dtype.clone().ok_or_else(|| FormatError::Invalid {
            location: location.clone(),
            format: "caterva2",
            detail: "api/info has no dtype".into(),
        })?;
        let dtype = api::parse_dtype(&location, &dtype_name)?;
        let grid = if info.is_lazy() {
            lazy_grid(&location, &info, &dtype)?
        } else {
            api::stored_grid(&location, &info, &dtype)?
        };
        let chunk_bytes = grid.decoded_chunk_items().unwrap_or(0) * dtype.itemsize as u64;
        let fetch_only = info.is_lazy() || is_hdf5_member(&path);
        Ok(Caterva2Array {
            fetch_only,
            client,
            path,
            info,
            etag,
            zero: vec![0; dtype.itemsize],
            grid,
            dtype,
            location,
            chunk_bytes,
            concurrency: CONCURRENCY,
        })
    }

    /// This array with at most `n` chunk requests in flight (at least 1).
    pub fn with_concurrency(mut self, n: usize) -> Caterva2Array {
        self.concurrency = n.max(1);
        self
    }

    /// Whether this dataset has no stored Blosc2 chunks to ask for and is read by `api/fetch`
    /// boxes only: a lazy expression (computed), or a dataset of an HDF5 file (caterva2's
    /// `api/chunk` refuses those with 400: their chunks are HDF5's).
    pub fn fetch_only(&self) -> bool {
        self.fetch_only
    }

    /// The dataset path (`@public/dir/ds.b2nd`).
    pub fn path(&self) -> &str {
        &self.path
    }

    /// Its `api/info`.
    pub fn api_info(&self) -> &api::Info {
        &self.info
    }

    /// The `ETag` the `api/info` answer carried.
    pub fn etag(&self) -> Option<&str> {
        self.etag.as_deref()
    }

    /// The client.
    pub fn client(&self) -> &Arc<Client> {
        &self.client
    }

    /// The seed of this array.
    pub fn to_seed_value(&self) -> Caterva2Seed {
        Caterva2Seed {
            path: self.path.clone(),
            info: self.info.clone(),
            etag: self.etag.clone(),
        }
    }

    /// Largest answer accepted for one chunk: a Blosc2 chunk is at most its decoded bytes
    /// plus its header and per-block and per-stream sizes (`BLOSC2_MAX_OVERHEAD` and 4 bytes
    /// per stream); twice the decoded size and 64 KiB is a generous bound that still stops a
    /// hostile server.
    fn chunk_limit(&self) -> u64 {
        self.chunk_bytes.saturating_mul(2).saturating_add(64 * 1024)
    }

    /// The stored bytes of chunk `chunk` (linear index): `GET api/chunk?nchunk=`.
    ///
    /// # Errors
    /// As [`Client::get`].
    pub async fn fetch_chunk(&self, chunk: u64) -> crate::Result<bytes::Bytes> {
        let url = self
            .client
            .url("chunk", &self.path, &format!("nchunk={chunk}"));
        self.client
            .get_bytes(&url, &self.location, self.chunk_limit())
            .await
    }
}

/// Whether `path` names a dataset inside an HDF5 file (a segment before the last ending in
/// `.h5` or `.hdf5`, caterva2's `HDF5_SUFFIXES`).
fn is_hdf5_member(path: &str) -> bool {
    let segments: Vec<&str> = path.split('/').collect();
    segments[..segments.len().saturating_sub(1)]
        .iter()
        .any(|s| {
            let s = s.to_ascii_lowercase();
            s.ends_with(".h5") || s.ends_with(".hdf5")
        })
}

/// The grid of a lazy expression: its shape, read as one chunk (its reads are `api/fetch`
/// slices, never chunks).
fn lazy_grid(location: &str, info: &api::Info, dtype: &DType) -> Result<Grid, FormatError> {
    let invalid = |detail: String| FormatError::Invalid {
        location: location.to_string(),
        format: "caterva2",
        detail,
    };
    let shape = info
        .shape
        .clone()
        .ok_or_else(|| invalid("a lazy expression of unknown shape".into()))?;
    if shape.len() > api::MAX_DIMS {
        return Err(invalid(format!("{} dimensions", shape.len())));
    }
    shape
        .iter()
        .try_fold(dtype.itemsize as u64, |n, &d| n.checked_mul(d))
        .ok_or_else(|| invalid(format!("shape {shape:?} overflows")))?;
    let chunks: Vec<u64> = shape.iter().map(|&d| d.max(1)).collect();
    Grid::new(shape, chunks.clone(), chunks).map_err(|e| invalid(e.to_string()))
}

impl ArrayFormat for Caterva2Array {
    fn grid(&self) -> &Grid {
        &self.grid
    }

    fn dtype(&self) -> DType {
        self.dtype
    }

    fn info(&self) -> ArrayInfo {
        let schunk = self.info.schunk.as_ref();
        ArrayInfo {
            format: "caterva2",
            shape: self.grid.shape.clone(),
            dtype: self.dtype.to_string(),
            chunks: self.grid.chunks.clone(),
            blocks: self.grid.blocks.clone(),
            codecs: match (
                self.info.expression.as_ref(),
                schunk.and_then(|s| s.cparams.as_ref()),
            ) {
                (Some(e), _) => format!("lazy expression {e}"),
                (None, Some(c)) => api::describe_codecs(c),
                (None, None) => String::new(),
            },
            nchunks: Some(schunk.map_or(0, |s| s.nchunks)),
            nbytes: ArrayInfo::nbytes_of(&self.grid.shape, self.dtype.itemsize),
            cbytes: schunk.map_or(0, |s| s.cbytes),
            source_bytes: schunk.map_or(0, |s| s.cbytes),
        }
    }

    fn locate(&self, chunk: u64) -> Result<ChunkPlace, FormatError> {
        if chunk >= self.grid.nchunks().unwrap_or(0) {
            return Err(FormatError::Invalid {
                location: self.location.clone(),
                format: "caterva2",
                detail: format!("chunk {chunk} outside the grid"),
            });
        }
        Ok(ChunkPlace::Loaded)
    }

    fn decode(&self, chunk: u64, stored: &[u8]) -> Result<Vec<u8>, FormatError> {
        let err = |source: ChunkDecodeError| FormatError::Chunk {
            location: self.location.clone(),
            chunk,
            range: None,
            source,
        };
        let h = ChunkHeader::parse(stored).map_err(|e| err(e.into()))?;
        if let Some(e) = self.blosc2_header_error(&h) {
            return Err(err(e));
        }
        decode_chunk(stored).map_err(|e| err(e.into()))
    }

    fn payload_is_blosc2(&self) -> bool {
        true
    }

    fn blosc2_header_error(&self, h: &ChunkHeader) -> Option<ChunkDecodeError> {
        if h.nbytes as u64 != self.chunk_bytes {
            return Some(ChunkDecodeError::Layout(format!(
                "chunk holds {} bytes, the dataset's chunks hold {}",
                h.nbytes, self.chunk_bytes
            )));
        }
        // The header's typesize is the item size it was compressed with (C-Blosc2 stores 1
        // for item sizes past BLOSC_MAX_TYPESIZE, 255): another one is a chunk of another
        // dtype (a dataset rewritten since its api/info), whose bytes would be misread.
        let itemsize = self.dtype.itemsize;
        if itemsize <= 255 && h.typesize != itemsize {
            return Some(ChunkDecodeError::Layout(format!(
                "chunk of {}-byte items, the dataset's dtype {} has {itemsize}",
                h.typesize, self.dtype
            )));
        }
        None
    }

    fn loader(&self) -> Option<&dyn ChunkLoader> {
        Some(self)
    }

    fn seed(&self) -> Option<crate::formats::Seed> {
        Some(self.to_seed_value().to_seed())
    }

    fn region_loader(&self) -> Option<&dyn RegionLoader> {
        Some(self)
    }
}

/// Bytes a Blosc2 frame of a slice carries besides its chunks (header, metalayers, offsets
/// and trailer, a few hundred bytes; counted generously).
const FRAME_OVERHEAD: u64 = 4096;

/// Largest `api/fetch` answer read, bytes.
pub const MAX_REGION_BYTES: u64 = 1 << 30;

impl Caterva2Array {
    /// `slice_` of `api/fetch` for the box `lo..hi`: `a:b` per dimension, comma-separated
    /// (caterva2's `parse_slice`; step 1 only).
    pub fn slice_param(lo: &[u64], hi: &[u64]) -> String {
        lo.iter()
            .zip(hi)
            .map(|(a, b)| format!("{a}:{b}"))
            .collect::<Vec<_>>()
            .join(",")
    }

    /// Stored bytes per element, estimated from the super-chunk (`cbytes / nbytes`).
    fn ratio(&self) -> Option<f64> {
        let s = self.info.schunk.as_ref()?;
        (s.nbytes > 0 && s.nchunks > 0).then(|| s.cbytes as f64 / s.nbytes as f64)
    }
}

#[async_trait::async_trait(?Send)]
impl RegionLoader for Caterva2Array {
    /// A lazy expression or an HDF5 dataset: always (no stored Blosc2 chunks). A stored
    /// Blosc2 dataset: when the box's
    /// estimated compressed bytes (its elements at the dataset's compression ratio, plus a
    /// frame's overhead), doubled for the server's recompression, are fewer than the
    /// estimated stored bytes of the `uncached` chunks (`cbytes / nchunks` each).
    fn prefers_region(&self, lo: &[u64], hi: &[u64], uncached: u64) -> bool {
        if self.fetch_only {
            return true;
        }
        let (Some(ratio), Some(s)) = (self.ratio(), self.info.schunk.as_ref()) else {
            return false;
        };
        let elems = lo.iter().zip(hi).fold(1f64, |n, (a, b)| n * (b - a) as f64);
        let region = elems * self.dtype.itemsize as f64 * ratio + FRAME_OVERHEAD as f64;
        let chunks = uncached as f64 * s.cbytes as f64 / s.nchunks as f64;
        2.0 * region < chunks
    }

    /// `GET api/fetch/{path}?slice_=lo:hi,...`: caterva2 answers a Blosc2 frame of the box
    /// (`NDArray.slice(...).to_cframe()`, or for a lazy expression `compute(...).to_cframe()`;
    /// the stored file itself when the box is the whole dataset), read here as a `.b2nd`.
    async fn load_region(&self, lo: &[u64], hi: &[u64]) -> crate::Result<Region> {
        #[cfg(feature = "b2nd")]
        {
            let url = self.client.url(
                "fetch",
                &self.path,
                &format!("slice_={}", Self::slice_param(lo, hi)),
            );
            let limit = lo
                .iter()
                .zip(hi)
                .fold(self.dtype.itemsize as u64, |n, (a, b)| {
                    n.saturating_mul(b - a)
                })
                .saturating_mul(2)
                .saturating_add(1 << 20)
                .min(MAX_REGION_BYTES);
            let bytes = self.client.get_bytes(&url, &self.location, limit).await?;
            self.region_from(bytes).await
        }
        #[cfg(not(feature = "b2nd"))]
        {
            let _ = (lo, hi);
            self.region_from(bytes::Bytes::new()).await
        }
    }

    fn region_only(&self) -> bool {
        self.fetch_only
    }

    async fn region_from(&self, bytes: bytes::Bytes) -> crate::Result<Region> {
        #[cfg(feature = "b2nd")]
        {
            let len = bytes.len() as u64;
            let source: Arc<dyn crate::io::RangeSource> = Arc::new(
                crate::io::memory::MemorySource::new(self.location.clone(), bytes.clone()),
            );
            let format =
                crate::formats::b2nd::B2ndArray::open(&*source, bytes.clone(), len).await?;
            Ok(Region {
                bytes,
                source,
                format: Box::new(format),
            })
        }
        #[cfg(not(feature = "b2nd"))]
        {
            let _ = bytes;
            Err(FormatError::Unsupported {
                location: self.location.clone(),
                format: "b2nd",
                detail: "this build of chunkwise leaves out the b2nd reader (cargo feature \
                         `b2nd`), which reads api/fetch answers"
                    .into(),
            }
            .into())
        }
    }
}

#[async_trait::async_trait(?Send)]
impl ChunkLoader for Caterva2Array {
    /// `GET api/chunk?nchunk=N` per chunk, at most the array's concurrency (default
    /// [`CONCURRENCY`]) in flight, each handed to `sink` as stored bytes.
    async fn load_chunks(
        &self,
        chunks: &[u64],
        _options: &CoalesceOptions,
        sink: &mut dyn ChunkSink,
    ) -> crate::Result<()> {
        if self.fetch_only {
            return Err(FormatError::Unsupported {
                location: self.location.clone(),
                format: "caterva2",
                detail: "a lazy expression or an HDF5 dataset is read by api/fetch slices, \
                         not by chunks"
                    .into(),
            }
            .into());
        }
        let mut arriving = std::pin::pin!(stream::iter(chunks.iter().copied())
            .map(|c| async move { (c, self.fetch_chunk(c).await) })
            .buffer_unordered(self.concurrency));
        while let Some((c, got)) = arriving.next().await {
            sink.stored(c, got?).await?;
        }
        Ok(())
    }

    fn fill_value(&self) -> &[u8] {
        &self.zero
    }

    /// `GET api/chunk?nchunk=` (a lazy expression has no stored chunks: `UNSUPPORTED`).
    async fn stored_chunk(&self, chunk: u64) -> crate::Result<Option<bytes::Bytes>> {
        if self.fetch_only {
            return Err(FormatError::Unsupported {
                location: self.location.clone(),
                format: "caterva2",
                detail: "a lazy expression or an HDF5 dataset has no stored Blosc2 chunks".into(),
            }
            .into());
        }
        Ok(Some(self.fetch_chunk(chunk).await?))
    }
}
