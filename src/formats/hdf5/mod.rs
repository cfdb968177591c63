//! HDF5 datasets, discovered with the `hdf5-reader` crate over async range reads.
//!
//! Discovery ([`discover`]) runs the crate's synchronous parsers on a [`store::SparseStore`]
//! of fetched ranges and fetches what they miss in rounds ([`store::Discovery`]). A source of
//! at most 8 MiB arrives whole at open (`RemoteArray::open_source`), so its discovery makes no
//! request. The dataset then reads as an [`ArrayFormat`]:
//!
//! - chunked: HDF5's chunk grid; each allocated chunk is one stored range, unallocated chunks
//!   read as the fill value; filters deflate, shuffle and fletcher32 are decoded here, and
//!   those of [`filters`] (szip, nbit, scale-offset, and the plugins LZF, Blosc, LZ4,
//!   bitshuffle, Zstandard, Blosc2); any other filter is refused at open
//!   ([`Hdf5Error::Unsupported`]);
//! - contiguous: blocks of at most [`CONTIGUOUS_BLOCK_BYTES`], each one byte range of the
//!   stored block (rows, or parts of long rows), so a selection fetches about what it
//!   touches;
//! - compact: one chunk, the bytes held in the object header.
//!
//! Datatypes ([`discover::element_of`], rules in [`crate::element`]): numbers, enums, h5py's
//! bools, fixed-length strings, compounds and array datatypes (read as trailing dimensions)
//! decode in place; variable-length strings are resolved after assembly from the global heap
//! ([`heap`]).
//!
//! Attributes and dimension names ([`attrs`]) are read at discovery, for every listed node
//! and each opened dataset, and kept in the seeds.

pub mod attrs;
pub mod discover;
pub mod filters;
pub mod header;
pub mod heap;
pub mod index;
pub mod list;
pub mod store;

use super::{ArrayFormat, ArrayInfo, ChunkDecodeError, ChunkPlace, FormatError};
use crate::dtype::DType;
use crate::element::Element;
use crate::io::{IoError, RangeSource};
use crate::selection::Grid;
use bytes::Bytes;
use discover::{ChunkInfo, DatasetMeta, Layout, Member};
use std::collections::HashMap;
use std::sync::Arc;
use store::{Discovery, SparseStore};

const FORMAT: &str = "hdf5";

/// Largest block a contiguous dataset is read by (64 KiB; see `contiguous_block`). With
/// 1 MiB row blocks, one element of a large dataset moved 1 MiB and a preview of every 16th
/// row of a (4096, 4096) float32 dataset all 64 MiB; with 64 KiB, 64 KiB and 16 MiB (4.3 MiB
/// at 16 KiB). Whole reads take the same time (one coalesced request either way; native and
/// wasm in Node: 64 MiB in 203 vs 210 ms), and at 40 ms and 100 Mbit/s that preview took
/// 2.1 s instead of 5.6 s. Smaller blocks would mean more chunks per read for little more.
pub const CONTIGUOUS_BLOCK_BYTES: u64 = 64 << 10;

pub use super::signature::HDF5_SIGNATURE as SIGNATURE;

/// Filter ids decoded here: deflate, shuffle, fletcher32, then those of [`filters`] (szip,
/// nbit, scale-offset, LZF, Blosc, LZ4, bitshuffle, Zstandard, Blosc2).
pub const SUPPORTED_FILTERS: [u16; 12] = [
    1,
    2,
    3,
    filters::SZIP,
    filters::NBIT,
    filters::SCALEOFFSET,
    filters::LZF,
    filters::BLOSC,
    filters::LZ4,
    filters::BITSHUFFLE,
    filters::ZSTD,
    filters::BLOSC2,
];

/// An HDF5-specific error; converted into [`FormatError`] for callers of the format trait.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Hdf5Error {
    /// The file or one of its structures is malformed, or a path does not exist (message
    /// from `hdf5-reader`).
    #[error("{0}")]
    Reader(String),
    /// The structure is inconsistent in a way chunkwise checks itself.
    #[error("{0}")]
    Invalid(String),
    /// A valid feature not read here (datatype, filter, virtual dataset...).
    #[error("{0}")]
    Unsupported(String),
    /// The path names no dataset (missing, or a group).
    #[error("{0}")]
    NotFound(String),
    /// No dataset path was given and the root group does not hold exactly one dataset.
    #[error("a dataset path is needed; the root group holds: {0}")]
    PathNeeded(String),
    /// Reading failed.
    #[error(transparent)]
    Io(#[from] IoError),
}

impl From<hdf5_reader::error::Error> for Hdf5Error {
    fn from(e: hdf5_reader::error::Error) -> Self {
        use hdf5_reader::error::Error as E;
        let s = e.to_string();
        // The crate wraps path errors with context: its message is the stable part.
        if matches!(e, E::DatasetNotFound(_) | E::GroupNotFound(_))
            || s.contains("dataset not found: ")
            || s.contains("group not found: ")
        {
            Hdf5Error::NotFound(s)
        } else if s.to_ascii_lowercase().contains("unsupported") {
            Hdf5Error::Unsupported(s)
        } else {
            Hdf5Error::Reader(s)
        }
    }
}

