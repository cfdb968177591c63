//! Variable-length metalayers (vlmeta) as attributes: python-blosc2's `arr.vlmeta[name] =
//! value` stores each value as msgpack (`blosc2.msgpack_utils.msgpack_packb`: `use_bin_type`,
//! big-endian integers) in a Blosc2 chunk of the frame trailer, which
//! [`super::frame::parse_index`] decodes; this module reads the msgpack into
//! [`AttrValue`]s.
//!
//! Mapping (python-blosc2 4.14 `msgpack_utils`): nil, booleans, integers, floats, strings,
//! arrays and maps as themselves (an array whose first item is `"__tuple__"` is a tuple: the
//! rest); bin as a `|u1` array of its bytes; extension types 44 (a complex number, `>dd`) as
//! a `<c16` scalar, 45 (a set: msgpack of its items) as a list, 46 (a numpy array: a map of
//! `dtype` `{"str": typestr}`, `shape` and `data` bytes) as a numeric array, every other
//! extension (42: a Blosc2 object as a CFrame, 43: a reference) as
//! [`AttrValue::Omitted`], as is a value that is not msgpack. Bounded: values past
//! [`MAX_ATTR_BYTES`] in all, or nested deeper than [`MAX_DEPTH`], are omitted.

use crate::attrs::{AttrValue, Attrs, MAX_ATTR_BYTES};
use crate::dtype::DType;
use rmp::Marker;

/// Deepest nesting of lists and maps read.
pub const MAX_DEPTH: usize = 64;

/// The vlmetalayers `(name, msgpack bytes)` of a frame as attributes, in trailer order.
pub fn attrs(vlmetalayers: &[(String, Vec<u8>)]) -> Attrs {
    let mut used = 0usize;
    Attrs(
        vlmetalayers
            .iter()
            .map(|(name, content)| {
                used = used.saturating_add(content.len());
                let v = if used > MAX_ATTR_BYTES {
                    AttrValue::Omitted(format!(
                        "{} bytes of msgpack, past the {MAX_ATTR_BYTES}-byte attribute budget",
                        content.len()
                    ))
                } else {
                    value_of(content)
                };
                (name.clone(), v)
            })
            .collect(),
    )
}

/// One msgpack value (the whole of `bytes`), or why it is not shown.
pub fn value_of(bytes: &[u8]) -> AttrValue {
    let mut rd = bytes;
    match read(&mut rd, 0) {
        Ok(v) if rd.is_empty() => v,
        Ok(_) => AttrValue::Omitted("not one msgpack value (bytes after it)".into()),
        Err(why) => AttrValue::Omitted(format!(
            "not msgpack ({why} at byte {})",
            bytes.len() - rd.len()
        )),
    }
}

fn take<'a>(rd: &mut &'a [u8], n: usize) -> Result<&'a [u8], &'static str> {
    if rd.len() < n {
        return Err("truncated");
    }
    let (a, b) = rd.split_at(n);
    *rd = b;
    Ok(a)
}

fn be(rd: &mut &[u8], n: usize) -> Result<u64, &'static str> {
    Ok(take(rd, n)?.iter().fold(0u64, |a, &b| (a << 8) | b as u64))
}

fn read(rd: &mut &[u8], depth: usize) -> Result<AttrValue, &'static str> {
    if depth > MAX_DEPTH {
        return Err("nested too deep");
    }
    let marker = rmp::decode::read_marker(rd).map_err(|_| "truncated")?;
    Ok(match marker {
        Marker::Null => AttrValue::Null,
        Marker::True => AttrValue::Bool(true),
        Marker::False => AttrValue::Bool(false),
        Marker::FixPos(n) => AttrValue::Int(n as i64),
        Marker::FixNeg(n) => AttrValue::Int(n as i64),
        Marker::U8 => AttrValue::Int(be(rd, 1)? as i64),
        Marker::U16 => AttrValue::Int(be(rd, 2)? as i64),
        Marker::U32 => AttrValue::Int(be(rd, 4)? as i64),
        Marker::U64 => {
            let u = be(rd, 8)?;
            i64::try_from(u).map_or(AttrValue::UInt(u), AttrValue::Int)
        }
        Marker::I8 => AttrValue::Int(be(rd, 1)? as u8 as i8 as i64),
        Marker::I16 => AttrValue::Int(be(rd, 2)? as u16 as i16 as i64),
        Marker::I32 => AttrValue::Int(be(rd, 4)? as u32 as i32 as i64),
        Marker::I64 => AttrValue::Int(be(rd, 8)? as i64),
        Marker::F32 => AttrValue::Float(f32::from_bits(be(rd, 4)? as u32) as f64),
        Marker::F64 => AttrValue::Float(f64::from_bits(be(rd, 8)?)),
        Marker::FixStr(n) => string(rd, n as usize)?,
        // Strings and bin: a big-endian length of 1, 2 or 4 bytes, then the bytes.
        Marker::Str8 | Marker::Str16 | Marker::Str32 => {
            let n = be(rd, length_width(marker))? as usize;
            string(rd, n)?
        }
        Marker::Bin8 | Marker::Bin16 | Marker::Bin32 => {
            let n = be(rd, length_width(marker))? as usize;
            bytes(rd, n)?
        }
        Marker::FixArray(n) => list(rd, n as usize, depth)?,
        Marker::Array16 => {
            let n = be(rd, 2)? as usize;
            list(rd, n, depth)?
        }
        Marker::Array32 => {
            let n = be(rd, 4)? as usize;
            list(rd, n, depth)?
        }
        Marker::FixMap(n) => map(rd, n as usize, depth)?,
        Marker::Map16 => {
            let n = be(rd, 2)? as usize;
            map(rd, n, depth)?
        }
        Marker::Map32 => {
            let n = be(rd, 4)? as usize;
            map(rd, n, depth)?
        }
        Marker::FixExt1 => ext(rd, 1, depth)?,
        Marker::FixExt2 => ext(rd, 2, depth)?,
        Marker::FixExt4 => ext(rd, 4, depth)?,
        Marker::FixExt8 => ext(rd, 8, depth)?,
        Marker::FixExt16 => ext(rd, 16, depth)?,
        Marker::Ext8 => {
            let n = be(rd, 1)? as usize;
            ext(rd, n, depth)?
        }
        Marker::Ext16 => {
            let n = be(rd, 2)? as usize;
            ext(rd, n, depth)?
        }
        Marker::Ext32 => {
            let n = be(rd, 4)? as usize;
            ext(rd, n, depth)?
        }
        Marker::Reserved => return Err("reserved marker 0xc1"),
    })
}

