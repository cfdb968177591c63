//! What `hdf5-reader`'s parsed messages leave out, read from an object header's raw message
//! bytes: the bit layout of a dataset's datatype (fixed-point bit offset and precision,
//! floating-point fields) and the chunked layout's flags. The crate parses both messages but
//! keeps neither, and each changes the values read:
//!
//! - an integer type of reduced precision (`H5Tset_precision`, `H5Tset_offset`) stores its
//!   value in `precision` bits `offset` bits up, the other bits padding: libhdf5 converts it
//!   to a value (`H5T__conv_i_i`), so chunkwise does the same ([`BitField`]);
//! - a floating-point type is read as IEEE 754 binary16/32/64 only when its fields are those
//!   of that format; any other layout (bfloat16, which HDF5 2.0 predefines as
//!   `H5T_FLOAT_BFLOAT16LE`; custom or VAX-ordered floats) is refused;
//! - a chunked layout (message version 4 or 5) with `DONT_FILTER_PARTIAL_BOUND_CHUNKS`
//!   (`H5Pset_chunk_opts`) stores its partial edge chunks unfiltered.
//!
//! Object header layout: HDF5 File Format Specification IV.A.1.a (version 1: a 16-byte
//! prefix, messages of an 8-byte envelope) and IV.A.1.b (version 2: `OHDR`, messages of a
//! 4- or 6-byte envelope, continuation blocks `OCHK`); continuation messages (type 0x10)
//! give further blocks. Datatype message: IV.A.2.d; shared messages: IV.A.2.h (a committed
//! datatype is another object header's datatype message); data layout message: IV.A.2.i.

use super::filters::BitField;
use hdf5_reader::Hdf5File;

/// Datatype message type.
const MSG_DATATYPE: u16 = 0x0003;
/// Data layout message type.
const MSG_LAYOUT: u16 = 0x0008;
/// Object header continuation message type.
const MSG_CONTINUATION: u16 = 0x0010;
/// Message flag: the message is shared (its data says where the message is).
const FLAG_SHARED: u8 = 0x02;
/// Blocks of one header followed at most (a loop of continuations is damage).
const MAX_BLOCKS: usize = 1024;
/// Largest header block read (bytes): headers are small; a larger length is damage.
const MAX_BLOCK_BYTES: u64 = 1 << 20;
/// Deepest datatype nesting walked (the crate's own bound).
const MAX_DEPTH: usize = 32;

/// One message of an object header: its type, flags and data.
#[derive(Debug, Clone)]
pub struct RawMessage {
    /// Message type (0x0003 datatype, 0x0008 data layout, ...).
    pub kind: u16,
    /// Message flags (bit 1: shared).
    pub flags: u8,
    /// The message's data (without its envelope).
    pub data: Vec<u8>,
}

