//! Discovery of one dataset (shape, dtype, fill value, filters, layout, chunk map) and of a
//! group's children, as steps for [`super::store::Discovery::run`].

use super::Hdf5Error;
use crate::dtype::{ByteOrder, DType, Kind};
use crate::element::{Element, Field, Padding};
use hdf5_reader::chunk_index::{self, ChunkEntry};
use hdf5_reader::messages::layout::{ChunkIndexing, DataLayout};
use hdf5_reader::messages::HdfMessage;
use hdf5_reader::{Datatype, Hdf5File};

/// One filter of a dataset's pipeline, in the order the writer applied them.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Filter {
    /// Filter id (deflate 1, shuffle 2, fletcher32 3, ...; `docs/facts.md` "HDF5").
    pub id: u16,
    /// Name the writer recorded, if any.
    pub name: Option<String>,
    /// The filter's parameters (deflate: level; shuffle: element size in bytes).
    pub client_data: Vec<u32>,
}

/// One allocated chunk of a chunked dataset.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ChunkInfo {
    /// Element coordinates of the chunk's first element.
    pub offset: Vec<u64>,
    /// Absolute byte offset of the stored chunk in the source (user block included).
    pub address: u64,
    /// Stored (filtered) size in bytes.
    pub size: u64,
    /// Bit `i` set: filter `i` of the pipeline was skipped for this chunk.
    pub filter_mask: u32,
}

/// Where a dataset's elements are stored.
// Serialisable for the discovery cache (`super::Hdf5Seed`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Layout {
    /// Inline in the object header: these bytes, C order.
    Compact(Vec<u8>),
    /// One block of `size` bytes at absolute `address`; `None` when never written.
    Contiguous {
        /// Absolute byte offset, `None` if the block was never allocated.
        address: Option<u64>,
        /// Bytes of the block.
        size: u64,
    },
    /// Chunks of `chunk` elements, each allocated chunk listed once.
    Chunked {
        /// Chunk shape (elements).
        chunk: Vec<u64>,
        /// The allocated chunks.
        entries: Vec<ChunkInfo>,
        /// Partial edge chunks (reaching past the dataset's extent) are stored unfiltered
        /// (`H5Pset_chunk_opts(H5D_CHUNK_DONT_FILTER_PARTIAL_CHUNKS)`; [`super::header`]).
        #[serde(default)]
        unfiltered_edges: bool,
    },
}

impl DatasetMeta {
    /// `compact`, `contiguous` or `chunked` (h5py's names).
    pub fn layout_name(&self) -> &'static str {
        match self.layout {
            Layout::Compact(_) => "compact",
            Layout::Contiguous { .. } => "contiguous",
            Layout::Chunked { .. } => "chunked",
        }
    }
}

/// What discovery found about one dataset.
// Serialisable for the discovery cache (`super::Hdf5Seed`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DatasetMeta {
    /// Absolute path of the dataset in the file.
    pub path: String,
    /// Shape (elements; empty for a scalar).
    pub shape: Vec<u64>,
    /// Element type as stored: the number (enums as their base integer, h5py's boolean enum
    /// as `|b1`), or for other types the flat form of [`DatasetMeta::element`] (`|S{n}`,
    /// `|V{n}`), whose item size is the stored element size.
    pub dtype: DType,
    /// The full element type when it is not a plain number: fixed or variable-length string,
    /// compound (record) or array datatype (`None` for numbers).
    pub element: Option<Element>,
    /// Bytes of one element to use where nothing is stored (zeros if the file defines none).
    pub fill: Vec<u8>,
    /// Filter pipeline (empty when unfiltered).
    pub filters: Vec<Filter>,
    /// Storage layout.
    pub layout: Layout,
    /// An integer (or enum) type of reduced precision: stored values hold the type's bits,
    /// converted to values after decoding ([`super::header::bits`]); `None` when every bit
    /// is the value's.
    #[serde(default)]
    pub bits: Option<super::filters::BitField>,
}

/// Kind of a group member.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MemberKind {
    /// A group.
    Group,
    /// A dataset.
    Dataset,
}