fn string(rd: &mut &[u8], n: usize) -> Result<AttrValue, &'static str> {
    Ok(AttrValue::String(
        String::from_utf8_lossy(take(rd, n)?).into_owned(),
    ))
}

fn bytes(rd: &mut &[u8], n: usize) -> Result<AttrValue, &'static str> {
    let data = take(rd, n)?.to_vec();
    Ok(AttrValue::Array {
        dtype: DType::parse("|u1").map_err(|_| "dtype")?,
        shape: vec![n as u64],
        data,
    })
}

/// Bytes of the length that follows a str/bin marker of the 8-, 16- or 32-bit form
/// (msgpack specification, "str format family" and "bin format family").
fn length_width(marker: Marker) -> usize {
    match marker {
        Marker::Str8 | Marker::Bin8 => 1,
        Marker::Str16 | Marker::Bin16 => 2,
        _ => 4,
    }
}
fn list(rd: &mut &[u8], n: usize, depth: usize) -> Result<AttrValue, &'static str> {
    // Every item takes at least one byte: a count past the bytes left is malformed, and
    // nothing is allocated from it.
    if n > rd.len() {
        return Err("truncated");
    }
    let mut items = Vec::with_capacity(n);
    for _ in 0..n {
        items.push(read(rd, depth + 1)?);
    }
    if matches!(items.first(), Some(AttrValue::String(s)) if s == "__tuple__") {
        items.remove(0);
    }
    Ok(AttrValue::List(items))
}

fn map(rd: &mut &[u8], n: usize, depth: usize) -> Result<AttrValue, &'static str> {
    if n.saturating_mul(2) > rd.len() {
        return Err("truncated");
    }
    let mut fields = Vec::with_capacity(n);
    for _ in 0..n {
        let key = match read(rd, depth + 1)? {
            AttrValue::String(s) => s,
            other => other.to_json().to_string(),
        };
        fields.push((key, read(rd, depth + 1)?));
    }
    Ok(AttrValue::Map(fields))
}

fn ext(rd: &mut &[u8], n: usize, depth: usize) -> Result<AttrValue, &'static str> {
    let code = take(rd, 1)?[0] as i8;
    let data = take(rd, n)?;
    Ok(match code {
        44 if data.len() == 16 => {
            // A complex number: real and imaginary parts as big-endian f64.
            let mut le = Vec::with_capacity(16);
            for part in data.chunks_exact(8) {
                le.extend(part.iter().rev());
            }
            AttrValue::Array {
                dtype: DType::parse("<c16").map_err(|_| "dtype")?,
                shape: vec![],
                data: le,
            }
        }
        45 => {
            let mut inner = data;
            match read(&mut inner, depth + 1)? {
                v @ AttrValue::List(_) if inner.is_empty() => v,
                _ => AttrValue::Omitted("a set that is not a msgpack list".into()),
            }
        }
        46 => ndarray(data, depth),
        42 => AttrValue::Omitted("a Blosc2 object stored as a CFrame (not shown)".into()),
        43 => AttrValue::Omitted("a Blosc2 reference (not shown)".into()),
        c => AttrValue::Omitted(format!("msgpack extension type {c} (not shown)")),
    })
}

