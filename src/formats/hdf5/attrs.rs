//! HDF5 attributes as [`AttrValue`]s, and dimension names from dimension scales.
//!
//! Where attributes are stored (HDF5 File Format Specification version 3, "Attribute Message"
//! IV.A.2.m and "Attribute Info Message" IV.A.2.v): compact attributes are Attribute messages
//! in the object header; dense ones, which libhdf5 writes for a node with many attributes
//! (more than 8 under `libver="latest"`, or with `track_order`), are Attribute messages
//! stored as objects of a fractal heap whose ids a version 2 B-tree indexes by name hash
//! (record type 8) and, when creation order is indexed, by creation order (type 9). Both are
//! read here, parsed with `hdf5-reader`'s Attribute message parser.
//!
//! Values ([`value`]) follow h5py's view of them: integers and floats of every width and
//! byte order as `Int` / `UInt` / `Float` scalars or little-endian [`AttrValue::Array`]s of
//! the attribute's shape; h5py's bool enum (`FALSE` = 0, `TRUE` = 1) as bools; other enums as
//! their integer value (as h5py returns them; member names are not shown); h5py's complex
//! compound (`r`, `i`) as a complex array element; array datatypes as trailing dimensions;
//! fixed-length strings (padding removed as the Datatype message's padding type says) and
//! variable-length strings (ASCII or UTF-8, resolved from the global heap through the
//! discovery store, so their collections are fetched like any other miss) as text, arrays of
//! them as nested lists; compounds as maps (arrays of them as lists of maps); variable-length
//! sequences as lists; an attribute with a null dataspace as `Null`. References and opaque
//! values are [`AttrValue::Omitted`] with the reason. An attribute that cannot be read (a
//! malformed message or heap object, values past [`MAX_ATTR_BYTES`] per node) is `Omitted`
//! with the reason: a broken attribute never fails the listing or the open.
//!
//! Dimension names ([`dims`]) follow the Dimension Scales specification (HDF5 "Dimension
//! Scale Specification and Design Notes", also netCDF-4's use of it): a dataset's
//! `DIMENSION_LIST` attribute holds, per dimension, a variable-length list of object
//! references to scale datasets; the first scale of a dimension names it by its `NAME`
//! attribute, or by its path's last component when `NAME` is empty or netCDF-4's placeholder
//! ("This is a netCDF dimension but not a netCDF variable..."). A scale dataset (`CLASS` =
//! `"DIMENSION_SCALE"`) without a `DIMENSION_LIST` is its own dimension 0.

use crate::attrs::{AttrValue, Attrs, MAX_ATTR_BYTES};
use crate::dtype::{ByteOrder, DType, Kind};
use hdf5_reader::btree_v2::{self, BTreeV2Record};
use hdf5_reader::fractal_heap::{FractalHeap, FractalHeapDirectBlockCache};
use hdf5_reader::global_heap::GlobalHeapCollection;
use hdf5_reader::io::Cursor;
use hdf5_reader::messages::attribute::AttributeMessage;
use hdf5_reader::messages::attribute_info::AttributeInfoMessage;
use hdf5_reader::messages::dataspace::DataspaceType;
use hdf5_reader::messages::datatype::{
    CompoundField, Datatype, ReferenceType, StringPadding, StringSize, VarLenKind,
};
use hdf5_reader::messages::HdfMessage;
use hdf5_reader::Hdf5File;
use std::collections::HashMap;
use std::sync::Arc;

/// Why a reference is not shown.
pub const REFERENCE: &str = "reference (not shown)";
/// Why an opaque value is not shown.
pub const OPAQUE: &str = "opaque (not shown)";
/// The start of the `NAME` netCDF-4 gives a dimension that is not also a variable.
pub const NETCDF_PLACEHOLDER: &str = "This is a netCDF dimension but not a netCDF variable";

/// Bytes charged per listed element (a string, a record) besides its value, so a huge
/// list of tiny values is bounded like its bytes.
const ELEMENT_COST: usize = 32;

/// What one node's attributes say about dimension scales.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScaleInfo {
    /// `DIMENSION_LIST`: per dimension, the object header address (as stored, relative to
    /// the base address) of its first scale, `None` when no scale is attached.
    pub dimension_list: Option<Vec<Option<u64>>>,
    /// `CLASS` is `"DIMENSION_SCALE"`.
    pub is_scale: bool,
    /// `NAME`, unless empty or netCDF-4's placeholder.
    pub name: Option<String>,
}

/// A node's attributes and what they say about dimension scales.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NodeAttrs {
    /// The attributes, in h5py's order (by name, or by creation order when it is tracked).
    pub attrs: Attrs,
    /// Dimension-scale attributes.
    pub scale: ScaleInfo,
    /// Bytes of values kept (charged against [`MAX_ATTR_BYTES`]).
    pub bytes: usize,
}

/// Most bytes of attribute values one listing keeps (64 MiB) over all its nodes; the
/// attributes of a node past it are one omitted entry, so a listing of many nodes stays
/// bounded too.
pub const MAX_LISTING_ATTR_BYTES: usize = 64 << 20;

impl NodeAttrs {
    /// These attributes, or one omitted entry when they would take `total` (the bytes a
    /// listing kept so far, updated) past [`MAX_LISTING_ATTR_BYTES`].
    pub fn within(self, total: &mut usize) -> NodeAttrs {
        match total.checked_add(self.bytes) {
            Some(t) if t <= MAX_LISTING_ATTR_BYTES => {
                *total = t;
                self
            }
            _ => NodeAttrs {
                attrs: Attrs(vec![(
                    "(attributes)".into(),
                    AttrValue::Omitted(format!(
                        "{} bytes, past the {MAX_LISTING_ATTR_BYTES}-byte bound on a listing's attributes",
                        self.bytes
                    )),
                )]),
                scale: self.scale,
                bytes: 0,
            },
        }
    }
}