impl Hdf5Error {
    /// This error as the crate's error about `location`: [`Hdf5Error::Io`] as
    /// [`crate::Error::Io`], the rest as a [`FormatError`] about `location`.
    pub fn into_error(self, location: &str) -> crate::Error {
        match self {
            Hdf5Error::Io(e) => crate::Error::Io(e),
            other => crate::Error::Format(other.into_format(location)),
        }
    }

    /// A non-I/O error as a [`FormatError`] about `location` (only [`Hdf5Error::into_error`]
    /// calls it, having taken [`Hdf5Error::Io`] out).
    fn into_format(self, location: &str) -> FormatError {
        match self {
            Hdf5Error::Unsupported(detail) => FormatError::Unsupported {
                location: location.to_string(),
                format: FORMAT,
                detail,
            },
            e @ Hdf5Error::NotFound(_) => FormatError::NoSuchNode {
                location: location.to_string(),
                detail: e.to_string(),
            },
            e @ Hdf5Error::PathNeeded(_) => FormatError::PathNeeded {
                location: location.to_string(),
                detail: e.to_string(),
            },
            other => FormatError::Invalid {
                location: location.to_string(),
                format: FORMAT,
                detail: other.to_string(),
            },
        }
    }
}

pub use super::signature::{hdf5_signature_offset as signature_offset, is_hdf5};

/// An opened HDF5 file: the fetched bytes and the driver that fetches more.
pub struct Hdf5Source<'a> {
    discovery: Discovery<'a>,
}

impl<'a> Hdf5Source<'a> {
    /// Starts discovery on `source` of `len` bytes whose first bytes are `head` (all of it
    /// for a small source, so nothing more is fetched).
    pub fn new(source: &'a dyn RangeSource, head: Bytes, len: u64) -> Self {
        let store = Arc::new(SparseStore::new(len));
        store.insert(0, head);
        Hdf5Source {
            discovery: Discovery::new(source, store),
        }
    }

    /// Sets the readahead: misses are widened to multiples of `bytes` (default 64 KiB).
    pub fn with_readahead(mut self, bytes: u64) -> Self {
        self.discovery.readahead = bytes.max(1);
        self
    }

    /// Sets the over-read allowed when the nodes of one chunk-index level are merged, as a
    /// fraction of the level's bytes (default [`index::DEFAULT_INDEX_OVER_READ`]; `0` merges
    /// only by the request target of [`store::Discovery::fetch_round`]).
    pub fn with_index_over_read(mut self, fraction: f64) -> Self {
        self.discovery.index_over_read = fraction;
        self
    }

    /// Rounds of fetching so far.
    pub fn rounds(&self) -> usize {
        self.discovery.rounds()
    }

    /// The dataset at `path`.
    ///
    /// # Errors
    /// [`Hdf5Error`]: missing path, unsupported datatype, malformed file, I/O.
    pub async fn dataset(&mut self, path: &str) -> Result<DatasetMeta, Hdf5Error> {
        match self.dataset_once(path).await {
            Err(e @ Hdf5Error::Io(_)) => Err(e),
            // The crate parses every attribute of a dataset when it opens it and fails over a
            // broken one: hide them from the crate (attrs::attribute_masks) and retry.
            Err(e) => {
                let p = path.to_string();
                let mask = self
                    .discovery
                    .run_raw(move |f| match list::address_of(f, &p)? {
                        Some(a) => attrs::attribute_masks(f, a),
                        None => Ok(Vec::new()),
                    })
                    .await;
                match mask {
                    Ok(patches) if !patches.is_empty() => {
                        for (at, bytes) in patches {
                            self.discovery.store().patch(at, bytes.into());
                        }
                        self.dataset_once(path).await
                    }
                    Err(io @ Hdf5Error::Io(_)) => Err(io),
                    _ => Err(e),
                }
            }
            ok => ok,
        }
    }

    async fn dataset_once(&mut self, path: &str) -> Result<DatasetMeta, Hdf5Error> {
        // Nodes that exist but are not read here (list.rs) are refused by name, before the
        // crate reads a virtual dataset's header or an external dataset's missing block.
        // A link storage this check cannot read is left to the crate's own path resolution
        // below, which reports it (I/O errors still end discovery).
        let p = path.to_string();
        match self
            .discovery
            .run(move |f| list::unsupported_step(f, &p))
            .await
        {
            Ok(Some(reason)) => return Err(Hdf5Error::Unsupported(format!("{path}: {reason}"))),
            Err(e @ Hdf5Error::Io(_)) => return Err(e),
            Ok(None) | Err(_) => {}
        }
        let p = path.to_string();
        // The chunk index level by level (index.rs), so the walk below finds it held.
        let root = self
            .discovery
            .run(move |f| index::index_step(f, &p))
            .await?;
        if let Some(root) = root {
            index::prefetch(&mut self.discovery, &root).await?;
        }
        let p = path.to_string();
        self.discovery
            .run(move |f| discover::dataset_step(f, &p))
            .await?
    }

