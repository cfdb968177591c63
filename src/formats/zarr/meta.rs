//! Zarr array metadata: a v2 `.zarray` or a v3 `zarr.json` document turned into one
//! [`ZarrMeta`] (shape, chunk shape, dtype, fill value, chunk key rule, codec [`Chain`]).
//!
//! Sources of the rules: the Zarr v2 storage specification ("Metadata", "Chunks": `order`,
//! `filters`, `compressor`, `dimension_separator`, `fill_value` encodings) and the Zarr v3
//! core specification ("Array metadata", "Chunk key encoding", "Fill value", codecs `bytes`,
//! `transpose`, `blosc`, `gzip`, `zstd`, `crc32c`, `sharding_indexed`).

use super::ZarrError;
use crate::dtype::{ByteOrder, DType, Kind};
use serde_json::Value;

/// A bytes-to-bytes codec (v3) or v2 compressor, in the order it was applied when writing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BytesCodec {
    /// A Blosc1 (or Blosc2) chunk (numcodecs `Blosc`, v3 `blosc`).
    Blosc,
    /// One Zstandard frame.
    Zstd,
    /// A gzip member (RFC 1952).
    Gzip,
    /// A zlib stream (RFC 1950).
    Zlib,
    /// numcodecs `LZ4`: decoded size as u32 little-endian, then one LZ4 block.
    Lz4,
    /// A CRC-32C of the preceding bytes appended as u32 little-endian (v3 `crc32c`).
    Crc32c,
}

/// An array-to-array codec, in the order it was applied when writing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArrayCodec {
    /// Axis permutation: encoded axis `i` is decoded axis `order[i]` (v3 `transpose`; a v2
    /// `order: "F"` chunk is the reversed permutation).
    Transpose(Vec<usize>),
    /// numcodecs `Delta` with `astype == dtype`: each element stored as the difference from
    /// the previous one, in memory order.
    Delta,
}

/// The array-to-bytes stage.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArrayBytes {
    /// Elements as raw bytes in the byte order of [`ZarrMeta::dtype`] (v3 `bytes`).
    Bytes,
    /// A shard of inner chunks with an index (v3 `sharding_indexed`).
    Sharding(Box<Sharding>),
}

/// A v3 `sharding_indexed` configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sharding {
    /// Inner chunk shape (elements); the shard shape is a whole multiple of it.
    pub chunk_shape: Vec<u64>,
    /// Codecs of each inner chunk.
    pub inner: Chain,
    /// Whether the index closes the shard (`index_location: "end"`, the default) or opens it.
    pub index_at_end: bool,
    /// Whether the index carries a CRC-32C (index codecs `bytes` + `crc32c`, the default).
    pub index_crc32c: bool,
}

/// A codec chain: array-to-array codecs, the array-to-bytes codec, bytes-to-bytes codecs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chain {
    /// Array-to-array codecs, in writing order.
    pub array: Vec<ArrayCodec>,
    /// The array-to-bytes codec.
    pub to_bytes: ArrayBytes,
    /// Bytes-to-bytes codecs, in writing order.
    pub bytes: Vec<BytesCodec>,
}

/// How a chunk's grid coordinates become its key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyEncoding {
    /// v3 `default`: `c` then each coordinate after `separator` (`c/1/2`; `c` for 0-d).
    Default(char),
    /// v3 `v2` and Zarr v2: coordinates joined by `separator` (`1.2`; `0` for 0-d).
    V2(char),
}

/// The metadata of one Zarr array, as needed to read it.
#[derive(Debug, Clone, PartialEq)]
pub struct ZarrMeta {
    /// 2 or 3.
    pub zarr_format: u8,
    /// Array shape (elements).
    pub shape: Vec<u64>,
    /// Shape of a stored chunk (or shard) in elements: the regular chunk grid.
    pub chunk_shape: Vec<u64>,
    /// Element type in the byte order of the decoded chunk bytes.
    pub dtype: DType,
    /// One element of the fill value, in `dtype`'s byte order.
    pub fill: Vec<u8>,
    /// Chunk key rule.
    pub key_encoding: KeyEncoding,
    /// Codecs of each stored chunk.
    pub chain: Chain,
    /// A short description of the codecs, e.g. `bytes + zstd(5)`.
    pub codecs: String,
}

