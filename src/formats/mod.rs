//! Formats: discovery (metadata) and chunk location, one module per format.
//!
//! A format turns the first bytes of a source (and whatever ranges it then asks for) into an
//! [`ArrayFormat`]: the array's geometry and dtype, where each chunk's stored bytes are, and
//! how to decode them into the layout the [`crate::selection::Grid`] describes. Fetching,
//! coalescing, caching and assembling are shared and live in [`crate::pipeline`].

#[cfg(feature = "b2nd")]
pub mod b2nd;
#[cfg(feature = "b2nd")]
pub mod b2z;
pub mod caterva2;
pub mod decode_error;
#[cfg(feature = "hdf5")]
pub mod hdf5;
pub mod signature;
#[cfg(feature = "zarr")]
pub mod zarr;

use crate::dtype::DType;
use crate::io::{MaybeSend, MaybeSync};
use crate::selection::Grid;
pub use decode_error::ChunkDecodeError;
use std::ops::Range;

/// An error in a source's structure or in what a format supports. I/O failures are not
/// here: functions that read return [`crate::Error`], whose one I/O variant is
/// [`crate::Error::Io`].
#[derive(Debug, Clone, thiserror::Error, PartialEq)]
#[non_exhaustive]
pub enum FormatError {
    /// The first bytes match no supported format.
    #[error("{location}: not a recognised array format (first bytes {magic})")]
    Unrecognised { location: String, magic: String },
    /// The source violates its format: a header, index or metalayer is malformed.
    #[error("{location}: invalid {format} data: {detail}")]
    Invalid {
        location: String,
        format: &'static str,
        detail: String,
    },
    /// A valid feature chunkwise does not read.
    #[error("{location}: unsupported {format} feature: {detail}")]
    Unsupported {
        location: String,
        format: &'static str,
        detail: String,
    },
    /// The source exists but holds no array or group at the requested path (an HDF5 dataset
    /// path that is missing or names a group). Code `NOT_FOUND`.
    #[error("{location}: {detail}")]
    NoSuchNode { location: String, detail: String },
    /// The source holds several arrays and no path picked one. Code `INVALID_ARGUMENT`.
    #[error("{location}: {detail}")]
    PathNeeded { location: String, detail: String },
    /// A chunk failed to decode (code `DECODE`); `source` is the failing codec's error.
    #[error(
        "{location}: chunk {chunk}{}: {source}",
        range.as_ref().map(|r| format!(" (bytes {}..{})", r.start, r.end)).unwrap_or_default()
    )]
    Chunk {
        /// The source (URL or path), or for Zarr the chunk object's URL.
        location: String,
        /// Linear C-order index in the chunk grid.
        chunk: u64,
        /// The chunk's stored bytes in `location`, when it is a range of one source (b2nd,
        /// HDF5) and the read knows it; `None` for a Zarr object or inline data.
        range: Option<Range<u64>>,
        #[source]
        source: ChunkDecodeError,
    },
}

impl FormatError {
    /// The error of a read of an array whose chunk grid holds 2^64 chunks or more: a valid
    /// array (zarr-python and h5py write a (2^53, 2^53) one with chunks (5, 4)) whose chunks
    /// the shared planner cannot number, as it counts them in a u64 ([`Grid::nchunks`]).
    pub fn uncountable_grid(location: &str, format: &'static str, grid: &Grid) -> FormatError {
        FormatError::Unsupported {
            location: location.to_string(),
            format,
            detail: format!(
                "the chunk grid {:?} (chunks per dimension) holds 2^64 chunks or more, past \
                 what chunkwise numbers (64 bits)",
                grid.chunk_counts()
            ),
        }
    }

    /// This error with the stored byte range of its chunk, if it is a
    /// [`FormatError::Chunk`] that does not name one yet.
    pub fn at_bytes(self, stored: Option<&Range<u64>>) -> FormatError {
        match self {
            FormatError::Chunk {
                location,
                chunk,
                range: None,
                source,
            } => FormatError::Chunk {
                location,
                chunk,
                range: stored.cloned(),
                source,
            },
            e => e,
        }
    }
}