    /// The attributes and dimension names of the dataset at `path` of `rank` dimensions
    /// ([`attrs`]): its own attributes, then the `NAME` of each scale its `DIMENSION_LIST`
    /// references, found among the links of the groups on its path (parent first; a scale
    /// elsewhere names its dimension only by its `NAME`). A broken attribute is an `Omitted`
    /// value, never an error.
    ///
    /// # Errors
    /// I/O errors, and the crate's errors for a path or object header that does not parse.
    pub async fn attrs(
        &mut self,
        path: &str,
        rank: usize,
    ) -> Result<(crate::attrs::Attrs, Option<Vec<Option<String>>>), Hdf5Error> {
        let p = path.to_string();
        let at = self
            .discovery
            .run(move |f| Ok(f.dataset(&p)?.address()))
            .await?;
        // Attributes as stored: the unpatched bytes (store.rs, `Masked`).
        let own = self.discovery.run_raw(move |f| attrs::read(f, at)).await?;
        let scales: Vec<u64> = own
            .scale
            .dimension_list
            .iter()
            .flatten()
            .flatten()
            .copied()
            .filter(|&a| a != at)
            .collect();
        let p = path.to_string();
        let found = if scales.is_empty() {
            HashMap::new()
        } else {
            self.discovery
                .run_raw(move |f| Ok(scale_paths(f, &p, &scales)))
                .await?
        };
        let mut found = found;
        found.insert(at, (list::absolute("/", path), own.scale.clone()));
        let dims = attrs::dims(rank, &list::absolute("/", path), &own.scale, |a| {
            found.get(&a).cloned()
        });
        Ok((own.attrs, dims))
    }

    /// Every group and dataset of the file, with shapes and dtypes, without reading any
    /// chunk index ([`list::list`]).
    ///
    /// # Errors
    /// [`Hdf5Error`]: malformed root group or link storage, I/O.
    pub async fn list(&mut self) -> Result<Vec<crate::formats::Node>, Hdf5Error> {
        list::list(&mut self.discovery).await
    }

    /// The children of the group at `path` (`/` for the root).
    ///
    /// # Errors
    /// [`Hdf5Error`]: missing group, malformed file, I/O.
    pub async fn members(&mut self, path: &str) -> Result<Vec<Member>, Hdf5Error> {
        // The children's headers in one batch (list.rs), not one restart per child.
        list::members(&mut self.discovery, path).await
    }
}

impl Hdf5Source<'_> {
    /// The error for `path`, which names no dataset (the crate's `detail`): when it names a
    /// group, [`Hdf5Error::NotFound`] saying so with the arrays below it (paths relative to
    /// the group, from [`list::list`]), else `detail` as it was. I/O errors of the check
    /// end it.
    async fn not_a_dataset(&mut self, path: &str, detail: String) -> Hdf5Error {
        let group = format!("/{}", path.trim_matches('/'));
        match self.members(&group).await {
            Ok(_) => {}
            Err(e @ Hdf5Error::Io(_)) => return e,
            Err(_) => return Hdf5Error::NotFound(detail),
        }
        let prefix = if group == "/" {
            "/".to_string()
        } else {
            format!("{group}/")
        };
        let arrays: Vec<String> = match self.list().await {
            Ok(nodes) => nodes
                .iter()
                .filter(|n| n.kind == crate::formats::NodeKind::Array)
                .filter_map(|n| n.path.strip_prefix(&prefix).map(str::to_string))
                .collect(),
            Err(e @ Hdf5Error::Io(_)) => return e,
            Err(_) => Vec::new(),
        };
        Hdf5Error::NotFound(format!(
            "{group} is a group, not an array; {}",
            crate::formats::its_arrays(&arrays)
        ))
    }
}

/// Discovery step: the path and scale attributes of each dimension scale at `addresses`
/// (object header addresses as stored), looked up among the hard links of the groups on
/// `path` (its parent first, then up to the root). A scale not linked there keeps its
/// `NAME` with the path `""` (no basename to fall back on); one whose header does not parse
/// is left out (its dimension is unnamed).
fn scale_paths(
    f: &hdf5_reader::Hdf5File,
    path: &str,
    addresses: &[u64],
) -> HashMap<u64, (String, attrs::ScaleInfo)> {
    let full = list::absolute("/", path);
    let parts: Vec<&str> = full.split('/').filter(|s| !s.is_empty()).collect();
    let mut out = HashMap::new();
    let mut paths: HashMap<u64, String> = HashMap::new();
    // The groups on the path, parent first.
    for depth in (0..parts.len()).rev() {
        let group = format!("/{}", parts[..depth].join("/"));
        let at = if depth == 0 {
            f.root_group().map(|g| g.address())
        } else {
            f.group(&group).map(|g| g.address())
        };
        let Ok(links) = at.and_then(|a| list::group_links(f, a)) else {
            continue;
        };
        for (name, t) in links {
            if let list::Target::Hard(a) = t {
                if addresses.contains(&a) {
                    paths.entry(a).or_insert_with(|| list::join(&group, &name));
                }
            }
        }
    }
    for &a in addresses {
        if let Ok(na) = attrs::read(f, a) {
            let p = paths.get(&a).cloned().unwrap_or_default();
            out.insert(a, (p, na.scale));
        }
    }
    out
}