/// Reading state of one node: file, sizes, the byte budget, parsed global heap collections.
struct Ctx<'a> {
    file: &'a Hdf5File,
    os: u8,
    ls: u8,
    base: u64,
    /// Bytes of values kept so far for this node.
    used: usize,
    heaps: HashMap<u64, Result<Arc<GlobalHeapCollection>, String>>,
}

impl Ctx<'_> {
    /// Charges `n` bytes to the node's budget.
    fn charge(&mut self, n: usize) -> Result<(), String> {
        match self.used.checked_add(n) {
            Some(u) if u <= MAX_ATTR_BYTES => {
                self.used = u;
                Ok(())
            }
            _ => Err(format!(
                "values past the {MAX_ATTR_BYTES}-byte bound on one node's attributes ({n} more bytes)"
            )),
        }
    }

    /// The global heap object a variable-length reference (`4 + offset_size + 4` bytes:
    /// length, collection address, object index; File Format Specification "Global Heap")
    /// points at, cut to its length (for strings, bytes; for sequences, elements of
    /// `unit` bytes). A null reference is empty.
    fn heap_object(&mut self, r: &[u8], unit: usize) -> Result<Vec<u8>, String> {
        let os = self.os as usize;
        if r.len() < 8 + os {
            return Err("a variable-length reference shorter than its size".into());
        }
        let len = u32::from_le_bytes(r[0..4].try_into().expect("4 bytes")) as usize;
        let mut a = [0u8; 8];
        a[..os].copy_from_slice(&r[4..4 + os]);
        let addr = u64::from_le_bytes(a);
        let index = u32::from_le_bytes(r[4 + os..8 + os].try_into().expect("4 bytes"));
        if len == 0 || index == 0 || addr == 0 || Cursor::is_undefined_offset(addr, self.os) {
            return Ok(Vec::new());
        }
        let need = len
            .checked_mul(unit.max(1))
            .ok_or("a variable-length length overflows")?;
        self.charge(need)?;
        let abs = addr
            .checked_add(self.base)
            .ok_or("a global heap address overflows")?;
        let c = match self.heaps.get(&abs) {
            Some(c) => c.clone(),
            None => {
                let c = collection(self.file, abs, self.ls).map(Arc::new);
                self.heaps.insert(abs, c.clone());
                c
            }
        }?;
        let index = u16::try_from(index).map_err(|_| format!("global heap object {index}"))?;
        let obj = c.get_object(index).ok_or_else(|| {
            format!("global heap object {index} not found in the collection at {abs}")
        })?;
        obj.data.get(..need).map(<[u8]>::to_vec).ok_or_else(|| {
            format!(
                "{need} bytes of variable-length data in a {}-byte heap object",
                obj.data.len()
            )
        })
    }
}

/// The global heap collection at absolute `address`: its size from its header first (at
/// most the store's largest read), then the whole collection.
fn collection(file: &Hdf5File, address: u64, ls: u8) -> Result<GlobalHeapCollection, String> {
    let storage = file.storage();
    let head_len = 8 + ls as u64;
    if address.saturating_add(head_len) > storage.len() {
        return Err(format!(
            "global heap collection at {address} is outside the file"
        ));
    }
    let head = storage
        .read_range(address, head_len as usize)
        .map_err(|e| e.to_string())?;
    let size = super::heap::collection_size(&head, ls).map_err(|e| e.to_string())?;
    if size > super::store::MAX_MISS_BYTES || address.saturating_add(size) > storage.len() {
        return Err(format!(
            "global heap collection at {address} of {size} bytes passes the end of the file or the read bound"
        ));
    }
    GlobalHeapCollection::parse_at_storage(storage, address, file.superblock().offset_size, ls)
        .map_err(|e| format!("global heap collection at {address}: {e}"))
}

/// Bytes of one element of `dt` (a variable-length value is its heap reference).
fn size_of(dt: &Datatype, os: u8) -> Option<usize> {
    Some(match dt {
        Datatype::FixedPoint { size, .. }
        | Datatype::FloatingPoint { size, .. }
        | Datatype::Bitfield { size, .. }
        | Datatype::Reference { size, .. } => *size as usize,
        Datatype::String {
            size: StringSize::Fixed(n),
            ..
        } => *n as usize,
        Datatype::String {
            size: StringSize::Variable,
            ..
        }
        | Datatype::VarLen { .. } => 8 + os as usize,
        Datatype::Compound { size, .. } | Datatype::Opaque { size, .. } => *size as usize,
        Datatype::Enum { base, .. } => size_of(base, os)?,
        Datatype::Array { base, dims } => dims
            .iter()
            .try_fold(size_of(base, os)?, |a, &d| a.checked_mul(d as usize))?,
    })
}

/// What `dt` holds that is not shown, if anything (a reference or an opaque value).
fn hidden(dt: &Datatype) -> Option<&'static str> {
    match dt {
        Datatype::Reference { .. } => Some(REFERENCE),
        Datatype::Opaque { .. } => Some(OPAQUE),
        Datatype::Compound { fields, .. } => fields.iter().find_map(|f| hidden(&f.datatype)),
        Datatype::Array { base, .. }
        | Datatype::Enum { base, .. }
        | Datatype::VarLen { base, .. } => match dt {
            Datatype::VarLen {
                kind: VarLenKind::String,
                ..
            } => None,
            _ => hidden(base),
        },
        _ => None,
    }
}

fn order(size: usize, big: bool) -> ByteOrder {
    if size == 1 {
        ByteOrder::NotApplicable
    } else if big {
        ByteOrder::Big
    } else {
        ByteOrder::Little
    }
}