/// One child of a group.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Member {
    /// Link name.
    pub name: String,
    /// Group or dataset.
    pub kind: MemberKind,
}

fn rd(msg: impl Into<String>) -> hdf5_reader::error::Error {
    hdf5_reader::error::Error::InvalidData(msg.into())
}

/// Maps an HDF5 datatype to a numeric [`DType`]: integers, floats, and enums (h5py's bool is
/// an enum) as their base integer.
///
/// # Errors
/// [`Hdf5Error::Unsupported`] for strings, compounds, references and other non-numeric types.
pub fn numeric_dtype(dt: &Datatype) -> Result<DType, Hdf5Error> {
    use hdf5_reader::ByteOrder as B;
    let order = |size: u8, o: &B| {
        if size == 1 {
            ByteOrder::NotApplicable
        } else if matches!(o, B::BigEndian) {
            ByteOrder::Big
        } else {
            ByteOrder::Little
        }
    };
    let (kind, size, order) = match dt {
        Datatype::FixedPoint {
            size,
            signed,
            byte_order,
        } => (
            if *signed { Kind::Int } else { Kind::UInt },
            *size,
            order(*size, byte_order),
        ),
        Datatype::FloatingPoint { size, byte_order } => {
            (Kind::Float, *size, order(*size, byte_order))
        }
        Datatype::Enum { base, .. } => return numeric_dtype(base),
        other => {
            return Err(Hdf5Error::Unsupported(format!(
                "datatype {other:?} (supported: integers, floats, enums)"
            )))
        }
    };
    let ok = match kind {
        Kind::Float => matches!(size, 2 | 4 | 8),
        _ => matches!(size, 1 | 2 | 4 | 8),
    };
    if !ok {
        return Err(Hdf5Error::Unsupported(format!(
            "{size}-byte {kind:?} elements"
        )));
    }
    Ok(DType {
        kind,
        itemsize: size as usize,
        order,
    })
}

/// Maps an HDF5 datatype to an [`Element`] as h5py reads it (rules in [`crate::element`]):
/// numbers and enums via [`numeric_dtype`] (h5py's `FALSE`/`TRUE` enum as `|b1`), fixed-length
/// strings, variable-length strings, compounds (nested, with array members) and array
/// datatypes. `offset_size`/`length_size` are the superblock's sizes of addresses and lengths
/// (a variable-length reference holds one address), `base_address` the superblock's base
/// address that file addresses are relative to.
///
/// # Errors
/// [`Hdf5Error::Unsupported`] for variable-length sequences, references, opaque, bitfield and
/// time types;
/// [`Hdf5Error::Invalid`] for a compound member outside its record.
pub fn element_of(
    dt: &Datatype,
    offset_size: u8,
    length_size: u8,
    base_address: u64,
) -> Result<Element, Hdf5Error> {
    let e = element_at(dt, offset_size, length_size, base_address)?;
    if e.stored_size() == 0 {
        return Err(Hdf5Error::Invalid("a datatype of 0 bytes".into()));
    }
    Ok(e)
}

