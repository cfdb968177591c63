//! numpy-style data types (`"<f8"`, `">i4"`, `"|b1"`, `"<M8[ns]"`): kind, item size in bytes
//! and byte order.
//!
//! Source of the notation: numpy's array-interface `typestr` (byte order character, kind
//! character, item size in bytes), which the `b2nd` metalayer and Zarr v2's `dtype` store
//! verbatim; for `datetime64`/`timedelta64` (`M`, `m`, always 8 bytes) numpy's `dtype.str`
//! appends the unit in brackets (`<M8[ns]`, `<m8[ms]`; `<M8` for the generic unit), numpy's
//! "Datetime units" list. numpy's fixed-width unicode strings (`U`) give the item size in
//! characters, not bytes: `<U6` is 6 UTF-32 code units of 4 bytes each (numpy's `dtype.str`;
//! `dtype('<U6').itemsize == 24`).

use std::fmt;

/// Kind of the elements (numpy kind characters `b`, `i`, `u`, `f`, `c`, `M`, `m`, `S`, `U`,
/// `V`).
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
    /// numpy `datetime64` (`M`): a signed 64-bit count of `unit`s since 1970-01-01T00:00,
    /// `i64::MIN` being NaT (not a time).
    Datetime(TimeUnit),
    /// numpy `timedelta64` (`m`): a signed 64-bit count of `unit`s, `i64::MIN` being NaT.
    Timedelta(TimeUnit),
    /// Fixed-length byte strings (`S`), any item size: numpy's `bytes_`.
    Bytes,
    /// Fixed-length unicode strings (`U`): numpy's `str_`, each character a UTF-32 code unit
    /// of 4 bytes in the dtype's byte order, NUL-padded; the item size is 4 bytes per
    /// character (`<U6`: 24 bytes).
    Unicode,
    /// Raw fixed-size records (`V`), any item size: the flat form of a structured dtype,
    /// described further by [`crate::element::Element`].
    Void,
}

/// The unit of a numpy `datetime64`/`timedelta64` (numpy's "Datetime units"; multiples such
/// as `10s` are not taken).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum TimeUnit {
    /// No unit (`<M8`): numpy's generic unit, which only NaT and unitless values have.
    Generic,
    /// Years (`Y`).
    Year,
    /// Months (`M`).
    Month,
    /// Weeks (`W`).
    Week,
    /// Days (`D`).
    Day,
    /// Hours (`h`).
    Hour,
    /// Minutes (`m`).
    Minute,
    /// Seconds (`s`).
    Second,
    /// Milliseconds (`ms`).
    Millisecond,
    /// Microseconds (`us`).
    Microsecond,
    /// Nanoseconds (`ns`).
    Nanosecond,
    /// Picoseconds (`ps`).
    Picosecond,
    /// Femtoseconds (`fs`).
    Femtosecond,
    /// Attoseconds (`as`).
    Attosecond,
}

impl TimeUnit {
    const ALL: [(TimeUnit, &'static str); 14] = [
        (TimeUnit::Generic, ""),
        (TimeUnit::Year, "Y"),
        (TimeUnit::Month, "M"),
        (TimeUnit::Week, "W"),
        (TimeUnit::Day, "D"),
        (TimeUnit::Hour, "h"),
        (TimeUnit::Minute, "m"),
        (TimeUnit::Second, "s"),
        (TimeUnit::Millisecond, "ms"),
        (TimeUnit::Microsecond, "us"),
        (TimeUnit::Nanosecond, "ns"),
        (TimeUnit::Picosecond, "ps"),
        (TimeUnit::Femtosecond, "fs"),
        (TimeUnit::Attosecond, "as"),
    ];

    /// numpy's code of the unit (`"ns"`, `"D"`; `""` for the generic unit).
    pub fn as_str(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(u, _)| *u == self)
            .map_or("", |(_, s)| s)
    }

    /// The unit of numpy's code (`"ns"`, `"us"` or `"μs"`, `"D"`, `""` generic); `None` for
    /// anything else, multiples (`"10s"`) included.
    pub fn parse(code: &str) -> Option<TimeUnit> {
        let code = if code == "μs" { "us" } else { code };
        Self::ALL.iter().find(|(_, s)| *s == code).map(|(u, _)| *u)
    }
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

/// A fixed-size data type: a number, a bool, a fixed-length byte string (`|S{n}`), a
/// fixed-length unicode string (`<U{n}`) or a raw record (`|V{n}`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct DType {
    /// Element kind.
    pub kind: Kind,
    /// Bytes per element (1, 2, 4, 8 or 16 for numbers, 8 for datetimes and timedeltas; any
    /// positive size for `S` and `V`; 4 per character for `U`).
    pub itemsize: usize,
    /// Byte order of stored elements.
    pub order: ByteOrder,
}

