//! Element types beyond numbers: fixed-length strings, variable-length strings, records
//! (numpy structured dtypes) and sub-arrays, as h5py presents HDF5's string, compound and
//! array datatypes.
//!
//! A plain numeric array needs only a [`DType`]; an [`Element`] describes everything else. Its
//! stored form is what a decoded chunk holds (`stored_size` bytes per element), its result form
//! is what a read returns. Both are the same except for variable-length strings, whose
//! references are resolved into `|S{n}` bytes (n = the longest string of the selection, so no
//! value is ever truncated).
//!
//! Rules followed (h5py 3 over HDF5, `h5py/h5t.pyx` `py_dtype`/`py_create` and HDF5's
//! `H5T__conv_s_s`):
//! - fixed-length strings read as numpy bytes `S{n}` whatever the character set. h5py's memory
//!   type is null-padded, so a null-terminated string is cut at its first NUL and a
//!   space-padded one loses its trailing spaces, the rest zero-filled; a null-padded string
//!   is copied as stored;
//! - compound types read as structured dtypes with the file's member names, byte offsets,
//!   member byte orders and total size; nested compounds and array members nest likewise;
//! - h5py's boolean (an enum of a one-byte integer with members `FALSE` = 0 and `TRUE` = 1) reads
//!   as `|b1`, other enums as their base integer;
//! - variable-length strings read as Python objects in h5py; here as `S{n}` bytes (inside a
//!   record too: the member becomes `S{n}` and the record is laid out again).
//!
//! numpy's fixed-width unicode (`<U{n}`, [`Kind::Unicode`], as python-blosc2 stores it; a
//! record member is an [`Element::Number`] of that dtype) is kept as stored, UTF-32 code
//! units; as a value ([`ucs4_to_string`]) it loses its trailing NUL characters, as numpy's
//! `str_` does.

use crate::dtype::{ByteOrder, DType, Kind};

/// String padding of a fixed-length HDF5 string (HDF5 File Format Specification, "Datatype
/// Message", string class bit field bits 0-3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Padding {
    /// Null-terminated: the value ends at the first NUL.
    NullTerm,
    /// Null-padded: stored as is, padded with NULs.
    NullPad,
    /// Space-padded: trailing spaces are padding.
    SpacePad,
}

/// One named member of a record.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Field {
    /// Member name.
    pub name: String,
    /// Byte offset of the member inside the record.
    pub offset: usize,
    /// Member type.
    pub element: Element,
}

/// The type of one element of an array whose dtype is not a plain number.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Element {
    /// A number (or bool): the numpy typestr.
    Number(DType),
    /// A fixed-length string of `size` bytes (`|S{size}`).
    String {
        /// Bytes per value.
        size: usize,
        /// How the stored bytes are padded (applied on read, see the module rules).
        padding: Padding,
        /// Character set is UTF-8 (else ASCII). Either way the result holds bytes.
        utf8: bool,
    },
    /// A variable-length string: the stored element is a global heap reference of
    /// `4 + offset_size + 4` bytes (sequence length, collection address, object index).
    VlenString {
        /// Bytes of a file address (superblock "size of offsets").
        offset_size: u8,
        /// Bytes of a length in the file (superblock "size of lengths").
        length_size: u8,
        /// Absolute offset that the collection addresses are relative to (the superblock's
        /// base address).
        base_address: u64,
        /// Character set is UTF-8 (else ASCII).
        utf8: bool,
    },
    /// A record (numpy structured dtype) of `size` bytes.
    Record {
        /// Bytes per record, padding included.
        size: usize,
        /// Members in declaration order.
        fields: Vec<Field>,
    },
    /// A fixed-shape array of `base` elements (C order), e.g. numpy's `('<f4', (3,))`.
    SubArray {
        /// Type of each item.
        base: Box<Element>,
        /// Shape (items).
        shape: Vec<u64>,
    },
}