fn element_at(
    dt: &Datatype,
    offset_size: u8,
    length_size: u8,
    base_address: u64,
) -> Result<Element, Hdf5Error> {
    use hdf5_reader::messages::datatype::{StringEncoding, StringPadding, StringSize, VarLenKind};
    let utf8 = |e: &StringEncoding| matches!(e, StringEncoding::Utf8);
    Ok(match dt {
        Datatype::Enum { base, members } if is_h5py_bool(base, members) => {
            Element::Number(DType::parse("|b1").expect("valid typestr"))
        }
        Datatype::FixedPoint { .. } | Datatype::FloatingPoint { .. } | Datatype::Enum { .. } => {
            Element::Number(numeric_dtype(dt)?)
        }
        Datatype::String {
            size: StringSize::Fixed(n),
            encoding,
            padding,
        } => Element::String {
            size: *n as usize,
            padding: match padding {
                StringPadding::NullTerminate => Padding::NullTerm,
                StringPadding::NullPad => Padding::NullPad,
                StringPadding::SpacePad => Padding::SpacePad,
            },
            utf8: utf8(encoding),
        },
        Datatype::VarLen {
            base,
            kind: VarLenKind::String,
            encoding,
            ..
        } if base.is_vlen_string_base() => {
            if !matches!(offset_size, 2 | 4 | 8) {
                return Err(Hdf5Error::Invalid(format!("{offset_size}-byte addresses")));
            }
            Element::VlenString {
                offset_size,
                length_size,
                base_address,
                utf8: utf8(encoding),
            }
        }
        // h5py's complex numbers (a compound of floats `r` and `i`) as numpy's complex.
        Datatype::Compound { size, fields } => match super::attrs::complex(*size, fields) {
            Some(c) => Element::Number(c),
            None => {
                let mut out = Vec::with_capacity(fields.len());
                for f in fields {
                    let element = element_at(&f.datatype, offset_size, length_size, base_address)?;
                    let offset = f.byte_offset as usize;
                    if offset + element.stored_size() > *size as usize {
                        return Err(Hdf5Error::Invalid(format!(
                            "compound member {:?} at byte {offset} ({} bytes) passes the {size}-byte record",
                            f.name,
                            element.stored_size()
                        )));
                    }
                    out.push(Field {
                        name: f.name.clone(),
                        offset,
                        element,
                    });
                }
                Element::Record {
                    size: *size as usize,
                    fields: out,
                }
            }
        },
        Datatype::Array { base, dims } => {
            let base = element_at(base, offset_size, length_size, base_address)?;
            dims.iter()
                .try_fold(base.stored_size() as u64, |a, &d| a.checked_mul(d))
                .filter(|&n| n <= u32::MAX as u64)
                .ok_or_else(|| {
                    Hdf5Error::Invalid(format!("array datatype of dims {dims:?} is too large"))
                })?;
            Element::SubArray {
                base: Box::new(base),
                shape: dims.clone(),
            }
        }
        other => {
            return Err(Hdf5Error::Unsupported(format!(
                "datatype {} (supported: integers, floats, enums, bools, fixed and variable-length strings, compounds, arrays)",
                datatype_class_name(other)
            )))
        }
    })
}

fn datatype_class_name(dt: &Datatype) -> &'static str {
    match dt {
        Datatype::FixedPoint { .. } => "integer",
        Datatype::FloatingPoint { .. } => "float",
        Datatype::String { .. } => "variable-length string class",
        Datatype::Compound { .. } => "compound",
        Datatype::Array { .. } => "array",
        Datatype::Enum { .. } => "enum",
        Datatype::VarLen { .. } => "variable-length sequence",
        Datatype::Opaque { .. } => "opaque",
        Datatype::Reference { .. } => "reference",
        Datatype::Bitfield { .. } => "bitfield",
    }
}

/// h5py's boolean: an enum of exactly the members `FALSE` = 0 and `TRUE` = 1 (h5py
/// `h5t.pyx`, `TypeEnumID.py_dtype`).
fn is_h5py_bool(base: &Datatype, members: &[hdf5_reader::messages::datatype::EnumMember]) -> bool {
    let big = matches!(
        base,
        Datatype::FixedPoint {
            byte_order: hdf5_reader::ByteOrder::BigEndian,
            ..
        }
    );
    let value = |v: &[u8]| -> Option<u64> {
        if v.len() > 8 {
            return None;
        }
        let mut b = [0u8; 8];
        if big {
            b[8 - v.len()..].copy_from_slice(v);
            Some(u64::from_be_bytes(b))
        } else {
            b[..v.len()].copy_from_slice(v);
            Some(u64::from_le_bytes(b))
        }
    };
    matches!(base, Datatype::FixedPoint { .. })
        && members.len() == 2
        && members.iter().all(|m| {
            matches!(
                (m.name.as_str(), value(&m.value)),
                ("FALSE", Some(0)) | ("TRUE", Some(1))
            )
        })
        && members[0].name != members[1].name
}