/// h5py's complex number: a compound of two floats of one size named `r` and `i` at offsets
/// 0 and that size (h5py `h5t.py` `_c_complex`, its default `complex_names`). Attributes and
/// datasets of this type read as numpy's complex dtype, as h5py reads them.
pub(super) fn complex(size: u32, fields: &[CompoundField]) -> Option<DType> {
    let [r, i] = fields else { return None };
    match (&r.datatype, &i.datatype) {
        (
            Datatype::FloatingPoint {
                size: a,
                byte_order: o,
            },
            Datatype::FloatingPoint { size: b, .. },
        ) if r.name == "r"
            && i.name == "i"
            && a == b
            && matches!(a, 4 | 8)
            && r.byte_offset == 0
            && i.byte_offset == *a as u32
            && size == 2 * *a as u32
            && r.datatype == i.datatype =>
        {
            Some(DType {
                kind: Kind::Complex,
                itemsize: 2 * *a as usize,
                order: order(2, matches!(o, hdf5_reader::ByteOrder::BigEndian)),
            })
        }
        _ => None,
    }
}

/// h5py's bool: an enum of a one-byte integer with exactly `FALSE` = 0 and `TRUE` = 1.
fn is_bool(base: &Datatype, members: &[hdf5_reader::messages::datatype::EnumMember]) -> bool {
    matches!(base, Datatype::FixedPoint { size: 1, .. })
        && members.len() == 2
        && members.iter().any(|m| m.name == "FALSE" && m.value == [0])
        && members.iter().any(|m| m.name == "TRUE" && m.value == [1])
}

/// The numeric element type of `dt` as stored (byte order included) and the trailing
/// dimensions of an array datatype, when `dt` is a number: integers, floats, bitfields (as
/// unsigned integers), enums (their base integer; h5py's bool as `|b1`), h5py's complex
/// compound, and array datatypes of those.
fn numeric(dt: &Datatype) -> Option<(DType, Vec<u64>)> {
    use hdf5_reader::ByteOrder as B;
    let big = |o: &B| matches!(o, B::BigEndian);
    Some(match dt {
        Datatype::FixedPoint {
            size,
            signed,
            byte_order,
        } if matches!(size, 1 | 2 | 4 | 8) => (
            DType {
                kind: if *signed { Kind::Int } else { Kind::UInt },
                itemsize: *size as usize,
                order: order(*size as usize, big(byte_order)),
            },
            vec![],
        ),
        Datatype::Bitfield { size, byte_order } if matches!(size, 1 | 2 | 4 | 8) => (
            DType {
                kind: Kind::UInt,
                itemsize: *size as usize,
                order: order(*size as usize, big(byte_order)),
            },
            vec![],
        ),
        Datatype::FloatingPoint { size, byte_order } if matches!(size, 2 | 4 | 8) => (
            DType {
                kind: Kind::Float,
                itemsize: *size as usize,
                order: order(*size as usize, big(byte_order)),
            },
            vec![],
        ),
        Datatype::Enum { base, members } if is_bool(base, members) => (
            DType {
                kind: Kind::Bool,
                itemsize: 1,
                order: ByteOrder::NotApplicable,
            },
            vec![],
        ),
        Datatype::Enum { base, .. } => numeric(base)?,
        Datatype::Compound { size, fields } => (complex(*size, fields)?, vec![]),
        Datatype::Array { base, dims } => {
            let (d, mut extra) = numeric(base)?;
            let mut all = dims.clone();
            all.append(&mut extra);
            (d, all)
        }
        _ => return None,
    })
}

/// The value of an attribute message (module rules); `Omitted` with the reason when it
/// cannot be shown.
fn message_value(ctx: &mut Ctx<'_>, m: &AttributeMessage) -> AttrValue {
    let shape: Vec<u64> = match m.dataspace.dataspace_type {
        DataspaceType::Null => return AttrValue::Null,
        DataspaceType::Scalar => Vec::new(),
        DataspaceType::Simple => m.dataspace.dims.clone(),
    };
    if let Some(why) = hidden(&m.datatype) {
        return AttrValue::Omitted(why.into());
    }
    if ctx.used.saturating_add(m.raw_data.len()) > MAX_ATTR_BYTES {
        return AttrValue::Omitted(format!(
            "{} bytes, past the {MAX_ATTR_BYTES}-byte bound on one node's attributes",
            m.raw_data.len()
        ));
    }
    match value(ctx, &m.datatype, &shape, &m.raw_data) {
        Ok(v) => v,
        Err(why) => AttrValue::Omitted(why),
    }
}

/// The value of elements of `dt` in `shape` (C order) stored in `raw`.
fn value(ctx: &mut Ctx<'_>, dt: &Datatype, shape: &[u64], raw: &[u8]) -> Result<AttrValue, String> {
    let size = size_of(dt, ctx.os).ok_or("a datatype too large")?;
    let n = shape
        .iter()
        .try_fold(1usize, |a, &d| a.checked_mul(usize::try_from(d).ok()?))
        .ok_or("an element count that overflows")?;
    let bytes = n.checked_mul(size).ok_or("a value size that overflows")?;
    if size == 0 && n > 0 {
        return Err("a datatype of 0 bytes".into());
    }
    let raw = raw.get(..bytes).ok_or_else(|| {
        format!(
            "{n} elements of {size} bytes in {} bytes of data",
            raw.len()
        )
    })?;
    if let Some((d, extra)) = numeric(dt) {
        ctx.charge(raw.len())?;
        let mut data = raw.to_vec();
        d.make_little_endian(&mut data);
        let le = d.to_little_endian();
        if shape.is_empty() && extra.is_empty() && le.kind != Kind::Complex {
            return Ok(scalar(le, &data));
        }
        let mut full = shape.to_vec();
        full.extend(extra);
        return Ok(AttrValue::Array {
            dtype: le,
            shape: full,
            data,
        });
    }
    ctx.charge(n.saturating_mul(ELEMENT_COST))?;
    let mut items = Vec::with_capacity(n);
    for e in raw.chunks_exact(size.max(1)).take(n) {
        items.push(element(ctx, dt, e)?);
    }
    if shape.is_empty() {
        return Ok(items.pop().unwrap_or(AttrValue::Null));
    }
    Ok(nest(items, shape))
}

