//! The JSON a Caterva2 server answers, typed: `GET api/info/{root}/{path}` (caterva2's
//! `models.Metadata` for a stored dataset, `models.LazyArray` for a lazy expression), and
//! the listings `GET api/roots` (a map of root names) and `GET api/list/{root}` (dataset
//! names). Fields chunkwise does not use are ignored, so a newer server's additions read.
//!
//! What a hostile answer can ask for is bounded here, before anything is allocated from it:
//! a document of at most [`MAX_INFO_BYTES`], at most 16 dimensions, a shape whose product
//! (times the item size) fits `u64`, a chunk of at most [`MAX_CHUNK_BYTES`], `nchunks`
//! equal to the grid's chunk count.

use crate::dtype::DType;
use crate::formats::FormatError;
use crate::selection::Grid;
use std::collections::BTreeMap;

/// Largest `api/info` (or listing) document read, bytes.
pub const MAX_INFO_BYTES: u64 = 16 << 20;

/// Largest decoded chunk, bytes (as [`crate::formats::zarr::MAX_CHUNK_BYTES`]): each chunk
/// is decoded whole in memory.
pub const MAX_CHUNK_BYTES: u64 = 1 << 30;

/// Most dimensions (Blosc2's `B2ND_MAX_DIM`).
pub const MAX_DIMS: usize = 16;

/// `api/info` of a dataset: a stored Blosc2 array, or a lazy expression (`expression` and
/// `operands` set, no `chunks`, `blocks` or `schunk`).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Info {
    /// Shape (elements); `None` for a lazy expression whose shape the server does not know.
    pub shape: Option<Vec<u64>>,
    /// Chunk shape (elements).
    #[serde(default)]
    pub chunks: Option<Vec<u64>>,
    /// Block shape (elements).
    #[serde(default)]
    pub blocks: Option<Vec<u64>>,
    /// numpy's `str(dtype)`: `int32`, `float64`, `bool`, `<U5`, `|S3`, `>i4`,
    /// `datetime64[ns]`.
    pub dtype: Option<String>,
    /// The super-chunk (stored datasets).
    #[serde(default)]
    pub schunk: Option<Schunk>,
    /// Modification time, ISO 8601 (`2026-12-02T01:44:33.526184Z`).
    #[serde(default)]
    pub mtime: Option<String>,
    /// The expression of a lazy array, e.g. `(a * 2) + 1`.
    #[serde(default)]
    pub expression: Option<String>,
    /// Operand names of a lazy array and the dataset each is (`None`: missing).
    #[serde(default)]
    pub operands: Option<BTreeMap<String, Option<String>>>,
    /// `bytes` when `api/fetch` of the whole dataset honours `Range`.
    #[serde(default)]
    pub accept_ranges: Option<String>,
    /// What the path is when it is not an array: `group` (a directory, or a group of a
    /// container), `ctable` (a python-blosc2 CTable).
    #[serde(default)]
    pub kind: Option<String>,
}

/// `schunk` of [`Info`] (caterva2's `models.SChunk`).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Schunk {
    /// Stored bytes of the data chunks.
    pub cbytes: u64,
    /// Uncompressed bytes (whole chunks, edge chunks padded).
    pub nbytes: u64,
    /// Number of chunks.
    pub nchunks: u64,
    /// Bytes of one decoded chunk.
    #[serde(default)]
    pub chunksize: Option<u64>,
    /// Compression parameters.
    #[serde(default)]
    pub cparams: Option<CParams>,
}

/// `cparams` of [`Schunk`]: Blosc2 codec and filter ids (C-Blosc2's `BLOSC_*` values).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CParams {
    /// Codec id (0 BLOSCLZ, 1 LZ4, 2 LZ4HC, 4 ZLIB, 5 ZSTD).
    pub codec: u8,
    /// Compression level.
    #[serde(default)]
    pub clevel: u8,
    /// The six filter slots (0 none, 1 SHUFFLE, 2 BITSHUFFLE, 3 DELTA, 4 TRUNC_PREC, 35
    /// BYTEDELTA).
    #[serde(default)]
    pub filters: Vec<u8>,
    /// Their metas.
    #[serde(default)]
    pub filters_meta: Vec<i64>,
    /// Bytes per element.
    #[serde(default)]
    pub typesize: u64,
    /// Bytes per block.
    #[serde(default)]
    pub blocksize: u64,
}

impl Info {
    /// Whether this is a lazy expression (read only by `api/fetch` slices).
    pub fn is_lazy(&self) -> bool {
        self.expression.is_some()
    }
}