/// The messages of the object header at `address`, continuation blocks followed, in order.
/// Addresses are file addresses, relative to the superblock's base address (after a user
/// block), as the crate's storage takes them (`file.storage()` counts from the base).
/// `None` when the header does not read as version 1 or 2 (the crate, which parsed it first,
/// reports damage) or its blocks are not all in the storage (a remote discovery step then
/// records the miss and runs again).
pub fn raw_messages(file: &Hdf5File, address: u64) -> Option<Vec<RawMessage>> {
    let storage = file.storage();
    let sb = file.superblock();
    let (os, ls) = (sb.offset_size as usize, sb.length_size as usize);
    let read = |at: u64, n: u64| -> Option<Vec<u8>> {
        (n <= MAX_BLOCK_BYTES && at.checked_add(n)? <= storage.len())
            .then(|| storage.read_range(at, n as usize).ok().map(|b| b.to_vec()))
            .flatten()
    };
    let uint = |b: &[u8]| -> u64 {
        let mut a = [0u8; 8];
        let n = b.len().min(8);
        a[..n].copy_from_slice(&b[..n]);
        u64::from_le_bytes(a)
    };
    let first = read(address, 6)?;
    // (block bytes, where its first message starts, where its messages end)
    let mut blocks: Vec<(Vec<u8>, usize, usize)> = Vec::new();
    let v2 = &first[..4] == b"OHDR";
    let (envelope, order_bytes) = if v2 {
        if first[4] != 2 {
            return None;
        }
        let flags = first[5];
        let mut at =
            6 + if flags & 0x20 != 0 { 16 } else { 0 } + if flags & 0x10 != 0 { 4 } else { 0 };
        let width = 1usize << (flags & 3);
        let size = uint(&read(address + at as u64, width as u64)?) as usize;
        at += width;
        // the chunk's messages, then its 4-byte checksum
        blocks.push((read(address, (at + size) as u64)?, at, at + size));
        (4 + if flags & 0x04 != 0 { 2 } else { 0 }, true)
    } else {
        if first[0] != 1 {
            return None;
        }
        let prefix = read(address, 16)?;
        let size = u32::from_le_bytes(prefix[8..12].try_into().ok()?) as u64;
        let b = read(address + 16, size)?;
        let end = b.len();
        blocks.push((b, 0, end));
        (8, false)
    };
    let mut out = Vec::new();
    let mut i = 0;
    while i < blocks.len() {
        if i >= MAX_BLOCKS {
            return None;
        }
        let (bytes, start, end) = std::mem::take(&mut blocks[i]);
        let mut p = start;
        while p + envelope <= end {
            let (kind, n, flags) = if order_bytes {
                (
                    bytes[p] as u16,
                    u16::from_le_bytes([bytes[p + 1], bytes[p + 2]]) as usize,
                    bytes[p + 3],
                )
            } else {
                (
                    u16::from_le_bytes([bytes[p], bytes[p + 1]]),
                    u16::from_le_bytes([bytes[p + 2], bytes[p + 3]]) as usize,
                    bytes[p + 4],
                )
            };
            let data = bytes.get(p + envelope..p + envelope + n)?;
            if p + envelope + n > end {
                return None;
            }
            if kind == MSG_CONTINUATION && n >= os + ls {
                let at = uint(&data[..os]);
                let len = uint(&data[os..os + ls]);
                let b = read(at, len)?;
                if v2 {
                    if b.len() < 8 || &b[..4] != b"OCHK" {
                        return None;
                    }
                    let end = b.len() - 4;
                    blocks.push((b, 4, end));
                } else {
                    let end = b.len();
                    blocks.push((b, 0, end));
                }
            }
            out.push(RawMessage {
                kind,
                flags,
                data: data.to_vec(),
            });
            p += envelope + n;
        }
        i += 1;
    }
    Some(out)
}

/// The datatype description of the object at `address`: its datatype message's data, or for
/// a shared one (a committed datatype) that of the object it points to. `None` when it cannot
/// be read or is shared through the file's shared-message table (the crate refuses those).
pub fn datatype(file: &Hdf5File, address: u64) -> Option<Vec<u8>> {
    let mut at = address;
    for _ in 0..8 {
        let msgs = raw_messages(file, at)?;
        let m = msgs.into_iter().find(|m| m.kind == MSG_DATATYPE)?;
        if m.flags & FLAG_SHARED == 0 {
            return Some(m.data);
        }
        // Shared message, versions 1-3: the address of the object holding the message
        // (version 3 type 2); a version 3 type 1 is a shared-message heap ID.
        let os = file.superblock().offset_size as usize;
        let d = &m.data;
        let field = match (d.first()?, d.get(1)?) {
            (1, _) => d.get(8..8 + os)?,
            (2, _) => d.get(2..2 + os)?,
            (3, 2) => d.get(2..2 + os)?,
            _ => return None,
        };
        let mut a = [0u8; 8];
        a[..os].copy_from_slice(field);
        at = u64::from_le_bytes(a);
    }
    None
}

/// Attribute message type.
const MSG_ATTRIBUTE: u16 = 0x000C;

/// The name and datatype description of an attribute message's `data` (File Format
/// Specification IV.A.2.m: version 1 with its fields padded to 8 bytes, version 2, version 3
/// with a name encoding byte). `None` when it does not read or its datatype is shared (a
/// committed type: not checked here).
pub fn attribute_datatype(data: &[u8]) -> Option<(String, Vec<u8>)> {
    let version = *data.first()?;
    let flags = *data.get(1)?;
    let u16_at = |i: usize| -> Option<usize> {
        Some(u16::from_le_bytes(data.get(i..i + 2)?.try_into().ok()?) as usize)
    };
    let (name_len, type_len) = (u16_at(2)?, u16_at(4)?);
    let pad = |n: usize| if version == 1 { n.div_ceil(8) * 8 } else { n };
    let start = match version {
        1 | 2 => 8,
        3 => 9,
        _ => return None,
    };
    if version >= 2 && flags & 1 != 0 {
        return None;
    }
    let name = data.get(start..start + name_len)?;
    let name = name.split(|&b| b == 0).next()?;
    let at = start + pad(name_len);
    let desc = data.get(at..at + type_len)?;
    Some((String::from_utf8_lossy(name).into_owned(), desc.to_vec()))
}