/// Where one chunk's data comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChunkPlace {
    /// Stored bytes at this absolute byte range of the source.
    Stored(Range<u64>),
    /// Not stored: every element has this value (bytes of one element, in the array's dtype).
    Fill(Vec<u8>),
    /// Held in the metadata already (an HDF5 compact dataset): these stored bytes.
    Inline(bytes::Bytes),
    /// An object of its own that the format loads and decodes itself, in sets
    /// ([`ArrayFormat::loader`]): a Zarr chunk or the inner chunk of a shard.
    Loaded,
}

/// Receives the chunks a [`ChunkLoader`] loads, as each is decoded.
#[async_trait::async_trait(?Send)]
pub trait ChunkSink {
    /// Chunk `chunk` (linear C-order index in the grid) decoded into the layout of
    /// [`ArrayFormat::grid`], or `None` when it is absent from the store (read as the fill
    /// value: the Zarr rule for a missing chunk).
    ///
    /// # Errors
    /// Whatever stops the read (a cancelled read, a chunk that does not fit the layout).
    async fn chunk(&mut self, chunk: u64, decoded: Option<Vec<u8>>) -> Result<(), crate::Error>;

    /// Chunk `chunk`'s stored bytes as its source holds them (a Blosc2 chunk of a Caterva2
    /// dataset), for the pipeline to decode by [`ArrayFormat::decode`] and keep in the
    /// payload cache as they are (a format whose [`ArrayFormat::payload_is_blosc2`]).
    ///
    /// # Errors
    /// As [`ChunkSink::chunk`], and the chunk's decode error; a sink that takes decoded
    /// chunks only refuses them (`INVALID_ARGUMENT`).
    async fn stored(&mut self, chunk: u64, stored: bytes::Bytes) -> Result<(), crate::Error> {
        let _ = (chunk, stored);
        Err(crate::Error::InvalidArgument(
            "this read takes decoded chunks only".into(),
        ))
    }
}

/// A format whose chunks are objects of their own, loaded as a set rather than located as
/// byte ranges of one source (Zarr through `zarrs`, which batches the inner chunks of a
/// shard). The read pipeline hands it the chunks its cache lacks.
///
/// Not `Send` on any host: the sink borrows the read's progress callback.
#[async_trait::async_trait(?Send)]
pub trait ChunkLoader {
    /// Loads and decodes `chunks` (linear indexes, sorted, distinct), at most
    /// `options.concurrency` objects in flight, handing each to `sink` as it arrives (in any
    /// order).
    ///
    /// # Errors
    /// I/O and decode errors of the chunks; the first error of `sink`.
    async fn load_chunks(
        &self,
        chunks: &[u64],
        options: &crate::io::CoalesceOptions,
        sink: &mut dyn ChunkSink,
    ) -> Result<(), crate::Error>;
    /// The bytes of one element that every element of an absent chunk reads as.
    fn fill_value(&self) -> &[u8];
    /// Chunk `chunk`'s stored bytes as its object holds them (one request, not cached),
    /// `None` when it is absent; `None` also from a loader that cannot give them apart from
    /// decoding (the default).
    ///
    /// # Errors
    /// I/O errors of the request.
    async fn stored_chunk(&self, chunk: u64) -> Result<Option<bytes::Bytes>, crate::Error> {
        let _ = chunk;
        Ok(None)
    }
}

/// A selection's bounding box as an array of its own, fetched in one request by a format
/// that can ([`RegionLoader`]): its bytes in memory and its reader (a Blosc2 frame).
pub struct Region {
    /// The box's bytes as answered (what the payload cache keeps).
    pub bytes: bytes::Bytes,
    /// Where the region's stored bytes are (in memory).
    pub source: std::sync::Arc<dyn crate::io::RangeSource>,
    /// Its reader; its shape is the bounding box's extents.
    pub format: Box<dyn ArrayFormat>,
}

