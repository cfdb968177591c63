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
///
/// Persisted (discovery records, store listings, portable references) as serde's adjacently
/// tagged form, `{"t": "Int", "v": 3}`; read back by a hand-written `Deserialize` through a
/// `serde_json::Value` (see [`AttrValue::from_persisted`]) rather than the derived one,
/// which buffers each value in serde's private `Content` and was compiled once per
/// deserializer: about 20 KB of the wasm module for one type.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
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
    Float(#[serde(serialize_with = "float_serde::serialize")] f64),
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
    use serde::Serializer;

    pub fn serialize<S: Serializer>(f: &f64, s: S) -> Result<S::Ok, S::Error> {
        if f.is_nan() {
            s.serialize_str("NaN")
        } else if f.is_infinite() {
            s.serialize_str(if *f > 0.0 { "Infinity" } else { "-Infinity" })
        } else {
            s.serialize_f64(*f)
        }
    }
}

impl<'de> serde::Deserialize<'de> for AttrValue {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<AttrValue, D::Error> {
        let v = serde_json::Value::deserialize(d)?;
        AttrValue::from_persisted(v).map_err(serde::de::Error::custom)
    }
}

impl AttrValue {
    /// The value of its persisted form (`{"t": tag, "v": content}`, as the derived
    /// `Serialize` writes it): what serde's derived reader of that form accepts (a unit
    /// `Null` with or without `"v": null`, any number for a `Float`, unknown fields of an
    /// `Array` ignored), and the same refusals.
    ///
    /// # Errors
    /// A message naming what is wrong: no object, an unknown or missing tag, content of the
    /// wrong type or out of range (`Int` past `i64`, a byte past 255), a `Map` item that is
    /// no `[name, value]` pair.
    pub fn from_persisted(v: serde_json::Value) -> Result<AttrValue, String> {
        use serde_json::Value as J;
        let J::Object(mut m) = v else {
            return Err(format!("an attribute value is no object: {v}"));
        };
        let tag = match m.remove("t") {
            Some(J::String(t)) => t,
            _ => return Err("an attribute value has no tag \"t\"".into()),
        };
        let content = m.remove("v");
        let wrong = |what: &str| format!("attribute value {tag:?}: \"v\" is not {what}");
        let need = |c: Option<J>| c.ok_or_else(|| format!("attribute value {tag:?} has no \"v\""));
        Ok(match tag.as_str() {
            "Null" => match content {
                None | Some(J::Null) => AttrValue::Null,
                Some(_) => return Err(wrong("null")),
            },
            "Bool" => AttrValue::Bool(need(content)?.as_bool().ok_or_else(|| wrong("a boolean"))?),
            "Int" => AttrValue::Int(need(content)?.as_i64().ok_or_else(|| wrong("an i64"))?),
            "UInt" => AttrValue::UInt(need(content)?.as_u64().ok_or_else(|| wrong("a u64"))?),
            "Float" => AttrValue::Float(match need(content)? {
                J::Number(n) => n.as_f64().ok_or_else(|| wrong("a float"))?,
                J::String(t) => match t.as_str() {
                    "NaN" => f64::NAN,
                    "Infinity" => f64::INFINITY,
                    "-Infinity" => f64::NEG_INFINITY,
                    _ => return Err(wrong("a float")),
                },
                _ => return Err(wrong("a float")),
            }),
            "String" | "Omitted" => {
                let J::String(s) = need(content)? else {
                    return Err(wrong("a string"));
                };
                if tag == "String" {
                    AttrValue::String(s)
                } else {
                    AttrValue::Omitted(s)
                }
            }
            "Array" => {
                let J::Object(mut a) = need(content)? else {
                    return Err(wrong("an object"));
                };
                let mut field = |name: &str| {
                    a.remove(name)
                        .ok_or_else(|| format!("attribute value \"Array\" has no {name:?}"))
                };
                let dtype = serde_json::from_value::<DType>(field("dtype")?)
                    .map_err(|e| format!("attribute value \"Array\": dtype: {e}"))?;
                let shape = integers(field("shape")?, u64::MAX)
                    .ok_or_else(|| wrong("an array whose shape is a list of u64"))?;
                let data = integers(field("data")?, 255)
                    .ok_or_else(|| wrong("an array whose data is a list of bytes"))?
                    .into_iter()
                    .map(|b| b as u8)
                    .collect();
                AttrValue::Array { dtype, shape, data }
            }
            "List" => {
                let J::Array(items) = need(content)? else {
                    return Err(wrong("a list"));
                };
                AttrValue::List(
                    items
                        .into_iter()
                        .map(AttrValue::from_persisted)
                        .collect::<Result<_, _>>()?,
                )
            }
            "Map" => {
                let J::Array(items) = need(content)? else {
                    return Err(wrong("a list"));
                };
                let mut fields = Vec::with_capacity(items.len());
                for item in items {
                    match item {
                        J::Array(pair) if pair.len() == 2 => {
                            let mut pair = pair.into_iter();
                            let (Some(J::String(k)), Some(v)) = (pair.next(), pair.next()) else {
                                return Err(wrong("a list of [name, value] pairs"));
                            };
                            fields.push((k, AttrValue::from_persisted(v)?));
                        }
                        _ => return Err(wrong("a list of [name, value] pairs")),
                    }
                }
                AttrValue::Map(fields)
            }
            other => return Err(format!("unknown attribute value tag {other:?}")),
        })
    }
}