/// `items` (C order) as lists nested by `shape`.
fn nest(items: Vec<AttrValue>, shape: &[u64]) -> AttrValue {
    match shape {
        [] | [_] => AttrValue::List(items),
        [_, rest @ ..] => {
            let inner = rest.iter().product::<u64>().max(1) as usize;
            let mut out = Vec::new();
            let mut it = items.into_iter();
            loop {
                let part: Vec<AttrValue> = it.by_ref().take(inner).collect();
                if part.is_empty() {
                    break;
                }
                out.push(nest(part, rest));
            }
            AttrValue::List(out)
        }
    }
}

/// One little-endian number as a scalar value.
fn scalar(d: DType, b: &[u8]) -> AttrValue {
    let mut a = [0u8; 8];
    let n = d.itemsize.min(8);
    a[..n].copy_from_slice(&b[..n]);
    match d.kind {
        Kind::Bool => AttrValue::Bool(b[0] != 0),
        Kind::Int => {
            let shift = 64 - 8 * n as u32;
            AttrValue::Int((i64::from_le_bytes(a) << shift) >> shift)
        }
        Kind::UInt => AttrValue::UInt(u64::from_le_bytes(a)),
        Kind::Float => AttrValue::Float(match n {
            2 => crate::element::half_to_f64(u16::from_le_bytes([a[0], a[1]])),
            4 => f32::from_le_bytes([a[0], a[1], a[2], a[3]]) as f64,
            _ => f64::from_le_bytes(a),
        }),
        _ => AttrValue::Omitted(format!("{d} scalar")),
    }
}

/// Text of a fixed-length string's bytes with its padding removed (h5py's null-padded
/// memory type: a null-terminated string ends at its first NUL, a space-padded one loses
/// its trailing spaces, a null-padded one its trailing NULs).
fn text(b: &[u8], padding: StringPadding) -> String {
    let end = match padding {
        StringPadding::NullTerminate => b.iter().position(|&c| c == 0).unwrap_or(b.len()),
        StringPadding::NullPad => b.iter().rposition(|&c| c != 0).map_or(0, |p| p + 1),
        StringPadding::SpacePad => b.iter().rposition(|&c| c != b' ').map_or(0, |p| p + 1),
    };
    String::from_utf8_lossy(&b[..end]).into_owned()
}

/// The value of one non-numeric element `e` of `dt`.
fn element(ctx: &mut Ctx<'_>, dt: &Datatype, e: &[u8]) -> Result<AttrValue, String> {
    match dt {
        Datatype::String {
            size: StringSize::Fixed(_),
            padding,
            ..
        } => Ok(AttrValue::String(text(e, *padding))),
        Datatype::String {
            size: StringSize::Variable,
            ..
        }
        | Datatype::VarLen {
            kind: VarLenKind::String,
            ..
        } => {
            let b = ctx.heap_object(e, 1)?;
            // h5py builds each value from a C string: it ends at its first NUL.
            let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
            Ok(AttrValue::String(
                String::from_utf8_lossy(&b[..end]).into_owned(),
            ))
        }
        Datatype::VarLen { base, .. } => {
            let unit = size_of(base, ctx.os).ok_or("a datatype too large")?;
            let b = ctx.heap_object(e, unit)?;
            let count = b.len().checked_div(unit).unwrap_or(0);
            value(ctx, base, &[count as u64], &b)
        }
        Datatype::Compound { fields, .. } => {
            let mut out = Vec::with_capacity(fields.len());
            for f in fields {
                let size = size_of(&f.datatype, ctx.os).ok_or("a datatype too large")?;
                let at = f.byte_offset as usize;
                let part = e
                    .get(at..at + size)
                    .ok_or_else(|| format!("compound member {:?} passes its record", f.name))?;
                out.push((f.name.clone(), value(ctx, &f.datatype, &[], part)?));
            }
            Ok(AttrValue::Map(out))
        }
        Datatype::Array { base, dims } => value(ctx, base, dims, e),
        Datatype::Reference { .. } => Ok(AttrValue::Omitted(REFERENCE.into())),
        Datatype::Opaque { .. } => Ok(AttrValue::Omitted(OPAQUE.into())),
        other => Ok(AttrValue::Omitted(format!(
            "{} not shown",
            match other {
                Datatype::FixedPoint { size, .. } => format!("{size}-byte integer"),
                Datatype::FloatingPoint { size, .. } => format!("{size}-byte float"),
                Datatype::Bitfield { size, .. } => format!("{size}-byte bitfield"),
                _ => "datatype".into(),
            }
        ))),
    }
}

/// The name of an attribute message whose parse failed, if its header is readable
/// (versions 1 and 2: name at byte 8; version 3: at byte 9; name size at bytes 2-3).
fn salvage_name(b: &[u8]) -> Option<String> {
    let at = match b.first()? {
        1 | 2 => 8,
        3 => 9,
        _ => return None,
    };
    let n = u16::from_le_bytes([*b.get(2)?, *b.get(3)?]) as usize;
    let raw = b.get(at..at + n)?;
    let end = raw.iter().position(|&c| c == 0).unwrap_or(raw.len());
    let s = std::str::from_utf8(&raw[..end]).ok()?;
    (!s.is_empty() && !s.chars().any(char::is_control)).then(|| s.to_string())
}

/// One stored attribute: its name and parsed message, or why it could not be parsed.
type Stored = (String, Result<AttributeMessage, String>);