/// The numpy typestr of numpy's `str(dtype)` as caterva2 writes it: names of the native
/// (little-endian) numeric types (`int32` is `<i4`, `bool` is `|b1`, `datetime64[ns]` is
/// `<M8[ns]`), typestrs (`>i4`, `<U5`, `|S3`) as they are. python-blosc2 4.14.1 types
/// some lazy expressions (an integer operand divided: `c / 4`) by a class of its
/// `blosc2.schema` instead of a numpy dtype, which caterva2 writes as its `str`,
/// `<class 'blosc2.schema.float64'>`; the numeric ones (`int8` to `uint64`, `float32`,
/// `float64`, `complex64`, `complex128`, each of the numpy dtype of that name) are read as
/// that name.
///
/// # Errors
/// [`FormatError::Unsupported`] naming the dtype (a structured dtype, `object`, another
/// `blosc2.schema` class).
pub fn parse_dtype(location: &str, s: &str) -> Result<DType, FormatError> {
    let s = s.trim();
    let s = schema_class_name(s).unwrap_or(s);
    let named = match s {
        "bool" => Some("|b1".to_string()),
        "int8" => Some("|i1".to_string()),
        "uint8" => Some("|u1".to_string()),
        _ => None,
    };
    let named = named.or_else(|| {
        for (prefix, code) in [
            ("uint", 'u'),
            ("int", 'i'),
            ("float", 'f'),
            ("complex", 'c'),
        ] {
            if let Some(bits) = s.strip_prefix(prefix).and_then(|b| b.parse::<u32>().ok()) {
                if bits % 8 == 0 && bits > 0 {
                    return Some(format!("<{code}{}", bits / 8));
                }
            }
        }
        for (prefix, code) in [("datetime64", "M8"), ("timedelta64", "m8")] {
            if let Some(rest) = s.strip_prefix(prefix) {
                return Some(format!("<{code}{rest}"));
            }
        }
        None
    });
    let typestr = named.unwrap_or_else(|| s.to_string());
    DType::parse(&typestr).map_err(|e| FormatError::Unsupported {
        location: location.to_string(),
        format: "caterva2",
        detail: e.to_string(),
    })
}

/// `NAME` of `<class 'blosc2.schema.NAME'>` for the numeric classes of python-blosc2's
/// `blosc2/schema.py` (whose `dtype` is `np.dtype(np.NAME)`).
fn schema_class_name(s: &str) -> Option<&str> {
    let name = s
        .strip_prefix("<class 'blosc2.schema.")?
        .strip_suffix("'>")?;
    crate::dtype::BLOSC2_SCHEMA_NUMERIC
        .contains(&name)
        .then_some(name)
}

/// The chunk grid of a stored dataset's `info`, checked: ranks agree, at most
/// [`MAX_DIMS`], the shape's bytes fit `u64`, a decoded chunk is at most
/// [`MAX_CHUNK_BYTES`], `schunk.nchunks` is the grid's chunk count, `cparams.typesize` is
/// the dtype's item size. An empty array's zero chunk and block extents (python-blosc2's
/// defaults for a zero-extent shape) are taken as 1, leaving no chunk.
///
/// # Errors
/// [`FormatError::Invalid`] for any of those.
pub fn stored_grid(location: &str, info: &Info, dtype: &DType) -> Result<Grid, FormatError> {
    let invalid = |detail: String| FormatError::Invalid {
        location: location.to_string(),
        format: "caterva2",
        detail,
    };
    let (Some(shape), Some(chunks), Some(blocks), Some(schunk)) =
        (&info.shape, &info.chunks, &info.blocks, &info.schunk)
    else {
        return Err(invalid(
            "api/info lacks shape, chunks, blocks or schunk".into(),
        ));
    };
    if shape.len() > MAX_DIMS {
        return Err(invalid(format!(
            "{} dimensions (at most {MAX_DIMS})",
            shape.len()
        )));
    }
    shape
        .iter()
        .try_fold(dtype.itemsize as u64, |n, &d| n.checked_mul(d))
        .ok_or_else(|| invalid(format!("shape {shape:?} overflows")))?;
    if chunks.len() == shape.len() && shape.iter().zip(chunks).any(|(&s, &c)| c == 0 && s > 0) {
        return Err(invalid(format!("zero chunk extent in {chunks:?}")));
    }
    // An empty array (a zero extent) has no chunk; python-blosc2 writes its chunk and block
    // shapes as zeros (`(0,)` for shape `(0,)`), which the grid takes as extents of 1 (the
    // chunk count stays 0), as the `.b2nd` reader does.
    let empty = shape.contains(&0);
    let (grid_chunks, grid_blocks) = if empty {
        let one = |v: &[u64]| v.iter().map(|&x| x.max(1)).collect::<Vec<u64>>();
        (one(chunks), one(blocks))
    } else {
        (chunks.clone(), blocks.clone())
    };
    let grid =
        Grid::new(shape.clone(), grid_chunks, grid_blocks).map_err(|e| invalid(e.to_string()))?;
    let chunk_bytes = grid
        .decoded_chunk_items()
        .ok()
        .and_then(|n| n.checked_mul(dtype.itemsize as u64))
        .filter(|&b| b <= MAX_CHUNK_BYTES)
        .ok_or_else(|| {
            invalid(format!(
                "chunks {chunks:?} of {} bytes per item exceed {MAX_CHUNK_BYTES} bytes",
                dtype.itemsize
            ))
        })?;
    let nchunks = grid.nchunks().unwrap_or(u64::MAX);
    if schunk.nchunks != nchunks {
        return Err(invalid(format!(
            "schunk.nchunks is {} where the grid has {nchunks} chunks",
            schunk.nchunks
        )));
    }
    if let Some(c) = &schunk.cparams {
        if c.typesize != 0 && c.typesize != dtype.itemsize as u64 {
            return Err(invalid(format!(
                "cparams.typesize {} differs from the dtype's {} bytes",
                c.typesize, dtype.itemsize
            )));
        }
    }
    if let Some(cs) = schunk.chunksize.filter(|&cs| !empty && cs != chunk_bytes) {
        return Err(invalid(format!(
            "schunk.chunksize {cs} differs from the chunk shape's {chunk_bytes} bytes"
        )));
    }
    Ok(grid)
}

