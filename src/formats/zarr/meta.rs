//! Zarr array metadata: a v2 `.zarray` or v3 `zarr.json` document read by `zarrs`
//! ([`zarrs::array::ArrayMetadata`]), and the few facts chunkwise's planner and caches take
//! from it ([`ZarrMeta`]: shape, chunk shape, dtype as a numpy typestr, fill value, a codec
//! description).
//!
//! `zarrs` validates the document and builds the codec chain; this module only maps its
//! element type onto chunkwise's [`DType`] (Zarr v3 core specification, "Data types"; v2
//! "dtype" is already a numpy typestr) and keeps the stored byte order: the `bytes`
//! codec's `endian` (v3, inside `sharding_indexed` for sharded arrays) or the v2 typestr.

use super::ZarrError;
use crate::dtype::{ByteOrder, DType};
use serde_json::Value;
use zarrs::array::ArrayMetadata;

/// The facts of one Zarr array chunkwise reads by.
#[derive(Debug, Clone, PartialEq)]
pub struct ZarrMeta {
    /// 2 or 3.
    pub zarr_format: u8,
    /// Array shape (elements).
    pub shape: Vec<u64>,
    /// Shape of a stored chunk (or shard) in elements: the regular chunk grid.
    pub chunk_shape: Vec<u64>,
    /// Element type in the stored byte order (decoded chunks are handed out in this order).
    pub dtype: DType,
    /// One element of the fill value, in `dtype`'s byte order.
    pub fill: Vec<u8>,
    /// A short description of the codecs, e.g. `bytes + zstd`.
    pub codecs: String,
    /// The codec part of the document as compact JSON (v3 `codecs`; v2 `order`, `filters`
    /// and `compressor`), for cache stamps.
    pub codec_config: String,
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

/// Reads a metadata document: its JSON, then `zarrs`' typed metadata of that version.
///
/// # Errors
/// [`ZarrError::Invalid`] naming `key` for text that is not JSON or not valid metadata.
pub fn parse(key: &str, v3: bool, raw: &str) -> Result<(Value, ArrayMetadata), ZarrError> {
    let doc: Value =
        super::attrs::parse_json(raw).map_err(|e| invalid(key, format!("not JSON: {e}")))?;
    let meta = typed(key, v3, &doc)?;
    Ok((doc, meta))
}

/// Does, once per process, the work `zarrs` does on its first data type lookup: compiling
/// the regular expressions some of its data types match their names with (zarrs 0.23
/// `raw_bits.rs`: `^r\d+$` in v3, `^\|V\d+$` in v2; `fixed_length_utf32.rs`), each built
/// lazily when a lookup first reaches it, and every v2 array's conversion to v3 reaches
/// the v2 one. A lookup of a name no data type has visits every registered one. Called
/// while the metadata requests are in flight ([`super::ZarrArray::open`],
/// [`super::list_nodes`]), so that the compiling (milliseconds in wasm) overlaps the
/// network wait instead of following it.
pub fn warm_up() {
    static WARM: std::sync::Once = std::sync::Once::new();
    WARM.call_once(|| {
        let none = "chunkwise-warm-up";
        let _ = zarrs::array::DataType::from_metadata(&zarrs::metadata::v3::MetadataV3::new(none));
        let _ = zarrs::array::DataType::from_metadata(
            &zarrs::metadata::v2::DataTypeMetadataV2::Simple(none.into()),
        );
    });
}

/// [`warm_up`] once the host had a turn to send the requests started before it, for
/// `futures::join!` beside them. In wasm that turn is a zero timer (`fetch` sends once the
/// script yields); natively the requests run on the runtime's own tasks and the warm-up
/// runs at once, with no timer, so that callers need no tokio time driver (the lib's unit
/// tests run under `futures::executor`).
pub async fn warm_up_in_flight() {
    #[cfg(target_arch = "wasm32")]
    crate::io::sleep::sleep(std::time::Duration::ZERO).await;
    warm_up()
}

/// `zarrs`' typed metadata of an already parsed document.
///
/// # Errors
/// [`ZarrError::Invalid`] naming `key` for a document that is not valid array metadata;
/// [`ZarrError::Unsupported`] for a v3 extension field that must be understood, or a v2
/// structured dtype.
///
/// A v3 document without `chunk_key_encoding` (required by the v3 specification, "Array
/// metadata") is read with the `default` encoding, as chunkwise always has.
pub fn typed(key: &str, v3: bool, doc: &Value) -> Result<ArrayMetadata, ZarrError> {
    let not_metadata = |e: serde_json::Error| invalid(key, format!("not Zarr array metadata: {e}"));
    let mut doc = doc.clone();
    if !v3 {
        // A structured dtype (numpy records, a list of fields) is valid v2 metadata that
        // zarrs does not model: say so rather than call the document invalid.
        if let Some(fields) = doc.get("dtype").and_then(Value::as_array) {
            return Err(unsupported(
                key,
                format!(
                    "structured dtype of {} fields (records are not read from Zarr)",
                    fields.len()
                ),
            ));
        }
        if let Some(int) = v2_time_as_int(&doc) {
            doc["dtype"] = Value::from(int);
        }
        // A `null` fill value is "undefined" in v2; zarrs reads it as zero, but for complex
        // dtypes as an error (its zero is a number where a complex needs a pair). Zero
        // there too, as zarr-python reads it.
        if doc.get("fill_value").is_some_and(Value::is_null) && v2_is_complex(&doc) {
            doc["fill_value"] = serde_json::json!([0.0, 0.0]);
        }
        return serde_json::from_value(doc)
            .map(ArrayMetadata::V2)
            .map_err(not_metadata);
    }
    if let Some(m) = doc.as_object_mut() {
        m.entry("chunk_key_encoding")
            .or_insert_with(|| serde_json::json!({"name": "default"}));
    }
    let meta: zarrs::metadata::v3::ArrayMetadataV3 =
        serde_json::from_value(doc).map_err(not_metadata)?;
    // An extension field the reader does not know must stop it unless the field says
    // `"must_understand": false` (v3 specification, "Extension definition"; zarrs checks this
    // when it opens an array itself, not in `Array::new_with_metadata`).
    if let Some((name, _)) = meta
        .additional_fields
        .iter()
        .find(|(_, f)| f.must_understand())
    {
        return Err(unsupported(
            key,
            format!("extension field {name:?} (must be understood; not read here)"),
        ));
    }
    Ok(ArrayMetadata::V3(meta))
}

/// For a v2 `dtype` that is a numpy `datetime64`/`timedelta64` (`"<M8[ns]"`, `">m8[s]"`),
/// which `zarrs` does not name in v2: the 64-bit integer of the same byte order (`"<i8"`),
/// whose chunks decode to the same bytes (numpy stores both as signed 64-bit counts, NaT as
/// the integer `i64::MIN`, which is also how zarr-python writes their `fill_value`). The
/// array's dtype stays the datetime ([`dtype`] reads the document itself).
fn v2_time_as_int(doc: &Value) -> Option<&'static str> {
    let d = DType::parse(doc.get("dtype")?.as_str()?).ok()?;
    match d.kind {
        crate::dtype::Kind::Datetime(_) | crate::dtype::Kind::Timedelta(_) => {
            Some(if d.is_big_endian() { ">i8" } else { "<i8" })
        }
        _ => None,
    }
}