/// Lists every group and dataset of the HDF5 file `source` of `len` bytes whose first bytes
/// are `head` (the whole file when small: then no request is made), with shapes and dtypes
/// and no chunk index read. Nodes not read here carry the reason in
/// [`crate::formats::Node::error`]; the root group comes first, then paths in order.
///
/// # Errors
/// [`FormatError::Invalid`] for a malformed file; I/O errors ([`crate::Error::Io`]).
pub async fn list(
    source: &dyn RangeSource,
    head: Bytes,
    len: u64,
) -> crate::Result<Vec<crate::formats::Node>> {
    let location = source.location().to_string();
    Hdf5Source::new(source, head, len)
        .list()
        .await
        .map_err(|e| e.into_error(&location))
}

/// A discovered HDF5 dataset, readable through [`ArrayFormat`].
#[derive(Debug, Clone)]
pub struct Hdf5Array {
    location: String,
    meta: DatasetMeta,
    /// Grid item type: the dataset's, or an array datatype's base (h5py expands an array
    /// datatype into trailing dimensions of the grid).
    dtype: DType,
    /// The item type when it is not a plain number.
    element: Option<Element>,
    /// One grid item's fill bytes, strings normalised.
    fill: Vec<u8>,
    grid: Grid,
    /// Chunk linear index -> index into the chunk map (chunked layout).
    chunk_at: HashMap<u64, usize>,
    source_len: u64,
    /// Reduced-precision integers (known from an nbit filter's datatype description): stored
    /// chunks hold the file type's bits, converted to values after decoding.
    bits: Option<filters::BitField>,
    /// The dataset's attributes ([`attrs`]).
    attrs: crate::attrs::Attrs,
    /// Dimension names from dimension scales ([`attrs::dims`]).
    dims: Option<Vec<Option<String>>>,
}

impl Hdf5Array {
    /// Discovers the dataset at `path` (or the root group's only dataset when `None`).
    /// `head` holds the first bytes of the source (all of it when small), `len` its size.
    ///
    /// # Errors
    /// [`FormatError::Invalid`] for malformed files; [`FormatError::NoSuchNode`] for a
    /// missing path, or a group's path (then saying it is a group and naming the arrays
    /// below it); [`FormatError::PathNeeded`] without a path when the root does not hold
    /// exactly one dataset; [`FormatError::Unsupported`] for datatypes, layouts or filters
    /// not read here; I/O errors ([`crate::Error::Io`]).
    pub async fn open(
        source: &dyn RangeSource,
        head: Bytes,
        len: u64,
        path: Option<&str>,
    ) -> crate::Result<Hdf5Array> {
        let location = source.location().to_string();
        let e = |err: Hdf5Error| err.into_error(&location);
        let mut h = Hdf5Source::new(source, head, len);
        let path = match path {
            Some(p) if !p.is_empty() => p.to_string(),
            _ => {
                let members = h.members("/").await.map_err(e)?;
                let ds: Vec<&Member> = members
                    .iter()
                    .filter(|m| m.kind == discover::MemberKind::Dataset)
                    .collect();
                if ds.len() == 1 && members.len() == 1 {
                    format!("/{}", ds[0].name)
                } else {
                    let names: Vec<String> = members
                        .iter()
                        .map(|m| format!("{} ({:?})", m.name, m.kind).to_lowercase())
                        .collect();
                    return Err(e(Hdf5Error::PathNeeded(names.join(", "))));
                }
            }
        };
        let meta = match h.dataset(&path).await {
            Err(Hdf5Error::NotFound(detail)) => {
                return Err(e(h.not_a_dataset(&path, detail).await))
            }
            other => other.map_err(e)?,
        };
        let rank = meta.shape.len();
        let array = Self::from_meta(location.clone(), meta, len).map_err(e)?;
        // Attributes never fail the open, but a failed request does.
        let (attrs, dims) = match h.attrs(&path, rank).await {
            Ok(a) => a,
            Err(Hdf5Error::Io(io)) => return Err(crate::Error::Io(io)),
            Err(other) => (
                crate::attrs::Attrs(vec![(
                    "(attributes)".into(),
                    crate::attrs::AttrValue::Omitted(other.to_string()),
                )]),
                None,
            ),
        };
        Ok(array.with_attrs(attrs, dims))
    }

    /// This array with `attrs` and dimension names `dims` (from discovery or a seed).
    pub fn with_attrs(
        mut self,
        attrs: crate::attrs::Attrs,
        dims: Option<Vec<Option<String>>>,
    ) -> Hdf5Array {
        self.attrs = attrs;
        self.dims = dims;
        self
    }

    /// Opens the dataset at `path` of `source` on its own: one bounded read of the first
    /// `head_bytes` (which also gives the size), then discovery. [`crate::array::RemoteArray`]
    /// does this as part of opening; this entry point serves tools that want the metadata
    /// and chunk map only.
    ///
    /// # Errors
    /// As [`Hdf5Array::open`]; [`FormatError::Unrecognised`] when no HDF5 signature is found.
    pub async fn open_source(
        source: &dyn RangeSource,
        path: Option<&str>,
        head_bytes: u64,
    ) -> crate::Result<Hdf5Array> {
        let head = source
            .read(crate::io::ByteRange::bounded(0..head_bytes.max(16)))
            .await?;
        if !is_hdf5(&head.bytes) {
            return Err(FormatError::Unrecognised {
                location: source.location().to_string(),
                magic: head
                    .bytes
                    .iter()
                    .take(8)
                    .map(|b| format!("{b:02x}"))
                    .collect(),
            }
            .into());
        }
        Self::open(source, head.bytes, head.info.len, path).await
    }