/// The attribute messages of dense storage, in creation order when it is indexed (else in
/// name-index order; the caller sorts by name).
fn dense(
    file: &Hdf5File,
    info: &AttributeInfoMessage,
    bits: &mut Vec<(String, super::header::Bits)>,
) -> Result<Vec<Stored>, String> {
    let storage = file.storage();
    let sb = file.superblock();
    let (os, ls) = (sb.offset_size, sb.length_size);
    if Cursor::is_undefined_offset(info.fractal_heap_address, os) {
        return Ok(Vec::new());
    }
    let err = |what: &str, e: hdf5_reader::error::Error| format!("dense attribute {what}: {e}");
    let heap = FractalHeap::parse_at_storage(storage, info.fractal_heap_address, os, ls)
        .map_err(|e| err("heap", e))?;
    let index = info
        .btree_creation_order_address
        .filter(|&a| !Cursor::is_undefined_offset(a, os))
        .unwrap_or(info.btree_name_index_address);
    let bt = btree_v2::BTreeV2Header::parse_at_storage(storage, index, os, ls)
        .map_err(|e| err("B-tree", e))?;
    let records = btree_v2::collect_btree_v2_records_storage(storage, &bt, os, ls, None, &[], None)
        .map_err(|e| err("B-tree", e))?;
    let mut ids: Vec<(u32, &[u8])> = records
        .iter()
        .filter_map(|r| match r {
            BTreeV2Record::AttributeNameHash {
                creation_order,
                heap_id,
                ..
            } => Some((*creation_order, heap_id.as_slice())),
            BTreeV2Record::AttributeCreationOrder { order, heap_id } => {
                Some((*order, heap_id.as_slice()))
            }
            _ => None,
        })
        .collect();
    crate::sort::sort_by_key(&mut ids, |(o, _)| *o);
    let mut cache = FractalHeapDirectBlockCache::default();
    let mut out = Vec::with_capacity(ids.len());
    for (i, (_, id)) in ids.into_iter().enumerate() {
        let unnamed = || format!("(attribute {i} of dense storage)");
        let bytes = match heap
            .get_object_storage_cached_with_registry(id, storage, os, ls, &mut cache, None)
        {
            Ok(b) => b,
            Err(e) => {
                out.push((unnamed(), Err(format!("heap object: {e}"))));
                continue;
            }
        };
        if let Some((name, desc)) = super::header::attribute_datatype(&bytes) {
            match super::header::bits(&desc) {
                super::header::Bits::Plain => {}
                b => bits.push((name, b)),
            }
        }
        let parsed =
            hdf5_reader::messages::attribute::parse(&mut Cursor::new(&bytes), os, ls, bytes.len());
        match parsed {
            Ok(m) => out.push((m.name.clone(), Ok(m))),
            Err(e) => out.push((
                salvage_name(&bytes).unwrap_or_else(unnamed),
                Err(format!("malformed attribute message: {e}")),
            )),
        }
    }
    Ok(out)
}

/// The attributes of the object whose header is at `address` (module rules), with what
/// they say about dimension scales.
///
/// # Errors
/// The crate's error when the object header itself does not parse; every error about an
/// attribute is kept as its `Omitted` value instead.
pub fn read(file: &Hdf5File, address: u64) -> hdf5_reader::error::Result<NodeAttrs> {
    let sb = file.superblock();
    let mut stored: Vec<Stored> = Vec::new();
    let mut info = None;
    match file.get_or_parse_header(address) {
        Ok(header) => {
            for m in &header.messages {
                match m {
                    HdfMessage::Attribute(a) => stored.push((a.name.clone(), Ok(a.clone()))),
                    HdfMessage::AttributeInfo(i) => info = Some(i.clone()),
                    _ => {}
                }
            }
        }
        // A version 1 header (no checksum) that does not parse: its attribute messages one
        // by one, a broken one omitted (libhdf5 reads them only when asked).
        Err(e) => match v1_messages(file, address) {
            Some(list) => {
                let (os, ls) = (sb.offset_size, sb.length_size);
                for (_, kind, data) in list {
                    if kind != MSG_ATTRIBUTE {
                        continue;
                    }
                    match hdf5_reader::messages::attribute::parse(
                        &mut Cursor::new(&data),
                        os,
                        ls,
                        data.len(),
                    ) {
                        Ok(m) => stored.push((m.name.clone(), Ok(m))),
                        Err(why) => stored.push((
                            salvage_name(&data).unwrap_or_else(|| "(attribute)".into()),
                            Err(format!("malformed attribute message: {why}")),
                        )),
                    }
                }
            }
            None => return Err(e),
        },
    }
    let creation_order = info.as_ref().is_some_and(|i| i.creation_order_tracked);
    // Bit layouts the crate's parsed datatypes do not keep (`header::bits`): integers of
    // reduced precision converted, other layouts omitted.
    let mut bits = super::header::attribute_bits(file, address);
    if let Some(i) = &info {
        match dense(file, i, &mut bits) {
            Ok(d) => stored.extend(d),
            Err(e) => stored.push(("(dense attribute storage)".into(), Err(e))),
        }
    }
    // h5py lists by name unless creation order is tracked.
    if !creation_order {
        crate::sort::sort_by(&mut stored, |a, b| a.0.cmp(&b.0));
    }
    let mut ctx = Ctx {
        file,
        os: sb.offset_size,
        ls: sb.length_size,
        base: sb.base_address,
        used: 0,
        heaps: HashMap::new(),
    };
    let mut out = NodeAttrs::default();
    for (name, m) in stored {
        let v = match (&m, bits.iter().find(|(n, _)| *n == name).map(|(_, b)| b)) {
            (Ok(_), Some(super::header::Bits::Unsupported(what))) => {
                AttrValue::Omitted(what.clone())
            }
            (Ok(m), Some(super::header::Bits::Reduced(b))) => match reduced(m, b) {
                Ok(m) => message_value(&mut ctx, &m),
                Err(why) => AttrValue::Omitted(why),
            },
            (Ok(m), _) => message_value(&mut ctx, m),
            (Err(why), _) => AttrValue::Omitted(why.clone()),
        };
        if let Ok(m) = &m {
            scale_attr(&mut ctx, &name, m, &v, &mut out.scale);
        }
        out.attrs.insert(name, v);
    }
    out.bytes = ctx.used;
    Ok(out)
}