fn invalid(key: &str, detail: impl Into<String>) -> ZarrError {
    ZarrError::Invalid {
        key: key.to_string(),
        detail: detail.into(),
    }
}

fn unsupported(key: &str, detail: impl Into<String>) -> ZarrError {
    ZarrError::Unsupported {
        key: key.to_string(),
        detail: detail.into(),
    }
}

fn shape_of(key: &str, v: Option<&Value>, what: &str) -> Result<Vec<u64>, ZarrError> {
    let arr = v
        .and_then(Value::as_array)
        .ok_or_else(|| invalid(key, format!("{what} is not a list")))?;
    arr.iter()
        .map(|x| {
            x.as_u64()
                .ok_or_else(|| invalid(key, format!("{what} holds {x}, not a whole number")))
        })
        .collect()
}

/// Parses a v2 `.zarray` document (`key` names it in errors).
///
/// # Errors
/// [`ZarrError::Invalid`] for malformed JSON or fields; [`ZarrError::Unsupported`] for
/// valid features not read (string/structured dtypes, object codecs, unknown compressors or
/// filters).
pub fn parse_v2(key: &str, raw: &[u8]) -> Result<ZarrMeta, ZarrError> {
    let doc: Value =
        serde_json::from_slice(raw).map_err(|e| invalid(key, format!("not JSON: {e}")))?;
    if doc.get("zarr_format").and_then(Value::as_u64) != Some(2) {
        return Err(invalid(key, "zarr_format is not 2"));
    }
    let shape = shape_of(key, doc.get("shape"), "shape")?;
    let chunk_shape = shape_of(key, doc.get("chunks"), "chunks")?;
    let dstr = doc.get("dtype").ok_or_else(|| invalid(key, "no dtype"))?;
    let dtype = match dstr.as_str() {
        Some(s) => DType::parse(s).map_err(|e| unsupported(key, e.to_string()))?,
        None => return Err(unsupported(key, format!("structured dtype {dstr}"))),
    };
    let order = doc.get("order").and_then(Value::as_str).unwrap_or("C");
    let sep = match doc.get("dimension_separator").and_then(Value::as_str) {
        None | Some(".") => '.',
        Some("/") => '/',
        Some(s) => return Err(invalid(key, format!("dimension_separator {s:?}"))),
    };
    let mut names = Vec::new();
    let mut array = Vec::new();
    match order {
        "C" => {}
        "F" => {
            array.push(ArrayCodec::Transpose((0..shape.len()).rev().collect()));
            names.push("order F".to_string());
        }
        o => return Err(invalid(key, format!("order {o:?}"))),
    }
    for f in doc
        .get("filters")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let id = f.get("id").and_then(Value::as_str).unwrap_or("?");
        match id {
            "delta" => {
                let same = |field: &str| {
                    f.get(field)
                        .and_then(Value::as_str)
                        .map(|s| DType::parse(s).ok() == Some(dtype))
                        .unwrap_or(true)
                };
                if !(same("dtype") && same("astype")) || dtype.kind == Kind::Complex {
                    return Err(unsupported(key, format!("delta filter {f}")));
                }
                array.push(ArrayCodec::Delta);
                names.push("delta".into());
            }
            other => return Err(unsupported(key, format!("filter {other:?}"))),
        }
    }
    let mut bytes = Vec::new();
    match doc.get("compressor") {
        None | Some(Value::Null) => {}
        Some(c) => {
            let id = c.get("id").and_then(Value::as_str).unwrap_or("?");
            bytes.push(bytes_codec(key, id)?);
            names.push(describe(c, id));
        }
    }
    let fill = fill_bytes(key, doc.get("fill_value").unwrap_or(&Value::Null), &dtype)?;
    let codecs = if names.is_empty() {
        "none".into()
    } else {
        names.join(" + ")
    };
    let meta = ZarrMeta {
        zarr_format: 2,
        shape,
        chunk_shape,
        dtype,
        fill,
        key_encoding: KeyEncoding::V2(sep),
        chain: Chain {
            array,
            to_bytes: ArrayBytes::Bytes,
            bytes,
        },
        codecs,
    };
    check_geometry(key, &meta)?;
    Ok(meta)
}