    /// Builds the readable array from discovered metadata.
    ///
    /// # Errors
    /// [`Hdf5Error::Unsupported`] for filters not decoded here; [`Hdf5Error::Invalid`] for
    /// inconsistent geometry.
    pub fn from_meta(
        location: String,
        meta: DatasetMeta,
        source_len: u64,
    ) -> Result<Hdf5Array, Hdf5Error> {
        if let Some(f) = meta
            .filters
            .iter()
            .find(|f| !SUPPORTED_FILTERS.contains(&f.id))
        {
            return Err(Hdf5Error::Unsupported(format!(
                "filter {} ({}) (decoded here: deflate, shuffle, fletcher32, szip, nbit, scaleoffset, lzf, blosc, lz4, bitshuffle, zstd, blosc2)",
                f.id,
                f.name.as_deref().unwrap_or("unnamed")
            )));
        }
        let mut meta = meta;
        // The nbit filter's datatype description and the datatype message give the same
        // field; a dataset without the filter has only the latter.
        let bits = meta
            .filters
            .iter()
            .find(|f| f.id == filters::NBIT)
            .and_then(|f| filters::BitField::of_nbit(&f.client_data))
            .or(meta.bits);
        if let Some(b) = bits {
            // Reduced-precision floats need HDF5's conversion of custom floating-point layouts
            // (H5T__conv_f_f with the type's exponent and mantissa fields): not done here.
            if meta.dtype.kind == crate::dtype::Kind::Float {
                return Err(Hdf5Error::Unsupported(format!(
                    "nbit on a {}-bit floating-point type at bit offset {} (only integers of reduced precision are converted)",
                    b.precision, b.offset
                )));
            }
            let mut fill = meta.fill.clone();
            b.to_values(
                &mut fill,
                meta.dtype.itemsize,
                meta.dtype.order != crate::dtype::ByteOrder::Big,
                meta.dtype.kind == crate::dtype::Kind::Int,
            )
            .map_err(|e| Hdf5Error::Invalid(e.to_string()))?;
            meta.fill = fill;
        }
        // An array datatype reads as trailing dimensions of its base type (h5py does so).
        let (dtype, element, extra, mut fill) = match &meta.element {
            Some(Element::SubArray { base, shape }) => {
                let n = shape.iter().product::<u64>().max(1) as usize;
                let size = base.stored_size();
                let first = meta.fill.get(..size).unwrap_or(&[]).to_vec();
                if meta.fill.len() != size * n
                    || meta.fill.chunks_exact(size.max(1)).any(|c| c != first)
                {
                    return Err(Hdf5Error::Unsupported(
                        "an array datatype whose fill value differs between its items".into(),
                    ));
                }
                let element = match base.as_ref() {
                    Element::Number(_) => None,
                    other => Some(other.clone()),
                };
                (base.storage_dtype(), element, shape.clone(), first)
            }
            other => (meta.dtype, other.clone(), Vec::new(), meta.fill.clone()),
        };
        if let Some(e) = &element {
            e.normalize(&mut fill);
        }
        let itemsize = dtype.itemsize as u64;
        // A scalar reads with shape `[]` as h5py gives it (an array datatype as its
        // dimensions): one chunk of one element.
        let mut shape = meta.shape.clone();
        shape.extend(&extra);
        let chunks = match &meta.layout {
            _ if shape.is_empty() => Vec::new(),
            Layout::Chunked { chunk, .. } if !meta.shape.is_empty() => {
                let mut c = chunk.clone();
                c.extend(&extra);
                c
            }
            Layout::Chunked { .. } | Layout::Compact(_) => {
                shape.iter().map(|&s| s.max(1)).collect()
            }
            Layout::Contiguous { .. } => contiguous_block(&shape, itemsize),
        };
        let grid = Grid::new(shape, chunks.clone(), chunks)
            .map_err(|e| Hdf5Error::Invalid(e.to_string()))?;
        grid.decoded_chunk_items()
            .ok()
            .and_then(|n| n.checked_mul(itemsize))
            .filter(|&n| n <= u32::MAX as u64 * 4)
            .ok_or_else(|| Hdf5Error::Invalid("chunk too large".into()))?;
        let chunk_bytes = grid.decoded_chunk_items().unwrap_or(0) * itemsize;
        // Deflate can grow incompressible data by a few bytes per 16 KiB block, fletcher32
        // adds 4, the plugin filters a header per block (LZ4, bitshuffle) or a frame's header
        // and trailer (Blosc2): a stored chunk larger than this bound is a malformed size,
        // not a fetch.
        let max_stored = chunk_bytes + chunk_bytes / 16 + 4096;
        let mut chunk_at = HashMap::new();
        if let Layout::Chunked { entries, .. } = &meta.layout {
            for (i, c) in entries.iter().enumerate() {
                if c.size > max_stored {
                    return Err(Hdf5Error::Invalid(format!(
                        "chunk at {:?} stores {} bytes, more than a {chunk_bytes}-byte chunk can need",
                        c.offset, c.size
                    )));
                }
                let mut coords: Vec<u64> = if meta.shape.is_empty() {
                    Vec::new()
                } else {
                    c.offset
                        .iter()
                        .zip(&grid.chunks)
                        .map(|(o, n)| o / n)
                        .collect()
                };
                // An array datatype's trailing dimensions are one chunk wide.
                coords.resize(grid.chunks.len(), 0);
                if c.address.checked_add(c.size).is_none_or(|e| e > source_len) {
                    return Err(Hdf5Error::Invalid(format!(
                        "chunk at {:?} spans {}+{} past the end of the file ({source_len} bytes)",
                        c.offset, c.address, c.size
                    )));
                }
                chunk_at.insert(grid.chunk_linear(&coords), i);
            }
        }
        if let Layout::Contiguous {
            address: Some(a),
            size,
        } = &meta.layout
        {
            let need = grid
                .shape
                .iter()
                .try_fold(itemsize, |acc, &s| acc.checked_mul(s));
            if need != Some(*size) || a.checked_add(*size).is_none_or(|e| e > source_len) {
                return Err(Hdf5Error::Invalid(format!(
                    "contiguous block {a}+{size} does not hold the dataset or passes the end of the file"
                )));
            }
        }
        Ok(Hdf5Array {
            location,
            meta,
            dtype,
            element,
            fill,
            grid,
            chunk_at,
            source_len,
            bits,
            attrs: Default::default(),
            dims: None,
        })
    }