/// Discovery step: the dataset at `path`. Works on any `Hdf5File` (a fresh one per attempt).
///
/// # Errors
/// The crate's errors (missing path, malformed structures), wrapped by the caller; an
/// unsupported datatype or a chunk index inconsistent with the shape as `InvalidData`.
pub fn dataset_step(
    file: &Hdf5File,
    path: &str,
) -> hdf5_reader::error::Result<Result<DatasetMeta, Hdf5Error>> {
    let ds = file.dataset(path)?;
    let sb = file.superblock();
    let (dtype, element) =
        match element_of(ds.dtype(), sb.offset_size, sb.length_size, sb.base_address) {
            Ok(Element::Number(d)) => (d, None),
            Ok(e) => (e.storage_dtype(), Some(e)),
            Err(e) => return Ok(Err(e)),
        };
    // The bit layout the crate's parsed datatype does not keep: integers of reduced
    // precision are converted, other layouts refused (`header::bits`). The crate parsed the
    // same header, so its bytes are in hand; a datatype kept in the shared-message table
    // (which the crate refuses) is not checked here.
    let desc = super::header::datatype(file, ds.address()).unwrap_or_default();
    let bits = match super::header::bits(&desc) {
        super::header::Bits::Plain => None,
        super::header::Bits::Reduced(b) => Some(b),
        super::header::Bits::Unsupported(what) => {
            return Ok(Err(Hdf5Error::Unsupported(format!("{path}: {what}"))))
        }
    };
    let shape = ds.shape().to_vec();
    let header = file.get_or_parse_header(ds.address())?;
    let mut layout_msg = None;
    let mut filters = Vec::new();
    for m in &header.messages {
        match m {
            // A null dataspace holds no element (h5py's `Empty`): there is nothing to read,
            // and reading it as a scalar would invent a value.
            HdfMessage::Dataspace(d)
                if d.dataspace_type == hdf5_reader::messages::dataspace::DataspaceType::Null =>
            {
                return Ok(Err(Hdf5Error::Unsupported(format!(
                    "{path}: {}",
                    super::list::NULL_DATASPACE
                ))));
            }
            HdfMessage::DataLayout(l) => layout_msg = Some(l.layout.clone()),
            HdfMessage::FilterPipeline(p) => {
                filters = p
                    .filters
                    .iter()
                    .map(|f| Filter {
                        id: f.id,
                        name: f.name.clone(),
                        client_data: f.client_data.clone(),
                    })
                    .collect()
            }
            _ => {}
        }
    }
    let layout_msg = layout_msg.ok_or_else(|| rd("dataset has no data layout message"))?;
    let fill = match ds.fill_value().and_then(|f| f.value.clone()) {
        Some(v) if v.len() == dtype.itemsize => v,
        Some(v) if !v.is_empty() => {
            return Err(rd(format!(
                "fill value of {} bytes for {}-byte elements",
                v.len(),
                dtype.itemsize
            )))
        }
        _ => vec![0u8; dtype.itemsize],
    };
    let base = file.superblock().base_address;
    let undefined = |a: u64| {
        a == u64::MAX
            || (file.superblock().offset_size < 8
                && a == (1u64 << (8 * file.superblock().offset_size as u32)) - 1)
    };
    let layout = match layout_msg {
        DataLayout::Compact { data } => Layout::Compact(data),
        DataLayout::Contiguous { address, size } => Layout::Contiguous {
            address: if undefined(address) {
                None
            } else {
                Some(address + base)
            },
            size,
        },
        DataLayout::Chunked {
            address,
            dims,
            chunk_indexing,
            ..
        } => {
            let ndim = shape.len();
            if dims.len() < ndim || dims.iter().take(ndim).any(|&d| d == 0) {
                return Err(rd(format!("chunk dims {dims:?} for shape {shape:?}")));
            }
            let dims: Vec<u32> = dims[..ndim].to_vec();
            let chunk: Vec<u64> = dims.iter().map(|&d| d as u64).collect();
            let chunk_bytes = chunk
                .iter()
                .try_fold(dtype.itemsize as u64, |a, &c| a.checked_mul(c))
                .ok_or_else(|| rd("chunk size overflows"))?;
            let entries = if undefined(address) || shape.contains(&0) {
                Vec::new()
            } else {
                collect_entries(
                    file,
                    address,
                    &dims,
                    chunk_indexing.as_ref(),
                    &shape,
                    &ds,
                    dtype.itemsize,
                )?
            };
            let mut out = Vec::with_capacity(entries.len());
            for e in entries {
                if e.offsets.len() < ndim {
                    return Err(rd("chunk entry of the wrong rank"));
                }
                // Chunks wholly outside the current extent are stale (kept after a shrink).
                if e.offsets[..ndim].iter().zip(&shape).any(|(o, s)| o >= s) {
                    continue;
                }
                if e.offsets[..ndim]
                    .iter()
                    .zip(&chunk)
                    .any(|(o, c)| o % c != 0)
                {
                    return Err(rd(format!("chunk offset {:?} not on the grid", e.offsets)));
                }
                out.push(ChunkInfo {
                    offset: e.offsets[..ndim].to_vec(),
                    address: e.address + base,
                    size: if e.size == 0 { chunk_bytes } else { e.size },
                    filter_mask: e.filter_mask,
                });
            }
            Layout::Chunked {
                chunk,
                entries: out,
                unfiltered_edges: super::header::unfiltered_edge_chunks(file, ds.address())
                    .unwrap_or(false),
            }
        }
    };
    Ok(Ok(DatasetMeta {
        path: path.to_string(),
        shape,
        dtype,
        element,
        fill,
        filters,
        layout,
        bits,
    }))
}