fn describe(c: &Value, id: &str) -> String {
    let inner = c.get("cname").and_then(Value::as_str);
    let level = c
        .get("clevel")
        .or_else(|| c.get("level"))
        .and_then(Value::as_i64);
    match (inner, level) {
        (Some(n), Some(l)) => format!("{id}({n}, {l})"),
        (None, Some(l)) => format!("{id}({l})"),
        _ => id.to_string(),
    }
}

fn bytes_codec(key: &str, id: &str) -> Result<BytesCodec, ZarrError> {
    Ok(match id.trim_start_matches("numcodecs.") {
        "blosc" => BytesCodec::Blosc,
        "zstd" => BytesCodec::Zstd,
        "gzip" => BytesCodec::Gzip,
        "zlib" => BytesCodec::Zlib,
        "lz4" => BytesCodec::Lz4,
        "crc32c" => BytesCodec::Crc32c,
        other => return Err(unsupported(key, format!("codec {other:?}"))),
    })
}

fn check_geometry(key: &str, m: &ZarrMeta) -> Result<(), ZarrError> {
    if m.chunk_shape.len() != m.shape.len() {
        return Err(invalid(
            key,
            format!("chunks {:?} for shape {:?}", m.chunk_shape, m.shape),
        ));
    }
    if m.chunk_shape.contains(&0) {
        return Err(invalid(key, format!("zero in chunks {:?}", m.chunk_shape)));
    }
    for c in &m.chain.array {
        if let ArrayCodec::Transpose(o) = c {
            let mut s = o.clone();
            s.sort_unstable();
            if s != (0..m.shape.len()).collect::<Vec<_>>() {
                return Err(invalid(key, format!("transpose order {o:?}")));
            }
        }
    }
    if let ArrayBytes::Sharding(s) = &m.chain.to_bytes {
        if s.chunk_shape.len() != m.shape.len()
            || s.chunk_shape.contains(&0)
            || s.chunk_shape
                .iter()
                .zip(&m.chunk_shape)
                .any(|(i, o)| o % i != 0)
        {
            return Err(invalid(
                key,
                format!(
                    "inner chunks {:?} do not tile shards {:?}",
                    s.chunk_shape, m.chunk_shape
                ),
            ));
        }
    }
    Ok(())
}

fn v3_dtype(key: &str, v: &Value) -> Result<(Kind, usize), ZarrError> {
    let name = v
        .as_str()
        .ok_or_else(|| unsupported(key, format!("data_type {v}")))?;
    Ok(match name {
        "bool" => (Kind::Bool, 1),
        "int8" => (Kind::Int, 1),
        "int16" => (Kind::Int, 2),
        "int32" => (Kind::Int, 4),
        "int64" => (Kind::Int, 8),
        "uint8" => (Kind::UInt, 1),
        "uint16" => (Kind::UInt, 2),
        "uint32" => (Kind::UInt, 4),
        "uint64" => (Kind::UInt, 8),
        "float16" => (Kind::Float, 2),
        "float32" => (Kind::Float, 4),
        "float64" => (Kind::Float, 8),
        "complex64" => (Kind::Complex, 8),
        "complex128" => (Kind::Complex, 16),
        other => return Err(unsupported(key, format!("data_type {other:?}"))),
    })
}