    /// What discovery found.
    pub fn meta(&self) -> &DatasetMeta {
        &self.meta
    }

    /// The allocated chunks (empty unless the layout is chunked).
    pub fn chunk_map(&self) -> &[ChunkInfo] {
        match &self.meta.layout {
            Layout::Chunked { entries, .. } => entries,
            _ => &[],
        }
    }

    fn chunk_bytes(&self) -> usize {
        self.grid.decoded_chunk_items().unwrap_or(0) as usize * self.dtype.itemsize
    }

    /// A chunk after its filters (`data`, `want` bytes expected): a contiguous dataset's
    /// short last block padded, the size checked, integers of reduced precision converted
    /// to values, strings normalised.
    fn finish(&self, chunk: u64, mut data: Vec<u8>, want: usize) -> Result<Vec<u8>, FormatError> {
        match &self.meta.layout {
            // The last block along a contiguous dataset's split axis is short: pad to the
            // grid's chunk.
            Layout::Contiguous { .. } if data.len() < want => data.resize(want, 0),
            _ => {}
        }
        if data.len() != want {
            return Err(self.chunk_err(
                chunk,
                ChunkDecodeError::Size {
                    actual: data.len() as u64,
                    expected: want as u64,
                },
            ));
        }
        if let Some(b) = self.bits {
            let d = self.meta.dtype;
            b.to_values(
                &mut data,
                d.itemsize,
                d.order != crate::dtype::ByteOrder::Big,
                d.kind == crate::dtype::Kind::Int,
            )
            .map_err(|e| self.chunk_err(chunk, e.into()))?;
        }
        if let Some(e) = &self.element {
            e.normalize(&mut data);
        }
        Ok(data)
    }

    /// Whether chunk `chunk` (linear index, C order over the grid) reaches past the dataset's
    /// extent on some axis: a partial edge chunk.
    fn partial_edge(&self, chunk: u64) -> bool {
        let g = &self.grid;
        let mut rest = chunk;
        for k in (0..g.shape.len()).rev() {
            let c = g.chunks[k].max(1);
            let count = g.shape[k].div_ceil(c).max(1);
            if (rest % count + 1) * c > g.shape[k] {
                return true;
            }
            rest /= count;
        }
        false
    }

    fn chunk_err(&self, chunk: u64, source: ChunkDecodeError) -> FormatError {
        FormatError::Chunk {
            location: self.location.clone(),
            chunk,
            range: None,
            source,
        }
    }
}

fn unshuffle(data: &[u8], elem: usize) -> Vec<u8> {
    if elem <= 1 || data.len() < elem {
        return data.to_vec();
    }
    let n = data.len() / elem;
    let mut out = vec![0u8; data.len()];
    for b in 0..elem {
        let plane = &data[b * n..(b + 1) * n];
        for (i, &v) in plane.iter().enumerate() {
            out[i * elem + b] = v;
        }
    }
    // Bytes past the last whole element are stored as they are (H5Zshuffle.c).
    out[n * elem..].copy_from_slice(&data[n * elem..]);
    out
}

/// The discovery seed of an HDF5 dataset: its [`discover::DatasetMeta`] (path, shape, dtype,
/// fill value, filter pipeline, layout with the chunk map), serialised field by field.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Hdf5Seed {
    /// The dataset's discovered metadata, chunk map included.
    pub dataset: discover::DatasetMeta,
    /// The dataset's attributes ([`attrs`]).
    #[serde(default)]
    pub attrs: crate::attrs::Attrs,
    /// Dimension names from dimension scales.
    #[serde(default)]
    pub dims: Option<Vec<Option<String>>>,
}

