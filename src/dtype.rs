//! numpy-style data types (`"<f8"`, `">i4"`, `"|b1"`): kind, item size in bytes and byte order.
//!
//! Source of the notation: numpy's array-interface `typestr` (byte order character, kind
//! character, item size in bytes), which the `b2nd` metalayer stores verbatim.

use std::fmt;

/// Kind of the elements (numpy kind characters `b`, `i`, `u`, `f`, `c`, `S`, `V`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Kind {
    /// Booleans, one byte each (`b`).
    Bool,
    /// Signed integers (`i`).
    Int,
    /// Unsigned integers (`u`).
    UInt,
    /// IEEE floats (`f`).
    Float,
    /// Complex numbers, two floats (`c`).
    Complex,
    /// Fixed-length byte strings (`S`), any item size: numpy's `bytes_`.
    Bytes,
    /// Raw fixed-size records (`V`), any item size: the flat form of a structured dtype,
    /// described further by [`crate::element::Element`].
    Void,
}

/// Byte order of multi-byte elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum ByteOrder {
    /// `<`
    Little,
    /// `>`
    Big,
    /// `|`: not applicable (one-byte types).
    NotApplicable,
}

/// A fixed-size data type: a number, a bool, a fixed-length byte string (`|S{n}`) or a raw
/// record (`|V{n}`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct DType {
    /// Element kind.
    pub kind: Kind,
    /// Bytes per element (1, 2, 4, 8 or 16 for numbers; any positive size for `S` and `V`).
    pub itemsize: usize,
    /// Byte order of stored elements.
    pub order: ByteOrder,
}

/// A dtype string that is not a supported numeric type.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unsupported dtype {0:?} (supported: numeric, bool and byte-string numpy typestr such as \"<f8\", \">i4\", \"|b1\", \"|S8\")")]
pub struct DTypeError(pub String);

impl DType {
    /// Parses a numpy typestr such as `"<f8"`, `">i4"`, `"|u1"`, `"|b1"`, `"<c16"`; a missing
    /// or `=` byte order means native (little-endian on every target chunkwise runs on).
    ///
    /// # Errors
    /// [`DTypeError`] for unicode, datetime or odd-sized types (structured types have no
    /// typestr: see [`crate::element::Element`]).
    pub fn parse(s: &str) -> Result<DType, DTypeError> {
        let err = || DTypeError(s.to_string());
        let mut chars = s.chars();
        let first = chars.clone().next().ok_or_else(err)?;
        let (order, rest) = match first {
            '<' | '=' => (ByteOrder::Little, &s[1..]),
            '>' => (ByteOrder::Big, &s[1..]),
            '|' => (ByteOrder::NotApplicable, &s[1..]),
            _ => (ByteOrder::Little, s),
        };
        let _ = chars.next();
        let mut rc = rest.chars();
        let kind = match rc.next().ok_or_else(err)? {
            'b' | '?' => Kind::Bool,
            'i' => Kind::Int,
            'u' => Kind::UInt,
            'f' => Kind::Float,
            'c' => Kind::Complex,
            'S' => Kind::Bytes,
            'V' => Kind::Void,
            _ => return Err(err()),
        };
        let itemsize: usize = rc.as_str().parse().map_err(|_| err())?;
        let ok = match kind {
            Kind::Bool => itemsize == 1,
            Kind::Int | Kind::UInt => matches!(itemsize, 1 | 2 | 4 | 8),
            Kind::Float => matches!(itemsize, 2 | 4 | 8),
            Kind::Complex => matches!(itemsize, 8 | 16),
            Kind::Bytes | Kind::Void => itemsize >= 1 && order != ByteOrder::Big,
        };
        if !ok {
            return Err(err());
        }
        let order = if itemsize == 1 || matches!(kind, Kind::Bytes | Kind::Void) {
            ByteOrder::NotApplicable
        } else {
            order
        };
        Ok(DType {
            kind,
            itemsize,
            order,
        })
    }

    /// Whether the elements are numbers (or bools), not bytes or records.
    pub fn is_numeric(&self) -> bool {
        !matches!(self.kind, Kind::Bytes | Kind::Void)
    }

    /// Whether the stored byte order differs from the host's (little-endian).
    pub fn is_big_endian(&self) -> bool {
        self.order == ByteOrder::Big
    }

    /// The same type in little-endian order (what JS typed arrays and the host use).
    pub fn to_little_endian(&self) -> DType {
        DType {
            order: if self.itemsize == 1 || self.order == ByteOrder::NotApplicable {
                ByteOrder::NotApplicable
            } else {
                ByteOrder::Little
            },
            ..*self
        }
    }

    /// Size of the unit that is byte-swapped: the item size, or half of it for complex.
    pub fn swap_unit(&self) -> usize {
        if self.kind == Kind::Complex {
            self.itemsize / 2
        } else {
            self.itemsize
        }
    }

    /// Converts `data` (elements of this dtype) in place to little-endian order.
    pub fn make_little_endian(&self, data: &mut [u8]) {
        if !self.is_big_endian() {
            return;
        }
        let unit = self.swap_unit();
        if unit > 1 {
            for elem in data.chunks_exact_mut(unit) {
                elem.reverse();
            }
        }
    }
}

impl fmt::Display for DType {
    /// The numpy typestr, e.g. `<f8`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let o = match self.order {
            ByteOrder::Little => '<',
            ByteOrder::Big => '>',
            ByteOrder::NotApplicable => '|',
        };
        let k = match self.kind {
            Kind::Bool => 'b',
            Kind::Int => 'i',
            Kind::UInt => 'u',
            Kind::Float => 'f',
            Kind::Complex => 'c',
            Kind::Bytes => 'S',
            Kind::Void => 'V',
        };
        write!(f, "{o}{k}{}", self.itemsize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_display() {
        for s in ["<f8", ">i4", "|u1", "|b1", "<c16", "<f2", ">u8"] {
            assert_eq!(DType::parse(s).unwrap().to_string(), s);
        }
        assert_eq!(DType::parse("<i1").unwrap().to_string(), "|i1");
        assert_eq!(DType::parse("f4").unwrap().to_string(), "<f4");
        for s in ["|S5", "|V16", "|S1"] {
            assert_eq!(DType::parse(s).unwrap().to_string(), s);
        }
        assert_eq!(DType::parse("<S7").unwrap().to_string(), "|S7");
        for bad in ["", "<", "<x4", "<i3", "<U8", "|V0", ">S2", "<f16x", "<b2"] {
            assert!(DType::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn big_endian_swap() {
        let dt = DType::parse(">i4").unwrap();
        let mut v = 0x01020304i32.to_be_bytes().to_vec();
        dt.make_little_endian(&mut v);
        assert_eq!(i32::from_le_bytes(v.try_into().unwrap()), 0x01020304);
        let c = DType::parse(">c8").unwrap();
        let mut v = [1.5f32.to_be_bytes(), (-2.0f32).to_be_bytes()].concat();
        c.make_little_endian(&mut v);
        assert_eq!(f32::from_le_bytes(v[0..4].try_into().unwrap()), 1.5);
        assert_eq!(f32::from_le_bytes(v[4..8].try_into().unwrap()), -2.0);
    }
}