fn config<'a>(c: &'a Value, field: &str) -> Option<&'a Value> {
    c.get("configuration").and_then(|x| x.get(field))
}

/// Parses one v3 codec list into a chain; `endian` receives the `bytes` codec's byte order.
fn v3_chain(
    key: &str,
    codecs: &[Value],
    ndim: usize,
    endian: &mut ByteOrder,
    names: &mut Vec<String>,
) -> Result<Chain, ZarrError> {
    let mut array = Vec::new();
    let mut to_bytes = None;
    let mut bytes = Vec::new();
    for c in codecs {
        let name = c
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| invalid(key, format!("codec without a name: {c}")))?;
        match name {
            "transpose" => {
                if to_bytes.is_some() {
                    return Err(invalid(key, "transpose after the array-to-bytes codec"));
                }
                let order = config(c, "order")
                    .and_then(Value::as_array)
                    .ok_or_else(|| invalid(key, "transpose without order"))?
                    .iter()
                    .map(|x| x.as_u64().map(|x| x as usize))
                    .collect::<Option<Vec<usize>>>()
                    .filter(|o| o.len() == ndim)
                    .ok_or_else(|| invalid(key, format!("transpose order {c}")))?;
                names.push(format!("transpose{order:?}"));
                array.push(ArrayCodec::Transpose(order));
            }
            "bytes" => {
                *endian = match config(c, "endian").and_then(Value::as_str) {
                    Some("big") => ByteOrder::Big,
                    Some("little") | None => ByteOrder::Little,
                    Some(e) => return Err(invalid(key, format!("bytes endian {e:?}"))),
                };
                names.push(if *endian == ByteOrder::Big {
                    "bytes(big)".into()
                } else {
                    "bytes".into()
                });
                to_bytes = Some(ArrayBytes::Bytes);
            }
            "sharding_indexed" => {
                let chunk_shape = shape_of(key, config(c, "chunk_shape"), "chunk_shape")?;
                let inner_codecs = config(c, "codecs")
                    .and_then(Value::as_array)
                    .ok_or_else(|| invalid(key, "sharding without codecs"))?;
                names.push(format!("sharding{chunk_shape:?}["));
                let inner = v3_chain(key, inner_codecs, ndim, endian, names)?;
                if matches!(inner.to_bytes, ArrayBytes::Sharding(_)) {
                    return Err(unsupported(key, "nested sharding"));
                }
                names.push("]".into());
                let index_at_end = match config(c, "index_location").and_then(Value::as_str) {
                    None | Some("end") => true,
                    Some("start") => false,
                    Some(o) => return Err(invalid(key, format!("index_location {o:?}"))),
                };
                let mut index_endian = ByteOrder::Little;
                let mut ignored = Vec::new();
                let index = match config(c, "index_codecs").and_then(Value::as_array) {
                    Some(ic) => v3_chain(key, ic, ndim, &mut index_endian, &mut ignored)?,
                    None => Chain {
                        array: vec![],
                        to_bytes: ArrayBytes::Bytes,
                        bytes: vec![BytesCodec::Crc32c],
                    },
                };
                let index_crc32c = match index.bytes.as_slice() {
                    [] => false,
                    [BytesCodec::Crc32c] => true,
                    _ => return Err(unsupported(key, "index codecs other than bytes, crc32c")),
                };
                if !index.array.is_empty()
                    || index_endian != ByteOrder::Little
                    || index.to_bytes != ArrayBytes::Bytes
                {
                    return Err(unsupported(key, "index codecs other than bytes, crc32c"));
                }
                to_bytes = Some(ArrayBytes::Sharding(Box::new(Sharding {
                    chunk_shape,
                    inner,
                    index_at_end,
                    index_crc32c,
                })));
            }
            other => {
                let id = other.trim_start_matches("numcodecs.");
                if to_bytes.is_none() {
                    return Err(unsupported(key, format!("codec {other:?}")));
                }
                bytes.push(bytes_codec(key, id)?);
                let level = config(c, "clevel")
                    .or_else(|| config(c, "level"))
                    .and_then(Value::as_i64);
                names.push(match level {
                    Some(l) => format!("{id}({l})"),
                    None => id.to_string(),
                });
            }
        }
    }
    let to_bytes = to_bytes.ok_or_else(|| invalid(key, "no array-to-bytes codec"))?;
    if matches!(to_bytes, ArrayBytes::Sharding(_)) && !bytes.is_empty() {
        return Err(unsupported(
            key,
            "bytes-to-bytes codecs over a whole shard (inner chunks cannot be read alone)",
        ));
    }
    Ok(Chain {
        array,
        to_bytes,
        bytes,
    })
}