/// A format whose server answers a box of the array in one request (Caterva2's
/// `api/fetch?slice_=`), which the read pipeline uses instead of the touched chunks when the
/// format says that moves fewer bytes (or when it has no chunks to fetch: a lazy
/// expression). The pipeline keeps a box's bytes in the payload cache under the box (the
/// same box read again makes no request).
#[async_trait::async_trait(?Send)]
pub trait RegionLoader {
    /// Whether to read the box `lo..hi` (per dimension, elements) by [`RegionLoader::load_region`]
    /// rather than the `uncached` touched chunks the payload cache lacks.
    fn prefers_region(&self, lo: &[u64], hi: &[u64], uncached: u64) -> bool;
    /// Whether every read is a region (the format has no chunks to fetch): the pipeline
    /// then asks no cache for chunks and sets no bound on the chunks touched.
    fn region_only(&self) -> bool {
        false
    }
    /// The box `lo..hi` as an array of shape `hi - lo`, in this array's dtype.
    ///
    /// # Errors
    /// I/O errors; a malformed answer.
    async fn load_region(&self, lo: &[u64], hi: &[u64]) -> Result<Region, crate::Error>;
    /// The region whose bytes [`RegionLoader::load_region`] answered earlier (held by the
    /// payload cache), without a request.
    ///
    /// # Errors
    /// Bytes that do not read as a region (a damaged entry is then fetched again).
    async fn region_from(&self, bytes: bytes::Bytes) -> Result<Region, crate::Error>;
}

/// What discovery found, for display (`chunkwise info`, JS `info`).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ArrayInfo {
    /// Format name (`b2nd`, `b2z` for an array of a `.b2z` container, `hdf5`, `zarr2`, `zarr3`,
    /// `caterva2`).
    pub format: &'static str,
    /// Array shape (elements).
    pub shape: Vec<u64>,
    /// numpy typestr (`dtype.str`), or numpy's `dtype.descr` list for a record; `|S` (numpy's
    /// unsized bytes) for variable-length strings, whose reads give `|S{n}`.
    pub dtype: String,
    /// Chunk shape (elements).
    pub chunks: Vec<u64>,
    /// Block shape (elements).
    pub blocks: Vec<u64>,
    /// Codec and filters, e.g. `ZSTD(5) + SHUFFLE`.
    pub codecs: String,
    /// Number of chunks in the grid; `None` (JSON `null`) for a grid of 2^64 chunks or more,
    /// which a read refuses ([`FormatError::uncountable_grid`]).
    pub nchunks: Option<u64>,
    /// Uncompressed bytes of the array (numpy's `nbytes`: elements times item size, edge
    /// chunks not padded; for variable-length strings the item size is that of their stored
    /// heap references); `None` (JSON `null`) when that is 2^64 bytes or more
    /// ([`ArrayInfo::nbytes_of`]).
    pub nbytes: Option<u64>,
    /// Stored bytes of the data chunks.
    pub cbytes: u64,
    /// Total size of the source in bytes.
    pub source_bytes: u64,
}

impl ArrayInfo {
    /// numpy's `nbytes` of an array of `shape` (elements) and `itemsize` bytes per element,
    /// or `None` when it is 2^64 bytes or more: a valid file may declare such a shape (h5py
    /// and zarr-python write (2^53, 2^53) int16), and a wrapped or saturated count would be a
    /// wrong value.
    ///
    /// An array with a dimension of length 0 holds 0 bytes, whatever the others are
    /// (zarr-python's and h5py's `nbytes` of shape (2^40, 2^40, 0) are 0).
    pub fn nbytes_of(shape: &[u64], itemsize: usize) -> Option<u64> {
        crate::selection::count_product(itemsize as u64, shape.iter().copied())
    }

    /// Whether `cbytes` and `source_bytes` are known. A Zarr store's chunk objects are not
    /// listed (HTTP has no listing), so their stored sizes are unknown there; both fields
    /// then hold 0, which is no size.
    pub fn stored_size_known(&self) -> bool {
        !matches!(self.format, "zarr2" | "zarr3")
    }

    /// The info as JSON (what `chunkwise info --json` prints and JS `info` gives): the fields
    /// as serialised, with `cbytes` and `source_bytes` `null` where the stored size is unknown
    /// ([`ArrayInfo::stored_size_known`]).
    pub fn to_json(&self) -> serde_json::Value {
        let mut v = serde_json::to_value(self).unwrap_or(serde_json::Value::Null);
        if !self.stored_size_known() {
            v["cbytes"] = serde_json::Value::Null;
            v["source_bytes"] = serde_json::Value::Null;
        }
        v
    }
}

