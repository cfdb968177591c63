//! Attributes: the small named values a source keeps next to an array or a group (HDF5
//! attributes, Zarr v2 `.zattrs` and v3 `attributes`, Blosc2 vlmeta), and dimension names.
//!
//! One value type for every format, so the JS bindings, the CLI (`chunkwise attrs`, as JSON)
//! and the page show them alike. Numeric arrays keep their element type and bytes
//! ([`AttrValue::Array`]): JS receives them as typed arrays, JSON as nested lists.
//!
//! Formats build these at discovery (the values are in the metadata discovery reads) and keep
//! them in their discovery seeds, so a reopen from a held record has them without a request.

use crate::dtype::{DType, Kind};

/// Most bytes of attribute values one node keeps (16 MiB). An attribute past it is replaced
/// by [`AttrValue::Omitted`], naming its size: a listing never allocates without bound.
pub const MAX_ATTR_BYTES: usize = 16 << 20;

/// One attribute value, as its source stores it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "t", content = "v")]
pub enum AttrValue {
    /// No value (JSON `null`, an HDF5 null dataspace or empty attribute).
    Null,
    /// A boolean.
    Bool(bool),
    /// A signed integer (a scalar of any integer width).
    Int(i64),
    /// An unsigned integer too large for `i64`, or stored unsigned.
    UInt(u64),
    /// A float (a scalar of any float width). NaN and infinities are kept (serialised as the
    /// strings `"NaN"`, `"Infinity"`, `"-Infinity"`, which JSON has no numbers for).
    Float(#[serde(with = "float_serde")] f64),
    /// Text (UTF-8; invalid bytes were replaced by U+FFFD).
    String(String),
    /// A numeric (or bool) array of any rank: elements in C order, little-endian.
    Array {
        /// Element type, little-endian (`<f8`, `<i4`, `|b1`, `<c16`).
        dtype: DType,
        /// Elements per dimension.
        shape: Vec<u64>,
        /// `product(shape) * dtype.itemsize` bytes.
        data: Vec<u8>,
    },
    /// A list of values of mixed types (a JSON array, an array of strings).
    List(Vec<AttrValue>),
    /// Named values in order (a JSON object, an HDF5 compound scalar).
    Map(Vec<(String, AttrValue)>),
    /// A value chunkwise does not show: the reason (an unsupported type, a value past
    /// [`MAX_ATTR_BYTES`]), e.g. `"reference (not shown)"`.
    Omitted(String),
}

/// The attributes of one node, in the order the source lists them.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Attrs(pub Vec<(String, AttrValue)>);

impl Attrs {
    /// No attributes.
    pub fn new() -> Attrs {
        Attrs(Vec::new())
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The value named `name`.
    pub fn get(&self, name: &str) -> Option<&AttrValue> {
        self.0.iter().find(|(n, _)| n == name).map(|(_, v)| v)
    }

    /// Adds (or replaces) `name`.
    pub fn insert(&mut self, name: impl Into<String>, value: AttrValue) {
        let name = name.into();
        match self.0.iter_mut().find(|(n, _)| *n == name) {
            Some(slot) => slot.1 = value,
            None => self.0.push((name, value)),
        }
    }

    /// Attributes from a JSON object (Zarr `.zattrs`, v3 `attributes`); a value that is not an
    /// object gives none.
    pub fn from_json(v: &serde_json::Value) -> Attrs {
        match v {
            serde_json::Value::Object(m) => Attrs(
                m.iter()
                    .map(|(k, v)| (k.clone(), AttrValue::from_json(v)))
                    .collect(),
            ),
            _ => Attrs::new(),
        }
    }

    /// The attributes as one JSON object (what `chunkwise attrs` prints; see
    /// [`AttrValue::to_json`]).
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::Value::Object(
            self.0
                .iter()
                .map(|(k, v)| (k.clone(), v.to_json()))
                .collect(),
        )
    }
}

impl AttrValue {
    /// The value of a JSON document: numbers as `Int`, `UInt` or `Float`, arrays as `List`,
    /// objects as `Map`.
    pub fn from_json(v: &serde_json::Value) -> AttrValue {
        use serde_json::Value as J;
        match v {
            J::Null => AttrValue::Null,
            J::Bool(b) => AttrValue::Bool(*b),
            J::Number(n) => {
                if let Some(i) = n.as_i64() {
                    AttrValue::Int(i)
                } else if let Some(u) = n.as_u64() {
                    AttrValue::UInt(u)
                } else {
                    AttrValue::Float(n.as_f64().unwrap_or(f64::NAN))
                }
            }
            J::String(s) => AttrValue::String(s.clone()),
            J::Array(items) => AttrValue::List(items.iter().map(AttrValue::from_json).collect()),
            J::Object(m) => AttrValue::Map(
                m.iter()
                    .map(|(k, v)| (k.clone(), AttrValue::from_json(v)))
                    .collect(),
            ),
        }
    }