/// Parses a v3 array `zarr.json` document (`key` names it in errors).
///
/// # Errors
/// [`ZarrError::Invalid`] for malformed JSON or fields, a group document, or geometry that
/// does not fit; [`ZarrError::Unsupported`] for valid features not read (string and other
/// extension data types, irregular chunk grids, unknown codecs, nested sharding).
pub fn parse_v3(key: &str, raw: &[u8]) -> Result<ZarrMeta, ZarrError> {
    let doc: Value =
        serde_json::from_slice(raw).map_err(|e| invalid(key, format!("not JSON: {e}")))?;
    parse_v3_value(key, &doc)
}

/// [`parse_v3`] of an already parsed document.
///
/// # Errors
/// As [`parse_v3`].
pub fn parse_v3_value(key: &str, doc: &Value) -> Result<ZarrMeta, ZarrError> {
    if doc.get("zarr_format").and_then(Value::as_u64) != Some(3) {
        return Err(invalid(key, "zarr_format is not 3"));
    }
    match doc.get("node_type").and_then(Value::as_str) {
        Some("array") => {}
        Some("group") => return Err(invalid(key, "a group, not an array")),
        _ => return Err(invalid(key, "node_type is not \"array\"")),
    }
    let shape = shape_of(key, doc.get("shape"), "shape")?;
    let grid = doc
        .get("chunk_grid")
        .ok_or_else(|| invalid(key, "no chunk_grid"))?;
    if grid.get("name").and_then(Value::as_str) != Some("regular") {
        return Err(unsupported(key, format!("chunk grid {grid}")));
    }
    let chunk_shape = shape_of(key, config(grid, "chunk_shape"), "chunk_shape")?;
    let kenc = doc.get("chunk_key_encoding");
    let sep_of = |default: char| -> Result<char, ZarrError> {
        match kenc
            .and_then(|k| config(k, "separator"))
            .and_then(Value::as_str)
        {
            None => Ok(default),
            Some("/") => Ok('/'),
            Some(".") => Ok('.'),
            Some(s) => Err(invalid(key, format!("separator {s:?}"))),
        }
    };
    let key_encoding = match kenc.and_then(|k| k.get("name")).and_then(Value::as_str) {
        None | Some("default") => KeyEncoding::Default(sep_of('/')?),
        Some("v2") => KeyEncoding::V2(sep_of('.')?),
        Some(o) => return Err(unsupported(key, format!("chunk key encoding {o:?}"))),
    };
    let (kind, itemsize) = v3_dtype(key, doc.get("data_type").unwrap_or(&Value::Null))?;
    let codecs = doc
        .get("codecs")
        .and_then(Value::as_array)
        .ok_or_else(|| invalid(key, "no codecs list"))?;
    let mut endian = ByteOrder::Little;
    let mut names = Vec::new();
    let chain = v3_chain(key, codecs, shape.len(), &mut endian, &mut names)?;
    let dtype = DType {
        kind,
        itemsize,
        order: if itemsize == 1 {
            ByteOrder::NotApplicable
        } else {
            endian
        },
    };
    let fill = fill_bytes(key, doc.get("fill_value").unwrap_or(&Value::Null), &dtype)?;
    let meta = ZarrMeta {
        zarr_format: 3,
        shape,
        chunk_shape,
        dtype,
        fill,
        key_encoding,
        chain,
        codecs: names.join(" + ").replace("[ + ", "[").replace(" + ]", "]"),
    };
    check_geometry(key, &meta)?;
    Ok(meta)
}