/// The items of a JSON array of integers, each at most `max`; `None` for anything else.
fn integers(v: serde_json::Value, max: u64) -> Option<Vec<u64>> {
    let serde_json::Value::Array(items) = v else {
        return None;
    };
    items
        .iter()
        .map(|x| x.as_u64().filter(|&n| n <= max))
        .collect()
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

    /// The persisted form (discovery records and store listings in DISK caches, portable
    /// references) is a contract: records written by earlier builds must read back as the
    /// same values, and a value must be written as they wrote it.
    #[test]
    fn persisted_form_is_stable() {
        let every = Attrs(vec![
            ("null".into(), AttrValue::Null),
            ("b".into(), AttrValue::Bool(true)),
            ("i".into(), AttrValue::Int(-7)),
            ("u".into(), AttrValue::UInt(u64::MAX)),
            ("f".into(), AttrValue::Float(2.5)),
            ("nan".into(), AttrValue::Float(f64::INFINITY)),
            ("s".into(), AttrValue::String("K é".into())),
            (
                "a".into(),
                AttrValue::Array {
                    dtype: DType::parse(">M8[ns]").unwrap(),
                    shape: vec![1, 2],
                    data: (0u8..16).collect(),
                },
            ),
            (
                "l".into(),
                AttrValue::List(vec![AttrValue::Int(1), AttrValue::String("x".into())]),
            ),
            (
                "m".into(),
                AttrValue::Map(vec![
                    ("z".into(), AttrValue::Null),
                    ("a".into(), AttrValue::Float(-0.0)),
                ]),
            ),
            (
                "o".into(),
                AttrValue::Omitted("reference (not shown)".into()),
            ),
        ]);
        let text = concat!(
            r#"[["null",{"t":"Null"}],["b",{"t":"Bool","v":true}],["i",{"t":"Int","v":-7}],"#,
            r#"["u",{"t":"UInt","v":18446744073709551615}],["f",{"t":"Float","v":2.5}],"#,
            r#"["nan",{"t":"Float","v":"Infinity"}],["s",{"t":"String","v":"K é"}],"#,
            r#"["a",{"t":"Array","v":{"dtype":{"kind":{"Datetime":"Nanosecond"},"itemsize":8,"order":"Big"},"#,
            r#""shape":[1,2],"data":[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15]}}],"#,
            r#"["l",{"t":"List","v":[{"t":"Int","v":1},{"t":"String","v":"x"}]}],"#,
            r#"["m",{"t":"Map","v":[["z",{"t":"Null"}],["a",{"t":"Float","v":-0.0}]]}],"#,
            r#"["o",{"t":"Omitted","v":"reference (not shown)"}]]"#
        );
        assert_eq!(serde_json::to_string(&every).unwrap(), text);
        let value = serde_json::to_value(&every).unwrap();
        assert_eq!(
            value,
            serde_json::from_str::<serde_json::Value>(text).unwrap()
        );
        // Read back from text and from a parsed document (records are read both ways).
        assert_eq!(serde_json::from_str::<Attrs>(text).unwrap(), every);
        assert_eq!(serde_json::from_value::<Attrs>(value).unwrap(), every);
        // A unit variant with its content given as null, an integral Float, and an
        // unknown field of Array are read as the derived reader read them.
        let loose: Attrs = serde_json::from_str(
            r#"[["n",{"t":"Null","v":null}],["f",{"v":3,"t":"Float"}],
                ["a",{"t":"Array","v":{"data":[1],"shape":[1],"x":0,
                "dtype":{"kind":"UInt","itemsize":1,"order":"NotApplicable"}}}]]"#,
        )
        .unwrap();
        assert_eq!(loose.get("n"), Some(&AttrValue::Null));
        assert_eq!(loose.get("f"), Some(&AttrValue::Float(3.0)));
        assert!(matches!(loose.get("a"), Some(AttrValue::Array { data, .. }) if data == &[1]));
        // What is no AttrValue is an error, not a value.
        for bad in [
            r#"[["x",{"t":"Int","v":1.5}]]"#,
            r#"[["x",{"t":"Int","v":9223372036854775808}]]"#,
            r#"[["x",{"t":"Float","v":"nan"}]]"#,
            r#"[["x",{"t":"Bool"}]]"#,
            r#"[["x",{"t":"Nope","v":1}]]"#,
            r#"[["x",{"v":1}]]"#,
            r#"[["x",{"t":"Array","v":{"shape":[1],"data":[1]}}]]"#,
            r#"[["x",{"t":"Array","v":{"dtype":{"kind":"UInt","itemsize":1,"order":"NotApplicable"},"shape":[1],"data":[256]}}]]"#,
            r#"[["x",{"t":"Map","v":[["k"]]}]]"#,
            r#"[["x",7]]"#,
        ] {
            assert!(serde_json::from_str::<Attrs>(bad).is_err(), "{bad}");
        }
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