    /// The value as JSON: arrays as nested lists (by shape), complex numbers as `[re, im]`,
    /// NaN and infinities as the strings `"NaN"`, `"Infinity"`, `"-Infinity"` (JSON has no
    /// such numbers; zarr-python writes them so in `.zattrs`), an omitted value as
    /// `{"omitted": reason}`.
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::Value as J;
        match self {
            AttrValue::Null => J::Null,
            AttrValue::Bool(b) => J::Bool(*b),
            AttrValue::Int(i) => J::from(*i),
            AttrValue::UInt(u) => J::from(*u),
            AttrValue::Float(f) => float_json(*f),
            AttrValue::String(s) => J::String(s.clone()),
            AttrValue::Array { dtype, shape, data } => {
                let flat = elements_json(*dtype, data);
                nest(&flat, shape)
            }
            AttrValue::List(items) => J::Array(items.iter().map(AttrValue::to_json).collect()),
            AttrValue::Map(fields) => J::Object(
                fields
                    .iter()
                    .map(|(k, v)| (k.clone(), v.to_json()))
                    .collect(),
            ),
            AttrValue::Omitted(why) => serde_json::json!({ "omitted": why }),
        }
    }
}

/// Serde form of [`AttrValue::Float`]: a number, or for NaN and infinities the strings
/// `"NaN"`, `"Infinity"`, `"-Infinity"` (serde_json would write `null`, losing the value).
mod float_serde {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(f: &f64, s: S) -> Result<S::Ok, S::Error> {
        if f.is_nan() {
            s.serialize_str("NaN")
        } else if f.is_infinite() {
            s.serialize_str(if *f > 0.0 { "Infinity" } else { "-Infinity" })
        } else {
            s.serialize_f64(*f)
        }
    }

    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Repr {
        Number(f64),
        Text(String),
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        match Repr::deserialize(d)? {
            Repr::Number(f) => Ok(f),
            Repr::Text(t) => match t.as_str() {
                "NaN" => Ok(f64::NAN),
                "Infinity" => Ok(f64::INFINITY),
                "-Infinity" => Ok(f64::NEG_INFINITY),
                other => Err(serde::de::Error::custom(format!("not a float: {other:?}"))),
            },
        }
    }
}

fn float_json(f: f64) -> serde_json::Value {
    if f.is_nan() {
        "NaN".into()
    } else if f.is_infinite() {
        if f > 0.0 { "Infinity" } else { "-Infinity" }.into()
    } else {
        serde_json::Number::from_f64(f)
            .map(serde_json::Value::Number)
            .unwrap_or(serde_json::Value::Null)
    }
}