/// One element of `v` (a JSON fill value) in `dtype`'s byte order. `null` (v2 "unset") gives
/// zeros; floats accept numbers, `"NaN"`, `"Infinity"`, `"-Infinity"` and `"0x..."` bit
/// patterns; complex numbers are `[re, im]`.
fn fill_bytes(key: &str, v: &Value, dtype: &DType) -> Result<Vec<u8>, ZarrError> {
    let bad = || invalid(key, format!("fill_value {v} for dtype {dtype}"));
    let n = dtype.itemsize;
    let mut le: Vec<u8> = match (v, dtype.kind) {
        (Value::Null, _) => vec![0; n],
        (Value::Bool(b), Kind::Bool) => vec![*b as u8],
        (Value::Number(x), Kind::Bool) => vec![(x.as_f64() != Some(0.0)) as u8],
        (Value::Number(x), Kind::Int) => {
            let i = x.as_i64().ok_or_else(bad)?;
            i.to_le_bytes()[..n].to_vec()
        }
        (Value::Number(x), Kind::UInt) => {
            let i = x.as_u64().ok_or_else(bad)?;
            i.to_le_bytes()[..n].to_vec()
        }
        (_, Kind::Float) => float_le(v, n).ok_or_else(bad)?,
        (Value::Array(p), Kind::Complex) if p.len() == 2 => {
            let mut b = float_le(&p[0], n / 2).ok_or_else(bad)?;
            b.extend(float_le(&p[1], n / 2).ok_or_else(bad)?);
            b
        }
        (Value::Number(_), Kind::Complex) => {
            let mut b = float_le(v, n / 2).ok_or_else(bad)?;
            b.extend(vec![0; n / 2]);
            b
        }
        _ => return Err(bad()),
    };
    if dtype.is_big_endian() {
        let unit = dtype.swap_unit();
        for c in le.chunks_mut(unit) {
            c.reverse();
        }
    }
    Ok(le)
}

fn float_le(v: &Value, n: usize) -> Option<Vec<u8>> {
    let x: f64 = match v {
        Value::Number(x) => x.as_f64()?,
        Value::String(s) => match s.as_str() {
            "NaN" => f64::NAN,
            "Infinity" => f64::INFINITY,
            "-Infinity" => f64::NEG_INFINITY,
            h if h.starts_with("0x") => {
                let bits = u64::from_str_radix(&h[2..], 16).ok()?;
                return Some(bits.to_le_bytes()[..n].to_vec());
            }
            _ => return None,
        },
        _ => return None,
    };
    Some(match n {
        2 => f16_bits(x).to_le_bytes().to_vec(),
        4 => (x as f32).to_le_bytes().to_vec(),
        8 => x.to_le_bytes().to_vec(),
        _ => return None,
    })
}