/// One value of an element, for hosts that present values rather than bytes (JS).
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// A boolean.
    Bool(bool),
    /// A signed integer of up to 32 bits.
    Int(i64),
    /// An unsigned integer of up to 32 bits.
    UInt(u64),
    /// A 64-bit signed integer (JS presents it as a BigInt).
    Int64(i64),
    /// A 64-bit unsigned integer (JS presents it as a BigInt).
    UInt64(u64),
    /// A float (half, single and double all widen to `f64`).
    Float(f64),
    /// A complex number (real, imaginary).
    Complex(f64, f64),
    /// A string's bytes, trailing NULs removed (numpy's `S` semantics).
    Bytes(Vec<u8>),
    /// A unicode string (numpy `U`), trailing NUL characters removed, code points that are no
    /// Unicode scalar value (surrogates, past U+10FFFF) as U+FFFD.
    Str(String),
    /// A sub-array's items, flattened in C order.
    List(Vec<Value>),
    /// A record's members in declaration order.
    Record(Vec<(String, Value)>),
}

impl Element {
    /// Bytes of one stored element.
    pub fn stored_size(&self) -> usize {
        match self {
            Element::Number(d) => d.itemsize,
            Element::String { size, .. } => *size,
            Element::VlenString { offset_size, .. } => 8 + *offset_size as usize,
            Element::Record { size, .. } => *size,
            Element::SubArray { base, shape } => {
                base.stored_size() * shape.iter().product::<u64>() as usize
            }
        }
    }

    /// Whether elements of this type hold variable-length references.
    pub fn has_vlen(&self) -> bool {
        match self {
            Element::VlenString { .. } => true,
            Element::Record { fields, .. } => fields.iter().any(|f| f.element.has_vlen()),
            Element::SubArray { base, .. } => base.has_vlen(),
            _ => false,
        }
    }

    /// The flat storage [`DType`]: the number itself, `|S{n}` for fixed strings, `|V{n}` for
    /// records, sub-arrays and variable-length references.
    pub fn storage_dtype(&self) -> DType {
        match self {
            Element::Number(d) => *d,
            Element::String { size, .. } => DType {
                kind: Kind::Bytes,
                itemsize: *size,
                order: ByteOrder::NotApplicable,
            },
            _ => DType {
                kind: Kind::Void,
                itemsize: self.stored_size(),
                order: ByteOrder::NotApplicable,
            },
        }
    }

    /// numpy's `.npy` header `descr` (and `dtype.str` for a simple type): a typestr such as
    /// `|S5` (`|S`, numpy's unsized bytes, for variable-length strings, whose reads resolve to
    /// `|S{n}` with n the longest string read; h5py says `|O`), for a record the list of
    /// `(name, format[, shape])` tuples (with `('', '|Vn')` entries for gaps, as numpy's
    /// `dtype.descr` writes them) for a record. Source: numpy `lib/format.py`
    /// `dtype_to_descr` and `_array_descr` in `numpy/core/_internal.py`.
    pub fn descr(&self) -> String {
        match self {
            Element::Number(d) => d.to_string(),
            Element::String { size, .. } => format!("|S{size}"),
            // numpy's unsized bytes: the width is known only from the strings a read
            // resolves (it then gives `|S{longest}`).
            Element::VlenString { .. } => "|S".to_string(),
            Element::SubArray { base, shape } => {
                // A sub-array on its own has no typestr; numpy writes its base with a shape.
                format!("({}, {})", quoted_or_list(base), shape_tuple(shape))
            }
            Element::Record { size, fields } => {
                let mut sorted: Vec<&Field> = fields.iter().collect();
                crate::sort::sort_by_key(&mut sorted, |f| f.offset);
                let mut parts = Vec::new();
                let mut at = 0usize;
                for f in sorted {
                    if f.offset > at {
                        parts.push(format!("('', '|V{}')", f.offset - at));
                    }
                    let name = py_str(&f.name);
                    match &f.element {
                        Element::SubArray { base, shape } => parts.push(format!(
                            "({name}, {}, {})",
                            quoted_or_list(base),
                            shape_tuple(shape)
                        )),
                        e => parts.push(format!("({name}, {})", quoted_or_list(e))),
                    }
                    at = f.offset + f.element.stored_size();
                }
                if *size > at {
                    parts.push(format!("('', '|V{}')", size - at));
                }
                format!("[{}]", parts.join(", "))
            }
        }
    }