/// Whether a v2 document's `dtype` is a complex number (`<c8`, `>c16`, ...).
fn v2_is_complex(doc: &Value) -> bool {
    doc.get("dtype")
        .and_then(Value::as_str)
        .and_then(|d| DType::parse(d).ok())
        .is_some_and(|d| d.kind == crate::dtype::Kind::Complex)
}

/// The v3 `data_type` names chunkwise reads, as numpy kind and size.
fn v3_kind(name: &str) -> Option<(char, usize)> {
    Some(match name {
        "bool" => ('b', 1),
        "int8" => ('i', 1),
        "int16" => ('i', 2),
        "int32" => ('i', 4),
        "int64" => ('i', 8),
        "uint8" => ('u', 1),
        "uint16" => ('u', 2),
        "uint32" => ('u', 4),
        "uint64" => ('u', 8),
        "float16" => ('f', 2),
        "float32" => ('f', 4),
        "float64" => ('f', 8),
        "complex64" => ('c', 8),
        "complex128" => ('c', 16),
        _ => return None,
    })
}

/// The numpy kind character and `[unit]` suffix of a v3 `numpy.datetime64` /
/// `numpy.timedelta64` data type (zarr-extensions `data-types/numpy.datetime64`:
/// `{"name": ..., "configuration": {"unit": "ns", "scale_factor": 1}}`); `None` for other
/// data types and for a `scale_factor` other than 1 (numpy's multiples, not read), which
/// then fail as unsupported.
fn v3_time(dt: &Value) -> Option<(char, String)> {
    let kind = match dt.get("name").and_then(Value::as_str)? {
        "numpy.datetime64" => 'M',
        "numpy.timedelta64" => 'm',
        _ => return None,
    };
    let conf = dt.get("configuration")?;
    let unit = conf.get("unit").and_then(Value::as_str)?;
    let scale = conf
        .get("scale_factor")
        .and_then(Value::as_u64)
        .unwrap_or(1);
    (scale == 1 && crate::dtype::TimeUnit::parse(unit).is_some())
        .then(|| (kind, format!("[{unit}]")))
}