/// Raise `VERSION` when a field of [`discover::DatasetMeta`] (or of a type it holds) is
/// added without a serde default or changes meaning.
impl crate::formats::FormatSeed for Hdf5Seed {
    const FORMAT: &'static str = "hdf5";
    /// 2: attributes and dimension names. 3: the datatype's reduced precision and unfiltered
    /// partial edge chunks (a version 2 seed would read both wrong).
    const VERSION: u32 = 3;
}

impl Hdf5Seed {
    /// The reader this seed describes, for the source at `location` of `len` bytes.
    ///
    /// # Errors
    /// [`FormatError`] when the seed is inconsistent (callers take it as a miss).
    pub fn rebuild(&self, location: &str, len: u64) -> Result<Hdf5Array, FormatError> {
        Hdf5Array::from_meta(location.to_string(), self.dataset.clone(), len)
            .map(|a| a.with_attrs(self.attrs.clone(), self.dims.clone()))
            .map_err(|e| e.into_format(location))
    }
}

/// The discovery seed of an HDF5 file's listing ([`list()`]): its groups and arrays.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Hdf5ListingSeed {
    /// Groups and arrays, sorted by path.
    pub nodes: Vec<crate::formats::Node>,
}

impl crate::formats::FormatSeed for Hdf5ListingSeed {
    const FORMAT: &'static str = "hdf5-listing";
    /// 2: nodes carry attributes and dimension names. 3: datasets of a datatype layout not
    /// read (bfloat16, ...) carry the error their open gives; soft links through soft links
    /// resolved, `..` in a link's value a name.
    const VERSION: u32 = 3;
}

impl ArrayFormat for Hdf5Array {
    fn grid(&self) -> &Grid {
        &self.grid
    }
    fn seed(&self) -> Option<crate::formats::Seed> {
        use crate::formats::FormatSeed;
        Some(
            Hdf5Seed {
                dataset: self.meta.clone(),
                attrs: self.attrs.clone(),
                dims: self.dims.clone(),
            }
            .to_seed(),
        )
    }
    fn dtype(&self) -> DType {
        self.dtype
    }
    fn attrs(&self) -> crate::attrs::Attrs {
        self.attrs.clone()
    }
    fn dims(&self) -> Option<Vec<Option<String>>> {
        self.dims.clone()
    }
    fn element(&self) -> Option<Element> {
        self.element.clone()
    }
    fn info(&self) -> ArrayInfo {
        let codecs: Vec<String> = self
            .meta
            .filters
            .iter()
            .map(|f| match f.id {
                1 => format!("DEFLATE({})", f.client_data.first().copied().unwrap_or(0)),
                2 => "SHUFFLE".to_string(),
                3 => "FLETCHER32".to_string(),
                filters::SZIP => "SZIP".to_string(),
                filters::NBIT => "NBIT".to_string(),
                filters::SCALEOFFSET => "SCALEOFFSET".to_string(),
                filters::LZF => "LZF".to_string(),
                filters::BLOSC => "BLOSC".to_string(),
                filters::LZ4 => "LZ4".to_string(),
                filters::BITSHUFFLE => "BITSHUFFLE".to_string(),
                filters::ZSTD => "ZSTD".to_string(),
                filters::BLOSC2 => "BLOSC2".to_string(),
                id => format!("FILTER({id})"),
            })
            .collect();
        let (layout, cbytes) = match &self.meta.layout {
            Layout::Compact(d) => ("compact", d.len() as u64),
            Layout::Contiguous { address, size } => {
                ("contiguous", if address.is_some() { *size } else { 0 })
            }
            Layout::Chunked { entries, .. } => ("chunked", entries.iter().map(|c| c.size).sum()),
        };
        ArrayInfo {
            format: FORMAT,
            shape: self.grid.shape.clone(),
            dtype: match &self.element {
                Some(e) => e.descr(),
                None => self.dtype.to_string(),
            },
            chunks: self.grid.chunks.clone(),
            blocks: self.grid.blocks.clone(),
            codecs: if codecs.is_empty() {
                format!("none ({layout})")
            } else {
                format!("{} ({layout})", codecs.join(" + "))
            },
            nchunks: self.grid.nchunks(),
            nbytes: ArrayInfo::nbytes_of(&self.grid.shape, self.dtype.itemsize),
            cbytes,
            source_bytes: self.source_len,
        }
    }