/// The bit layouts of the attributes stored in the object header at `address` (attribute
/// messages; dense storage's are read where its heap objects are), by name.
pub fn attribute_bits(file: &Hdf5File, address: u64) -> Vec<(String, Bits)> {
    raw_messages(file, address)
        .unwrap_or_default()
        .iter()
        .filter(|m| m.kind == MSG_ATTRIBUTE)
        .filter_map(|m| attribute_datatype(&m.data))
        .map(|(name, desc)| (name, bits(&desc)))
        .filter(|(_, b)| *b != Bits::Plain)
        .collect()
}

/// Whether the chunked layout of the object at `address` stores its partial edge chunks
/// unfiltered (data layout message version 4, which libhdf5 1.10 writes, or 5, which HDF5
/// 2.0 writes with the same chunked fields: flag bit 0, `DONT_FILTER_PARTIAL_BOUND_CHUNKS`).
/// `false` for other layouts and versions (1-3 have no flags); `None` when the header does
/// not read.
pub fn unfiltered_edge_chunks(file: &Hdf5File, address: u64) -> Option<bool> {
    let msgs = raw_messages(file, address)?;
    Some(msgs.iter().any(|m| {
        m.kind == MSG_LAYOUT
            && m.data.len() >= 3
            && matches!(m.data[0], 4 | 5)
            && m.data[1] == 2
            && m.data[2] & 1 != 0
    }))
}

/// What a datatype description's bit layout asks of a reader.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Bits {
    /// Every number uses all its bits in a standard layout (integers; IEEE 754 floats).
    Plain,
    /// An integer (or an enum's base integer) of reduced precision: convert with the field.
    Reduced(BitField),
    /// A layout not read here, with the reason.
    Unsupported(String),
}

/// The bit layout of the datatype description `desc` (File Format Specification IV.A.2.d):
/// [`Bits::Reduced`] for an integer or enum whose base integer does not use all its bits,
/// [`Bits::Unsupported`] for such an integer inside a compound, array or variable-length type
/// and for any floating-point type that is not IEEE 754 binary16/32/64 with all its bits,
/// [`Bits::Plain`] otherwise. A description that does not walk (damage the crate's own parse
/// would have caught) is [`Bits::Plain`]: this check adds refusals, never errors of its own.
pub fn bits(desc: &[u8]) -> Bits {
    let mut found = Bits::Plain;
    walk(desc, 0, true, &mut found);
    found
}