/// The attribute `m` of an integer (or enum) type of reduced precision with its stored bits
/// converted to values (`b`, as for datasets).
fn reduced(m: &AttributeMessage, b: &super::filters::BitField) -> Result<AttributeMessage, String> {
    let base = match &m.datatype {
        Datatype::Enum { base, .. } => base.as_ref(),
        dt => dt,
    };
    let (d, _) = numeric(base).ok_or("a reduced-precision type that is not an integer")?;
    let mut m = m.clone();
    b.to_values(
        &mut m.raw_data,
        d.itemsize,
        d.order != crate::dtype::ByteOrder::Big,
        d.kind == Kind::Int,
    )
    .map_err(|e| e.to_string())?;
    Ok(m)
}

/// Notes a dimension-scale attribute (`DIMENSION_LIST`, `CLASS`, `NAME`) in `scale`.
fn scale_attr(
    ctx: &mut Ctx<'_>,
    name: &str,
    m: &AttributeMessage,
    v: &AttrValue,
    scale: &mut ScaleInfo,
) {
    match (name, v) {
        ("CLASS", AttrValue::String(s)) => scale.is_scale = s == "DIMENSION_SCALE",
        ("NAME", AttrValue::String(s)) => {
            scale.name = (!s.is_empty() && !s.starts_with(NETCDF_PLACEHOLDER)).then(|| s.clone())
        }
        ("DIMENSION_LIST", _) => scale.dimension_list = dimension_list(ctx, m),
        _ => {}
    }
}

/// The first scale of each dimension of a `DIMENSION_LIST` attribute: a one-dimensional
/// array of variable-length sequences of object references (addresses of `offset_size`
/// bytes), one sequence per dimension of the dataset.
fn dimension_list(ctx: &mut Ctx<'_>, m: &AttributeMessage) -> Option<Vec<Option<u64>>> {
    let Datatype::VarLen {
        base,
        kind: VarLenKind::Sequence,
        ..
    } = &m.datatype
    else {
        return None;
    };
    let Datatype::Reference {
        ref_type: ReferenceType::Object,
        size,
    } = base.as_ref()
    else {
        return None;
    };
    let size = *size as usize;
    if size != ctx.os as usize || m.dataspace.dims.len() != 1 {
        return None;
    }
    let n = usize::try_from(m.dataspace.dims[0]).ok()?;
    let r = 8 + ctx.os as usize;
    let mut out = Vec::new();
    for e in m.raw_data.chunks_exact(r).take(n) {
        let obj = ctx.heap_object(e, size).ok()?;
        out.push(obj.get(..size).map(|a| {
            let mut b = [0u8; 8];
            b[..size].copy_from_slice(a);
            u64::from_le_bytes(b)
        }));
    }
    Some(out)
}

/// A patch that hides a broken dense attribute storage of the object whose header is at
/// `address` from the crate, which loads a dataset's attributes when it opens it and fails
/// the open over any one of them (libhdf5 opens such a dataset: it reads attributes only
/// when asked). When the Attribute Info message's storage does not read whole (a heap,
/// B-tree or message error), the result is the header chunk holding that message with its
/// fractal heap address set to the undefined address, and the chunk's lookup3 checksum
/// computed again: `(chunk address, chunk bytes)`. `None` when the storage reads, the header
/// is not a version 2 header (the only kind that holds dense storage as libhdf5 writes it),
/// or the chunk's checksum was already wrong (a damaged header is refused as libhdf5 does).
/// The attributes themselves are still read from the unpatched bytes ([`read`]), the broken
/// ones shown as omitted. Header layout: File Format Specification IV.A.1.b (version 2 object
/// header prefix, continuation blocks `OCHK`) and IV.A.2.v (Attribute Info message).
///
/// # Errors
/// The crate's errors when the header does not parse.
pub fn dense_mask(
    file: &Hdf5File,
    address: u64,
) -> hdf5_reader::error::Result<Option<(u64, Vec<u8>)>> {
    let header = file.get_or_parse_header(address)?;
    let Some(info) = header.messages.iter().find_map(|m| match m {
        HdfMessage::AttributeInfo(i) => Some(i.clone()),
        _ => None,
    }) else {
        return Ok(None);
    };
    match dense(file, &info, &mut Vec::new()) {
        Ok(list) if list.iter().all(|(_, m)| m.is_ok()) => return Ok(None),
        _ => {}
    }
    Ok(mask_attribute_info(file, address))
}

/// Patches that let the crate parse the object header at `address` and open the object
/// despite broken attributes: for a version 1 header that does not parse, each Attribute
/// message that does not parse on its own becomes a NIL message (type 0, File Format
/// Specification IV.A.1.a: version 1 headers carry no checksum); for a header that parses,
/// [`dense_mask`]. Empty when nothing is to be hidden.
///
/// # Errors
/// The crate's errors when a header that parses has a broken dense storage that cannot be
/// masked (none so far: such cases give no patch).
pub fn attribute_masks(
    file: &Hdf5File,
    address: u64,
) -> hdf5_reader::error::Result<Vec<(u64, Vec<u8>)>> {
    if file.get_or_parse_header(address).is_ok() {
        return Ok(dense_mask(file, address)?.into_iter().collect());
    }
    let sb = file.superblock();
    let Some(list) = v1_messages(file, address) else {
        return Ok(Vec::new());
    };
    Ok(list
        .into_iter()
        .filter(|(_, kind, data)| {
            *kind == MSG_ATTRIBUTE
                && hdf5_reader::messages::attribute::parse(
                    &mut Cursor::new(data),
                    sb.offset_size,
                    sb.length_size,
                    data.len(),
                )
                .is_err()
        })
        .map(|(envelope, _, _)| (envelope, vec![0, 0]))
        .collect())
}