    fn locate(&self, chunk: u64) -> Result<ChunkPlace, FormatError> {
        let Some(n) = self.grid.nchunks() else {
            return Err(FormatError::uncountable_grid(
                &self.location,
                FORMAT,
                &self.grid,
            ));
        };
        if chunk >= n {
            return Err(self.chunk_err(
                chunk,
                ChunkDecodeError::Layout(format!("outside the grid of {n} chunks")),
            ));
        }
        match &self.meta.layout {
            Layout::Compact(d) => Ok(ChunkPlace::Inline(Bytes::from(d.clone()))),
            Layout::Contiguous { address: None, .. } => Ok(ChunkPlace::Fill(self.fill.clone())),
            Layout::Contiguous {
                address: Some(a), ..
            } if self.grid.shape.is_empty() => {
                Ok(ChunkPlace::Stored(*a..a + self.dtype.itemsize as u64))
            }
            Layout::Contiguous {
                address: Some(a), ..
            } => {
                // The block's elements follow each other in the stored block (see
                // `contiguous_block`): from its first element's C-order index, as many as the
                // block holds inside the dataset (fewer at the end of the split axis).
                let (g, itemsize) = (&self.grid, self.dtype.itemsize as u64);
                let (mut rest, mut first, mut len, mut stride) = (chunk, 0u64, 1u64, 1u64);
                for k in (0..g.shape.len()).rev() {
                    let c = g.chunks[k];
                    let count = g.shape[k].div_ceil(c);
                    let at = rest % count * c;
                    rest /= count;
                    first += at * stride;
                    len *= c.min(g.shape[k] - at);
                    stride *= g.shape[k];
                }
                Ok(ChunkPlace::Stored(
                    a + first * itemsize..a + (first + len) * itemsize,
                ))
            }
            Layout::Chunked { entries, .. } => match self.chunk_at.get(&chunk) {
                Some(&i) => {
                    let c = &entries[i];
                    Ok(ChunkPlace::Stored(c.address..c.address + c.size))
                }
                None => Ok(ChunkPlace::Fill(self.fill.clone())),
            },
        }
    }

    fn decode(&self, chunk: u64, stored: &[u8]) -> Result<Vec<u8>, FormatError> {
        let want = self.chunk_bytes();
        let mut data = stored.to_vec();
        if let Layout::Chunked {
            entries,
            unfiltered_edges,
            ..
        } = &self.meta.layout
        {
            if *unfiltered_edges && self.partial_edge(chunk) {
                // stored as it is (`H5D__chunk_lookup`'s partial-edge rule): no filter ran
                return self.finish(chunk, data, want);
            }
            let mask = self
                .chunk_at
                .get(&chunk)
                .map(|&i| entries[i].filter_mask)
                .unwrap_or(0);
            let skipped = |i: usize| i < 32 && mask & (1 << i) != 0;
            for (i, f) in self.meta.filters.iter().enumerate().rev() {
                if skipped(i) {
                    continue;
                }
                // What filter `i` was given when the chunk was written: the chunk, plus the
                // 4-byte checksum of every fletcher32 applied before it (netCDF-C puts
                // fletcher32 first: H5Z_filter_fletcher32 appends its checksum to the data
                // the later filters see).
                let limit = want
                    + 4 * self.meta.filters[..i]
                        .iter()
                        .enumerate()
                        .filter(|(j, g)| g.id == 3 && !skipped(*j))
                        .count();
                data = match f.id {
                    1 => crate::codec::inflate::inflate_zlib_to_vec(&data, limit).map_err(
                        |detail| {
                            self.chunk_err(
                                chunk,
                                ChunkDecodeError::Codec {
                                    codec: "deflate",
                                    detail,
                                },
                            )
                        },
                    )?,
                    2 => unshuffle(
                        &data,
                        f.client_data
                            .first()
                            .map(|&s| s as usize)
                            .unwrap_or(self.meta.dtype.itemsize),
                    ),
                    3 => {
                        hdf5_reader::filters::fletcher32::verify_and_strip(&data).map_err(|e| {
                            self.chunk_err(
                                chunk,
                                ChunkDecodeError::Codec {
                                    codec: "fletcher32",
                                    detail: e.to_string(),
                                },
                            )
                        })?
                    }
                    id => match filters::decode(
                        id,
                        &f.client_data,
                        self.meta.dtype.itemsize,
                        &data,
                        limit,
                    ) {
                        Some(r) => r.map_err(|e| self.chunk_err(chunk, e.into()))?,
                        None => {
                            return Err(self.chunk_err(
                                chunk,
                                ChunkDecodeError::Layout(format!("filter {id} not decoded")),
                            ))
                        }
                    },
                };
            }
        }
        self.finish(chunk, data, want)
    }
}

/// The blocks a contiguous dataset of `shape` (elements of `itemsize` bytes) is read by: of
/// at most [`CONTIGUOUS_BLOCK_BYTES`] (or one element) and contiguous in the stored block, so
/// each is one byte range. From the last axis, whole axes while the block stays under the
/// bound, then as many positions of the next axis as fit (at least one), and one position of
/// every axis before it. A selection then fetches about the rows, or the parts of long rows,
/// it touches, and the range coalescer decides which gaps between them to read through.
fn contiguous_block(shape: &[u64], itemsize: u64) -> Vec<u64> {
    let mut block = vec![1; shape.len()];
    let mut bytes = itemsize.max(1);
    for k in (0..shape.len()).rev() {
        let (extent, fit) = (shape[k].max(1), (CONTIGUOUS_BLOCK_BYTES / bytes).max(1));
        if fit < extent {
            block[k] = fit;
            break;
        }
        block[k] = extent;
        bytes *= extent;
    }
    block
}