/// Walks the description at the start of `d` (`top`: the dataset's own type, or an enum's
/// base at the top), recording into `found` the first layout it meets that is not plain.
/// Returns the description's length, `None` when it does not walk.
fn walk(d: &[u8], depth: usize, top: bool, found: &mut Bits) -> Option<usize> {
    if depth > MAX_DEPTH || d.len() < 8 {
        return None;
    }
    let class = d[0] & 0x0f;
    let version = d[0] >> 4;
    let flags = u32::from_le_bytes([d[1], d[2], d[3], 0]);
    let size = u32::from_le_bytes(d[4..8].try_into().ok()?);
    let p = &d[8..];
    let u16_at = |b: &[u8], i: usize| -> Option<u32> {
        Some(u16::from_le_bytes(b.get(i..i + 2)?.try_into().ok()?) as u32)
    };
    let set = |found: &mut Bits, b: Bits| {
        if *found == Bits::Plain {
            *found = b;
        }
    };
    let bits = size.saturating_mul(8);
    Some(
        8 + match class {
            // fixed-point: bit offset, bit precision
            0 => {
                let (offset, precision) = (u16_at(p, 0)?, u16_at(p, 2)?);
                if offset != 0 || precision != bits {
                    if top && precision > 0 && offset + precision <= bits && size <= 8 {
                        set(found, Bits::Reduced(BitField { precision, offset }));
                    } else {
                        set(
                            found,
                            Bits::Unsupported(format!(
                                "an integer of {precision} bits at bit offset {offset} in {size} bytes{}",
                                if top { "" } else { " inside a compound, array or variable-length type" }
                            )),
                        );
                    }
                }
                4
            }
            // floating-point: bit offset, precision, exponent location and size, mantissa
            // location and size, exponent bias; flags: byte order (bits 0 and 6), mantissa
            // normalisation (bits 4-5), sign location (bits 8-15)
            1 => {
                let (offset, precision) = (u16_at(p, 0)?, u16_at(p, 2)?);
                let (eloc, esize, mloc, msize) = (*p.get(4)?, *p.get(5)?, *p.get(6)?, *p.get(7)?);
                let bias = u32::from_le_bytes(p.get(8..12)?.try_into().ok()?);
                let sign = (flags >> 8) & 0xff;
                let norm = (flags >> 4) & 3;
                let vax = flags & 0x40 != 0;
                let ieee = match size {
                    2 => (10, 5, 0, 10, 15),
                    4 => (23, 8, 0, 23, 127),
                    8 => (52, 11, 0, 52, 1023),
                    _ => (0, 0, 0, 0, 0),
                };
                let standard = ieee.1 != 0
                    && (eloc, esize, mloc, msize, bias) == ieee
                    && offset == 0
                    && precision == bits
                    && sign == bits - 1
                    && norm == 2
                    && !vax;
                if !standard {
                    let what = if size == 2 && (eloc, esize, mloc, msize, bias) == (7, 8, 0, 7, 127)
                    {
                        "bfloat16 (HDF5's H5T_FLOAT_BFLOAT16)".to_string()
                    } else {
                        format!(
                            "a {size}-byte floating-point type that is not IEEE 754 (sign bit {sign}, exponent {esize} bits at {eloc}, bias {bias}, mantissa {msize} bits at {mloc}, precision {precision} at offset {offset}{})",
                            if vax { ", VAX order" } else { "" }
                        )
                    };
                    set(found, Bits::Unsupported(what));
                }
                12
            }
            // time: bit precision
            2 => 2,
            // string, reference: no properties
            3 | 7 => 0,
            // bitfield: bit offset, precision
            4 => 4,
            // opaque: a NUL-padded tag of (flags & 0xff) bytes
            5 => (flags & 0xff) as usize,
            // compound: members (name, byte offset, [v1: dimensions], type)
            6 => {
                let n = (flags & 0xffff) as usize;
                let mut q = 0usize;
                for _ in 0..n {
                    let name = p.get(q..)?.iter().position(|&b| b == 0)? + 1;
                    q += match version {
                        1 | 2 => name.div_ceil(8) * 8,
                        _ => name,
                    };
                    q += match version {
                        1 => 4 + 1 + 3 + 4 + 4 + 16,
                        2 => 4,
                        // the offset in as many bytes as the compound's size needs
                        _ => match size {
                            0..=0xff => 1,
                            0x100..=0xffff => 2,
                            0x1_0000..=0xff_ffff => 3,
                            _ => 4,
                        },
                    };
                    q += walk(p.get(q..)?, depth + 1, false, found)?;
                }
                q
            }
            // enum: the base type, then names and values
            8 => {
                let n = (flags & 0xffff) as usize;
                let base = walk(p, depth + 1, top, found)?;
                let base_size = u32::from_le_bytes(p.get(4..8)?.try_into().ok()?) as usize;
                let mut q = base;
                for _ in 0..n {
                    let name = p.get(q..)?.iter().position(|&b| b == 0)? + 1;
                    q += match version {
                        1 | 2 => name.div_ceil(8) * 8,
                        _ => name,
                    };
                }
                q + n.checked_mul(base_size)?
            }
            // variable-length: the base type
            9 => walk(p, depth + 1, false, found)?,
            // array: rank, [v2: 3 reserved], dimension sizes, [v2: permutations], base type
            10 => {
                let rank = *p.first()? as usize;
                let q = if version < 3 {
                    4 + rank * 8
                } else {
                    1 + rank * 4
                };
                q + walk(p.get(q..)?, depth + 1, false, found)?
            }
            _ => return None,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fixed-point description: class 0, version 1, `size` bytes, signed or not.
    fn int(size: u32, signed: bool, offset: u16, precision: u16) -> Vec<u8> {
        let mut d = vec![0x10, if signed { 0x08 } else { 0 }, 0, 0];
        d.extend_from_slice(&size.to_le_bytes());
        d.extend_from_slice(&offset.to_le_bytes());
        d.extend_from_slice(&precision.to_le_bytes());
        d
    }

    /// A floating-point description with the given fields (little-endian, implied mantissa
    /// bit).
    fn float(size: u32, sign: u8, fields: (u8, u8, u8, u8, u32)) -> Vec<u8> {
        let mut d = vec![0x11, 0x20, sign, 0];
        d.extend_from_slice(&size.to_le_bytes());
        d.extend_from_slice(&0u16.to_le_bytes());
        d.extend_from_slice(&(size as u16 * 8).to_le_bytes());
        d.extend_from_slice(&[fields.0, fields.1, fields.2, fields.3]);
        d.extend_from_slice(&fields.4.to_le_bytes());
        d
    }

    #[test]
    fn integers_of_all_their_bits_are_plain_and_others_reduced() {
        assert_eq!(bits(&int(4, true, 0, 32)), Bits::Plain);
        assert_eq!(
            bits(&int(2, true, 0, 12)),
            Bits::Reduced(BitField {
                precision: 12,
                offset: 0
            })
        );
        assert_eq!(
            bits(&int(2, false, 2, 12)),
            Bits::Reduced(BitField {
                precision: 12,
                offset: 2
            })
        );
        // a field past the element is damage the conversion cannot take
        assert!(matches!(bits(&int(2, false, 8, 12)), Bits::Unsupported(_)));
    }

    #[test]
    fn ieee_floats_are_plain_and_bfloat16_is_refused() {
        assert_eq!(bits(&float(2, 15, (10, 5, 0, 10, 15))), Bits::Plain);
        assert_eq!(bits(&float(4, 31, (23, 8, 0, 23, 127))), Bits::Plain);
        assert_eq!(bits(&float(8, 63, (52, 11, 0, 52, 1023))), Bits::Plain);
        match bits(&float(2, 15, (7, 8, 0, 7, 127))) {
            Bits::Unsupported(s) => assert!(s.contains("bfloat16"), "{s}"),
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            bits(&float(4, 31, (23, 8, 0, 23, 100))),
            Bits::Unsupported(_)
        ));
    }

    #[test]
    fn reduced_integers_inside_compounds_and_arrays_are_refused() {
        // compound version 3, one member "a" at offset 0 of a 2-byte compound
        let mut c = vec![0x36, 1, 0, 0];
        c.extend_from_slice(&2u32.to_le_bytes());
        c.extend_from_slice(b"a\0");
        c.push(0);
        c.extend_from_slice(&int(2, true, 0, 10));
        assert!(matches!(bits(&c), Bits::Unsupported(_)));
        // the same member at full precision
        let mut c2 = c.clone();
        let at = c2.len() - 2;
        c2[at..].copy_from_slice(&16u16.to_le_bytes());
        assert_eq!(bits(&c2), Bits::Plain);
        // array version 3 of 3 reduced integers
        let mut a = vec![0x3a, 0, 0, 0];
        a.extend_from_slice(&6u32.to_le_bytes());
        a.push(1);
        a.extend_from_slice(&3u32.to_le_bytes());
        a.extend_from_slice(&int(2, false, 0, 9));
        assert!(matches!(bits(&a), Bits::Unsupported(_)));
    }

    #[test]
    fn an_enum_takes_its_base_integers_layout() {
        // enum version 3 of one member "x" = 1 over a reduced 2-byte base
        let mut e = vec![0x38, 1, 0, 0];
        e.extend_from_slice(&2u32.to_le_bytes());
        e.extend_from_slice(&int(2, false, 0, 4));
        e.extend_from_slice(b"x\0");
        e.extend_from_slice(&1u16.to_le_bytes());
        assert_eq!(
            bits(&e),
            Bits::Reduced(BitField {
                precision: 4,
                offset: 0
            })
        );
    }

    #[test]
    fn a_description_that_does_not_walk_is_plain() {
        assert_eq!(bits(&[]), Bits::Plain);
        assert_eq!(bits(&[0x16, 5, 0, 0, 8, 0, 0, 0]), Bits::Plain);
    }
}