/// IEEE half-precision bits of `x` (round to nearest even), for float16 fill values.
fn f16_bits(x: f64) -> u16 {
    let f = x as f32;
    let b = f.to_bits();
    let sign = ((b >> 16) & 0x8000) as u16;
    if f.is_nan() {
        return sign | 0x7e00;
    }
    let exp = ((b >> 23) & 0xff) as i32 - 127 + 15;
    let man = b & 0x7f_ffff;
    if exp >= 31 {
        return sign | 0x7c00;
    }
    if exp <= 0 {
        if exp < -10 {
            return sign;
        }
        let m = (man | 0x80_0000) >> (1 - exp);
        let r = (m >> 13) + (((m >> 12) & 1) & (((m & 0xfff) != 0) as u32 | ((m >> 13) & 1)));
        return sign | r as u16;
    }
    let r = ((exp as u32) << 10) | (man >> 13);
    let round = ((man >> 12) & 1) & (((man & 0xfff) != 0) as u32 | (r & 1));
    sign | (r + round) as u16
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v2_metadata_with_filters_and_f_order() {
        let raw = br#"{"zarr_format":2,"shape":[10,7],"chunks":[4,3],"dtype":">i4",
            "order":"F","compressor":{"id":"zlib","level":3},"fill_value":-1,
            "filters":[{"id":"delta","dtype":">i4"}],"dimension_separator":"/"}"#;
        let m = parse_v2(".zarray", raw).unwrap();
        assert_eq!(m.shape, vec![10, 7]);
        assert_eq!(m.dtype.to_string(), ">i4");
        assert_eq!(m.fill, (-1i32).to_be_bytes().to_vec());
        assert_eq!(m.key_encoding, KeyEncoding::V2('/'));
        assert_eq!(
            m.chain.array,
            vec![ArrayCodec::Transpose(vec![1, 0]), ArrayCodec::Delta]
        );
        assert_eq!(m.chain.bytes, vec![BytesCodec::Zlib]);
    }

    #[test]
    fn bad_metadata_is_typed() {
        assert!(matches!(
            parse_v2("a/.zarray", b"{not json"),
            Err(ZarrError::Invalid { key, .. }) if key == "a/.zarray"
        ));
        let raw = br#"{"zarr_format":2,"shape":[3],"chunks":[2],"dtype":"<U4","compressor":null,"fill_value":""}"#;
        assert!(matches!(
            parse_v2("s/.zarray", raw),
            Err(ZarrError::Unsupported { .. })
        ));
        let raw = br#"{"zarr_format":3,"node_type":"array","shape":[3],"data_type":"float32",
            "chunk_grid":{"name":"regular","configuration":{"chunk_shape":[2]}},
            "codecs":[{"name":"bytes"},{"name":"snappy"}],"fill_value":0}"#;
        assert!(matches!(
            parse_v3("x/zarr.json", raw),
            Err(ZarrError::Unsupported { detail, .. }) if detail.contains("snappy")
        ));
    }

    #[test]
    fn v3_sharding_and_fill_values() {
        let raw = br#"{"zarr_format":3,"node_type":"array","shape":[8,8],"data_type":"float32",
            "chunk_grid":{"name":"regular","configuration":{"chunk_shape":[4,8]}},
            "chunk_key_encoding":{"name":"default","configuration":{"separator":"/"}},
            "codecs":[{"name":"sharding_indexed","configuration":{"chunk_shape":[2,4],
              "codecs":[{"name":"bytes","configuration":{"endian":"big"}},{"name":"gzip","configuration":{"level":1}}],
              "index_codecs":[{"name":"bytes","configuration":{"endian":"little"}},{"name":"crc32c"}],
              "index_location":"start"}}],"fill_value":"NaN"}"#;
        let m = parse_v3("zarr.json", raw).unwrap();
        assert_eq!(m.dtype.to_string(), ">f4");
        assert_eq!(m.fill, f32::NAN.to_be_bytes().to_vec());
        let ArrayBytes::Sharding(s) = &m.chain.to_bytes else {
            panic!("sharded")
        };
        assert!(!s.index_at_end && s.index_crc32c);
        assert_eq!(s.inner.bytes, vec![BytesCodec::Gzip]);
        assert_eq!(f16_bits(1.0), 0x3c00);
        assert_eq!(f16_bits(-2.5), 0xc100);
        assert_eq!(f16_bits(65504.0), 0x7bff);
    }
}