    /// Applies h5py's string conversion (module rules) to every fixed-length string inside
    /// `data`, a whole number of stored elements, in place.
    pub fn normalize(&self, data: &mut [u8]) {
        if !self.has_fixed_string() {
            return;
        }
        let n = self.stored_size();
        if n == 0 {
            return;
        }
        for e in data.chunks_exact_mut(n) {
            self.normalize_one(e);
        }
    }

    fn has_fixed_string(&self) -> bool {
        match self {
            Element::String { padding, .. } => *padding != Padding::NullPad,
            Element::Record { fields, .. } => fields.iter().any(|f| f.element.has_fixed_string()),
            Element::SubArray { base, .. } => base.has_fixed_string(),
            _ => false,
        }
    }

    fn normalize_one(&self, e: &mut [u8]) {
        match self {
            Element::String { padding, .. } => {
                let keep = match padding {
                    Padding::NullPad => e.len(),
                    Padding::NullTerm => e.iter().position(|&b| b == 0).unwrap_or(e.len()),
                    Padding::SpacePad => e.iter().rposition(|&b| b != b' ').map_or(0, |p| p + 1),
                };
                e[keep..].fill(0);
            }
            Element::Record { fields, .. } => {
                for f in fields {
                    let end = f.offset + f.element.stored_size();
                    if let Some(s) = e.get_mut(f.offset..end) {
                        f.element.normalize_one(s);
                    }
                }
            }
            Element::SubArray { base, .. } => {
                let n = base.stored_size();
                if n > 0 {
                    for s in e.chunks_exact_mut(n) {
                        base.normalize_one(s);
                    }
                }
            }
            _ => {}
        }
    }

    /// The values of `data` (whole stored elements of this type, variable-length strings
    /// already resolved), one [`Value`] per element.
    pub fn values(&self, data: &[u8]) -> Vec<Value> {
        let n = self.stored_size();
        if n == 0 {
            return Vec::new();
        }
        data.chunks_exact(n).map(|e| self.value(e)).collect()
    }

    /// The value of one stored element (`e` is `stored_size()` bytes).
    pub fn value(&self, e: &[u8]) -> Value {
        match self {
            Element::Number(d) => number(d, e),
            Element::String { .. } | Element::VlenString { .. } => {
                let end = e.iter().rposition(|&b| b != 0).map_or(0, |p| p + 1);
                Value::Bytes(e[..end].to_vec())
            }
            Element::Record { fields, .. } => Value::Record(
                fields
                    .iter()
                    .map(|f| {
                        let end = f.offset + f.element.stored_size();
                        let v = match e.get(f.offset..end) {
                            Some(s) => f.element.value(s),
                            None => Value::List(Vec::new()),
                        };
                        (f.name.clone(), v)
                    })
                    .collect(),
            ),
            Element::SubArray { base, .. } => Value::List(base.values(e)),
        }
    }
}

fn number(d: &DType, e: &[u8]) -> Value {
    let mut b = e.to_vec();
    d.make_little_endian(&mut b);
    let le = |n: usize| -> [u8; 8] {
        let mut a = [0u8; 8];
        a[..n].copy_from_slice(&b[..n]);
        a
    };
    match (d.kind, d.itemsize) {
        (Kind::Bool, _) => Value::Bool(b[0] != 0),
        (Kind::Int, 8) | (Kind::Datetime(_) | Kind::Timedelta(_), _) => {
            Value::Int64(i64::from_le_bytes(le(8)))
        }
        (Kind::UInt, 8) => Value::UInt64(u64::from_le_bytes(le(8))),
        (Kind::Int, n) => {
            let v = u64::from_le_bytes(le(n));
            let shift = 64 - 8 * n as u32;
            Value::Int(((v << shift) as i64) >> shift)
        }
        (Kind::UInt, n) => Value::UInt(u64::from_le_bytes(le(n))),
        (Kind::Float, 2) => Value::Float(half_to_f64(u16::from_le_bytes([b[0], b[1]]))),
        (Kind::Float, 4) => Value::Float(f32::from_le_bytes(le(4)[..4].try_into().unwrap()) as f64),
        (Kind::Float, _) => Value::Float(f64::from_le_bytes(le(8))),
        (Kind::Complex, 8) => Value::Complex(
            f32::from_le_bytes(b[0..4].try_into().unwrap()) as f64,
            f32::from_le_bytes(b[4..8].try_into().unwrap()) as f64,
        ),
        (Kind::Complex, _) => Value::Complex(
            f64::from_le_bytes(b[0..8].try_into().unwrap()),
            f64::from_le_bytes(b[8..16].try_into().unwrap()),
        ),
        (Kind::Unicode, _) => Value::Str(ucs4_to_string(&b)),
        (Kind::Bytes | Kind::Void, _) => Value::Bytes(b),
    }
}