/// python-blosc2's numpy array extension (`_encode_ndarray`): a map of `dtype` (`{"str":
/// typestr}`; `{"descr": ...}` for structured types, not shown), `shape` and `data` (the
/// array's bytes in C order, in the dtype's byte order); object arrays (`values`) are not
/// shown.
fn ndarray(data: &[u8], depth: usize) -> AttrValue {
    let omitted = |why: &str| AttrValue::Omitted(format!("numpy array: {why} (not shown)"));
    let mut inner = data;
    let Ok(AttrValue::Map(fields)) = read(&mut inner, depth + 1) else {
        return omitted("malformed");
    };
    let get = |k: &str| fields.iter().find(|(n, _)| n == k).map(|(_, v)| v);
    let typestr = match get("dtype") {
        Some(AttrValue::Map(d)) => d.iter().find(|(n, _)| n == "str").map(|(_, v)| v),
        _ => None,
    };
    let (Some(AttrValue::String(typestr)), Some(AttrValue::List(shape))) = (typestr, get("shape"))
    else {
        return omitted("an object or structured array");
    };
    let Some(AttrValue::Array { data: raw, .. }) = get("data") else {
        return omitted("no data");
    };
    let Ok(dtype) = DType::parse(typestr).map(|d| (d, d.is_numeric())) else {
        return omitted(&format!("dtype {typestr}"));
    };
    let (dtype, numeric) = dtype;
    if !numeric {
        return omitted(&format!("dtype {typestr}"));
    }
    let shape: Option<Vec<u64>> = shape
        .iter()
        .map(|n| match n {
            AttrValue::Int(i) => u64::try_from(*i).ok(),
            _ => None,
        })
        .collect();
    let Some(shape) = shape else {
        return omitted("bad shape");
    };
    let n = shape
        .iter()
        .try_fold(dtype.itemsize as u64, |a, &d| a.checked_mul(d));
    if n != Some(raw.len() as u64) {
        return omitted("data size disagrees with its shape");
    }
    let mut raw = raw.clone();
    dtype.make_little_endian(&mut raw);
    AttrValue::Array {
        dtype: dtype.to_little_endian(),
        shape,
        data: raw,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_and_bins_of_every_length_width() {
        for n in [40usize, 300, 70_000] {
            let text = "é".repeat(n / 2);
            let mut m = Vec::new();
            rmp::encode::write_str(&mut m, &text).unwrap();
            assert_eq!(value_of(&m), AttrValue::String(text.clone()), "str of {n}");
            let mut b = Vec::new();
            rmp::encode::write_bin(&mut b, text.as_bytes()).unwrap();
            match value_of(&b) {
                AttrValue::Array { data, .. } => assert_eq!(data, text.as_bytes(), "bin of {n}"),
                other => panic!("bin of {n}: {other:?}"),
            }
        }
    }

    #[test]
    fn msgpack_values_and_python_blosc2_extensions() {
        // {"a": [1, -2, 2.5], "t": ["__tuple__", 1, "x"], "b": bin [0, 255], "n": nil}
        let mut m = vec![0x84];
        m.extend([0xa1, b'a', 0x93, 0x01, 0xfe, 0xcb]);
        m.extend(2.5f64.to_be_bytes());
        m.extend([0xa1, b't', 0x93, 0xa9]);
        m.extend(b"__tuple__");
        m.extend([0x01, 0xa1, b'x']);
        m.extend([0xa1, b'b', 0xc4, 0x02, 0x00, 0xff]);
        m.extend([0xa1, b'n', 0xc0]);
        let v = value_of(&m);
        assert_eq!(
            v.to_json(),
            serde_json::json!({"a": [1, -2, 2.5], "t": [1, "x"], "b": [0, 255], "n": null})
        );
        // A complex number (ext 44, >dd) and a u64 past i64.
        let mut c = vec![0xd8, 44];
        c.extend(1.5f64.to_be_bytes());
        c.extend((-2.0f64).to_be_bytes());
        assert_eq!(value_of(&c).to_json(), serde_json::json!([1.5, -2.0]));
        let mut u = vec![0xcf];
        u.extend(u64::MAX.to_be_bytes());
        assert_eq!(value_of(&u), AttrValue::UInt(u64::MAX));
        // Unknown extensions, truncated and oversized counts: omitted, never a panic.
        assert!(matches!(value_of(&[0xd4, 42, 0]), AttrValue::Omitted(_)));
        assert!(
            matches!(value_of(&[0xdd, 0xff, 0xff, 0xff, 0xff]), AttrValue::Omitted(w) if w.contains("truncated"))
        );
        assert!(matches!(value_of(&[0x91]), AttrValue::Omitted(_)));
        assert!(matches!(value_of(&[0xc0, 0xc0]), AttrValue::Omitted(_)));
        let deep: Vec<u8> = std::iter::repeat_n(0x91, 200).chain([0xc0]).collect();
        assert!(matches!(value_of(&deep), AttrValue::Omitted(w) if w.contains("deep")));
    }
}