/// The `endian` of the first `bytes` codec in `codecs`, looking inside `sharding_indexed`.
fn v3_endian(codecs: &[Value]) -> Option<String> {
    for c in codecs {
        let conf = c.get("configuration");
        match c.get("name").and_then(Value::as_str) {
            Some("bytes") => {
                return Some(
                    conf.and_then(|c| c.get("endian"))
                        .and_then(Value::as_str)
                        .unwrap_or("little")
                        .to_string(),
                )
            }
            Some("sharding_indexed") => {
                if let Some(inner) = conf.and_then(|c| c.get("codecs")).and_then(Value::as_array) {
                    return v3_endian(inner);
                }
            }
            _ => {}
        }
    }
    None
}

/// The element type of an array document, in its stored byte order.
///
/// # Errors
/// [`ZarrError::Unsupported`] naming `key` for types chunkwise does not read (strings,
/// structured and variable-length types).
pub fn dtype(key: &str, doc: &Value) -> Result<DType, ZarrError> {
    if doc.get("zarr_format").and_then(Value::as_u64) == Some(3) {
        let dt = doc.get("data_type").unwrap_or(&Value::Null);
        let name = dt.as_str().unwrap_or_default();
        let (kind, size, unit) = match v3_time(dt) {
            Some((k, unit)) => (k, 8, unit),
            None => {
                let (k, s) =
                    v3_kind(name).ok_or_else(|| unsupported(key, format!("data_type {dt}")))?;
                (k, s, String::new())
            }
        };
        let codecs = doc
            .get("codecs")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        let order = match (size, v3_endian(codecs).as_deref()) {
            (1, _) => '|',
            (_, Some("big")) => '>',
            _ => '<',
        };
        DType::parse(&format!("{order}{kind}{size}{unit}"))
            .map_err(|e| unsupported(key, format!("data_type {dt}: {e}")))
    } else {
        let dt = doc.get("dtype").unwrap_or(&Value::Null);
        let d = dt
            .as_str()
            .and_then(|s| DType::parse(s).ok())
            .filter(DType::is_numeric)
            .ok_or_else(|| unsupported(key, format!("dtype {dt}")))?;
        Ok(d)
    }
}