/// Kind of a node in a container's hierarchy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NodeKind {
    /// A group (HDF5 group, Zarr group): holds other nodes.
    Group,
    /// An array (HDF5 dataset, Zarr array).
    Array,
    /// A link whose target is not in this container or does not exist (an HDF5 external
    /// link, a dangling soft link): [`Node::error`] says which.
    Link,
    /// A table (a python-blosc2 CTable in a `.b2z`): a group whose arrays are its columns
    /// and valid-rows mask; [`Node::shape`] is `[live rows]`. `RemoteStore::table` opens it.
    Table,
}

/// One node of a container's hierarchy (an HDF5 file, a Zarr store), as a listing shows it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Node {
    /// Absolute path inside the container, `/` for the root group, `/group/data` below it.
    pub path: String,
    /// Group, array, or a link that leads outside the container or nowhere.
    pub kind: NodeKind,
    /// Array shape in elements (arrays whose metadata was read; `[]` for a scalar; `None` for
    /// groups, links and an HDF5 null dataspace, which holds no element).
    pub shape: Option<Vec<u64>>,
    /// numpy typestr of an array's elements (`None` for groups or when not read).
    pub dtype: Option<String>,
    /// Why the node cannot be read (an unsupported feature such as a virtual dataset or an
    /// external link), without failing the listing of its group.
    pub error: Option<String>,
    /// The node's attributes, as far as the listing read them (HDF5 attributes, Zarr
    /// `.zattrs` / v3 `attributes`); empty when it has none or the listing could not read them.
    #[serde(default, skip_serializing_if = "crate::attrs::Attrs::is_empty")]
    pub attrs: crate::attrs::Attrs,
    /// Dimension names of an array, one per dimension (`None` for an unnamed one): Zarr v3
    /// `dimension_names`, xarray's `_ARRAY_DIMENSIONS`, HDF5 dimension scales. `None` when
    /// the source names none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dims: Option<Vec<Option<String>>>,
}

/// A discovered array of one format: geometry, chunk locations, chunk decoding.
pub trait ArrayFormat: MaybeSend + MaybeSync {
    /// Shape, chunks and blocks.
    fn grid(&self) -> &Grid;
    /// Element type as stored.
    fn dtype(&self) -> DType;
    /// The full element type when [`ArrayFormat::dtype`] is only its flat form (`|S{n}`,
    /// `|V{n}`): strings, records, variable-length strings. `None` for numbers.
    fn element(&self) -> Option<crate::element::Element> {
        None
    }
    /// Description of what discovery found.
    fn info(&self) -> ArrayInfo;
    /// Where chunk `chunk` (linear C-order index in the chunk grid) is.
    ///
    /// # Errors
    /// [`FormatError`] if the index is outside the grid or the index data is inconsistent.
    fn locate(&self, chunk: u64) -> Result<ChunkPlace, FormatError>;
    /// Decodes a chunk's stored bytes into the layout of [`ArrayFormat::grid`].
    ///
    /// # Errors
    /// [`FormatError::Chunk`] when the bytes do not decode to the expected size.
    fn decode(&self, chunk: u64, stored: &[u8]) -> Result<Vec<u8>, FormatError>;
    /// Whether stored chunks are Blosc2 chunks whose blocks, in block-linear order, tile the
    /// decoded chunk as [`ArrayFormat::grid`] says, so single blocks can be fetched and decoded.
    fn blosc2_blocks(&self) -> bool {
        false
    }
    /// Whether stored chunks already are Blosc2 chunks. When not, decoded chunks are
    /// converted to Blosc2 for the payload cache ([`crate::cache::convert`]).
    fn payload_is_blosc2(&self) -> bool {
        false
    }
    /// For a format whose stored chunks are Blosc2 ([`ArrayFormat::payload_is_blosc2`]):
    /// what [`ArrayFormat::decode`] finds wrong with a chunk's header before decoding it
    /// (its size, its type size), `None` when nothing. The read pipeline decodes a chunk
    /// whose header passes a group of blocks at a time without calling `decode`
    /// ([`crate::codec::blosc2::GroupDecoder`]), and calls `decode` on any other, which
    /// reports the error. The default refuses every header.
    fn blosc2_header_error(
        &self,
        _header: &crate::codec::blosc2::ChunkHeader,
    ) -> Option<ChunkDecodeError> {
        Some(ChunkDecodeError::Layout("not a Blosc2 format".into()))
    }
    /// The loader of chunks that [`ArrayFormat::locate`] places as [`ChunkPlace::Loaded`].
    fn loader(&self) -> Option<&dyn ChunkLoader> {
        None
    }
    /// The loader of boxes of the array in one request ([`RegionLoader`]), if the format
    /// has one.
    fn region_loader(&self) -> Option<&dyn RegionLoader> {
        None
    }
    /// What rebuilds this reader without I/O (the discovery cache's seed), if the format
    /// has one.
    fn seed(&self) -> Option<Seed> {
        None
    }
    /// The array's attributes (see [`crate::attrs`]), read at discovery and kept in the seed.
    fn attrs(&self) -> crate::attrs::Attrs {
        crate::attrs::Attrs::new()
    }
    /// Dimension names, one per dimension (see [`Node::dims`]); `None` when none are named.
    fn dims(&self) -> Option<Vec<Option<String>>> {
        None
    }
}