/// The shape whose chunk grid numbers the chunks of a fixed-array or implicit index: the
/// maximum shape (libhdf5 numbers a chunk by the row-major index of its coordinates over
/// `ceil(max_dims / chunk)`, `max_down_chunks` in `H5D__farray_idx_get_addr` and
/// `H5D__none_idx_get_addr`; the index holds an entry for every chunk of that grid). The
/// crate's collectors number over the shape they are given, so they get this one, and chunks
/// past the current shape are dropped by the caller.
///
/// # Errors
/// `InvalidData` for an unlimited or too small maximum dimension (libhdf5 gives datasets
/// with an unlimited dimension an extensible array or a version 2 B-tree, never these).
fn fixed_max_shape(
    shape: &[u64],
    max_dims: Option<&[u64]>,
) -> hdf5_reader::error::Result<Vec<u64>> {
    let Some(max) = max_dims else {
        return Ok(shape.to_vec());
    };
    if max.len() != shape.len()
        || max
            .iter()
            .zip(shape)
            .any(|(m, s)| m < s || *m == hdf5_reader::messages::dataspace::UNLIMITED)
    {
        return Err(rd(format!(
            "maximum shape {max:?} for shape {shape:?} under a fixed-size chunk index"
        )));
    }
    Ok(max.to_vec())
}

fn collect_entries(
    file: &Hdf5File,
    address: u64,
    dims: &[u32],
    indexing: Option<&ChunkIndexing>,
    shape: &[u64],
    ds: &hdf5_reader::Dataset,
    itemsize: usize,
) -> hdf5_reader::error::Result<Vec<ChunkEntry>> {
    let storage = file.storage();
    let sb = file.superblock();
    let (os, ls) = (sb.offset_size, sb.length_size);
    let ndim = shape.len();
    match indexing {
        None => {
            let leaves = hdf5_reader::btree_v1::collect_btree_v1_leaves_storage(
                storage,
                address,
                os,
                ls,
                Some(ndim as u32),
                dims,
                None,
            )?;
            let mut out = Vec::with_capacity(leaves.len());
            for (key, addr) in leaves {
                match key {
                    hdf5_reader::btree_v1::BTreeV1Key::RawData {
                        chunk_size,
                        filter_mask,
                        offsets,
                    } => out.push(ChunkEntry {
                        address: addr,
                        size: chunk_size as u64,
                        filter_mask,
                        offsets,
                    }),
                    _ => return Err(rd("expected raw data keys in a chunk B-tree")),
                }
            }
            Ok(out)
        }
        Some(ChunkIndexing::SingleChunk {
            filtered_size,
            filters,
        }) => Ok(vec![chunk_index::single_chunk_entry(
            address,
            *filtered_size,
            *filters,
            ndim,
        )]),
        Some(ChunkIndexing::Implicit) => chunk_index::collect_implicit_chunk_entries(
            address,
            &fixed_max_shape(shape, ds.max_dims())?,
            dims,
            itemsize,
            None,
            storage.len(),
        ),
        Some(ChunkIndexing::FixedArray { .. }) => {
            hdf5_reader::fixed_array::collect_fixed_array_chunk_entries_storage(
                storage,
                address,
                os,
                ls,
                &fixed_max_shape(shape, ds.max_dims())?,
                dims,
                None,
            )
        }
        Some(ChunkIndexing::ExtensibleArray { .. }) => {
            hdf5_reader::extensible_array::collect_extensible_array_chunk_entries_storage(
                storage,
                address,
                os,
                ls,
                shape,
                ds.max_dims(),
                dims,
                None,
            )
        }
        Some(ChunkIndexing::BTreeV2) => chunk_index::collect_v2_chunk_entries_storage(
            storage,
            address,
            os,
            ls,
            ndim as u32,
            dims,
            None,
        ),
    }
}