/// A dtype string that is not a supported numeric type.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unsupported dtype {0:?} (supported: numeric, bool, datetime64/timedelta64, byte-string and unicode numpy typestr such as \"<f8\", \">i4\", \"|b1\", \"<M8[ns]\", \"|S8\", \"<U8\")")]
pub struct DTypeError(pub String);

impl DType {
    /// Parses a numpy typestr such as `"<f8"`, `">i4"`, `"|u1"`, `"|b1"`, `"<c16"`, or a
    /// `datetime64`/`timedelta64` `dtype.str` such as `"<M8[ns]"`, `">m8[s]"`, `"<M8"`, or a
    /// unicode `"<U6"` / `">U6"` (the number counts characters: 4 bytes each); a missing or
    /// `=` byte order means native (little-endian on every target chunkwise runs on), and so
    /// does `|` for unicode (numpy's `dtype("|U6").str` is `"<U6"`).
    ///
    /// # Errors
    /// [`DTypeError`] for odd-sized types (`"<i3"`, `"<U0"`, sizes past `usize`), and datetime
    /// units numpy does not name or multiples of one (`"<M8[10s]"`) (structured types have no
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
        let code = rc.next().ok_or_else(err)?;
        if code == 'M' || code == 'm' {
            // `M8[unit]`: always 8 bytes.
            let after = rc.as_str().strip_prefix('8').ok_or_else(err)?;
            let unit = match after {
                "" => TimeUnit::Generic,
                _ => after
                    .strip_prefix('[')
                    .and_then(|u| u.strip_suffix(']'))
                    .filter(|u| !u.is_empty())
                    .and_then(TimeUnit::parse)
                    .ok_or_else(err)?,
            };
            if order == ByteOrder::NotApplicable {
                return Err(err());
            }
            return Ok(DType {
                kind: if code == 'M' {
                    Kind::Datetime(unit)
                } else {
                    Kind::Timedelta(unit)
                },
                itemsize: 8,
                order,
            });
        }
        let kind = match code {
            'b' | '?' => Kind::Bool,
            'i' => Kind::Int,
            'u' => Kind::UInt,
            'f' => Kind::Float,
            'c' => Kind::Complex,
            'S' => Kind::Bytes,
            'U' => Kind::Unicode,
            'V' => Kind::Void,
            _ => return Err(err()),
        };
        let count: usize = rc.as_str().parse().map_err(|_| err())?;
        if kind == Kind::Unicode {
            // numpy counts characters of 4 bytes (UCS-4); `|` is taken as native.
            let itemsize = count.checked_mul(4).filter(|&n| n > 0).ok_or_else(err)?;
            let order = if order == ByteOrder::Big {
                ByteOrder::Big
            } else {
                ByteOrder::Little
            };
            return Ok(DType {
                kind,
                itemsize,
                order,
            });
        }
        let itemsize = count;
        let ok = match kind {
            Kind::Bool => itemsize == 1,
            Kind::Int | Kind::UInt => matches!(itemsize, 1 | 2 | 4 | 8),
            Kind::Float => matches!(itemsize, 2 | 4 | 8),
            Kind::Complex => matches!(itemsize, 8 | 16),
            Kind::Datetime(_) | Kind::Timedelta(_) | Kind::Unicode => unreachable!("parsed above"),
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

    /// Whether the elements are numbers (or bools), not strings or records.
    pub fn is_numeric(&self) -> bool {
        !matches!(self.kind, Kind::Bytes | Kind::Unicode | Kind::Void)
    }

    /// Characters per element of a unicode dtype (`<U6`: 6), `None` for other kinds.
    pub fn unicode_chars(&self) -> Option<usize> {
        (self.kind == Kind::Unicode).then_some(self.itemsize / 4)
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

    /// Size of the unit that is byte-swapped: the item size, half of it for complex, 4 (one
    /// UTF-32 code unit) for unicode.
    pub fn swap_unit(&self) -> usize {
        match self.kind {
            Kind::Complex => self.itemsize / 2,
            Kind::Unicode => 4,
            _ => self.itemsize,
        }
    }

    /// Converts `data` (elements of this dtype) in place to little-endian order (through
    /// `chunkwise_codec::swap`, built at opt-level 3).
    pub fn make_little_endian(&self, data: &mut [u8]) {
        if !self.is_big_endian() {
            return;
        }
        chunkwise_codec::swap::swap_units(self.swap_unit(), data);
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
            Kind::Datetime(u) | Kind::Timedelta(u) => {
                let k = if matches!(self.kind, Kind::Datetime(_)) {
                    'M'
                } else {
                    'm'
                };
                return match u {
                    TimeUnit::Generic => write!(f, "{o}{k}8"),
                    u => write!(f, "{o}{k}8[{}]", u.as_str()),
                };
            }
            Kind::Bytes => 'S',
            Kind::Unicode => return write!(f, "{o}U{}", self.itemsize / 4),
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
        for bad in ["", "<", "<x4", "<i3", "|V0", ">S2", "<f16x", "<b2"] {
            assert!(DType::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn unicode_counts_characters_of_four_bytes() {
        for s in ["<U6", ">U3", "<U1"] {
            assert_eq!(DType::parse(s).unwrap().to_string(), s);
        }
        let u = DType::parse("<U6").unwrap();
        assert_eq!(
            (u.kind, u.itemsize, u.order),
            (Kind::Unicode, 24, ByteOrder::Little)
        );
        assert_eq!(u.unicode_chars(), Some(6));
        assert!(!u.is_numeric());
        assert_eq!(DType::parse("U2").unwrap().to_string(), "<U2");
        assert_eq!(DType::parse("|U2").unwrap().to_string(), "<U2");
        assert_eq!(DType::parse("=U2").unwrap().to_string(), "<U2");
        let huge = format!("<U{}", usize::MAX / 2);
        for bad in ["<U0", "<U", "<Ux", "<U-1", huge.as_str()] {
            assert!(DType::parse(bad).is_err(), "{bad}");
        }
        // A big-endian unicode string swaps per 4-byte code unit, not as one item.
        let be = DType::parse(">U2").unwrap();
        let mut v = [0x00, 0x00, 0x00, 0xe9, 0x00, 0x01, 0xf6, 0x00].to_vec();
        be.make_little_endian(&mut v);
        assert_eq!(v, [0xe9, 0, 0, 0, 0x00, 0xf6, 0x01, 0x00]);
        assert_eq!(be.to_little_endian().to_string(), "<U2");
    }

    #[test]
    fn datetimes_keep_their_unit() {
        for s in [
            "<M8[ns]", ">M8[s]", "<m8[ms]", "<M8[D]", "<M8", "<m8[us]", "<M8[as]",
        ] {
            let d = DType::parse(s).unwrap();
            assert_eq!(d.to_string(), s);
            assert_eq!(d.itemsize, 8);
            assert!(d.is_numeric());
        }
        assert_eq!(
            DType::parse("<M8[ns]").unwrap().kind,
            Kind::Datetime(TimeUnit::Nanosecond)
        );
        assert_eq!(
            DType::parse(">m8[h]").unwrap(),
            DType {
                kind: Kind::Timedelta(TimeUnit::Hour),
                itemsize: 8,
                order: ByteOrder::Big
            }
        );
        assert_eq!(DType::parse("M8[μs]").unwrap().to_string(), "<M8[us]");
        for bad in [
            "<M4[ns]", "<M8[10s]", "<M8[]", "<M8[xs]", "|M8[ns]", "<M8[ns", "<m16",
        ] {
            assert!(DType::parse(bad).is_err(), "{bad}");
        }
        // A big-endian datetime swaps as one 8-byte unit.
        let d = DType::parse(">M8[ns]").unwrap();
        let mut v = 1_700_000_000_000_000_000i64.to_be_bytes().to_vec();
        d.make_little_endian(&mut v);
        assert_eq!(
            i64::from_le_bytes(v.try_into().unwrap()),
            1_700_000_000_000_000_000
        );
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

/// The numeric kinds of python-blosc2's CTable schema (`schema.py`: `int8` ... `complex128`),
/// each one fixed-size numpy dtype: what a CTable column of these kinds holds, and the
/// schema classes Caterva2 names (`<class 'blosc2.schema.float64'>`).
pub const BLOSC2_SCHEMA_NUMERIC: [&str; 12] = [
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float32",
    "float64",
    "complex64",
    "complex128",
];