/// The code points of one numpy unicode item given as little-endian UTF-32 code units
/// (`item.len()` a multiple of 4; a trailing partial unit is ignored), trailing NULs removed
/// (numpy's `str_` drops them: `np.array(["a\0"])[0] == "a"`). Not checked: a value may be a
/// surrogate or past U+10FFFF, which numpy stores as given.
pub fn ucs4_code_points(item: &[u8]) -> Vec<u32> {
    let mut cps: Vec<u32> = item
        .chunks_exact(4)
        .map(|u| u32::from_le_bytes([u[0], u[1], u[2], u[3]]))
        .collect();
    while cps.last() == Some(&0) {
        cps.pop();
    }
    cps
}

/// The text of one numpy unicode item (little-endian UTF-32 code units, see
/// [`ucs4_code_points`]): trailing NULs removed, each code point that is no Unicode scalar
/// value (a surrogate, or past U+10FFFF) replaced by U+FFFD, as a UTF-8 decoder's lossy mode
/// does.
pub fn ucs4_to_string(item: &[u8]) -> String {
    ucs4_code_points(item)
        .into_iter()
        .map(|c| char::from_u32(c).unwrap_or(char::REPLACEMENT_CHARACTER))
        .collect()
}

/// An IEEE 754 binary16 value (its bits) as `f64`, exactly.
pub fn half_to_f64(h: u16) -> f64 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = ((h >> 10) & 0x1f) as i32;
    let frac = (h & 0x3ff) as f64;
    match exp {
        0 => sign * frac * 2f64.powi(-24),
        31 if frac == 0.0 => sign * f64::INFINITY,
        31 => f64::NAN,
        _ => sign * (1.0 + frac / 1024.0) * 2f64.powi(exp - 15),
    }
}