/// A format's discovery seed, serialised by the format that owns it ([`FormatSeed`]): the
/// tag and version say which type and which shape `value` has. The cache keeps it in its
/// versioned discovery record without knowing the type; the opener dispatches on the tag.
#[derive(Debug, Clone, PartialEq)]
pub struct Seed {
    /// The owning seed type's [`FormatSeed::FORMAT`] (`b2nd`, `hdf5`, `hdf5-listing`).
    pub format: String,
    /// Its [`FormatSeed::VERSION`].
    pub version: u32,
    /// The seed, as serde serialises it.
    pub value: serde_json::Value,
}

/// A format's own seed type: what discovery found, serialisable, with a tag and a version of
/// its own. Raise [`FormatSeed::VERSION`] whenever the type's serialised shape or meaning
/// changes: a seed of another version is then a cache miss, never an error.
pub trait FormatSeed: serde::Serialize + serde::de::DeserializeOwned {
    /// The tag naming this type in records.
    const FORMAT: &'static str;
    /// Version of this type's serialised shape.
    const VERSION: u32;

    /// The seed as a record holds it.
    fn to_seed(&self) -> Seed {
        Seed {
            format: Self::FORMAT.to_string(),
            version: Self::VERSION,
            value: serde_json::to_value(self).unwrap_or(serde_json::Value::Null),
        }
    }

    /// This type's seed from a record's, `None` for another tag or version or a value that
    /// does not deserialise (a miss).
    fn from_seed(seed: &Seed) -> Option<Self> {
        (seed.format == Self::FORMAT && seed.version == Self::VERSION)
            .then(|| serde_json::from_value(seed.value.clone()).ok())
            .flatten()
    }
}

/// `nodes` with every URL in their reasons redacted ([`crate::io::url::redact_text`]): a
/// listing is shown and persisted, and a reason may name a source by a URL whose query or
/// user info is secret.
pub fn redact_node_errors(mut nodes: Vec<Node>) -> Vec<Node> {
    for n in &mut nodes {
        if let Some(e) = &n.error {
            n.error = Some(crate::io::url::redact_text(e));
        }
    }
    nodes
}

/// How many array names an error about a group lists before it counts the rest (the
/// message of a group path opened as an array, HDF5 and Zarr alike).
pub const LISTED_ARRAYS: usize = 10;

/// `its arrays: a, b` for the arrays of a group (the first [`LISTED_ARRAYS`], then how many
/// more), or that it holds none.
pub fn its_arrays(arrays: &[String]) -> String {
    if arrays.is_empty() {
        return "it holds no arrays".into();
    }
    let mut s = format!(
        "its arrays: {}",
        arrays
            .iter()
            .take(LISTED_ARRAYS)
            .cloned()
            .collect::<Vec<_>>()
            .join(", ")
    );
    if arrays.len() > LISTED_ARRAYS {
        s.push_str(&format!(" and {} more", arrays.len() - LISTED_ARRAYS));
    }
    s
}