/// Attribute message type.
const MSG_ATTRIBUTE: u16 = 0x000C;

/// The messages of the version 1 object header at `address`, as `(envelope address, type,
/// data)`, continuation blocks followed (File Format Specification IV.A.1.a: a 16-byte
/// prefix with the header size, then messages of an 8-byte envelope, type u16 and size
/// u16 first; continuation messages, type 0x10, give a block's address and length). `None`
/// when it is not a version 1 header or its blocks do not read.
fn v1_messages(file: &Hdf5File, address: u64) -> Option<Vec<(u64, u16, Vec<u8>)>> {
    let storage = file.storage();
    let sb = file.superblock();
    let (os, ls) = (sb.offset_size as usize, sb.length_size as usize);
    let read = |at: u64, n: u64| -> Option<Vec<u8>> {
        (n <= super::store::MAX_MISS_BYTES && at.checked_add(n)? <= storage.len())
            .then(|| storage.read_range(at, n as usize).ok().map(|b| b.to_vec()))
            .flatten()
    };
    let prefix = read(address, 16)?;
    if prefix[0] != 1 {
        return None;
    }
    let size = u32::from_le_bytes(prefix[8..12].try_into().ok()?) as u64;
    let mut blocks = vec![(address + 16, size)];
    let mut out = Vec::new();
    let mut i = 0;
    while i < blocks.len() && i < 1024 {
        let (start, len) = blocks[i];
        let b = read(start, len)?;
        let mut p = 0usize;
        while p + 8 <= b.len() {
            let kind = u16::from_le_bytes([b[p], b[p + 1]]);
            let n = u16::from_le_bytes([b[p + 2], b[p + 3]]) as usize;
            let data = b.get(p + 8..p + 8 + n)?.to_vec();
            if kind == 0x10 && n >= os + ls {
                let mut a = [0u8; 8];
                a[..os].copy_from_slice(&data[..os]);
                let mut l = [0u8; 8];
                l[..ls].copy_from_slice(&data[os..os + ls]);
                blocks.push((
                    u64::from_le_bytes(a).checked_add(sb.base_address)?,
                    u64::from_le_bytes(l),
                ));
            }
            out.push((start + p as u64, kind, data));
            p += 8 + n;
        }
        i += 1;
    }
    Some(out)
}

/// The chunk of the version 2 header at `address` holding the Attribute Info message, with
/// its heap address undefined and its checksum recomputed (see [`dense_mask`]).
fn mask_attribute_info(file: &Hdf5File, address: u64) -> Option<(u64, Vec<u8>)> {
    let storage = file.storage();
    let sb = file.superblock();
    let (os, ls) = (sb.offset_size as usize, sb.length_size as usize);
    let read = |at: u64, n: usize| -> Option<Vec<u8>> {
        (n as u64 <= super::store::MAX_MISS_BYTES)
            .then(|| storage.read_range(at, n).ok().map(|b| b.to_vec()))
            .flatten()
    };
    let uint = |b: &[u8]| -> u64 {
        let mut a = [0u8; 8];
        a[..b.len().min(8)].copy_from_slice(&b[..b.len().min(8)]);
        u64::from_le_bytes(a)
    };
    let prefix = read(address, 6)?;
    if &prefix[..4] != b"OHDR" || prefix[4] != 2 {
        return None;
    }
    let flags = prefix[5];
    let mut at = 6 + if flags & 0x20 != 0 { 16 } else { 0 } + if flags & 0x10 != 0 { 4 } else { 0 };
    let width = 1usize << (flags & 3);
    let size = uint(&read(address + at as u64, width)?) as usize;
    at += width;
    // (chunk address, bytes, first message offset); the checksum is the last 4 bytes.
    let mut chunks: Vec<(u64, Vec<u8>, usize)> = vec![(address, read(address, at + size + 4)?, at)];
    let envelope = if flags & 0x04 != 0 { 6 } else { 4 };
    let mut i = 0;
    while i < chunks.len() && i < 1024 {
        let (start, bytes, first) = chunks[i].clone();
        let end = bytes.len().checked_sub(4)?;
        let mut p = first;
        while p + envelope <= end {
            let kind = bytes[p];
            let n = u16::from_le_bytes([bytes[p + 1], bytes[p + 2]]) as usize;
            let data = p + envelope;
            if data + n > end {
                break;
            }
            match kind {
                0x10 if n >= os + ls => {
                    let off = uint(&bytes[data..data + os]).checked_add(sb.base_address)?;
                    let len = uint(&bytes[data + os..data + os + ls]) as usize;
                    let c = read(off, len)?;
                    if c.len() >= 8 && &c[..4] == b"OCHK" {
                        chunks.push((off, c, 4));
                    }
                }
                0x15 if n >= 2 => {
                    let stored = u32::from_le_bytes(bytes[end..end + 4].try_into().ok()?);
                    if hdf5_reader::checksum::jenkins_lookup3(&bytes[..end]) != stored {
                        return None;
                    }
                    let heap = data + 2 + if bytes[data + 1] & 1 != 0 { 2 } else { 0 };
                    let mut patched = bytes.clone();
                    patched.get_mut(heap..heap + os)?.fill(0xff);
                    let sum = hdf5_reader::checksum::jenkins_lookup3(&patched[..end]);
                    patched[end..end + 4].copy_from_slice(&sum.to_le_bytes());
                    return Some((start, patched));
                }
                _ => {}
            }
            p = data + n;
        }
        i += 1;
    }
    None
}