/// Discovery step: the children of the group at `path` (names and kinds, in listing order).
///
/// # Errors
/// The crate's errors (missing group, malformed structures).
pub fn members_step(file: &Hdf5File, path: &str) -> hdf5_reader::error::Result<Vec<Member>> {
    let group = if path.is_empty() || path == "/" {
        file.root_group()?
    } else {
        file.group(path)?
    };
    let (groups, datasets) = group.member_names()?;
    Ok(groups
        .into_iter()
        .map(|name| Member {
            name,
            kind: MemberKind::Group,
        })
        .chain(datasets.into_iter().map(|name| Member {
            name,
            kind: MemberKind::Dataset,
        }))
        .collect())
}

/// Where a dataset's version 1 B-tree chunk index is, for fetching it level by level.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BTreeV1Index {
    /// Absolute address of the root node.
    pub root: u64,
    /// Rank of the dataset.
    pub ndim: usize,
    /// Bytes of a file address (superblock "size of offsets").
    pub offset_size: u8,
    /// Half the largest number of children of a node (superblock "indexed storage K").
    pub k: u16,
}

impl BTreeV1Index {
    /// Bytes of a full node: signature, type, level, entries used, two siblings, then
    /// `2K + 1` keys (chunk size, filter mask, `ndim + 1` 8-byte offsets) and `2K` child
    /// addresses (HDF5 File Format Specification, "Version 1 B-trees").
    pub fn node_bytes(&self) -> u64 {
        self.node_bytes_with(2 * self.k.max(1) as u64)
    }

    /// Bytes of a node using `entries` children.
    pub fn node_bytes_with(&self, entries: u64) -> u64 {
        let os = self.offset_size as u64;
        let key = 8 + 8 * (self.ndim as u64 + 1);
        8 + 2 * os + (entries + 1) * key + entries * os
    }
}

/// Discovery step: the version 1 B-tree chunk index of the dataset at `path`, if it has one.
///
/// # Errors
/// The crate's errors (missing path, malformed structures).
pub fn btree_v1_step(
    file: &Hdf5File,
    path: &str,
) -> hdf5_reader::error::Result<Option<BTreeV1Index>> {
    let ds = file.dataset(path)?;
    let header = file.get_or_parse_header(ds.address())?;
    let sb = file.superblock();
    for m in &header.messages {
        if let HdfMessage::DataLayout(l) = m {
            if let DataLayout::Chunked {
                address,
                chunk_indexing: None,
                ..
            } = &l.layout
            {
                let undefined = *address == u64::MAX
                    || (sb.offset_size < 8
                        && *address == (1u64 << (8 * sb.offset_size as u32)) - 1);
                if !undefined {
                    return Ok(Some(BTreeV1Index {
                        root: address + sb.base_address,
                        ndim: ds.shape().len(),
                        offset_size: sb.offset_size,
                        // Version 0 superblocks do not store K; 32 is the default
                        // (File Format Specification, "Superblock").
                        k: if sb.indexed_storage_k == 0 {
                            32
                        } else {
                            sb.indexed_storage_k
                        },
                    }));
                }
            }
        }
    }
    Ok(None)
}