/// The codec description and compact codec JSON of a document.
pub fn codecs(doc: &Value) -> (String, String) {
    fn names(codecs: &[Value], out: &mut Vec<String>) {
        for c in codecs {
            let name = c.get("name").and_then(Value::as_str).unwrap_or("?");
            if name == "sharding_indexed" {
                let mut inner = Vec::new();
                if let Some(i) = c
                    .get("configuration")
                    .and_then(|c| c.get("codecs"))
                    .and_then(Value::as_array)
                {
                    names(i, &mut inner);
                }
                out.push(format!("sharding_indexed[{}]", inner.join(" + ")));
            } else {
                out.push(name.to_string());
            }
        }
    }
    if doc.get("zarr_format").and_then(Value::as_u64) == Some(3) {
        let list = doc.get("codecs").cloned().unwrap_or(Value::Null);
        let mut n = Vec::new();
        names(
            list.as_array().map(Vec::as_slice).unwrap_or_default(),
            &mut n,
        );
        (n.join(" + "), list.to_string())
    } else {
        let id = |v: &Value| {
            v.get("id")
                .and_then(Value::as_str)
                .unwrap_or("?")
                .to_string()
        };
        let mut n = Vec::new();
        if doc.get("order").and_then(Value::as_str) == Some("F") {
            n.push("order F".to_string());
        }
        if let Some(f) = doc.get("filters").and_then(Value::as_array) {
            n.extend(f.iter().map(id));
        }
        match doc.get("compressor") {
            Some(c) if !c.is_null() => n.push(id(c)),
            _ => {}
        }
        if n.is_empty() {
            n.push("raw".into());
        }
        let conf = serde_json::json!({
            "order": doc.get("order"),
            "filters": doc.get("filters"),
            "compressor": doc.get("compressor"),
        });
        (n.join(" + "), conf.to_string())
    }
}

/// `bytes` (elements of `dtype`, little-endian as `zarrs` decodes them) in `dtype`'s stored
/// byte order, in place.
pub fn to_stored_order(dtype: &DType, bytes: &mut [u8]) {
    if dtype.order == ByteOrder::Big {
        // Swapping is its own inverse.
        dtype.make_little_endian(bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dtypes_and_byte_order() {
        let v3: Value = serde_json::from_str(
            r#"{"zarr_format":3,"data_type":"float64","codecs":[{"name":"sharding_indexed",
            "configuration":{"codecs":[{"name":"bytes","configuration":{"endian":"big"}}]}}]}"#,
        )
        .unwrap();
        assert_eq!(dtype("k", &v3).unwrap().to_string(), ">f8");
        let s: Value =
            serde_json::from_str(r#"{"zarr_format":3,"data_type":"string","codecs":[]}"#).unwrap();
        assert!(dtype("k", &s).unwrap_err().to_string().contains("string"));
        let v2: Value = serde_json::from_str(r#"{"zarr_format":2,"dtype":"|b1"}"#).unwrap();
        assert_eq!(dtype("k", &v2).unwrap().to_string(), "|b1");
        let (desc, _) = codecs(&v3);
        assert_eq!(desc, "sharding_indexed[bytes]");
    }
    /// The data types `zarrs` finds by regular expression (zarrs 0.23 `raw_bits.rs`,
    /// `fixed_length_utf32.rs`) resolve to the sizes their names say, and near misses to
    /// none: the patterns run on `regex-lite` here (see the `[patch.crates-io]` entry in
    /// Cargo.toml), which must match exactly what `regex` did on these names.
    #[test]
    fn data_types_named_by_pattern() {
        use zarrs::array::DataType;
        use zarrs::metadata::v2::DataTypeMetadataV2;
        use zarrs::metadata::v3::MetadataV3;
        let v3 = |n: &str| DataType::from_metadata(&MetadataV3::new(n)).ok();
        let v2 = |n: &str| DataType::from_metadata(&DataTypeMetadataV2::Simple(n.into())).ok();
        assert_eq!(v3("r8").and_then(|d| d.fixed_size()), Some(1));
        assert_eq!(v3("r32").and_then(|d| d.fixed_size()), Some(4));
        assert_eq!(v2("|V4").and_then(|d| d.fixed_size()), Some(4));
        assert_eq!(v2("|V12").and_then(|d| d.fixed_size()), Some(12));
        assert_eq!(v2("<U4").and_then(|d| d.fixed_size()), Some(16));
        assert_eq!(v2(">U3").and_then(|d| d.fixed_size()), Some(12));
        for miss in ["r", "r8x", "xr8", "r-8", "r\u{0663}"] {
            assert!(v3(miss).is_none(), "{miss}");
        }
        for miss in ["|V", "V4", "|V4 ", "=U4", "<U", "<Ux"] {
            assert!(v2(miss).is_none(), "{miss}");
        }
    }
}