/// The last component of `path`.
pub fn basename(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// Dimension names of a dataset of `rank` dimensions at `path` whose attributes say `own`
/// (module rules): from its `DIMENSION_LIST`, each scale's name given by `scale(address)`
/// (the scale's path and [`ScaleInfo`], `None` when it cannot be found: then the dimension
/// is unnamed); else, for a scale dataset, its own name as dimension 0; else `None`.
pub fn dims(
    rank: usize,
    path: &str,
    own: &ScaleInfo,
    scale: impl Fn(u64) -> Option<(String, ScaleInfo)>,
) -> Option<Vec<Option<String>>> {
    let name = |p: &str, s: &ScaleInfo| s.name.clone().unwrap_or_else(|| basename(p).to_string());
    if let Some(list) = &own.dimension_list {
        let mut out: Vec<Option<String>> = list
            .iter()
            .take(rank)
            .map(|a| a.and_then(&scale).map(|(p, s)| name(&p, &s)))
            .collect();
        out.resize(rank, None);
        return Some(out);
    }
    if own.is_scale && rank > 0 {
        let mut out = vec![None; rank];
        out[0] = Some(name(path, own));
        return Some(out);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dims_follow_the_dimension_list_then_the_scale_itself() {
        let x = ScaleInfo {
            is_scale: true,
            name: Some("x".into()),
            ..Default::default()
        };
        let lat = ScaleInfo {
            is_scale: true,
            ..Default::default()
        };
        let lookup = |a: u64| match a {
            10 => Some(("/x".to_string(), x.clone())),
            20 => Some(("/g/lat".to_string(), lat.clone())),
            _ => None,
        };
        let cube = ScaleInfo {
            dimension_list: Some(vec![Some(10), Some(20), None, Some(99)]),
            ..Default::default()
        };
        assert_eq!(
            dims(4, "/cube", &cube, lookup),
            Some(vec![Some("x".into()), Some("lat".into()), None, None])
        );
        assert_eq!(
            dims(1, "/g/lat", &lat, lookup),
            Some(vec![Some("lat".into())])
        );
        assert_eq!(dims(2, "/plain", &ScaleInfo::default(), lookup), None);
    }

    #[test]
    fn names_of_broken_messages_are_salvaged() {
        let mut m = vec![3u8, 0, 6, 0, 0, 0, 0, 0, 0];
        m.extend_from_slice(b"units\0\xff\xff");
        assert_eq!(salvage_name(&m).as_deref(), Some("units"));
        assert_eq!(salvage_name(&[9, 0, 1]), None);
    }

    #[test]
    fn values_past_the_node_bound_are_omitted_not_kept() {
        use hdf5_reader::messages::dataspace::DataspaceMessage;
        let file = Hdf5File::from_bytes(include_bytes!(
            "../../../tests/fixtures/hdf5_attrs/attrs_latest.h5"
        ))
        .unwrap();
        let mut ctx = Ctx {
            file: &file,
            os: 8,
            ls: 8,
            base: 0,
            used: 0,
            heaps: HashMap::new(),
        };
        let bytes = |n: usize, raw: Vec<u8>, dt: Datatype| AttributeMessage {
            name: "big".into(),
            datatype: dt,
            dataspace: DataspaceMessage {
                rank: 1,
                dims: vec![n as u64],
                max_dims: None,
                dataspace_type: DataspaceType::Simple,
            },
            raw_data: raw,
        };
        let u1 = Datatype::FixedPoint {
            size: 1,
            signed: false,
            byte_order: hdf5_reader::ByteOrder::LittleEndian,
        };
        let half = MAX_ATTR_BYTES / 2 + 1;
        let a = bytes(half, vec![7; half], u1.clone());
        assert!(matches!(
            message_value(&mut ctx, &a),
            AttrValue::Array { .. }
        ));
        // A second one of the same size passes the node's bound.
        match message_value(&mut ctx, &a) {
            AttrValue::Omitted(why) => assert!(why.contains("bytes"), "{why}"),
            other => panic!("{other:?}"),
        }
        // Fixed strings of one byte: each listed element is charged too.
        let mut ctx = Ctx { used: 0, ..ctx };
        let s1 = Datatype::String {
            size: StringSize::Fixed(1),
            encoding: hdf5_reader::messages::datatype::StringEncoding::Ascii,
            padding: StringPadding::NullPad,
        };
        let n = MAX_ATTR_BYTES / ELEMENT_COST + 1;
        let s = bytes(n, vec![b'a'; n], s1);
        assert!(matches!(message_value(&mut ctx, &s), AttrValue::Omitted(_)));
        // Data shorter than its dataspace says: omitted, never read past.
        let short = bytes(10, vec![1; 3], u1);
        assert!(matches!(
            message_value(&mut ctx, &short),
            AttrValue::Omitted(_)
        ));
    }

    #[test]
    fn a_listing_keeps_a_bounded_total() {
        let node = |bytes| NodeAttrs {
            attrs: Attrs(vec![("a".into(), AttrValue::Int(1))]),
            bytes,
            ..Default::default()
        };
        let mut total = 0;
        for _ in 0..4 {
            assert_eq!(
                node(16 << 20).within(&mut total).attrs.get("a"),
                Some(&AttrValue::Int(1))
            );
        }
        let past = node(1).within(&mut total);
        assert!(matches!(
            past.attrs.get("(attributes)"),
            Some(AttrValue::Omitted(_))
        ));
        assert_eq!(total, MAX_LISTING_ATTR_BYTES);
    }

    #[test]
    fn lists_nest_by_shape() {
        let items: Vec<AttrValue> = (0..6).map(AttrValue::Int).collect();
        assert_eq!(
            nest(items, &[2, 3]).to_json(),
            serde_json::json!([[0, 1, 2], [3, 4, 5]])
        );
    }
}