/// A Python string literal (single quotes, as numpy's repr writes names).
fn py_str(s: &str) -> String {
    let mut out = String::from("'");
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

fn quoted_or_list(e: &Element) -> String {
    match e {
        Element::Record { .. } => e.descr(),
        other => py_str(&other.descr()),
    }
}

fn shape_tuple(shape: &[u64]) -> String {
    match shape {
        [one] => format!("({one},)"),
        s => format!(
            "({})",
            s.iter()
                .map(|x| x.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn num(s: &str) -> Element {
        Element::Number(DType::parse(s).unwrap())
    }

    fn rec() -> Element {
        Element::Record {
            size: 40,
            fields: vec![
                Field {
                    name: "id".into(),
                    offset: 0,
                    element: num("<i8"),
                },
                Field {
                    name: "v".into(),
                    offset: 8,
                    element: Element::SubArray {
                        base: Box::new(num(">f4")),
                        shape: vec![3],
                    },
                },
                Field {
                    name: "name".into(),
                    offset: 20,
                    element: Element::String {
                        size: 6,
                        padding: Padding::NullTerm,
                        utf8: false,
                    },
                },
                Field {
                    name: "p".into(),
                    offset: 28,
                    element: Element::Record {
                        size: 8,
                        fields: vec![Field {
                            name: "x".into(),
                            offset: 0,
                            element: num("<f8"),
                        }],
                    },
                },
            ],
        }
    }

    #[test]
    fn record_descr_has_gaps_as_numpy_writes_them() {
        assert_eq!(
            rec().descr(),
            "[('id', '<i8'), ('v', '>f4', (3,)), ('name', '|S6'), ('', '|V2'), \
             ('p', [('x', '<f8')]), ('', '|V4')]"
        );
        assert_eq!(rec().stored_size(), 40);
        assert_eq!(rec().storage_dtype().to_string(), "|V40");
    }

    #[test]
    fn unicode_values_drop_trailing_nuls_and_replace_invalid_code_points() {
        let units = |cps: &[u32]| -> Vec<u8> { cps.iter().flat_map(|c| c.to_le_bytes()).collect() };
        // 'é', '中', U+1F600 and an embedded NUL kept, the trailing NULs dropped.
        let e = units(&[0xe9, 0x4e2d, 0x1f600, 0, 0x61, 0, 0]);
        assert_eq!(ucs4_to_string(&e), "é中😀\0a");
        assert_eq!(ucs4_to_string(&units(&[0, 0])), "");
        assert_eq!(
            ucs4_to_string(&units(&[0xd800, 0x110000, 0x41])),
            "\u{fffd}\u{fffd}A"
        );
        assert_eq!(ucs4_code_points(&units(&[0xd800, 0])), vec![0xd800]);
        // Big-endian items are swapped per code unit first (`number` does it).
        let be = DType::parse(">U2").unwrap();
        let mut e: Vec<u8> = [0x4e2du32, 0]
            .iter()
            .flat_map(|c| c.to_be_bytes())
            .collect();
        assert_eq!(number(&be, &e), Value::Str("中".into()));
        be.make_little_endian(&mut e);
        assert_eq!(ucs4_to_string(&e), "中");
        // A record with a `<U3` member.
        let r = Element::Record {
            size: 16,
            fields: vec![
                Field {
                    name: "n".into(),
                    offset: 0,
                    element: num("<i4"),
                },
                Field {
                    name: "s".into(),
                    offset: 4,
                    element: num("<U3"),
                },
            ],
        };
        assert_eq!(r.descr(), "[('n', '<i4'), ('s', '<U3')]");
        let mut e = 7i32.to_le_bytes().to_vec();
        e.extend(units(&[0x62, 0xe9, 0]));
        assert_eq!(
            r.value(&e),
            Value::Record(vec![
                ("n".into(), Value::Int(7)),
                ("s".into(), Value::Str("bé".into()))
            ])
        );
    }

    #[test]
    fn string_padding_rules() {
        let s = |p| Element::String {
            size: 6,
            padding: p,
            utf8: false,
        };
        let mut d = *b"ab\0cd\0";
        s(Padding::NullTerm).normalize(&mut d);
        assert_eq!(&d, b"ab\0\0\0\0");
        let mut d = *b"ab\0cd\0";
        s(Padding::NullPad).normalize(&mut d);
        assert_eq!(&d, b"ab\0cd\0");
        let mut d = *b"a b   ";
        s(Padding::SpacePad).normalize(&mut d);
        assert_eq!(&d, b"a b\0\0\0");
    }

    #[test]
    fn values_of_a_record() {
        let mut e = vec![0u8; 40];
        e[0..8].copy_from_slice(&(-5i64).to_le_bytes());
        for i in 0..3 {
            e[8 + 4 * i..12 + 4 * i].copy_from_slice(&(i as f32 + 0.5).to_be_bytes());
        }
        e[20..26].copy_from_slice(b"hi\0xx\0");
        e[28..36].copy_from_slice(&2.25f64.to_le_bytes());
        let r = rec();
        r.normalize(&mut e);
        assert_eq!(
            r.value(&e),
            Value::Record(vec![
                ("id".into(), Value::Int64(-5)),
                (
                    "v".into(),
                    Value::List(vec![
                        Value::Float(0.5),
                        Value::Float(1.5),
                        Value::Float(2.5)
                    ])
                ),
                ("name".into(), Value::Bytes(b"hi".to_vec())),
                (
                    "p".into(),
                    Value::Record(vec![("x".into(), Value::Float(2.25))])
                ),
            ])
        );
        assert_eq!(half_to_f64(0x3c00), 1.0);
        assert_eq!(half_to_f64(0xc000), -2.0);
        assert_eq!(
            number(&DType::parse("|i1").unwrap(), &[0xff]),
            Value::Int(-1)
        );
    }
}