/// Codec and filters of `cparams`, e.g. `ZSTD(5) + SHUFFLE` (as `chunkwise info` shows a
/// `.b2nd`'s).
pub fn describe_codecs(c: &CParams) -> String {
    let codec = match c.codec {
        0 => "BLOSCLZ".to_string(),
        1 => "LZ4".to_string(),
        2 => "LZ4HC".to_string(),
        3 => "SNAPPY".to_string(),
        4 => "ZLIB".to_string(),
        5 => "ZSTD".to_string(),
        n => format!("codec {n}"),
    };
    let mut parts = vec![format!("{codec}({})", c.clevel)];
    for (i, &f) in c.filters.iter().enumerate() {
        let m = c.filters_meta.get(i).copied().unwrap_or(0);
        parts.push(match f {
            0 => continue,
            1 => "SHUFFLE".to_string(),
            2 => "BITSHUFFLE".to_string(),
            3 => "DELTA".to_string(),
            4 => format!("TRUNC_PREC({})", m as i8),
            35 => "BYTEDELTA".to_string(),
            n => format!("filter {n}"),
        });
    }
    parts.join(" + ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numpy_dtype_names_map_to_typestrs() {
        for (name, typestr) in [
            ("int32", "<i4"),
            ("uint16", "<u2"),
            ("int8", "|i1"),
            ("uint8", "|u1"),
            ("float64", "<f8"),
            ("float32", "<f4"),
            ("complex128", "<c16"),
            ("bool", "|b1"),
            (">i4", ">i4"),
            ("|S3", "|S3"),
            ("<U5", "<U5"),
            ("datetime64[ns]", "<M8[ns]"),
        ] {
            assert_eq!(
                parse_dtype("x", name).unwrap().to_string(),
                typestr,
                "{name}"
            );
        }
        let e = parse_dtype("x", "[('a', '<i4')]").unwrap_err();
        assert!(matches!(e, FormatError::Unsupported { .. }), "{e}");
    }

    #[test]
    fn numeric_blosc2_schema_classes_read_as_their_numpy_dtype() {
        for (name, typestr) in [
            ("<class 'blosc2.schema.float64'>", "<f8"),
            ("<class 'blosc2.schema.int16'>", "<i2"),
            ("<class 'blosc2.schema.uint8'>", "|u1"),
        ] {
            assert_eq!(
                parse_dtype("x", name).unwrap().to_string(),
                typestr,
                "{name}"
            );
        }
        // bool may be widened to uint8 and timestamp is an int64 of other meaning: refused.
        for name in [
            "<class 'blosc2.schema.bool'>",
            "<class 'blosc2.schema.timestamp'>",
            "<class 'blosc2.schema.string'>",
            "<class 'numpy.float64'>",
        ] {
            let e = parse_dtype("x", name).unwrap_err();
            assert!(matches!(e, FormatError::Unsupported { .. }), "{name}: {e}");
        }
    }

    fn info(shape: Vec<u64>, chunks: Vec<u64>, nchunks: u64) -> Info {
        serde_json::from_value(serde_json::json!({
            "shape": shape, "chunks": chunks, "blocks": chunks, "dtype": "int32",
            "schunk": {"cbytes": 10, "nbytes": 10, "nchunks": nchunks,
                       "cparams": {"codec": 5, "typesize": 4}},
            "mtime": null
        }))
        .unwrap()
    }

    #[test]
    fn hostile_geometry_is_invalid_not_allocated() {
        let dt = parse_dtype("x", "int32").unwrap();
        assert!(stored_grid("x", &info(vec![10, 10], vec![5, 5], 4), &dt).is_ok());
        // nchunks disagreeing with the grid.
        assert!(stored_grid("x", &info(vec![10, 10], vec![5, 5], 5), &dt).is_err());
        // A shape whose bytes overflow u64.
        let huge = info(vec![u64::MAX / 2, 4], vec![1, 1], 0);
        assert!(stored_grid("x", &huge, &dt).is_err());
        // A chunk past the bound.
        let big = info(vec![1 << 20, 1 << 20], vec![1 << 20, 1 << 20], 1);
        assert!(stored_grid("x", &big, &dt).is_err());
        // Too many dimensions.
        let deep = info(vec![1; 17], vec![1; 17], 1);
        assert!(stored_grid("x", &deep, &dt).is_err());
    }
}