/// The elements of little-endian `data` as JSON values, flat.
fn elements_json(dtype: DType, data: &[u8]) -> Vec<serde_json::Value> {
    let n = dtype.itemsize.max(1);
    data.chunks_exact(n)
        .map(|b| match (dtype.kind, n) {
            (Kind::Bool, _) => serde_json::Value::Bool(b[0] != 0),
            (Kind::Int | Kind::Datetime(_) | Kind::Timedelta(_), _) => {
                let mut v = [0u8; 8];
                v[..n].copy_from_slice(b);
                let shift = 64 - 8 * n as u32;
                serde_json::Value::from((i64::from_le_bytes(v) << shift) >> shift)
            }
            (Kind::UInt, _) => {
                let mut v = [0u8; 8];
                v[..n].copy_from_slice(b);
                serde_json::Value::from(u64::from_le_bytes(v))
            }
            (Kind::Float, 2) => float_json(crate::element::half_to_f64(u16::from_le_bytes([
                b[0], b[1],
            ]))),
            (Kind::Float, 4) => {
                float_json(f32::from_le_bytes(b.try_into().unwrap_or([0; 4])) as f64)
            }
            (Kind::Float, _) => float_json(f64::from_le_bytes(b.try_into().unwrap_or([0; 8]))),
            (Kind::Complex, 8) => serde_json::Value::Array(
                b.chunks_exact(4)
                    .map(|p| float_json(f32::from_le_bytes(p.try_into().unwrap_or([0; 4])) as f64))
                    .collect(),
            ),
            (Kind::Complex, _) => serde_json::Value::Array(
                b.chunks_exact(8)
                    .map(|p| float_json(f64::from_le_bytes(p.try_into().unwrap_or([0; 8]))))
                    .collect(),
            ),
            (Kind::Unicode, _) => serde_json::Value::String(crate::element::ucs4_to_string(b)),
            (Kind::Bytes | Kind::Void, _) => {
                serde_json::Value::String(String::from_utf8_lossy(b).trim_end_matches('\0').into())
            }
        })
        .collect()
}

/// `flat` (C order) nested into lists by `shape`; a scalar (`[]`) is its one element.
fn nest(flat: &[serde_json::Value], shape: &[u64]) -> serde_json::Value {
    match shape.split_first() {
        None => flat.first().cloned().unwrap_or(serde_json::Value::Null),
        Some((&n, rest)) => {
            let inner: usize = rest.iter().product::<u64>() as usize;
            let n = n as usize;
            serde_json::Value::Array(
                (0..n)
                    .map(|i| {
                        let lo = (i * inner).min(flat.len());
                        let hi = ((i + 1) * inner).min(flat.len());
                        nest(&flat[lo..hi], rest)
                    })
                    .collect(),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrays_nest_by_shape_and_floats_stay_exact() {
        let data: Vec<u8> = [1.5f64, -2.0, f64::NAN, 4.0, 5.0, 6.0]
            .iter()
            .flat_map(|f| f.to_le_bytes())
            .collect();
        let v = AttrValue::Array {
            dtype: DType::parse("<f8").unwrap(),
            shape: vec![2, 3],
            data,
        };
        assert_eq!(
            v.to_json(),
            serde_json::json!([[1.5, -2.0, "NaN"], [4.0, 5.0, 6.0]])
        );
        let i = AttrValue::Array {
            dtype: DType::parse("<i2").unwrap(),
            shape: vec![2],
            data: vec![0xff, 0xff, 7, 0],
        };
        assert_eq!(i.to_json(), serde_json::json!([-1, 7]));
    }

    #[test]
    fn non_finite_floats_survive_serde() {
        let a = Attrs(vec![
            ("n".into(), AttrValue::Float(f64::NAN)),
            ("i".into(), AttrValue::Float(f64::NEG_INFINITY)),
            ("f".into(), AttrValue::Float(0.5)),
        ]);
        let text = serde_json::to_string(&a).unwrap();
        assert!(
            text.contains("\"NaN\"") && text.contains("\"-Infinity\""),
            "{text}"
        );
        let back: Attrs = serde_json::from_str(&text).unwrap();
        assert!(matches!(back.get("n"), Some(AttrValue::Float(f)) if f.is_nan()));
        assert_eq!(back.get("i"), Some(&AttrValue::Float(f64::NEG_INFINITY)));
        assert_eq!(back.get("f"), Some(&AttrValue::Float(0.5)));
    }

    #[test]
    fn json_attributes_round_trip_in_order() {
        let doc = serde_json::json!({"units": "K", "scale": 0.5, "n": 3, "flags": [1, "a"], "m": {"x": null}});
        let a = Attrs::from_json(&doc);
        assert_eq!(a.get("units"), Some(&AttrValue::String("K".into())));
        assert_eq!(a.get("n"), Some(&AttrValue::Int(3)));
        assert_eq!(a.to_json(), doc);
    }
}
